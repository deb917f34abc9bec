//! Per-command tables of `report.html` (a script run with `--report-per-command`): one table
//! per script, its slowest commands first, from `summary.json`'s `commands`.

use std::fmt::Write as _;

use super::markup::esc;
use crate::results::CommandStats;

/// What the numbers count, under the tables.
pub const NOTE: &str = "Per command of each script, over the whole run (ramps included, as \
    pgbench -r): executions, failures, mean and longest time; slowest first.";

/// The tables, or None when the run did not time its commands.
pub fn tables(commands: &[CommandStats]) -> Option<String> {
    if commands.is_empty() {
        return None;
    }
    let mut scripts: Vec<&str> = commands.iter().map(|c| c.txn_type.as_str()).collect();
    scripts.dedup();
    let mut p = String::new();
    for script in scripts {
        let mut rows: Vec<&CommandStats> =
            commands.iter().filter(|c| c.txn_type == script).collect();
        rows.sort_by(|a, b| b.mean_ms.total_cmp(&a.mean_ms));
        let _ = writeln!(
            p,
            "<table><tr><th>script {}: command</th><th>#</th><th>count</th><th>failed</th>\
             <th>mean ms</th><th>max ms</th></tr>",
            esc(script)
        );
        for c in rows {
            let _ = writeln!(
                p,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td>\
                 <td>{:.3}</td></tr>",
                esc(&c.text),
                c.command,
                c.count,
                c.failed,
                c.mean_ms,
                c.max_ms
            );
        }
        p.push_str("</table>\n");
    }
    Some(p)
}
