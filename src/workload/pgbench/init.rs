//! `pgbench -i`'s options (PostgreSQL 15) as load options of the pgbench workloads:
//! `--init-steps` (`-I`), `--fillfactor` (`-F`), `--partitions`, `--partition-method`,
//! `--unlogged-tables`, `--foreign-keys`, `--tablespace`, `--index-tablespace`, `--no-vacuum`
//! (`-n`) and `--quiet` (`-q`), checked as pgbench checks them, the same way on the command line
//! and in run files, and resolved into what the loader does: [`InitOptions`].
//!
//! How the steps are carried out (see `loader`): a list that creates the tables (`t`), with at
//! most drops (`d`) before it and no drop or create after it, runs in tidebench's staging
//! schema and is moved in whole at the end; any other list (`-I g`, `-I vp`, `-I f`, `-I dtdt`)
//! runs in place, step by step, as pgbench does.

use crate::config::{OptionKind, OptionSpec, OptionValues};

pub const INIT_STEPS: &str = "init_steps";
pub const FILLFACTOR: &str = "fillfactor";
pub const PARTITIONS: &str = "partitions";
pub const PARTITION_METHOD: &str = "partition_method";
pub const UNLOGGED_TABLES: &str = "unlogged_tables";
pub const FOREIGN_KEYS: &str = "foreign_keys";
pub const TABLESPACE: &str = "tablespace";
pub const INDEX_TABLESPACE: &str = "index_tablespace";
pub const NO_VACUUM: &str = "no_vacuum";
pub const QUIET: &str = "quiet";

/// pgbench's default `-I`.
pub const DEFAULT_STEPS: &str = "dtgvp";
/// pgbench's default `-F`: tables are created `with (fillfactor=100)` unless told otherwise.
pub const DEFAULT_FILLFACTOR: u32 = 100;
/// The step letters pgbench 15 knows (a blank is allowed and ignored).
const STEP_LETTERS: &str = "dtgGvpf";

/// The load options, in `pgbench --help`'s order. `load: true`: `prepare` takes them (a run
/// accepts them too, as a run file's description of its data, and they change nothing there).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: INIT_STEPS,
        kind: OptionKind::Text {
            value_name: "[dtgGvpf]+",
        },
        help: "pgbench -i's steps, in order: d drop, t create tables, g generate rows \
               client-side, G server-side, v vacuum, p primary keys, f foreign keys \
               [default: dtgvp]",
        load: true,
    },
    OptionSpec {
        key: FILLFACTOR,
        kind: OptionKind::Number { min: 10, max: 100 },
        help: "fill factor of branches, tellers and accounts (as pgbench -F) [default: 100]",
        load: true,
    },
    OptionSpec {
        key: NO_VACUUM,
        kind: OptionKind::Flag,
        help: "leave out the vacuum step (v) of --init-steps (as pgbench -i -n)",
        load: true,
    },
    OptionSpec {
        key: QUIET,
        kind: OptionKind::Flag,
        help: "accepted as pgbench -i -q; tidebench's own load progress is unchanged",
        load: true,
    },
    OptionSpec {
        key: FOREIGN_KEYS,
        kind: OptionKind::Flag,
        // The same key and text as tpch's: an option key means one thing for every workload.
        help: "add the foreign keys after the load, off by default (pgbench: adds f to \
               --init-steps; tpch: clause 1.4.2.3's)",
        load: true,
    },
    OptionSpec {
        key: INDEX_TABLESPACE,
        kind: OptionKind::Text {
            value_name: "TABLESPACE",
        },
        help: "create the primary keys' indexes in this tablespace",
        load: true,
    },
    OptionSpec {
        key: PARTITION_METHOD,
        kind: OptionKind::Choice(&["range", "hash"]),
        help: "partition pgbench_accounts by range or hash of aid [default: range]",
        load: true,
    },
    OptionSpec {
        key: PARTITIONS,
        kind: OptionKind::Number {
            min: 0,
            max: i32::MAX as i64,
        },
        help: "partition pgbench_accounts into N parts, 0 for none [default: 0]",
        load: true,
    },
    OptionSpec {
        key: TABLESPACE,
        kind: OptionKind::Text {
            value_name: "TABLESPACE",
        },
        help: "create the tables in this tablespace",
        load: true,
    },
    OptionSpec {
        key: UNLOGGED_TABLES,
        kind: OptionKind::Flag,
        help: "create the tables unlogged",
        load: true,
    },
];

/// pgbench's letters for the options that have one (the others are long only, as there).
pub const SHORTS: &[(&str, char)] = &[
    (INIT_STEPS, 'I'),
    (FILLFACTOR, 'F'),
    (NO_VACUUM, 'n'),
    (QUIET, 'q'),
];

/// One of `-I`'s steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Drop,
    Create,
    ClientGenerate,
    ServerGenerate,
    Vacuum,
    PrimaryKeys,
    ForeignKeys,
}

impl Step {
    fn from_letter(c: char) -> Option<Step> {
        Some(match c {
            'd' => Step::Drop,
            't' => Step::Create,
            'g' => Step::ClientGenerate,
            'G' => Step::ServerGenerate,
            'v' => Step::Vacuum,
            'p' => Step::PrimaryKeys,
            'f' => Step::ForeignKeys,
            _ => return None,
        })
    }

    /// The name of the step's time in the load's summary; drops and creates take no time
    /// worth showing. Client-side generation keeps the name it always had here.
    pub fn timed_label(self) -> Option<&'static str> {
        match self {
            Step::Drop | Step::Create => None,
            Step::ClientGenerate => Some("copy"),
            Step::ServerGenerate => Some("server-side generate"),
            Step::Vacuum => Some("vacuum"),
            Step::PrimaryKeys => Some("primary keys"),
            Step::ForeignKeys => Some("foreign keys"),
        }
    }
}

/// How pgbench_accounts is partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionMethod {
    Range,
    Hash,
}

impl PartitionMethod {
    pub fn as_sql(self) -> &'static str {
        match self {
            PartitionMethod::Range => "range",
            PartitionMethod::Hash => "hash",
        }
    }
}

/// What `pgbench -i` with these options creates and does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitOptions {
    /// In order, blanks left out; `-n` has removed the vacuums and `--foreign-keys` added `f`.
    pub steps: Vec<Step>,
    pub fillfactor: u32,
    /// 0: pgbench_accounts is a plain table.
    pub partitions: u32,
    pub method: PartitionMethod,
    pub unlogged: bool,
    pub tablespace: Option<String>,
    pub index_tablespace: Option<String>,
}

impl Default for InitOptions {
    fn default() -> InitOptions {
        InitOptions {
            steps: parse_steps(DEFAULT_STEPS).unwrap_or_default(),
            fillfactor: DEFAULT_FILLFACTOR,
            partitions: 0,
            method: PartitionMethod::Range,
            unlogged: false,
            tablespace: None,
            index_tablespace: None,
        }
    }
}

impl InitOptions {
    /// The options as given (each already of its kind, see [`OPTIONS`]), checked together as
    /// pgbench checks them; the message says what is wrong and what to give instead.
    pub fn from_values(values: &OptionValues) -> Result<InitOptions, String> {
        let text = |key: &str| values.get(key).and_then(|v| v.as_str());
        let int = |key: &str| values.get(key).and_then(|v| v.as_integer());
        let flag = |key: &str| values.get(key).and_then(|v| v.as_bool()) == Some(true);
        let mut steps = parse_steps(text(INIT_STEPS).unwrap_or(DEFAULT_STEPS))?;
        if flag(NO_VACUUM) {
            steps.retain(|s| *s != Step::Vacuum);
        }
        if flag(FOREIGN_KEYS) && !steps.contains(&Step::ForeignKeys) {
            steps.push(Step::ForeignKeys);
        }
        let partitions = int(PARTITIONS).unwrap_or(0);
        let method = match text(PARTITION_METHOD) {
            None | Some("range") => PartitionMethod::Range,
            Some(_) => PartitionMethod::Hash,
        };
        if text(PARTITION_METHOD).is_some() && partitions < 1 {
            return Err(
                "partition_method needs partitions of at least 1 (pgbench: \"--partition-method \
                 requires greater than zero --partitions\"); add --partitions N or leave out \
                 --partition-method"
                    .into(),
            );
        }
        Ok(InitOptions {
            steps,
            fillfactor: int(FILLFACTOR).map_or(DEFAULT_FILLFACTOR, |f| f as u32),
            partitions: partitions.max(0) as u32,
            method,
            unlogged: flag(UNLOGGED_TABLES),
            tablespace: tablespace(TABLESPACE, text(TABLESPACE))?,
            index_tablespace: tablespace(INDEX_TABLESPACE, text(INDEX_TABLESPACE))?,
        })
    }

    /// The steps split where staging applies: `Some((drops_first, rest))` when the list
    /// creates the tables with only drops before and neither drop nor create after, so
    /// everything from the create on can be built in the staging schema and moved in whole;
    /// `None` when the steps must run in place, in order, as pgbench runs them.
    pub fn staged(&self) -> Option<(bool, &[Step])> {
        let create = self.steps.iter().position(|s| *s == Step::Create)?;
        let (before, after) = (&self.steps[..create], &self.steps[create + 1..]);
        let only_drops = before.iter().all(|s| *s == Step::Drop);
        let clean_after = after
            .iter()
            .all(|s| !matches!(s, Step::Drop | Step::Create));
        (only_drops && clean_after).then_some((!before.is_empty(), after))
    }

    /// Whether a step drops the tables or replaces their rows (`d`, `g`, `G`): on tables that
    /// exist, tidebench wants `--force` for that.
    pub fn replaces_rows(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Drop | Step::ClientGenerate | Step::ServerGenerate))
    }
}

/// `-I`'s text as steps, refused as pgbench 15 refuses it: empty, or a letter it does not know.
fn parse_steps(text: &str) -> Result<Vec<Step>, String> {
    if text.is_empty() {
        return Err(format!(
            "init_steps is empty: no initialization steps specified; give some of \
             \"{STEP_LETTERS}\", e.g. --init-steps {DEFAULT_STEPS} (pgbench's default)"
        ));
    }
    text.chars()
        .filter(|c| *c != ' ')
        .map(|c| {
            Step::from_letter(c).ok_or_else(|| {
                format!(
                    "init_steps \"{text}\": unrecognized initialization step \"{c}\". Allowed \
                     step characters are: \"{STEP_LETTERS}\"; e.g. --init-steps \
                      {DEFAULT_STEPS} (pgbench's default)"
                )
            })
        })
        .collect()
}

/// A tablespace name as given; an empty one names none, so it is refused (pgbench passes it
/// on and the server refuses the zero-length name).
fn tablespace(key: &str, given: Option<&str>) -> Result<Option<String>, String> {
    match given {
        Some("") => Err(format!(
            "{key} is empty; give the name of a tablespace (`CREATE TABLESPACE` makes one), or \
             leave it out for the database's default"
        )),
        other => Ok(other.map(str::to_string)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(pairs: &[(&str, toml::Value)]) -> Result<InitOptions, String> {
        let values: OptionValues = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        InitOptions::from_values(&values)
    }

    #[test]
    fn defaults_are_pgbench_15s() {
        let o = init(&[]).unwrap();
        assert_eq!(o, InitOptions::default());
        use Step::*;
        assert_eq!(o.steps, [Drop, Create, ClientGenerate, Vacuum, PrimaryKeys]);
        assert_eq!((o.fillfactor, o.partitions), (100, 0));
        assert_eq!(o.staged(), Some((true, &o.steps[2..])));
    }

    #[test]
    fn no_vacuum_and_foreign_keys_edit_the_steps_as_pgbench() {
        use Step::*;
        let o = init(&[
            (INIT_STEPS, "dtvgvp".into()),
            (NO_VACUUM, true.into()),
            (FOREIGN_KEYS, true.into()),
        ])
        .unwrap();
        assert_eq!(
            o.steps,
            [Drop, Create, ClientGenerate, PrimaryKeys, ForeignKeys]
        );
        // `f` given already: not added twice.
        let o = init(&[(INIT_STEPS, "d t G f".into()), (FOREIGN_KEYS, true.into())]).unwrap();
        assert_eq!(o.steps, [Drop, Create, ServerGenerate, ForeignKeys]);
    }

    #[test]
    fn bad_steps_are_refused_with_pgbench_words_and_the_fix() {
        let e = init(&[(INIT_STEPS, "dta".into())]).unwrap_err();
        assert!(e.contains("unrecognized initialization step \"a\""), "{e}");
        assert!(
            e.contains("Allowed step characters are: \"dtgGvpf\"")
                && e.contains("--init-steps dtgvp"),
            "{e}"
        );
        let e = init(&[(INIT_STEPS, "".into())]).unwrap_err();
        assert!(e.contains("no initialization steps specified"), "{e}");
    }

    #[test]
    fn partition_method_needs_partitions() {
        let e = init(&[(PARTITION_METHOD, "hash".into())]).unwrap_err();
        assert!(e.contains("--partitions N"), "{e}");
        let o = init(&[(PARTITIONS, 3.into())]).unwrap();
        assert_eq!((o.partitions, o.method), (3, PartitionMethod::Range));
        let o = init(&[(PARTITIONS, 2.into()), (PARTITION_METHOD, "hash".into())]).unwrap();
        assert_eq!(o.method, PartitionMethod::Hash);
        assert!(init(&[(TABLESPACE, "".into())]).is_err());
    }

    #[test]
    fn staging_applies_only_to_lists_that_create_once_after_drops() {
        for (steps, staged) in [
            ("dtgvp", true),
            ("tgvp", true),
            ("dt", true),
            ("dtGvpf", true),
            ("dtgG", true),
            ("g", false),
            ("vp", false),
            ("f", false),
            ("dtdt", false),
            ("gdt", false),
            ("tdg", false),
        ] {
            let o = init(&[(INIT_STEPS, steps.into())]).unwrap();
            assert_eq!(o.staged().is_some(), staged, "{steps}");
        }
        let o = init(&[(INIT_STEPS, "vp".into())]).unwrap();
        assert!(!o.replaces_rows());
        let o = init(&[(INIT_STEPS, "g".into())]).unwrap();
        assert!(o.replaces_rows());
    }

    #[test]
    fn every_option_has_one_spec_and_shorts_name_options() {
        for (key, _) in SHORTS {
            assert!(OPTIONS.iter().any(|o| o.key == *key), "{key}");
        }
        assert!(OPTIONS.iter().all(|o| o.load));
    }
}
