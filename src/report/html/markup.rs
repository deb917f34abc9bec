//! The pieces every section of `report.html` (and `compare --html`) is written with: escaping,
//! notes, charts, tables and number cells. A leaf: the sections import it, it imports none of
//! them, so the page's parts never lean back on the page.

use std::fmt::Write as _;

use crate::report::load::Bucket;

/// Text safe inside HTML elements and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// A note in grey italics.
pub fn note_to(p: &mut String, text: &str) {
    let _ = writeln!(p, "<p class=\"note\">{}</p>", esc(text));
}

/// An SVG chart, or why it could not be drawn as a note.
pub fn chart_to(p: &mut String, svg: Result<String, String>) {
    match svg {
        Ok(svg) => {
            p.push_str(&svg);
            p.push('\n');
        }
        Err(e) => note_to(p, &e),
    }
}

/// A table in a box of its own that scrolls sideways when the table is wider than the window
/// (the per-phase share table has two columns per phase), so the page does not.
pub fn table_to(p: &mut String, head: &[&str], rows: &[Vec<String>]) {
    p.push_str("<div class=\"wide\"><table><tr>");
    for h in head {
        let _ = write!(p, "<th>{}</th>", esc(h));
    }
    p.push_str("</tr>\n");
    for row in rows {
        p.push_str("<tr>");
        for c in row {
            let _ = write!(p, "<td>{}</td>", esc(c));
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</table></div>\n");
}

/// Milliseconds with 3 decimals, or "-".
pub fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
}

/// A bucket's value held from its start to its end: charts draw steps, and a run shorter than
/// one interval still shows its one bucket as a line.
pub fn steps(b: &Bucket, v: f64) -> [(f64, f64); 2] {
    [(b.start_s, v), (b.start_s + b.length_s, v)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_is_drawn_from_its_start_to_its_end() {
        let one = Bucket {
            start_s: 0.0,
            length_s: 5.0,
            measured: true,
        };
        // A 5 s run with a 30 s interval has one bucket: it must still span the x axis.
        assert_eq!(steps(&one, 7.0), [(0.0, 7.0), (5.0, 7.0)]);
    }
}
