//! What stores a target's data, when it is memory: a file on tmpfs or
//! ramfs, a zram or brd device, or a loop device whose backing is one of
//! these, or is a file the page cache answers for (a loop device without
//! direct I/O).
//!
//! A loop device over a block device is described by that device's name
//! and what backs it (`a loop device over /dev/zram3 (zram)`).
//!
//! A loop device's backing is found by the identity the kernel keeps
//! (`LOOP_GET_STATUS64`: the backing's `st_dev`, inode and `st_rdev`) and by
//! the path in `/sys/block/loopN/loop/backing_file`; the path is used only
//! when it still names that file (it may be deleted, renamed or in another
//! mount namespace), else the filesystem is found by its device number in
//! `/proc/self/mountinfo`. A backing that is a block device is judged as
//! that device, recursively (a loop over zram, a loop over a loop), not by
//! its node in `/dev` (which lies on devtmpfs, itself memory). A file is
//! judged by its filesystem's device: the block device of its `st_dev`,
//! or, where the filesystem gives its files a device number of its own
//! (btrfs), the block device its mount names as its source.

use crate::guard::family::{dev_name, loop_backing, Backing, Devno};
use iosurvey_model::TargetKind;
use rustix::fs::{FileType, Mode, OFlags};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// `TMPFS_MAGIC` and `RAMFS_MAGIC` (statfs(2)).
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Loop devices stacked deeper than this are not followed.
const MAX_DEPTH: usize = 8;

/// What memory backs the target open at `fd`, if memory does, in words
/// (`tmpfs`, `zram`, `a loop device over a file on tmpfs`, ...).
pub(crate) fn memory_backing(fd: &OwnedFd, kind: TargetKind) -> Option<String> {
    let st = rustix::fs::fstat(fd).ok()?;
    if kind != TargetKind::Block {
        if let Some(fs) = rustix::fs::fstatfs(fd).ok().and_then(memory_fs) {
            return Some(fs.into());
        }
        // A file on a filesystem on a device in memory (ext4 on zram).
        return fs_device(st.st_dev, Some(fd.as_fd()), 0)
            .map(|d| format!("a file on a filesystem on {d}"));
    }
    device(st.st_rdev, 0)
}

/// The name of a filesystem in memory, by its `statfs`.
fn memory_fs(fs: rustix::fs::StatFs) -> Option<&'static str> {
    // `f_type` is an i64 here, but not on every architecture.
    #[allow(clippy::unnecessary_cast)]
    match fs.f_type as i64 {
        TMPFS_MAGIC => Some("tmpfs"),
        RAMFS_MAGIC => Some("ramfs"),
        _ => None,
    }
}

/// `/sys/dev/block/MAJ:MIN` of a device number.
fn sys_of(d: Devno) -> PathBuf {
    PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(d),
        rustix::fs::minor(d)
    ))
}

/// The sysfs directory of the disk `d` is or is a partition of, and that
/// disk's device number.
fn disk_of(d: Devno) -> Option<(PathBuf, Devno)> {
    let dir = std::fs::canonicalize(sys_of(d)).ok()?;
    let dir = if dir.join("partition").exists() {
        dir.parent()?.to_path_buf()
    } else {
        dir
    };
    let (maj, min) = std::fs::read_to_string(dir.join("dev"))
        .ok()?
        .trim()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))?;
    Some((dir, rustix::fs::makedev(maj, min)))
}

/// What memory backs the block device `d`, if memory does.
fn device(d: Devno, depth: usize) -> Option<String> {
    let (dir, disk) = disk_of(d)?;
    let name = dir.file_name()?.to_str()?.to_string();
    if name.starts_with("zram") {
        return Some("zram".into());
    }
    if name.starts_with("ram") {
        return Some("brd (ram disk)".into());
    }
    if name.starts_with("loop") && depth < MAX_DEPTH {
        return loop_device(disk, &dir, depth);
    }
    None
}

/// What memory backs the loop device numbered `disk` (sysfs directory
/// `dir`), if memory does.
fn loop_device(disk: Devno, dir: &Path, depth: usize) -> Option<String> {
    let backing = loop_backing(disk)?;
    let dio = std::fs::read_to_string(dir.join("loop/dio")).is_ok_and(|s| s.trim() == "1");
    let path = std::fs::read_to_string(dir.join("loop/backing_file")).ok();
    let (dev, ino) = match backing {
        // Named as the device it is (never its node, which lies on
        // devtmpfs), with what backs that device.
        Backing::Device(rdev) => {
            return device(rdev, depth + 1)
                .map(|d| format!("a loop device over {} ({d})", dev_name(rdev)));
        }
        Backing::File { dev, ino } => (dev, ino),
        Backing::Unknown => return None,
    };
    let path = path.as_deref().map(str::trim);
    let deleted = path.is_some_and(|p| p.ends_with(" (deleted)"));
    let file = if deleted { "a deleted file" } else { "a file" };
    // The backing file by its path, only while the path still names it.
    let held = path.and_then(|p| {
        let fd = rustix::fs::open(p, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let st = rustix::fs::fstat(&fd).ok()?;
        (st.st_dev == dev && st.st_ino == ino).then_some(fd)
    });
    let in_memory = match &held {
        Some(fd) => rustix::fs::fstatfs(fd)
            .ok()
            .and_then(memory_fs)
            .map(String::from),
        None => std::fs::read_to_string("/proc/self/mountinfo")
            .ok()
            .and_then(|m| mount_where(&m, 2, &majmin(dev)))
            .map(|(fs, _)| fs)
            .filter(|t| matches!(t.as_str(), "tmpfs" | "ramfs" | "devtmpfs")),
    };
    if let Some(fs) = in_memory {
        return Some(format!("a loop device over {file} on {fs}"));
    }
    if let Some(d) = fs_device(dev, held.as_ref().map(|fd| fd.as_fd()), depth + 1) {
        return Some(format!("a loop device over {file} on a filesystem on {d}"));
    }
    // Without direct I/O, the loop device reads and writes its file
    // through the page cache: the cache answers, not the disk.
    (!dio).then(|| "a loop device over a page-cached file (direct I/O off)".into())
}

/// `MAJ:MIN` of a device number.
fn majmin(d: Devno) -> String {
    format!("{}:{}", rustix::fs::major(d), rustix::fs::minor(d))
}

/// What memory backs the filesystem of device number `dev` (a file's
/// `st_dev`), if memory does: the block device it is, or, for a filesystem
/// whose files carry a device number of its own (btrfs), the block device
/// the mount of the file open at `fd` names as its source (its mount id
/// from `/proc/self/fdinfo`), else the mount of `dev`.
fn fs_device(dev: Devno, fd: Option<BorrowedFd<'_>>, depth: usize) -> Option<String> {
    if sys_of(dev).exists() {
        return device(dev, depth);
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let (_, source) = match fd.and_then(mount_id) {
        Some(id) => mount_where(&mountinfo, 0, &id)?,
        None => mount_where(&mountinfo, 2, &majmin(dev))?,
    };
    let st = rustix::fs::stat(source.as_str()).ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice)
        .then(|| device(st.st_rdev, depth))
        .flatten()
}

/// The id of the mount the file open at `fd` is on (`mnt_id` of its
/// `/proc/self/fdinfo`), as mountinfo's first field has it.
fn mount_id(fd: BorrowedFd<'_>) -> Option<String> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))
        .map(|v| v.trim().to_string())
}

/// The type and source of the first mount in a mountinfo text whose field
/// number `field` (0: the mount id, 2: the device number) is `want`.
fn mount_where(mountinfo: &str, field: usize, want: &str) -> Option<(String, String)> {
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        if f.get(field) != Some(&want) {
            return None;
        }
        let dash = f.iter().position(|x| *x == "-")?;
        Some((f.get(dash + 1)?.to_string(), f.get(dash + 2)?.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
25 22 0:21 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw
26 22 0:22 / /mnt/x\\040y rw shared:4 - ramfs none rw
27 22 0:23 / /mnt/b rw,relatime shared:5 - btrfs /dev/zram1 rw,ssd
";

    #[test]
    fn a_mount_is_found_by_its_device_number_or_its_id() {
        let by_dev = |d| mount_where(MOUNTINFO, 2, &majmin(d)).map(|(fs, _)| fs);
        assert_eq!(by_dev(rustix::fs::makedev(0, 21)).as_deref(), Some("tmpfs"));
        assert_eq!(by_dev(rustix::fs::makedev(0, 22)).as_deref(), Some("ramfs"));
        assert_eq!(by_dev(rustix::fs::makedev(254, 0)).as_deref(), Some("ext4"));
        assert_eq!(by_dev(rustix::fs::makedev(0, 99)), None);
        let (fs, source) = mount_where(MOUNTINFO, 0, "27").unwrap();
        assert_eq!((fs.as_str(), source.as_str()), ("btrfs", "/dev/zram1"));
    }

    #[test]
    fn a_file_on_tmpfs_is_memory_and_one_on_a_disk_is_not() {
        let judged = |f: std::fs::File| {
            let disk = rustix::fs::fstatfs(&f).ok().and_then(memory_fs).is_none();
            (disk, memory_backing(&OwnedFd::from(f), TargetKind::File))
        };
        if let Ok(f) = tempfile::tempfile_in("/dev/shm") {
            assert_eq!(judged(f).1.as_deref(), Some("tmpfs"));
        }
        let (disk, got) = judged(tempfile::tempfile_in("/var/tmp").unwrap());
        if disk {
            assert_eq!(got, None);
        }
    }
}
