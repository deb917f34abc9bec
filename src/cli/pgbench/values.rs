//! pgbench's values as pgbench reads them: the built-in scripts by name or prefix, a
//! script's `@WEIGHT`, `atof`'s number, `-I`'s steps, the words for a script file it cannot
//! read, and the connection string pgbench's -h, -p, -U and database name make. No I/O.

use super::refusal::{refuse, Refusal};

/// pgbench's built-in scripts: name, the description its summary prints, and the tidebench
/// workload that runs it natively (used when it is the only script).
pub const BUILTINS: [(&str, &str, &str); 3] = [
    ("tpcb-like", "<builtin: TPC-B (sort of)>", "tpcb"),
    ("simple-update", "<builtin: simple update>", "simple-update"),
    ("select-only", "<builtin: select only>", "select-only"),
];

/// `NAME[@WEIGHT]` as pgbench splits it: at the last `@`, a whole number of at least 0.
pub fn weighted(text: &str) -> Result<(&str, i64), Refusal> {
    match text.rsplit_once('@') {
        None => Ok((text, 1)),
        Some((name, w)) => match w.parse::<i64>() {
            Ok(n) if (0..=i64::from(i32::MAX)).contains(&n) => Ok((name, n)),
            Ok(n) => Err(refuse(format!(
                "weight specification out of range (0 .. {}): {n}",
                i32::MAX
            ))),
            Err(_) => Err(refuse(format!("invalid weight specification: @{w}"))),
        },
    }
}

/// A built-in by its name or a prefix of exactly one, or pgbench's refusal with the list.
pub fn find_builtin(name: &str) -> Result<(&'static str, &'static str, &'static str), Refusal> {
    if let Some(b) = BUILTINS.iter().find(|b| b.0 == name) {
        return Ok(*b);
    }
    let found: Vec<_> = BUILTINS.iter().filter(|b| b.0.starts_with(name)).collect();
    match found.as_slice() {
        [one] => Ok(**one),
        [] => Err(refuse(format!(
            "no builtin script found for name \"{name}\"\n{}",
            builtin_list()
        ))),
        many => Err(refuse(format!(
            "ambiguous builtin name: {} builtin scripts found for prefix \"{name}\"\n{}",
            many.len(),
            builtin_list()
        ))),
    }
}

/// pgbench's `-b list`.
pub fn builtin_list() -> String {
    let mut out = String::from("Available builtin scripts:\n");
    for (name, desc, _) in BUILTINS {
        out.push_str(&format!("{name:>15}: {desc}\n"));
    }
    out
}

/// pgbench's `atof`: the number at the start of the text, 0 when there is none.
pub fn leading_float(text: &str) -> f64 {
    let t = text.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&n| t.is_char_boundary(n))
        .find_map(|n| t[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// The connection string for pgbench's -h, -p, -U and database name. A name that is itself
/// a connection string (`host=... dbname=...`, `postgresql://...`) is used as libpq expands
/// it, its own keywords winning over -h/-p/-U; what is not given stays to the PG* variables,
/// as libpq leaves it.
pub fn target(host: Option<&str>, port: Option<&str>, user: Option<&str>, dbname: &str) -> String {
    if dbname.starts_with("postgresql://") || dbname.starts_with("postgres://") {
        return dbname.to_string();
    }
    let conninfo = dbname.contains('=');
    let sets = |key: &str| {
        conninfo
            && dbname
                .split_whitespace()
                .any(|w| w.trim_start().starts_with(&format!("{key}=")))
    };
    let mut parts: Vec<String> = Vec::new();
    for (key, value) in [("host", host), ("port", port), ("user", user)] {
        if let Some(v) = value.filter(|_| !sets(key)) {
            parts.push(format!("{key}={}", quote(v)));
        }
    }
    if conninfo {
        parts.push(dbname.to_string());
    } else {
        parts.push(format!("dbname={}", quote(dbname)));
    }
    parts.join(" ")
}

/// A libpq keyword value: bare when it can be, else single-quoted with `\` escapes.
fn quote(v: &str) -> String {
    if !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// pgbench's limit on the scripts of one run (its MAX_SCRIPTS).
pub const MAX_SCRIPTS: usize = 128;

/// `-I`, checked when pgbench reads it: its error, then the letters it takes as a detail.
pub fn init_steps(value: &str) -> Result<(), Refusal> {
    const STEPS: &str = "dtgGvpf";
    if value.is_empty() {
        return Err(refuse("no initialization steps specified"));
    }
    match value.chars().find(|c| *c != ' ' && !STEPS.contains(*c)) {
        Some(c) => Err(refuse(format!(
            "unrecognized initialization step \"{c}\"\n\
             detail: Allowed step characters are: \"{STEPS}\"."
        ))),
        None => Ok(()),
    }
}

/// pgbench's refusal of a script file it cannot read, in its words (the system's message
/// without Rust's `(os error N)`).
pub fn unreadable(path: &str, e: &std::io::Error) -> Refusal {
    let said = e.to_string();
    let said = said.split(" (os error").next().unwrap_or(&said);
    refuse(format!("could not open file \"{path}\": {said}"))
}
