//! The report's first screen (issue 43): the page is titled by what ran, each server row of
//! the glance table names its target, group and role, isolation is shown per transaction type
//! where the workload fixes it per type, the page takes the window's width and wide tables
//! scroll inside their own box.

use crate::report::load::{self, RunData};
use crate::results::synthetic::{self, Shape};
use crate::results::{IsolationLevels, TxnTypeFacts};

use super::super::{render, STYLE};

/// A generated run of 12 groups on 12 instances and 10 phases (the per-phase share table has
/// 21 columns), as the `tpcv` preset would name it.
fn tpcv_like() -> (tempfile::TempDir, RunData) {
    let dir = tempfile::tempdir().unwrap();
    let shape = Shape {
        groups: 12,
        txn_types: 3,
        phases: 10,
        phase_secs: 10,
        interval_secs: 10,
        samples_per_row: 1,
        sample_secs: 10,
    };
    let out =
        synthetic::generate(&dir.path().join("r"), &shape, &crate::workload::Registry).unwrap();
    let mut data = load::load(&out).unwrap();
    let rt = data.runtime.as_mut().unwrap();
    rt.plan.preset = Some("tpcv".into());
    // Alike servers but for their size, as the preset's instances are.
    for (i, s) in rt.servers.iter_mut().enumerate() {
        s.settings
            .insert("shared_buffers".into(), format!("{}MB", 128 + i));
    }
    (dir, data)
}

/// Every row of every table on the page, as its cells' text (still escaped).
fn rows(page: &str) -> Vec<Vec<String>> {
    page.split("<tr>")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap_or(row.len())];
            row.split("<td>")
                .skip(1)
                .map(|c| c[..c.find("</td>").unwrap_or(c.len())].to_string())
                .collect()
        })
        .collect()
}

fn row<'a>(rows: &'a [Vec<String>], head: &str) -> &'a [String] {
    rows.iter()
        .find(|r| r.first().is_some_and(|c| c == head))
        .unwrap_or_else(|| panic!("no row {head}"))
}

#[test]
fn the_page_is_titled_by_the_preset_that_ran_not_elastic() {
    let (_dir, data) = tpcv_like();
    assert_eq!(data.summary.workload, "synthetic");
    let page = render(&data);
    assert!(
        page.contains("<title>tidebench report: tpcv (")
            && page.contains("<h1>tidebench report: tpcv ("),
        "{}",
        &page[..300]
    );
    assert!(!page[..page.find("</h1>").unwrap()].contains("elastic"));
    let rows = rows(&page);
    assert_eq!(row(&rows, "workload")[1], "tpcb (preset tpcv)");
}

#[test]
fn a_run_file_names_the_run_by_its_stem() {
    let (_dir, mut data) = tpcv_like();
    let rt = data.runtime.as_mut().unwrap();
    rt.plan.preset = None;
    rt.plan.run_file = Some("runs/bench.toml".into());
    let page = render(&data);
    assert!(page.contains("<h1>tidebench report: bench ("));
    assert_eq!(
        row(&rows(&page), "workload")[1],
        "tpcb (run file runs/bench.toml)"
    );
}

#[test]
fn each_server_row_names_its_instance_group_and_role() {
    let (_dir, data) = tpcv_like();
    let rows = rows(&render(&data));
    let servers: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.get(1).is_some_and(|c| c.starts_with("PostgreSQL 15.8")))
        .collect();
    assert_eq!(servers.len(), 12, "{servers:?}");
    for (g, r) in servers.iter().enumerate() {
        assert_eq!(r[0], format!("instance vm{g:02} (G{g:02} oltp)"));
        assert!(
            r[1].contains(&format!("shared_buffers={}MB", 128 + g)),
            "{r:?}"
        );
    }
}

#[test]
fn alike_servers_share_a_row_that_names_the_first_few() {
    let (_dir, mut data) = tpcv_like();
    for s in &mut data.runtime.as_mut().unwrap().servers {
        s.settings.insert("shared_buffers".into(), "4GB".into());
    }
    let rows = rows(&render(&data));
    let servers: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.get(1).is_some_and(|c| c.starts_with("PostgreSQL 15.8")))
        .collect();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert!(servers[0][0].starts_with("instance vm00 (G00 oltp); instance vm01 (G01 oltp); "));
    assert!(servers[0][0].ends_with("; and 8 more"), "{:?}", servers[0]);
}

#[test]
fn isolation_is_shown_per_type_where_the_workload_fixes_it_per_type() {
    let (_dir, mut data) = tpcv_like();
    data.summary.isolation = Some(IsolationLevels::All("read committed".into()));
    // Without a headline and without levels per type the table has no isolation row.
    let page = render(&data);
    assert!(!rows(&page)
        .iter()
        .any(|r| r.first().is_some_and(|c| c == "isolation")));

    let types = &mut data.runtime.as_mut().unwrap().txn_types;
    *types = (0..3)
        .map(|t| TxnTypeFacts {
            name: format!("txn{t}"),
            role: "oltp".into(),
            emulated: false,
            isolation: None,
        })
        .collect();
    let page = render(&data);
    assert!(!rows(&page)
        .iter()
        .any(|r| r.first().is_some_and(|c| c == "isolation")));

    let types = &mut data.runtime.as_mut().unwrap().txn_types;
    types[0].isolation = Some("serializable".into());
    types[1].isolation = Some("repeatable read".into());
    let page = render(&data);
    assert_eq!(
        row(&rows(&page), "isolation")[1],
        "serializable: txn0; repeatable read: txn1; read committed: the other types"
    );
    data.runtime.as_mut().unwrap().txn_types[2].isolation = Some("serializable".into());
    let page = render(&data);
    assert_eq!(
        row(&rows(&page), "isolation")[1],
        "serializable: txn0, txn2; repeatable read: txn1"
    );
}

#[test]
fn the_page_takes_the_windows_width_and_wide_tables_scroll_in_their_own_box() {
    let (_dir, data) = tpcv_like();
    let page = render(&data);
    let body = &STYLE[STYLE.find("body{").unwrap()..];
    let body = &body[..body.find('}').unwrap()];
    assert!(!body.contains("width"), "{body}");
    assert!(STYLE.contains(".wide{overflow-x:auto"), "{STYLE}");
    // The share table: a group column and two per measured phase, in a scrolling box.
    let at = page
        .find("<th>group</th><th>i1 p1 configured %</th>")
        .unwrap();
    assert!(page[..at].ends_with("<div class=\"wide\"><table><tr>"));
    let head = &page[at..at + page[at..].find("</tr>").unwrap()];
    assert_eq!(head.matches("<th>").count(), 21, "{head}");
    // Every table the page draws through its one table writer is in such a box.
    assert_eq!(
        page.matches("<div class=\"wide\"><table>").count(),
        page.matches("</table></div>").count()
    );
}
