//! RFC 4180 fields as tidebench writes and reads them: quoted only when they hold a comma,
//! quote or line break; lines never hold embedded line breaks.

use std::borrow::Cow;

/// A CSV field, quoted only when it must be.
pub fn csv_field(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

/// Splits one line into fields, undoing quoting.
pub fn split_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed_and_round_trips() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
        assert_eq!(
            split_line("a,\"b,c\",\"d\"\"e\","),
            vec!["a", "b,c", "d\"e", ""]
        );
        let fields = ["x,y", "q\"", "plain"];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f).into_owned()).collect();
        assert_eq!(split_line(&line.join(",")), fields);
    }
}
