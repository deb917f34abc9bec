//! Managed instances declared in a run file (`[[instance]]`): `prepare` creates and starts them
//! with their limits as `tidebench instance start --cpus --memory --set` would, `run` starts a
//! stopped one, and asking for other limits later is refused with both values and the fix.

use tidebench::instance;

use crate::support::{self, ok, output_text, run_tidebench as tb};

/// Two instances of a probe set (oltp on one, dss on the other) with `a_cpus` for the first.
/// Names carry the pid: cgroups are per host, not per home.
fn run_file(a: &str, b: &str, a_cpus: &str) -> String {
    format!(
        "clients = 1\nprogress = \"0\"\npoll = \"0\"\nsample = \"0\"\n\
         [[instance]]\nname = \"{a}\"\ncpus = {a_cpus}\nmemory = \"256MiB\"\n\
         settings = {{ fsync = false, max_connections = 20, autovacuum = false }}\n\
         [[instance]]\nname = \"{b}\"\ncpus = 0.25\nmemory = 201326592\n\
         [[group]]\nname = \"P\"\nworkload = \"probe\"\n\
         [[group.set]]\noltp = \"instance:{a}/p_oltp\"\ndss = \"instance:{b}/p_dss\"\n\
         [[phase]]\nduration = \"2s\"\nshares = {{ P = 100 }}\n"
    )
}

#[test]
fn prepare_creates_declared_instances_with_their_limits() {
    let home = support::temp_home();
    let (a, b) = (
        format!("decl{}a", std::process::id()),
        format!("decl{}b", std::process::id()),
    );
    let cfg = home.path().join("run.toml");
    std::fs::write(&cfg, run_file(&a, &b, "0.5")).unwrap();
    let cfg = cfg.to_str().unwrap();
    if !support::cgroups_writable() {
        // Limits cannot be had here: prepare must say so and stop, as `instance start` does.
        let o = tb(&home, &["prepare", cfg]);
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        assert!(output_text(&o).contains("cgroup"), "{}", output_text(&o));
        support::skip(
            "declared instances with limits",
            "control groups",
            "cgroups are not writable here; checked the refusal only",
        );
        return;
    }
    let o = ok(tb(&home, &["prepare", cfg]));
    let said = output_text(&o);
    assert!(said.contains(&format!("instance '{a}' created")), "{said}");

    let limits = |name: &str| {
        let s = instance::status(&home.home, name).expect("the declared instance exists");
        assert!(s.running, "{name} is not running");
        s.instance.limits()
    };
    assert_eq!(limits(&a), (Some(0.5), Some(256 << 20)));
    assert_eq!(limits(&b), (Some(0.25), Some(192 << 20)));
    let a_inst = instance::find(&home.home, &a).unwrap();
    let cg = a_inst.cgroup_paths().expect("limits make a cgroup");
    let pid = a_inst.pid().expect("running");
    let procs = cg.dirs().into_iter().all(|d| {
        std::fs::read_to_string(d.join("cgroup.procs"))
            .is_ok_and(|p| p.lines().any(|l| l == pid.to_string()))
    });
    assert!(procs, "the postmaster of {a} is not in its cgroup {cg:?}");
    assert_eq!(
        support::psql(&a_inst, "postgres", "SHOW fsync"),
        "off",
        "settings reach the server"
    );
    // Each role's database was made on its own instance.
    let b_inst = instance::find(&home.home, &b).unwrap();
    let has = |i: &instance::Instance, db: &str| {
        support::psql(
            i,
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{db}'"),
        ) == "1"
    };
    assert!(has(&a_inst, "p_oltp") && has(&b_inst, "p_dss"));
    // `instance status` shows the limits as the run file gave them.
    let status = output_text(&ok(tb(&home, &["instance", "status", &b])));
    assert!(status.contains("cpus=0.25 memory=192MiB"), "{status}");

    // A run starts a declared instance that was stopped, with the recorded limits.
    assert!(instance::stop(&home.home, &b).unwrap());
    let out = home.path().join("res");
    let o = ok(tb(&home, &["run", cfg, "--out", out.to_str().unwrap()]));
    assert!(
        output_text(&o).contains(&format!("instance '{b}' started")),
        "{}",
        output_text(&o)
    );
    assert_eq!(limits(&b), (Some(0.25), Some(192 << 20)));
    let runtime = std::fs::read_to_string(out.join("runtime.toml")).unwrap();
    assert!(
        runtime.contains(&format!("name = \"{a}\"")) && runtime.contains("cpus = 0.25"),
        "runtime.toml records the declared instances:\n{runtime}"
    );

    // Other limits for an existing instance: refused, naming both values and the fix.
    let other = home.path().join("other.toml");
    std::fs::write(&other, run_file(&a, &b, "0.75")).unwrap();
    let o = tb(&home, &["prepare", other.to_str().unwrap()]);
    let said = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("0.5") && said.contains("0.75"),
        "both values: {said}"
    );
    assert!(
        said.contains(&format!("tidebench instance destroy {a}")),
        "{said}"
    );
    assert_eq!(limits(&a), (Some(0.5), Some(256 << 20)), "left as it was");
}
