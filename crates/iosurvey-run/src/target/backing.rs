//! What stores a target's data, when it is memory: a file on tmpfs or
//! ramfs, a zram or brd device, or a loop device whose backing is one of
//! these, or is a file the page cache answers for (a loop device without
//! direct I/O).
//!
//! A loop device's backing is found by the identity the kernel keeps
//! (`LOOP_GET_STATUS64`: the backing's `st_dev`, inode and `st_rdev`) and by
//! the path in `/sys/block/loopN/loop/backing_file`; the path is used only
//! when it still names that file (it may be deleted, renamed or in another
//! mount namespace), else the filesystem is found by its device number in
//! `/proc/self/mountinfo`. A backing that is a block device is judged as
//! that device, recursively (a loop over zram, a loop over a loop), not by
//! its node in `/dev` (which lies on devtmpfs, itself memory).

use crate::guard::family::{loop_backing, Backing, Devno};
use iosurvey_model::TargetKind;
use std::os::fd::OwnedFd;
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
        return device(st.st_dev, 0).map(|d| format!("a file on a filesystem on {d}"));
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
        return loop_device(&name, disk, &dir, depth);
    }
    None
}

/// What memory backs the loop device `name` (device number `disk`,
/// sysfs directory `dir`), if memory does.
fn loop_device(name: &str, disk: Devno, dir: &Path, depth: usize) -> Option<String> {
    let backing = loop_backing(name, disk)?;
    let dio = std::fs::read_to_string(dir.join("loop/dio")).is_ok_and(|s| s.trim() == "1");
    let path = std::fs::read_to_string(dir.join("loop/backing_file")).ok();
    let (dev, ino) = match backing {
        Backing::Device(rdev) => {
            return device(rdev, depth + 1).map(|d| format!("a loop device over {d}"));
        }
        Backing::File { dev, ino } => (dev, ino),
        Backing::Unknown => return None,
    };
    let path = path.as_deref().map(str::trim);
    let deleted = path.is_some_and(|p| p.ends_with(" (deleted)"));
    let file = if deleted { "a deleted file" } else { "a file" };
    if let Some(fs) = file_fs(path, dev, ino) {
        return Some(format!("a loop device over {file} on {fs}"));
    }
    if let Some(d) = device(dev, depth + 1) {
        return Some(format!("a loop device over {file} on a filesystem on {d}"));
    }
    // Without direct I/O, the loop device reads and writes its file
    // through the page cache: the cache answers, not the disk.
    (!dio).then(|| "a loop device over a page-cached file (direct I/O off)".into())
}

/// The in-memory filesystem (`tmpfs`, `ramfs`) holding the file `dev`/`ino`,
/// if one does: by the path, when it still names that file, else by the
/// filesystem of device number `dev` in this namespace's mount table.
fn file_fs(path: Option<&str>, dev: Devno, ino: u64) -> Option<String> {
    let same = path
        .and_then(|p| rustix::fs::stat(p).ok().map(|st| (p, st)))
        .filter(|(_, st)| st.st_dev == dev && st.st_ino == ino);
    if let Some((p, _)) = same {
        return rustix::fs::statfs(p)
            .ok()
            .and_then(memory_fs)
            .map(String::from);
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    fs_type_of(&mountinfo, dev).filter(|t| matches!(t.as_str(), "tmpfs" | "ramfs" | "devtmpfs"))
}

/// The type of the filesystem of device number `dev` in a mountinfo text.
fn fs_type_of(mountinfo: &str, dev: Devno) -> Option<String> {
    let want = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        if f.get(2) != Some(&want.as_str()) {
            return None;
        }
        let dash = f.iter().position(|x| *x == "-")?;
        f.get(dash + 1).map(|s| s.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
25 22 0:21 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw
26 22 0:22 / /mnt/x\\040y rw shared:4 - ramfs none rw
";

    #[test]
    fn a_filesystem_is_found_by_its_device_number() {
        assert_eq!(
            fs_type_of(MOUNTINFO, rustix::fs::makedev(0, 21)).as_deref(),
            Some("tmpfs")
        );
        assert_eq!(
            fs_type_of(MOUNTINFO, rustix::fs::makedev(0, 22)).as_deref(),
            Some("ramfs")
        );
        assert_eq!(
            fs_type_of(MOUNTINFO, rustix::fs::makedev(254, 0)).as_deref(),
            Some("ext4")
        );
        assert_eq!(fs_type_of(MOUNTINFO, rustix::fs::makedev(0, 99)), None);
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
