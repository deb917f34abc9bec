//! The fuzz targets: one `#[test]` per input family, each over its seeds in
//! `tests/fuzz-corpus/`. A target may refuse an input with an error (that is the point); it
//! must never panic, hang or allocate without bound.

use std::path::Path;

use tidebench::config::{self, duration, groups::Source, size, target as spec, TargetSpec};
use tidebench::results::{self, hlog, ResultsDir};
use tidebench::workload::Registry;

use super::{drive, guarded, seeds, BUDGET};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn seeds_are_valid_inputs() {
    // The corpus must start from what tidebench accepts, or the mutations only test refusals.
    for (name, bytes) in seeds("run") {
        let t = text(&bytes);
        let src = Source {
            file: &name,
            text: &t,
        };
        let raw = config::parse_run_text(&src, &Registry).unwrap_or_else(|e| panic!("{e}"));
        config::validate_run(&src, raw, 2, 1, &Registry).unwrap_or_else(|e| panic!("{e}"));
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in seeds("results") {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let run = ResultsDir::open(dir.path()).unwrap();
    run.runtime().unwrap();
    assert!(run.interval_rows().unwrap().all(|r| r.is_ok()));
    assert!(!hlog::read(dir.path()).unwrap().is_empty());
    for (name, bytes) in seeds("experiment") {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    results::experiment::read(dir.path()).unwrap();
}

#[test]
fn run_files_and_plan_validation() {
    let mut corpus: Vec<Vec<u8>> = seeds("run").into_iter().map(|(_, b)| b).collect();
    // Every built-in preset's text too: the richest run files there are.
    for name in config::presets::names() {
        let flags = config::RawRun::default();
        if let Ok((_, t)) = config::run_text(config::RunSource::Preset(name), &flags, 2) {
            corpus.push(t.into_bytes());
        }
    }
    drive("run", &corpus, BUDGET, |n, input| {
        let t = text(&input);
        guarded("run", n, &input, move || {
            let src = Source {
                file: "fuzz.toml",
                text: &t,
            };
            if let Ok(raw) = config::parse_run_text(&src, &Registry) {
                let _ = config::validate_run(&src, raw, 2, 1, &Registry);
            }
        });
    });
}

/// Each line of the text seeds whose names start with `prefix`, as one input.
fn seed_lines(prefix: &str) -> Vec<Vec<u8>> {
    seeds("text")
        .into_iter()
        .filter(|(n, _)| n.starts_with(prefix))
        .flat_map(|(_, b)| {
            text(&b)
                .lines()
                .map(|l| l.as_bytes().to_vec())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn dsns_and_target_specs() {
    let corpus = seed_lines("dsn");
    drive("dsn", &corpus, BUDGET, |n, input| {
        let t = text(&input);
        guarded("dsn", n, &input, move || {
            let _ = TargetSpec::parse(&t);
            let _ = tidebench::target::parse_dsn(&t);
            let redacted = spec::redact_dsn(&t);
            for s in spec::password_spans(&t) {
                // In bounds and on character boundaries, or slicing would panic.
                let _ = &t[s];
            }
            // What is left of a password in the redacted text is the mask, nothing else.
            for s in spec::password_spans(&redacted) {
                assert!(redacted[s].starts_with("********"), "{t:?} -> {redacted:?}");
            }
        });
    });
}

#[test]
fn sizes_and_durations() {
    let corpus = seed_lines("values");
    drive("values", &corpus, BUDGET, |n, input| {
        let t = text(&input);
        guarded("values", n, &input, move || {
            if let Ok(d) = duration::parse_duration(&t) {
                assert!(d <= duration::MAX_DURATION, "{t:?} gave {d:?}");
                let _ = duration::format_duration(d);
            }
            if let Ok(b) = size::parse_size(&t) {
                let _ = size::format_size(b);
            }
        });
    });
}

/// Writes the results seeds into `dir`, `victim` replaced by `input`.
fn results_dir(dir: &Path, victim: &str, input: &[u8]) {
    for (name, bytes) in seeds("results") {
        let content = if name == victim { input } else { &bytes[..] };
        std::fs::write(dir.join(&name), content).expect("write a fuzz results file");
    }
}

#[test]
fn results_dir_readers_and_report() {
    let files = seeds("results");
    // One drive per file, so every reader sees its own file damaged with the rest intact.
    for (victim, bytes) in files {
        let target = format!("results-{victim}");
        drive(&target, &[bytes], BUDGET * 2 / 3, |n, input| {
            let victim = victim.clone();
            let target = target.clone();
            let keep = input.clone();
            guarded(&target, n, &keep, move || {
                let dir = tempfile::tempdir().expect("temp dir");
                results_dir(dir.path(), &victim, &input);
                if let Ok(run) = ResultsDir::open(dir.path()) {
                    let _ = run.runtime();
                    if let Ok(rows) = run.interval_rows() {
                        rows.take(100_000).for_each(drop);
                    }
                    let _ = run.system();
                }
                let _ = hlog::read(dir.path());
                if let Ok(data) = tidebench::report::load::load(dir.path()) {
                    let _ = tidebench::report::html::render(&data);
                }
            });
        });
    }
}

#[test]
fn experiment_files_and_page() {
    let corpus: Vec<Vec<u8>> = seeds("experiment").into_iter().map(|(_, b)| b).collect();
    drive("experiment", &corpus, BUDGET, |n, input| {
        let keep = input.clone();
        guarded("experiment", n, &keep, move || {
            let dir = tempfile::tempdir().expect("temp dir");
            std::fs::write(dir.path().join("experiment.json"), &input).expect("write");
            if let Ok(file) = results::experiment::read(dir.path()) {
                let _ = tidebench::report::experiment::html(&file);
            }
        });
    });
}
