//! `standby_of` and `sync` of an `[[instance]]` table (issue 54): a declared instance made
//! as a streaming standby of another, as `instance start --standby-of [--sync]` makes one.
//! Validation only; whether an undeclared primary is in the home is the runner's check.

use toml::Spanned;

use super::super::target::check_name;
use super::{InstancePlan, RawInstance, Span};

/// `standby_of` and `sync` of an `[[instance]]`: a standby is a local server without TLS, of
/// a primary that is not itself, and a declared primary comes first, so the run starts it
/// first. A primary that is not declared is looked for in the home before the run starts.
pub(super) fn standby(
    r: &RawInstance,
    before: &[InstancePlan],
    all: &[Spanned<RawInstance>],
) -> Result<(Option<String>, bool), (Span, String)> {
    let Some(p) = &r.standby_of else {
        return match &r.sync {
            Some(s) => Err((
                s.span(),
                "sync makes a standby synchronous; give standby_of = \"PRIMARY\" with it".into(),
            )),
            None => Ok((None, false)),
        };
    };
    let (span, primary) = (p.span(), p.get_ref());
    let name = r.name.get_ref();
    if primary == name {
        return Err((
            span,
            format!("standby_of = \"{primary}\" is the instance itself; name its primary"),
        ));
    }
    check_name("instance", primary).map_err(|m| (span.clone(), m))?;
    if r.hypervisor.is_some() || r.vm.is_some() || r.ssl == Some(true) {
        return Err((
            span,
            "a standby is a local server of its own without TLS; leave out hypervisor, vm and \
             ssl"
            .into(),
        ));
    }
    let declared = |o: &Spanned<RawInstance>| o.get_ref().name.get_ref() == primary;
    match before.iter().find(|d| d.name == *primary) {
        None if all.iter().any(declared) => {
            return Err((
                span,
                format!(
                    "its primary '{primary}' is declared after it; declare the primary first \
                     (instances start in the file's order, and a standby is copied from its \
                     running primary)"
                ),
            ))
        }
        Some(d) if d.hypervisor.is_some() || d.ssl => {
            return Err((
                span,
                format!(
                    "primary '{primary}' is a guest or serves TLS; a standby's primary is a \
                     local server without ssl"
                ),
            ))
        }
        _ => {}
    }
    Ok((
        Some(primary.clone()),
        r.sync.as_ref().is_some_and(|s| *s.get_ref()),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse_err as err;
    use super::super::tests::parse_ok as parse;

    #[test]
    fn a_standby_names_a_primary_declared_before_it_or_in_the_home() {
        let a = "[[instance]]\nname = \"a\"\n";
        let b = "[[instance]]\nname = \"b\"\nstandby_of = \"a\"\nsync = true\n";
        let got = parse(&format!("{a}{b}"));
        assert_eq!(got[1].standby_of.as_deref(), Some("a"));
        assert!(got[1].sync && !got[0].sync);
        assert_eq!(got[1].shape(), "a local server, a synchronous standby of a");
        let home = parse("[[instance]]\nname = \"b\"\nstandby_of = \"elsewhere\"\n");
        assert!(!home[0].sync);
        let e = err(&format!("{b}{a}"));
        assert!(e.contains("its primary 'a' is declared after it"), "{e}");
        let e = err("[[instance]]\nname = \"b\"\nsync = true\n");
        assert!(e.contains("give standby_of = \"PRIMARY\""), "{e}");
        let e = err("[[instance]]\nname = \"b\"\nstandby_of = \"b\"\n");
        assert!(e.contains("is the instance itself"), "{e}");
        let e = err(&format!("{a}{b}ssl = true\n"));
        assert!(e.contains("leave out hypervisor, vm and ssl"), "{e}");
        let e = err(&format!(
            "[[instance]]\nname = \"a\"\nhypervisor = \"qemu\"\n{b}"
        ));
        assert!(e.contains("primary 'a' is a guest"), "{e}");
    }
}
