//! `tidebench ab`: A/B of two PostgreSQL builds (or two settings) as one command (issue 55).
//! One managed instance per side, each from its own bin dir with the same settings, the same
//! data loaded into both, the same run alternated A B B A for N rounds (a drift of the machine,
//! a warming cache or a neighbour starting, then falls on both sides alike), and `compare`'s
//! verdict at the end, whose exit status is the command's.
//!
//! The steps are tidebench's own commands (`instance start`, `prepare`, `run`), each run as a
//! child of this process exactly as the book's script runs them, so a run made here is the run a
//! user makes by hand: every run leaves an ordinary results dir under `--out`, and a failing
//! step shows its own message. The children's output goes to stderr, so that standard output
//! holds the verdict alone (JSON, JUnit or Markdown for a CI).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use super::compare_cmd::{parse_fail_on, CompareArgs, CompareFormat};
use super::instance_cmd::parse_setting;
use super::CliError;
use crate::report::compare::figures::{metric_of, Worse};
use crate::report::compare::verdict::Threshold;
use crate::results::RuntimeInfo;

pub const AB_AFTER_HELP: &str = "\
Each side is a managed instance, PREFIX-a and PREFIX-b (default ab-a, ab-b), created on first
use from its build's bin dir (--a-pg-bin, --b-pg-bin: where `pg_config --bindir` points) with
the --set settings, plus the side's own --a-set/--b-set. Both get the workload's data afresh
(prepare --force). Then each round runs A B B A: 2 runs a side per round (--runs N instead:
N runs a side, the last round cut to A B when N is odd), each an ordinary results dir,
OUT/a/NN and OUT/b/NN, NN the run's place in the sweep. The last step is `compare OUT/a OUT/b`
with --fail-on and --format: B is judged against A.

Everything after -- is given to every `tidebench run` (clients, duration, rate, ...); --a-arg
and --b-arg add arguments to one side's runs only, so the same build can be judged against
itself with a changed run (--a-arg=--rate=1000 --b-arg=--rate=950; a flag given both after
-- and to a side is refused by `run`). The scale (-s) is given to prepare and run alike; the
workload (-w, default tpcb) to prepare, and to run when given (leave it out for -S or -N).

Exit status: the verdict's (0 none regressed, 1 a metric regressed past its threshold and
outside the noise); 2 for bad flags or a setup error; a step that fails ends the sweep with
its own exit status. The instances are stopped at the end (--keep-running leaves them up);
`tidebench instance destroy ab-a` removes one.

Examples:
  tidebench ab --a-pg-bin /opt/pg-release/bin --b-pg-bin /opt/pg-patched/bin \\
      --set fsync=off -w tpcb -s 10 --rounds 3 --fail-on tps:-3% --format junit \\
      -- -c 8 -T 60s -P 0 > verdict.xml
  tidebench ab --b-set shared_buffers=16MB -w tpcb -s 10 -- -c 4 -T 30s   # one build, two settings";

/// What `prepare` loads when `-w` is not given: the tables of pgbench's scripts (`-S`, `-N`).
const DEFAULT_WORKLOAD: &str = "tpcb";
/// Rounds of A B B A when `--rounds` is not given: 6 runs a side.
const DEFAULT_ROUNDS: u32 = 3;

#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// Side A's (the baseline's) PostgreSQL build: a dir holding its initdb, pg_ctl and
    /// postgres [default: as `instance start`: $TIDEBENCH_PG_BIN, pg_config, PATH, Debian's newest]
    #[arg(long, value_name = "DIR")]
    pub a_pg_bin: Option<PathBuf>,
    /// Side B's PostgreSQL build (the one judged against A) [default: as --a-pg-bin]
    #[arg(long, value_name = "DIR")]
    pub b_pg_bin: Option<PathBuf>,
    /// A server setting of both sides' instances, e.g. --set fsync=off (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_setting)]
    pub settings: Vec<(String, String)>,
    /// A server setting of side A's instance only (repeatable; after --set, so it wins)
    #[arg(long = "a-set", value_name = "KEY=VALUE", value_parser = parse_setting)]
    pub a_settings: Vec<(String, String)>,
    /// A server setting of side B's instance only (repeatable)
    #[arg(long = "b-set", value_name = "KEY=VALUE", value_parser = parse_setting)]
    pub b_settings: Vec<(String, String)>,
    /// An argument added to side A's runs only, e.g. --a-arg=--rate=1000 (repeatable)
    #[arg(long = "a-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub a_args: Vec<String>,
    /// An argument added to side B's runs only, e.g. --b-arg=--rate=950 (repeatable)
    #[arg(long = "b-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub b_args: Vec<String>,
    /// Rounds of A B B A: 2 runs a side each; the verdict needs 3 runs a side, so 2 at least
    #[arg(long, default_value_t = DEFAULT_ROUNDS, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub rounds: u32,
    /// Runs a side instead of rounds (3 at least), e.g. 5: A B B A repeated and cut after
    /// 2 × N runs, so an odd N ends with A B
    #[arg(long, value_name = "N", conflicts_with = "rounds", value_parser = clap::value_parser!(u32).range(3..=200))]
    pub runs: Option<u32>,
    /// Workload to prepare on both sides (default tpcb) and, when given, to run; leave it out
    /// for run's pgbench-style flags such as -S, whose workloads load tpcb's tables
    #[arg(short = 'w', long)]
    pub workload: Option<String>,
    /// Scale to prepare and run [default: the workload's]
    #[arg(short = 's', long)]
    pub scale: Option<u32>,
    /// Name prefix of the two instances: PREFIX-a and PREFIX-b
    #[arg(long, value_name = "PREFIX", default_value = "ab")]
    pub name: String,
    /// Where the runs go: OUT/a/NN and OUT/b/NN [default: ./results/<UTC time>-ab/]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A metric's threshold for the verdict, as `compare --fail-on` (tps:-3%, p95:+10%); repeatable
    #[arg(long = "fail-on", value_name = "METRIC:N%", value_parser = parse_fail_on)]
    pub fail_on: Vec<Threshold>,
    /// How to print the verdict, as `compare --format`
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
    /// Leave both instances running at the end (default: stopped)
    #[arg(long)]
    pub keep_running: bool,
    /// Print the commands the sweep would run, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// `tidebench run`'s arguments for every run (after --), e.g. -- -c 8 -T 60s -P 0
    #[arg(last = true, allow_hyphen_values = true, value_name = "RUN ARGS")]
    pub run: Vec<String>,
}

/// The two sides, in the order the verdict reads them: A the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    A,
    B,
}

impl Side {
    fn letter(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// One step of the sweep: what it is, in words, and its arguments to tidebench.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    what: String,
    argv: Vec<String>,
}

/// The order of `per_side` runs a side: A B B A per round. Over a round a drift that grows
/// steadily adds as much to A's runs as to B's (1 + 4 against 2 + 3); an odd count ends with
/// a half round, A B.
fn order(per_side: u32) -> Vec<Side> {
    [Side::A, Side::B, Side::B, Side::A]
        .into_iter()
        .cycle()
        .take(2 * per_side as usize)
        .collect()
}

/// Runs a side: `--runs`, else 2 per round.
fn runs_a_side(args: &AbArgs) -> u32 {
    args.runs.unwrap_or(args.rounds * 2)
}

fn instance_name(args: &AbArgs, side: Side) -> String {
    format!("{}-{}", args.name, side.letter())
}

/// Every command of the sweep, in order: the instances, the loads, the runs, and (unless
/// `--keep-running`) the stops.
fn steps(args: &AbArgs, out: &Path) -> Vec<Step> {
    let words = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let mut workload = Vec::new();
    if let Some(w) = &args.workload {
        workload.extend(words(&["-w", w]));
    }
    if let Some(s) = args.scale {
        workload.extend(words(&["-s", &s.to_string()]));
    }
    let mut out_steps = Vec::new();
    for side in [Side::A, Side::B] {
        let (bin, own) = match side {
            Side::A => (&args.a_pg_bin, &args.a_settings),
            Side::B => (&args.b_pg_bin, &args.b_settings),
        };
        let mut argv = words(&["instance", "start", &instance_name(args, side)]);
        if let Some(bin) = bin.as_ref().or(args.a_pg_bin.as_ref()) {
            argv.extend(words(&["--pg-bin", &bin.display().to_string()]));
        }
        for (k, v) in args.settings.iter().chain(own) {
            argv.extend(words(&["--set", &format!("{k}={v}")]));
        }
        out_steps.push(Step {
            what: format!("start side {}'s instance", side.letter().to_uppercase()),
            argv,
        });
    }
    for side in [Side::A, Side::B] {
        let mut argv = words(&["prepare"]);
        if args.workload.is_none() {
            argv.extend(words(&["-w", DEFAULT_WORKLOAD]));
        }
        argv.extend(workload.clone());
        argv.extend(words(&["--target", &target(args, side), "--force"]));
        out_steps.push(Step {
            what: format!("load side {}", side.letter().to_uppercase()),
            argv,
        });
    }
    let total = 2 * runs_a_side(args);
    for (n, side) in order(runs_a_side(args)).into_iter().enumerate() {
        let dir = out.join(side.letter()).join(format!("{:02}", n + 1));
        let mut argv = words(&["run"]);
        argv.extend(workload.clone());
        argv.extend(args.run.iter().cloned());
        argv.extend(
            match side {
                Side::A => &args.a_args,
                Side::B => &args.b_args,
            }
            .iter()
            .cloned(),
        );
        argv.extend(words(&["--target", &target(args, side)]));
        argv.extend(words(&["--out", &dir.display().to_string()]));
        out_steps.push(Step {
            what: format!(
                "run {} of {} (side {})",
                n + 1,
                total,
                side.letter().to_uppercase()
            ),
            argv,
        });
    }
    if !args.keep_running {
        for side in [Side::A, Side::B] {
            out_steps.push(Step {
                what: format!("stop side {}'s instance", side.letter().to_uppercase()),
                argv: words(&["instance", "stop", &instance_name(args, side)]),
            });
        }
    }
    out_steps
}

fn target(args: &AbArgs, side: Side) -> String {
    format!("instance:{}", instance_name(args, side))
}

/// What `ab` refuses before it starts anything: the flags it sets itself, and a dir that holds
/// runs already (their runs would be judged with the new ones).
fn refusal(args: &AbArgs, out: &Path) -> Option<String> {
    let own = ["--target", "--out", "-w", "--workload", "-s", "--scale"];
    let mut given = args.run.iter().chain(&args.a_args).chain(&args.b_args);
    if let Some(word) = given.find(|w| {
        own.iter()
            .any(|o| *w == o || w.starts_with(&format!("{o}=")))
    }) {
        return Some(format!(
            "{word} is ab's to set: give the workload and scale as ab's own -w and -s, and leave \
             --target and --out out of the run's arguments (ab runs each side on its own \
             instance and writes the runs under --out)"
        ));
    }
    let holds_runs = ["a", "b"].iter().any(|s| out.join(s).exists());
    holds_runs.then(|| {
        format!(
            "{} holds an A/B sweep already: give another --out, or remove it",
            out.display()
        )
    })
}

pub fn ab(args: AbArgs) -> Result<u8, CliError> {
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(crate::results::writer::dir_name(SystemTime::now(), "ab"))
    });
    if let Some(message) = refusal(&args, &out) {
        return Err(CliError::usage(message));
    }
    let steps = steps(&args, &out);
    if args.dry_run {
        for s in &steps {
            println!(
                "# {}\ntidebench {}",
                s.what,
                crate::launch::shell_line(&s.argv)
            );
        }
        println!(
            "# the verdict\ntidebench {}",
            crate::launch::shell_line(&compare_words(&args, &out))
        );
        return Ok(0);
    }
    let (sweep, stops): (Vec<Step>, Vec<Step>) = steps
        .into_iter()
        .partition(|s| !s.argv.starts_with(&["instance".into(), "stop".into()]));
    let failed = run_steps(&sweep, &out)?;
    // The instances are stopped whether the sweep finished or not.
    run_steps(&stops, &out)?;
    if let Some(code) = failed {
        return Ok(code);
    }
    for side in [Side::A, Side::B] {
        eprintln!(
            "ab: side {}: {}",
            side.letter().to_uppercase(),
            describe(&out, side)
        );
    }
    super::compare_cmd::compare(CompareArgs {
        dirs: vec![out.join("a"), out.join("b")],
        html: None,
        fail_on: args.fail_on,
        format: args.format,
    })
}

/// Runs `steps` in order, each a child tidebench whose standard output is our standard error
/// (so our own standard output holds only the verdict); stops at the first that fails, said
/// on stderr, and gives its exit status.
fn run_steps(steps: &[Step], out: &Path) -> Result<Option<u8>, CliError> {
    use std::os::fd::AsFd;
    let exe = std::env::current_exe()?;
    for step in steps {
        eprintln!("ab: {}", step.what);
        let to_stderr = std::io::stderr().as_fd().try_clone_to_owned()?;
        let status = Command::new(&exe)
            .args(&step.argv)
            .stdout(Stdio::from(to_stderr))
            .status()?;
        if !status.success() {
            let code = status.code().map_or(super::EXIT_INTERRUPTED, |c| c as u8);
            eprintln!(
                "error: ab: {} failed (exit {code}): tidebench {}\n  its message is above; \
                 the runs made so far are in {}",
                step.what,
                crate::launch::shell_line(&step.argv),
                out.display()
            );
            return Ok(Some(code));
        }
    }
    Ok(None)
}

/// The `compare` the sweep ends with, as words (for `--dry-run`).
fn compare_words(args: &AbArgs, out: &Path) -> Vec<String> {
    let mut w = vec![
        "compare".to_string(),
        out.join("a").display().to_string(),
        out.join("b").display().to_string(),
    ];
    for t in &args.fail_on {
        w.push("--fail-on".into());
        let sign = match metric_of(&t.selector).map(|m| m.worse) {
            Some(Worse::Higher) => "+",
            _ => "-",
        };
        w.push(format!("{}:{sign}{}%", t.selector, t.pct));
    }
    if let Some(v) = clap::ValueEnum::to_possible_value(&args.format) {
        w.extend(["--format".to_string(), v.get_name().to_string()]);
    }
    w
}

/// The server a side's first run measured, from its `runtime.toml`: the build's version, so
/// the verdict's reader sees which builds it judged.
fn describe(out: &Path, side: Side) -> String {
    let dir = out.join(side.letter());
    let first = crate::report::compare::runs::runs_in(&dir)
        .ok()
        .and_then(|runs| runs.into_iter().next());
    let version = first
        .and_then(|run| RuntimeInfo::read(&run).ok())
        .and_then(|info| info.servers.into_iter().next())
        .map(|s| s.server_version);
    match version {
        Some(v) => format!("PostgreSQL {v} ({})", dir.display()),
        None => format!("{} (its server's version was not recorded)", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        ab: AbArgs,
    }

    fn parse(words: &[&str]) -> AbArgs {
        Wrap::try_parse_from(std::iter::once("ab").chain(words.iter().copied()))
            .unwrap()
            .ab
    }

    #[test]
    fn runs_alternate_a_b_b_a_and_each_side_gets_its_own_build_and_args() {
        let args = parse(&[
            "--a-pg-bin",
            "/pa",
            "--b-pg-bin",
            "/pb",
            "--set",
            "fsync=off",
            "--b-set",
            "work_mem=1MB",
            "--b-arg=--rate=95",
            "--rounds",
            "2",
            "-s",
            "3",
            "--",
            "-c",
            "2",
            "-T",
            "1s",
        ]);
        let steps = steps(&args, Path::new("/o"));
        let runs: Vec<&Step> = steps.iter().filter(|s| s.argv[0] == "run").collect();
        let sides: Vec<&str> = runs
            .iter()
            .map(|s| s.argv.iter().rev().nth(2).unwrap().as_str())
            .collect();
        let (a, b) = ("instance:ab-a", "instance:ab-b");
        assert_eq!(sides, [a, b, b, a, a, b, b, a]);
        assert_eq!(runs[1].argv.last().unwrap(), "/o/b/02");
        assert!(runs[1].argv.contains(&"--rate=95".to_string()));
        assert!(!runs[0].argv.contains(&"--rate=95".to_string()));
        assert_eq!(
            steps[1].argv.join(" "),
            "instance start ab-b --pg-bin /pb --set fsync=off --set work_mem=1MB"
        );
        assert_eq!(
            steps[2].argv.join(" "),
            "prepare -w tpcb -s 3 --target instance:ab-a --force"
        );
        assert_eq!(steps.last().unwrap().argv.join(" "), "instance stop ab-b");
    }

    #[test]
    fn b_runs_a_build_when_only_a_names_one_and_ab_refuses_the_flags_it_sets() {
        let args = parse(&["--a-pg-bin", "/pa", "--", "--target", "x"]);
        let steps = steps(&args, Path::new("/o"));
        assert!(steps[1].argv.join(" ").contains("--pg-bin /pa"));
        assert!(refusal(&args, Path::new("/nonexistent"))
            .is_some_and(|m| m.contains("--target is ab's to set")));
        let ok = parse(&["--", "-c", "2"]);
        assert_eq!(refusal(&ok, Path::new("/nonexistent")), None);
        assert!(parse_from_err(&["--rounds", "1"]));
        assert!(parse_from_err(&["--runs", "2"]));
        assert!(parse_from_err(&["--runs", "5", "--rounds", "3"]));
    }

    #[test]
    fn an_odd_count_of_runs_a_side_ends_with_a_half_round() {
        let args = parse(&["--runs", "5", "--", "-c", "2"]);
        let runs: Vec<String> = steps(&args, Path::new("/o"))
            .into_iter()
            .filter(|s| s.argv[0] == "run")
            .map(|s| s.argv.last().unwrap().clone())
            .collect();
        assert_eq!(
            runs,
            [
                "/o/a/01", "/o/b/02", "/o/b/03", "/o/a/04", "/o/a/05", "/o/b/06", "/o/b/07",
                "/o/a/08", "/o/a/09", "/o/b/10"
            ]
        );
    }

    fn parse_from_err(words: &[&str]) -> bool {
        Wrap::try_parse_from(std::iter::once("ab").chain(words.iter().copied())).is_err()
    }
}
