//! From samples to profiles: each sample in the window goes to the subjects whose process tree
//! holds its process (and to the host's, when there is one), and each subject folds its
//! stacks and counts its functions by self and by total samples.

use std::collections::HashMap;

use crate::results::profile::{DsoSplit, FunctionShare};

/// How many functions `profile.json` keeps per list (the report shows 20).
pub const TOP_FUNCTIONS: usize = 50;
/// Deepest parent chain followed from a sample's process to a subject's root.
const MAX_DEPTH: usize = 64;

/// Which subject each process belongs to: the roots' trees, as the fork records build them.
pub struct Attribution {
    roots: Vec<(u32, usize)>,
    parents: HashMap<u32, u32>,
    memo: HashMap<u32, Option<usize>>,
}

impl Attribution {
    /// `roots`: (root pid, subject index).
    pub fn new(roots: Vec<(u32, usize)>) -> Attribution {
        Attribution {
            roots,
            parents: HashMap::new(),
            memo: HashMap::new(),
        }
    }

    /// Process `child` was made by `parent`. A pid may be reused, so what was known of it goes.
    pub fn forked(&mut self, child: u32, parent: u32) {
        self.parents.insert(child, parent);
        self.memo.remove(&child);
    }

    /// The subject whose tree holds `pid`, if any.
    pub fn subject_of(&mut self, pid: u32) -> Option<usize> {
        if let Some(known) = self.memo.get(&pid) {
            return *known;
        }
        let mut at = pid;
        let mut found = None;
        for _ in 0..MAX_DEPTH {
            if let Some((_, s)) = self.roots.iter().find(|(root, _)| *root == at) {
                found = Some(*s);
                break;
            }
            match self.parents.get(&at) {
                Some(&p) if p != at && p != 0 => at = p,
                _ => break,
            }
        }
        self.memo.insert(pid, found);
        found
    }
}

/// The kind of code a frame is in, for the split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsoKind {
    Kernel,
    Postgres,
    Libc,
    Other,
}

pub fn dso_kind(dso: &str) -> DsoKind {
    let base = basename(dso);
    if dso.starts_with("[kernel") || dso.starts_with("[guest.kernel") || dso.ends_with(".ko") {
        DsoKind::Kernel
    } else if base == "postgres" || dso.contains("/postgresql/") {
        // Extensions (`lib/*.so` under the PostgreSQL tree) count as PostgreSQL.
        DsoKind::Postgres
    } else if base.starts_with("libc.so") || base.starts_with("libc-") || base.starts_with("ld-") {
        DsoKind::Libc
    } else {
        DsoKind::Other
    }
}

/// `/usr/lib/x86_64-linux-gnu/libc.so.6` → `libc.so.6`; `[kernel.kallsyms]` stays.
pub fn basename(dso: &str) -> &str {
    dso.rsplit('/').next().unwrap_or(dso)
}

/// One subject's samples, folded.
#[derive(Debug, Default)]
pub struct Folder {
    pub samples: u64,
    stacks: HashMap<String, u64>,
    by_self: HashMap<(String, String), u64>,
    by_total: HashMap<(String, String), u64>,
    split: [u64; 4],
    unknown: u64,
    /// Leaf frames in the kernel without a name: kernel symbols hidden from perf.
    pub kernel_unknown: u64,
    /// Reused for the functions already counted in one sample.
    seen: Vec<(String, String)>,
}

impl Folder {
    /// One sample: its process name and its frames, leaf first.
    pub fn add(&mut self, comm: &str, frames: &[(String, String)]) {
        self.samples += 1;
        let mut key = String::with_capacity(16 + frames.len() * 24);
        key.push_str(&clean(comm));
        for (sym, dso) in frames.iter().rev() {
            key.push(';');
            key.push_str(&frame_name(sym, dso));
        }
        *self.stacks.entry(key).or_insert(0) += 1;
        let (leaf_sym, leaf_dso) = match frames.first() {
            Some((s, d)) => (s.as_str(), d.as_str()),
            None => ("[unknown]", ""),
        };
        let kind = dso_kind(leaf_dso);
        self.split[kind as usize] += 1;
        if leaf_sym == "[unknown]" {
            self.unknown += 1;
            if kind == DsoKind::Kernel {
                self.kernel_unknown += 1;
            }
        }
        *self
            .by_self
            .entry(function_key(leaf_sym, leaf_dso))
            .or_insert(0) += 1;
        self.seen.clear();
        for (sym, dso) in frames {
            let key = function_key(sym, dso);
            if !self.seen.contains(&key) {
                *self.by_total.entry(key.clone()).or_insert(0) += 1;
                self.seen.push(key);
            }
        }
    }

    /// Folded stacks, sorted (so the file is the same for the same samples).
    pub fn folded(&self) -> Vec<(&str, u64)> {
        let mut out: Vec<(&str, u64)> = self.stacks.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        out.sort_unstable();
        out
    }

    pub fn split(&self) -> DsoSplit {
        let pct = |n: u64| pct(n, self.samples);
        DsoSplit {
            kernel: pct(self.split[DsoKind::Kernel as usize]),
            postgres: pct(self.split[DsoKind::Postgres as usize]),
            libc: pct(self.split[DsoKind::Libc as usize]),
            other: pct(self.split[DsoKind::Other as usize]),
        }
    }

    pub fn unknown_pct(&self) -> f64 {
        pct(self.unknown, self.samples)
    }

    pub fn top_self(&self) -> Vec<FunctionShare> {
        top(&self.by_self, self.samples)
    }

    pub fn top_total(&self) -> Vec<FunctionShare> {
        top(&self.by_total, self.samples)
    }
}

/// A function is its name and its file: `[unknown]` of postgres and of libc are two.
fn function_key(sym: &str, dso: &str) -> (String, String) {
    (sym.to_string(), basename(dso).to_string())
}

/// A frame in a folded stack: its symbol, or `[file]` when it has none (as stackcollapse
/// writes it), with the separator `;` kept out.
fn frame_name(sym: &str, dso: &str) -> String {
    if sym == "[unknown]" || sym.is_empty() {
        let base = basename(dso);
        if base.is_empty() {
            return "[unknown]".into();
        }
        return format!("[{}]", base.trim_start_matches('[').trim_end_matches(']'));
    }
    clean(sym)
}

/// Folded stacks split frames on `;` and the count on the last space.
fn clean(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

fn top(counts: &HashMap<(String, String), u64>, total: u64) -> Vec<FunctionShare> {
    let mut all: Vec<(&(String, String), &u64)> = counts.iter().collect();
    all.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    all.into_iter()
        .take(TOP_FUNCTIONS)
        .map(|((function, dso), n)| FunctionShare {
            function: function.clone(),
            dso: dso.clone(),
            samples: *n,
            pct: pct(*n, total),
        })
        .collect()
}

/// Percent with 2 decimals; 0 of nothing.
pub fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        return 0.0;
    }
    (n as f64 * 10_000.0 / of as f64).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(s, d)| (s.to_string(), d.to_string()))
            .collect()
    }

    const PG: &str = "/usr/lib/postgresql/15/bin/postgres";
    const K: &str = "[kernel.kallsyms]";

    #[test]
    fn samples_fold_and_count_by_self_and_total() {
        let mut f = Folder::default();
        let exec = frames(&[("ExecScan", PG), ("PostgresMain", PG), ("main", PG)]);
        f.add("postgres", &exec);
        f.add("postgres", &exec);
        f.add(
            "postgres",
            &frames(&[
                ("finish_task_switch", K),
                ("PostgresMain", PG),
                ("main", PG),
            ]),
        );
        f.add(
            "postgres",
            &frames(&[("[unknown]", PG), ("PostgresMain", PG), ("main", PG)]),
        );
        assert_eq!(f.samples, 4);
        assert_eq!(
            f.folded(),
            vec![
                ("postgres;main;PostgresMain;ExecScan", 2),
                ("postgres;main;PostgresMain;[postgres]", 1),
                ("postgres;main;PostgresMain;finish_task_switch", 1),
            ]
        );
        let top_self = f.top_self();
        assert_eq!(
            (top_self[0].function.as_str(), top_self[0].pct),
            ("ExecScan", 50.0)
        );
        let sum: f64 = top_self.iter().map(|t| t.pct).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        let total = f.top_total();
        assert_eq!(
            (total[0].function.as_str(), total[0].pct),
            ("PostgresMain", 100.0)
        );
        let split = f.split();
        assert_eq!(
            (split.postgres, split.kernel, split.libc),
            (75.0, 25.0, 0.0)
        );
        assert_eq!(f.unknown_pct(), 25.0);
        assert_eq!(f.kernel_unknown, 0);
    }

    #[test]
    fn a_recursive_function_counts_once_per_sample_in_total() {
        let mut f = Folder::default();
        f.add(
            "p",
            &frames(&[("walk", "/bin/p"), ("walk", "/bin/p"), ("main", "/bin/p")]),
        );
        assert_eq!(f.top_total()[0].samples, 1);
    }

    #[test]
    fn processes_belong_to_the_tree_of_their_root() {
        let mut a = Attribution::new(vec![(100, 0), (200, 1)]);
        a.forked(101, 100);
        a.forked(102, 101);
        a.forked(201, 200);
        a.forked(300, 1);
        assert_eq!(a.subject_of(100), Some(0));
        assert_eq!(a.subject_of(102), Some(0));
        assert_eq!(a.subject_of(201), Some(1));
        assert_eq!(a.subject_of(300), None);
        assert_eq!(a.subject_of(0), None);
        // pid 300 is reused by a new backend of 200.
        a.forked(300, 200);
        assert_eq!(a.subject_of(300), Some(1));
    }

    #[test]
    fn files_are_told_apart_by_kind() {
        assert_eq!(dso_kind(K), DsoKind::Kernel);
        assert_eq!(
            dso_kind("[nf_tables.ko]".trim_end_matches(']')),
            DsoKind::Kernel
        );
        assert_eq!(dso_kind(PG), DsoKind::Postgres);
        assert_eq!(
            dso_kind("/usr/lib/postgresql/15/lib/pg_stat_statements.so"),
            DsoKind::Postgres
        );
        assert_eq!(
            dso_kind("/usr/lib/x86_64-linux-gnu/libc.so.6"),
            DsoKind::Libc
        );
        assert_eq!(dso_kind("/usr/lib/libssl.so.3"), DsoKind::Other);
        assert_eq!(frame_name("[unknown]", K), "[kernel.kallsyms]");
        assert_eq!(frame_name("a;b", PG), "a:b");
    }
}
