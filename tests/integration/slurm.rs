//! The Slurm launcher end to end (issue 26): `tidebench slurm --submit --wait` on the one-node
//! cluster `scripts/slurm-local.sh` brings up on localhost runs a 2-group, 2-phase shared-mode
//! run as 3 shards (srun tasks, one start instant) and merges them as its last step; the
//! merged result is checked as the plain-host shards' is.

use std::path::Path;

use crate::support::{self, output_text as text};

/// Brings the local cluster up (idempotent; installs Slurm when missing), or says why not and
/// returns false: it needs root, as the cgroup tests do.
fn slurm_up() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        support::skip(
            "the Slurm launcher's test",
            "root",
            "the local Slurm cluster needs it (scripts/slurm-local.sh up)",
        );
        return false;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh");
    let o = std::process::Command::new(script)
        .arg("up")
        .output()
        .expect("run scripts/slurm-local.sh");
    assert!(o.status.success(), "slurm-local.sh up: {}", text(&o));
    true
}

#[test]
fn a_slurm_job_runs_three_shards_and_merges_them() {
    if !slurm_up() {
        return;
    }
    let home = support::temp_home();
    let _a = support::start_instance(&home, "sa");
    let _b = support::start_instance(&home, "sb");
    let cfg = home.path().join("slurm.toml");
    std::fs::write(
        &cfg,
        "clients = 6\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\nsample = \"0\"\n\
         [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"sa\"\n\
         [[group]]\nname = \"B\"\nworkload = \"tpcb\"\nscale = 1\ninstance = \"sb\"\n\
         [[phase]]\nduration = \"2s\"\nshares = { A = 30, B = 70 }\n\
         [[phase]]\nduration = \"2s\"\nshares = { A = 70, B = 30 }\n",
    )
    .unwrap();
    support::ok(support::run_tidebench(
        &home,
        &["prepare", cfg.to_str().unwrap()],
    ));
    let results = home.path().join("job");
    let bin = env!("CARGO_BIN_EXE_tidebench");
    // Three tasks on a 2-core node: the job overcommits its CPUs.
    let o = support::tidebench(&home)
        .current_dir(home.path())
        .env("SBATCH_OVERCOMMIT", "1")
        .env("SLURM_OVERCOMMIT", "1")
        .args([
            "slurm",
            cfg.to_str().unwrap(),
            "--drivers",
            "3",
            "--results-dir",
            results.to_str().unwrap(),
            "--start-lead",
            "8s",
            "--tidebench",
            bin,
            "--submit",
            "--wait",
        ])
        .output()
        .unwrap();
    let job_out: String = std::fs::read_dir(home.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".out"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(o.status.success(), "{}\njob output:\n{job_out}", text(&o));
    let merged = support::summary(&results.join("merged"));
    let shards: Vec<serde_json::Value> = (0..3)
        .map(|i| support::summary(&results.join(format!("shard-{i}"))))
        .collect();
    assert_eq!(merged["complete"], true, "{job_out}");
    let sum: u64 = shards
        .iter()
        .map(|s| s["totals"]["committed"].as_u64().unwrap())
        .sum();
    assert_eq!(merged["totals"]["committed"].as_u64(), Some(sum));
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["shard"]["index"].as_u64(), Some(i as u64));
        assert_eq!(s["shard"]["count"], 3);
        assert!(
            s["totals"]["committed"].as_u64().unwrap() > 50,
            "{}",
            s["totals"]
        );
    }
    for d in merged["server"].as_array().unwrap() {
        support::assert_server_agrees(d, 0);
    }
    for phase in merged["phases"].as_array().unwrap() {
        for g in phase["groups"].as_array().unwrap() {
            let want = g["configured_share"].as_f64().unwrap();
            let got = g["achieved_share"].as_f64().unwrap();
            assert!((want - got).abs() <= 1.0, "{phase}");
        }
    }
}
