//! What a connection string is refused for before it is parsed: a keyword in the wrong letter
//! case (`PASSWORD=`), named without its value, since the parser's own error would quote it.

/// Refuses `PASSWORD=...` and other keywords in the wrong letter case with an error that names
/// the keyword only, never its value.
pub(super) fn check_keyword_case(dsn: &str) -> Result<(), String> {
    let bytes = dsn.as_bytes();
    for (eq, _) in dsn.match_indices('=') {
        let mut end = eq;
        while end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_alphabetic() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        let key = &dsn[start..end];
        let lower = key.to_ascii_lowercase();
        let known = super::conninfo::KEYWORDS.iter().any(|(k, _)| *k == lower);
        if key != lower && known {
            return Err(format!(
                "keyword '{key}' is not a connection keyword; keywords are lowercase: write {lower}=..."
            ));
        }
    }
    Ok(())
}
