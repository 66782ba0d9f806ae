//! Loop devices by identity: what backs each attached loop device (the
//! kernel's `LOOP_GET_STATUS64`: its backing file's `st_dev`, inode and
//! `st_rdev`, and the window of it shown, offset and size limit), never the
//! path in sysfs; and the regular files in use as a whole (loop backing
//! files, swap files), read once to judge many files.

use super::devno::{dev_name, devno_of_dir, sys, Devno, Use};
use super::devnode::open_device;
use super::inuse::{all_mounts, swaps, MountEntry, SwapArea};
use super::openers::{openers, Opener};
use super::overlay::Overlays;

/// What backs an attached loop device, by identity (the kernel's, from
/// `LOOP_GET_STATUS64`, never the path in sysfs, which may no longer
/// resolve or may now name something else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backing {
    /// A block device: its `st_rdev`.
    Device(Devno),
    /// A regular file: its `st_dev` (the filesystem it lies on) and inode.
    File { dev: Devno, ino: u64 },
    /// Cannot be told (the loop device cannot be opened, even by a node
    /// of iosurvey's own, or the kernel would not say): it may sit on
    /// anything.
    Unknown,
}

impl Backing {
    /// Whether this backing's data lies on the device `d` (it is `d`, or
    /// a file on a filesystem on `d`, also through an overlay with a layer
    /// on `d`; an unknown backing may be anything).
    pub(crate) fn on(self, d: Devno, overlays: &Overlays) -> bool {
        match self {
            Backing::Device(r) => r == d,
            Backing::File { dev, .. } => overlays.reaches(dev, d),
            Backing::Unknown => false,
        }
    }

    /// Whether this backing is the file `dev`/`ino`, by any identity it
    /// shows (through an overlay, or on its layer).
    pub(crate) fn is_file(self, dev: Devno, ino: u64, overlays: &Overlays) -> bool {
        match self {
            Backing::File { dev: d, ino: i } => overlays.same_file((d, i), (dev, ino)),
            _ => false,
        }
    }
}

/// An attached loop device: its number, what backs it, and which bytes of
/// the backing it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoopDevice {
    pub devno: Devno,
    pub backing: Backing,
    pub window: Range,
}

/// A byte range `[start, end)` of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub start: u64,
    pub end: u64,
}

impl Range {
    pub const ALL: Range = Range {
        start: 0,
        end: u64::MAX,
    };

    /// The range `[start, start + len)` (`len` 0: to the end).
    pub(crate) fn at(start: u64, len: u64) -> Range {
        let end = match len {
            0 => u64::MAX,
            n => start.saturating_add(n),
        };
        Range { start, end }
    }

    /// `inner` (a range of a device placed at `self` on the one below),
    /// as a range of the device below.
    pub(crate) fn place(self, inner: Range) -> Range {
        let start = self.start.saturating_add(inner.start);
        let end = self.start.saturating_add(inner.end).min(self.end);
        Range { start, end }
    }

    pub fn overlaps(self, other: Range) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// The loop device `devno`, asked of the kernel through the device itself
/// (its /dev node if that is it, else a private node: see
/// [`super::devnode`]). `None` when the loop device is detached.
pub(crate) fn loop_device(devno: Devno) -> Option<LoopDevice> {
    use rustix::fs::OFlags;
    let unknown = Some(LoopDevice {
        devno,
        backing: Backing::Unknown,
        window: Range::ALL,
    });
    let flags = OFlags::RDONLY | OFlags::NONBLOCK;
    let Ok(fd) = open_device(devno, flags) else {
        return unknown;
    };
    match iosurvey_sys::loopdev::loop_backing(std::os::fd::AsFd::as_fd(&fd)) {
        Ok(b) => Some(LoopDevice {
            devno,
            backing: match b.rdev {
                0 => Backing::File {
                    dev: b.dev,
                    ino: b.ino,
                },
                r => Backing::Device(r),
            },
            window: Range::at(b.offset, b.sizelimit),
        }),
        // Detached since /sys was read.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => None,
        Err(_) => unknown,
    }
}

/// The backing of the loop device `devno` (see [`loop_device`]).
pub(crate) fn loop_backing(devno: Devno) -> Option<Backing> {
    loop_device(devno).map(|l| l.backing)
}

/// Every attached loop device and what backs it.
pub(crate) fn loops() -> Vec<LoopDevice> {
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
        out.extend(loop_device(devno));
    }
    out
}

/// The first loop device whose backing cannot be told, as a use.
pub(crate) fn unknown_loop(all: &[LoopDevice]) -> Option<Use> {
    all.iter()
        .find(|l| l.backing == Backing::Unknown)
        .map(|l| Use::UnknownLoop {
            loop_dev: dev_name(l.devno),
        })
}

/// The loop devices the regular file `dev`/`ino` backs, and the first
/// loop device whose backing cannot be told (which might be this file).
pub fn loops_on_file(dev: Devno, ino: u64) -> (Vec<Devno>, Option<Use>) {
    FileUses::now().loops_on(dev, ino)
}

/// The regular files in use as a whole, read once to judge many files
/// (the frames of a video run): the backing files of loop devices, swap
/// files, images a filesystem is mounted from with no loop device (erofs,
/// in any mount namespace), and files other processes hold open (a FUSE
/// daemon such as fuse2fs), by identity (through overlays too, see
/// [`Overlays`]).
pub struct FileUses {
    loops: Vec<LoopDevice>,
    swaps: Vec<SwapArea>,
    overlays: Overlays,
    mounted: Vec<MountEntry>,
    openers: Vec<Opener>,
}

impl FileUses {
    pub fn now() -> FileUses {
        let mounts = all_mounts();
        FileUses {
            loops: loops(),
            swaps: swaps(),
            overlays: Overlays::of(&mounts),
            mounted: mounts
                .into_iter()
                .filter(|m| m.source_file.is_some())
                .collect(),
            openers: openers(),
        }
    }

    /// The mount of a filesystem whose source is the file `dev`/`ino`:
    /// where it is mounted, and its type.
    pub fn mounted_from(&self, dev: Devno, ino: u64) -> Option<(String, String)> {
        self.mounted
            .iter()
            .find(|m| {
                m.source_file
                    .is_some_and(|f| self.overlays.same_file(f, (dev, ino)))
            })
            .map(|m| (m.place(), m.fstype.clone()))
    }

    /// The first other process that holds the file `dev`/`ino` open or
    /// mapped: its pid and name.
    pub fn opener(&self, dev: Devno, ino: u64) -> Option<(u32, String)> {
        self.openers
            .iter()
            .find(|o| self.overlays.same_file(o.file, (dev, ino)))
            .map(|o| (o.pid, o.comm.clone()))
    }

    /// Whether the files `a` and `b` (each `st_dev`, inode) may be one
    /// file, also seen through an overlay and on its layer.
    pub fn same_file(&self, a: (Devno, u64), b: (Devno, u64)) -> bool {
        self.overlays.same_file(a, b)
    }

    /// The loop devices the file `dev`/`ino` backs, and the first loop
    /// device whose backing cannot be told (which might be this file).
    pub fn loops_on(&self, dev: Devno, ino: u64) -> (Vec<Devno>, Option<Use>) {
        let backs = self
            .loops
            .iter()
            .filter(|l| l.backing.is_file(dev, ino, &self.overlays))
            .map(|l| l.devno)
            .collect();
        (backs, unknown_loop(&self.loops))
    }

    /// The name of the active swap area the file `dev`/`ino` is.
    pub fn swap(&self, dev: Devno, ino: u64) -> Option<String> {
        self.swaps.iter().find_map(|s| match s {
            SwapArea::File {
                dev: d,
                ino: i,
                name,
            } if self.overlays.same_file((*d, *i), (dev, ino)) => Some(name.clone()),
            _ => None,
        })
    }
}

/// The name of a loop device's backing file, for messages (the path in
/// sysfs, which may be stale: only shown, never used).
pub(crate) fn backing_name(loop_dev: Devno) -> String {
    std::fs::read_to_string(sys(loop_dev).join("loop/backing_file"))
        .map(|s| format!("its backing file {}", s.trim()))
        .unwrap_or_else(|_| "its backing file".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_placed_on_the_device_below_is_shifted_and_clipped() {
        let window = Range::at(3 << 20, 8 << 20);
        assert_eq!(
            window.place(Range::ALL),
            Range {
                start: 3 << 20,
                end: 11 << 20
            }
        );
        assert_eq!(window.place(Range::at(1 << 20, 1 << 20)).start, 4 << 20);
        let part = Range::at(1 << 20, 16 << 20);
        assert!(part.overlaps(window));
        assert!(!part.overlaps(Range::at(40 << 20, 0)));
        assert!(!part.overlaps(Range::at(17 << 20, 1)));
    }
}
