//! The host's memory as its kernel counts it (`MemTotal` of `/proc/meminfo`): what an
//! instance's or a segment's limit is a share of. It lives here, below the workloads and the
//! sampler, because both read it: the sampler's host facts, retail's segment split and a preset
//! sized for this host.

/// The host's memory in bytes; `None` where `/proc/meminfo` cannot be read or parsed.
pub fn total() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .as_deref()
        .and_then(parse_total)
}

/// `MemTotal:` in bytes from `/proc/meminfo`'s text (kB, or a bare number of bytes).
pub fn parse_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo() {
        assert_eq!(
            parse_total("MemTotal:        8000000 kB\nMemFree: 1 kB\n"),
            Some(8_192_000_000)
        );
        assert_eq!(parse_total("MemFree: 1 kB\n"), None);
    }
}
