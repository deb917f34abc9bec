//! The book in `docs/` kept true by `cargo test` (issue 43), without building it: `make test`
//! has no time to install mdBook, so these checks read the Markdown themselves.
//!
//! - Every `SUMMARY.md` entry exists, and every page under `docs/src` is in `SUMMARY.md`.
//! - Every relative link in `docs/src` and `README.md` reaches a file, and a `#anchor` a
//!   heading of that page (ids made as mdBook makes them).
//! - The reference pages generated from the code (every command and flag from clap's
//!   `Command` tree, `summary.json`'s fields from `results::Summary`, the exit codes from the
//!   `EXIT_*` constants) are what the code generates now. After changing a command, a flag, its
//!   help or those structs, regenerate them with:
//!
//!   ```sh
//!   TIDEBENCH_BLESS=1 cargo test --test docs
//!   ```
//!
//! - The hand-written reference pages name every results file and Prometheus metric the code
//!   writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command as Process;

use clap::{Arg, Command};

/// Set to write the generated pages instead of comparing them.
const BLESS: &str = "TIDEBENCH_BLESS";
const REGENERATE: &str = "TIDEBENCH_BLESS=1 cargo test --test docs";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_src() -> PathBuf {
    root().join("docs/src")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Compares a generated page with the committed one, or writes it under `TIDEBENCH_BLESS`.
fn check_generated(rel: &str, generated: &str) {
    let path = book_src().join(rel);
    if std::env::var_os(BLESS).is_some() {
        fs::write(&path, generated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let committed = fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "docs/src/{rel} is not what the code generates (first difference at line {}); \
             regenerate it with `{REGENERATE}` and commit it",
            line + 1
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Markdown, as far as these checks need it

/// The lines of a page outside fenced code blocks, with their line numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => out.push((i + 1, line)),
            _ => {}
        }
    }
    out
}

/// A line with its inline code spans blanked out (links inside code are not links).
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        } else {
            out.push_str(&" ".repeat(part.len() + 2));
        }
    }
    out
}

/// The targets of inline links and images: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &after[end..];
    }
    out
}

/// The id mdBook gives a heading: its text without markup, alphanumerics, `_` and `-`
/// lowercased, whitespace as `-`, everything else dropped.
fn heading_id(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '*' => {}
            // `[text](target)`: keep the text, drop the target.
            ']' if chars.peek() == Some(&'(') => {
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
            }
            '[' => {}
            c => plain.push(c),
        }
    }
    plain
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A page's text with mdBook's `{{#include FILE}}` lines replaced by the file.
fn expanded(path: &Path) -> String {
    let text = read(path);
    let mut out = String::new();
    for line in text.lines() {
        let inner = line
            .trim()
            .strip_prefix("{{#include ")
            .and_then(|l| l.strip_suffix("}}"));
        match inner {
            Some(file) => out.push_str(&read(&path.parent().unwrap_or(Path::new(".")).join(file))),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Every heading id of a page, numbered as mdBook numbers repeats (`id`, `id-1`, ...).
fn heading_ids(path: &Path) -> BTreeSet<String> {
    let text = expanded(path);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for (_, line) in prose_lines(&text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let id = heading_id(&line[hashes..]);
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 { id } else { format!("{id}-{n}") });
        *n += 1;
    }
    ids
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every broken relative link of one page, as `page:line: target (why)`.
fn broken_links(page: &Path) -> Vec<String> {
    let text = read(page);
    let dir = page.parent().unwrap_or(Path::new("."));
    let mut broken = Vec::new();
    for (n, line) in prose_lines(&text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.to_path_buf()
            } else {
                normalize(&dir.join(file))
            };
            let why = if file.is_empty() && anchor.is_none() {
                Some("empty link".to_string())
            } else if !dest.exists() {
                Some("no such file".to_string())
            } else {
                match anchor {
                    Some(a) if dest.extension().is_some_and(|e| e == "md") => {
                        (!heading_ids(&dest).contains(a)).then(|| format!("no heading #{a}"))
                    }
                    _ => None,
                }
            };
            if let Some(why) = why {
                broken.push(format!("{}:{n}: {target} ({why})", page.display()));
            }
        }
    }
    broken
}

fn markdown_pages(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            markdown_pages(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// The pages `SUMMARY.md` lists (draft entries, `[x]()`, have none).
fn summary_entries() -> Vec<String> {
    let summary = read(&book_src().join("SUMMARY.md"));
    prose_lines(&summary)
        .into_iter()
        .flat_map(|(_, line)| link_targets(line))
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn book_summary_lists_every_page_and_each_exists() {
    let entries = summary_entries();
    let missing: Vec<_> = entries
        .iter()
        .filter(|e| !book_src().join(e).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "SUMMARY.md lists pages that do not exist: {missing:?}"
    );
    let listed: BTreeSet<PathBuf> = entries.iter().map(|e| book_src().join(e)).collect();
    let mut pages = Vec::new();
    markdown_pages(&book_src(), &mut pages);
    let orphans: Vec<_> = pages
        .iter()
        .filter(|p| !listed.contains(*p) && !p.ends_with("SUMMARY.md"))
        .collect();
    assert!(
        orphans.is_empty(),
        "pages not in SUMMARY.md (mdBook would not build them): {orphans:?}"
    );
}

#[test]
fn book_and_readme_links_resolve() {
    let mut pages = vec![root().join("README.md"), root().join("docs/DESIGN.md")];
    markdown_pages(&book_src(), &mut pages);
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn heading_ids_are_mdbooks() {
    assert_eq!(heading_id("The study's figures"), "the-studys-figures");
    assert_eq!(
        heading_id("Consolidation under memory overcommitment (`tidebench consolidate`)"),
        "consolidation-under-memory-overcommitment-tidebench-consolidate"
    );
    assert_eq!(
        heading_id("[Exit codes](x.md) of `run`"),
        "exit-codes-of-run"
    );
    assert_eq!(
        link_targets("see [a](b.md#c) and `[d](e)` and ![i](img.png)"),
        ["b.md#c", "img.png"]
    );
}

// ---------------------------------------------------------------------------------------------
// The command reference, from clap's tree

/// Text for Markdown outside code spans: `<`, `>` and `*` would be markup.
fn escape(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
        } else {
            out.push_str(
                &part
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('*', "\\*"),
            );
        }
    }
    out
}

/// How an argument is written: `-c, --clients <CLIENTS>` or `<CONFIG>`.
fn arg_spelling(arg: &Arg) -> String {
    let values = || -> String {
        let names: Vec<String> = match arg.get_value_names() {
            Some(names) => names.iter().map(|n| format!("<{n}>")).collect(),
            None => vec![format!("<{}>", arg.get_id().as_str().to_uppercase())],
        };
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        format!("{}{}", names.join(" "), if many { "..." } else { "" })
    };
    if arg.is_positional() {
        return values();
    }
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    let mut spelling = names.join(", ");
    if arg.get_action().takes_values() {
        spelling.push(' ');
        spelling.push_str(&values());
    }
    spelling
}

/// One argument as a list item: its spelling, aliases, help, defaults and possible values.
fn arg_item(arg: &Arg) -> String {
    let mut item = format!("- `{}`", arg_spelling(arg));
    let aliases: Vec<String> = arg
        .get_visible_aliases()
        .unwrap_or_default()
        .iter()
        .map(|a| format!("`--{a}`"))
        .chain(
            arg.get_visible_short_aliases()
                .unwrap_or_default()
                .iter()
                .map(|a| format!("`-{a}`")),
        )
        .collect();
    if !aliases.is_empty() {
        item.push_str(&format!(" (also {})", aliases.join(", ")));
    }
    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    if !help.is_empty() {
        item.push_str(": ");
        item.push_str(&escape(help.trim()).replace('\n', "\n  "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        item.push_str(&format!(" (default: `{}`)", defaults.join(",")));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !possible.is_empty() && arg.get_action().takes_values() {
        item.push_str(&format!(" (one of {})", possible.join(", ")));
    }
    if let Some(long) = arg.get_long_help() {
        let long = long.to_string();
        if long.trim() != help.trim() {
            item.push_str("\n\n  ```text\n");
            for line in long.trim_end().lines() {
                item.push_str(&format!("  {line}\n").replace("  \n", "\n"));
            }
            item.push_str("  ```");
        }
    }
    item.push('\n');
    item
}

/// One command's section: about, usage, arguments by help heading, and its after-help.
fn command_section(cmd: &mut Command, path: &str, out: &mut String) {
    out.push_str(&format!("## `{path}`\n\n"));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        out.push_str(&escape(about.to_string().trim()));
        out.push_str("\n\n");
    }
    let usage = cmd.render_usage().to_string();
    out.push_str(&format!("```text\n{}\n```\n\n", usage.trim()));
    let mut by_heading: Vec<(String, Vec<String>)> = Vec::new();
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let heading = match arg.get_help_heading() {
            Some(h) => h.to_string(),
            None if arg.is_positional() => "Arguments".to_string(),
            None => "Options".to_string(),
        };
        match by_heading.iter_mut().find(|(h, _)| *h == heading) {
            Some((_, items)) => items.push(arg_item(arg)),
            None => by_heading.push((heading, vec![arg_item(arg)])),
        }
    }
    for (heading, items) in by_heading {
        out.push_str(&format!("**{heading}**\n\n{}\n", items.concat()));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| {
            let name = format!("{path} {}", s.get_name());
            format!("- [`{name}`](#{})\n", heading_id(&format!("`{name}`")))
        })
        .collect();
    if !subs.is_empty() {
        out.push_str(&format!("**Commands**\n\n{}\n", subs.concat()));
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        out.push_str(&format!(
            "```text\n{}\n```\n\n",
            after.to_string().trim_end()
        ));
    }
}

fn walk(cmd: &mut Command, path: &str, out: &mut String) {
    command_section(cmd, path, out);
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        if let Some(sub) = cmd.find_subcommand_mut(&name) {
            walk(sub, &format!("{path} {name}"), out);
        }
    }
}

/// `tidebench pgbench --help`: the drop-in reads its own command line, not through clap.
fn pgbench_help() -> String {
    let out = Process::new(env!("CARGO_BIN_EXE_tidebench"))
        .args(["pgbench", "--help"])
        .output()
        .expect("tidebench pgbench --help runs");
    assert!(
        out.status.success(),
        "tidebench pgbench --help failed: {out:?}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn commands_page() -> String {
    let mut cmd = tidebench::cli::args::command().term_width(100);
    cmd.build();
    let mut out = String::from(
        "# Commands and flags\n\n\
         <!-- Generated from clap's command tree by tests/docs.rs; do not edit. Regenerate with\n     \
         TIDEBENCH_BLESS=1 cargo test --test docs -->\n\n\
         Every command and flag of `tidebench`, with the help `--help` prints. Run files take the \
         run flags as keys (`--max-tries` as `max_tries`); see [Running a \
         benchmark](../guide/running.md) and [Multi-tenant runs](../guide/multi-tenant.md).\n\n",
    );
    walk(&mut cmd, "tidebench", &mut out);
    out.push_str(&format!(
        "## `tidebench pgbench --help`\n\n\
         The drop-in reads pgbench 15's command line itself; its help:\n\n```text\n{}\n```\n",
        pgbench_help().trim_end()
    ));
    out
}

#[test]
fn command_reference_is_current() {
    check_generated("reference/commands.md", &commands_page());
}

/// The section of the committed reference for one command.
fn reference_section(page: &str, path: &str) -> String {
    let start = format!("## `{path}`\n");
    let from = page
        .find(&start)
        .unwrap_or_else(|| panic!("the reference has no section for `{path}`"));
    let body = &page[from + start.len()..];
    body[..body.find("\n## `").unwrap_or(body.len())].to_string()
}

/// The `--long` flags a help text lists in its option column.
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            // The option column: `  -c, --clients` or `      --target`; help text wrapped
            // below an option is indented further.
            let t = l.trim_start();
            (t.starts_with('-') && (2..=6).contains(&(l.len() - t.len()))).then_some(t)
        })
        .flat_map(|t| {
            t.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .take_while(|w| w.starts_with('-'))
                .filter(|w| w.starts_with("--"))
                .map(|w| w.split('=').next().unwrap_or(w).to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn reference_lists_every_flag_of_run_help() {
    let page = read(&book_src().join("reference/commands.md"));
    for path in ["run", "prepare", "sweep", "instance start"] {
        let mut cmd = tidebench::cli::args::command().term_width(100);
        cmd.build();
        let mut sub = &mut cmd;
        for name in path.split(' ') {
            sub = sub
                .find_subcommand_mut(name)
                .unwrap_or_else(|| panic!("no command {path}"));
        }
        let help = sub.render_long_help().to_string();
        let flags = help_flags(&help);
        assert!(flags.contains("--help"), "help of {path} parsed: {flags:?}");
        let section = reference_section(&page, &format!("tidebench {path}"));
        let in_reference = help_flags(
            &section
                .lines()
                .filter_map(|l| l.strip_prefix("- `"))
                .map(|l| format!("  {}", l.split('`').next().unwrap_or("")))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        let missing: Vec<_> = flags.difference(&in_reference).collect();
        let extra: Vec<_> = in_reference.difference(&flags).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "`tidebench {path} --help` and the reference differ: missing {missing:?}, not in \
             --help {extra:?}; regenerate with `{REGENERATE}`"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Reference pages generated from the source: summary.json's fields, exit codes

/// A struct's fields from its source: (name, type, doc, always written).
fn struct_fields(source: &str, name: &str) -> Vec<(String, String, String, bool)> {
    let start = format!("pub struct {name} {{");
    let from = source
        .find(&start)
        .unwrap_or_else(|| panic!("no `{start}` in the source"));
    let body = &source[from + start.len()..];
    let body = &body[..body.find("\n}").expect("the struct ends")];
    let mut fields = Vec::new();
    let (mut doc, mut optional) = (Vec::new(), false);
    for line in body.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if line.starts_with("#[serde(") {
            optional |= line.contains("skip_serializing_if");
        } else if let Some(field) = line.strip_prefix("pub ") {
            if let Some((n, t)) = field.split_once(':') {
                let ty = t.trim().trim_end_matches(',').to_string();
                let opt = optional || ty.starts_with("Option<");
                fields.push((n.trim().to_string(), ty, doc.join(" "), !opt));
            }
            doc.clear();
            optional = false;
        }
    }
    fields
}

fn fields_table(source: &str, name: &str) -> String {
    let mut out = String::from("| field | type | written | what |\n|---|---|---|---|\n");
    for (field, ty, doc, always) in struct_fields(source, name) {
        let ty = ty.replace("super::", "").replace("crate::config::", "");
        out.push_str(&format!(
            "| `{field}` | `{}` | {} | {} |\n",
            ty.replace('|', "\\|"),
            if always { "always" } else { "when set" },
            escape(&doc).replace('|', "\\|")
        ));
    }
    out
}

fn summary_page() -> String {
    let source = read(&root().join("src/results/summary/schema.rs"));
    let mut out = String::from(
        "# summary.json\n\n\
         <!-- Generated from src/results/summary/schema.rs by tests/docs.rs; do not edit. \
         Regenerate with\n     TIDEBENCH_BLESS=1 cargo test --test docs -->\n\n\
         Written at the end of every run (and rebuilt by `tidebench report DIR.partial` for a \
         killed one); `schema_version` is the results dir's format version. Counts and rates \
         are over the measured window unless a field says otherwise; latencies are in \
         milliseconds. Fields marked \"when set\" are left out when empty. See [Results and \
         reports](../guide/results.md) for how the files are used.\n\n## `Summary`: the top \
         level\n\n",
    );
    out.push_str(&fields_table(&source, "Summary"));
    for (name, what) in [
        (
            "Stats",
            "`totals` and every per-target, per-group and per-phase row",
        ),
        ("LatencyStats", "`latency_ms` and `lag_ms`"),
        ("FailedByClass", "`failed_by_class`"),
        ("TargetTypeStats", "each `by_target_and_type` row"),
        ("ServerDelta", "each `server` row: the server agrees"),
    ] {
        out.push_str(&format!("\n## `{name}`: {what}\n\n"));
        out.push_str(&fields_table(&source, name));
    }
    out
}

#[test]
fn summary_json_reference_is_current() {
    check_generated("reference/summary-json.md", &summary_page());
}

/// `pub const EXIT_*: u8 = N;` with their doc comments, from the CLI's source.
fn exit_constants() -> Vec<(u8, String, String)> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    // src/cli and its folders (the pgbench drop-in's codes are in src/cli/pgbench).
    let mut dirs = vec![root().join("src/cli")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).expect("src/cli lists") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in files {
        let source = read(&path);
        let mut doc = Vec::new();
        for line in source.lines().map(str::trim) {
            if let Some(d) = line.strip_prefix("///") {
                doc.push(d.trim().to_string());
                continue;
            }
            let decl = line
                .strip_prefix("pub const ")
                .or_else(|| line.strip_prefix("const "));
            if let Some((name, value)) = decl.and_then(|d| d.split_once(": u8 = ")) {
                if let (true, Ok(code)) = (
                    name.starts_with("EXIT_"),
                    value.trim_end_matches(';').parse::<u8>(),
                ) {
                    let file = path.strip_prefix(root()).unwrap_or(&path).display();
                    out.push((code, format!("`{name}` (`{file}`)"), doc.join(" ")));
                }
            }
            doc.clear();
        }
    }
    out.sort();
    out
}

fn exit_codes_page() -> String {
    let intro = read(&root().join("docs/reference-intro/exit-codes.md"));
    let mut out = String::from(
        "# Exit codes\n\n\
         <!-- Generated by tests/docs.rs from docs/reference-intro/exit-codes.md and the EXIT_* constants of \
         src/cli; do not edit. Regenerate with\n     TIDEBENCH_BLESS=1 cargo test --test docs \
         -->\n\n",
    );
    out.push_str(intro.trim_end());
    out.push_str("\n\n## The constants in the code\n\n| code | constant | what |\n|---|---|---|\n");
    for (code, name, doc) in exit_constants() {
        out.push_str(&format!("| {code} | {name} | {} |\n", escape(&doc)));
    }
    out
}

/// A module's `//!` header as Markdown: rustdoc's `[`name`]` links become code spans.
fn module_doc(rel: &str) -> String {
    let source = read(&root().join(rel));
    let doc: Vec<&str> = source
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let text = doc.join("\n");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("[`") {
        let after = &rest[at + 1..];
        match after.find("`]") {
            Some(end) if !after[end + 2..].starts_with('(') => {
                out.push_str(&rest[..at]);
                out.push_str(&after[..end + 1]);
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str(&rest[..at + 2]);
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn results_dir_page() -> String {
    let intro = read(&root().join("docs/reference-intro/results-dir.md"));
    let mut out = String::from(
        "# Results dir files\n\n\
         <!-- Generated by tests/docs.rs from docs/reference-intro/results-dir.md and the module \
         headers of src/results; do not edit. Regenerate with\n     TIDEBENCH_BLESS=1 cargo test \
         --test docs -->\n\n",
    );
    out.push_str(intro.trim_end());
    for (title, rel) in [
        (
            "The results dir (`src/results/mod.rs`)",
            "src/results/mod.rs",
        ),
        (
            "`intervals.csv` (`src/results/intervals.rs`)",
            "src/results/intervals.rs",
        ),
        (
            "`system.csv` (`src/results/system.rs`)",
            "src/results/system.rs",
        ),
        (
            "`guests.csv` (`src/results/guests.rs`)",
            "src/results/guests.rs",
        ),
    ] {
        out.push_str(&format!("\n\n## {title}\n\n{}", module_doc(rel).trim_end()));
    }
    out.push('\n');
    out
}

#[test]
fn results_dir_reference_is_current() {
    check_generated("reference/results-dir.md", &results_dir_page());
}

#[test]
fn exit_codes_reference_is_current() {
    check_generated("reference/exit-codes.md", &exit_codes_page());
}

// ---------------------------------------------------------------------------------------------
// Hand-written reference pages that must name what the code writes

/// Every string literal in `text` that starts with `prefix`, up to its first non-name char.
fn names_with_prefix(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .map(|(at, _)| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| n.len() > prefix.len())
        .collect()
}

#[test]
fn prometheus_reference_names_every_metric() {
    let page = read(&book_src().join("reference/prometheus.md"));
    let source = read(&root().join("src/sampler/prometheus.rs"));
    let metrics = names_with_prefix(&source, "tidebench_");
    assert!(!metrics.is_empty(), "no metric names found in the source");
    let missing: Vec<_> = metrics
        .iter()
        .filter(|m| !page.contains(m.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "reference/prometheus.md lacks metrics {missing:?}"
    );
}

#[test]
fn results_reference_names_every_file() {
    let page = read(&book_src().join("reference/results-dir.md"));
    let mut missing = Vec::new();
    for entry in fs::read_dir(root().join("src/results")).expect("src/results lists") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        for line in read(&path).lines() {
            let Some(decl) = line.trim().strip_prefix("pub const ") else {
                continue;
            };
            let Some((name, value)) = decl.split_once(": &str = \"") else {
                continue;
            };
            let value = value.trim_end_matches("\";");
            if name.ends_with("_FILE") && !page.contains(&format!("`{value}`")) {
                missing.push(value.to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "reference/results-dir.md lacks files {missing:?}"
    );
}

/// Every file under `dir` (recursively) whose name ends with one of `exts`.
fn files_under(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a dir that lists") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files_under(&path, exts, out);
        } else if exts.iter().any(|e| path.to_string_lossy().ends_with(e)) {
            out.push(path);
        }
    }
}

/// Users never met the studies as "seed 000" to "seed 004": what they read (README, the book,
/// `--help`, messages and reports, all written in `src/`) names a study by its title or authors.
#[test]
fn no_study_is_called_by_its_seed_number() {
    let mut files = vec![root().join("README.md")];
    files_under(&root().join("docs"), &[".md"], &mut files);
    files_under(
        &root().join("src"),
        &[".rs", ".toml", ".html", ".css", ".js"],
        &mut files,
    );
    let mut found = Vec::new();
    for path in files {
        for (n, line) in read(&path).lines().enumerate() {
            let lower = line.to_lowercase();
            let hit = lower
                .match_indices("seed 00")
                .any(|(i, _)| lower[i + 7..].starts_with(|c: char| c.is_ascii_digit()));
            if hit {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "name the study by its title or authors instead:\n{}",
        found.join("\n")
    );
}
