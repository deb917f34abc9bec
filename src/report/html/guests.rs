//! The VM instances' guests beside their QEMU on the host (issue 40), under "CPU": what the
//! guest saw of itself (its CPU busy and steal, memory, balloon, disk and network) next to what
//! it cost the host (its QEMU process's CPU and resident memory), from summary.json's `guests`
//! (means over the measured window) and system.csv's rounds.

use crate::report::charts::{Combine, Series};
use crate::report::load::RunData;
use crate::report::system_view as sys;
use crate::results::atomic::human_bytes;

use super::markup::{note_to, table_to};
use super::system::system_charts;

/// The guests' table and chart; nothing for a run without VM instances.
pub(super) fn guests_to(d: &RunData, p: &mut String) {
    if d.summary.guests.is_empty() {
        return;
    }
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let bytes = |v: Option<f64>| v.map_or("-".into(), |v| human_bytes(v.max(0.0) as u64));
    let rate = |v: Option<f64>| {
        v.map_or("-".into(), |v| {
            format!("{}/s", human_bytes(v.max(0.0) as u64))
        })
    };
    let rows: Vec<Vec<String>> = d
        .summary
        .guests
        .iter()
        .map(|g| {
            let read = g.get("disk_read_bytes_per_s");
            let write = g.get("disk_write_bytes_per_s");
            let rx = g.get("net_rx_bytes_per_s");
            let tx = g.get("net_tx_bytes_per_s");
            vec![
                g.instance.clone(),
                pct(g.get("cpu_busy_pct")),
                pct(g.get("cpu_steal_pct")),
                bytes(g.get("mem_total_bytes")),
                bytes(g.get("mem_available_bytes")),
                bytes(g.get("balloon_bytes")),
                format!("{} / {}", rate(read), rate(write)),
                format!("{} / {}", rate(rx), rate(tx)),
                g.get("qemu_cpu_cores")
                    .map_or("-".into(), |v| format!("{v:.2}")),
                bytes(g.get("qemu_rss_bytes")),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "VM instance",
            "guest CPU busy %",
            "guest steal %",
            "guest MemTotal",
            "guest MemAvailable",
            "balloon",
            "guest disk read / write",
            "guest net rx / tx",
            "QEMU CPU (cores)",
            "QEMU RSS",
        ],
        &rows,
    );
    note_to(
        p,
        "Inside each VM (its own /proc, percent of its vCPUs) beside its QEMU process on the \
         host (the VM's cost): means over the measured window (guests.csv has every round).",
    );
    let mut series = sys::series_of(d, "instance:", "guest_cpu_busy_pct", 1.0);
    for s in &mut series {
        s.name = format!("{} guest busy (% of vCPUs)", s.name);
    }
    let guests: Vec<&str> = d
        .summary
        .guests
        .iter()
        .map(|g| g.instance.as_str())
        .collect();
    series.extend(
        sys::series_of(d, "instance:", "cpu_pct", 1.0)
            .into_iter()
            .filter(|s| guests.contains(&s.name.as_str()))
            .map(|s| Series {
                name: format!("{} QEMU on the host (100 = a core)", s.name),
                points: s.points,
            }),
    );
    let title = "VM instances: CPU inside the guest and its QEMU on the host".to_string();
    system_charts(d, p, vec![(title, "percent", series, Combine::Sum)]);
}
