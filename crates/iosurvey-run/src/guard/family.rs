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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A block device number (`st_rdev`).
pub type Devno = u64;

/// Why a device may not be written: a use of it or of its family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Use {
    Mounted { dev: String, mountpoint: String },
    Swap { dev: String },
    Held { dev: String, holders: String },
    BacksLoop { dev: String, loop_dev: String },
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

/// What backs an attached loop device, by identity.
#[derive(Clone, Copy, Debug)]
enum Backing {
    /// A block device: its `st_rdev`.
    Device(Devno),
    /// A file on the filesystem of device `st_dev`.
    File(Devno),
}

/// Every attached loop device and what backs it (when its backing file
/// can still be found by its path).
fn loops() -> Vec<(Devno, Backing)> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with("loop") {
            continue;
        }
        let dir = e.path();
        let (Ok(file), Some(devno)) = (
            std::fs::read_to_string(dir.join("loop/backing_file")),
            devno_of_dir(&dir),
        ) else {
            continue;
        };
        let file = file.trim_end_matches('\n');
        let Ok(st) = rustix::fs::stat(file) else {
            continue;
        };
        let backing = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
            rustix::fs::FileType::BlockDevice => Backing::Device(st.st_rdev),
            _ => Backing::File(st.st_dev),
        };
        out.push((devno, backing));
    }
    out
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
            .filter(|(l, b)| {
                (all || !self.members.contains(l))
                    && match *b {
                        Backing::Device(r) => r == d,
                        Backing::File(fs) => fs == d,
                    }
            })
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
/// them: a mount first, then swap, then a holder or a loop device.
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
    let found = first_mount
        .or_else(swap)
        .or_else(|| w.held.first().cloned());
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
