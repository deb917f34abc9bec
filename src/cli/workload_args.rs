//! The workloads' part of the command line, made from the registry at start-up: the names
//! `--workload` accepts, pgbench-style shorthands (`-S`), each workload's name for its scale
//! (`--warehouses`), and the options workloads declare (`--procedures`, `--think spec`) under
//! their own help heading. A new workload gets its flags without a line here.

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::config::{OptionKind, OptionSpec, OptionValues};
use crate::workload::registry::WORKLOADS;
use crate::workload::Registry;

/// What the workloads' own flags said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadFlags {
    /// The workload a shorthand (`-S`) chose.
    pub shorthand: Option<String>,
    pub options: OptionValues,
}

const HEADING: &str = "Workload options";

/// Adds the workloads' flags to `run`, `prepare` and `check`.
pub fn add(cli: Command) -> Command {
    cli.mut_subcommand("run", |c| options(workloads(c), false))
        .mut_subcommand("prepare", |c| options(workloads(c), true))
        .mut_subcommand("sweep", |c| options(workloads(c), false))
        .mut_subcommand("density", |c| options(workloads(c), false))
        .mut_subcommand("knee", |c| options(workloads(c), false))
        .mut_subcommand("check", |c| {
            let names: Vec<&str> = Registry::names();
            c.mut_arg("workload", |a| {
                a.value_parser(PossibleValuesParser::new(names))
                    .help("Workload whose consistency checks to run")
            })
        })
}

/// `--workload`'s choices, the shorthands and the scale's other names.
fn workloads(mut c: Command) -> Command {
    let names = Registry::names();
    let listed = WORKLOADS
        .iter()
        .map(|k| format!("{} ({})", k.name(), k.about()))
        .collect::<Vec<_>>()
        .join("; ");
    c = c.mut_arg("workload", |a| {
        a.value_parser(PossibleValuesParser::new(names))
            .help(format!("Workload: {}", names_only()))
            .long_help(format!("Workload: {listed}"))
    });
    let shorthands: Vec<String> = WORKLOADS
        .iter()
        .filter(|k| k.shorthand().is_some())
        .map(|k| shorthand_id(k.name()))
        .collect();
    for k in WORKLOADS {
        if let Some(short) = k.shorthand() {
            let id = shorthand_id(k.name());
            let others: Vec<&String> = shorthands.iter().filter(|s| **s != id).collect();
            c = c.arg(
                Arg::new(id.clone())
                    .short(short)
                    .long(k.name())
                    .action(ArgAction::SetTrue)
                    .conflicts_with("workload")
                    .conflicts_with_all(others)
                    .help(format!(
                        "Shorthand for --workload {} (as pgbench -{short})",
                        k.name()
                    )),
            );
        }
        // Workloads of one family share their scale's name (tpcc's and ch's warehouses).
        let taken = |alias: &str| {
            c.get_arguments().any(|a| {
                a.get_id() == "scale" && a.get_all_aliases().is_some_and(|all| all.contains(&alias))
            })
        };
        if let Some(alias) = k.scale_name().filter(|a| !taken(a)) {
            c = c.mut_arg("scale", |a| a.visible_alias(alias));
        }
    }
    let scale_names: Vec<String> = WORKLOADS
        .iter()
        .filter_map(|k| k.scale_name().map(|n| format!("{}: {n}", k.name())))
        .collect();
    if !scale_names.is_empty() {
        c = c.mut_arg("scale", |a| {
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            a.help(format!("{help} ({})", scale_names.join(", ")))
        });
    }
    duration_as_cap(c)
}

/// `--duration`'s help names the workloads whose clients end after a fixed list (their
/// units per client): for them the run lasts until every client is done, the duration a cap.
fn duration_as_cap(c: Command) -> Command {
    let ending: Vec<&str> = WORKLOADS
        .iter()
        .filter(|k| k.units_per_client().is_some())
        .map(|k| k.name())
        .collect();
    if ending.is_empty() || !c.get_arguments().any(|a| a.get_id() == "duration") {
        return c;
    }
    c.mut_arg("duration", |a| {
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        a.help(format!(
            "{help} ({}: until every client has run its fixed list, the duration a cap)",
            ending.join(", ")
        ))
    })
}

fn names_only() -> String {
    Registry::names().join(", ")
}

fn shorthand_id(workload: &str) -> String {
    format!("workload_shorthand_{workload}")
}

/// Every option some workload declares (only those the data depends on when `load_only`),
/// once, under the "Workload options" heading.
fn options(mut c: Command, load_only: bool) -> Command {
    let mut seen: Vec<&str> = Vec::new();
    for k in WORKLOADS {
        for o in k.options() {
            if seen.contains(&o.key) || (load_only && !o.load) {
                continue;
            }
            seen.push(o.key);
            let owners: Vec<&str> = WORKLOADS
                .iter()
                .filter(|w| w.options().iter().any(|x| x.key == o.key))
                .map(|w| w.name())
                .collect();
            let short = WORKLOADS
                .iter()
                .flat_map(|w| w.option_shorts())
                .find(|(key, _)| *key == o.key)
                .map(|(_, letter)| *letter);
            let arg = option_arg(o, &owners.join(", "));
            c = c.arg(match short {
                Some(letter) => arg.short(letter),
                None => arg,
            });
        }
    }
    c
}

fn option_arg(o: &OptionSpec, owners: &str) -> Arg {
    let help = format!("{owners}: {}", o.help);
    let arg = Arg::new(o.key)
        .long(o.flag())
        .help(help)
        .help_heading(HEADING);
    match o.kind {
        OptionKind::Flag => arg.action(ArgAction::SetTrue),
        OptionKind::Choice(words) => arg
            .value_name(o.key.to_uppercase())
            .value_parser(PossibleValuesParser::new(words)),
        OptionKind::Count => arg
            .value_name("N")
            .value_parser(clap::value_parser!(u32).range(1..)),
        OptionKind::Size => arg
            .value_name("SIZE")
            .value_parser(|s: &str| crate::config::size::parse_size(s).map(|_| s.to_string())),
        OptionKind::Cores => arg
            .value_name("CORES")
            .value_parser(clap::value_parser!(f64)),
        OptionKind::Fraction { value_name } => arg
            .value_name(value_name)
            .value_parser(clap::value_parser!(f64)),
        // The range is checked with the run file's values, so `-1` must reach it.
        OptionKind::Number { .. } => arg
            .value_name("N")
            .allow_negative_numbers(true)
            .value_parser(clap::value_parser!(i64)),
        OptionKind::Text { value_name } => arg.value_name(value_name),
        // Checked against the names when the options are validated, with the others.
        OptionKind::Names(_) => arg.value_name("NAME,..."),
        OptionKind::Entries {
            short, value_name, ..
        } => {
            let arg = arg.value_name(value_name).action(ArgAction::Append);
            match short {
                Some(c) => arg.short(c),
                None => arg,
            }
        }
    }
}

/// The workloads' flags in a parsed `run` or `prepare` (`load_only`: the options the data
/// depends on), or none (`with_options` false).
pub fn read(m: &ArgMatches, with_options: bool, load_only: bool) -> WorkloadFlags {
    let mut shorthand = WORKLOADS
        .iter()
        .filter(|k| k.shorthand().is_some())
        .find(|k| m.get_flag(&shorthand_id(k.name())))
        .map(|k| k.name().to_string());
    let mut options = OptionValues::new();
    if with_options {
        for k in WORKLOADS {
            for o in k.options() {
                if options.contains_key(o.key) || (load_only && !o.load) {
                    continue;
                }
                let value: Option<toml::Value> = match o.kind {
                    OptionKind::Flag => m.get_flag(o.key).then_some(true.into()),
                    OptionKind::Choice(_) => m.get_one::<String>(o.key).map(|s| s.clone().into()),
                    OptionKind::Count => m.get_one::<u32>(o.key).map(|n| i64::from(*n).into()),
                    OptionKind::Size => m.get_one::<String>(o.key).map(|s| s.clone().into()),
                    OptionKind::Cores | OptionKind::Fraction { .. } => {
                        m.get_one::<f64>(o.key).map(|c| (*c).into())
                    }
                    OptionKind::Number { .. } => m.get_one::<i64>(o.key).map(|n| (*n).into()),
                    OptionKind::Text { .. } => m.get_one::<String>(o.key).map(|s| s.clone().into()),
                    OptionKind::Names(_) => m.get_one::<String>(o.key).map(|s| {
                        let names = s.split(',').map(str::trim).filter(|n| !n.is_empty());
                        toml::Value::Array(names.map(|n| n.to_string().into()).collect())
                    }),
                    OptionKind::Entries { selects, .. } => {
                        m.get_many::<String>(o.key).map(|given| {
                            // `-f x.sql` alone means the workload that takes scripts.
                            let named = m.try_get_one::<String>("workload").ok().flatten();
                            if selects && shorthand.is_none() && named.is_none() {
                                shorthand = Some(k.name().to_string());
                            }
                            toml::Value::Array(given.map(|s| s.clone().into()).collect())
                        })
                    }
                };
                if let Some(v) = value {
                    options.insert(o.key.to_string(), v);
                }
            }
        }
    }
    WorkloadFlags { shorthand, options }
}

#[cfg(test)]
mod tests {
    use crate::cli::args::parse_from;

    #[test]
    fn workload_options_and_shorthands_parse_into_values() {
        let (_, f) = parse_from([
            "tidebench",
            "run",
            "--workload",
            "tpcc",
            "--procedures",
            "--think",
            "spec",
            "--clients-per-warehouse",
            "10",
            "--warehouses",
            "2",
        ])
        .unwrap();
        assert_eq!(f.shorthand, None);
        assert_eq!(
            f.options.get("procedures"),
            Some(&toml::Value::Boolean(true))
        );
        assert_eq!(
            f.options.get("think"),
            Some(&toml::Value::String("spec".into()))
        );
        assert_eq!(
            f.options.get("clients_per_warehouse"),
            Some(&toml::Value::Integer(10))
        );
        let (_, f) = parse_from(["tidebench", "run", "-N"]).unwrap();
        assert_eq!(f.shorthand.as_deref(), Some("simple-update"));
        assert!(parse_from(["tidebench", "run", "-S", "-N"]).is_err());
        assert!(parse_from(["tidebench", "run", "--workload", "nope"]).is_err());
        assert!(parse_from(["tidebench", "run", "--clients-per-warehouse", "0"]).is_err());
    }
}
