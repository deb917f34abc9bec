//! libpq's connection strings, with psql as the referee (issue 39): each case is a connection
//! string (URI or keywords) with environment variables and, for some, a password file or a
//! service file; psql (libpq 15) and `tidebench target check` are given the same, against the
//! same local servers (plaintext and TLS, A also on IPv6, and a hot standby of B), and must agree on
//! whether it connects and where it lands: port, user, database, and TLS (its version).
//! The cases follow libpq's documentation (connection strings, URIs, environment variables,
//! the password and service files) and the URI inputs of libpq's own tests
//! (`src/interfaces/libpq/test/regress.in`), written anew here.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use tidebench::instance::{tls, Instance, InstanceOptions};

use crate::support::{self, output_text as text};

/// Passwords of the roles the cases log in as; none may appear in tidebench's output.
const ALICE_PW: &str = "a1ice-secret";
const BOB_PW: &str = "b0b:p@ss";
/// The password of the encrypted client keys (`sslpassword`).
const KEY_PW: &str = "k3y-pass";

/// One case: the connection string and what goes around it. In `dsn`, `env` values and
/// `files`, `{pa}`, `{pb}`, `{pc}` are the servers' ports, `{sa}` A's socket directory,
/// `{sa_enc}` the same percent-encoded, `{ca}` C's CA certificate, `{dead}` a port nobody
/// listens on and `{dir}` the case's own directory.
struct Case {
    dsn: &'static str,
    env: &'static [(&'static str, &'static str)],
    /// Files written into the case's directory: (name, mode, text).
    files: &'static [(&'static str, u32, &'static str)],
}

const fn case(dsn: &'static str) -> Case {
    Case {
        dsn,
        env: &[],
        files: &[],
    }
}

const fn with_env(dsn: &'static str, env: &'static [(&'static str, &'static str)]) -> Case {
    Case {
        dsn,
        env,
        files: &[],
    }
}

const fn with_files(
    dsn: &'static str,
    env: &'static [(&'static str, &'static str)],
    files: &'static [(&'static str, u32, &'static str)],
) -> Case {
    Case { dsn, env, files }
}

const PGPASS: (&str, &str) = ("PGPASSFILE", "{dir}/pgpass");
const SERVICES: (&str, &str) = ("PGSERVICEFILE", "{dir}/services");
const SERVICE_FILE: &str =
    "# services\n[plain]\nhost={sa}\nport={pa}\nuser=postgres\ndbname=appdb\n\
     [tcp]\nhost=127.0.0.1\nport={pa}\nuser=alice\ndbname=appdb\n\
     [tls]\nhost=127.0.0.1\nport={pc}\nsslmode=disable\n\
     [broken]\nhost={sa}\nnot a keyword line\n\
     [nested]\nservice=plain\n";

/// Keyword/value strings, the environment, multiple hosts and the other keywords.
const KEYWORD_CASES: &[Case] = &[
    case("host={sa} port={pa} dbname=appdb"),
    case("host={sa} port={pa} user=postgres dbname=appdb"),
    case("host={sa} port={pa} user=postgres"),
    case("host={sa} port={pa} user=alice"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb"),
    case("host=127.0.0.1 port={pa} user=alice password=wrong dbname=appdb"),
    case("host=127.0.0.1 port={pa} user=alice dbname=appdb"),
    case("host = '{sa}' port = {pa} user = 'postgres' dbname = 'my db'"),
    case("host={sa} port={pa} user=postgres dbname=my\\ db"),
    case("port={dead} host={sa} port={pa} user=postgres dbname=appdb"),
    case("host=127.0.0.1 port={pa} user=alice password='b0b' password=a1ice-secret dbname=appdb"),
    with_env("dbname=appdb", &[("PGHOST", "{sa}"), ("PGPORT", "{pa}"), ("PGUSER", "postgres")]),
    with_env("host={sa} port={pa} user=postgres", &[("PGDATABASE", "appdb")]),
    with_env(
        "host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb",
        &[("PGPORT", "{pb}"), ("PGUSER", "bob"), ("PGDATABASE", "postgres")],
    ),
    with_env("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[("PGPASSWORD", "a1ice-secret")]),
    with_env("host=127.0.0.1 user=alice dbname=appdb", &[("PGPORT", "{dead},{pb}"), ("PGPASSWORD", "a1ice-secret")]),
    case("host=127.0.0.1,127.0.0.1 port={dead},{pb} user=alice password=a1ice-secret dbname=appdb"),
    case("host={sa},127.0.0.1 port={pa} user=postgres dbname=appdb"),
    case("host=127.0.0.1,127.0.0.1 port={pa},{pb},{pc} user=alice password=a1ice-secret dbname=appdb"),
    case("host=localhost hostaddr=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb"),
    case("hostaddr=127.0.0.1 port={pb} user=alice password=a1ice-secret dbname=appdb"),
    case("host={sa} hostaddr=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb"),
    case("host=a.invalid,b.invalid hostaddr=127.0.0.2,127.0.0.1 port={pb} user=alice password=a1ice-secret dbname=appdb"),
    case("host=a,b hostaddr=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb"),
    case("hostaddr=localhost port={pa} user=alice password=a1ice-secret dbname=appdb"),
    case("host={sa} port=99999 user=postgres"),
    case("host={sa} port=5x user=postgres"),
    case("host={sa} port={pa} user=postgres dbname=appdb nosuchkeyword=1"),
    case("host={sa} port={pa} user=postgres dbname"),
    case("host={sa} port={pa} user='postgres dbname=appdb"),
    case("host={sa} port={pa} user=postgres dbname=appdb target_session_attrs=read-write"),
    case("host={sa} port={pa} user=postgres dbname=appdb target_session_attrs=standby"),
    case("host={sa} port={pa} user=postgres dbname=appdb target_session_attrs=prefer-standby"),
    case("host={sa} port={pa} user=postgres dbname=appdb target_session_attrs=read-only"),
    case("host={sa} port={pa} user=postgres dbname=appdb target_session_attrs=master"),
    // target_session_attrs over B and its hot standby ({ps}), in both orders (libpq's docs).
    case("host=127.0.0.1,127.0.0.1 port={pb},{ps} user=alice password=a1ice-secret dbname=appdb target_session_attrs=standby"),
    case("host=127.0.0.1,127.0.0.1 port={pb},{ps} user=alice password=a1ice-secret dbname=appdb target_session_attrs=prefer-standby"),
    case("host=127.0.0.1,127.0.0.1 port={pb},{ps} user=alice password=a1ice-secret dbname=appdb target_session_attrs=read-only"),
    case("host=127.0.0.1,127.0.0.1 port={pb},{ps} user=alice password=a1ice-secret dbname=appdb target_session_attrs=any"),
    case("host=127.0.0.1,127.0.0.1 port={ps},{pb} user=alice password=a1ice-secret dbname=appdb target_session_attrs=read-write"),
    case("host=127.0.0.1,127.0.0.1 port={ps},{pb} user=alice password=a1ice-secret dbname=appdb target_session_attrs=primary"),
    case("host=127.0.0.1,127.0.0.1 port={ps},{pb} user=alice password=a1ice-secret dbname=appdb target_session_attrs=any"),
    case("host=127.0.0.1 port={ps} user=alice password=a1ice-secret dbname=appdb target_session_attrs=read-write"),
    case("host=127.0.0.1 port={pb} user=alice password=a1ice-secret dbname=appdb target_session_attrs=standby"),
    case("host=127.0.0.1 port={pb} user=alice password=a1ice-secret dbname=appdb target_session_attrs=prefer-standby"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{ps},127.0.0.1:{pb}/appdb?target_session_attrs=primary"),
    with_env("host=127.0.0.1,127.0.0.1 port={pb},{ps} user=alice password=a1ice-secret dbname=appdb", &[("PGTARGETSESSIONATTRS", "standby")]),
    with_env("host=127.0.0.1,127.0.0.1 port={ps},{pb} user=alice password=a1ice-secret dbname=appdb", &[("PGTARGETSESSIONATTRS", "read-write")]),
    case("host={sa} port={pa} user=postgres dbname=appdb connect_timeout=5"),
    case("host={sa} port={pa} user=postgres dbname=appdb options='-c search_path=public'"),
    case("host={sa} port={pa} user=postgres dbname=appdb client_encoding=UTF8"),
    case("host={sa} port={pa} user=postgres dbname=appdb application_name=mine fallback_application_name=other"),
    case("host={sa} port={pa} user=postgres dbname=appdb keepalives=1 keepalives_idle=30 keepalives_interval=5 keepalives_count=3 tcp_user_timeout=10000"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb keepalives_idle=30 keepalives_interval=5 keepalives_count=3 tcp_user_timeout=10000"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb keepalives=x"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb keepalives_idle=-5"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb keepalives=0 keepalives_idle=-5"),
    case("host={sa} port={pa} user=postgres dbname=appdb keepalives=x"),
    case("host={sa} port={pa} user=postgres dbname=appdb requirepeer=postgres"),
    case("host={sa} port={pa} user=postgres dbname=appdb requirepeer=nobody"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb channel_binding=prefer"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb channel_binding=maybe"),
    case("host={sa} port={pa} user=postgres dbname=appdb gssencmode=disable krbsrvname=postgres"),
    case("host={sa} port={pa} user=postgres dbname=appdb PASSWORD=x"),
];

/// URIs: percent-decoding, hosts and ports, the query, and libpq's URI test inputs.
const URI_CASES: &[Case] = &[
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb"),
    with_env("postgresql://alice:a1ice-secret@127.0.0.1/appdb", &[("PGPORT", "{pa}")]),
    with_env("postgresql://alice@127.0.0.1/appdb", &[("PGPORT", "{pb}"), ("PGPASSWORD", "a1ice-secret")]),
    case("postgresql://alice:a1ice-secret@localhost/appdb?port={pa}"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pb}/appdb?port={pa}"),
    case("postgresql://alice:a1ice-secret@127.0.0.1/appdb?port={pb}&port={pa}"),
    case("postgresql:///appdb?host={sa}&port={pa}&user=postgres"),
    case("postgresql://postgres@/appdb?host={sa}&port={pa}"),
    with_env("postgres://postgres@:{pa}/appdb", &[("PGHOST", "{sa}")]),
    with_env("postgresql://", &[("PGHOST", "{sa}"), ("PGPORT", "{pa}"), ("PGUSER", "postgres"), ("PGDATABASE", "appdb")]),
    case("postgresql://postgres@{sa_enc}:{pa}/appdb"),
    case("postgresql://postgres@{sa_enc}:{pa}/my%20db"),
    case("postgresql://bob:b0b%3Ap%40ss@127.0.0.1:{pa}/appdb"),
    case("postgresql://%61lice:a1ice-secret@127.0.0.1:{pa}/app%64b"),
    case("postgresql://127.0.0.1:{pa}/appdb?user=alice&password=a1ice-secret"),
    case("postgresql://alice@127.0.0.1:{pa}/appdb?password=a1ice-secret&application_name=x&connect_timeout=3"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{dead},127.0.0.1:{pb}/appdb"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa},127.0.0.1:{pb}/appdb?target_session_attrs=any"),
    case("postgresql://alice:a1ice-secret@[::1]:{pa}/appdb"),
    case("postgresql://alice:a1ice-secret@[::1]:{pb}/appdb"),
    case("postgresql://alice:a1ice-secret@[::1],127.0.0.1:{pb}/appdb"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pc}/appdb?ssl=true"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?ssl=false"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?nosuch=1"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?port"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?port={pa}=1"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/app%zzdb"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/app%00db"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb%"),
    case("postgresql://alice:a1ice-secret@[::1:{pa}/appdb"),
    case("postgresql://alice:a1ice-secret@[]:{pa}/appdb"),
    case("postgresql://alice:a1ice-secret@[::1]z:{pa}/appdb"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}x/appdb"),
    case("postgres://alice:a1ice-secret@127.0.0.1:{pa}/appdb?sslmode=disable"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?"),
    case("postgresql://127.0.0.1:{pa}/appdb?user=alice&password=a1ice-secret&"),
    case("postgresql://127.0.0.1:{pa}/appdb?user=alice&password=a1ice-secret&&"),
    case("postgresql://127.0.0.1:{pa}/appdb?u%73er=alice&password=a1ice-secret"),
    case("postgres://@127.0.0.1:{pa}/appdb?user=alice&password=a1ice-secret"),
    with_env("postgres://alice:a1ice-secret@127.0.0.1:/appdb", &[("PGPORT", "{pb}")]),
    case("postgres://postgres@:{pa}/appdb?host={sa}"),
    case("postgresql://example.invalid?hostaddr=127.0.0.1&port={pa}&user=alice&password=a1ice-secret&dbname=appdb"),
    case("postgresql://?hostaddr=127.0.0.1&port={pb}&user=alice&password=a1ice-secret&dbname=appdb"),
    case("postgresql://alice:a1ice-secret@127.0.0.1:{pa}/appdb?uzer="),
];

/// TLS on server C (and its absence on A), the password file, the service file.
const TLS_AND_FILE_CASES: &[Case] = &[
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=disable"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=allow"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=require"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={ca}"),
    case("host=localhost hostaddr=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={ca}"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb sslmode=on"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb requiressl=1"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb sslmode=require"),
    case("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb sslmode=prefer"),
    with_env("host=127.0.0.1 port={pa} user=alice password=a1ice-secret dbname=appdb", &[("PGSSLMODE", "require")]),
    with_env("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb", &[("PGSSLMODE", "disable")]),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb ssl_min_protocol_version=TLSv1.3"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb ssl_max_protocol_version=TLSv1.2"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb ssl_max_protocol_version=TLSv1.1"),
    case("host=127.0.0.1 port={pc} user=alice password=a1ice-secret dbname=appdb ssl_min_protocol_version=TLSv9"),
    case("host={sa} port={pa} user=postgres dbname=appdb sslmode=require"),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "127.0.0.1:{pa}:appdb:alice:a1ice-secret\n")]),
    with_files("host={sa} hostaddr=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "{sa}:{pa}:*:alice:a1ice-secret\n")]),
    with_files("hostaddr=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "127.0.0.1:{pa}:*:alice:a1ice-secret\n")]),
    with_files("hostaddr=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "localhost:{pa}:*:alice:a1ice-secret\n")]),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "localhost:{pa}:*:alice:a1ice-secret\n")]),
    with_files("host=localhost port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "# comment\nlocalhost:{pa}:*:alice:a1ice-secret\n")]),
    with_files("host=127.0.0.1 port={pa} user=bob dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "*:*:*:bob:b0b\\:p@ss\n")]),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "127.0.0.1:{pa}:*:alice:a1ice-secret:more:fields\n")]),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "127.0.0.1:{pb}:*:alice:wrong\n*:*:*:alice:a1ice-secret\n")]),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o644, "*:*:*:alice:a1ice-secret\n")]),
    with_files("host=127.0.0.1 port={pa} user=alice dbname=appdb passfile={dir}/other", &[PGPASS], &[("other", 0o600, "*:*:*:alice:a1ice-secret\n"), ("pgpass", 0o600, "*:*:*:alice:wrong\n")]),
    with_files("host=127.0.0.1,127.0.0.1 port={dead},{pb} user=alice dbname=appdb", &[PGPASS], &[("pgpass", 0o600, "127.0.0.1:{pb}:*:alice:a1ice-secret\n")]),
    with_files("postgresql://alice@127.0.0.1:{pa}/appdb", &[("HOME", "{dir}")], &[(".pgpass", 0o600, "127.0.0.1:*:*:alice:a1ice-secret\n")]),
    with_files("service=plain", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("dbname=postgres", &[SERVICES, ("PGSERVICE", "plain")], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=plain dbname=my\\ db", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=tcp password=a1ice-secret", &[SERVICES, ("PGPORT", "{pb}")], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=tls user=alice password=a1ice-secret dbname=appdb", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("postgresql://?service=plain", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=nosuch", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=broken", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_files("service=nested", &[SERVICES], &[("services", 0o644, SERVICE_FILE)]),
    with_env("service=plain", &[("PGSERVICEFILE", "{dir}/missing")]),
    with_env("host={sa} port={pa} user=postgres dbname=appdb", &[("PGSERVICEFILE", "{dir}/missing")]),
];

/// TLS as libpq decides it (issue 39, item 2), against servers D, E and F, whose certificates
/// `make_certificates` writes with the openssl CLI: D's is X.509 version 1 with CN=127.0.0.1
/// (no extensions at all), E's has the DNS names `127.0.0.1` and `db.example` (CN=localhost)
/// and is revoked in `{crl}`, F's has the IP address 127.0.0.1 only (CN=localhost). All three
/// ask for a client certificate of the client CA; D admits `certuser` by certificate only.
/// `{sca}` is the servers' CA, `{cca}` the clients'; the client's certificate (version 1) is
/// `{ccert}` and its key comes as PEM, DER, encrypted PKCS#8, encrypted traditional PEM and at
/// several modes and owners.
const LIBPQ_TLS_CASES: &[(bool, Case)] = &[
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca}")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=localhost hostaddr=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=127.000.000.001 hostaddr=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("hostaddr=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={cca}")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require sslrootcert={dir}/missing.crt")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=prefer sslrootcert={dir}/missing.crt")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={dir}/missing.crt")),
    connects(case("host=localhost hostaddr=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require sslrootcert={sca}")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require sslrootcert={cca}")),
    refused(with_files("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require", &[], &[(".postgresql/root.crt", 0o644, "{cca_text}")])),
    connects(case("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    connects(case("host=db.example hostaddr=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    connects(case("host=DB.Example hostaddr=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=localhost hostaddr=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    connects(case("host=127.0.0.1 port={pf} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    connects(case("host=localhost hostaddr=127.0.0.1 port={pf} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    connects(case("host=127.000.000.001 hostaddr=127.0.0.1 port={pf} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=127.0.0.2 hostaddr=127.0.0.1 port={pf} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=db.example hostaddr=127.0.0.1 port={pf} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca}")),
    refused(case("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca} sslcrl={crl}")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca} sslcrl={crl}")),
    refused(case("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca} sslcrldir={crldir}")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca} sslcrldir={crldir}")),
    connects(case("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=require sslcrl={crl}")),
    connects(case("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca} sslcrl={dir}/missing.crl")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca} sslcrldir={dir}")),
    refused(with_files("host=127.0.0.1 port={pe} user=alice password=a1ice-secret dbname=appdb sslmode=verify-ca sslrootcert={sca}", &[], &[(".postgresql/root.crl", 0o644, "{crl_text}")])),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey}")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=verify-full sslrootcert={sca} sslcert={ccert} sslkey={ckey_der}")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey_enc} sslpassword=k3y-pass")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey_enc}")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey_enc} sslpassword=wrong")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey_trad} sslpassword=k3y-pass")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey_trad}")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey640}")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckey644}")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckeypg640}")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={ckeypg600}")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={dir}/missing.key")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require sslcert={ccert} sslkey={okey}")),
    refused(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require sslcert={dir}/missing.crt sslkey={ckey}")),
    connects(with_files("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=require", &[], &[(".postgresql/postgresql.crt", 0o644, "{ccert_text}"), (".postgresql/postgresql.key", 0o600, "{ckey_text}")])),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require ssl_max_protocol_version=TLSv1.2")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=verify-full sslrootcert={sca} ssl_max_protocol_version=TLSv1.2")),
    connects(case("host=127.0.0.1 port={pd} user=certuser dbname=appdb sslmode=verify-full sslrootcert={sca} sslcert={ccert} sslkey={ckey} ssl_max_protocol_version=TLSv1.2")),
    connects(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require ssl_min_protocol_version=TLSv1.3")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2")),
    // TLS 1.0 and 1.1 only: rustls does not speak them, and neither does libpq on Debian 12
    // (its OpenSSL's floor is TLS 1.2, as is the server's ssl_min_protocol_version).
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require ssl_min_protocol_version=TLSv1 ssl_max_protocol_version=TLSv1.1")),
    refused(case("host=127.0.0.1 port={pd} user=alice password=a1ice-secret dbname=appdb sslmode=require ssl_max_protocol_version=TLSv1")),
];

/// A case psql (libpq) is expected to connect on: the case tests what it says it tests.
const fn connects(case: Case) -> (bool, Case) {
    (true, case)
}

/// A case psql is expected to refuse.
const fn refused(case: Case) -> (bool, Case) {
    (false, case)
}

/// Where a session landed: port, user, database, TLS version (empty: none).
type Landing = (String, String, String, String);

const WHERE_SQL: &str = "SELECT current_setting('port'), current_user, current_database(), \
     coalesce((SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl), '')";

/// The servers and the values the cases' placeholders stand for.
struct Bench {
    // Stopped before the home that holds it is removed (fields drop in order).
    _standby: support::Standby,
    home: support::TempHome,
    values: Vec<(&'static str, String)>,
    psql: PathBuf,
    _servers: Vec<Instance>,
}

fn setup() -> Bench {
    let home = support::temp_home();
    let ipv6 = InstanceOptions {
        settings: vec![("listen_addresses".into(), "127.0.0.1,::1".into())],
        ..InstanceOptions::default()
    };
    let a = support::start_with(&home, "lpa", ipv6);
    let b = support::start_instance(&home, "lpb");
    let c = support::start_with(
        &home,
        "lpc",
        InstanceOptions {
            ssl: true,
            ..InstanceOptions::default()
        },
    );
    let hba = a.data_dir().join("pg_hba.conf");
    let mut rules = std::fs::read_to_string(&hba).unwrap();
    rules.push_str("host all all ::1/128 scram-sha-256\n");
    std::fs::write(&hba, rules).unwrap();
    let certs = home.path().join("certs");
    let owner = std::fs::metadata(a.data_dir()).unwrap();
    make_certificates(&certs, (owner.uid(), owner.gid()));
    let with_cert = |server: &str| InstanceOptions {
        settings: [
            ("ssl", "on".to_string()),
            (
                "ssl_cert_file",
                certs.join(format!("{server}.crt")).display().to_string(),
            ),
            (
                "ssl_key_file",
                certs.join(format!("{server}.key")).display().to_string(),
            ),
            ("ssl_ca_file", certs.join("cca.crt").display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..InstanceOptions::default()
    };
    let d = support::start_with(&home, "lpd", with_cert("d"));
    let e = support::start_with(&home, "lpe", with_cert("e"));
    let f = support::start_with(&home, "lpf", with_cert("f"));
    // D admits certuser by its client certificate only (the first matching line wins).
    let hba = d.data_dir().join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    let cert_rule = "hostssl all certuser 127.0.0.1/32 cert\nhost ";
    std::fs::write(&hba, rules.replacen("host ", cert_rule, 1)).unwrap();
    support::psql(&d, "postgres", "CREATE ROLE certuser LOGIN");
    for inst in [&a, &b, &c, &d, &e, &f] {
        for sql in [
            "SELECT pg_reload_conf()".to_string(),
            format!("CREATE ROLE alice LOGIN PASSWORD '{ALICE_PW}'"),
            format!("CREATE ROLE bob LOGIN PASSWORD '{BOB_PW}'"),
            "CREATE DATABASE appdb OWNER alice".to_string(),
            "CREATE DATABASE \"my db\"".to_string(),
        ] {
            support::psql(inst, "postgres", &sql);
        }
    }
    // A hot standby of B, made after the roles and databases above so that it has them.
    let standby = support::start_standby(&home, &b);
    let file = |name: &str| certs.join(name).display().to_string();
    let text = |name: &str| std::fs::read_to_string(certs.join(name)).unwrap();
    let sa = a.socket_dir.display().to_string();
    let dead = support::free_port().to_string();
    let values = vec![
        ("{pa}", a.port.to_string()),
        ("{pb}", b.port.to_string()),
        ("{pc}", c.port.to_string()),
        ("{ps}", standby.port.to_string()),
        ("{sa_enc}", sa.replace('/', "%2F")),
        ("{sa}", sa),
        ("{ca}", tls::ca_cert_of(c.dir()).display().to_string()),
        ("{dead}", dead),
        ("{pd}", d.port.to_string()),
        ("{pe}", e.port.to_string()),
        ("{pf}", f.port.to_string()),
        ("{sca}", file("sca.crt")),
        ("{cca}", file("cca.crt")),
        ("{cca_text}", text("cca.crt")),
        ("{ccert}", file("client.crt")),
        ("{ccert_text}", text("client.crt")),
        ("{ckey}", file("client.key")),
        ("{ckey_text}", text("client.key")),
        ("{ckey_der}", file("client.der")),
        ("{ckey_enc}", file("client.enc.key")),
        ("{ckey_trad}", file("client.trad.key")),
        ("{ckey640}", file("client.640.key")),
        ("{ckey644}", file("client.644.key")),
        ("{ckeypg640}", file("client.pg640.key")),
        ("{ckeypg600}", file("client.pg600.key")),
        ("{okey}", file("other.key")),
        ("{crl}", file("revoked.crl")),
        ("{crl_text}", text("revoked.crl")),
        ("{crldir}", file("crldir")),
    ];
    Bench {
        _standby: standby,
        psql: a.bin_dir().join("psql"),
        home,
        values,
        _servers: vec![a, b, c, d, e, f],
    }
}

impl Bench {
    fn fill(&self, text: &str, dir: &Path) -> String {
        let mut out = text.replace("{dir}", &dir.display().to_string());
        for (key, value) in &self.values {
            out = out.replace(key, value);
        }
        out
    }

    /// The case's command with its environment: no PG* variable of ours, HOME its own dir.
    fn command(&self, program: &Path, case: &Case, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        for (key, _) in std::env::vars() {
            if key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", dir).env("PGSYSCONFDIR", dir);
        cmd.env("TIDEBENCH_HOME", self.home.path());
        for (key, value) in case.env {
            cmd.env(key, self.fill(value, dir));
        }
        cmd
    }

    fn psql(&self, case: &Case, dsn: &str, dir: &Path) -> (Option<Landing>, String) {
        let o = self
            .command(&self.psql, case, dir)
            .args(["-XAtw", "-F", "|", "-c", WHERE_SQL, dsn])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let fields: Vec<String> = out.split('|').map(str::to_string).collect();
        match (o.status.success(), fields.as_slice()) {
            (true, [port, user, db, tls]) => (
                Some((port.clone(), user.clone(), db.clone(), tls.clone())),
                out,
            ),
            _ => (None, text(&o)),
        }
    }

    fn tidebench(&self, case: &Case, dsn: &str, dir: &Path) -> (Option<Landing>, String) {
        let o = self
            .command(Path::new(env!("CARGO_BIN_EXE_tidebench")), case, dir)
            .args(["target", "check", dsn])
            .output()
            .unwrap();
        let all = text(&o);
        for pw in [ALICE_PW, BOB_PW, "b0b%3Ap%40ss", KEY_PW] {
            assert!(!all.contains(pw), "a password in tidebench's output: {all}");
        }
        if !o.status.success() {
            assert_eq!(o.status.code(), Some(2), "a refusal exits 2: {all}");
            return (None, all);
        }
        let field = |name: &str| {
            let out = String::from_utf8_lossy(&o.stdout);
            out.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        let tls = field("tls:");
        let tls = if tls == "no" { String::new() } else { tls };
        (
            Some((field("port:"), field("user:"), field("database:"), tls)),
            all,
        )
    }
}

#[test]
fn connection_strings_land_where_psql_lands() {
    let bench = setup();
    let all: Vec<&Case> = KEYWORD_CASES
        .iter()
        .chain(URI_CASES)
        .chain(TLS_AND_FILE_CASES)
        .chain(LIBPQ_TLS_CASES.iter().map(|(_, case)| case))
        .collect();
    let first_tls = all.len() - LIBPQ_TLS_CASES.len();
    let mut differ = Vec::new();
    let mut unexpected = Vec::new();
    let mut connected = 0;
    for (i, case) in all.iter().enumerate() {
        let dir = bench.home.path().join(format!("case{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, mode, body) in case.files {
            use std::os::unix::fs::PermissionsExt;
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bench.fill(body, &dir)).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).unwrap();
        }
        let dsn = bench.fill(case.dsn, &dir);
        let (theirs, their_text) = bench.psql(case, &dsn, &dir);
        let (ours, our_text) = bench.tidebench(case, &dsn, &dir);
        connected += usize::from(theirs.is_some());
        if let Some((expected, _)) = i.checked_sub(first_tls).map(|k| &LIBPQ_TLS_CASES[k]) {
            if theirs.is_some() != *expected {
                unexpected.push(format!("case {i}: {dsn}\n  psql: {theirs:?} {their_text}"));
            }
        }
        if theirs != ours {
            differ.push(format!(
                "case {i}: {dsn} (env {:?})\n  psql:      {theirs:?} {their_text}\n  tidebench: {ours:?} {our_text}",
                case.env
            ));
        }
    }
    println!(
        "libpq conformance: {} cases, {} agree, {} differ ({connected} connect)",
        all.len(),
        all.len() - differ.len(),
        differ.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // libpq itself did what each TLS case expects of it (else the case tests nothing).
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
    // Both outcomes are exercised: enough cases connect, and enough are refused.
    assert!(
        connected > all.len() / 3 && connected < all.len() - 10,
        "{connected}"
    );
}

/// Issue 39, item 4: a server whose pg_hba admits a user to the target's database only
/// admits psql on that string, and tidebench's statistics session too, which then reads from
/// the target's database instead of `postgres`.
#[test]
fn the_statistics_session_falls_back_to_the_targets_database() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "lphba");
    for sql in [
        format!("CREATE ROLE alice LOGIN PASSWORD '{ALICE_PW}'"),
        "CREATE DATABASE appdb OWNER alice".to_string(),
    ] {
        support::psql(&inst, "postgres", &sql);
    }
    let hba = inst.data_dir().join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    let only_appdb = "host appdb alice 127.0.0.1/32 scram-sha-256\n\
                      host all alice 127.0.0.1/32 reject\n";
    std::fs::write(&hba, rules.replace("host ", &format!("{only_appdb}host "))).unwrap();
    support::psql(&inst, "postgres", "SELECT pg_reload_conf()");
    let dsn = format!(
        "postgresql://alice:{ALICE_PW}@127.0.0.1:{}/appdb?sslmode=disable",
        inst.port
    );
    let psql = Command::new(inst.bin_dir().join("psql"))
        .args(["-XAtw", "-c", "SELECT current_database()", &dsn])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&psql.stdout).trim(),
        "appdb",
        "{}",
        text(&psql)
    );
    let to_postgres = dsn.replace("/appdb?", "/postgres?");
    let refused = Command::new(inst.bin_dir().join("psql"))
        .args(["-XAtw", "-c", "SELECT 1", &to_postgres])
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "pg_hba must refuse postgres to alice"
    );

    let spec = tidebench::config::TargetSpec::parse(&dsn).unwrap();
    let target = tidebench::target::resolve(&spec, &home.home).unwrap();
    let dbname = support::block_on(async {
        let all = [target.clone()];
        let session = tidebench::sampler::server::StatsSession::open(&target, &all)
            .await
            .unwrap();
        let row = session
            .client()
            .query_one("SELECT current_database()", &[])
            .await
            .unwrap();
        (session.dbname().to_string(), row.get::<_, String>(0))
    });
    assert_eq!(dbname, ("appdb".to_string(), "appdb".to_string()));
}

/// Runs the openssl CLI in `dir`; a failure stops the test with its words.
pub(crate) fn openssl(dir: &Path, args: &str) {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args.split_whitespace())
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl {args}: {}", text(&o));
}

/// The certificates of servers D, E, F and of the client, made as people make them by hand:
/// CAs with `req -x509`, the rest signed with `x509 -req` (version 1 unless given extensions),
/// a revocation list with `ca -revoke`/`-gencrl`, and its hashed directory (`rehash`).
/// `server` owns the servers' keys, which PostgreSQL wants at 0600.
fn make_certificates(dir: &Path, server: (u32, u32)) {
    std::fs::create_dir_all(dir.join("crldir")).unwrap();
    let ca = "req -x509 -new -nodes -days 3650 -newkey";
    openssl(
        dir,
        &format!("{ca} rsa:2048 -keyout sca.key -out sca.crt -subj /CN=servers-ca"),
    );
    openssl(dir, &format!("{ca} ec -pkeyopt ec_paramgen_curve:P-256 -keyout cca.key -out cca.crt -subj /CN=clients-ca"));
    std::fs::write(
        dir.join("e.ext"),
        "subjectAltName=DNS:127.0.0.1,DNS:db.example\n",
    )
    .unwrap();
    std::fs::write(dir.join("f.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    for (name, cn, ext) in [
        ("d", "127.0.0.1", ""),
        ("e", "localhost", "-extfile e.ext"),
        ("f", "localhost", "-extfile f.ext"),
    ] {
        openssl(dir, &format!("req -new -nodes -newkey rsa:2048 -keyout {name}.key -out {name}.csr -subj /CN={cn}"));
        openssl(dir, &format!("x509 -req -in {name}.csr -CA sca.crt -CAkey sca.key -CAcreateserial -days 3650 -out {name}.crt {ext}"));
        let key = dir.join(format!("{name}.key"));
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&key, Some(server.0), Some(server.1)).unwrap();
    }
    // The client: version 1, CN=certuser, its key in every form libpq reads.
    openssl(
        dir,
        "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out client.key",
    );
    openssl(
        dir,
        "req -new -key client.key -out client.csr -subj /CN=certuser",
    );
    openssl(dir, "x509 -req -in client.csr -CA cca.crt -CAkey cca.key -CAcreateserial -days 3650 -out client.crt");
    openssl(dir, "pkey -in client.key -outform DER -out client.der");
    openssl(
        dir,
        &format!("pkey -in client.key -aes256 -passout pass:{KEY_PW} -out client.enc.key"),
    );
    openssl(
        dir,
        &format!("ec -in client.key -aes256 -passout pass:{KEY_PW} -out client.trad.key"),
    );
    openssl(
        dir,
        "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out other.key",
    );
    let key = std::fs::read(dir.join("client.key")).unwrap();
    for (name, mode, owner) in [
        ("client.key", 0o600, None),
        ("client.der", 0o600, None),
        ("client.enc.key", 0o600, None),
        ("client.trad.key", 0o600, None),
        ("other.key", 0o600, None),
        ("client.640.key", 0o640, None),
        ("client.644.key", 0o644, None),
        ("client.pg640.key", 0o640, Some(server)),
        ("client.pg600.key", 0o600, Some(server)),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            std::fs::write(&path, &key).unwrap();
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
        }
    }
    // E's certificate revoked by the servers' CA; the list also in a hashed directory.
    std::fs::write(dir.join("index.txt"), "").unwrap();
    std::fs::write(dir.join("crlnumber"), "01\n").unwrap();
    std::fs::write(
        dir.join("ca.cnf"),
        "[ca]\ndefault_ca = own\n[own]\ndatabase = index.txt\ncrlnumber = crlnumber\n\
         default_md = sha256\ndefault_crl_days = 3650\n",
    )
    .unwrap();
    let sign = "-config ca.cnf -keyfile sca.key -cert sca.crt";
    openssl(dir, &format!("ca {sign} -revoke e.crt"));
    openssl(dir, &format!("ca {sign} -gencrl -out revoked.crl"));
    std::fs::copy(dir.join("revoked.crl"), dir.join("crldir/revoked.crl")).unwrap();
    openssl(dir, "rehash crldir");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mode = std::fs::metadata(&path).unwrap().mode();
        if !path.to_string_lossy().ends_with(".key") && !path.ends_with("client.der") {
            let readable = if path.is_dir() { 0o755 } else { 0o644 };
            std::fs::set_permissions(
                &path,
                std::fs::Permissions::from_mode(readable | (mode & 0o7000)),
            )
            .unwrap();
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}
