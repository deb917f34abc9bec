//! `tidebench knee` on three real memory points: the managed instance is restarted in its
//! control group with each point's memory limit and the kept shared_buffers, the curve is
//! normalized to its best point, and the knee (or why there is none) is in experiment.json.

use tidebench::instance;

use crate::support::{self, ok, output_text, run_tidebench as tb};

const MIB: u64 = 1 << 20;

#[test]
fn knee_steps_the_vm_memory_with_shared_buffers_kept() {
    let Some(home) = support::home_with_cgroups("knee") else {
        return;
    };
    // Control groups are per host: a name of this test's own.
    let name = format!("knee-t{}", std::process::id());
    let inst = support::start_instance(&home, &name);
    let out = home.path().join("knee");
    let o = ok(tb(
        &home,
        &[
            "knee",
            "-S",
            "--scale",
            "1",
            "-c",
            "2",
            "--target",
            &format!("instance:{name}"),
            "--memory",
            "160MB,256MB,384MB",
            "--keep",
            "shared_buffers=64MB",
            "-T",
            "3s",
            "-P",
            "0",
            "--sample",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let said = output_text(&o);
    assert!(said.contains("analysis: "), "{said}");
    let e = support::experiment(&out);
    assert_eq!(e["kind"], "knee");
    assert_eq!(e["complete"], true);
    assert_eq!(e["varied"], serde_json::json!(["instance.memory"]));
    assert_eq!(e["request"]["knee"]["mode"], "keep-shared-buffers");
    assert_eq!(e["request"]["knee"]["kept"], "64MB");
    let points = e["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for (p, memory) in points.iter().zip(["160MB", "256MB", "384MB"]) {
        assert_eq!(p["values"]["instance.memory"], memory, "{p}");
        assert_eq!(p["values"]["instance.set.shared_buffers"], "64MB", "{p}");
        let runs = p["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0]["status"], "complete", "{p}");
        assert!(runs[0]["tps"].as_f64().unwrap() > 0.0, "{p}");
        let runtime = std::fs::read_to_string(
            out.join(runs[0]["dir"].as_str().unwrap())
                .join("runtime.toml"),
        )
        .unwrap();
        assert!(runtime.contains("shared_buffers = \"64MB\""), "{runtime}");
    }
    let knee = &e["analysis"]["knee"];
    assert_eq!(knee["x"], "instance.memory");
    assert_eq!(knee["metric"], "tps", "select-only has no headline");
    let curve = knee["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 3, "{knee}");
    let xs: Vec<f64> = curve.iter().map(|c| c["x_mib"].as_f64().unwrap()).collect();
    assert_eq!(xs, [160.0, 256.0, 384.0]);
    let top = curve
        .iter()
        .map(|c| c["normalized"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(top, 1.0, "{knee}");
    assert!(
        knee["knee_mib"].is_f64() || knee["no_knee"].is_string(),
        "a knee or why there is none: {knee}"
    );
    assert!(!knee["summary"].as_str().unwrap().is_empty());
    let page = std::fs::read_to_string(out.join("experiment.html")).unwrap();
    assert!(
        page.contains("Working set") && page.contains("<svg"),
        "{page}"
    );

    // The instance holds the last point's limit and setting afterwards.
    let after = instance::find(&home.home, &name).unwrap();
    assert_eq!(after.limits().1, Some(384 * MIB));
    let cg = after.cgroup_paths().expect("a memory limit makes a cgroup");
    let limit = cg
        .dirs()
        .iter()
        .find_map(|d| {
            ["memory.limit_in_bytes", "memory.max"]
                .iter()
                .find_map(|f| std::fs::read_to_string(d.join(f)).ok())
        })
        .expect("a memory limit file");
    assert_eq!(limit.trim(), (384 * MIB).to_string());
    assert_eq!(
        support::psql(&inst, "postgres", "SHOW shared_buffers"),
        "64MB"
    );
    // The test settings the instance was made with stay.
    assert_eq!(support::psql(&inst, "postgres", "SHOW fsync"), "off");

    // Two knee dirs compare point by point.
    let o = ok(tb(
        &home,
        &["compare", out.to_str().unwrap(), out.to_str().unwrap()],
    ));
    assert!(output_text(&o).contains("1.00x"), "{}", output_text(&o));
}
