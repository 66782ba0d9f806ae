//! The family of a block device, and whether any of it is in use.
//!
//! A device is checked as a whole with everything whose data overlaps it:
//! its partitions, the loop devices it backs (by identity of their backing
//! file, a device or a file on a filesystem on it), the dm/md devices that
//! hold it, all of these recursively, and upwards the parent disk of a
//! partition and the backing device of a loop device (with their holders
//! and loop devices). Upwards, a loop device over a file reaches that file
//! (by its `st_dev` and inode), and every other loop device over the same
//! file, whatever its offset and whether it was given the file through an
//! overlay mount or on the overlay's layer (see [`super::overlay`]), is of
//! the family; a loop device over a disk
//! reaches the disk's partitions whose bytes it covers (by its offset and
//! size limit), to any depth. Any member that is mounted (in any mount
//! namespace), in use as swap (a device, or a backing file that is a swap
//! file), held or backing a loop device is a use, which `--force` never
//! overrides; so is a member the kernel will not open exclusively (a
//! claim no table shows).
//!
//! A loop device's backing file is known by the identity the kernel keeps
//! (`LOOP_GET_STATUS64`: its `st_dev`, inode and `st_rdev`), never by the
//! path in sysfs, which may name nothing any more (a removed or renamed
//! node, a node in another mount namespace) or something else. Devices
//! are opened by their number (see [`super::devnode`]), so a /dev node
//! moved away neither hides a claim nor makes a loop device unknowable. A
//! loop device whose backing still cannot be told may sit on anything, so
//! it is a use of every device and file.

pub use super::devno::{dev_name, Devno, Use};
pub(crate) use super::devno::{devno_of_dir, sys};
use super::devnode::open_device;
use super::inuse::{all_mounts, swaps, MountEntry, SwapArea};
use super::loops::{backing_name, loops, unknown_loop, LoopDevice, Range};
pub(crate) use super::loops::{loop_backing, Backing};
pub use super::loops::{loops_on_file, FileUses};
use super::openers::openers;
use super::overlay::Overlays;
use std::collections::BTreeSet;

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

/// The family of `target` and the uses found while walking it.
struct Walk {
    loops: Vec<LoopDevice>,
    members: BTreeSet<Devno>,
    /// Backing files (`st_dev`, inode) of loop devices of the family.
    files: BTreeSet<(Devno, u64)>,
    held: Vec<Use>,
    /// A file through an overlay is also the file on its layer.
    overlays: Overlays,
}

/// What a member lies on: a device (with the range of it that the member
/// covers) or a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Below {
    Device(Devno, Range),
    File { dev: Devno, ino: u64, via: Devno },
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
            .filter(|l| {
                (all || !self.members.contains(&l.devno)) && l.backing.on(d, &self.overlays)
            })
            .map(|l| l.devno)
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

    /// The other loop devices over the file `dev`/`ino` (which the member
    /// `via` lies on), whatever their offset and whichever identity of it
    /// they were given (through an overlay or on its layer): uses, and of
    /// the family.
    fn users_of_file(&mut self, dev: Devno, ino: u64, via: Devno) {
        let others: Vec<Devno> = self
            .loops
            .iter()
            .filter(|l| l.backing.is_file(dev, ino, &self.overlays))
            .filter(|l| !self.members.contains(&l.devno))
            .map(|l| l.devno)
            .collect();
        for l in others {
            self.held.push(Use::BacksLoop {
                dev: format!("{} ({})", dev_name(via), backing_name(via)),
                loop_dev: dev_name(l),
            });
            self.down(l);
        }
    }

    /// What `d` lies on, where `r` is the range of `d` the target covers:
    /// the parent disk of a partition, the backing device or file of a
    /// loop device.
    fn below(&self, d: Devno, r: Range) -> Vec<Below> {
        let mut out: Vec<Below> = parent(d)
            .map(|p| Below::Device(p, partition_range(d).place(r)))
            .into_iter()
            .collect();
        for l in self.loops.iter().filter(|l| l.devno == d) {
            match l.backing {
                Backing::Device(b) => out.push(Below::Device(b, l.window.place(r))),
                Backing::File { dev, ino } => out.push(Below::File { dev, ino, via: d }),
                Backing::Unknown => {}
            }
        }
        out
    }

    /// The partitions of `d` (a device the target lies on) whose bytes
    /// overlap `r`, the range of `d` the target covers, with what is below
    /// them: a loop device 3 MiB into a disk is of the family of the
    /// partition there, not of the disk's other partitions.
    fn partitions_under(&mut self, d: Devno, r: Range) {
        for p in partitions(d) {
            if !self.members.contains(&p) && partition_range(p).overlaps(r) {
                self.down(p);
            }
        }
    }
}

/// The bytes of its disk a partition covers (all of them if sysfs will not
/// say).
fn partition_range(p: Devno) -> Range {
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(sys(p).join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    match (read("start"), read("size")) {
        // sysfs counts 512-byte sectors, whatever the block size.
        (Some(s), Some(n)) => Range::at(s * 512, (n * 512).max(1)),
        _ => Range::ALL,
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
        files: BTreeSet::new(),
        held: Vec::new(),
        overlays: Overlays::now(),
    };
    w.down(target);
    let mut up = w.below(target, Range::ALL);
    let mut devices = Vec::new();
    let mut files = Vec::new();
    while let Some(b) = up.pop() {
        match b {
            Below::Device(u, r) => {
                if w.members.insert(u) {
                    devices.push((u, r));
                    up.extend(w.below(u, r));
                }
            }
            Below::File { dev, ino, via } => {
                if w.files.insert((dev, ino)) {
                    files.push((dev, ino, via));
                }
            }
        }
    }
    for &(u, r) in &devices {
        w.users_of(u, false);
        w.partitions_under(u, r);
    }
    for (dev, ino, via) in files {
        w.users_of_file(dev, ino, via);
    }
    w
}

/// A loop device of `w` over the file `f`, named with its backing file,
/// for messages.
fn file_named(w: &Walk, f: (Devno, u64)) -> String {
    w.loops
        .iter()
        .find(|l| l.backing.is_file(f.0, f.1, &w.overlays))
        .map(|l| format!("{} ({})", dev_name(l.devno), backing_name(l.devno)))
        .unwrap_or_else(|| "a loop device's backing file".into())
}

/// The first mount of a member of `w`, in any mount namespace, or of a
/// filesystem mounted straight from one of its backing files (erofs
/// mounts an image with no loop device).
fn first_mount(w: &Walk) -> Option<Use> {
    all_mounts().into_iter().find_map(|m| {
        let dev = [m.devno, m.source]
            .into_iter()
            .flatten()
            .find(|x| w.members.contains(x))
            .map(dev_name)
            .or_else(|| mounted_backing_file(w, &m))?;
        Some(Use::Mounted {
            dev,
            mountpoint: m.place(),
        })
    })
}

/// The backing file of `w` that the mount `m` is mounted from, named.
fn mounted_backing_file(w: &Walk, m: &MountEntry) -> Option<String> {
    let src = m.source_file?;
    let f = *w.files.iter().find(|&&f| w.overlays.same_file(f, src))?;
    Some(file_named(w, f))
}

/// The first process (not iosurvey) holding a backing file of `w` open.
fn first_opener(w: &Walk) -> Option<Use> {
    if w.files.is_empty() {
        return None;
    }
    openers().into_iter().find_map(|o| {
        let f = *w.files.iter().find(|&&f| w.overlays.same_file(f, o.file))?;
        Some(Use::OpenBy {
            file: file_named(w, f),
            pid: o.pid,
            comm: o.comm,
        })
    })
}

/// The first active swap area among `w`'s members: a member device, a
/// swap file on a filesystem on one, or a loop device's backing file.
fn first_swap(w: &Walk) -> Option<Use> {
    swaps().into_iter().find_map(|s| {
        let (hit, name) = match s {
            SwapArea::Device { rdev, name } => (w.members.contains(&rdev), name),
            SwapArea::File { dev, ino, name } => (
                w.members.contains(&dev)
                    || w.files.iter().any(|&f| w.overlays.same_file(f, (dev, ino))),
                name,
            ),
        };
        hit.then_some(Use::Swap { dev: name })
    })
}

/// The first member the kernel refuses to open exclusively: a claim (a
/// mount, a holder) that no table here shows. The target, the disk it is
/// a partition of and its own partitions are left out (the kernel ties
/// their claims together, and the target is judged by its own exclusive
/// open), and so is a disk with partitions (a claimed partition makes the
/// whole disk busy; the partitions that matter are members themselves).
fn first_busy(w: &Walk, target: Devno) -> Option<Use> {
    let own: BTreeSet<Devno> = parent(target)
        .into_iter()
        .chain(partitions(target))
        .chain([target])
        .collect();
    w.members
        .iter()
        .filter(|d| !own.contains(d) && partitions(**d).is_empty())
        .find(|&&d| refuses_exclusive_open(d))
        .map(|&d| Use::Busy { dev: dev_name(d) })
}

/// Whether the kernel refuses to open the device `d` exclusively (EBUSY).
/// Opened by its number (its /dev node if that is it, else a private
/// node: a node moved away hides no claim) and closed at once.
fn refuses_exclusive_open(d: Devno) -> bool {
    use rustix::fs::OFlags;
    let flags = OFlags::RDONLY | OFlags::EXCL | OFlags::NONBLOCK;
    matches!(open_device(d, flags), Err(rustix::io::Errno::BUSY))
}

/// The device numbers of `target`'s family, and the first use of any of
/// them: a mount (in any namespace; also of a backing file) first, then
/// swap, then a holder or a loop device, then another process holding a
/// backing file, then a member the kernel will not open exclusively, then
/// any loop device whose backing cannot be told.
pub fn find_use(target: Devno) -> (BTreeSet<Devno>, Option<Use>) {
    let w = walk(target);
    let found = first_mount(&w)
        .or_else(|| first_swap(&w))
        .or_else(|| w.held.first().cloned())
        .or_else(|| first_opener(&w))
        .or_else(|| first_busy(&w, target))
        .or_else(|| unknown_loop(&w.loops));
    (w.members, found)
}
