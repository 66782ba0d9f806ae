//! The family of a block device, and whether any of it is in use.
//!
//! A device is checked as a whole with everything whose data overlaps it:
//! its partitions, the loop devices it backs (by identity of their backing
//! file, a device or a file on a filesystem on it), the dm/md devices that
//! hold it, all of these recursively, and upwards the parent disk of a
//! partition and the backing device of a loop device (with their holders
//! and loop devices). Any member that is mounted (anywhere in this mount
//! namespace), in use as swap, held or backing a loop device is a use,
//! which `--force` never overrides.
//!
//! A loop device's backing file is known by the identity the kernel keeps
//! (`LOOP_GET_STATUS64`: its `st_dev`, inode and `st_rdev`), never by the
//! path in sysfs, which may name nothing any more (a removed or renamed
//! node, a node in another mount namespace) or something else. A loop
//! device whose backing cannot be told (no node for it in this namespace's
//! /dev) may sit on anything, so it is a use of every device and file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A block device number (`st_rdev`).
pub type Devno = u64;

/// Why a device may not be written: a use of it or of its family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Use {
    Mounted {
        dev: String,
        mountpoint: String,
    },
    Swap {
        dev: String,
    },
    Held {
        dev: String,
        holders: String,
    },
    BacksLoop {
        dev: String,
        loop_dev: String,
    },
    /// A loop device whose backing cannot be told: it may sit on anything.
    UnknownLoop {
        loop_dev: String,
    },
}

fn majmin(d: Devno) -> String {
    format!("{}:{}", rustix::fs::major(d), rustix::fs::minor(d))
}

fn parse_majmin(s: &str) -> Option<Devno> {
    let (a, b) = s.trim().split_once(':')?;
    Some(rustix::fs::makedev(a.parse().ok()?, b.parse().ok()?))
}

fn sys(d: Devno) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{}", majmin(d)))
}

/// `/dev/NAME` of a device, from its sysfs name (or `MAJ:MIN`).
pub fn dev_name(d: Devno) -> String {
    std::fs::canonicalize(sys(d))
        .ok()
        .and_then(|p| {
            p.file_name()
                .map(|n| format!("/dev/{}", n.to_string_lossy()))
        })
        .unwrap_or_else(|| format!("block device {}", majmin(d)))
}

fn devno_of_dir(dir: &Path) -> Option<Devno> {
    parse_majmin(&std::fs::read_to_string(dir.join("dev")).ok()?)
}

/// The partitions of a whole disk.
pub fn partitions(d: Devno) -> Vec<Devno> {
    let Ok(entries) = std::fs::read_dir(sys(d)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("partition").exists())
        .filter_map(|p| devno_of_dir(&p))
        .collect()
}

/// The disk a partition belongs to.
fn parent(d: Devno) -> Option<Devno> {
    let dir = std::fs::canonicalize(sys(d)).ok()?;
    if !dir.join("partition").exists() {
        return None;
    }
    devno_of_dir(dir.parent()?)
}

/// The dm/md (or other) devices that hold `d`.
fn holders(d: Devno) -> Vec<Devno> {
    let Ok(entries) = std::fs::read_dir(sys(d).join("holders")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| devno_of_dir(&e.path()))
        .collect()
}

/// What backs an attached loop device, by identity (the kernel's, from
/// `LOOP_GET_STATUS64`, never the path in sysfs, which may no longer
/// resolve or may now name something else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backing {
    /// A block device: its `st_rdev`.
    Device(Devno),
    /// A regular file: its `st_dev` (the filesystem it lies on) and inode.
    File { dev: Devno, ino: u64 },
    /// Cannot be told (no `/dev` node for the loop device, or the kernel
    /// would not say): it may sit on anything.
    Unknown,
}

impl Backing {
    fn of(b: iosurvey_engine::loopdev::LoopBacking) -> Backing {
        if b.rdev != 0 {
            Backing::Device(b.rdev)
        } else {
            Backing::File {
                dev: b.dev,
                ino: b.ino,
            }
        }
    }

    /// Whether this backing's data lies on the device `d` (it is `d`, or
    /// a file on a filesystem on `d`; an unknown backing may be anything).
    fn on(self, d: Devno) -> bool {
        match self {
            Backing::Device(r) => r == d,
            Backing::File { dev, .. } => dev == d,
            Backing::Unknown => false,
        }
    }
}

/// The backing of the loop device `devno` named `name` in /sys/block:
/// `/dev/NAME` is opened only to ask the kernel, and used only if it is
/// that device. `None` when the loop device is detached.
pub(crate) fn loop_backing(name: &str, devno: Devno) -> Option<Backing> {
    use rustix::fs::{FileType, Mode, OFlags};
    let path = format!("/dev/{name}");
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let Ok(fd) = rustix::fs::open(path.as_str(), flags, Mode::empty()) else {
        return Some(Backing::Unknown);
    };
    let is_it = rustix::fs::fstat(&fd).is_ok_and(|st| {
        FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice && st.st_rdev == devno
    });
    if !is_it {
        return Some(Backing::Unknown);
    }
    match iosurvey_engine::loopdev::loop_backing(std::os::fd::AsFd::as_fd(&fd)) {
        Ok(b) => Some(Backing::of(b)),
        // Detached since /sys was read.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => None,
        Err(_) => Some(Backing::Unknown),
    }
}

/// Every attached loop device and what backs it.
fn loops() -> Vec<(Devno, Backing)> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let dir = e.path();
        // loop/ is there only while a file is attached.
        if !name.starts_with("loop") || !dir.join("loop").exists() {
            continue;
        }
        let Some(devno) = devno_of_dir(&dir) else {
            continue;
        };
        if let Some(b) = loop_backing(&name, devno) {
            out.push((devno, b));
        }
    }
    out
}

/// The loop devices the regular file `dev`/`ino` backs, and the first
/// loop device whose backing cannot be told (which might be this file).
pub fn loops_on_file(dev: Devno, ino: u64) -> (Vec<Devno>, Option<Use>) {
    let all = loops();
    let unknown = all
        .iter()
        .find(|(_, b)| *b == Backing::Unknown)
        .map(|(l, _)| Use::UnknownLoop {
            loop_dev: dev_name(*l),
        });
    let backs = all
        .into_iter()
        .filter(|(_, b)| *b == Backing::File { dev, ino })
        .map(|(l, _)| l)
        .collect();
    (backs, unknown)
}

/// `\040` and the other octal escapes of /proc/self/mountinfo and
/// /proc/swaps.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3');
        if let (b'\\', Some(d)) = (b[i], octal) {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The block device a path names, if it is one.
fn rdev_of(path: &str) -> Option<Devno> {
    let st = rustix::fs::stat(path).ok()?;
    (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice)
        .then_some(st.st_rdev)
}

/// Mounts as (device number of field 3, source device if it is a block
/// device node, mount point), from a mountinfo text.
pub(crate) fn mounts(
    mountinfo: &str,
    stat_sources: bool,
) -> Vec<(Option<Devno>, Option<Devno>, String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let devno = parse_majmin(f.get(2)?);
            let point = unescape(f.get(4)?);
            let dash = f.iter().position(|x| *x == "-")?;
            let source = f.get(dash + 2).map(|s| unescape(s)).unwrap_or_default();
            let src = (stat_sources && source.starts_with("/dev/"))
                .then(|| rdev_of(&source))
                .flatten();
            Some((devno, src, point))
        })
        .collect()
}

/// Active swap areas by identity: (`st_rdev` of a swap device, or
/// `st_dev` of the filesystem holding a swap file).
fn swaps() -> Vec<(Devno, String)> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let name = unescape(l.split_whitespace().next()?);
            let st = rustix::fs::stat(name.as_str()).ok()?;
            let id = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
                rustix::fs::FileType::BlockDevice => st.st_rdev,
                _ => st.st_dev,
            };
            Some((id, name))
        })
        .collect()
}

/// The family of `target` and the uses found while walking it.
struct Walk {
    loops: Vec<(Devno, Backing)>,
    members: BTreeSet<Devno>,
    held: Vec<Use>,
}

impl Walk {
    /// Adds `d` and everything below it: partitions, holders, loop devices
    /// it backs. Holders and loop devices are uses.
    fn down(&mut self, d: Devno) {
        if !self.members.insert(d) {
            return;
        }
        for p in partitions(d) {
            self.down(p);
        }
        self.users_of(d, true);
    }

    /// Holders of `d` and loop devices it backs; with `all`, also those
    /// already in the family (below the target they are uses, above it
    /// the target itself is one of them).
    fn users_of(&mut self, d: Devno, all: bool) {
        let hs: Vec<Devno> = holders(d)
            .into_iter()
            .filter(|h| all || !self.members.contains(h))
            .collect();
        if !hs.is_empty() {
            self.held.push(Use::Held {
                dev: dev_name(d),
                holders: hs
                    .iter()
                    .map(|&h| dev_name(h))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let backed: Vec<Devno> = self
            .loops
            .iter()
            .filter(|(l, b)| (all || !self.members.contains(l)) && b.on(d))
            .map(|(l, _)| *l)
            .collect();
        for &l in &backed {
            self.held.push(Use::BacksLoop {
                dev: dev_name(d),
                loop_dev: dev_name(l),
            });
        }
        for h in hs.into_iter().chain(backed) {
            self.down(h);
        }
    }

    /// The disks and devices `d` lies on: the parent disk of a partition,
    /// the backing device of a loop device.
    fn above(&self, d: Devno) -> Vec<Devno> {
        let mut out: Vec<Devno> = parent(d).into_iter().collect();
        for (l, b) in &self.loops {
            if let (true, Backing::Device(r)) = (*l == d, *b) {
                out.push(r);
            }
        }
        out
    }
}

/// The device numbers of `target`'s family: every device whose data
/// overlaps it.
pub fn members(target: Devno) -> BTreeSet<Devno> {
    walk(target).members
}

/// The family of `target`, walked down and up, with the holders and loop
/// devices found on the way.
fn walk(target: Devno) -> Walk {
    let mut w = Walk {
        loops: loops(),
        members: BTreeSet::new(),
        held: Vec::new(),
    };
    w.down(target);
    let mut up = w.above(target);
    let mut seen = BTreeSet::new();
    while let Some(u) = up.pop() {
        if !seen.insert(u) || w.members.contains(&u) {
            continue;
        }
        w.members.insert(u);
        up.extend(w.above(u));
    }
    for &u in &seen {
        w.users_of(u, false);
    }
    w
}

/// The device numbers of `target`'s family, and the first use of any of
/// them: a mount first, then swap, then a holder or a loop device, then
/// any loop device whose backing cannot be told.
pub fn find_use(target: Devno) -> (BTreeSet<Devno>, Option<Use>) {
    let w = walk(target);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let first_mount = mounts(&mountinfo, true)
        .into_iter()
        .find_map(|(d, src, point)| {
            let hit = [d, src]
                .into_iter()
                .flatten()
                .find(|x| w.members.contains(x))?;
            Some(Use::Mounted {
                dev: dev_name(hit),
                mountpoint: point,
            })
        });
    let swap = || {
        swaps()
            .into_iter()
            .find(|(id, _)| w.members.contains(id))
            .map(|(_, name)| Use::Swap { dev: name })
    };
    let unknown = || {
        w.loops
            .iter()
            .find(|(_, b)| *b == Backing::Unknown)
            .map(|(l, _)| Use::UnknownLoop {
                loop_dev: dev_name(*l),
            })
    };
    let found = first_mount
        .or_else(swap)
        .or_else(|| w.held.first().cloned())
        .or_else(unknown);
    (w.members, found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_is_read_by_device_number_and_unescaped() {
        let mi = "36 25 7:3 / /mnt/a\\040b rw,relatime shared:1 - ext4 /dev/loop3 rw\n22 1 253:0 / / rw - ext4 /dev/vda rw\n";
        let m = mounts(mi, false);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0, Some(rustix::fs::makedev(7, 3)));
        assert_eq!(m[0].2, "/mnt/a b");
        assert_eq!(m[1].0, Some(rustix::fs::makedev(253, 0)));
    }

    #[test]
    fn unescape_leaves_plain_text_alone() {
        assert_eq!(unescape("/a/b"), "/a/b");
        assert_eq!(unescape("/a\\011b\\"), "/a\tb\\");
    }
}
