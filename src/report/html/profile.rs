//! "Where the time goes": per profiled subject (managed instance, local server, driver, host),
//! its samples against what the window could hold, the split by kind of code, the top
//! functions in the Cybertec study's columns (samples, %, function, DSO) and its flame graph; what the
//! profile could not see is said first, with its fix.

use std::fmt::Write as _;

use crate::report::flame;
use crate::results::profile::{ProfileFile, ProfiledSubject};

use super::markup::{chart_to, esc, note_to, table_to};
use crate::report::load::RunData;

/// Functions shown per subject.
const TOP: usize = 20;
/// Above this share of samples without a symbol, the page says how to get them named.
const UNKNOWN_NOTE_PCT: f64 = 5.0;

pub fn where_the_time_goes(d: &RunData, p: &mut String) {
    let Some(profile) = &d.profile else {
        note_to(
            p,
            "No profile: run with --profile to sample where each instance's CPU time goes \
             over the measured window (perf; flame graphs here).",
        );
        return;
    };
    let _ = writeln!(
        p,
        "<p>perf at {} Hz per CPU, {} call graphs, over {:.1}-{:.1} s of the run ({} CPUs); {}.</p>",
        profile.hz,
        esc(&profile.call_graph),
        profile.window_s.0,
        profile.window_s.1,
        profile.cpus,
        esc(&profile.perf_version)
    );
    for m in &profile.missing {
        let _ = writeln!(p, "<p class=\"flag\">Missing: {}</p>", esc(m));
    }
    for s in profile.subjects.iter().filter(|s| s.samples > 0) {
        subject(d, profile, s, p);
    }
}

fn subject(d: &RunData, profile: &ProfileFile, s: &ProfiledSubject, p: &mut String) {
    let window = (profile.window_s.1 - profile.window_s.0).max(0.0);
    let bound = (f64::from(profile.hz) * window * f64::from(profile.cpus)).round();
    let cpu_s = s.samples as f64 / f64::from(profile.hz.max(1));
    let _ = writeln!(
        p,
        "<h3>{}</h3>\n<p>{} samples: about {:.1} CPU-seconds, {:.0} % of the {} CPUs' time in \
         the window (at most {} samples). Leaf frames: kernel {:.1} %, postgres {:.1} %, libc \
         {:.1} %, other {:.1} %.</p>",
        esc(&s.heading()),
        s.samples,
        cpu_s,
        if bound > 0.0 {
            s.samples as f64 * 100.0 / bound
        } else {
            0.0
        },
        profile.cpus,
        bound,
        s.split.kernel,
        s.split.postgres,
        s.split.libc,
        s.split.other
    );
    if s.unknown_pct > UNKNOWN_NOTE_PCT {
        note_to(
            p,
            &format!(
                "{:.1} % of these samples end in functions perf has no name for (shown as \
                 [unknown] and as [file] frames): static functions of a stripped binary. \
                 Install its debug symbols to name them (Debian: postgresql-15-dbgsym from the \
                 debian-debug archive).",
                s.unknown_pct
            ),
        );
    }
    let rows: Vec<Vec<String>> = s
        .top_self
        .iter()
        .take(TOP)
        .map(|f| {
            let total = s
                .top_total
                .iter()
                .find(|t| t.function == f.function && t.dso == f.dso)
                .map_or("-".into(), |t| format!("{:.2}", t.pct));
            vec![
                f.samples.to_string(),
                format!("{:.2}", f.pct),
                f.function.clone(),
                f.dso.clone(),
                total,
            ]
        })
        .collect();
    // Names read left-aligned (the page's numbers are right-aligned).
    p.push_str("<div class=\"names\">");
    table_to(
        p,
        &["samples", "%", "function", "DSO", "% with callees"],
        &rows,
    );
    p.push_str("</div>\n");
    let title = format!("{}: {} samples", s.heading(), s.samples);
    chart_to(p, flame::svg_of_file(&d.dir.join(&s.folded), &title));
}
