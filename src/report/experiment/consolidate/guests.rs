//! The consolidation page when its VMs were real QEMU guests (`--hypervisor qemu`): what the
//! VMs were (hypervisor, accelerator, whether the figures are emulated under TCG) in place of
//! the emulation paragraph, and each guest's balloon per point as QMP reported it, with the
//! guest's own MemTotal and MemAvailable and KSM's shared pages.

use crate::report::html::markup::{note_to, table_to};
use crate::results::experiment::consolidate::{guest_accels, ConsolidateRequest, GuestRequest};
use crate::results::experiment::consolidate::{OVERCOMMIT_KEY, SCHEME_KEY};
use crate::results::experiment::ExperimentFile;

use super::size;

/// What a VM was, in words: the paragraph standing where the emulation one stands.
pub(super) fn what_vms_are(file: &ExperimentFile, g: &GuestRequest) -> String {
    let used = guest_accels(file);
    let accel = match (used.is_empty(), &g.accel) {
        (false, _) => used.join(", "),
        (true, Some(a)) => format!("{a} (asked; no run has reported yet)"),
        (true, None) => "KVM when it boots, else TCG (no run has reported yet)".into(),
    };
    let emulated = if used.iter().any(|a| a == "tcg") {
        " Under TCG every guest instruction is translated by QEMU: these figures are emulated, not a VM's real overhead; on a host with working KVM the same VMs run at native speed."
    } else {
        ""
    };
    let ksm = match g.ksm {
        Some(true) => "KSM on (QEMU mem-merge=on)",
        Some(false) => "KSM off (QEMU mem-merge=off, merged pages unmerged)",
        None => "KSM as the host had it",
    };
    format!(
        "Real VMs: each VM is a {} guest (accelerator: {accel}) with its own kernel, its QEMU in the host group whose memory limit is MEM_avail plus {} per QEMU for the hypervisor's own memory; with a balloon, each guest's virtio-balloon is inflated through QMP to its share of MEM_avail and the guest's kernel reclaims inside. {ksm}.{emulated}",
        g.hypervisor,
        size(g.qemu_allowance_bytes)
    )
}

/// Each guest's balloon per point and run.
pub(super) fn balloons_to(p: &mut String, file: &ExperimentFile, req: &ConsolidateRequest) {
    if req.guests.is_none() {
        return;
    }
    p.push_str("<h2>Balloons</h2>\n");
    let mib = |b: Option<u64>| b.map_or("-".to_string(), size);
    let mut rows = Vec::new();
    for point in &file.points {
        let value = |k: &str| point.values.get(k).cloned().unwrap_or_default();
        for run in &point.runs {
            let Some(c) = &run.consolidation else {
                continue;
            };
            for g in &c.guests {
                rows.push(vec![
                    value(SCHEME_KEY),
                    format!("{} %", value(OVERCOMMIT_KEY)),
                    run.dir.clone(),
                    g.vm.clone(),
                    size(g.memory_bytes),
                    mib(g.target_bytes),
                    mib(g.actual_bytes),
                    mib(g.min_actual_bytes),
                    mib(g.balloon_bytes()),
                    mib(g.mem_total_bytes),
                    mib(g.mem_available_bytes),
                    g.accel.clone().unwrap_or_else(|| "-".into()),
                    c.ksm_pages_sharing.map_or("-".into(), |n| n.to_string()),
                ]);
            }
        }
    }
    if rows.is_empty() {
        note_to(p, "No run has recorded its guests yet.");
        return;
    }
    table_to(
        p,
        &[
            "scheme",
            "overcommit",
            "run",
            "VM",
            "RAM",
            "balloon target",
            "guest memory (last)",
            "guest memory (least)",
            "balloon",
            "guest MemTotal",
            "guest MemAvailable",
            "accel",
            "KSM pages shared",
        ],
        &rows,
    );
    note_to(
        p,
        "Guest memory is QMP query-balloon's actual (RAM less the balloon), read every second during the run; MemTotal and MemAvailable are the guest's /proc/meminfo once ballooned; KSM pages shared is the most /sys/kernel/mm/ksm/pages_sharing read during the run.",
    );
}
