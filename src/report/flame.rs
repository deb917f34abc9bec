//! Flame graphs from a results dir's folded stacks (`profile/*.folded`), drawn by inferno as
//! static SVG (no script, so the page stays script-free; each frame's `<title>` still shows
//! its function, samples and share on hover), ready to be inlined in `report.html`.

use std::path::Path;

use inferno::flamegraph::{self, Options};

/// Width of a drawn flame graph, px (the page is 1000 px wide).
const WIDTH: usize = 960;

/// The flame graph of the folded stacks in `file` as an inline `<svg>` element.
pub fn svg_of_file(file: &Path, title: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("flame graph left out: cannot read {}: {e}", file.display()))?;
    svg_of_folded(&text, title)
}

/// The flame graph of folded stacks (`root;...;leaf count` lines).
pub fn svg_of_folded(folded: &str, title: &str) -> Result<String, String> {
    if folded.trim().is_empty() {
        return Err("flame graph left out: no samples".into());
    }
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = "samples".into();
    options.image_width = Some(WIDTH);
    options.no_javascript = true;
    // The same function gets the same colour in every graph of the page.
    options.deterministic = true;
    options.hash = true;
    let mut out = Vec::new();
    flamegraph::from_lines(&mut options, folded.lines(), &mut out)
        .map_err(|e| format!("flame graph left out: {e}"))?;
    let svg = String::from_utf8(out).map_err(|e| format!("flame graph left out: {e}"))?;
    // Inline SVG starts at its element: the XML declaration and doctype are for files.
    let start = svg
        .find("<svg")
        .ok_or("flame graph left out: inferno drew no <svg>")?;
    Ok(without_interaction(&svg[start..]))
}

/// Without its script, inferno's search, zoom and details texts do nothing: they go too,
/// with the script itself (it declares a few variables even when told to draw without it).
fn without_interaction(svg: &str) -> String {
    let mut out = cut_all(svg, "<script", "</script>");
    for id in ["details", "unzoom", "search", "matched"] {
        out = cut_all(&out, &format!("<text id=\"{id}\""), "</text>");
    }
    out
}

/// `text` without every span from `open` to the next `close` (both included).
fn cut_all(text: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        out.push_str(&rest[..at]);
        match rest[at..].find(close) {
            Some(end) => rest = &rest[at + end + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_stacks_become_one_inline_svg_with_their_frames() {
        let svg = svg_of_folded(
            "postgres;main;PostgresMain;ExecScan 3\npostgres;main;PostgresMain;LWLockAcquire 1\n",
            "instance default",
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(
            !svg.contains("<?xml") && !svg.contains("<!DOCTYPE"),
            "inline, not a file"
        );
        assert!(svg.contains("ExecScan (3 samples, 75.00%)"), "{svg}");
        assert!(!svg.contains("<script"), "no script in the page");
        assert!(
            !svg.contains("id=\"search\""),
            "no search box that cannot search"
        );
        assert_eq!(super::cut_all("a<x>1</x>b<x>2</x>c", "<x>", "</x>"), "abc");
        assert!(svg_of_folded("", "x").is_err());
    }
}
