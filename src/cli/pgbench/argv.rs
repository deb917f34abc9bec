//! pgbench 15's command line, read the way pgbench reads it (issue 38, item 2): the table of
//! every option pgbench 15 takes (and the few later ones other branches add to tidebench), and
//! a reader with glibc `getopt_long`'s rules as pgbench calls it: clustered short options
//! (`-Sn`), values attached or separate (`-c4`, `-c 4`, `--client=4`, `--client 4`), long
//! names shortened to any unique prefix (`--cli=4`), operands anywhere (the arguments are
//! permuted, so `pgbench mydb -S` works) and `--` ending the options.
//!
//! The table is the one place that says what each pgbench option becomes in tidebench
//! (`plan` turns the reading into `run`/`prepare` arguments). No I/O here.

use thiserror::Error;

/// Which of pgbench's modes an option belongs to: pgbench refuses a benchmarking option with
/// `-i` and an initialization option without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Bench,
    Init,
    /// Connection options, `-i`, `-s`, `-n`: taken in both modes.
    Both,
}

/// What an option becomes in tidebench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// tidebench's own long flag of the same meaning, on `run` (benchmarking) or `prepare`
    /// (`-i`), value passed on. Whether this build has the flag is asked of the clap grammar
    /// when the option is given, so a flag another branch adds is taken once merged.
    Flag(&'static str),
    /// Read by the drop-in itself (scripts, connection, modes, output).
    Own,
    /// tidebench has no counterpart: refused as pgbench refuses a bad option. Every option
    /// has one today (`-d` was the last); kept for options a later pgbench adds.
    #[allow(dead_code)]
    Unsupported,
}

/// One pgbench option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOpt {
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_value: bool,
    pub mode: Mode,
    pub to: To,
}

const fn opt(short: char, long: &'static str, value: bool, mode: Mode, to: To) -> PgOpt {
    PgOpt {
        short: Some(short),
        long,
        takes_value: value,
        mode,
        to,
    }
}

const fn long(long: &'static str, value: bool, mode: Mode, to: To) -> PgOpt {
    PgOpt {
        short: None,
        long,
        takes_value: value,
        mode,
        to,
    }
}

use Mode::{Bench, Both, Init};
use To::{Flag, Own};

/// pgbench 15's options in its `--help` order, plus `--exit-on-abort` (pgbench 17) and
/// `--continue-on-error` (pgbench 18), which tidebench takes under those names.
pub const OPTIONS: &[PgOpt] = &[
    // Initialization: `prepare --workload tpcb --force` with these flags.
    opt('i', "initialize", false, Both, Own),
    opt('I', "init-steps", true, Init, Flag("init-steps")),
    opt('F', "fillfactor", true, Init, Flag("fillfactor")),
    opt('n', "no-vacuum", false, Both, Own),
    opt('q', "quiet", false, Init, Flag("quiet")),
    opt('s', "scale", true, Both, Own),
    long("foreign-keys", false, Init, Flag("foreign-keys")),
    long("index-tablespace", true, Init, Flag("index-tablespace")),
    long("partition-method", true, Init, Flag("partition-method")),
    long("partitions", true, Init, Flag("partitions")),
    long("tablespace", true, Init, Flag("tablespace")),
    long("unlogged-tables", false, Init, Flag("unlogged-tables")),
    // What to run: the scripts, kept in order for the summary's names.
    opt('b', "builtin", true, Bench, Own),
    opt('f', "file", true, Bench, Own),
    opt('N', "skip-some-updates", false, Bench, Own),
    opt('S', "select-only", false, Bench, Own),
    // Benchmarking: `run` with these flags.
    opt('c', "client", true, Bench, Own),
    opt('C', "connect", false, Bench, Flag("connect")),
    opt('D', "define", true, Bench, Own),
    opt('j', "jobs", true, Bench, Own),
    opt('l', "log", false, Bench, Flag("log")),
    opt('L', "latency-limit", true, Bench, Own),
    opt('M', "protocol", true, Bench, Own),
    opt('P', "progress", true, Bench, Own),
    opt(
        'r',
        "report-per-command",
        false,
        Bench,
        Flag("report-per-command"),
    ),
    opt('R', "rate", true, Bench, Own),
    opt('t', "transactions", true, Bench, Flag("transactions")),
    opt('T', "time", true, Bench, Own),
    opt('v', "vacuum-all", false, Bench, Own),
    long(
        "aggregate-interval",
        true,
        Bench,
        Flag("aggregate-interval"),
    ),
    long("failures-detailed", false, Bench, Own),
    long("log-prefix", true, Bench, Flag("log-prefix")),
    long("max-tries", true, Bench, Own),
    long("progress-timestamp", false, Bench, Own),
    long("random-seed", true, Bench, Own),
    long("sampling-rate", true, Bench, Flag("sampling-rate")),
    long("show-script", true, Both, Own),
    long("verbose-errors", false, Bench, Flag("verbose-errors")),
    long("exit-on-abort", false, Bench, Flag("exit-on-abort")),
    long("continue-on-error", false, Bench, Flag("continue-on-error")),
    // Common.
    opt('d', "debug", false, Both, Own),
    opt('h', "host", true, Both, Own),
    opt('p', "port", true, Both, Own),
    opt('U', "username", true, Both, Own),
];

/// One option as given: which, its value, and how the user spelled it (`-c`, `--client`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    pub opt: &'static PgOpt,
    pub value: Option<String>,
    pub spelled: String,
}

/// The whole command line read: options in order, then the operands (the database name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Argv {
    pub given: Vec<Given>,
    pub operands: Vec<String>,
}

/// What getopt_long refuses, in glibc's words (pgbench leaves them to it).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgvError {
    #[error("invalid option -- '{0}'")]
    InvalidShort(char),
    #[error("unrecognized option '{0}'")]
    Unrecognized(String),
    #[error("option '{given}' is ambiguous; possibilities:{}", .candidates.iter().map(|c| format!(" '--{c}'")).collect::<String>())]
    Ambiguous {
        given: String,
        candidates: Vec<&'static str>,
    },
    #[error("option '--{0}' requires an argument")]
    LongNeedsValue(&'static str),
    #[error("option requires an argument -- '{0}'")]
    ShortNeedsValue(char),
    #[error("option '--{0}' doesn't allow an argument")]
    NoValueAllowed(&'static str),
}

/// Reads `args` (the program name not included) as pgbench 15's getopt_long does.
pub fn read(args: &[String]) -> Result<Argv, ArgvError> {
    let mut out = Argv::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.operands.extend(rest.by_ref().cloned());
            break;
        }
        if let Some(body) = arg.strip_prefix("--") {
            out.given.push(read_long(body, &mut rest)?);
        } else if arg.len() > 1 && arg.starts_with('-') {
            read_cluster(&arg[1..], &mut rest, &mut out.given)?;
        } else {
            out.operands.push(arg.clone());
        }
    }
    Ok(out)
}

/// `--name`, `--name=value` or `--name value`; `name` may be a unique prefix.
fn read_long<'a>(
    body: &str,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<Given, ArgvError> {
    let (name, attached) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    let opt = find_long(name)?;
    let value = match (opt.takes_value, attached) {
        (true, Some(v)) => Some(v),
        (true, None) => Some(
            rest.next()
                .cloned()
                .ok_or(ArgvError::LongNeedsValue(opt.long))?,
        ),
        (false, Some(_)) => return Err(ArgvError::NoValueAllowed(opt.long)),
        (false, None) => None,
    };
    Ok(Given {
        opt,
        value,
        spelled: format!("--{}", opt.long),
    })
}

/// The long option `name` names exactly, or the only one it begins.
fn find_long(name: &str) -> Result<&'static PgOpt, ArgvError> {
    if let Some(exact) = OPTIONS.iter().find(|o| o.long == name) {
        return Ok(exact);
    }
    let starts: Vec<&'static PgOpt> = if name.is_empty() {
        Vec::new()
    } else {
        OPTIONS
            .iter()
            .filter(|o| o.long.starts_with(name))
            .collect()
    };
    match starts.as_slice() {
        [one] => Ok(one),
        [] => Err(ArgvError::Unrecognized(format!("--{name}"))),
        many => Err(ArgvError::Ambiguous {
            given: format!("--{name}"),
            candidates: many.iter().map(|o| o.long).collect(),
        }),
    }
}

/// `-Sn`, `-c4`, `-c 4`: flags in a row; an option with a value takes the rest of the word,
/// or the next argument when the word ends with it.
fn read_cluster<'a>(
    cluster: &str,
    rest: &mut impl Iterator<Item = &'a String>,
    given: &mut Vec<Given>,
) -> Result<(), ArgvError> {
    for (at, c) in cluster.char_indices() {
        let opt = OPTIONS
            .iter()
            .find(|o| o.short == Some(c))
            .ok_or(ArgvError::InvalidShort(c))?;
        let spelled = format!("-{c}");
        if !opt.takes_value {
            given.push(Given {
                opt,
                value: None,
                spelled,
            });
            continue;
        }
        let attached = &cluster[at + c.len_utf8()..];
        let value = if attached.is_empty() {
            rest.next().cloned().ok_or(ArgvError::ShortNeedsValue(c))?
        } else {
            attached.to_string()
        };
        given.push(Given {
            opt,
            value: Some(value),
            spelled,
        });
        return Ok(());
    }
    Ok(())
}

/// pgbench's integer options: the name its messages use and the smallest value it takes.
pub fn int_option(long: &str) -> Option<(&'static str, i64)> {
    Some(match long {
        "client" => ("-c/--clients", 1),
        "jobs" => ("-j/--jobs", 1),
        "fillfactor" => ("-F/--fillfactor", 10),
        "progress" => ("-P/--progress", 1),
        "scale" => ("-s/--scale", 1),
        "transactions" => ("-t/--transactions", 1),
        "time" => ("-T/--time", 1),
        "partitions" => ("--partitions", 0),
        "aggregate-interval" => ("--aggregate-interval", 1),
        _ => return None,
    })
}

/// An integer option's value as pgbench's `option_parse_int` reads it (leading blanks
/// allowed, nothing after the digits), in its words when refused.
pub fn parse_int(text: &str, name: &str, min: i64) -> Result<i64, String> {
    let max = i64::from(i32::MAX);
    let max_for = if name == "-F/--fillfactor" { 100 } else { max };
    let n: i64 = text
        .trim_start()
        .parse()
        .ok()
        .filter(|n: &i64| (i64::from(i32::MIN)..=max).contains(n))
        .ok_or_else(|| format!("invalid value \"{text}\" for option {name}"))?;
    if n < min || n > max_for {
        return Err(format!("{name} must be in range {min}..{max_for}"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn pairs(a: &Argv) -> Vec<(&'static str, Option<&str>)> {
        a.given
            .iter()
            .map(|g| (g.opt.long, g.value.as_deref()))
            .collect()
    }

    #[test]
    fn clusters_attached_values_prefixes_and_permuted_operands() {
        let a = read(&words(
            "-Sn -c4 --client=5 --cli 6 -T10 db -j 2 --random-seed=7",
        ))
        .unwrap();
        assert_eq!(
            pairs(&a),
            [
                ("select-only", None),
                ("no-vacuum", None),
                ("client", Some("4")),
                ("client", Some("5")),
                ("client", Some("6")),
                ("time", Some("10")),
                ("jobs", Some("2")),
                ("random-seed", Some("7")),
            ]
        );
        assert_eq!(a.operands, ["db"]);
        // A value may start with a dash; `--` ends the options; `-` alone is an operand.
        let a = read(&words("-D x=-1 -- -S db")).unwrap();
        assert_eq!(pairs(&a), [("define", Some("x=-1"))]);
        assert_eq!(a.operands, ["-S", "db"]);
        assert_eq!(read(&words("-")).unwrap().operands, ["-"]);
        // `-Sc4` ends the cluster at the option with a value.
        let a = read(&words("-Sc4")).unwrap();
        assert_eq!(pairs(&a), [("select-only", None), ("client", Some("4"))]);
    }

    #[test]
    fn refusals_name_the_option_as_getopt_does() {
        let err = |s: &str| read(&words(s)).unwrap_err().to_string();
        assert_eq!(err("-X"), "invalid option -- 'X'");
        assert_eq!(err("--bogus"), "unrecognized option '--bogus'");
        assert_eq!(err("--client"), "option '--client' requires an argument");
        assert_eq!(err("-h"), "option requires an argument -- 'h'");
        assert_eq!(
            err("--select-only=1"),
            "option '--select-only' doesn't allow an argument"
        );
        let amb = err("--p 5");
        assert!(
            amb.starts_with("option '--p' is ambiguous; possibilities: '--partition-method'"),
            "{amb}"
        );
        assert!(
            amb.contains("'--port'") && amb.contains("'--progress'"),
            "{amb}"
        );
    }

    #[test]
    fn integers_as_option_parse_int() {
        assert_eq!(parse_int(" 4", "-c/--clients", 1), Ok(4));
        assert_eq!(
            parse_int("4x", "-c/--clients", 1).unwrap_err(),
            "invalid value \"4x\" for option -c/--clients"
        );
        assert_eq!(
            parse_int("0", "-T/--time", 1).unwrap_err(),
            "-T/--time must be in range 1..2147483647"
        );
        assert_eq!(
            parse_int("5", "-F/--fillfactor", 10).unwrap_err(),
            "-F/--fillfactor must be in range 10..100"
        );
    }

    #[test]
    fn every_option_is_listed_once() {
        for (i, o) in OPTIONS.iter().enumerate() {
            assert!(
                OPTIONS[i + 1..]
                    .iter()
                    .all(|p| p.long != o.long && (o.short.is_none() || p.short != o.short)),
                "{o:?}"
            );
        }
    }
}
