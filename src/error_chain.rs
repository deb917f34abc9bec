//! An error and its causes (`source()`), said the two ways the kit says them: a line per
//! cause under the message at the top (`main`), or all on one line where an error becomes a
//! warning's or a record's text. Any room may use it; it uses none.
//!
//! A message written as "…: {source}" already holds its cause's words: such a cause is said
//! once, not twice.

use std::error::Error;

/// The causes of `e`, outermost first, leaving out any whose words were already said.
pub fn causes(e: &(dyn Error + 'static)) -> Vec<String> {
    let mut said = e.to_string();
    let mut out = Vec::new();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !text.is_empty() && !said.contains(&text) {
            said.push('\n');
            said.push_str(&text);
            out.push(text);
        }
        next = cause.source();
    }
    out
}

/// `e` with its causes on one line, each after ": ", as a message that embeds its cause reads.
pub fn one_line(e: &(dyn Error + 'static)) -> String {
    let mut line = e.to_string();
    for cause in causes(e) {
        line.push_str(": ");
        line.push_str(&cause);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("cannot read the plan")]
        Apart(#[source] std::io::Error),
        #[error("cannot read the plan: {0}")]
        Embedded(#[source] std::io::Error),
    }

    fn gone() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")
    }

    #[test]
    fn a_cause_kept_apart_is_said_after_the_message() {
        let e = Outer::Apart(gone());
        assert_eq!(causes(&e), vec!["no such file".to_string()]);
        assert_eq!(one_line(&e), "cannot read the plan: no such file");
    }

    #[test]
    fn a_cause_the_message_already_holds_is_said_once() {
        let e = Outer::Embedded(gone());
        assert!(causes(&e).is_empty());
        assert_eq!(one_line(&e), "cannot read the plan: no such file");
    }
}
