//! Pure pieces of wait sampling: whose session a `pg_stat_activity` row is (its
//! `application_name` carries the group and set, see `runner::build::named_for`), and which
//! class its state and wait event fall in (the classes of `results::waits`).

use crate::config::target::APPLICATION_NAME;

/// PostgreSQL keeps this many bytes of an `application_name` (NAMEDATALEN - 1).
const KEPT: usize = 63;

/// The group and set of tidebench's own name `tidebench/GROUP/SET`; `None` for any other
/// name. Group and set names are letters, digits, `-` and `_`, so the split is unambiguous;
/// the set may come back cut short (the server keeps 63 bytes), see [`Owners::owner`].
pub fn parse_app_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(APPLICATION_NAME)?.strip_prefix('/')?;
    let (group, set) = rest.split_once('/')?;
    (!group.is_empty() && !set.is_empty() && !set.contains('/')).then_some((group, set))
}

/// The class and event of a session: `CPU` when active without a wait event, its
/// `wait_event_type` when active and waiting, `IdleInTransaction` / `Idle` when the server
/// waits for the client inside / outside a transaction, `Other` for any other state.
pub fn classify(
    state: Option<&str>,
    wait_type: Option<&str>,
    event: Option<&str>,
) -> (String, String) {
    let event = event.unwrap_or("").to_string();
    match (state, wait_type) {
        (Some("active"), None) => ("CPU".into(), String::new()),
        (Some("active"), Some(t)) => (t.to_string(), event),
        (Some(s), _) if s.starts_with("idle in transaction") => ("IdleInTransaction".into(), event),
        (Some("idle"), _) => ("Idle".into(), String::new()),
        _ => ("Other".into(), state.unwrap_or("").to_string()),
    }
}

/// Who a session is: the run's (group, set) sessions by name and database.
#[derive(Debug, Clone, Default)]
pub struct Owners {
    /// (group, set) of every target.
    sets: Vec<(String, String)>,
    /// Names a target's connection string gives instead of tidebench's: (name, dbname,
    /// group, set).
    named: Vec<(String, String, String, String)>,
    /// Each group's statements, to tell a session's transaction type (see `types`).
    types: Vec<(String, super::types::TypeMap)>,
}

impl Owners {
    /// `targets`: (group, set, the session's application_name, dbname) of each target.
    pub fn new(targets: &[(String, String, String, String)]) -> Owners {
        let mut o = Owners::default();
        for (group, set, app, dbname) in targets {
            let gs = (group.clone(), set.clone());
            if !o.sets.contains(&gs) {
                o.sets.push(gs);
            }
            if app != APPLICATION_NAME {
                o.named
                    .push((app.clone(), dbname.clone(), group.clone(), set.clone()));
            }
        }
        o
    }

    /// Adds the statements of `group`'s workload.
    pub fn with_types(mut self, group: &str, map: super::types::TypeMap) -> Owners {
        if !map.is_empty() {
            self.types.push((group.to_string(), map));
        }
        self
    }

    /// The transaction type of `group`'s session whose query is `query`, or `unknown`.
    pub fn txn_type(&self, group: &str, query: &str) -> &str {
        self.types
            .iter()
            .find(|(g, _)| g == group)
            .and_then(|(_, m)| m.type_of(query))
            .unwrap_or(super::types::UNKNOWN)
    }

    /// The (group, set) of a session named `app` on `dbname`, if it is one of the run's.
    pub fn owner(&self, app: &str, dbname: &str) -> Option<(&str, &str)> {
        if let Some((group, set)) = parse_app_name(app) {
            let cut = app.len() >= KEPT;
            return self
                .sets
                .iter()
                .find(|(g, s)| g == group && (s == set || (cut && s.starts_with(set))))
                .map(|(g, s)| (g.as_str(), s.as_str()));
        }
        self.named
            .iter()
            .find(|(a, d, _, _)| a == app && d == dbname)
            .map(|(_, _, g, s)| (g.as_str(), s.as_str()))
    }

    /// How a blocker is named in the lock summary: its group when it is one of the run's
    /// sessions, else `other:` and its name (or backend type when it has none).
    pub fn blocker(&self, app: &str, dbname: &str, backend_type: &str) -> String {
        match self.owner(app, dbname) {
            Some((g, _)) => g.to_string(),
            None if app.is_empty() => format!("other:{backend_type}"),
            None => format!("other:{app}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidebench_names_give_group_and_set_back() {
        assert_eq!(parse_app_name("tidebench/a/a_1"), Some(("a", "a_1")));
        assert_eq!(
            parse_app_name("tidebench/big-one/x"),
            Some(("big-one", "x"))
        );
        assert_eq!(parse_app_name("tidebench"), None);
        assert_eq!(parse_app_name("tidebench-control"), None);
        assert_eq!(parse_app_name("tidebench/a"), None);
        assert_eq!(parse_app_name("tidebench/a/"), None);
        assert_eq!(parse_app_name("psql"), None);
        assert_eq!(parse_app_name("tidebenchx/a/b"), None);
    }

    #[test]
    fn owners_know_the_runs_sessions_cut_names_and_named_targets() {
        let long_set = "s".repeat(60);
        let owners = Owners::new(&[
            ("a".into(), "a_1".into(), "tidebench".into(), "db".into()),
            (
                "b".into(),
                long_set.clone(),
                "tidebench".into(),
                "db".into(),
            ),
            ("c".into(), "c_1".into(), "myapp".into(), "db2".into()),
        ]);
        assert_eq!(owners.owner("tidebench/a/a_1", "db"), Some(("a", "a_1")));
        assert_eq!(owners.owner("tidebench/a/a_2", "db"), None);
        // The server keeps 63 bytes of the name: the set comes back cut short.
        let cut = &format!("tidebench/b/{long_set}")[..63];
        assert_eq!(owners.owner(cut, "db"), Some(("b", long_set.as_str())));
        assert_eq!(owners.owner("myapp", "db2"), Some(("c", "c_1")));
        assert_eq!(owners.owner("myapp", "db"), None);
        assert_eq!(owners.owner("tidebench-control", "postgres"), None);
        assert_eq!(
            owners.blocker("tidebench/a/a_1", "db", "client backend"),
            "a"
        );
        assert_eq!(owners.blocker("psql", "db", "client backend"), "other:psql");
        assert_eq!(
            owners.blocker("", "", "autovacuum worker"),
            "other:autovacuum worker"
        );
    }

    #[test]
    fn states_and_wait_events_fall_in_their_classes() {
        let c = |s, t, e| classify(s, t, e);
        assert_eq!(c(Some("active"), None, None), ("CPU".into(), "".into()));
        assert_eq!(
            c(Some("active"), Some("Lock"), Some("transactionid")),
            ("Lock".into(), "transactionid".into())
        );
        assert_eq!(
            c(Some("active"), Some("Client"), Some("ClientRead")),
            ("Client".into(), "ClientRead".into())
        );
        assert_eq!(
            c(
                Some("idle in transaction"),
                Some("Client"),
                Some("ClientRead")
            ),
            ("IdleInTransaction".into(), "ClientRead".into())
        );
        assert_eq!(
            c(
                Some("idle in transaction (aborted)"),
                Some("Client"),
                Some("ClientRead")
            ),
            ("IdleInTransaction".into(), "ClientRead".into())
        );
        assert_eq!(
            c(Some("idle"), Some("Client"), Some("ClientRead")),
            ("Idle".into(), "".into())
        );
        assert_eq!(
            c(Some("fastpath function call"), None, None),
            ("Other".into(), "fastpath function call".into())
        );
        assert_eq!(c(None, None, None), ("Other".into(), "".into()));
    }
}
