//! The profiles of compared runs side by side (issue 29): for each profiled subject the
//! baseline shares with the other side's, the split by kind of code and then the functions
//! whose share of the samples moved most. This is how the Cybertec study's 51 % in `hypercall_page`
//! shows up: a function near 0 on bare metal that leads the virtual side.
//!
//! Subjects pair by kind and name; when the two runs profiled one database server each under
//! different names (`native` and `virtual`), those two pair.

use std::fmt::Write as _;
use std::path::Path;

use super::runs::aligned;
use crate::report::html::markup::esc;
use crate::results::profile::{FunctionShare, ProfileFile, ProfiledSubject};

/// Function rows per pair of subjects.
const ROWS: usize = 15;
/// Longest function name shown (Rust's and C++'s run to hundreds of characters).
const NAME_WIDTH: usize = 60;

/// One paired subject's comparison: its label and its rows (name, base %, other %, change).
pub struct SubjectDiff {
    pub label: String,
    pub rows: Vec<[String; 4]>,
}

/// The diffs between the baseline's profile (`dirs[0]`) and each other side's; empty when the
/// baseline or a side has no profile. A side that is a dir of runs is read from its first run.
pub fn diffs(dirs: &[std::path::PathBuf]) -> Vec<(usize, Vec<SubjectDiff>)> {
    let Some(base) = dirs.first().and_then(|d| first_profile(d)) else {
        return Vec::new();
    };
    dirs.iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, d)| Some((i, diff_profiles(&base, &first_profile(d)?))))
        .collect()
}

fn first_profile(dir: &Path) -> Option<ProfileFile> {
    let runs = super::runs::runs_in(dir).ok()?;
    ProfileFile::read(runs.first()?).ok().flatten()
}

/// Pairs the subjects of two profiles and compares each pair.
pub fn diff_profiles(base: &ProfileFile, other: &ProfileFile) -> Vec<SubjectDiff> {
    let (bs, os) = (servers(base), servers(other));
    let mut out = Vec::new();
    for b in base.subjects.iter().filter(|s| s.samples > 0) {
        let same = other
            .subjects
            .iter()
            .find(|o| o.kind == b.kind && o.name == b.name && o.samples > 0);
        let paired = same
            .or_else(|| (bs.len() == 1 && os.len() == 1 && bs[0].name == b.name).then(|| os[0]));
        if let Some(o) = paired {
            out.push(diff_subjects(b, o));
        }
    }
    out
}

/// The database servers a profile holds samples of (managed instances and local servers).
fn servers(p: &ProfileFile) -> Vec<&ProfiledSubject> {
    p.subjects
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "instance" | "server") && s.samples > 0)
        .collect()
}

fn diff_subjects(b: &ProfiledSubject, o: &ProfiledSubject) -> SubjectDiff {
    let label = if b.name == o.name {
        b.heading()
    } else {
        format!("{} vs {}", b.heading(), o.heading())
    };
    let mut rows = Vec::new();
    for (name, x, y) in [
        ("(kernel)", b.split.kernel, o.split.kernel),
        ("(postgres)", b.split.postgres, o.split.postgres),
        ("(libc)", b.split.libc, o.split.libc),
        ("(other)", b.split.other, o.split.other),
    ] {
        rows.push(row(name.to_string(), x, y));
    }
    // Every function in either top list; one missing from a list had less than its last.
    let mut functions: Vec<(String, &FunctionShare, f64, f64)> = Vec::new();
    for f in b.top_self.iter().chain(&o.top_self) {
        if functions
            .iter()
            .any(|(_, g, ..)| g.function == f.function && g.dso == f.dso)
        {
            continue;
        }
        let share = |s: &ProfiledSubject| {
            s.top_self
                .iter()
                .find(|g| g.function == f.function && g.dso == f.dso)
                .map_or(0.0, |g| g.pct)
        };
        functions.push((f.label(NAME_WIDTH), f, share(b), share(o)));
    }
    functions.sort_by(|a, b| {
        (b.3 - b.2)
            .abs()
            .total_cmp(&(a.3 - a.2).abs())
            .then_with(|| a.0.cmp(&b.0))
    });
    for (name, _, x, y) in functions.into_iter().take(ROWS) {
        rows.push(row(name, x, y));
    }
    SubjectDiff { label, rows }
}

fn row(name: String, x: f64, y: f64) -> [String; 4] {
    [
        name,
        format!("{x:.2}"),
        format!("{y:.2}"),
        format!("{:+.2}", y - x),
    ]
}

/// The terminal text: one table per paired subject.
pub fn table(dirs: &[std::path::PathBuf]) -> String {
    let mut out = String::new();
    for (side, subjects) in diffs(dirs) {
        for s in subjects {
            let _ = writeln!(
                out,
                "\nwhere the time goes, {}: % of samples, [1] against [{}] (self time; \
                 largest changes first)",
                s.label,
                side + 1
            );
            let mut rows = vec![vec![
                "function".to_string(),
                "[1] %".into(),
                format!("[{}] %", side + 1),
                "change".into(),
            ]];
            rows.extend(s.rows.into_iter().map(|r| r.to_vec()));
            out.push_str(&aligned(&rows));
        }
    }
    out
}

/// The same as HTML tables, for `compare --html`.
pub fn html(dirs: &[std::path::PathBuf]) -> String {
    let mut p = String::new();
    for (side, subjects) in diffs(dirs) {
        for s in subjects {
            let _ = write!(
                p,
                "<h2>Where the time goes: {}, [1] against [{}]</h2>\n<table><tr><th>function</th>\
                 <th>[1] %</th><th>[{}] %</th><th>change</th></tr>\n",
                esc(&s.label),
                side + 1,
                side + 1
            );
            for r in &s.rows {
                let _ = writeln!(
                    p,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&r[0]),
                    r[1],
                    r[2],
                    r[3]
                );
            }
            p.push_str("</table>\n");
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::profile::DsoSplit;

    fn subject(name: &str, fns: &[(&str, f64)], kernel: f64) -> ProfiledSubject {
        ProfiledSubject {
            name: name.into(),
            kind: "instance".into(),
            samples: 100,
            split: DsoSplit {
                kernel,
                postgres: 100.0 - kernel,
                ..DsoSplit::default()
            },
            top_self: fns
                .iter()
                .map(|(f, pct)| FunctionShare {
                    function: f.to_string(),
                    dso: "postgres".into(),
                    samples: *pct as u64,
                    pct: *pct,
                })
                .collect(),
            ..ProfiledSubject::default()
        }
    }

    #[test]
    fn the_function_that_moved_most_comes_first_and_lone_servers_pair() {
        let mut native = ProfileFile::new();
        native.subjects.push(subject(
            "native",
            &[("ExecScan", 30.0), ("LWLockAcquire", 10.0)],
            20.0,
        ));
        let mut virt = ProfileFile::new();
        virt.subjects.push(subject(
            "virtual",
            &[("hypercall_page", 51.0), ("ExecScan", 20.0)],
            70.0,
        ));
        let d = diff_profiles(&native, &virt);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].label, "instance native vs instance virtual");
        assert_eq!(
            d[0].rows[0],
            ["(kernel)", "20.00", "70.00", "+50.00"].map(String::from)
        );
        assert_eq!(
            d[0].rows[4],
            ["hypercall_page [postgres]", "0.00", "51.00", "+51.00"].map(String::from)
        );
        assert_eq!(d[0].rows[5][0], "ExecScan [postgres]");
        assert_eq!(d[0].rows[5][3], "-10.00");
    }
}
