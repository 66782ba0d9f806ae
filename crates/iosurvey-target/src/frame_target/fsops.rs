//! Descriptor-based steps on a frames directory: every name is opened
//! relative to a directory already held, never through a symlink, and is
//! judged by the descriptor that was opened, not by a path looked up again.

use crate::guard::{fd_is_marked, mark_created, same_file, try_mark_created, CREATED_XATTR};
use iosurvey_engine::Op;
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Mutex;

/// A directory's (or file's) identity: device, inode and birth time (so
/// that a reused inode is another one), from `statx` on its descriptor.
type DirKey = (u64, u64, i64, u32);

/// The directories this process made: they may be removed (when empty)
/// even on a filesystem that keeps no marks.
static MADE_DIRS: Mutex<Vec<DirKey>> = Mutex::new(Vec::new());

fn dir_key(fd: BorrowedFd<'_>) -> Option<DirKey> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::INO | StatxFlags::BTIME,
    )
    .ok()?;
    let dev = rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor);
    let born = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        (st.stx_btime.tv_sec, st.stx_btime.tv_nsec)
    } else {
        (0, 0)
    };
    Some((dev, st.stx_ino, born.0, born.1))
}

fn made_dirs() -> std::sync::MutexGuard<'static, Vec<DirKey>> {
    MADE_DIRS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The unmarked frames the user offered with `--allow-destroy`, by
/// identity: this process may rewrite them, but never marks them and never
/// removes them (they stay the user's).
static OFFERED: Mutex<Vec<DirKey>> = Mutex::new(Vec::new());

fn offered() -> std::sync::MutexGuard<'static, Vec<DirKey>> {
    OFFERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the regular file open at `fd` as offered with
/// `--allow-destroy`: it may be rewritten, unmarked, and is never removed.
pub(crate) fn offer(fd: impl AsFd) {
    if let Some(k) = dir_key(fd.as_fd()) {
        let mut o = offered();
        if !o.contains(&k) {
            o.push(k);
        }
    }
}

/// Whether the file open at `fd` is one the user offered (see [`offer`]).
pub fn is_offered(fd: impl AsFd) -> bool {
    let fd = fd.as_fd();
    let o = offered();
    !o.is_empty() && dir_key(fd).is_some_and(|k| o.contains(&k))
}

/// The frames this process created on a filesystem that keeps no marks,
/// by identity: there, the only files at frame paths it may rewrite or
/// remove (any other file found there, planted during the run or a hard
/// link to one elsewhere, is the user's).
static MADE_FRAMES: Mutex<Option<HashSet<DirKey>>> = Mutex::new(None);

fn made_frames() -> std::sync::MutexGuard<'static, Option<HashSet<DirKey>>> {
    MADE_FRAMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks a frame file this process just created (`O_CREAT|O_EXCL`) as
/// iosurvey's; on a filesystem that keeps no marks, records its identity
/// instead.
pub fn mark_frame(fd: impl AsFd) {
    let fd = fd.as_fd();
    if try_mark_created(fd) == Err(Errno::OPNOTSUPP) {
        if let Some(k) = dir_key(fd) {
            made_frames().get_or_insert_with(HashSet::new).insert(k);
        }
    }
}

/// Forgets a directory this process made, once it is removed.
pub(crate) fn forget_dir(fd: impl AsFd) {
    if let Some(k) = dir_key(fd.as_fd()) {
        made_dirs().retain(|d| *d != k);
    }
}

/// Whether the filesystem of `fd` keeps no user xattrs, so that nothing on
/// it can carry iosurvey's mark (NFS v3, FAT, ...).
pub(crate) fn marks_unsupported(fd: impl AsFd) -> bool {
    let mut buf = [0u8; 8];
    matches!(
        rustix::fs::fgetxattr(fd, CREATED_XATTR, &mut buf[..]),
        Err(Errno::OPNOTSUPP)
    )
}

/// Whether the frame open at `fd` may be rewritten or removed: it has no
/// other name (a hard link elsewhere would be written or kept through it),
/// and it carries the mark or, on a filesystem that keeps no marks, it is
/// a file this process created (see [`mark_frame`]).
pub fn frame_is_ours(fd: impl AsFd) -> bool {
    let fd = fd.as_fd();
    let one_name = rustix::fs::fstat(fd).is_ok_and(|st| st.st_nlink == 1);
    one_name
        && (fd_is_marked(fd)
            || (marks_unsupported(fd)
                && dir_key(fd)
                    .is_some_and(|k| made_frames().as_ref().is_some_and(|s| s.contains(&k)))))
}

/// Whether the directory open at `fd` is iosurvey's: marked, or made by
/// this process.
pub(crate) fn dir_is_ours(fd: impl AsFd) -> bool {
    let fd = fd.as_fd();
    fd_is_marked(fd) || dir_key(fd).is_some_and(|k| made_dirs().contains(&k))
}

/// How every directory of the frames tree is opened: never a symlink.
pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The frames directory's name, `iosurvey-frames`.
pub(crate) fn frames_name() -> std::path::PathBuf {
    iosurvey_workload::frames_dir(Path::new(""))
}

/// The extended attribute on a marked frames directory while a run that
/// creates or rewrites frames in it is under way: the run's process id.
/// Left behind only by a run that was killed before its clean-up.
pub const PENDING_XATTR: &str = "user.iosurvey.pending";

pub(crate) use iosurvey_engine::open_beneath;

/// Opens a name that must be a regular file without blocking on a FIFO or
/// touching a device: `O_NONBLOCK` while opening, refused (`EEXIST`) when
/// the descriptor is not a regular file, then `O_NONBLOCK` cleared (the
/// engines must block).
fn open_regular(root: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let fd = open_beneath(root, rel, flags | OFlags::NONBLOCK, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(Errno::EXIST);
    }
    rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    Ok(fd)
}

/// Opens frame `rel` beneath `root` for one transfer. Reading: a regular
/// file, never through a symlink. Writing: a new frame is created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` and marked; an existing one is written only
/// when the descriptor opened carries iosurvey's mark (see
/// [`frame_is_ours`]) or is a file the user offered (see [`offer`]; it is
/// not marked), and is truncated.
/// Anything else there fails with `EEXIST`.
pub(crate) fn open_frame(
    root: BorrowedFd<'_>,
    rel: &Path,
    op: Op,
    direct: bool,
) -> Result<OwnedFd, Errno> {
    let direct = if direct {
        OFlags::DIRECT
    } else {
        OFlags::empty()
    };
    match op {
        Op::Read => open_regular(root, rel, OFlags::RDONLY | direct),
        Op::Write | Op::Trim => {
            let created = open_beneath(
                root,
                rel,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | direct,
                Mode::from_raw_mode(0o644),
            );
            match created {
                Ok(fd) => {
                    mark_frame(&fd);
                    Ok(fd)
                }
                Err(Errno::EXIST) => {
                    let fd = open_regular(root, rel, OFlags::WRONLY | direct)?;
                    if !frame_is_ours(&fd) && !is_offered(&fd) {
                        return Err(Errno::EXIST);
                    }
                    rustix::fs::ftruncate(&fd, 0)?;
                    Ok(fd)
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// What is at a frame path, judged through a descriptor opened there.
pub(crate) enum Entry {
    Missing,
    Regular {
        fd: OwnedFd,
        size: u64,
        marked: bool,
    },
    /// Not a regular file: what it is.
    Other(&'static str),
}

/// Looks at `name` in the directory `dir` without following a symlink,
/// opening a device or blocking on a FIFO: `O_PATH` first, then a regular
/// file is opened for real and must be the same inode.
pub(crate) fn inspect(dir: BorrowedFd<'_>, name: &Path) -> Result<Entry, Errno> {
    let p = match rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(p) => p,
        Err(Errno::NOENT) => return Ok(Entry::Missing),
        Err(e) => return Err(e),
    };
    let st = rustix::fs::fstat(&p)?;
    let what = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            let fd = rustix::fs::openat(
                dir,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let now = rustix::fs::fstat(&fd)?;
            if !same_file(&now, &st) {
                return Ok(Entry::Other("a file replaced while it was checked"));
            }
            return Ok(Entry::Regular {
                size: now.st_size as u64,
                marked: fd_is_marked(&fd),
                fd,
            });
        }
        t => type_name(t),
    };
    Ok(Entry::Other(what))
}

/// How a refusal names a file type that is not a frame.
fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "a regular file",
        FileType::Symlink => "a symbolic link, which iosurvey never follows",
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "an unknown file type",
    }
}

/// What `name` in `dir` is, for a refusal, without following it.
pub(crate) fn what_is(dir: BorrowedFd<'_>, name: &Path) -> &'static str {
    match rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => type_name(FileType::from_raw_mode(st.st_mode)),
        Err(_) => "not a directory",
    }
}

/// Whether the regular file at `fd` holds `bytes` of written data: long
/// enough and without holes.
pub(crate) fn is_written(fd: &OwnedFd, size: u64, bytes: u64) -> bool {
    size >= bytes
        && !matches!(rustix::fs::seek(fd, rustix::fs::SeekFrom::Hole(0)), Ok(h) if h < bytes)
}

/// Opens the directory `name` in `dir`: `Ok(None)` when there is none,
/// `Err(what)` with a description when something else is there.
pub(crate) fn open_dir(dir: BorrowedFd<'_>, name: &Path) -> Result<Option<OwnedFd>, Errno> {
    match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates the directory `name` in `dir` and marks it, or opens the one
/// already there (unmarked if the user made it); never through a symlink.
/// Returns the directory and whether this call made it.
pub(crate) fn make_dir(dir: BorrowedFd<'_>, name: &Path) -> Result<(OwnedFd, bool), Errno> {
    let made = match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
        Ok(()) => true,
        Err(Errno::EXIST) => false,
        Err(e) => return Err(e),
    };
    let fd = rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())?;
    if made {
        mark_created(&fd);
        if let Some(k) = dir_key(fd.as_fd()) {
            made_dirs().push(k);
        }
    }
    Ok((fd, made))
}

/// The process id in a directory's [`PENDING_XATTR`], if any.
pub(crate) fn pending_pid(dir: impl AsFd) -> Option<u32> {
    let mut buf = [0u8; 16];
    let n = rustix::fs::fgetxattr(dir, PENDING_XATTR, &mut buf[..]).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
}

/// Records that this process is creating or rewriting frames in `dir`.
pub(crate) fn set_pending(dir: impl AsFd) {
    let pid = std::process::id().to_string();
    let _ = rustix::fs::fsetxattr(
        dir,
        PENDING_XATTR,
        pid.as_bytes(),
        rustix::fs::XattrFlags::empty(),
    );
}

/// Clears this process's [`PENDING_XATTR`] from `dir` (not another's).
pub(crate) fn clear_pending(dir: impl AsFd) {
    let dir = dir.as_fd();
    if pending_pid(dir) == Some(std::process::id()) {
        let _ = rustix::fs::fremovexattr(dir, PENDING_XATTR);
    }
}

/// Whether process `pid` is a running iosurvey.
pub(crate) fn iosurvey_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end().starts_with("iosurvey"))
}
