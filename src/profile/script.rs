//! Reading `perf script` output, one line at a time, as asked for by
//! `-F comm,pid,tid,time,ip,sym,dso --show-task-events`:
//!
//! ```text
//! postgres  1365/1365  10743.330950:                      a sample's header
//! <TAB>     592816 GetCachedPlan (/usr/lib/postgresql/15/bin/postgres)   its frames, leaf first
//! <TAB>     4743be PostgresMain (/usr/lib/postgresql/15/bin/postgres)
//!                                                         a blank line ends it
//! kthreadd     0/0         0.000000: PERF_RECORD_FORK(3:3):(2:2)           a process was made
//! ```
//!
//! (`<TAB>`: frame lines begin with a tab.)
//!
//! The command name may hold spaces, so a header is read from its `pid/tid` token on. Fork
//! records give each process its parent: perf writes one for every process alive when it
//! started (at time 0) and one for each made later, which is how a backend forked during the
//! run is known to belong to its postmaster.

/// One line of `perf script`, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Line<'a> {
    /// A sample begins: its process, pid and time (ns of the recording's clock).
    Sample {
        comm: &'a str,
        pid: u32,
        time_ns: u64,
    },
    /// A frame of the current sample, leaf first. `sym` is `[unknown]` when perf had no name.
    Frame { sym: &'a str, dso: &'a str },
    /// Process `child` was made by process `parent` (threads are not reported here).
    Fork { child: u32, parent: u32 },
    /// The end of a sample.
    Blank,
    /// Anything else (other task events, perf's own notes).
    Other,
}

pub fn parse_line(line: &str) -> Line<'_> {
    if line.trim().is_empty() {
        return Line::Blank;
    }
    if line.starts_with(char::is_whitespace) {
        return parse_frame(line.trim()).unwrap_or(Line::Other);
    }
    parse_header(line).unwrap_or(Line::Other)
}

/// `ffffffff8225f42b pv_native_safe_halt ([kernel.kallsyms])`: the symbol may hold spaces and
/// parentheses (C++), so the DSO is what the last ` (` opens.
fn parse_frame(text: &str) -> Option<Line<'_>> {
    let (_ip, rest) = text.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    match rest.rfind(" (") {
        Some(at) if rest.ends_with(')') => Some(Line::Frame {
            sym: rest[..at].trim(),
            dso: &rest[at + 2..rest.len() - 1],
        }),
        _ => Some(Line::Frame { sym: rest, dso: "" }),
    }
}

fn parse_header(line: &str) -> Option<Line<'_>> {
    // The first `pid/tid` token followed by a `seconds.fraction:` token.
    let mut tokens = token_spans(line);
    let mut prev: Option<(usize, &str)> = None;
    let (ids_at, ids, time) = loop {
        let (at, tok) = tokens.next()?;
        if let Some((pat, ptok)) = prev {
            if is_ids(ptok) && tok.ends_with(':') && parse_time_ns(&tok[..tok.len() - 1]).is_some()
            {
                break (pat, ptok, &tok[..tok.len() - 1]);
            }
        }
        prev = Some((at, tok));
    };
    let pid: u32 = ids.split('/').next()?.parse().ok()?;
    let time_ns = parse_time_ns(time)?;
    let comm = line[..ids_at].trim_end();
    let after = &line[line.find(time)? + time.len() + 1..];
    if let Some(fork) = after.trim().strip_prefix("PERF_RECORD_FORK") {
        return parse_fork(fork);
    }
    if after.trim().starts_with("PERF_RECORD_") {
        return Some(Line::Other);
    }
    Some(Line::Sample { comm, pid, time_ns })
}

/// `(child:ctid):(parent:ptid)`; a new thread (same pid as its parent) is no new process.
fn parse_fork(text: &str) -> Option<Line<'static>> {
    let nums: Vec<u32> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    match nums.as_slice() {
        [child, _, parent, _] if child != parent => Some(Line::Fork {
            child: *child,
            parent: *parent,
        }),
        _ => Some(Line::Other),
    }
}

fn is_ids(tok: &str) -> bool {
    match tok.split_once('/') {
        Some((a, b)) => {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `10839.533256` → ns, without going through a float (which loses the last digits).
pub fn parse_time_ns(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Whitespace-separated tokens with their byte offsets.
fn token_spans(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_whitespace()
        .map(move |t| (t.as_ptr() as usize - line.as_ptr() as usize, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_frames_and_forks_are_read() {
        assert_eq!(
            parse_line("postgres  1365/1365  10743.330950: "),
            Line::Sample {
                comm: "postgres",
                pid: 1365,
                time_ns: 10_743_330_950_000
            }
        );
        assert_eq!(
            parse_line("Web Content 12/14 1.5:"),
            Line::Sample {
                comm: "Web Content",
                pid: 12,
                time_ns: 1_500_000_000
            }
        );
        assert_eq!(
            parse_line("\t          592816 GetCachedPlan (/usr/lib/postgresql/15/bin/postgres)"),
            Line::Frame {
                sym: "GetCachedPlan",
                dso: "/usr/lib/postgresql/15/bin/postgres"
            }
        );
        assert_eq!(
            parse_line("\t 7f00 std::vector<int>::push_back(int const&) (/usr/lib/libx.so)"),
            Line::Frame {
                sym: "std::vector<int>::push_back(int const&)",
                dso: "/usr/lib/libx.so"
            }
        );
        assert_eq!(
            parse_line("\t 3efcbb [unknown] (/usr/lib/postgresql/15/bin/postgres)"),
            Line::Frame {
                sym: "[unknown]",
                dso: "/usr/lib/postgresql/15/bin/postgres"
            }
        );
        assert_eq!(
            parse_line("kthreadd     0/0         0.000000: PERF_RECORD_FORK(3:3):(2:2)"),
            Line::Fork {
                child: 3,
                parent: 2
            }
        );
        // A new thread of process 7 is not a new process.
        assert_eq!(
            parse_line("tidebench 7/7 5.000001: PERF_RECORD_FORK(7:9):(7:7)"),
            Line::Other
        );
        assert_eq!(
            parse_line("perf 1/1 5.000001: PERF_RECORD_COMM: perf:1/1"),
            Line::Other
        );
        assert_eq!(parse_line(""), Line::Blank);
        assert_eq!(parse_line("no header here"), Line::Other);
    }

    #[test]
    fn times_keep_every_digit() {
        assert_eq!(parse_time_ns("10753.041445789"), Some(10_753_041_445_789));
        assert_eq!(parse_time_ns("0.000000"), Some(0));
        assert_eq!(parse_time_ns("12"), None);
        assert_eq!(parse_time_ns("1.x"), None);
    }
}
