use super::*;

fn values(spec: &str) -> Vec<String> {
    Vary::parse(spec).unwrap().values
}

#[test]
fn ranges_double_step_and_mix_with_plain_values() {
    assert_eq!(
        values("clients=1..64x2"),
        ["1", "2", "4", "8", "16", "32", "64"]
    );
    assert_eq!(values("clients=1..16+4"), ["1", "5", "9", "13"]);
    assert_eq!(
        values("clients=1..3,8,10..12"),
        ["1", "2", "3", "8", "10", "11", "12"]
    );
    assert_eq!(values("instance.cpus=0.5..2+0.5"), ["0.5", "1", "1.5", "2"]);
    assert_eq!(values("protocol=simple,prepared"), ["simple", "prepared"]);
    assert_eq!(
        values("instance.set.shared_buffers=256MB,1GB"),
        ["256MB", "1GB"]
    );
}

#[test]
fn bad_lists_name_the_fix() {
    for (spec, needle) in [
        ("clients", "KEY=V1,V2"),
        ("clients=1..0", "ends below"),
        ("clients=1..8x1", "never grows"),
        ("clients=0..8x2", "never grows"),
        ("clients=a..b", "not a range"),
        ("clients=1,,2", "empty value"),
        ("clients=1,1", "twice"),
        ("clients=1..100000", "more than"),
        ("out=a,b", "cannot be varied"),
        ("group.a=1", "unknown key"),
        ("instance.disk=1", "instance[.NAME].cpus"),
    ] {
        let e = Vary::parse(spec).unwrap_err();
        assert!(e.contains(needle), "{spec}: {e}");
    }
}

#[test]
fn keys_parse_into_their_kind() {
    assert_eq!(
        VaryKey::parse("max-tries").unwrap(),
        VaryKey::Run("max_tries".into())
    );
    assert_eq!(
        VaryKey::parse("group.DB_1.clients").unwrap(),
        VaryKey::Group {
            group: "DB_1".into(),
            key: "clients".into()
        }
    );
    assert_eq!(
        VaryKey::parse("instance.vm1.set.work_mem").unwrap(),
        VaryKey::Instance {
            instance: Some("vm1".into()),
            what: InstanceValue::Setting("work_mem".into())
        }
    );
    assert_eq!(
        VaryKey::parse("instance.memory").unwrap(),
        VaryKey::Instance {
            instance: None,
            what: InstanceValue::Memory
        }
    );
}

#[test]
fn values_become_typed_toml() {
    assert_eq!(toml_value("16"), toml::Value::Integer(16));
    assert_eq!(toml_value("0.5"), toml::Value::Float(0.5));
    assert_eq!(toml_value("true"), toml::Value::Boolean(true));
    assert_eq!(toml_value("1GB"), toml::Value::String("1GB".into()));
}
