//! One run on several driver processes (issue 26): shards started with `--shard I/N` on one
//! start instant, then `tidebench merge`. The merged totals are the shards' sums, the server
//! check holds over all of them, shares hold per phase, the merged percentiles are one pass
//! over every shard's histograms; bad shards, starts and merges are refused with exit 2.

use std::path::{Path, PathBuf};
use std::process::Child;

use crate::support::{self, output_text as text};

/// A shared-mode run file of 2 groups over two instances and 2 phases with shifting shares.
fn two_groups(home: &support::TempHome, clients: u32) -> PathBuf {
    let cfg = format!(
        "clients = {clients}\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\nsample = \"0\"\n\
         [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"sa\"\n\
         [[group]]\nname = \"B\"\nworkload = \"tpcb\"\nscale = 1\ninstance = \"sb\"\n\
         [[phase]]\nduration = \"2s\"\nshares = {{ A = 30, B = 70 }}\n\
         [[phase]]\nduration = \"2s\"\nshares = {{ A = 70, B = 30 }}\n"
    );
    let path = home.path().join("shards.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// Starts shard `i` of `n`; every shard reads the start instant from one file.
fn shard(home: &support::TempHome, cfg: &Path, i: u32, n: u32, extra: &[&str]) -> Child {
    // Room for three drivers to connect and read their baselines on a loaded 2-core host
    // (6 s was 4.5 s short beside two test suites and a guest): a late shard refuses to run.
    let start = format!("+15s@{}", home.path().join("start").display());
    let out = home.path().join("r").join("shard-{shard}");
    let mut args = vec![
        "run".to_string(),
        cfg.display().to_string(),
        "--shard".into(),
        format!("{i}/{n}"),
        "--start-at".into(),
        start,
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    support::spawn_tidebench(home, &args)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn shard_dir(home: &support::TempHome, i: u32) -> PathBuf {
    home.path().join("r").join(format!("shard-{i}"))
}

#[test]
fn three_shards_merge_into_one_exact_run() {
    let home = support::temp_home();
    let _a = support::start_instance(&home, "sa");
    let _b = support::start_instance(&home, "sb");
    let cfg = two_groups(&home, 6);
    // Both targets load at once.
    let o = support::ok(support::run_tidebench(
        &home,
        &["prepare", cfg.to_str().unwrap(), "--parallel-targets", "2"],
    ));
    assert!(
        text(&o).contains("2 targets, 2 at a time") && text(&o).contains("loaded in"),
        "{}",
        text(&o)
    );
    let children: Vec<Child> = (0..3).map(|i| shard(&home, &cfg, i, 3, &[])).collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", text(&o));
        assert!(
            text(&o).contains("the server check runs over every shard"),
            "{}",
            text(&o)
        );
    }
    let merged = home.path().join("r").join("merged");
    let dirs: Vec<PathBuf> = (0..3).map(|i| shard_dir(&home, i)).collect();
    let mut args = vec!["merge".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--out".to_string(), merged.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = support::ok(support::run_tidebench(&home, &args));
    let m = support::summary(&merged);
    let shards: Vec<serde_json::Value> = dirs.iter().map(|d| support::summary(d)).collect();

    // Totals are the shards' sums; each shard ran its own clients.
    for field in ["committed", "failed", "total"] {
        let sum: u64 = shards
            .iter()
            .map(|s| s["totals"][field].as_u64().unwrap())
            .sum();
        assert_eq!(m["totals"][field].as_u64(), Some(sum), "{field}");
    }
    assert!(shards
        .iter()
        .all(|s| s["totals"]["committed"].as_u64().unwrap() > 100));
    assert_eq!(m["complete"], true);
    assert_eq!(m["shard"]["merged"].as_array().unwrap().len(), 3);
    let html = std::fs::read_to_string(merged.join("report.html")).unwrap();
    assert!(
        html.contains("Driver hosts"),
        "report.html has no driver hosts table"
    );

    // The server agrees over all shards on both databases.
    let server = m["server"].as_array().unwrap();
    assert_eq!(server.len(), 2, "{m}");
    for d in server {
        support::assert_server_agrees(d, 0);
    }
    assert!(text(&o).contains("agrees"), "{}", text(&o));

    // Shared-mode shares hold per phase over the merged run.
    for phase in m["phases"].as_array().unwrap() {
        for g in phase["groups"].as_array().unwrap() {
            let want = g["configured_share"].as_f64().unwrap();
            let got = g["achieved_share"].as_f64().unwrap();
            assert!((want - got).abs() <= 1.0, "{phase}");
        }
    }

    // Percentiles: one pass over every shard's raw histograms of the measured window.
    let mut all = None;
    for d in &dirs {
        for row in tidebench::results::read::IntervalRows::open(d).unwrap() {
            let row = row.unwrap();
            if !row.measured || row.latency.is_empty() {
                continue;
            }
            match &mut all {
                None => all = Some(row.latency.clone()),
                Some(h) => h.add(&row.latency).unwrap(),
            }
        }
    }
    let all = all.unwrap();
    for (q, key) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")] {
        let want = (all.value_at_quantile(q) as f64 / 1000.0 * 1e3).round() / 1e3;
        assert_eq!(
            m["totals"]["latency_ms"][key].as_f64(),
            Some(want),
            "{key}: {}",
            m["totals"]["latency_ms"]
        );
    }

    // report --by shard reads the merged rows.
    let o = support::ok(support::run_tidebench(
        &home,
        &["report", merged.to_str().unwrap(), "--by", "shard"],
    ));
    let table = text(&o);
    for i in 0..3 {
        assert!(
            table
                .lines()
                .any(|l| l.trim_start().starts_with(&i.to_string())),
            "{table}"
        );
    }

    // Merge refuses a missing shard, a shard twice and a dir of another run.
    let bad = |args: &[&str], says: &str| {
        let o = support::run_tidebench(&home, args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    };
    let d0 = dirs[0].to_str().unwrap();
    let d1 = dirs[1].to_str().unwrap();
    let out2 = home.path().join("m2");
    let out2 = out2.to_str().unwrap();
    bad(&["merge", d0, d1, "--out", out2], "missing shard(s) 2/3");
    bad(
        &["merge", d0, d0, d1, "--out", out2],
        "give each shard once",
    );
    bad(
        &["merge", d0, merged.to_str().unwrap(), "--out", out2],
        "already a merged dir",
    );
    // A dir of another run: the same shard with another run id.
    let other = home.path().join("other-run");
    copy_dir(&dirs[2], &other);
    let mut s2 = support::summary(&other);
    s2["shard"]["run_id"] = "someone-else".into();
    std::fs::write(other.join("summary.json"), s2.to_string()).unwrap();
    bad(
        &["merge", d0, d1, other.to_str().unwrap(), "--out", out2],
        "of run someone-else",
    );
    assert!(!Path::new(out2).exists());
    // compare reads the merged dir beside a shard's.
    support::ok(support::run_tidebench(
        &home,
        &["compare", d0, merged.to_str().unwrap()],
    ));
    // --allow-missing merges what is there, marked incomplete.
    let o = support::ok(support::run_tidebench(
        &home,
        &["merge", d0, d1, "--out", out2, "--allow-missing"],
    ));
    let partial = support::summary(Path::new(out2));
    assert_eq!(partial["complete"], false, "{}", text(&o));
    let two: u64 = shards[..2]
        .iter()
        .map(|s| s["totals"]["committed"].as_u64().unwrap())
        .sum();
    assert_eq!(partial["totals"]["committed"].as_u64(), Some(two));
}

#[test]
fn bad_shards_and_starts_are_refused_with_the_fix() {
    let home = support::temp_home();
    let _a = support::start_instance(&home, "sa");
    let _b = support::start_instance(&home, "sb");
    let cfg = two_groups(&home, 2);
    let cfg_s = cfg.to_str().unwrap();
    let refused = |args: &[&str], env: Option<(&str, &str)>, says: &str| {
        let mut cmd = support::tidebench(&home);
        cmd.args(args);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    };
    refused(
        &["run", cfg_s, "--shard", "3/2", "--start-at", "+5s"],
        None,
        "0 to 1",
    );
    refused(
        &["run", cfg_s, "--shard", "0/0", "--start-at", "+5s"],
        None,
        "at least one",
    );
    refused(&["run", cfg_s, "--shard", "0/2"], None, "needs --start-at");
    refused(
        &[
            "run",
            cfg_s,
            "--shard",
            "0/2",
            "--start-at",
            "2020-01-01T00:00:00Z",
        ],
        None,
        "in the past",
    );
    // prepare --shard loads its share of the targets: here the second of two.
    let o = support::ok(support::run_tidebench(
        &home,
        &["prepare", cfg_s, "--shard", "1/2"],
    ));
    assert!(
        text(&o).contains("instance:sb") && !text(&o).contains("instance:sa"),
        "{}",
        text(&o)
    );
    support::ok(support::run_tidebench(
        &home,
        &["prepare", cfg_s, "--shard", "0/2"],
    ));
    let out = home.path().join("refused");
    let out_s = out.to_str().unwrap();
    // Two clients dealt over three shards leave the third without one.
    refused(
        &[
            "run",
            cfg_s,
            "--shard",
            "2/3",
            "--start-at",
            "+5s",
            "-o",
            out_s,
        ],
        None,
        "has none",
    );
    // A shard that reaches the instant late: connecting takes longer than 1 ms.
    refused(
        &[
            "run",
            cfg_s,
            "--shard",
            "0/2",
            "--start-at",
            "+1ms",
            "-o",
            out_s,
        ],
        None,
        "late",
    );
    // A host whose clock is 200 ms off the servers'.
    refused(
        &[
            "run",
            cfg_s,
            "--shard",
            "1/2",
            "--start-at",
            "+10s",
            "-o",
            out_s,
        ],
        Some(("TIDEBENCH_CLOCK_SKEW", "200ms")),
        "--max-clock-offset",
    );
    // Nothing was left looking like a result.
    assert!(!out.exists() && !support::partial(&out).exists());
}

/// How many of `txn` a summary's measured window completed.
fn completed(s: &serde_json::Value, txn: &str) -> u64 {
    s["mix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["txn_type"] == txn)
        .map_or(0, |t| t["completed"].as_u64().unwrap())
}

#[test]
fn tpce_shards_run_the_once_per_database_work_once_and_merge_tps_e() {
    let home = support::temp_home();
    let _i = support::start_instance(&home, "ts");
    crate::tpce::prepare_tpce(&home, "instance:ts", 1_000, 1, 2);
    let start = format!("+15s@{}", home.path().join("start").display());
    let children: Vec<Child> = (0..2)
        .map(|i| {
            let out = shard_dir(&home, i);
            support::spawn_tidebench(
                &home,
                &[
                    "run",
                    "-w",
                    "tpce",
                    "--target",
                    "instance:ts",
                    "-c",
                    "4",
                    "-T",
                    "4s",
                    "-P",
                    "0",
                    "--sample",
                    "0",
                    "--shard",
                    &format!("{i}/2"),
                    "--start-at",
                    &start,
                    "--out",
                    out.to_str().unwrap(),
                ],
            )
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", text(&o));
    }
    let s0 = support::summary(&shard_dir(&home, 0));
    let s1 = support::summary(&shard_dir(&home, 1));
    // Trade-Cleanup runs once for the database, on the first shard; both trade.
    assert_eq!(completed(&s0, "trade_cleanup"), 1, "{}", s0["mix"]);
    assert_eq!(completed(&s1, "trade_cleanup"), 0, "{}", s1["mix"]);
    assert!(completed(&s1, "trade_order") > 0, "{}", s1["mix"]);
    let merged = home.path().join("r").join("merged");
    support::ok(support::run_tidebench(
        &home,
        &[
            "merge",
            shard_dir(&home, 0).to_str().unwrap(),
            shard_dir(&home, 1).to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    ));
    let m = support::summary(&merged);
    assert_eq!(completed(&m, "trade_cleanup"), 1);
    let results = completed(&s0, "trade_result") + completed(&s1, "trade_result");
    assert_eq!(completed(&m, "trade_result"), results);
    // tpsE over the merged window: every shard's Trade-Results.
    let tps_e = m["headline"]["per_second"].as_f64().unwrap();
    let duration = m["duration_s"].as_f64().unwrap();
    assert!(
        (tps_e - results as f64 / duration).abs() < 0.01,
        "{} vs {results} / {duration}",
        m["headline"]
    );
    for d in m["server"].as_array().unwrap() {
        support::assert_server_agrees(d, 0);
    }
}
