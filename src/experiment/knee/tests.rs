//! The knee's memory series, what it keeps, its refusals, and the runs it plans.

use super::*;

const M: u64 = MIB;

#[test]
fn a_range_is_evenly_spaced_in_whole_mib() {
    assert_eq!(
        memory_sizes("512MB..8GB", None).unwrap(),
        [512, 2048, 3584, 5120, 6656, 8192].map(|m| m * M)
    );
    assert_eq!(
        memory_sizes("160MB..384MB", Some(4)).unwrap(),
        [160, 235, 309, 384].map(|m| m * M)
    );
    assert_eq!(
        memory_sizes("2GB, 512MB,1GB", None).unwrap(),
        [512, 1024, 2048].map(|m| m * M)
    );
}

#[test]
fn bad_memory_series_are_refused_with_the_fix() {
    let e = memory_sizes("1GB..4GB", Some(2)).unwrap_err();
    assert!(e.contains("--steps 2: give 3 to 100"), "{e}");
    assert!(memory_sizes("4GB..1GB", None)
        .unwrap_err()
        .contains("must grow"));
    assert!(memory_sizes("1GB,2GB", None)
        .unwrap_err()
        .contains("at least 3"));
    assert!(memory_sizes("1GB,2GB,3GB", Some(3))
        .unwrap_err()
        .contains("--steps applies"));
    assert!(memory_sizes("1GB,1024MB,2GB", None)
        .unwrap_err()
        .contains("twice"));
    assert!(memory_sizes("1GB..lots", None)
        .unwrap_err()
        .contains("not a size"));
}

#[test]
fn keep_is_one_of_two() {
    assert_eq!(
        Keep::parse(Some("shared_buffers=1GB"), None),
        Ok(Keep::SharedBuffers(1 << 30))
    );
    assert_eq!(
        Keep::parse(None, Some("352MB")),
        Ok(Keep::Difference(352 * M))
    );
    assert!(Keep::parse(Some("shared_buffers=1GB"), Some("1GB"))
        .unwrap_err()
        .contains("not both"));
    assert!(Keep::parse(None, None)
        .unwrap_err()
        .contains("--keep shared_buffers=1GB"));
    assert!(Keep::parse(Some("work_mem=1GB"), None)
        .unwrap_err()
        .contains("shared_buffers=SIZE"));
    assert!(Keep::parse(None, Some("0")).unwrap_err().contains("OOM"));
    assert_eq!(
        Keep::SharedBuffers(1 << 30).request(),
        KneeRequest {
            mode: KneeMode::KeepSharedBuffers,
            kept: "1GB".into()
        }
    );
}

#[test]
fn points_tie_shared_buffers_to_memory_and_refuse_what_cannot_run() {
    let mem = [160 * M, 256 * M, 384 * M];
    assert_eq!(
        points(&mem, Keep::SharedBuffers(64 * M)).unwrap(),
        [(160 * M, 64 * M), (256 * M, 64 * M), (384 * M, 64 * M)]
    );
    assert_eq!(
        points(&mem, Keep::Difference(96 * M)).unwrap(),
        [(160 * M, 64 * M), (256 * M, 160 * M), (384 * M, 288 * M)]
    );
    let e = points(&[1 << 30, 2 << 30, 3 << 30], Keep::SharedBuffers(1 << 30)).unwrap_err();
    assert!(
        e.contains("at --memory 1GB") && e.contains("start --memory above 1GB"),
        "{e}"
    );
    let e = points(&mem, Keep::Difference(160 * M)).unwrap_err();
    assert!(e.contains("nothing is left for shared_buffers"), "{e}");
    let e = points(&[32 * M, 256 * M, 384 * M], Keep::SharedBuffers(16 * M)).unwrap_err();
    assert!(e.contains("32MB is below") && e.contains("64MiB"), "{e}");
}

#[test]
fn sizes_read_back_in_postgresql_units() {
    assert_eq!(pg_size(1 << 30), "1GB");
    assert_eq!(pg_size(1536 * M), "1536MB");
    assert_eq!(whole_mib(1000 * 1024), M);
}

#[test]
fn each_point_plans_the_instance_with_its_memory_and_shared_buffers() {
    use crate::config::{RawRun, WorkloadName};
    use crate::experiment::{BaseRun, Experiment};
    use crate::results::experiment::Request;
    use crate::workload::Registry;

    let base = |target: &str| BaseRun {
        label: "flags".into(),
        text: String::new(),
        flags: RawRun {
            workload: Some(WorkloadName::new("tpcb")),
            target: Some(target.into()),
            ..RawRun::default()
        },
    };
    let request = Request {
        source: "flags".into(),
        base_text: String::new(),
        flags: Vec::new(),
        vary: Vec::new(),
        repeat: 1,
        point_duration: None,
        cpus: None,
        memory: None,
        knee: Some(Keep::Difference(96 * M).request()),
        consolidate: None,
    };
    let pts = points(&[160 * M, 256 * M, 384 * M], Keep::Difference(96 * M)).unwrap();
    let exp = Experiment::knee(
        "out".into(),
        request.clone(),
        &base("instance:knee-u/db"),
        &pts,
        &Registry,
    )
    .unwrap();
    assert_eq!(exp.varied, ["instance.memory"]);
    assert_eq!(
        exp.points[1].describe(),
        "instance.memory=256MB instance.set.shared_buffers=160MB"
    );
    let plan = exp.runs[2].plan(2, 1, &Registry).unwrap();
    let i = &plan.instances[0];
    assert_eq!((i.name.as_str(), i.memory_bytes), ("knee-u", Some(384 * M)));
    assert_eq!(
        i.setting_pairs(),
        [("shared_buffers".to_string(), "288MB".to_string())]
    );
    let e = Experiment::knee(
        "out".into(),
        request,
        &base("postgresql://u@h/db"),
        &pts,
        &Registry,
    )
    .unwrap_err();
    assert!(e.to_string().contains("managed instance"), "{e}");
}

#[test]
fn on_vms_makes_every_instance_a_guest_whose_ram_steps() {
    use crate::config::{RawRun, WorkloadName};
    use crate::experiment::{BaseRun, Experiment};
    use crate::workload::Registry;

    let flags = RawRun {
        workload: Some(WorkloadName::new("tpcb")),
        target: Some("instance:knee-g/db".into()),
        ..RawRun::default()
    };
    let mut base = BaseRun {
        label: "flags".into(),
        text: String::new(),
        flags,
    };
    let names = base.instances().unwrap();
    base.text = on_vms(&base.text, &names, Some(Accel::Tcg)).unwrap();
    let request: crate::results::experiment::Request = serde_json::from_value(serde_json::json!({
        "source": "flags", "base_text": "", "flags": [], "vary": [], "repeat": 1
    }))
    .unwrap();
    let pts = points(&[512 * M, 768 * M, 1024 * M], Keep::SharedBuffers(128 * M)).unwrap();
    let exp = Experiment::knee("out".into(), request, &base, &pts, &Registry).unwrap();
    let plan = exp.runs[1].plan(2, 1, &Registry).unwrap();
    let i = &plan.instances[0];
    assert_eq!(i.hypervisor.as_deref(), Some("qemu"));
    assert_eq!(i.accel.as_deref(), Some("tcg"));
    assert_eq!(i.memory_bytes, Some(768 * M), "the guest's RAM steps");
    let e = on_vms(
        "[[instance]]\nname = \"a\"\nvm = \"h/v\"\n",
        &["a".into()],
        None,
    )
    .unwrap_err();
    assert!(e.contains("leave out vm"), "{e}");
}
