//! The report of `tidebench check`: one line per consistency condition the workload declares,
//! with the offending rows it found indented below a failed one.

use crate::workload::CheckOutcome;

/// The report printed by `tidebench check`: one line per condition, offending rows indented.
pub fn render(outcomes: &[CheckOutcome]) -> String {
    let mut s = String::new();
    for o in outcomes {
        if o.passed() {
            s.push_str(&format!("PASS  {}\n", o.name));
            continue;
        }
        s.push_str(&format!(
            "FAIL  {} ({} offending rows)\n",
            o.name, o.offending
        ));
        for e in &o.examples {
            s.push_str(&format!("      {e}\n"));
        }
        if o.offending > o.examples.len() as u64 {
            s.push_str(&format!(
                "      ... and {} more\n",
                o.offending - o.examples.len() as u64
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_lists_failures_with_their_rows() {
        let out = render(&[
            CheckOutcome {
                name: "one".into(),
                offending: 0,
                examples: vec![],
            },
            CheckOutcome {
                name: "two".into(),
                offending: 12,
                examples: vec!["w_id=1".into()],
            },
        ]);
        assert_eq!(
            out,
            "PASS  one\nFAIL  two (12 offending rows)\n      w_id=1\n      ... and 11 more\n"
        );
    }
}
