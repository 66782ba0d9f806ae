//! What the kernel says is in use, by identity: the mounts of every mount
//! namespace on the host (not only this process's: a filesystem mounted
//! inside `unshare -m` is as mounted as any other) and the active swap
//! areas, devices and files alike.

use super::devno::Devno;
use std::collections::BTreeSet;

/// A mount: the device number of its filesystem (mountinfo's third
/// field), the block device its source names (when it is a node), where
/// it is mounted, and the process whose mount namespace holds it when
/// that is not this process's; its filesystem type and super options
/// (an overlay's layers are there), and the prefix under which paths of
/// its namespace are reached from this one (`""`, or `/proc/PID/root`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MountEntry {
    pub devno: Option<Devno>,
    pub source: Option<Devno>,
    pub point: String,
    pub foreign: Option<u32>,
    pub fstype: String,
    pub options: String,
    pub root: Option<String>,
    /// The regular file its source names (`st_dev`, inode), for a
    /// filesystem mounted from a file with no loop device (erofs).
    pub source_file: Option<(Devno, u64)>,
}

impl MountEntry {
    /// Where it is mounted, in words: the mount point, and the namespace
    /// when it is another one (the path means nothing in this one).
    pub fn place(&self) -> String {
        match self.foreign {
            None => self.point.clone(),
            Some(pid) => format!("{} in the mount namespace of process {pid}", self.point),
        }
    }
}

/// `\040` and the other octal escapes of mountinfo and /proc/swaps.
pub(crate) fn unescape(s: &str) -> String {
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

fn parse_majmin(s: &str) -> Option<Devno> {
    let (a, b) = s.trim().split_once(':')?;
    Some(rustix::fs::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// What a mount's source path names: a block device (its number) or a
/// regular file (its `st_dev` and inode), if either.
fn source_of(path: &str) -> (Option<Devno>, Option<(Devno, u64)>) {
    use rustix::fs::FileType;
    match rustix::fs::stat(path) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::BlockDevice => (Some(st.st_rdev), None),
            FileType::RegularFile => (None, Some((st.st_dev, st.st_ino))),
            _ => (None, None),
        },
        Err(_) => (None, None),
    }
}

/// The mounts of a mountinfo text. A source that is an absolute path (a
/// device node, or an image file a filesystem is mounted from) is looked
/// up below `root` (`""` for this namespace, `/proc/PID/root` for
/// another, whose /dev may differ), when `root` is given; a relative one
/// means nothing here.
pub(crate) fn mounts(mountinfo: &str, root: Option<&str>, foreign: Option<u32>) -> Vec<MountEntry> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let devno = parse_majmin(f.get(2)?);
            let point = unescape(f.get(4)?);
            let dash = f.iter().position(|x| *x == "-")?;
            let source = f.get(dash + 2).map(|s| unescape(s)).unwrap_or_default();
            let (src, source_file) = root
                .filter(|_| source.starts_with('/'))
                .map(|r| source_of(&format!("{r}{source}")))
                .unwrap_or_default();
            Some(MountEntry {
                devno,
                source: src,
                source_file,
                point,
                foreign,
                fstype: f.get(dash + 1).map(|s| unescape(s)).unwrap_or_default(),
                // Unescaped later, option by option: `\054` is a comma.
                options: f.get(dash + 3).map(|s| s.to_string()).unwrap_or_default(),
                root: root.map(str::to_string),
            })
        })
        .collect()
}

/// The inode of a process's mount namespace (`/proc/PID/ns/mnt`).
fn mount_ns(pid: &str) -> Option<u64> {
    rustix::fs::stat(format!("/proc/{pid}/ns/mnt").as_str())
        .ok()
        .map(|st| st.st_ino)
}

/// The mounts of every mount namespace on the host: this process's first,
/// then each other one once (read through the first process found in it).
pub(crate) fn all_mounts() -> Vec<MountEntry> {
    let own = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut out = mounts(&own, Some(""), None);
    let mut seen: BTreeSet<u64> = mount_ns("self").into_iter().collect();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in procs.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        // A process that ended meanwhile, or a kernel thread, says nothing.
        let Some(ns) = mount_ns(&name) else { continue };
        if !seen.insert(ns) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")) else {
            continue;
        };
        let root = format!("/proc/{pid}/root");
        out.extend(mounts(&text, Some(&root), Some(pid)));
    }
    out
}

/// An active swap area by identity: a block device, or a file (its
/// filesystem's device and its inode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SwapArea {
    Device { rdev: Devno, name: String },
    File { dev: Devno, ino: u64, name: String },
}

/// The active swap areas of /proc/swaps, by the identity their names lead
/// to now.
pub(crate) fn swaps() -> Vec<SwapArea> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let name = unescape(l.split_whitespace().next()?);
            let st = rustix::fs::stat(name.as_str()).ok()?;
            Some(match rustix::fs::FileType::from_raw_mode(st.st_mode) {
                rustix::fs::FileType::BlockDevice => SwapArea::Device {
                    rdev: st.st_rdev,
                    name,
                },
                _ => SwapArea::File {
                    dev: st.st_dev,
                    ino: st.st_ino,
                    name,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_is_read_by_device_number_and_unescaped() {
        let mi = "36 25 7:3 / /mnt/a\\040b rw,relatime shared:1 - ext4 /dev/loop3 rw\n22 1 253:0 / / rw - ext4 /dev/vda rw\n";
        let m = mounts(mi, None, Some(42));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].devno, Some(rustix::fs::makedev(7, 3)));
        assert_eq!(m[0].point, "/mnt/a b");
        assert_eq!(
            m[0].place(),
            "/mnt/a b in the mount namespace of process 42"
        );
        assert_eq!(m[1].devno, Some(rustix::fs::makedev(253, 0)));
    }

    #[test]
    fn unescape_leaves_plain_text_alone() {
        assert_eq!(unescape("/a/b"), "/a/b");
        assert_eq!(unescape("/a\\011b\\"), "/a\tb\\");
    }

    #[test]
    fn this_namespace_is_read_first() {
        let all = all_mounts();
        let own = all.iter().take_while(|m| m.foreign.is_none()).count();
        assert!(own > 0, "no mount of this namespace");
        assert!(all[own..].iter().all(|m| m.foreign.is_some()));
    }
}
