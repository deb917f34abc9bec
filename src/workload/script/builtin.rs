//! pgbench's built-in scripts (`-b NAME`) as script text, as `pgbench --show-script NAME`
//! prints them in PostgreSQL 15, so `-b` runs through the same interpreter as `-f`.

/// The built-ins by name, in pgbench's order.
pub const BUILTINS: [(&str, &str); 3] = [
    ("tpcb-like", TPCB_LIKE),
    ("simple-update", SIMPLE_UPDATE),
    ("select-only", SELECT_ONLY),
];

/// How pgbench 15 names a built-in in its output (`<builtin: select only>`).
pub fn shown(name: &str) -> String {
    let what = match name {
        "tpcb-like" => "TPC-B (sort of)",
        "simple-update" => "simple update",
        "select-only" => "select only",
        other => other,
    };
    format!("<builtin: {what}>")
}

const TPCB_LIKE: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SIMPLE_UPDATE: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

const SELECT_ONLY: &str = "\
\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

/// The text of built-in `name`; pgbench also takes a unique prefix (`-b select`).
pub fn find(name: &str) -> Result<(&'static str, &'static str), String> {
    if let Some(&found) = BUILTINS.iter().find(|(n, _)| *n == name) {
        return Ok(found);
    }
    let matching: Vec<&(&str, &str)> = BUILTINS
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .collect();
    match matching.as_slice() {
        [one] if !name.is_empty() => Ok(**one),
        _ => Err(format!(
            "no built-in script \"{name}\"; choose from {}",
            BUILTINS.map(|(n, _)| n).join(", ")
        )),
    }
}
