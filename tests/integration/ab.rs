//! `tidebench ab` (issue 55): two PostgreSQL builds swept A B B A on the same workload, ending
//! with the verdict. The builds are the newest of `scripts/pg-versions.sh`'s and the one
//! tidebench finds by default (Debian's 15); without the former, both sides run Debian's 15
//! and the verdict must be *within noise*. The runs are short select-only runs at a fixed rate
//! far below what the server can do, so the achieved rates follow the schedule. The verdict
//! (standard output) names each side's server version.

use std::path::{Path, PathBuf};

use crate::support::{self, output_text as text, run_tidebench as tb};

/// The newest server build `scripts/pg-versions.sh` unpacked, if any.
fn newest_build() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/pg");
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let path = e.ok()?.path();
            let major = path.file_name()?.to_str()?.parse().ok()?;
            let bin = path.join("bin");
            bin.join("postgres").is_file().then_some((major, bin))
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, bin)| bin)
}

/// The server version a results dir's run measured.
fn server_version(run: &Path) -> String {
    let text = std::fs::read_to_string(run.join("runtime.toml")).expect("runtime.toml");
    let v: toml::Value = toml::from_str(&text).expect("runtime.toml parses");
    v["servers"][0]["server_version"]
        .as_str()
        .expect("a server version")
        .to_string()
}

#[test]
fn ab_sweeps_two_builds_a_b_b_a_and_ends_with_the_verdict() {
    let home = support::temp_home();
    let out = home.path().join("ab");
    let b_build = newest_build();
    let mut args: Vec<String> = ["ab", "-s", "1", "--rounds", "2"]
        .map(String::from)
        .to_vec();
    for (k, v) in support::test_settings() {
        args.extend(["--set".into(), format!("{k}={v}")]);
    }
    if let Some(bin) = &b_build {
        args.extend(["--b-pg-bin".into(), bin.display().to_string()]);
    }
    args.extend(
        [
            "--fail-on",
            "tps:-20%",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
            "--",
            "-S",
            "-c",
            "2",
            "-T",
            "1s",
            "-R",
            "300",
            "-P",
            "0",
            "--sample",
            "200ms",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tb(&home, &args);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", text(&o));
    // Standard output is the verdict alone: the runs' output went to stderr.
    let json: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let metric = |name: &str| {
        json["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {json}"))
    };
    let tps = metric("tps");
    assert_eq!(
        (tps["baseline_runs"].as_u64(), tps["runs"].as_u64()),
        (Some(4), Some(4))
    );
    // The client's CPU is a figure of real runs too, described when no --fail-on names it.
    assert_eq!(metric("client_cpu")["verdict"], "not judged", "{json}");

    // A B B A: runs 1, 4, 5, 8 on A; each side's runs measured its own build.
    let runs = |side: &str| {
        let mut names: Vec<String> = std::fs::read_dir(out.join(side))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(runs("a"), ["01", "04", "05", "08"]);
    assert_eq!(runs("b"), ["02", "03", "06", "07"]);
    let (va, vb) = (
        server_version(&out.join("a/01")),
        server_version(&out.join("b/02")),
    );
    // The verdict itself names the build each side measured.
    assert_eq!(
        (
            &json["sides"][0]["servers"][0],
            &json["sides"][1]["servers"][0]
        ),
        (&serde_json::json!(va), &serde_json::json!(vb)),
        "{json}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("side A: PostgreSQL {va}"))
            && stderr.contains(&format!("side B: PostgreSQL {vb}")),
        "{stderr}"
    );
    match &b_build {
        Some(bin) => {
            let major = bin.parent().and_then(|p| p.file_name()).unwrap();
            assert!(
                vb.starts_with(&*major.to_string_lossy()),
                "{vb} from {bin:?}"
            );
            assert_ne!(va, vb);
        }
        None => {
            assert_eq!(va, vb);
            assert_eq!(tps["verdict"], "within noise", "{tps}");
            assert_eq!(code, Some(0), "{}", text(&o));
        }
    }
    // The instances are stopped at the end.
    let status = tb(&home, &["instance", "status"]);
    let stopped = text(&status)
        .lines()
        .filter(|l| l.starts_with("ab-") && l.contains(" stopped "))
        .count();
    assert_eq!(stopped, 2, "{}", text(&status));
}
