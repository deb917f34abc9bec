//! The cases of the pgbench conformance test, written for tidebench from pgbench 15's
//! documentation and from what pgbench's own test suite exercises (its option errors, script
//! errors, expressions, meta-commands, pipelines, seeded draws and runs). Each case is a
//! pgbench command line, the scripts it names, and the words both tools must print.

/// One command line given to both tools.
pub struct Case {
    pub name: String,
    /// Where the case comes from.
    pub from: &'static str,
    pub args: Vec<String>,
    /// Scripts written into the directory both tools run in.
    pub files: Vec<(String, String)>,
    /// Words both tools must print (stdout or stderr).
    pub says: Vec<String>,
    /// The database the environment names (PGDATABASE).
    pub db: &'static str,
    pub env: Vec<(&'static str, String)>,
    /// SQL run before each tool, and SQL whose output must be the same after each.
    pub setup: String,
    pub observe: String,
    /// The `--log-prefix` of a case whose `-l` logs are compared (their shape).
    pub logs: &'static str,
}

const DOCS: &str = "pgbench documentation";
const OPTION_TESTS: &str = "pgbench's no-server tests (option errors)";
const SCRIPT_TESTS: &str = "pgbench's no-server tests (script errors)";
const SERVER_TESTS: &str = "pgbench's server tests";
const ERROR_TESTS: &str = "pgbench's server tests (script errors)";

impl Case {
    fn new(from: &'static str, name: &str, args: &str) -> Case {
        Case {
            name: name.to_string(),
            from,
            args: args.split_whitespace().map(String::from).collect(),
            files: Vec::new(),
            says: Vec::new(),
            db: "bench",
            env: Vec::new(),
            setup: String::new(),
            observe: String::new(),
            logs: "",
        }
    }

    /// Adds a script file and `-f` for it (pgbench's `file@weight` form when `weight` is given).
    fn script(mut self, file: &str, text: &str) -> Case {
        self.args.push("-f".into());
        self.args.push(file.into());
        let bare = file.split('@').next().unwrap_or(file);
        self.files.push((bare.into(), text.into()));
        self
    }

    fn says(mut self, words: &[&str]) -> Case {
        self.says.extend(words.iter().map(|w| w.to_string()));
        self
    }

    fn db(mut self, db: &'static str) -> Case {
        self.db = db;
        self
    }

    fn env(mut self, key: &'static str, value: &str) -> Case {
        self.env.push((key, value.into()));
        self
    }

    fn logs(mut self, prefix: &'static str) -> Case {
        self.logs = prefix;
        self
    }

    fn rows(mut self, setup: &str, observe: &str) -> Case {
        self.setup = setup.into();
        self.observe = observe.into();
        self
    }

    /// The database SQL of the case runs in: its own unless it names one that does not exist.
    pub fn db_for_sql(&self) -> &'static str {
        match self.db {
            "empty" => "empty",
            _ => "bench",
        }
    }
}

/// Cases where the drop-in still says something other than pgbench 15 (issue 56 leaves them
/// open): the case's name and what differs. The test counts them apart (one that agrees
/// counts as agreeing) and fails on any other difference.
pub const OPEN: &[(&str, &str)] = &[];

/// Every case.
pub fn cases() -> Vec<Case> {
    let mut all = option_errors();
    all.extend(script_errors());
    all.extend(runtime_errors());
    all.extend(runs());
    all.extend(meta_commands());
    all.extend(logs_and_limits());
    all.extend(failures_told());
    all.extend(traces());
    all
}

/// `-d`: pgbench's debug trace, checked for what pgbench's own test checks (both clients,
/// `sending`, `receiving`, `executing`) and the lines a script's commands give.
fn traces() -> Vec<Case> {
    let d = |name: &str, args: &str| Case::new(SERVER_TESTS, name, args);
    vec![
        d("a trace of select-only, prepared, 2 clients", "-t 5 -c 2 -M prepared -b se -d -n").says(&[
            "client 0 executing script \"<builtin: select only>\"",
            "client 1 executing script \"<builtin: select only>\"",
            "client 0 executing \\set aid",
            "client 0 preparing P_0",
            "client 1 sending P_0",
            "client 0 receiving",
            "client 1 receiving",
        ]),
        d("a trace of a script's meta-commands and SQL", "-t 1 -d -n")
            .script("tr.sql", "\\set x 3 + 4\nSELECT :x;\n\\sleep 1 ms\n\\if :x > 1\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\n")
            .says(&[
                "client 0 executing script \"tr.sql\"",
                "client 0 executing \\set x",
                "client 0 sending SELECT 7;",
                "client 0 receiving",
                "client 0 executing \\sleep 1 ms",
                "client 0 executing \\if",
                "client 0 sending SELECT 2;",
                "client 0 executing \\else",
            ]),
        d("a trace in the extended protocol", "-t 1 -M extended -d -n")
            .script("tx.sql", "\\set aid 5\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
            .says(&[
                "client 0 executing \\set aid",
                "client 0 sending SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
                "client 0 receiving",
            ]),
    ]
}

/// `--verbose-errors` and `--failures-detailed`: failures a script raises on purpose (a DO
/// block raising SQLSTATE 40001 or 40P01), so both tools meet the same errors without a race.
fn failures_told() -> Vec<Case> {
    const SERIALIZATION: &str = "DO $$BEGIN RAISE EXCEPTION 'told to fail' \
                                 USING ERRCODE = 'serialization_failure'; END$$;\n";
    const DEADLOCK: &str = "\\set x 1\nSELECT 1;\nDO $$BEGIN RAISE EXCEPTION 'told to deadlock' \
                            USING ERRCODE = 'deadlock_detected'; END$$;\n";
    let f = |name: &str, args: &str| Case::new(DOCS, name, args);
    vec![
        f(
            "a serialization failure told and retried, by kind",
            "-n -t 1 --max-tries 3 --verbose-errors --failures-detailed",
        )
        .script("sf.sql", SERIALIZATION)
        .says(&[
            "client 0 got an error in command 0 (SQL) of script 0; ERROR:  told to fail",
            "client 0 repeats the transaction after the error (try 1/3)",
            "client 0 repeats the transaction after the error (try 2/3)",
            "client 0 ends the failed transaction (try 3/3)",
            "number of failed transactions: 1 (100.000%)",
            "number of serialization failures: 1 (100.000%)",
            "number of deadlock failures: 0 (0.000%)",
        ]),
        f(
            "deadlocks told, counted and logged by kind",
            "-n -t 2 --verbose-errors --failures-detailed -l --log-prefix=lgd",
        )
        .script("dl.sql", DEADLOCK)
        .says(&[
            "client 0 got an error in command 2 (SQL) of script 0; ERROR:  told to deadlock",
            "client 0 ends the failed transaction (try 1/1)",
            "number of deadlock failures: 2 (100.000%)",
        ])
        .logs("lgd"),
        f(
            "deadlocks aggregated by kind",
            "-n -T 2 --max-tries 2 --failures-detailed -l --aggregate-interval=1 --log-prefix=da",
        )
        .script("dl.sql", DEADLOCK)
        .says(&["number of deadlock failures: "])
        .logs("da"),
        f(
            "the failing script of two named by number",
            "-n -t 1 --verbose-errors",
        )
        .script("ok.sql@0", "SELECT 1;\n")
        .script("sf.sql@1", SERIALIZATION)
        .says(&[
            "client 0 got an error in command 0 (SQL) of script 1; ERROR:  told to fail",
            "client 0 ends the failed transaction (try 1/1)",
        ]),
        f(
            "tries told with the share of the latency limit used",
            "-n -t 1 --max-tries 2 -L 100000 --verbose-errors",
        )
        .script("sf.sql", SERIALIZATION)
        .says(&[
            "client 0 repeats the transaction after the error (try 1/2, 0.0",
            "% of the maximum time of tries was used)",
        ]),
        f(
            "unlimited tries told without a bound",
            "-n -T 1 --max-tries 0 --verbose-errors",
        )
        .script("sf.sql", SERIALIZATION)
        .says(&[
            "client 0 repeats the transaction after the error (try 1)",
            "client 0 repeats the transaction after the error (try 2)",
        ]),
        // A sequence is not rolled back, so it counts tries across them: every third try
        // commits, so each transaction takes exactly three tries.
        f(
            "transactions retried counted once however many retries",
            "-n -t 3 --max-tries 3",
        )
        .script("rt.sql", RETRY_TWICE)
        .rows(RETRY_SEQ, "SELECT last_value FROM rt_seq")
        .says(&[
            "number of failed transactions: 0 (0.000%)",
            "number of transactions retried: 3 (100.000%)",
            "total number of retries: 6",
        ]),
        // Every fourth try commits with three allowed: the 1st and 3rd transactions fail
        // after two retries, the 2nd and 4th commit at once; failed ones count as retried.
        f(
            "transactions retried include those that failed in the end",
            "-n -t 4 --max-tries 3 --failures-detailed",
        )
        .script("rt4.sql", RETRY_THRICE)
        .rows(RETRY_SEQ, "SELECT last_value FROM rt_seq")
        .says(&[
            "number of failed transactions: 2 (50.000%)",
            "number of serialization failures: 2 (50.000%)",
            "number of transactions retried: 2 (50.000%)",
            "total number of retries: 4",
        ]),
    ]
}

const RETRY_SEQ: &str = "DROP SEQUENCE IF EXISTS rt_seq; CREATE SEQUENCE rt_seq;";
const RETRY_TWICE: &str = "DO $$BEGIN IF nextval('rt_seq') % 3 <> 0 THEN RAISE EXCEPTION \
                           'told to retry' USING ERRCODE = 'serialization_failure'; END IF; \
                           END$$;\n";
const RETRY_THRICE: &str = "DO $$BEGIN IF nextval('rt_seq') % 4 <> 0 THEN RAISE EXCEPTION \
                            'told to retry' USING ERRCODE = 'serialization_failure'; END IF; \
                            END$$;\n";

/// pgbench's transaction logs, latency limit and progress options.
fn logs_and_limits() -> Vec<Case> {
    let l = |name: &str, args: &str| Case::new(SERVER_TESTS, name, args);
    vec![
        l(
            "a sampled transaction log of 2 clients",
            "-n -S -t 50 -c 2 --log --sampling-rate=0.5 --log-prefix=lg",
        )
        .logs("lg"),
        l(
            "a transaction log of select-only",
            "-n -b select-only -t 10 -l --log-prefix=lg",
        )
        .logs("lg"),
        l(
            "a transaction log of 3 clients on 2 threads",
            "-n -S -t 20 -c 3 -j 2 -l --log-prefix=lg",
        )
        .logs("lg"),
        l(
            "an aggregated log",
            "-n -S -T 2 -l --aggregate-interval=1 --log-prefix=ag",
        )
        .logs("ag"),
        l(
            "a rate with a latency limit",
            "-t 100 -S --rate=100000 --latency-limit=1000000 -c 2 -n -r",
        )
        .says(&["builtin: select only"]),
        l(
            "progress with timestamps",
            "-n -S -T 2 -P 1 --progress-timestamp",
        )
        .says(&["progress: "]),
    ]
}

/// Command lines pgbench refuses before connecting (exit 1).
fn option_errors() -> Vec<Case> {
    let o = |name: &str, args: &str, says: &[&str]| Case::new(OPTION_TESTS, name, args).says(says);
    vec![
        o(
            "unknown option",
            "--bad-option",
            &["--help", "more information"],
        ),
        o(
            "missing script file",
            "-f no-such-file",
            &["could not open file \"no-such-file\""],
        ),
        o(
            "unknown builtin",
            "-b no-such-builtin",
            &["no builtin script", "\"no-such-builtin\""],
        ),
        o(
            "weight not a number",
            "--builtin=select-only@one",
            &["invalid weight specification: @one"],
        ),
        o(
            "negative weight",
            "-b select-only@-1",
            &["out of range", "-1"],
        ),
        o(
            "too many scripts",
            &"-S ".repeat(129),
            &["at most 128 SQL scripts"],
        ),
        o(
            "clients not a number",
            "-c three",
            &["invalid value \"three\" for option -c/--clients"],
        ),
        o(
            "jobs not a number",
            "-j eleven",
            &["invalid value \"eleven\" for option -j/--jobs"],
        ),
        o(
            "scale not a number",
            "-i -s two",
            &["invalid value \"two\" for option -s/--scale"],
        ),
        o(
            "transactions not a number",
            "-t zil",
            &["invalid value \"zil\" for option -t/--transactions"],
        ),
        o(
            "duration not a number",
            "-T ten",
            &["invalid value \"ten\" for option -T/--time"],
        ),
        o(
            "transactions and duration",
            "-S -t 1000 -T 1",
            &["specify either"],
        ),
        o(
            "duration and transactions",
            "-S -T 10 -t 1000",
            &["specify either"],
        ),
        o(
            "bad definition",
            "--define foobla",
            &["invalid variable definition"],
        ),
        o(
            "fillfactor out of range",
            "-i -F 1",
            &["-F/--fillfactor must be in range"],
        ),
        o(
            "unknown query mode",
            "-M no-such-mode",
            &["invalid query mode"],
        ),
        o(
            "progress zero",
            "--progress=0",
            &["-P/--progress must be in range"],
        ),
        o("rate zero", "--rate=0.0", &["invalid rate limit"]),
        o(
            "latency limit zero",
            "--latency-limit=0.0",
            &["invalid latency limit"],
        ),
        o(
            "sampling rate zero",
            "--sampling-rate=0",
            &["invalid sampling rate"],
        ),
        o(
            "aggregate interval negative",
            "--aggregate-interval=-3",
            &["--aggregate-interval must be in range"],
        ),
        o(
            "all weights zero",
            "-b se@0 -b si@0 -b tpcb@0",
            &["weight must not be zero"],
        ),
        o(
            "run option in init",
            "-i -S",
            &["cannot be used in initialization"],
        ),
        o(
            "init option in run",
            "-S -F 90",
            &["cannot be used in benchmarking"],
        ),
        o("ambiguous builtin", "-b s", &["ambiguous"]),
        o(
            "timestamp without progress",
            "--progress-timestamp",
            &["allowed only under"],
        ),
        o(
            "init steps without init",
            "-I dtg",
            &["cannot be used in benchmarking mode"],
        ),
        o(
            "unknown init step",
            "-i -I dta",
            &[
                "unrecognized initialization step",
                "Allowed step characters are",
            ],
        ),
        o(
            "seed not a number",
            "--random-seed=one",
            &["unrecognized random seed option \"one\""],
        ),
        o(
            "unknown partition method",
            "-i --partition-method=BAD",
            &["\"range\"", "\"hash\"", "\"BAD\""],
        ),
        o(
            "negative partitions",
            "-i --partitions -1",
            &["--partitions must be in range"],
        ),
        o(
            "method without partitions",
            "-i --partition-method=hash",
            &["partition-method requires greater than zero --partitions"],
        ),
        o(
            "negative tries",
            "--max-tries -10",
            &["invalid number of maximum tries: \"-10\""],
        ),
        o(
            "unlimited tries without a bound",
            "--max-tries 0",
            &["an unlimited number of transaction tries"],
        ),
        o(
            "sampling without log",
            "--sampling-rate=0.01",
            &["log sampling", "only when"],
        ),
        o(
            "sampling and aggregation",
            "-l --sampling-rate=0.1 --aggregate-interval=3",
            &["cannot be used at the same time"],
        ),
        o(
            "aggregation without log",
            "--aggregate-interval=3",
            &["only when"],
        ),
        o("log prefix without log", "--log-prefix=x", &["only when"]),
        o(
            "aggregation longer than the run",
            "-l -T 1 --aggregate-interval=3",
            &["not be higher"],
        ),
        o(
            "duration not a multiple of aggregation",
            "-l -T 5 --aggregate-interval=3",
            &["multiple"],
        ),
    ]
}

/// Scripts pgbench refuses when it reads them (exit 1), with the line shown.
fn script_errors() -> Vec<Case> {
    let s = |name: &str, text: &str, says: &[&str]| {
        Case::new(SCRIPT_TESTS, name, "")
            .script("bad.sql", text)
            .says(says)
    };
    vec![
        s(
            "\\if without \\endif",
            "\\if 1",
            &["\\if without matching \\endif"],
        ),
        s(
            "\\elif without \\if",
            "\\elif 1",
            &["\\elif without matching \\if"],
        ),
        s(
            "\\else without \\if",
            "\\else",
            &["\\else without matching \\if"],
        ),
        s(
            "\\endif without \\if",
            "\\endif",
            &["\\endif without matching \\if"],
        ),
        s(
            "\\elif after \\else",
            "\\if 1\n\\else\n\\elif 0\n\\endif",
            &["\\elif after \\else"],
        ),
        s(
            "\\else after \\else",
            "\\if 1\n\\else\n\\else\n\\endif",
            &["\\else after \\else"],
        ),
        s(
            "\\if without a condition",
            "\\if\n\\endif\n",
            &["syntax error in command \"if\""],
        ),
        s(
            "\\elif with a bad condition",
            "\\if 0\n\\elif +\n\\endif\n",
            &["syntax error in command \"elif\""],
        ),
        s(
            "\\else with an argument",
            "\\if 0\n\\else BAD\n\\endif\n",
            &["unexpected argument in command \"else\""],
        ),
        s(
            "\\endif with an argument",
            "\\if 0\n\\endif BAD\n",
            &["unexpected argument in command \"endif\""],
        ),
        s(
            "least()",
            "\\set i least()\n",
            &["at least one argument expected (least)"],
        ),
        s(
            "greatest()",
            "\\set i greatest()\n",
            &["at least one argument expected (greatest)"],
        ),
        s(
            "hash()",
            "\\set i hash()\n",
            &["unexpected number of arguments (hash)"],
        ),
        s(
            "hash(1,2,3)",
            "\\set i hash(1,2,3)\n",
            &["unexpected number of arguments (hash)"],
        ),
        s(
            "bigint constant overflow",
            "\\set i 100000000000000000000\n",
            &["bigint constant overflow"],
        ),
        s(
            "double constant overflow",
            "\\set d 1.0E309\n",
            &["double constant overflow"],
        ),
        s(
            "double constant overflow, leading dot",
            "\\set d .1E310\n",
            &["double constant overflow"],
        ),
        s(
            "operator without operand",
            "\\set i 1 +\n",
            &["set i 1 +", "^ error found here"],
        ),
        s(
            "permute(1)",
            "\\set i permute(1)\n",
            &["unexpected number of arguments (permute)"],
        ),
        s(
            "permute with four arguments",
            "\\set i permute(1, 2, 3, 4)\n",
            &["unexpected number of arguments (permute)"],
        ),
        s("empty script", "", &["empty command list for script"]),
        s(
            "unknown meta-command",
            "\\nosuchcommand",
            &["invalid command", "\"nosuchcommand\""],
        ),
        s("\\set without a name", "\\set", &["missing argument"]),
        s("\\set without an expression", "\\set i", &["syntax error"]),
        s(
            "\\set syntax error",
            "\\set i CASE TRUE THEN 1 ELSE 0 END",
            &["syntax error in command \"set\""],
        ),
        s(
            "unknown function",
            "\\set i noSuchFunction()",
            &["unexpected function name"],
        ),
        s(
            "unexpected character",
            "\\set i ;",
            &["unexpected character"],
        ),
        s(
            "ln with two arguments",
            "\\set d ln(1.0, 2.0))",
            &["unexpected number of arguments"],
        ),
        s(
            "greatest() with a trailing parenthesis",
            "\\set i greatest())",
            &["at least one argument expected"],
        ),
        s("\\shell without a command", "\\shell", &["missing command"]),
        s(
            "\\shell with 256 arguments",
            &format!("\\shell echo {}", ["arg"; 255].join(" ")),
            &["too many arguments in command \"shell\""],
        ),
        s(
            "\\setshell without a command",
            "\\setshell var",
            &["missing argument"],
        ),
        s(
            "\\sleep with too many arguments",
            "\\sleep too many args",
            &["too many arguments"],
        ),
        s(
            "\\sleep without an argument",
            "\\sleep",
            &["missing argument", "\\sleep"],
        ),
        s(
            "\\sleep in weeks",
            "\\sleep 1 week",
            &["unrecognized time unit"],
        ),
        s(
            "\\gset alone",
            "\\gset",
            &["gset must follow an SQL command"],
        ),
        s(
            "\\gset after a meta-command",
            "\\set i +1\n\\gset",
            &["gset must follow an SQL command"],
        ),
        s(
            "\\gset with two arguments",
            "SELECT 1 \\gset a b",
            &["too many arguments"],
        ),
        s(
            "\\gset after \\gset",
            "SELECT 1 AS i \\gset\n\\gset",
            &["gset must follow an SQL command"],
        ),
        Case::new(
            SCRIPT_TESTS,
            "256 parameters in prepared mode",
            "-M prepared",
        )
        .script(
            "bad.sql",
            &format!("\\set i 0\nSELECT LEAST({})", [":i"; 256].join(", ")),
        )
        .says(&["statement has too many arguments", "255"]),
    ]
}

/// The options pgbench's own tests give every script-error run.
const ERROR_RUN: &str = "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 \
    -Dbadtrue=trueXXX -Dmaxint=9223372036854775807 -Dminint=-9223372036854775808 -M prepared";

/// Scripts that start and then abort their client (exit 2, "processed: 0/1").
fn runtime_errors() -> Vec<Case> {
    let e = |name: &str, text: &str, says: &[&str]| {
        Case::new(ERROR_TESTS, name, ERROR_RUN)
            .script("err.sql", text)
            .says(says)
    };
    vec![
        e("SQL syntax error", "SELECT 1 + ;\n", &["ERROR:  syntax error"]),
        e("missing table", "SELECT * FROM no_such_table;\n", &["relation \"no_such_table\" does not exist"]),
        e("missing table in a later statement", "SELECT 1;\nSELECT *\n  FROM no_such_table;\n", &["relation \"no_such_table\" does not exist"]),
        e("missing column far into a long line", &format!("SELECT {} no_such_column;\n", "1 + ".repeat(30)), &["column \"no_such_column\" does not exist"]),
        e("\\shell of a missing command", "\\shell no-such-command", &["meta-command failed"]),
        e("\\shell with an undefined variable", "\\shell echo ::foo :nosuchvariable\n", &["undefined variable \":nosuchvariable\""]),
        e("invalid variable name", "\\set . 1", &["invalid variable name"]),
        e("division by zero", "\\set i 1/0", &["division by zero"]),
        e("undefined variable", "\\set i :nosuchvariable", &["undefined variable \"nosuchvariable\""]),
        e("17 arguments to least", "\\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)", &["too many function arguments"]),
        e("empty random range", "\\set i random(5,3)", &["empty range given to random"]),
        e("random range too large", "\\set i random(:minint, :maxint)", &["random range is too large"]),
        e("gaussian parameter below 2", "\\set i random_gaussian(0, 10, 1.0)", &["at least 2"]),
        e("exponential parameter 0", "\\set i random_exponential(0, 10, 0.0)", &["exponential parameter must be greater "]),
        e("zipfian parameter 1", "\\set i random_zipfian(0, 10, 1)", &["zipfian parameter must be in range [1.001, 1000]"]),
        e("zipfian parameter too large", "\\set i random_zipfian(0, 10, 1000000)", &["zipfian parameter must be in range [1.001, 1000]"]),
        e("text variable in arithmetic", "\\set i :foo + 1", &["malformed variable \"foo\" value: \"bla\""]),
        e("NOT of a double", "\\set b NOT 0.0", &["cannot coerce double to boolean"]),
        e("boolean plus int", "\\set i TRUE + 2", &["cannot coerce boolean to int"]),
        e("ln of a boolean", "\\set d ln(TRUE)", &["cannot coerce boolean to double"]),
        e("random of booleans", "\\set b random(FALSE, TRUE)", &["cannot coerce boolean to int"]),
        e("double to int overflow", "\\set i int(1E32)", &["double to int overflow for 100"]),
        e("bigint add overflow", "\\set i (1<<62) + (1<<62)", &["int add out"]),
        e("bigint sub overflow", "\\set i 0 - (1<<62) - (1<<62) - (1<<62)", &["int sub out"]),
        e("bigint mul overflow", "\\set i 2 * (1<<62)", &["int mul out"]),
        e("bigint div out of range", "\\set i :minint / -1", &["bigint div out of range"]),
        e("\\setshell of a word", "\\setshell i echo -n one", &["command must return an integer"]),
        e("\\setshell of a missing command", "\\setshell var no-such-command", &["could not read result "]),
        e("\\sleep of an undefined variable", "\\sleep :nosuchvariable", &["sleep: undefined variable"]),
        e("malformed boolean", "\\set b :badtrue or true", &["malformed variable", "trueXXX"]),
        e("permute size 0", "\\set i permute(0, 0)", &["permute size parameter must be greater than zero"]),
        e("\\gset of no row", "SELECT WHERE FALSE \\gset", &["expected one row, got 0"]),
        e("\\gset of a statement without rows", "DROP TABLE IF EXISTS no_such_table \\gset", &["expected one row, got 0"]),
        e("\\gset into ?column?", "SELECT 1 \\gset", &["error storing into variable ?column?"]),
        e("\\gset into a bad name", "SELECT 1 AS \"bad name!\" \\gset", &["error storing into variable bad name!"]),
        e("\\gset of two rows", "SELECT 5432 AS fail UNION SELECT 5433 ORDER BY 1 \\gset", &["expected one row, got 2"]),
        e("\\aset of no row", "\\; SELECT 5432 AS i8 WHERE FALSE \\; \\aset\n\\set i debug(:i8)\n", &["undefined variable \"i8\""]),
        e("bad input for a parameter", "select 42 as value1, '1a' as value2 \\gset\nselect :value1::smallint, :value2::smallint;\n", &["invalid input syntax for type smallint: \"1a\""]),
        Case::new(ERROR_TESTS, "\\startpipeline twice", "-t 1 -n -M extended")
            .script("p.sql", "\\startpipeline\n\\startpipeline\n")
            .says(&["already in pipeline mode"]),
        Case::new(ERROR_TESTS, "\\endpipeline without a start", "-t 1 -n -M extended")
            .script("p.sql", "\\endpipeline\n")
            .says(&["not in pipeline mode"]),
        Case::new(ERROR_TESTS, "\\gset in a pipeline", "-t 1 -n -M extended")
            .script("p.sql", "\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n")
            .says(&["gset is not allowed in pipeline mode"]),
        Case::new(SERVER_TESTS, "end of script inside a transaction block", "-n")
            .script("open.sql", "BEGIN;SELECT 1;")
            .says(&["client 0 aborted: end of script reached without completing the last transaction"]),
        Case::new(SERVER_TESTS, "no such database", "").db("no-such-database")
            .says(&["database \"no-such-database\" does not exist"]),
        Case::new(SERVER_TESTS, "built-in script without pgbench's tables", "-S -t 1").db("empty")
            .says(&["Perhaps you need to do initialization"]),
    ]
}

/// Runs that end well (exit 0), with their counts and rows.
fn runs() -> Vec<Case> {
    let r = |name: &str, args: &str| Case::new(SERVER_TESTS, name, args);
    vec![
        r("tpcb-like, simple protocol", "--transactions=5 -Dfoo=bla --client=2 --protocol=simple --builtin=t -n")
            .says(&["builtin: TPC-B", "mode: simple", "maximum number of tries: 1"]),
        r("simple-update, extended protocol", "--transactions=20 --client=5 -M extended --builtin=si --no-vacuum")
            .says(&["builtin: simple update", "threads: 1", "mode: extended"]),
        r("select-only, prepared, 7 clients", "-t 100 -c 7 -M prepared -b se -n")
            .says(&["builtin: select only", "clients: 7", "mode: prepared"]),
        r("-S -N and -b together", "-t 4 -c 2 -S -N -n").says(&["type: multiple scripts"]),
        r("a connection per transaction, -s ignored", "-t 20 -c 5 -M extended -b si -C -n -s 1")
            .says(&["builtin: simple update", "scale option ignored"]),
        r("tpcb-like with --connect and -v", "--transactions=5 -Dfoo=bla --client=2 --protocol=simple --builtin=t --connect -n -v -n")
            .says(&["builtin: TPC-B", "clients: 2"]),
        r("progress every second", "-n -S -T 2 -P 1").says(&["progress: 1.0 s", "tps"]),
        r("the list of built-in scripts", "-b list")
            .says(&["Available builtin scripts:", "tpcb-like", "simple-update", "select-only"]),
        r("a built-in script shown", "--show-script se")
            .says(&["select-only: ", "SELECT abalance FROM pgbench_accounts WHERE"]),
        r("two weighted scripts", "-t 100 -c 1 -M prepared -n")
            .script("s1@1", "\\set aid random(1, :scale * 100000)\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\n")
            .script("s2@2", "BEGIN;\n\\set foo 1\nSELECT :foo::INT + :scale::INT * :client_id::INT AS bla;\nCOMMIT;\n")
            .says(&["type: multiple scripts", "weight: 2", "weight: 1"]),
        r("a script with a transaction block, simple", "-n -t 10 -c 1 -M simple")
            .script("tx.sql", "\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\nCOMMIT;\n"),
        r("a script with a transaction block, extended, 2 clients", "-n -t 10 -c 2 -M extended")
            .script("tx.sql", "\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\nCOMMIT;\n"),
        r("statements that create and drop types", "--no-vacuum --client=5 --protocol=prepared --transactions=25")
            .script("enum.sql", &format!("CREATE TYPE pg_temp.e AS ENUM ({}); DROP TYPE pg_temp.e;", (1..=50).map(|i| format!("'l{i}'")).collect::<Vec<_>>().join(","))),
        r("a pipeline, extended", "-t 1 -n -M extended")
            .script("p.sql", &format!("\\startpipeline\n{}\\endpipeline\n", "select 1;\n".repeat(10))),
        r("a pipeline, prepared", "-t 1 -n -M prepared")
            .script("p.sql", &format!("\\startpipeline\n{}\\endpipeline\n", "select 1;\n".repeat(10))),
        r("a serializable pipeline, 4 clients on 2 threads", "-c4 -j2 -t 10 -n -M prepared")
            .script("p.sql", &format!("\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n{}END;\n\\endpipeline\n", "select 1;\n".repeat(10))),
        r("-D values typed as pgbench types them", "-n -t 1 -Dfoo=-10.1 -Dbla=false -Di=+3 -Dn=null -Dt=t -Df=of -Dd=1.0")
            .script("vars.sql", "\\set a debug(:foo)\n\\set b debug(:bla)\n\\set c debug(:i)\n\\set d debug(:n)\n\\set e debug(:t)\n\\set f debug(:f)\n\\set g debug(:d)\n"),
        r("seeded draws, twice the same", "--random-seed=20261126 -t 1")
            .script("draws.sql", "\\set ur random(1000, 1999)\n\\set er random_exponential(2000, 2999, 2.0)\n\\set gr random_gaussian(3000, 3999, 3.0)\n\\set zr random_zipfian(4000, 4999, 1.5)\nINSERT INTO seeded VALUES (:ur, :er, :gr, :zr);\n")
            .rows("DROP TABLE IF EXISTS seeded; CREATE TABLE seeded (u int, e int, g int, z int)", "SELECT u, e, g, z FROM seeded"),
        r("seeded draws of 3 clients on 3 threads", "--random-seed=7 -c 3 -j 3 -t 20 -n")
            .script("draws.sql", "\\set r random(1, 1000000)\n\\set e random_exponential(1, 1000, 2.5)\n\\set g random_gaussian(1, 1000, 4)\n\\set z random_zipfian(1, 1000, 1.5)\nINSERT INTO draws (c, r, e, g, z) VALUES (:client_id, :r, :e, :g, :z);\n")
            .rows("DROP TABLE IF EXISTS draws; CREATE TABLE draws (c int, r int, e int, g int, z int, n bigserial)", "SELECT c, array_agg(r ORDER BY n), array_agg(e ORDER BY n), array_agg(g ORDER BY n), array_agg(z ORDER BY n) FROM draws GROUP BY c ORDER BY c"),
        r("seeded tpcb-like touches the same accounts", "--random-seed=99 -c 2 -j 2 -t 50 -n")
            .rows("TRUNCATE pgbench_history", "SELECT aid, tid, bid, delta FROM pgbench_history ORDER BY aid, tid, bid, delta"),
        r("seeded simple-update touches the same accounts", "--random-seed=5 -N -t 30 -n")
            .rows("TRUNCATE pgbench_history", "SELECT aid, tid, bid, delta FROM pgbench_history ORDER BY aid, tid, bid, delta"),
        r("seeded weighted choice of scripts", "--random-seed=3 -c 2 -j 2 -t 40 -n")
            .script("a@3", "INSERT INTO picks (c, s) VALUES (:client_id, 'a');\n")
            .script("b@1", "INSERT INTO picks (c, s) VALUES (:client_id, 'b');\n")
            .rows("DROP TABLE IF EXISTS picks; CREATE TABLE picks (c int, s text, n bigserial)", "SELECT c, string_agg(s, '' ORDER BY n) FROM picks GROUP BY c ORDER BY c"),
        r("serialization failures are retried", "-n -c 2 -t 5 --max-tries 10")
            .env("PGOPTIONS", "-c default_transaction_isolation=repeatable\\ read")
            .script("ser.sql", "\\set delta random(-5000, 5000)\nBEGIN;\nUPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = 1;\nSELECT pg_sleep(0.01);\nEND;\n"),
    ]
}

/// Meta-commands and expressions whose values `debug()` shows.
fn meta_commands() -> Vec<Case> {
    let m = |name: &str, args: &str, text: &str| Case::new(DOCS, name, args).script("m.sql", text);
    vec![
        m("expressions with a seed", "--random-seed=5432 -t 1 -n", EXPRESSIONS),
        m("\\gset forms", "-t 1 -n", "SELECT \\gset\nSELECT 0 AS i0 \\gset\n\\set i debug(:i0)\nSELECT 1 AS i1, 2 AS i2 \\gset\n\\set i debug(:i1)\n\\set i debug(:i2)\nSELECT 3 AS i3 \\gset x_\n\\set i debug(:x_i3)\nSELECT 0 AS i4, 4 AS i4 \\gset\n\\set i debug(:i4)\n\\; \\; SELECT 0 AS i5 \\; SELECT 5 AS i5 \\; \\; \\gset\n\\set i debug(:i5)\n"),
        m("\\aset forms", "-t 1 -n", "\\; SELECT 6 AS i6 \\; SELECT 7 AS i7 \\; \\aset\nSELECT 8 AS i6 UNION SELECT 9 ORDER BY 1 DESC \\aset\n\\set i debug(:i6)\n\\set i debug(:i7)\n"),
        m("\\sleep units and \\setshell", "-t 1 -n", "\\set zero 0\n\\set one 1.0\n\\sleep :one ms\n\\sleep 100 us\n\\sleep 0 s\n\\sleep :zero\n\\sleep 2ms\n\\setshell another_one\\\n  echo \\\n    :one\n\\set n debug(:another_one)\n"),
        m("\\shell output reaches stdout", "-t 1 -n", "\\shell echo shell-echo-output\n").says(&["shell-echo-output"]),
        m("command numbers inside \\if branches", "-t 1 -n", "\\set nope 0\n\\if 1 > 0\n\\set a debug(1)\n\\elif 0\n\\set nope 1\n\\else\n\\set nope 1\n\\endif\n\\if 1 < 0\n\\set nope 1\n\\elif 1 > 0\n\\set b debug(2)\n\\else\n\\set nope 1\n\\endif\n\\if 0\n\\set nope 1\n\\elif 0\n\\set nope 1\n\\else\n\\set c debug(3)\n\\endif\n\\set nope debug(:nope)\n"),
        m("automatic variables", "-t 1 -n -c 2 --random-seed=11", "\\set s debug(:scale)\n\\set c debug(:client_id)\n\\set r debug(:random_seed)\n\\set h debug(hash(10))\n\\set d debug(:default_seed)\n"),
        m("hash functions and permute", "-t 1 -n", "\\set a debug(hash(10, 5432))\n\\set b debug(hash_fnv1a(10, 5432))\n\\set c debug(permute(3, 10, 42))\n\\set d debug(permute(9223372036854775797, 9223372036854775807, 5432))\n"),
        m("a meta-command-only script on 3 clients", "-t 30 -c 3 -j 1 -n", "\\set x random(1, 10)\n\\set y :x * 2\n"),
    ]
}

/// Expressions of every kind, with the seeded draws first (pgbench's documented functions
/// and operators).
const EXPRESSIONS: &str = "\\set i1 debug(random(10, 19))
\\set i2 debug(random_exponential(100, 199, 10.0))
\\set i3 debug(random_gaussian(1000, 1999, 10.0))
\\set i4 debug(abs(-4))
\\set i5 debug(greatest(5, 4, 3, 2))
\\set i6 debug(11 + least(-5, -4, -3, -2))
\\set i7 debug(int(7.3))
\\set i8 debug(17 / (4|1) + ( 4 + (7 >> 2)))
\\set i9 debug(- (3 * 4 - (-(~ 1) + -(~ 0))) / -1 + 3 % -1)
\\set ic debug(64 % (((2 + 1 * 2 + (1 # 2) | 4 * (2 & 11)) - (1 << 2)) + 2))
\\set d1 debug(sqrt(+1.5 * 2.0) * abs(-0.8E1))
\\set pi debug(pi() * 4.9)
\\set d5 debug(least(-5.18, .0E0, 1.0/0) * -3.3)
\\set id debug(random_zipfian(1, 9, 1.3))
\\set p1 debug(pow(-3,3))
\\set p2 debug(pow(2.0,10))
\\set p3 debug(pow(0,0))
\\set p4 debug(power(-5.0,-5.0))
\\set p5 debug(pow(10,30))
\\set c0 debug(1.0 = 0.0 and 1.0 != 0.0)
\\set c1 debug(0 = 1 Or 1.0 = 1)
\\set c6 debug(case when false THEN -1 when 1 = 1 then 13 + 19 + 2.0 end )
\\set c9 debug(CASE WHEN NOT FALSE THEN 3 * 12.3333334 END)
\\set cb debug(10 + mod(13 * 7 + 12, 13) - mod(-19 * 11 - 17, 19))
\\set n0 debug(NULL + NULL * exp(NULL))
\\set n3 debug(:n0 IS NULL AND 1 IS NOT NULL AND 1 NOTNULL)
\\set n4 debug(:n0 ISNULL AND NOT :n0 IS TRUE AND :n0 IS NOT FALSE)
\\set zy 0
\\set yz debug(case when :zy = 0 then -1 else (1 / :zy) end)
\\set min debug(-9223372036854775808)
\\set max debug(-(:min + 1))
\\set u1 debug(random(1, 1000000))
\\set u2 debug(random_gaussian(1, 1000000, 2.5))
\\set u3 debug(random_exponential(1, 1000000, 0.5))
\\set u4 debug(random_zipfian(1, 1000000, 2.0))
";
