//! The README's commands, run as a new user would type them (issue 43): the quick start's five
//! commands for real at toy size, and every command of "Reproducing the studies" with
//! `--dry-run` (each flag parsed and every run of the study's plan validated, nothing run: a
//! study takes minutes to hours). The commands are read from README.md, so the README cannot
//! drift from what the binary accepts.

use crate::support::{self, output_text, tidebench};

fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    std::fs::read_to_string(path).expect("read README.md")
}

/// The text of the README's section `heading` (to the next `## `).
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section '## {heading}'"));
    let body = &text[start + heading.len() + 5..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The quick start's commands: the lines of its `sh` block, comments cut off.
fn quick_start(text: &str) -> Vec<Vec<String>> {
    let s = section(text, "Quick start");
    let block = &s[s.find("```sh\n").expect("a ```sh block") + 6..];
    let block = &block[..block.find("```").expect("the block's end")];
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap_or_default())
        .filter(|l| !l.trim().is_empty())
        .map(words)
        .collect()
}

/// The commands in the studies table's command column: every `tidebench ...` code span.
fn studies(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for row in section(text, "Reproducing the studies")
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
    {
        let cell = row.split('|').nth(3).unwrap_or_default();
        for (i, span) in cell.split('`').enumerate() {
            if i % 2 == 1 && span.starts_with("tidebench ") {
                out.push(words(span));
            }
        }
    }
    out
}

/// A command line as the shell splits it (the README's commands have no quotes).
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The command at toy size: runs of 2 seconds, progress every second, scale 1. A host
/// without writable cgroups starts the instance without its limits.
fn toy(cmd: &[String]) -> Vec<String> {
    let cgroups = support::cgroups_writable();
    let mut out = Vec::new();
    let mut it = cmd.iter().skip(1);
    while let Some(a) = it.next() {
        let value = match a.as_str() {
            "-T" | "--duration" => Some("2"),
            "-s" | "--scale" => Some("1"),
            "-P" | "--progress" => Some("1"),
            "--cpus" | "--memory" if !cgroups => {
                it.next();
                continue;
            }
            _ => None,
        };
        out.push(a.clone());
        if let Some(v) = value {
            it.next();
            out.push(v.to_string());
        }
    }
    out
}

#[test]
fn the_quick_start_runs_at_toy_size() {
    let home = support::temp_home();
    let commands = quick_start(&readme());
    assert_eq!(
        commands.len(),
        5,
        "the quick start has five commands: {commands:?}"
    );
    let mut last = String::new();
    for cmd in &commands {
        assert_eq!(cmd[0], "tidebench", "{cmd:?}");
        let args = toy(cmd);
        // Relative paths (`--out results/first`) land in the test's home.
        let o = tidebench(&home)
            .args(&args)
            .current_dir(home.path())
            .output()
            .expect("the tidebench binary runs");
        last = output_text(&o);
        assert!(o.status.success(), "{args:?}: {last}");
    }
    // The two runs wrote results dirs with reports, and compare put them side by side.
    for dir in ["results/first", "results/second"] {
        let report = home.path().join(dir).join("report.html");
        assert!(report.is_file(), "{}", report.display());
    }
    assert_eq!(commands[4][1], "compare");
    assert!(last.contains("first") && last.contains("second"), "{last}");
}

#[test]
fn every_studys_command_starts_and_validates() {
    let home = support::temp_home();
    let commands = studies(&readme());
    // Ten commands in nine rows; the Greenplum physical-against-virtual row describes two runs
    // and a compare in words.
    assert!(commands.len() >= 10, "{commands:?}");
    for cmd in &commands {
        let mut args: Vec<String> = cmd[1..].to_vec();
        args.push("--dry-run".into());
        let o = tidebench(&home)
            .args(&args)
            .current_dir(home.path())
            .output()
            .expect("the tidebench binary runs");
        let text = output_text(&o);
        assert!(o.status.success(), "{cmd:?}: {text}");
        assert!(text.contains("dry run:"), "{cmd:?}: {text}");
    }
    // Nothing ran: no results, no instance.
    assert!(!home.path().join("results").exists());
    assert!(!home.path().join("instances").exists());
}
