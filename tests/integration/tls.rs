//! TLS as libpq does it (issue 28, items 1, 2 and 5), against managed instances started with
//! `--ssl`: verify-full runs and loads encrypted (pg_stat_ssl agrees for every session),
//! psql accepts the same connection string, and each refusal names its cause: a wrong CA, a
//! wrong host name, an expired certificate, a client key others may read, and `require`
//! against a server without TLS, which `prefer` falls back from.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Output;
use std::time::{Duration, SystemTime};

use tidebench::instance::{tls, InstanceOptions};

use crate::support::{self, output_text as text};

/// A one-second select-only run of one client on `target`.
fn short_run(home: &support::TempHome, target: &str) -> Output {
    support::run_tidebench(
        home,
        &[
            "run", "-S", "-T", "1s", "-P", "0", "--sample", "0", "--target", target,
        ],
    )
}

fn assert_refused(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    assert!(text(o).contains(says), "expected '{says}' in:\n{}", text(o));
}

fn ssl_options() -> InstanceOptions {
    InstanceOptions {
        ssl: true,
        ..InstanceOptions::default()
    }
}

#[test]
fn verify_full_sessions_are_encrypted_and_psql_agrees() {
    let home = support::temp_home();
    let inst = support::start_with(&home, "tls", ssl_options());
    let dsn = inst.dsn("tidebench");
    assert!(
        dsn.contains("sslmode=verify-full") && dsn.contains("sslrootcert="),
        "{dsn}"
    );
    let key = inst.dir().join("tls").join(tls::SERVER_KEY);
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the server key must be 0600");

    // libpq's own psql takes the printed string and ends up encrypted.
    let psql = std::process::Command::new(inst.bin_dir().join("psql"))
        .args(["-X", "-A", "-t", "-c"])
        .arg("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .arg(&dsn)
        .output()
        .unwrap();
    assert_eq!(text(&psql).trim(), "t", "{}", text(&psql));

    // prepare loads over the DSN; the run goes through `instance:tls`, which the instance's
    // TLS turns into the same verify-full session.
    support::prepare_tpcb(&home, &dsn);
    let run = support::spawn_tidebench(
        &home,
        &[
            "run",
            "-S",
            "-c",
            "2",
            "-T",
            "4s",
            "-P",
            "0",
            "--sample",
            "0",
            "--target",
            "instance:tls",
        ],
    );
    let count = "SELECT count(*) || ' ' || count(*) FILTER (WHERE s.ssl) \
                 FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
                 WHERE a.application_name LIKE 'tidebench%'";
    // Look until the run ends (its sessions live through its window, however late it starts).
    let mut run = run;
    let mut seen = String::new();
    while run.try_wait().unwrap().is_none() {
        seen = support::psql(&inst, "postgres", count);
        let all: Vec<u32> = seen.split(' ').map(|n| n.parse().unwrap()).collect();
        if all[0] >= 2 {
            assert_eq!(
                all[0], all[1],
                "some benchmark sessions are not encrypted: {seen}"
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = run.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !seen.starts_with("0 ") && !seen.starts_with("1 "),
        "never saw the clients: {seen}"
    );
}

#[test]
fn certificates_that_do_not_verify_are_refused_with_the_cause() {
    let home = support::temp_home();
    let inst = support::start_with(&home, "tlsbad", ssl_options());
    let dsn = inst.dsn("tidebench");
    let ca = tls::ca_cert_of(inst.dir());

    // Another CA: the chain does not verify.
    let other = home.path().join("other-ca");
    let now = SystemTime::now();
    tls::write_certificates(&other, "other", now, now + Duration::from_secs(3600)).unwrap();
    let wrong_ca = dsn.replace(
        &ca.display().to_string(),
        &other.join(tls::CA_CERT).display().to_string(),
    );
    assert_refused(&short_run(&home, &wrong_ca), "not signed by a trusted root");

    // The right CA, a name the certificate does not list: verify-full refuses it, verify-ca
    // checks the chain only and goes on to the server (which answers: no data loaded).
    let wrong_name = dsn.replace("host=127.0.0.1", "host=db.invalid hostaddr=127.0.0.1");
    assert_refused(
        &short_run(&home, &wrong_name),
        "does not name host 'db.invalid'",
    );
    let chain_only = wrong_name.replace("verify-full", "verify-ca");
    let o = short_run(&home, &chain_only);
    assert!(
        !text(&o).contains("TLS"),
        "verify-ca must accept the name: {}",
        text(&o)
    );

    // sslcertmode=require (libpq 16): this server asks for no client certificate.
    assert_refused(
        &short_run(&home, &format!("{dsn} sslcertmode=require")),
        "without a valid SSL certificate",
    );

    // A client key others may read is refused before anything connects.
    let client = home.path().join("client");
    tls::write_certificates(&client, "client", now, now + Duration::from_secs(3600)).unwrap();
    let key = client.join(tls::SERVER_KEY);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let with_key = format!(
        "{dsn} sslcert={} sslkey={}",
        client.join(tls::SERVER_CERT).display(),
        key.display()
    );
    assert_refused(&short_run(&home, &with_key), "group or world access");

    // An expired server certificate, swapped in and loaded by the server.
    let dir = inst.dir().join("tls");
    let owner = std::fs::metadata(&dir).unwrap();
    let year = Duration::from_secs(365 * 24 * 3600);
    tls::write_certificates(&dir, "tlsbad", now - 2 * year, now - year).unwrap();
    for name in [tls::CA_CERT, tls::SERVER_CERT, tls::SERVER_KEY] {
        std::os::unix::fs::chown(dir.join(name), Some(owner.uid()), Some(owner.gid())).unwrap();
    }
    assert_eq!(
        support::psql(&inst, "postgres", "SELECT pg_reload_conf()"),
        "t"
    );
    // The server takes the new files when its postmaster has handled the reload's SIGHUP,
    // which a busy machine may delay: try until a connection sees them (a few tries at most).
    let mut o = short_run(&home, &dsn);
    for _ in 0..20 {
        if !o.status.success() {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        o = short_run(&home, &dsn);
    }
    assert_refused(&o, "has expired");
}

#[test]
fn require_refuses_a_server_without_tls_and_prefer_falls_back() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "plain");
    support::prepare_tpcb(&home, "instance:plain");
    let tcp = inst.dsn("tidebench").replacen(
        &format!("host={}", inst.socket_dir.display()),
        "host=127.0.0.1",
        1,
    );
    assert!(tcp.contains("host=127.0.0.1"), "{tcp}");
    assert_refused(
        &short_run(&home, &format!("{tcp} sslmode=require")),
        "does not accept TLS",
    );
    let o = short_run(&home, &format!("{tcp} sslmode=prefer"));
    assert!(
        o.status.success(),
        "prefer must fall back to plaintext: {}",
        text(&o)
    );
    // verify-full without any root certificate is refused before connecting.
    let o = support::tidebench(&home)
        .env("HOME", home.path())
        .args(["run", "-S", "-T", "1s", "--target"])
        .arg(format!("{tcp} sslmode=verify-full"))
        .output()
        .unwrap();
    assert_refused(&o, "sslrootcert");
}

/// The hot-path client on its own: each mode's outcome, and its refusals in the same words.
#[test]
fn pgwire_follows_each_sslmode() {
    let home = support::temp_home();
    let secure = support::start_with(&home, "pwtls", ssl_options());
    let plain = support::start_instance(&home, "pwplain");
    let verified = secure.target_params("tidebench").unwrap();
    let with_mode = |params: &pgwire::ConnectParams, mode: pgwire::SslMode| pgwire::ConnectParams {
        tls: pgwire::Tls::new(
            mode,
            pgwire::Negotiation::Postgres,
            &pgwire::TlsFiles::default(),
        )
        .unwrap(),
        ..params.clone()
    };
    let plain_tcp = pgwire::ConnectParams {
        host: pgwire::Host::Tcp("127.0.0.1".into()),
        password: plain.password(),
        ..plain.connect_params("tidebench")
    };
    support::on_driver_loop(async {
        let encrypted = |params: pgwire::ConnectParams| async move {
            pgwire::Connection::connect(&params)
                .await
                .map(|c| c.is_encrypted())
        };
        assert!(encrypted(verified.clone()).await.unwrap(), "verify-full");
        // A result over many TLS records (16 KiB each) and many rows reads back whole.
        let mut c = pgwire::Connection::connect(&verified).await.unwrap();
        let r = c
            .simple_query("SELECT repeat('x', 100000) FROM generate_series(1, 3)")
            .await
            .unwrap();
        assert_eq!(r.rows(), 3);
        assert_eq!(r.get_str(2, 0).map(str::len), Some(100000));
        c.close().await;
        assert!(encrypted(with_mode(&verified, pgwire::SslMode::Require))
            .await
            .unwrap());
        assert!(!encrypted(with_mode(&verified, pgwire::SslMode::Allow))
            .await
            .unwrap());
        assert!(!encrypted(with_mode(&plain_tcp, pgwire::SslMode::Prefer))
            .await
            .unwrap());
        let e = encrypted(with_mode(&plain_tcp, pgwire::SslMode::Require))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("does not accept TLS"), "{e}");

        let now = SystemTime::now();
        let other = home.path().join("ca2");
        tls::write_certificates(&other, "x", now, now + Duration::from_secs(60)).unwrap();
        let files = pgwire::TlsFiles {
            root_cert: Some(pgwire::RootCert::File(other.join(tls::CA_CERT))),
            ..Default::default()
        };
        let wrong_ca = pgwire::ConnectParams {
            tls: pgwire::Tls::new(
                pgwire::SslMode::VerifyCa,
                pgwire::Negotiation::Postgres,
                &files,
            )
            .unwrap(),
            ..verified.clone()
        };
        let e = encrypted(wrong_ca).await.unwrap_err();
        assert!(
            e.to_string().contains("not signed by a trusted root"),
            "{e}"
        );
    });
}

/// Issue 39: what libpq accepts, every session of a run accepts too, the control sessions
/// (prepare's loading, over tokio) and the benchmark's (pgwire) alike: a server certificate
/// of X.509 version 1 checked by verify-full against an IP address in its CN, and a client
/// certificate of version 1 whose key is encrypted and opened with `sslpassword`; psql
/// connects on the same string first. A revocation list naming the server's certificate
/// then stops the run, in words that say so.
#[test]
fn version_1_certificates_and_encrypted_keys_serve_prepare_and_run() {
    use crate::libpq_conformance::openssl;
    let home = support::temp_home();
    let certs = home.path().join("v1certs");
    std::fs::create_dir_all(&certs).unwrap();
    let ca = "req -x509 -new -nodes -days 3650 -newkey rsa:2048 -keyout ca.key -out ca.crt";
    openssl(&certs, &format!("{ca} -subj /CN=v1-ca"));
    let server = "req -new -nodes -newkey rsa:2048 -keyout server.key -out server.csr";
    openssl(&certs, &format!("{server} -subj /CN=127.0.0.1"));
    let sign = "x509 -req -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650";
    openssl(&certs, &format!("{sign} -in server.csr -out server.crt"));
    let probe = support::start_instance(&home, "v1probe");
    let superuser = probe.superuser.clone();
    let owner = std::fs::metadata(probe.data_dir()).unwrap();
    let key = certs.join("server.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&key, Some(owner.uid()), Some(owner.gid())).unwrap();
    let client = "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes256";
    openssl(
        &certs,
        &format!("{client} -pass pass:v1-secret -out client.key"),
    );
    let csr = "req -new -key client.key -passin pass:v1-secret -out client.csr";
    openssl(&certs, &format!("{csr} -subj /CN={superuser}"));
    openssl(&certs, &format!("{sign} -in client.csr -out client.crt"));
    let client_key = certs.join("client.key");
    std::fs::set_permissions(&client_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&certs, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["ca.crt", "server.crt"] {
        let path = certs.join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let path = |name: &str| certs.join(name).display().to_string();
    let inst = support::start_with(
        &home,
        "v1",
        InstanceOptions {
            settings: vec![
                ("ssl".into(), "on".into()),
                ("ssl_cert_file".into(), path("server.crt")),
                ("ssl_key_file".into(), path("server.key")),
                ("ssl_ca_file".into(), path("ca.crt")),
            ],
            ..InstanceOptions::default()
        },
    );
    // The superuser logs in over TCP by its client certificate only.
    let hba = inst.data_dir().join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    let by_cert = "hostssl all all 127.0.0.1/32 cert\nhost ";
    std::fs::write(&hba, rules.replacen("host ", by_cert, 1)).unwrap();
    assert_eq!(
        support::psql(&inst, "postgres", "SELECT pg_reload_conf()"),
        "t"
    );
    let dsn = format!(
        "host=127.0.0.1 port={} user={superuser} dbname=tidebench sslmode=verify-full \
         sslrootcert={} sslcert={} sslkey={} sslpassword=v1-secret",
        inst.port,
        path("ca.crt"),
        path("client.crt"),
        path("client.key")
    );
    let psql = std::process::Command::new(inst.bin_dir().join("psql"))
        .args([
            "-XAtw",
            "-c",
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        ])
        .arg(&dsn)
        .output()
        .unwrap();
    assert_eq!(text(&psql).trim(), "t", "{}", text(&psql));

    support::prepare_tpcb(&home, &dsn);
    let o = short_run(&home, &dsn);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("v1-secret"), "{}", text(&o));
    // This server asks for a client certificate (ssl_ca_file): sslcertmode=require is met.
    let asked = short_run(&home, &format!("{dsn} sslcertmode=require"));
    assert!(asked.status.success(), "{}", text(&asked));

    // The CA revokes the server's certificate: the list in sslcrl stops the run.
    std::fs::write(certs.join("index.txt"), "").unwrap();
    std::fs::write(certs.join("crlnumber"), "01\n").unwrap();
    let conf = "[ca]\ndefault_ca = own\n[own]\ndatabase = index.txt\ncrlnumber = crlnumber\n\
                default_md = sha256\ndefault_crl_days = 30\n";
    std::fs::write(certs.join("ca.cnf"), conf).unwrap();
    let ca_sign = "ca -config ca.cnf -keyfile ca.key -cert ca.crt";
    openssl(&certs, &format!("{ca_sign} -revoke server.crt"));
    openssl(&certs, &format!("{ca_sign} -gencrl -out ca.crl"));
    let revoked = format!("{dsn} sslcrl={}", path("ca.crl"));
    assert_refused(&short_run(&home, &revoked), "certificate revoked");
}
