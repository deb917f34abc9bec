//! Shell text for the launchers: argv as words a POSIX shell reads back unchanged, templates
//! filled with them, and the step both launchers take when a shard did not finish.

use super::{LaunchSpec, ALLOW_MISSING, MERGED_DIR, SUMMARY_FILE};

/// Merges the shards that finished, marked incomplete: `merge --allow-missing` still refuses a
/// dir that is not there, and a shard that died leaves none (or a `.partial`), so only the dirs
/// holding a summary are given. Nothing is merged when no shard finished. POSIX `sh`, for a
/// pod's shell as for bash; `@PROGRAM@` is filled in.
const MERGE_FINISHED: &str = r#"set --
for d in @DIRS@; do
  if [ -f "$d/@SUMMARY@" ]; then set -- "$@" "$d"; fi
done
if [ "$#" -gt 0 ]; then
  @PROGRAM@ merge "$@" --out @MERGED@ @ALLOW_MISSING@ || true
fi"#;

/// The argv as one line a POSIX shell reads back into the same words.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word for a POSIX shell: bare when nothing in it is special, else in single quotes (in
/// which nothing is special; a quote inside is closed, escaped and reopened: `'\''`).
pub fn shell_quote(word: &str) -> String {
    // No `=` (a first word `A=b` is an assignment), `~` (expanded) or braces (expanded).
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:,+@%-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `template` with each `@NAME@` of `values` replaced, in one pass: a value holding `@X@`
/// (a path may) is written as it is, never filled in again.
pub(super) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let known = values
            .iter()
            .find(|(name, _)| after.starts_with(name) && after[name.len()..].starts_with('@'));
        match known {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len() + 1..];
            }
            None => {
                out.push('@');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The lines that merge the shards that finished (see [`MERGE_FINISHED`]), each after `indent`.
pub(super) fn merge_finished(spec: &LaunchSpec, program: &str, indent: &str) -> String {
    let dirs: Vec<String> = (0..spec.drivers)
        .map(|i| shell_quote(&spec.shard_dir(i)))
        .collect();
    let text = fill(
        MERGE_FINISHED,
        &[
            ("DIRS", &dirs.join(" ")),
            ("SUMMARY", SUMMARY_FILE),
            ("PROGRAM", &shell_quote(program)),
            ("MERGED", &shell_quote(&spec.path_in(MERGED_DIR))),
            ("ALLOW_MISSING", ALLOW_MISSING),
        ],
    );
    let lines: Vec<String> = text.lines().map(|l| format!("{indent}{l}")).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::tests::spec;

    #[test]
    fn shell_words_are_quoted_only_when_needed_and_read_back_whole() {
        assert_eq!(shell_quote("run.toml"), "run.toml");
        assert_eq!(shell_quote("+30s@/r/start-at"), "+30s@/r/start-at");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("x/shard-{shard}"), "'x/shard-{shard}'");
        assert_eq!(shell_quote("A=b"), "'A=b'");
        assert_eq!(shell_quote("~/x"), "'~/x'");
        let words: Vec<String> = [
            "a b", "it's", "'", "$HOME", "`id`", "x\ny", "*", "{a,b}", "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // The shell itself is the judge: it must hand the words back unchanged.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {}", shell_line(&words)))
            .output()
            .unwrap();
        assert!(out.status.success());
        let back: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(String::from)
            .collect();
        assert_eq!(back, words);
    }

    #[test]
    fn templates_are_filled_once() {
        let values = [("A", "@B@ x@"), ("B", "b")];
        assert_eq!(fill("@A@-@B@ @C@ a@b", &values), "@B@ x@-b @C@ a@b");
    }

    #[test]
    fn after_a_failure_only_the_shards_that_finished_are_merged() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = spec(3);
        s.results_dir = tmp.path().join("it's here").to_string_lossy().into_owned();
        for i in [0, 2] {
            std::fs::create_dir_all(s.shard_dir(i)).unwrap();
        }
        std::fs::write(format!("{}/{SUMMARY_FILE}", s.shard_dir(2)), "{}").unwrap();
        let run = |s: &LaunchSpec| {
            let script = merge_finished(s, "echo", "  ");
            assert!(script.starts_with("  set --\n"), "{script}");
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .output()
                .unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap()
        };
        let merged = format!(
            "merge {} --out {}/merged --allow-missing\n",
            s.shard_dir(2),
            s.results_dir
        );
        assert_eq!(run(&s), merged);
        s.drivers = 2; // shard 0 has a dir but no summary, shard 1 none: nothing to merge
        assert_eq!(run(&s), "");
    }
}
