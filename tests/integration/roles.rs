//! Roles on sets, through a workload the core has never heard of: `probe` (its own folder and
//! one registry line) runs one type on a set's `oltp` database and one on its `dss` database.
//! Each type must reach only its role's database, and the server's commit count of both
//! databases must equal the client's.

use crate::support::{self, ok, run_tidebench as tb, summary};

#[test]
fn each_type_runs_on_its_roles_database_and_both_databases_agree() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "ro");
    let cfg = home.path().join("roles.toml");
    std::fs::write(
        &cfg,
        "clients = 2\nseed = 5\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
         [[group]]\nname = \"P\"\nworkload = \"probe\"\n\
         [[group.set]]\noltp = \"instance:ro/p_oltp\"\ndss = \"instance:ro/p_dss\"\n\
         [[group]]\nname = \"T\"\nworkload = \"tpcb\"\ninstance = \"ro\"\n\
         [[phase]]\nduration = \"3s\"\nshares = { P = 50, T = 50 }\n",
    )
    .unwrap();
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let out = home.path().join("res");
    ok(tb(
        &home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    ));
    let s = summary(&out);

    // Every row of a probe type sits on its role's database.
    let rows = s["by_target_and_type"].as_array().unwrap();
    let on = |txn: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r["txn_type"] == txn)
            .map(|r| r["target"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(on("oltp_probe"), ["instance:ro/p_oltp"], "{rows:?}");
    assert_eq!(on("dss_probe"), ["instance:ro/p_dss"], "{rows:?}");
    for r in rows.iter().filter(|r| r["group"] == "P") {
        assert!(r["committed"].as_u64().unwrap() > 0, "{r}");
    }

    // Three databases (two roles of P's set, T's one), each agreeing with the client.
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), 3, "{server:?}");
    for d in server {
        support::assert_server_agrees(d, 0);
        assert!(d["client_committed"].as_i64().unwrap() > 0, "{d}");
    }
    // Per role: the dss role holds dss_probe's count alone; the rest ran on oltp.
    let by_role = s["by_role"].as_array().unwrap();
    let count = |role: &str| {
        by_role
            .iter()
            .find(|r| r["role"] == role)
            .map(|r| r["committed"].as_u64().unwrap())
            .unwrap_or(0)
    };
    let dss_rows: u64 = rows
        .iter()
        .filter(|r| r["txn_type"] == "dss_probe")
        .map(|r| r["committed"].as_u64().unwrap())
        .sum();
    assert!(dss_rows > 0 && count("dss") == dss_rows, "{by_role:?}");
    assert_eq!(
        count("oltp") + count("dss"),
        s["totals"]["committed"].as_u64().unwrap()
    );
    let by = ok(tb(
        &home,
        &["report", out.to_str().unwrap(), "--by", "role"],
    ));
    let table = String::from_utf8_lossy(&by.stdout);
    assert!(table.contains("dss") && table.contains("oltp"), "{table}");

    // The shares of the (group, set) deck hold with a set of two databases.
    for g in s["groups"].as_array().unwrap() {
        let got = g["achieved_share"].as_f64().unwrap();
        assert!((got - 50.0).abs() <= 1.0, "{g}");
    }
}
