//! The write guard: what iosurvey refuses to write to, checked in the target
//! layer so every mode inherits it. Every check judges a descriptor
//! iosurvey holds, never a path that may since name something else.
//!
//! - `--readonly` refuses every write, a test file's layout included.
//! - Block devices are written only with `--allow-destroy`, opened with
//!   `O_EXCL` (the kernel refuses a mounted or claimed device), and even
//!   then not when anything in the device's family (see [`family`]) is
//!   mounted, in use as swap, held (LVM, md, dm) or backs a loop device,
//!   nor when it carries a filesystem, partition table, RAID, LVM or swap
//!   signature (found by util-linux's `blkid -p` through the opened
//!   descriptor, see [`probe`]) unless `--force` is added. `--force` never
//!   overrides a use.
//! - Existing files are overwritten only if iosurvey created them (marked
//!   with an extended attribute, read with `fgetxattr`) or with
//!   `--allow-destroy`, and never while they back a loop device (known by
//!   the identity of its backing file), are the image a filesystem is
//!   mounted from, are held open by another process (see [`openers`]), or
//!   while a loop device's backing cannot be told. Test files are created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW`, never through a symlink.
//! - One run per target: a target is locked (`flock`, exclusive) while a
//!   run uses it, a block device also by its device number and those of
//!   its partitions (their directories in `/sys/dev/block`), so a second
//!   node of the same device, and a run on a disk and one on its partition,
//!   meet the lock. `--shared` runs take shared locks instead, and are refused when
//!   a run without `--shared` holds the target. `--shared` relaxes only
//!   these locks: a block device a run writes is always opened with
//!   `O_EXCL`, and a failed exclusive open is always refused (a filesystem,
//!   md or a lazily unmounted mount may be what holds it).

pub(crate) mod devno;
pub(crate) mod devnode;
pub mod family;
pub(crate) mod inuse;
pub mod leftovers;
pub(crate) mod loops;
pub(crate) mod openers;
pub(crate) mod overlay;
pub mod probe;
pub mod trash;

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// What the user allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritePolicy {
    pub allow_destroy: bool,
    pub force: bool,
    pub readonly: bool,
}

/// Why a write was refused. Each message names the reason and the way out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{0}: --readonly refuses write workloads")]
    ReadOnly(PathBuf),
    #[error("{0}: --readonly refuses to lay out a test file (that is a write); give an existing file, or drop --readonly")]
    ReadOnlyLayout(PathBuf),
    #[error("{0}: refusing to write to a block device without --allow-destroy; it would destroy its data")]
    BlockDevice(PathBuf),
    #[error("{0}: refusing to overwrite an existing file iosurvey did not create; add --allow-destroy, or name a new file with --size")]
    ForeignFile(PathBuf),
    #[error("{path}: {dev} is mounted at {mountpoint}; unmount it or pick another device (--force does not override this)")]
    Mounted {
        path: PathBuf,
        dev: String,
        mountpoint: String,
    },
    #[error("{path}: {dev} is in use as swap; swapoff it or pick another target (--force does not override this)")]
    Swap { path: PathBuf, dev: String },
    #[error("{path}: {dev} is held by {holders} (LVM, md or dm); release it or pick another device (--force does not override this)")]
    Held {
        path: PathBuf,
        dev: String,
        holders: String,
    },
    #[error("{path}: {dev} backs the loop device {loop_dev}; detach it (losetup -d) or pick another device (--force does not override this)")]
    BacksLoop {
        path: PathBuf,
        dev: String,
        loop_dev: String,
    },
    #[error("{path}: {dev} (the same storage, reached another way) is busy: the kernel refused to open it exclusively (mounted, maybe in another mount namespace, or held); free it or pick another device (--force does not override this)")]
    FamilyBusy { path: PathBuf, dev: String },
    #[error("{0}: the kernel refuses to open it for writing (ETXTBSY): it is a running program or a swap area no longer listed by its name; pick another target (--force does not override this)")]
    TextBusy(PathBuf),
    #[error("{path}: backs the loop device {loop_dev}; detach it (losetup -d {loop_dev}) or pick another target (--force does not override this)")]
    FileBacksLoop { path: PathBuf, loop_dev: String },
    #[error("{path}: is the image of the {fstype} filesystem mounted at {mountpoint}; unmount it or pick another target (--force does not override this)")]
    FileMounted {
        path: PathBuf,
        fstype: String,
        mountpoint: String,
    },
    #[error("{path} is open by process {pid} ({comm}); stop it or pick another target (--force does not override this)")]
    FileOpenBy {
        path: PathBuf,
        pid: u32,
        comm: String,
    },
    #[error("{path}: {file} is open by process {pid} ({comm}); stop it or pick another target (--force does not override this)")]
    OpenBy {
        path: PathBuf,
        file: String,
        pid: u32,
        comm: String,
    },
    #[error("{path}: cannot tell what {loop_dev} sits on (its /dev node is missing or the kernel would not say), so it may sit on this target; detach it (losetup -d) or give it a node in /dev (--force does not override this)")]
    UnknownLoop { path: PathBuf, loop_dev: String },
    #[error("{0}: the kernel refused to open the device exclusively: it is mounted, held or opened exclusively by another program (a filesystem out of sight, md, a VM) or by an iosurvey run that writes it; free it (--shared does not override this: a run that writes a device opens it exclusively)")]
    Busy(PathBuf),
    #[error("{0}: another iosurvey run is using this target (it is locked); wait for it to end, or add --shared to run beside it (each run then measures the other's load)")]
    InUse(PathBuf),
    #[error("{0}: another iosurvey run uses this target without --shared (it is locked); wait for it to end (--shared runs only beside runs that also give --shared)")]
    InUseUnshared(PathBuf),
    #[error("{path}: process {pid} ({comm}) holds a lock on it (flock): it is in use; stop it or pick another target (--shared does not override this)")]
    LockedBy {
        path: PathBuf,
        pid: u32,
        comm: String,
    },
    #[error("{path}: {dev} holds data ({what}); wipe it first or add --force to destroy it")]
    Signature {
        path: PathBuf,
        dev: String,
        what: String,
    },
    #[error("{0}: cannot check the device for filesystem or partition signatures: blkid (util-linux) is not installed at a system path (/usr/sbin, /sbin, /usr/bin, /bin); install it or add --force")]
    NoProber(PathBuf),
    #[error("{path}: cannot check the device for filesystem or partition signatures ({err}); add --force to write it anyway")]
    ProbeFailed { path: PathBuf, err: String },
    #[error("{0}: it changed between the checks and the open (the name now leads to another file or device); nothing was written, run again")]
    Changed(PathBuf),
    #[error("{0}: a symlink or a file appeared at the path of the test file; iosurvey creates test files only where nothing is and never through a symlink; remove it or name another path")]
    Exists(PathBuf),
    #[error("{0}: is a symlink to nothing; iosurvey never creates a test file through a symlink; remove it, or name the file itself")]
    DanglingSymlink(PathBuf),
    #[error("{second}: the same target as {first} (same device or file); name each target once")]
    SameTarget { first: PathBuf, second: PathBuf },
    #[error("{second}: overlaps {first}: one storage (a partition and its disk, a loop, dm or md device over it, or two loop devices over one file at any offset) would be measured twice; name each piece of storage once (--force does not override this)")]
    Overlap { first: PathBuf, second: PathBuf },
}

impl Refusal {
    fn of_use(path: &Path, u: family::Use) -> Refusal {
        let path = path.to_path_buf();
        match u {
            family::Use::Mounted { dev, mountpoint } => Refusal::Mounted {
                path,
                dev,
                mountpoint,
            },
            family::Use::Swap { dev } => Refusal::Swap { path, dev },
            family::Use::Held { dev, holders } => Refusal::Held { path, dev, holders },
            family::Use::BacksLoop { dev, loop_dev } => Refusal::BacksLoop {
                path,
                dev,
                loop_dev,
            },
            family::Use::UnknownLoop { loop_dev } => Refusal::UnknownLoop { path, loop_dev },
            family::Use::Busy { dev } => Refusal::FamilyBusy { path, dev },
            family::Use::OpenBy { file, pid, comm } => Refusal::OpenBy {
                path,
                file,
                pid,
                comm,
            },
        }
    }
}

/// The refusals of the policy alone, before anything is opened: a write to
/// a block device needs `--allow-destroy`, and nothing is written with
/// `--readonly`.
pub fn check_block_policy(path: &Path, policy: WritePolicy) -> Result<(), Refusal> {
    if policy.readonly {
        return Err(Refusal::ReadOnly(path.to_path_buf()));
    }
    if !policy.allow_destroy {
        return Err(Refusal::BlockDevice(path.to_path_buf()));
    }
    Ok(())
}

/// The first use of the device `rdev` or of its family (see [`family`]).
pub fn check_block_use(path: &Path, rdev: u64) -> Result<(), Refusal> {
    match family::find_use(rdev).1 {
        Some(u) => Err(Refusal::of_use(path, u)),
        None => Ok(()),
    }
}

/// Checks that the block device open at `fd` (device number `rdev`, named
/// `path` by the user) may be written: the policy, every use of its
/// family, then (unless `--force`) signatures on it and its partitions,
/// probed through descriptors.
pub fn check_block_write(
    path: &Path,
    fd: BorrowedFd<'_>,
    rdev: u64,
    policy: WritePolicy,
) -> Result<(), Refusal> {
    check_block_policy(path, policy)?;
    check_block_use(path, rdev)?;
    if policy.force {
        return Ok(());
    }
    check_signature(path, fd, &family::dev_name(rdev))?;
    for part in family::partitions(rdev) {
        // By its number: a partition whose node was moved away is probed
        // all the same.
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK;
        if let Ok(pfd) = devnode::open_device(part, flags) {
            check_signature(path, pfd.as_fd(), &family::dev_name(part))?;
        }
    }
    Ok(())
}

/// Refuses writing the regular file `st` (named `path`) while it is an
/// active swap area, the image a filesystem is mounted from, backs a loop
/// device (or while a loop device's backing cannot be told), or is held
/// open by another process.
pub fn check_file_use(path: &Path, st: &rustix::fs::Stat) -> Result<(), Refusal> {
    check_file_use_in(&family::FileUses::now(), path, st)
}

/// [`check_file_use`] against the uses read once in `uses`.
pub fn check_file_use_in(
    uses: &family::FileUses,
    path: &Path,
    st: &rustix::fs::Stat,
) -> Result<(), Refusal> {
    if let Some(dev) = uses.swap(st.st_dev, st.st_ino) {
        return Err(Refusal::Swap {
            path: path.to_path_buf(),
            dev,
        });
    }
    if let Some((mountpoint, fstype)) = uses.mounted_from(st.st_dev, st.st_ino) {
        return Err(Refusal::FileMounted {
            path: path.to_path_buf(),
            fstype,
            mountpoint,
        });
    }
    match uses.loops_on(st.st_dev, st.st_ino) {
        (ls, _) if !ls.is_empty() => {
            return Err(Refusal::FileBacksLoop {
                path: path.to_path_buf(),
                loop_dev: family::dev_name(ls[0]),
            })
        }
        (_, Some(u)) => return Err(Refusal::of_use(path, u)),
        _ => {}
    }
    match uses.opener(st.st_dev, st.st_ino) {
        Some((pid, comm)) => Err(Refusal::FileOpenBy {
            path: path.to_path_buf(),
            pid,
            comm,
        }),
        None => Ok(()),
    }
}

fn check_signature(path: &Path, fd: BorrowedFd<'_>, dev: &str) -> Result<(), Refusal> {
    match probe::probe_fd(fd) {
        Ok(None) => Ok(()),
        Ok(Some(what)) => Err(Refusal::Signature {
            path: path.to_path_buf(),
            dev: dev.to_string(),
            what,
        }),
        Err(probe::ProbeError::NoBlkid) => Err(Refusal::NoProber(path.to_path_buf())),
        Err(e) => Err(Refusal::ProbeFailed {
            path: path.to_path_buf(),
            err: e.to_string(),
        }),
    }
}

/// How long a lock or an exclusive open is retried before a target counts
/// as used by another run: a run that was killed may still hold it for a
/// moment, as the kernel drops an io_uring ring's files some 30 to 110 ms
/// after the process ends (a run that ends normally unregisters them
/// first and holds nothing once it exits).
pub const RELEASE_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Retries `attempt` every 20 ms while it says "busy" (`Ok(None)`), for at
/// most [`RELEASE_WAIT`] or until `stop` is set.
pub fn retry_busy<T, E>(
    stop: Option<&std::sync::atomic::AtomicBool>,
    mut attempt: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let until = std::time::Instant::now() + RELEASE_WAIT;
    loop {
        if let Some(v) = attempt()? {
            return Ok(Some(v));
        }
        let stopped = stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
        if stopped || std::time::Instant::now() >= until {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Takes the run's lock on the target open at `fd` (`flock`, exclusive,
/// or shared for a `--shared` run): refused when another run holds it
/// (after [`RELEASE_WAIT`]), exclusively when `shared`.
pub fn lock(
    path: &Path,
    fd: BorrowedFd<'_>,
    shared: bool,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(), Refusal> {
    use rustix::fs::FlockOperation::{NonBlockingLockExclusive, NonBlockingLockShared};
    let op = if shared {
        NonBlockingLockShared
    } else {
        NonBlockingLockExclusive
    };
    let got = retry_busy(stop, || match rustix::fs::flock(fd, op) {
        Ok(()) => Ok(Some(())),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        // A filesystem without flock: nothing to lock against.
        Err(_) => Ok::<_, Refusal>(Some(())),
    })?;
    got.ok_or_else(|| {
        let holder = rustix::fs::fstat(fd)
            .ok()
            .and_then(|st| openers::foreign_flock_holder(st.st_dev, st.st_ino));
        match (holder, shared) {
            (Some((pid, comm)), _) => Refusal::LockedBy {
                path: path.to_path_buf(),
                pid,
                comm,
            },
            (None, true) => Refusal::InUseUnshared(path.to_path_buf()),
            (None, false) => Refusal::InUse(path.to_path_buf()),
        }
    })
}

/// Locks the block device numbered `rdev` by its number: its directory
/// `/sys/dev/block/MAJ:MIN` (the same for every node of the device), as
/// [`lock`] does. The descriptor holds the lock; `None` without sysfs.
pub fn lock_device(
    path: &Path,
    rdev: u64,
    shared: bool,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<std::os::fd::OwnedFd>, Refusal> {
    use rustix::fs::{major, minor, Mode, OFlags};
    let dir = format!("/sys/dev/block/{}:{}", major(rdev), minor(rdev));
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(dir.as_str(), flags, Mode::empty()) else {
        return Ok(None);
    };
    lock(path, fd.as_fd(), shared, stop)?;
    Ok(Some(fd))
}

/// Drops the run's lock on `fd` now, not when the last reference to the
/// open file goes (which io_uring may hold a moment longer).
pub fn unlock(fd: BorrowedFd<'_>) {
    let _ = rustix::fs::flock(fd, rustix::fs::FlockOperation::Unlock);
}

/// The extended attribute that marks a file iosurvey created.
pub const CREATED_XATTR: &str = "user.iosurvey.created";

/// Marks a file or directory iosurvey created, so that a later run may
/// write or remove it without --allow-destroy. Filesystems without user
/// xattrs leave it unmarked.
pub fn mark_created(fd: impl std::os::fd::AsFd) {
    let _ = try_mark_created(fd);
}

/// [`mark_created`], saying whether the mark was kept (`OPNOTSUPP`: the
/// filesystem keeps no user xattrs).
pub(crate) fn try_mark_created(fd: impl std::os::fd::AsFd) -> Result<(), rustix::io::Errno> {
    rustix::fs::fsetxattr(fd, CREATED_XATTR, b"1", rustix::fs::XattrFlags::empty())
}

/// Whether two `stat`s are of one file: device, inode, and (for device
/// nodes) the device they name.
pub(crate) fn same_file(a: &rustix::fs::Stat, b: &rustix::fs::Stat) -> bool {
    (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)
}

/// Whether the file or directory open at `fd` carries iosurvey's mark.
/// Judged on the descriptor held, never on a path that may have changed.
pub fn fd_is_marked(fd: impl std::os::fd::AsFd) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::fgetxattr(fd, CREATED_XATTR, &mut buf[..]).is_ok()
}

/// Creates a new file at `path` with `O_CREAT|O_EXCL|O_NOFOLLOW` (so it
/// never follows a symlink and never opens what is already there), for
/// writing plus `extra` flags, and marks it as iosurvey's.
pub fn create_new_marked(
    path: &Path,
    extra: rustix::fs::OFlags,
) -> Result<std::os::fd::OwnedFd, rustix::io::Errno> {
    create_new_marked_at(rustix::fs::CWD, path, extra)
}

/// [`create_new_marked`] relative to the directory open at `dir` (any
/// descriptor of it, `O_PATH` too), so the directory cannot be swapped
/// between the checks and the creation.
pub fn create_new_marked_at(
    dir: impl AsFd,
    name: &Path,
    extra: rustix::fs::OFlags,
) -> Result<std::os::fd::OwnedFd, rustix::io::Errno> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC | extra,
        Mode::from_raw_mode(0o644),
    )?;
    mark_created(&fd);
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_new_never_follows_a_symlink_nor_opens_what_exists() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"user data").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("elsewhere"), &dangling).unwrap();
        let none = rustix::fs::OFlags::empty();
        assert!(create_new_marked(&victim, none).is_err());
        assert!(create_new_marked(&link, none).is_err());
        assert!(create_new_marked(&dangling, none).is_err());
        assert!(!d.path().join("elsewhere").exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"user data");
        let fresh = d.path().join("fresh");
        let fd = create_new_marked(&fresh, none).unwrap();
        let xattrs =
            rustix::fs::fsetxattr(&fd, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok();
        assert_eq!(fd_is_marked(&fd), xattrs);
    }

    #[test]
    fn readonly_and_allow_destroy_come_first() {
        let p = Path::new("/dev/nonexistent");
        let ro = WritePolicy {
            readonly: true,
            allow_destroy: true,
            force: true,
        };
        assert_eq!(check_block_policy(p, ro), Err(Refusal::ReadOnly(p.into())));
        assert_eq!(
            check_block_policy(p, WritePolicy::default()),
            Err(Refusal::BlockDevice(p.into()))
        );
    }
}
