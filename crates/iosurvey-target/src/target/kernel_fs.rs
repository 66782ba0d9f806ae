//! Files that are not storage: the kernel's own interfaces (procfs, sysfs,
//! debugfs, cgroup and the like) look like regular files and directories,
//! but a write to one of them is a command to the kernel, and a read
//! measures nothing. They are refused as targets, judged by the
//! filesystem of the descriptor held (`fstatfs`), whatever path led there.
//! Read-only devices are told apart here too, so that a write is refused
//! before it fails on its first I/O.

use rustix::fs::StatFs;
use std::os::fd::AsFd;

/// `f_type` of each pseudo-filesystem (`linux/magic.h`), with its name.
const KERNEL_FS: [(u32, &str); 20] = [
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6265_6570, "configfs"),
    (0x1cd1, "devpts"),
    (0xcafe_4a11, "bpf"),
    (0x6165_676c, "pstore"),
    (0xde5e_81e4, "efivarfs"),
    (0x6573_5543, "fusectl"),
    (0x1980_0202, "mqueue"),
    (0x4249_4e4d, "binfmt_misc"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x6e73_6673, "nsfs"),
    (0x0765_5821, "resctrl"),
    // Huge pages: memory that takes no write(2), not storage.
    (0x9584_58f6, "hugetlbfs"),
];

/// The name of the pseudo-filesystem `fs` is, if it is one.
fn kernel_fs_of(fs: &StatFs) -> Option<&'static str> {
    // `f_type` is a signed word on some targets: its low 32 bits are the
    // magic number.
    #[allow(clippy::unnecessary_cast)]
    let magic = fs.f_type as u64 as u32;
    KERNEL_FS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

/// The pseudo-filesystem the file or directory open at `fd` lies on, if
/// it does (`None` also when the kernel will not say).
pub(crate) fn kernel_fs(fd: impl AsFd) -> Option<&'static str> {
    rustix::fs::fstatfs(fd).ok().as_ref().and_then(kernel_fs_of)
}

/// Whether the block device `rdev` is read-only (`/sys/dev/block/M:m/ro`,
/// set by `blockdev --setro`, `losetup -r` or a write-protected medium):
/// opening it for writing succeeds, and every write then fails.
pub(super) fn read_only_device(rdev: u64) -> bool {
    let ro = format!(
        "/sys/dev/block/{}:{}/ro",
        rustix::fs::major(rdev),
        rustix::fs::minor(rdev)
    );
    std::fs::read_to_string(ro).is_ok_and(|s| s.trim() == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_and_sysfs_are_kernel_interfaces_and_tmp_is_not() {
        let open = |p: &str| std::fs::File::open(p).expect(p);
        assert_eq!(kernel_fs(open("/proc/self/status")), Some("proc"));
        assert_eq!(kernel_fs(open("/sys/kernel")), Some("sysfs"));
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(kernel_fs(open(dir.path().to_str().unwrap())), None);
    }
}
