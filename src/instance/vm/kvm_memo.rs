//! Remembering a KVM that does not work on this host, so each guest does not probe it again.

use std::path::Path;

/// A KVM that hung or failed once is remembered until the host reboots: a host without
/// nested virtualization opens /dev/kvm and hangs every guest, and each boot would otherwise
/// wait QEMU's KVM probe before emulating. The file holds the host's boot id and the reason; a
/// reboot (a new boot id) or removing the file tries KVM again.
pub(super) struct KvmMemo<'a> {
    pub path: &'a Path,
}

impl KvmMemo<'_> {
    fn boot_id() -> Option<String> {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// Why KVM is not tried, when it failed before on this boot of the host.
    pub fn recalled(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.path).ok()?;
        let (id, why) = text.split_once('\n')?;
        (Some(id.trim()) == Self::boot_id().as_deref()).then(|| {
            format!(
                "{} (earlier on this host since its boot; remove {} to try KVM again)",
                why.trim(),
                self.path.display()
            )
        })
    }

    /// Best effort: a memo that cannot be written only costs the next boot its probe.
    pub fn remember(&self, why: &str) {
        if let Some(id) = Self::boot_id() {
            let _ = std::fs::write(self.path, format!("{id}\n{why}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kvm_failure_is_remembered_for_this_boot_of_the_host_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kvm-failed");
        let memo = KvmMemo { path: &path };
        assert_eq!(memo.recalled(), None, "nothing remembered yet");
        memo.remember("guest 'a' printed nothing on its console in 10 s");
        let note = memo.recalled().expect("remembered on this boot");
        assert!(note.starts_with("guest 'a' printed nothing"), "{note}");
        assert!(note.contains("to try KVM again"), "{note}");
        // Another boot of the host (a different boot id) tries KVM again.
        std::fs::write(&path, "not-this-boot\nwhy\n").unwrap();
        assert_eq!(memo.recalled(), None);
    }
}
