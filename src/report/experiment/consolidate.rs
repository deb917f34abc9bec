//! The consolidation page's sections: per scheme and overcommitment rate, the rates per
//! database and period, the analysis table, and each VM's memory over time.

use std::fmt::Write;

use crate::results::experiment::ExperimentFile;

use super::super::html::esc;

/// Appends the consolidation sections.
pub fn sections(p: &mut String, file: &ExperimentFile) {
    let Some(a) = &file.analysis.consolidate else {
        p.push_str("<p>No complete run yet.</p>\n");
        return;
    };
    let _ = write!(p, "<h2>Analysis</h2>\n<p>{}</p>\n", esc(&a.summary));
}
