//! The translation of pgbench's command line: what reaches `run` and `prepare`, pgbench's
//! refusals in its words, the connection pgbench would make.

use super::*;
use crate::cli::pgbench::values::target;

fn known() -> Known {
    Known::from_grammar()
}

/// A build that has every flag the table maps to (as once the other branches are merged).
fn all_known() -> Known {
    let flags: Vec<String> = pgbench_argv::OPTIONS
        .iter()
        .filter_map(|o| match o.to {
            To::Flag(f) => Some(f.to_string()),
            _ => None,
        })
        .chain(["no-vacuum".to_string()])
        .collect();
    Known {
        run: flags.clone(),
        prepare: flags,
    }
}

/// Every script file reads as one SQL command.
fn any_file(_: &str) -> std::io::Result<String> {
    Ok("SELECT 1;\n".into())
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn req(line: &str, known: &Known) -> Result<Request, Refusal> {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    request(&args, known, &no_env, &any_file)
}

fn bench(line: &str) -> (Vec<String>, Facts) {
    match req(line, &known()) {
        Ok(Request::Bench(args, facts)) => (args, facts),
        other => panic!("{line}: {other:?}"),
    }
}

fn refusal(line: &str) -> String {
    match req(line, &known()) {
        Err(r) => r.message,
        other => panic!("{line} was taken: {other:?}"),
    }
}

fn has(args: &[String], flag: &str, value: &str) -> bool {
    args.windows(2).any(|w| w[0] == flag && w[1] == value)
}

#[test]
fn a_pgbench_run_becomes_run_flags_with_pgbench_defaults() {
    let (args, f) = bench("-Sn -c4 -j 8 -T 3 -P1 --random-seed=7 -h /tmp -p 5433 -U bob shop");
    assert!(has(&args, "--workload", "select-only"), "{args:?}");
    assert!(
        has(&args, "--clients", "4") && has(&args, "--jobs", "4"),
        "{args:?}"
    );
    assert!(has(&args, "--protocol", "simple") && has(&args, "--duration", "3s"));
    assert!(has(&args, "--progress", "1s") && has(&args, "--seed", "7"));
    assert!(has(
        &args,
        "--target",
        "host=/tmp port=5433 user=bob dbname=shop"
    ));
    assert_eq!((f.clients, f.threads, f.vacuum), (4, 4, false));
    assert_eq!(f.scripts[0].desc, "<builtin: select only>");
    assert!(f.latency_samples && f.internal);
    // No script: tpcb-like; the vacuum runs.
    let (args, f) = bench("-T 1 db");
    assert!(has(&args, "--workload", "tpcb") && f.vacuum, "{args:?}");
    assert!(has(&args, "--progress", "0"));
}

#[test]
fn several_scripts_run_through_the_interpreter_with_their_weights() {
    let (args, f) = bench("-f /x/mine.sql@2 -b select@1 -N -D a=1 -T 1 db");
    assert!(has(&args, "-f", "/x/mine.sql@2"), "{args:?}");
    assert!(has(&args, "-b", "select-only@1") && has(&args, "-b", "simple-update@1"));
    assert!(has(&args, "-D", "a=1") && !args.iter().any(|a| a == "--workload"));
    let names: Vec<(&str, &str, i64)> = f
        .scripts
        .iter()
        .map(|s| (s.desc.as_str(), s.txn_type.as_str(), s.weight))
        .collect();
    assert_eq!(
        names,
        [
            ("/x/mine.sql", "mine", 2),
            ("<builtin: select only>", "select-only", 1),
            ("<builtin: simple update>", "simple-update", 1),
        ]
    );
    // Files alone: pgbench's :scale is -s (default 1), never the data's.
    let (args, f) = bench("-f /x/a.sql -s 5 -T 1 db");
    assert!(has(&args, "-D", "scale=5") && !f.internal, "{args:?}");
}

#[test]
fn init_becomes_prepare_on_the_target() {
    match req("-i -s 3 db", &known()) {
        Ok(Request::Init(args)) => {
            assert_eq!(
                args,
                [
                    "--workload",
                    "tpcb",
                    "--force",
                    "--scale",
                    "3",
                    "--target",
                    "dbname=db"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    match req("-i -q -F 90 --partitions=2 db", &all_known()) {
        Ok(Request::Init(args)) => {
            assert!(has(&args, "--fillfactor", "90") && has(&args, "--partitions", "2"));
            assert!(args.iter().any(|a| a == "--quiet"), "{args:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn pgbench_refusals_in_its_words() {
    assert_eq!(
        refusal("-T 1 a b"),
        "too many command-line arguments (first is \"b\")"
    );
    assert_eq!(
        refusal("-i -S"),
        "some of the specified options cannot be used in initialization (-i) mode"
    );
    assert_eq!(
        refusal("-S --foreign-keys"),
        "some of the specified options cannot be used in benchmarking mode"
    );
    assert_eq!(
        refusal("-c 0"),
        "-c/--clients must be in range 1..2147483647"
    );
    assert_eq!(refusal("-M fast"), "invalid query mode (-M): \"fast\"");
    assert_eq!(refusal("-R 0"), "invalid rate limit: \"0\"");
    assert_eq!(refusal("-D x"), "invalid variable definition: \"x\"");
    assert!(refusal("-b s").starts_with("ambiguous builtin name: 2 builtin scripts"));
    assert_eq!(
        refusal("-b tpcb@0 -T 1"),
        "total script weight must not be zero"
    );
    assert_eq!(
        req("-T 1 -t 5", &all_known()).unwrap_err().message,
        "specify either a number of transactions (-t) or a duration (-T), not both"
    );
    assert!(matches!(
        req("-X", &known()),
        Err(Refusal { hint: true, .. })
    ));
}

#[test]
fn flags_other_branches_add_are_taken_once_the_grammar_has_them() {
    let k = all_known();
    match req("-t 5 -C --exit-on-abort db", &k) {
        Ok(Request::Bench(args, f)) => {
            assert!(has(&args, "--transactions", "5"), "{args:?}");
            assert!(args.iter().any(|a| a == "--connect"));
            assert!(args.iter().any(|a| a == "--exit-on-abort"));
            assert_eq!(f.length, Length::PerClient(5));
        }
        other => panic!("{other:?}"),
    }
    // Neither -t nor -T: pgbench's 10 per client.
    match req("db", &k) {
        Ok(Request::Bench(args, _)) => assert!(has(&args, "--transactions", "10")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn debug_runs_a_builtin_through_the_interpreter_with_its_trace() {
    let (args, f) = bench("-d -b se -t 2");
    assert!(f.debug);
    assert!(args.iter().any(|a| a == "--debug"), "{args:?}");
    // The interpreter has the trace; tidebench's own select-only workload does not.
    assert!(has(&args, "-b", "select-only@1"), "{args:?}");
    assert!(!args.iter().any(|a| a == "--workload"), "{args:?}");
    let (args, f) = bench("-b se -t 2");
    assert!(!f.debug && !args.iter().any(|a| a == "--debug"), "{args:?}");
}

#[test]
fn verbose_errors_reach_the_run_and_failures_detailed_the_block() {
    let (args, f) = bench("-n -T 1 --verbose-errors --failures-detailed db");
    assert!(args.iter().any(|a| a == "--verbose-errors"), "{args:?}");
    assert!(f.failures_detailed);
}

#[test]
fn help_version_and_lists_come_first_as_pgbench() {
    assert_eq!(req("--help", &known()), Ok(Request::Help));
    assert_eq!(req("-V", &known()), Ok(Request::Version));
    assert_eq!(req("-b list", &known()), Ok(Request::ListBuiltins));
    assert_eq!(
        req("--show-script=sel", &known()),
        Ok(Request::ShowScript("select-only"))
    );
    // Not first: getopt's refusal, as pgbench's.
    assert!(req("-S --help", &known()).is_err());
}

#[test]
fn the_database_name_comes_as_pgbench_finds_it() {
    let env = |name: &str| match name {
        "PGUSER" => Some("carol".to_string()),
        _ => None,
    };
    let args = vec!["-T".to_string(), "1".to_string(), "-U".into(), "bob".into()];
    let Ok(Request::Bench(_, f)) = request(&args, &known(), &env, &any_file) else {
        panic!("not a run")
    };
    // pgbench's database is PGDATABASE, else PGUSER, not -U.
    assert_eq!(f.target, "user=bob dbname=carol");
    assert_eq!(
        target(Some("/s"), None, Some("u"), "host=/x dbname=d"),
        "user=u host=/x dbname=d"
    );
    assert_eq!(target(None, None, None, "my db"), "dbname='my db'");
}

#[test]
fn unlimited_tries_need_a_duration_and_become_the_most_run_counts() {
    assert!(
        refusal("--max-tries 0 -t 5").contains(
            "an unlimited number of transaction tries can only be used with --latency-limit \
             or a duration (-T)"
        ),
        "{}",
        refusal("--max-tries 0")
    );
    let (args, f) = bench("--max-tries 0 -T 2");
    assert!(has(&args, "--max-tries", "4294967295"), "{args:?}");
    // pgbench prints no "maximum number of tries" line for 0: the facts keep its value.
    assert_eq!(f.max_tries, 0);
    let (args, _) = bench("--max-tries 3 -T 2");
    assert!(has(&args, "--max-tries", "3"), "{args:?}");
}

#[test]
fn log_options_are_checked_in_pgbench_order_and_words() {
    assert_eq!(
        refusal("--latency-limit=0.0"),
        "invalid latency limit: \"0.0\""
    );
    assert_eq!(refusal("--sampling-rate=0"), "invalid sampling rate: \"0\"");
    assert_eq!(
        refusal("--sampling-rate=1.5"),
        "invalid sampling rate: \"1.5\""
    );
    assert_eq!(
        refusal("--aggregate-interval=-3"),
        "--aggregate-interval must be in range 1..2147483647"
    );
    assert!(refusal("--sampling-rate=0.1").starts_with("log sampling (--sampling-rate) is"));
    assert!(refusal("-l --sampling-rate=0.1 --aggregate-interval=3")
        .ends_with("cannot be used at the same time"));
    assert!(refusal("--aggregate-interval=3").starts_with("log aggregation is allowed only"));
    assert!(refusal("--log-prefix=x").starts_with("log file prefix (--log-prefix)"));
    assert_eq!(
        refusal("-l -T 1 --aggregate-interval=3"),
        "number of seconds for aggregation (3) must not be higher than test duration (1)"
    );
    assert_eq!(
        refusal("-l -T 5 --aggregate-interval=3"),
        "duration (5) must be a multiple of aggregation interval (3)"
    );
    assert_eq!(
        refusal("--progress-timestamp"),
        "--progress-timestamp is allowed only under --progress"
    );
    let (_, f) = bench("-n -S -T 2 -P 1 --progress-timestamp");
    assert!(f.progress_timestamp);
    // Taken: on to `run`'s flags of the same meaning.
    let (args, _) = bench("-n -S -t 5 -l --log-prefix=lg --sampling-rate=0.5 -L 5ms");
    assert!(args.iter().any(|a| a == "--log"), "{args:?}");
    assert!(has(&args, "--log-prefix", "lg"), "{args:?}");
    assert!(has(&args, "--sampling-rate", "0.5"), "{args:?}");
    assert!(has(&args, "--latency-limit", "5"), "{args:?}");
}

#[test]
fn scripts_are_refused_when_pgbench_reads_them() {
    assert_eq!(
        refusal(&"-S ".repeat(129)),
        "at most 128 SQL scripts are allowed"
    );
    assert!(req(&"-S ".repeat(128), &known()).is_ok());
    let missing = |_: &str| -> std::io::Result<String> {
        Err(std::io::Error::from(std::io::ErrorKind::NotFound))
    };
    let args = ["-f".to_string(), "gone.sql".to_string()];
    let r = request(&args, &known(), &no_env, &missing).unwrap_err();
    assert_eq!(
        r.message,
        "could not open file \"gone.sql\": entity not found"
    );
    assert_eq!(
        refusal("-i -I dta"),
        "unrecognized initialization step \"a\"\ndetail: Allowed step characters are: \"dtgGvpf\"."
    );
    assert!(matches!(req("-i -I dtg", &known()), Ok(Request::Init(_))));
}

#[test]
fn a_statement_wider_than_the_protocol_is_refused_before_connecting() {
    let wide = |_: &str| -> std::io::Result<String> {
        Ok(format!("SELECT LEAST({});\n", vec![":i"; 256].join(", ")))
    };
    for mode in ["extended", "prepared"] {
        let args: Vec<String> = ["-M", mode, "-f", "w.sql", "-t", "1"]
            .map(String::from)
            .to_vec();
        let r = request(&args, &known(), &no_env, &wide).unwrap_err();
        assert!(
            r.message
                .starts_with("statement has too many arguments (maximum is 255): SELECT LEAST(:i"),
            "{}",
            r.message
        );
    }
    let args: Vec<String> = ["-f", "w.sql", "-t", "1"].map(String::from).to_vec();
    assert!(request(&args, &known(), &no_env, &wide).is_ok());
}
