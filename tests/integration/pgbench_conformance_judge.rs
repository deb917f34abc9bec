//! The strict half of the pgbench conformance test's judge (issue 56): what a user who greps
//! pgbench's output sees, compared as that user's script would compare it.
//!
//! - The report block (stdout from `transaction type:` on) line by line: labels, order and
//!   every count exactly; a timing figure by its kind (an integer, or a number with so many
//!   decimals), never by its value. In a run by time the counts are the machine's, so they
//!   are compared by kind too.
//! - Every other stdout line (a `\shell`'s output), except pgbench's version line.
//! - Every stderr line after the program's own prefix (`pgbench: `, `tidebench pgbench: `, or
//!   getopt's path of the program) exactly, the program's name in a hint read as `pgbench`, so a message's wording, a script error's echoed line and the column of its
//!   `^ error found here` caret all count. Clients interleave, so the lines are compared as
//!   a multiset (in a run by time a set, its figures by kind: how often a line comes and the
//!   tries it counts are the machine's); `-P` lines and a latency limit's share by kind, as
//!   they are timings. Under `-d` a client's `receiving` lines count how often the tool
//!   looked for an answer, which is the machine's (pgbench looks once as it starts waiting,
//!   then on each wake-up): whether a client says it is compared, not how often.
//! - With several clients, the failures and retries that their conflicts cause by kind.
//!
//! Pure: the test feeds it what each tool wrote.

/// The program's own prefix of a message: `pgbench: `, `tidebench pgbench: `, or (in
/// getopt's messages) the path it was started by, `/opt/pg/bin/pgbench: `.
fn without_prefix(line: &str) -> &str {
    for prefix in ["tidebench pgbench: ", "pgbench: "] {
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest;
        }
    }
    match line.split_once("/pgbench: ") {
        Some((path, rest)) if path.starts_with('/') && !path.contains(' ') => rest,
        _ => line,
    }
}

/// Report lines whose figures are timings (compared by kind).
const TIMINGS: [&str; 8] = [
    "latency average = ",
    "latency stddev = ",
    "initial connection time = ",
    "average connection time = ",
    "tps = ",
    "rate limit schedule lag: ",
    " - ",
    "progress: ",
];

/// Report lines whose figures are counts: exact in a run of so many transactions per
/// client, by kind in a run by time.
const COUNTS: [&str; 8] = [
    "number of transactions actually processed: ",
    "number of failed transactions: ",
    "number of serialization failures: ",
    "number of deadlock failures: ",
    "number of transactions retried: ",
    "total number of retries: ",
    "number of transactions skipped: ",
    "number of transactions above the ",
];

/// Report lines whose counts depend on how conflicting clients interleave when there are
/// several: compared by kind then.
const RACED: [&str; 5] = [
    "number of failed transactions: ",
    "number of serialization failures: ",
    "number of deadlock failures: ",
    "number of transactions retried: ",
    "total number of retries: ",
];

/// Every number of `line` by its kind: `#` for an integer, `#.ddd` for one with three
/// decimals; runs of spaces become one (a column's width follows its figure's).
pub fn by_kind(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        if c == ' ' {
            if !space {
                out.push(' ');
            }
            space = true;
            continue;
        }
        space = false;
        if !c.is_ascii_digit() {
            out.push(c);
            continue;
        }
        while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            chars.next();
        }
        out.push('#');
        if chars.peek() == Some(&'.') {
            chars.next();
            out.push('.');
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
                out.push('d');
            }
        }
    }
    out
}

/// The report block as compared: from `transaction type:` to the end of stdout.
pub fn report_block(stdout: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.starts_with("transaction type: "))
    else {
        return Vec::new();
    };
    let by_time = lines[start..].iter().any(|l| l.starts_with("duration: "));
    // Clients that conflict fail and retry as the machine interleaves them.
    let racing = !lines[start..].contains(&"number of clients: 1");
    let mut per_command = false;
    lines[start..]
        .iter()
        .map(|l| {
            let command_line = per_command && l.starts_with("   ");
            per_command =
                command_line || l.ends_with("statement latencies in milliseconds and failures:");
            let timed = TIMINGS
                .iter()
                .any(|p| l.starts_with(p) && !l.starts_with(" - weight"));
            let counted = (by_time && COUNTS.iter().any(|p| l.starts_with(p)))
                || (racing && RACED.iter().any(|p| l.starts_with(p)));
            if command_line {
                // A command's mean latency (a timing), then its failures (a count).
                command_by_kind(l, by_time)
            } else if timed || counted {
                by_kind(l)
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// A `-r` line: `   LATENCY  FAILURES  COMMAND`, the latency by kind, the failures exact in
/// a run of so many transactions, the command's text exact.
fn command_by_kind(line: &str, by_time: bool) -> String {
    let mut words = line.split_whitespace();
    let latency = words.next().map(by_kind).unwrap_or_default();
    let failures = words.next().unwrap_or("");
    let failures = if by_time {
        by_kind(failures)
    } else {
        failures.to_string()
    };
    let text: Vec<&str> = words.collect();
    format!("{latency} {failures} {}", text.join(" "))
}

/// Stdout's lines before the report block, without pgbench's version line.
pub fn stdout_before_block(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .take_while(|l| !l.starts_with("transaction type: "))
        .filter(|l| !l.starts_with("pgbench ("))
        .map(String::from)
        .collect()
}

/// Stderr's lines after the program's prefix, sorted (a set when `by_time`), `-P` lines by
/// kind.
pub fn messages(stderr: &str, by_time: bool) -> Vec<String> {
    let mut lines: Vec<String> = stderr
        .lines()
        .map(|l| {
            // The program names itself in its hints (`Try "pgbench --help"`).
            let l = without_prefix(l).replace("tidebench pgbench", "pgbench");
            // Progress lines and the share of a latency limit are timings; in a run by time
            // every count a message gives (its tries) is the machine's.
            if by_time || l.starts_with("progress: ") || l.contains("of the maximum time of tries")
            {
                by_kind(&l)
            } else {
                l
            }
        })
        .collect();
    lines.sort_unstable();
    if by_time {
        lines.dedup();
    } else {
        lines.dedup_by(|a, b| a == b && is_receiving(a));
    }
    lines
}

/// A `-d` line of a client looking for its answer (`client 0 receiving`).
fn is_receiving(line: &str) -> bool {
    line.strip_prefix("client ")
        .and_then(|rest| rest.strip_suffix(" receiving"))
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// What differs between two lists of lines, said line by line (empty: nothing).
pub fn line_differences(what: &str, referee: &[String], ours: &[String]) -> Option<String> {
    if referee == ours {
        return None;
    }
    let mut out = format!("{what} differ:");
    let most = referee.len().max(ours.len());
    for i in 0..most {
        let r = referee.get(i).map_or("(none)", String::as_str);
        let o = ours.get(i).map_or("(none)", String::as_str);
        if r != o {
            out.push_str(&format!("\n  pgbench:   {r:?}\n  tidebench: {o:?}"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_compared_by_kind() {
        assert_eq!(
            by_kind("tps = 1315.474210 (without initial connection time)"),
            "tps = #.dddddd (without initial connection time)"
        );
        assert_eq!(by_kind("x: 0 (NaN%)"), "x: # (NaN%)");
        assert_ne!(by_kind("x: 0 (NaN%)"), by_kind("x: 0 (0.000%)"));
    }

    #[test]
    fn counts_are_exact_unless_the_run_is_by_time() {
        let block = |length: &str| {
            report_block(&format!(
                "pgbench (15)\ntransaction type: x\n{length}\n\
                 number of transactions actually processed: 7\nlatency average = 1.5 ms\n"
            ))
        };
        let by_count = block("number of transactions per client: 7");
        assert_eq!(by_count[2], "number of transactions actually processed: 7");
        assert_eq!(by_count[3], "latency average = #.d ms");
        let by_time = block("duration: 2 s");
        assert_eq!(by_time[1], "duration: 2 s");
        assert_eq!(by_time[2], "number of transactions actually processed: #");
    }

    #[test]
    fn the_prefix_goes_and_the_caret_stays() {
        let ours = messages(
            "tidebench pgbench: error: x\n\\set i 1 +\n          ^ here\n",
            false,
        );
        let referee = messages("pgbench: error: x\n\\set i 1 +\n         ^ here\n", false);
        assert!(line_differences("stderr", &referee, &ours).is_some());
        let getopt = messages("/opt/pg/bin/pgbench: unrecognized option\n", false);
        assert_eq!(getopt, ["unrecognized option"]);
        let hint = messages(
            "tidebench pgbench: hint: Try \"tidebench pgbench --help\"\n",
            false,
        );
        assert_eq!(hint, ["hint: Try \"pgbench --help\""]);
    }

    #[test]
    fn how_often_a_client_says_receiving_is_the_machine_s() {
        let twice = "pgbench: client 0 receiving\npgbench: client 0 receiving\n";
        let once = "tidebench pgbench: client 0 receiving\n";
        assert_eq!(messages(twice, false), messages(once, false));
        assert_ne!(messages(twice, false), messages("", false));
        let sent = "pgbench: client 0 sending P_0\npgbench: client 0 sending P_0\n";
        assert_eq!(messages(sent, false).len(), 2);
    }
}
