//! The `pgwire` hot-path client against a real managed instance: the three protocols, server
//! errors that leave the session usable, transaction status, authentication over TCP (SCRAM
//! right, wrong and missing password), a statement dropped half-way, and a session the server
//! ends.

use std::time::Duration;

use pgwire::{ConnectParams, Connection, ErrorKind, Host, Param, Protocol, Statement, TxStatus};
use tidebench::instance::{Instance, DEFAULT_DBNAME};

use crate::support::{self, on_driver_loop};

const ADD: Statement = Statement {
    name: "add",
    sql: "SELECT $1::int8 + 1, $2::text, $3::float8, $4::text",
};
const DIVIDE: Statement = Statement {
    name: "divide",
    sql: "SELECT 10 / $1::int",
};
const UPDATE: Statement = Statement {
    name: "update",
    sql: "UPDATE t SET v = v + $1 WHERE id <= $2",
};
const SLEEP: Statement = Statement {
    name: "sleep",
    sql: "SELECT pg_sleep($1::float8), 7",
};

const PROTOCOLS: [Protocol; 3] = [Protocol::Simple, Protocol::Extended, Protocol::Prepared];

fn tcp_params(instance: &Instance, user: &str, password: Option<&str>) -> ConnectParams {
    ConnectParams {
        host: Host::Tcp("127.0.0.1".into()),
        user: user.into(),
        password: password.map(Into::into),
        ..instance.connect_params(DEFAULT_DBNAME)
    }
}

#[test]
fn pgwire_runs_statements_on_all_three_protocols() {
    let home = support::temp_home();
    let instance = support::start_instance(&home, "pgw");
    support::psql(
        &instance,
        DEFAULT_DBNAME,
        "CREATE TABLE t (id int PRIMARY KEY, v int); \
         INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g",
    );
    on_driver_loop(async {
        let mut conn = Connection::connect(&instance.connect_params(DEFAULT_DBNAME))
            .await
            .expect("connect over the unix socket");
        let version = conn.server_param("server_version").expect("server_version");
        assert!(
            version.starts_with(|c: char| c.is_ascii_digit()),
            "{version}"
        );
        assert_eq!(conn.server_param("application_name"), Some("tidebench"));
        assert!(conn.backend_pid() > 0);
        assert_eq!(conn.tx_status(), TxStatus::Idle);

        let text = r"it's a \ and a $1";
        // Prepared twice: the second call reuses the statement parsed by the first.
        for protocol in PROTOCOLS.into_iter().chain([Protocol::Prepared]) {
            let params = [
                Param::Int(-42),
                Param::Text(text),
                Param::Float(2.5),
                Param::Null,
            ];
            let result = conn.execute(protocol, &ADD, &params).await;
            let result = result.unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
            assert_eq!(result.rows(), 1, "{protocol:?}");
            assert_eq!(result.get_i64(0, 0), Some(-41), "{protocol:?}");
            assert_eq!(result.get_str(0, 1), Some(text), "{protocol:?}");
            assert_eq!(result.get_f64(0, 2), Some(2.5), "{protocol:?}");
            assert_eq!(result.get_str(0, 3), None, "{protocol:?}");
            assert!(result.is_null(0, 3), "{protocol:?}");
            assert_eq!(result.affected(), 1, "{protocol:?}");
        }
        let prepared = conn
            .simple_query("SELECT count(*) FROM pg_prepared_statements WHERE name = 'add'")
            .await
            .expect("list prepared statements");
        assert_eq!(prepared.get_i64(0, 0), Some(1));

        for (protocol, limit) in PROTOCOLS.into_iter().zip([3, 5, 10]) {
            let result = conn
                .execute(protocol, &UPDATE, &[Param::Int(1), Param::Int(limit)])
                .await
                .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
            assert_eq!((result.rows(), result.affected()), (0, limit as u64));
        }
        let sum = conn
            .simple_query("SELECT sum(v) FROM t")
            .await
            .expect("sum");
        assert_eq!(sum.get_i64(0, 0), Some(3 + 5 + 10));

        // Several statements in one text: rows of all of them, the last one's count.
        let many = conn
            .simple_query("SELECT 1; SELECT 2 UNION ALL SELECT 3; DELETE FROM t WHERE id > 8")
            .await
            .expect("multi-statement text");
        assert_eq!(many.rows(), 3);
        assert_eq!(many.get_i64(2, 0), Some(3));
        assert_eq!(many.affected(), 2);
        conn.close().await;
    });
}

#[test]
fn pgwire_server_errors_leave_the_session_usable() {
    let home = support::temp_home();
    let instance = support::start_instance(&home, "pgwerr");
    on_driver_loop(async {
        let mut conn = Connection::connect(&instance.connect_params(DEFAULT_DBNAME))
            .await
            .expect("connect");
        for protocol in PROTOCOLS.into_iter().chain([Protocol::Prepared]) {
            let error = match conn.execute(protocol, &DIVIDE, &[Param::Int(0)]).await {
                Ok(_) => panic!("{protocol:?}: 10 / 0 succeeded"),
                Err(e) => e,
            };
            assert_eq!(error.sqlstate(), Some(b"22012"), "{protocol:?}: {error}");
            assert!(!error.is_connection_lost(), "{protocol:?}");
            assert!(matches!(error.kind, ErrorKind::Db { .. }));
            let fine = conn.execute(protocol, &DIVIDE, &[Param::Int(2)]).await;
            let fine = fine.unwrap_or_else(|e| panic!("{protocol:?} after an error: {e}"));
            assert_eq!(fine.get_i64(0, 0), Some(5));
        }

        // A Parse that fails does not count as prepared: fixing the table lets it parse later.
        let later = Statement {
            name: "later",
            sql: "SELECT count(*) FROM created_later",
        };
        let error = conn.execute(Protocol::Prepared, &later, &[]).await.err();
        assert_eq!(error.and_then(|e| e.sqlstate().copied()), Some(*b"42P01"));
        conn.simple_query("CREATE TABLE created_later (x int)")
            .await
            .expect("create table");
        let counted = conn.execute(Protocol::Prepared, &later, &[]).await;
        assert_eq!(counted.expect("parse after the fix").get_i64(0, 0), Some(0));

        conn.simple_query("BEGIN").await.expect("begin");
        assert_eq!(conn.tx_status(), TxStatus::InTransaction);
        let error = conn
            .execute(Protocol::Prepared, &DIVIDE, &[Param::Int(0)])
            .await;
        assert!(error.is_err());
        assert_eq!(conn.tx_status(), TxStatus::Failed);
        let aborted = conn
            .execute(Protocol::Prepared, &DIVIDE, &[Param::Int(1)])
            .await;
        assert_eq!(
            aborted.err().and_then(|e| e.sqlstate().copied()),
            Some(*b"25P02")
        );
        conn.simple_query("ROLLBACK").await.expect("rollback");
        assert_eq!(conn.tx_status(), TxStatus::Idle);

        // A statement dropped while waiting for its answer: the rest is drained next time.
        let dropped = evloop::timeout(
            Duration::from_millis(50),
            conn.execute(Protocol::Prepared, &SLEEP, &[Param::Float(0.3)]),
        )
        .await;
        assert!(dropped.is_err(), "pg_sleep(0.3) answered within 50 ms");
        let next = conn
            .execute(Protocol::Prepared, &SLEEP, &[Param::Float(0.0)])
            .await;
        assert_eq!(
            next.expect("statement after a dropped one").get_i64(0, 1),
            Some(7)
        );
        conn.close().await;
    });
}

#[test]
fn pgwire_authenticates_with_scram_over_tcp() {
    let home = support::temp_home();
    let instance = support::start_instance(&home, "pgwauth");
    support::psql(
        &instance,
        DEFAULT_DBNAME,
        &format!(
            "SET password_encryption = 'scram-sha-256'; \
             CREATE ROLE alice LOGIN PASSWORD 'secret' IN ROLE {}",
            tidebench::instance::PASSWORD_GROUP
        ),
    );
    on_driver_loop(async {
        let conn = Connection::connect(&tcp_params(&instance, "alice", Some("secret")))
            .await
            .expect("alice with the right password");
        assert_eq!(conn.tx_status(), TxStatus::Idle);
        conn.close().await;

        let wrong = Connection::connect(&tcp_params(&instance, "alice", Some("guess"))).await;
        let error = wrong.err().expect("a wrong password is refused");
        assert_eq!(error.sqlstate(), Some(b"28P01"), "{error}");

        let missing = Connection::connect(&tcp_params(&instance, "alice", None)).await;
        let error = missing.err().expect("no password is refused");
        assert!(matches!(error.kind, ErrorKind::Auth(_)), "{error}");
        assert!(error.to_string().contains("PGPASSWORD"), "{error}");

        // The superuser gives a password over TCP too: the one of the instance's passfile.
        let superuser = instance.superuser.clone();
        let none = Connection::connect(&tcp_params(&instance, &superuser, None)).await;
        assert!(none.is_err(), "no TCP login without a password");
        let password = instance.password().expect("the instance's password");
        let conn = Connection::connect(&tcp_params(&instance, &superuser, Some(&password)))
            .await
            .expect("the superuser with its password over TCP");
        conn.close().await;
    });
}

#[test]
fn pgwire_reports_a_session_the_server_ended() {
    let home = support::temp_home();
    let instance = support::start_instance(&home, "pgwkill");
    on_driver_loop(async {
        let params = instance.connect_params(DEFAULT_DBNAME);
        let mut victim = Connection::connect(&params).await.expect("connect victim");
        victim
            .execute(Protocol::Prepared, &DIVIDE, &[Param::Int(1)])
            .await
            .expect("victim works before");
        let mut admin = Connection::connect(&params).await.expect("connect admin");
        let pid = Param::Int(i64::from(victim.backend_pid()));
        let terminate = Statement {
            name: "terminate",
            sql: "SELECT pg_terminate_backend($1::int, 5000)",
        };
        let done = admin.execute(Protocol::Extended, &terminate, &[pid]).await;
        assert_eq!(done.expect("terminate").get_str(0, 0), Some("t"));

        let error = victim
            .execute(Protocol::Prepared, &DIVIDE, &[Param::Int(1)])
            .await
            .err()
            .expect("a statement on a terminated session fails");
        assert!(error.is_connection_lost(), "{error}");
        let again = victim
            .execute(Protocol::Simple, &DIVIDE, &[Param::Int(1)])
            .await;
        assert!(again.err().expect("still lost").is_connection_lost());
        admin.close().await;
    });
}

#[test]
fn pgwire_connect_gives_up_after_the_timeout() {
    on_driver_loop(async {
        // A listener that accepts (the kernel does) but never answers the startup message.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let port = silent.local_addr().expect("local address").port();
        let params = ConnectParams {
            host: Host::Tcp("127.0.0.1".into()),
            port,
            user: "nobody".into(),
            password: None,
            dbname: "none".into(),
            application_name: String::new(),
            options: String::new(),
            connect_timeout: Duration::from_millis(200),
            hostaddr: None,
            tls: pgwire::Tls::disabled(),
            keepalive: pgwire::KeepAlive::default(),
        };
        let error = Connection::connect(&params).await.err().expect("timeout");
        assert!(matches!(error.kind, ErrorKind::Timeout), "{error}");
    });
}

#[test]
fn pgwire_copies_in_and_survives_a_failed_copy() {
    let home = support::temp_home();
    let instance = support::start_instance(&home, "pgwcopy");
    support::psql(
        &instance,
        DEFAULT_DBNAME,
        "CREATE TABLE c (id int PRIMARY KEY, v text)",
    );
    on_driver_loop(async {
        let mut conn = Connection::connect(&instance.connect_params(DEFAULT_DBNAME))
            .await
            .expect("connect");
        // Three chunks of 1,000 rows, the statement after a TRUNCATE in the same round trip.
        let mut chunk = 0;
        let copied = conn
            .copy_in("TRUNCATE c; COPY c FROM STDIN", |text| {
                for id in chunk * 1000..(chunk + 1) * 1000 {
                    text.push_str(&format!("{id}\trow {id}\n"));
                }
                chunk += 1;
                chunk < 3
            })
            .await
            .expect("copy")
            .affected();
        assert_eq!(copied, 3000);
        let r = conn
            .simple_query("SELECT count(*), max(v) FROM c WHERE v = 'row ' || id")
            .await
            .unwrap();
        assert_eq!(r.get_i64(0, 0), Some(3000));
        // A duplicate key fails the COPY at its end; the session goes on, the table unchanged.
        let err = conn
            .copy_in("COPY c FROM STDIN", |text| {
                text.push_str("5\tagain\n");
                false
            })
            .await
            .map(|r| r.affected())
            .expect_err("a duplicate key");
        assert_eq!(err.sqlstate(), Some(b"23505"), "{err}");
        assert_eq!(conn.tx_status(), TxStatus::Idle);
        // Not a COPY at all, and a missing table: errors, and the session still answers.
        let err = conn
            .copy_in("SELECT 1", |_| false)
            .await
            .map(|r| r.affected())
            .expect_err("not a copy");
        assert!(err.to_string().contains("not a COPY"), "{err}");
        let err = conn
            .copy_in("COPY nowhere FROM STDIN", |_| false)
            .await
            .map(|r| r.affected())
            .expect_err("no table");
        assert_eq!(err.sqlstate(), Some(b"42P01"), "{err}");
        let r = conn.simple_query("SELECT count(*) FROM c").await.unwrap();
        assert_eq!(r.get_i64(0, 0), Some(3000));
    });
}
