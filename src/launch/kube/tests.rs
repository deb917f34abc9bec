//! The manifests read back as a cluster would read them.

use serde_yaml::Value;

use super::*;
use crate::launch::slurm::{sbatch_script, SlurmOptions};
use crate::launch::tests::spec;
use crate::launch::{merge_command, shard_command, shell_line};

fn opts() -> KubeOptions {
    KubeOptions {
        namespace: Some("bench".into()),
        env_secret: Some("pg-bench".into()),
        merge_timeout: Duration::from_secs(3600),
        run_file_text: Some("workload = \"tpcb\"\nclients = 8\n".into()),
    }
}

fn docs(spec: &LaunchSpec, opts: &KubeOptions) -> Vec<Value> {
    let text = manifests(spec, "reg.example/tidebench:1", "tb-results", opts).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    let seq = v
        .as_sequence()
        .unwrap_or_else(|| panic!("not a list: {v:?}"));
    seq.iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn name_ok(v: &Value) -> bool {
    let name = v["metadata"]["name"].as_str().unwrap();
    name.len() <= 63 && dns_label(name, 63) == name
}

#[test]
fn the_shard_job_is_an_indexed_job_whose_pods_run_the_slurm_tasks_command() {
    let s = spec(4);
    let d = docs(&s, &opts());
    assert_eq!(d.len(), 3);
    let (cm, job) = (&d[0], &d[1]);
    assert_eq!(
        (cm["kind"].as_str(), cm["data"]["run.toml"].as_str()),
        (Some("ConfigMap"), opts().run_file_text.as_deref())
    );
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["kind"].as_str(), Some("Job"));
    assert!(name_ok(job));
    assert_eq!(job["metadata"]["namespace"].as_str(), Some("bench"));
    assert_eq!(
        job["metadata"]["labels"]["tidebench/run-id"].as_str(),
        Some("run-1")
    );
    let spec_ = &job["spec"];
    assert_eq!(spec_["completionMode"].as_str(), Some("Indexed"));
    assert_eq!(spec_["completions"].as_u64(), Some(4));
    assert_eq!(spec_["parallelism"].as_u64(), Some(4));
    assert_eq!(spec_["backoffLimitPerIndex"].as_u64(), Some(0));
    let pod = &spec_["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let c = &pod["containers"][0];
    assert_eq!(
        (c["name"].as_str(), c["image"].as_str()),
        (Some("tidebench"), Some("reg.example/tidebench:1"))
    );
    let command = shard_command(&s, "auto/4", "+30s@/results/run-1/start-at");
    assert_eq!(strings(&c["command"]), command);
    // The very words the Slurm script's srun runs.
    let script = sbatch_script(&s, &SlurmOptions::default()).unwrap();
    assert!(script.contains(&format!(
        "srun --kill-on-bad-exit=0 {} ||",
        shell_line(&command)
    )));
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(),
        Some("tb-results")
    );
    assert_eq!(
        c["volumeMounts"][0]["mountPath"].as_str(),
        Some(RESULTS_MOUNT)
    );
    assert_eq!(
        c["volumeMounts"][1]["mountPath"].as_str(),
        Some("/work/bench/run.toml")
    );
    assert_eq!(
        pod["volumes"][1]["configMap"]["name"].as_str(),
        cm["metadata"]["name"].as_str()
    );
    assert_eq!(
        c["envFrom"][0]["secretRef"]["name"].as_str(),
        Some("pg-bench")
    );
    assert_eq!(
        strings(&pod["initContainers"][0]["command"]),
        ["mkdir", "-p", "/results/run-1"]
    );
}

#[test]
fn the_merge_job_waits_for_every_shard_then_runs_merge() {
    let s = spec(3);
    let d = docs(&s, &opts());
    let merge = &d[2];
    assert_eq!(merge["kind"].as_str(), Some("Job"));
    assert!(name_ok(merge));
    assert!(merge["metadata"]["name"]
        .as_str()
        .unwrap()
        .ends_with("-merge"));
    let pod = &merge["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as_str(),
        Some("tb-results")
    );
    let command = strings(&pod["containers"][0]["command"]);
    assert_eq!(command[..2], ["sh", "-c"]);
    let script = &command[2];
    let merge_line = shell_line(&merge_command(&s));
    assert!(
        script.trim_end().ends_with(&format!("exec {merge_line}")),
        "{script}"
    );
    let finished = crate::launch::shell::merge_finished(&s, "tidebench", "    ");
    assert!(
        script.contains(&format!("\n{finished}\n    exit 1\n")),
        "{script}"
    );
    for i in 0..3 {
        assert!(script.contains(&s.shard_dir(i)), "{script}");
    }
    assert!(script.contains("-ge 3600 ]"));
    let out = std::process::Command::new("sh")
        .args(["-n", "-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_merge_pod_merges_once_every_shard_has_its_summary() {
    let s = spec(2);
    let d = docs(&s, &opts());
    let script = strings(&d[2]["spec"]["template"]["spec"]["containers"][0]["command"])[2].clone();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_string_lossy().into_owned();
    for i in 0..2 {
        let dir = tmp.path().join(format!("shard-{i}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(crate::launch::SUMMARY_FILE), "{}").unwrap();
    }
    let fake = tmp.path().join("tidebench");
    std::fs::write(&fake, "#!/bin/sh\necho \"$*\"\n").unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&fake, mode).unwrap();
    let path = format!("{root}:{}", std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("sh")
        .args(["-c", &script.replace("/results/run-1", &root)])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = merge_command(&s)[1..]
        .join(" ")
        .replace("/results/run-1", &root);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), merged);
}

#[test]
fn a_run_file_on_the_claim_is_not_shipped() {
    let mut s = spec(2);
    s.run_file = "/results/bench/run.toml".into();
    assert!(!ships_run_file(&s));
    let d = docs(
        &s,
        &KubeOptions {
            run_file_text: None,
            namespace: None,
            env_secret: None,
            ..opts()
        },
    );
    assert_eq!(d.len(), 2);
    let c = &d[0]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["volumeMounts"].as_sequence().unwrap().len(), 1);
    assert!(c.get("envFrom").is_none());
    assert!(d[0]["metadata"].get("namespace").is_none());
}

#[test]
fn names_and_labels_are_what_kubernetes_accepts() {
    let long = format!("My Run_{}", "x".repeat(80));
    let name = job_name(&long);
    assert!(
        name.len() <= MAX_JOB_NAME && name.starts_with("tidebench-my-run-xxx"),
        "{name}"
    );
    assert_ne!(job_name(&format!("{long}1")), job_name(&format!("{long}2")));
    assert_eq!(
        job_name("TPCC--20261125T210000Z."),
        "tidebench-tpcc-20261125t210000z"
    );
    assert_eq!(label_value("-a b/c_d.e-"), "a-b-c_d.e");
    let value = label_value(&long);
    assert!(
        value.len() == 63 && value.starts_with("My-Run_x"),
        "{value}"
    );
    let mut s = spec(2);
    s.run_id = long;
    let d = docs(&s, &opts());
    assert!(d.iter().all(name_ok));
}

#[test]
fn what_a_cluster_would_refuse_is_refused_here() {
    let s = spec(2);
    let refuse = |s: &LaunchSpec, image: &str, claim: &str, o: &KubeOptions| {
        manifests(s, image, claim, o).unwrap_err().to_string()
    };
    assert!(refuse(&s, "", "c", &opts()).contains("--image"));
    assert!(refuse(&s, "i", "Bad_Claim", &opts()).contains("--results-claim"));
    let mut elsewhere = s.clone();
    elsewhere.results_dir = "results/run-1".into();
    assert!(refuse(&elsewhere, "i", "c", &opts()).contains("/results/NAME"));
    elsewhere.results_dir = "/results/../etc".into();
    assert!(refuse(&elsewhere, "i", "c", &opts()).contains("/results/NAME"));
    let unread = KubeOptions {
        run_file_text: None,
        ..opts()
    };
    assert!(refuse(&s, "i", "c", &unread).contains("ConfigMap"));
    let mut up = s.clone();
    up.run_file = "../run.toml".into();
    assert!(refuse(&up, "i", "c", &opts()).contains("'..'"));
    assert!(refuse(
        &s,
        "i",
        "c",
        &KubeOptions {
            merge_timeout: Duration::ZERO,
            ..opts()
        }
    )
    .contains("--merge-timeout"));
    assert_eq!(
        manifests(&LaunchSpec { drivers: 0, ..s }, "i", "c", &opts()),
        Err(LaunchError::NoDrivers)
    );
}
