//! Block devices by number: the `MAJ:MIN` a device is known by in sysfs,
//! its `/dev` name, and the uses of a device the guard refuses. A leaf that
//! every file of the family walk shares.

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
    /// The kernel refused to open a member exclusively: something holds it.
    Busy {
        dev: String,
    },
    /// Another process holds a loop device's backing file open.
    OpenBy {
        file: String,
        pid: u32,
        comm: String,
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

pub(crate) fn sys(d: Devno) -> PathBuf {
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

pub(crate) fn devno_of_dir(dir: &Path) -> Option<Devno> {
    parse_majmin(&std::fs::read_to_string(dir.join("dev")).ok()?)
}
