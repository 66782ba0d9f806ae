//! Open once, judge the descriptor: a target's path is opened once
//! (`O_PATH`, which has no effect on any kind of file), and everything is
//! decided from what that descriptor holds: its kind from `st_mode`, the
//! write guard on its `st_rdev` or its mark (`fgetxattr`), signatures probed
//! through it. The descriptor the run uses is reopened from it through
//! `/proc/self/fd`, so it is the same file or device, and checked to be.

use super::hold::Hold;
use super::layout::{check_free_space_fd, dir_dio_alignment, fill};
use super::{io_err, Claim, Geometry, Identity, OpenOptions, OpenTarget, TargetError};
use crate::guard::family::partitions;
use crate::guard::trash::{remove_same_fd, Removal};
use crate::guard::{
    check_block_policy, check_block_use, check_block_write, check_file_use, create_new_marked_at,
    fd_is_marked, lock, lock_device, retry_busy, same_file, Refusal,
};
use iosurvey_model::TargetKind;
use iosurvey_workload::TargetSpec;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, SeekFrom, Stat, StatxFlags};
use rustix::io::Errno;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What a target's path led to, held open from here on.
pub(super) enum Found {
    Existing {
        path: PathBuf,
        kind: TargetKind,
        /// `O_PATH`.
        fd: OwnedFd,
        st: Stat,
    },
    /// A test file to create: `name` in the directory open at `dir`.
    ToCreate {
        path: PathBuf,
        /// `O_PATH`.
        dir: OwnedFd,
        dir_st: Stat,
        name: OsString,
        size: u64,
    },
}

impl Found {
    pub(super) fn identity(&self) -> Identity {
        match self {
            Found::Existing {
                kind: TargetKind::Block,
                st,
                ..
            } => Identity::Block(st.st_rdev),
            Found::Existing { st, .. } => Identity::File {
                dev: st.st_dev,
                ino: st.st_ino,
            },
            Found::ToCreate { dir_st, name, .. } => Identity::New {
                dev: dir_st.st_dev,
                ino: dir_st.st_ino,
                name: name.clone(),
            },
        }
    }

    pub(super) fn path(&self) -> &Path {
        match self {
            Found::Existing { path, .. } | Found::ToCreate { path, .. } => path,
        }
    }
}

/// The test file iosurvey creates inside a directory target.
pub fn test_file_name() -> OsString {
    format!("iosurvey-{}.testfile", std::process::id()).into()
}

fn kind_of(st: &Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// Opens `spec`'s path once (`O_PATH`) and says what it is.
pub(super) fn find(spec: &TargetSpec) -> Result<Found, TargetError> {
    let path = spec.path.as_path();
    let fd = match rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return find_missing(spec),
        // A file where a directory of the path should be: with --size,
        // no directory to create the test file in.
        Err(Errno::NOTDIR) if spec.create_size.is_some() => {
            let dir = path.parent().unwrap_or(path).to_path_buf();
            return Err(TargetError::NoDirectory(dir));
        }
        Err(Errno::NOTDIR) => return Err(TargetError::NotFound(path.to_path_buf())),
        Err(e) => return Err(io_err(path, "open", e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "fstat", e))?;
    // A device node lies on devtmpfs whatever it is; anything else on a
    // kernel interface is no storage.
    if kind_of(&st) != FileType::BlockDevice {
        if let Some(fs) = super::kernel_fs::kernel_fs(&fd) {
            let path = path.to_path_buf();
            return Err(TargetError::KernelFs { path, fs });
        }
    }
    let unsupported = |what| TargetError::Unsupported {
        path: path.to_path_buf(),
        what,
    };
    let existing = |kind| Found::Existing {
        path: path.to_path_buf(),
        kind,
        fd,
        st,
    };
    match kind_of(&st) {
        FileType::RegularFile => Ok(existing(TargetKind::File)),
        FileType::BlockDevice => Ok(existing(TargetKind::Block)),
        FileType::Directory => match spec.create_size {
            Some(size) => {
                let Found::Existing { fd, st, .. } = existing(TargetKind::Directory) else {
                    unreachable!()
                };
                Ok(Found::ToCreate {
                    path: path.join(test_file_name()),
                    dir: fd,
                    dir_st: st,
                    name: test_file_name(),
                    size,
                })
            }
            None => Err(TargetError::DirectoryNeedsSize(path.to_path_buf())),
        },
        FileType::CharacterDevice => Err(unsupported("character device")),
        _ => Err(unsupported("fifo, socket or other")),
    }
}

/// A missing path: a test file to create there, if `--size` was given and
/// the path is not a symlink to nothing.
fn find_missing(spec: &TargetSpec) -> Result<Found, TargetError> {
    let path = spec.path.as_path();
    let Some(size) = spec.create_size else {
        return Err(TargetError::NotFound(path.to_path_buf()));
    };
    if rustix::fs::lstat(path).is_ok() {
        return Err(Refusal::DanglingSymlink(path.to_path_buf()).into());
    }
    let name = path
        .file_name()
        .ok_or_else(|| TargetError::NotFound(path.to_path_buf()))?;
    let dir_path = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = rustix::fs::open(
        dir_path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        // The file would be created, but not where no directory is.
        Errno::NOENT | Errno::NOTDIR => TargetError::NoDirectory(dir_path.to_path_buf()),
        e => io_err(dir_path, "open", e),
    })?;
    let dir_st = rustix::fs::fstat(&dir).map_err(|e| io_err(dir_path, "fstat", e))?;
    Ok(Found::ToCreate {
        path: path.to_path_buf(),
        dir,
        dir_st,
        name: name.to_os_string(),
        size,
    })
}

/// The name under which this process reopens what `fd` holds.
fn self_fd(fd: &impl AsRawFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// Reopens the file or device held at `fd` with `flags`: the same one,
/// whatever its path names now.
fn reopen(fd: &OwnedFd, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::open(self_fd(fd), flags | OFlags::CLOEXEC, Mode::empty())
}

/// Opens an existing file or device for the run (`write`: read-write) or,
/// in planning, read-only, and judges the descriptor: the write guard when
/// `opts.write`, `O_EXCL` on block devices the run writes, the run's lock.
/// With `claim.shared`, the locks taken are shared ones; a failed
/// exclusive open is refused all the same.
pub(super) fn open_existing(
    found: &Found,
    opts: &OpenOptions<'_>,
    claim: &Claim,
    write: bool,
) -> Result<(OwnedFd, Hold), TargetError> {
    let Found::Existing { path, kind, fd, st } = found else {
        unreachable!("open_existing of a test file to create")
    };
    let path = path.as_path();
    let policy = opts.policy;
    let mut flags = if write { OFlags::RDWR } else { OFlags::RDONLY };
    if opts.direct {
        flags |= OFlags::DIRECT;
    }
    // A block device the run writes is opened with O_EXCL, so the kernel
    // refuses one that is mounted or claimed, also with --shared: what
    // holds it may be a filesystem out of sight (a lazy unmount).
    let exclusive = *kind == TargetKind::Block && opts.write;
    if exclusive {
        check_block_policy(path, policy)?;
        if super::kernel_fs::read_only_device(st.st_rdev) {
            // A use says why it is read-only (a loop device over an active
            // swap file), and says it first.
            check_block_use(path, st.st_rdev)?;
            return Err(TargetError::ReadOnlyDevice(path.to_path_buf()));
        }
        flags |= OFlags::EXCL;
    } else if opts.write && policy.readonly {
        return Err(Refusal::ReadOnly(path.to_path_buf()).into());
    }
    let mut use_checked = false;
    let opened = retry_busy(opts.stop, || match reopen(fd, flags) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::BUSY) if exclusive => {
            // A known use says so at once; else it may be a run ending.
            if !use_checked {
                check_block_use(path, st.st_rdev)?;
                use_checked = true;
            }
            // Never overridden, whatever --shared says.
            Ok(None)
        }
        Err(Errno::INVAL) if opts.direct => Err(TargetError::NoDirect(path.to_path_buf())),
        Err(e) if opts.write => Err(write_open_error(path, *kind, st, e)),
        Err(e) => Err(io_err(path, "open", e)),
    })?
    .ok_or_else(|| Refusal::Busy(path.to_path_buf()))?;
    let now = rustix::fs::fstat(&opened).map_err(|e| io_err(path, "fstat", e))?;
    if !same_file(st, &now) {
        return Err(Refusal::Changed(path.to_path_buf()).into());
    }
    if opts.write {
        match kind {
            TargetKind::Block => check_block_write(path, opened.as_fd(), now.st_rdev, policy)?,
            _ if policy.allow_destroy || fd_is_marked(&opened) => check_file_use(path, &now)?,
            _ => return Err(Refusal::ForeignFile(path.to_path_buf()).into()),
        }
    }
    let hold = lock_run(path, &opened, *kind, now.st_rdev, claim, opts)?;
    Ok((opened, hold))
}

/// Why the kernel would not open a target for writing, when a use of it
/// says why (a swap file gives ETXTBSY, a read-only loop device over one
/// EROFS): the use, named, rather than the errno.
fn write_open_error(path: &Path, kind: TargetKind, st: &Stat, e: Errno) -> TargetError {
    let used = match kind {
        TargetKind::Block => check_block_use(path, st.st_rdev),
        _ => check_file_use(path, st),
    };
    match (used, e) {
        (Err(r), _) => r.into(),
        (Ok(()), Errno::TXTBSY) => Refusal::TextBusy(path.to_path_buf()).into(),
        (Ok(()), e) => io_err(path, "open", e),
    }
}

/// Takes the run's locks on the target open at `fd` (shared ones with
/// `--shared`): the descriptor's, and a block device's by its number and
/// by those of its partitions, so that a run on a whole disk and a run on
/// one of its partitions meet (runs on two partitions do not).
fn lock_run(
    path: &Path,
    fd: &OwnedFd,
    kind: TargetKind,
    rdev: u64,
    claim: &Claim,
    opts: &OpenOptions<'_>,
) -> Result<Hold, Refusal> {
    lock(path, fd.as_fd(), claim.shared, opts.stop)?;
    let mut dev_locks = Vec::new();
    if kind == TargetKind::Block {
        let mut devs = vec![rdev];
        devs.extend(partitions(rdev));
        for d in devs {
            dev_locks.extend(lock_device(path, d, claim.shared, opts.stop)?);
        }
    }
    Ok(Hold {
        dev_locks,
        dir: None,
    })
}

/// Refuses a test file's layout the policy forbids, and one whose name is
/// taken (by anything, a symlink too) or whose filesystem lacks the room.
pub(super) fn check_create(found: &Found, opts: &OpenOptions<'_>) -> Result<(), TargetError> {
    let Found::ToCreate {
        path,
        dir,
        name,
        size,
        ..
    } = found
    else {
        return Ok(());
    };
    if opts.policy.readonly {
        return Err(Refusal::ReadOnlyLayout(path.clone()).into());
    }
    if rustix::fs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok() {
        return Err(Refusal::Exists(path.clone()).into());
    }
    check_free_space_fd(path, dir, *size)
}

/// The geometry a test file still to be created will have.
pub(super) fn planned_new(found: &Found, direct: bool) -> Geometry {
    let Found::ToCreate {
        path,
        dir,
        dir_st,
        size,
        ..
    } = found
    else {
        unreachable!("planned_new of an existing target")
    };
    Geometry {
        logical_block_size: dir_dio_alignment(Path::new(&self_fd(dir)), dir_st.st_dev),
        path: path.clone(),
        size: *size,
        direct,
    }
}

/// Creates the test file of `found` (never through a symlink, never over
/// anything), marked pending until the run ends (see
/// [`crate::guard::leftovers`]), lays it out and reopens it for the run. A
/// failure removes it.
pub(super) fn create(
    found: &Found,
    opts: &OpenOptions<'_>,
    claim: &Claim,
) -> Result<(OwnedFd, Hold), TargetError> {
    check_create(found, opts)?;
    let Found::ToCreate {
        path,
        dir,
        name,
        size,
        ..
    } = found
    else {
        unreachable!("create of an existing target")
    };
    // Its removal's trash, made now while there is room: a filesystem
    // filled during the run has none for a new directory (see
    // guard::trash::reserve); without it a fresh one is tried then.
    let _ = crate::guard::trash::reserve(dir.as_fd());
    let wfd = create_new_marked_at(dir, Path::new(name), OFlags::empty()).map_err(|e| match e {
        Errno::EXIST | Errno::LOOP => Refusal::Exists(path.clone()).into(),
        e => io_err(path, "create", e),
    })?;
    crate::guard::leftovers::set_pending(&wfd);
    let opened = (|| {
        fill(path, &wfd, *size, opts.stop)?;
        let mut flags = if opts.write {
            OFlags::RDWR
        } else {
            OFlags::RDONLY
        };
        if opts.direct {
            flags |= OFlags::DIRECT;
        }
        let fd = match reopen(&wfd, flags) {
            Ok(fd) => fd,
            Err(Errno::INVAL) if opts.direct => {
                return Err(TargetError::NoDirect(path.to_path_buf()))
            }
            Err(e) => return Err(io_err(path, "open", e)),
        };
        lock(path, fd.as_fd(), claim.shared, opts.stop)?;
        let dir = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(|e| io_err(path, "dup", e))?;
        let hold = Hold {
            dev_locks: Vec::new(),
            dir: Some((dir, name.clone())),
        };
        Ok((fd, hold))
    })();
    if opened.is_err() {
        remove_at(dir, Path::new(name), &wfd);
    }
    opened
}

/// Unlinks `name` in `dir` if it is still the file open at `fd` at the
/// moment of removal (see [`crate::guard::trash`]).
fn remove_at(dir: &OwnedFd, name: &Path, fd: &OwnedFd) {
    let _ = remove_same_fd(dir.as_fd(), name.as_os_str(), fd);
}

/// Removes the file at `path` if it is still the one open at `fd` at the
/// moment of removal: a file put in its place, even between the check and
/// the unlink, is left alone (see [`crate::guard::trash`]). Done through
/// the directory held in `hold` when there is one (the directory's path
/// may lead elsewhere by now), else through the directory of `path`.
pub(super) fn remove_if_same(path: &Path, fd: &OwnedFd, hold: &Hold) -> std::io::Result<()> {
    let removal = match &hold.dir {
        Some((dir, name)) => remove_same_fd(dir.as_fd(), name, fd)?,
        None => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let dir = rustix::fs::open(parent, flags, Mode::empty())?;
            let name = path.file_name().unwrap_or_default();
            remove_same_fd(dir.as_fd(), name, fd)?
        }
    };
    match removal {
        Removal::Removed => Ok(()),
        Removal::Absent => Err(Errno::NOENT.into()),
        Removal::PutBack => Err(std::io::Error::other(
            "another file has taken its place since iosurvey created it; that file was left alone",
        )),
        Removal::Renamed(kept) => Err(std::io::Error::other(format!(
            "another file had taken its place since iosurvey created it; it was left alone, \
             kept as {} beside it",
            kept.to_string_lossy()
        ))),
    }
}

/// The name of the disk a block device is, or is a partition of.
fn disk_name(fd: &OwnedFd) -> Option<String> {
    let st = rustix::fs::fstat(fd).ok()?;
    let dev = format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(st.st_rdev),
        rustix::fs::minor(st.st_rdev)
    );
    // A partition has no queue of its own: its disk's.
    let disk = ["", "/.."].iter().find_map(|up| {
        let dir = format!("{dev}{up}");
        Path::new(&format!("{dir}/queue"))
            .exists()
            .then(|| std::fs::canonicalize(&dir).ok())
            .flatten()
    })?;
    disk.file_name()?.to_str().map(String::from)
}

/// Probes the opened target: size, block sizes, rotational flag; a file
/// must be non-empty, at least `want` bytes and (unless iosurvey just laid
/// it out) without holes.
pub(super) fn describe(
    path: &Path,
    kind: TargetKind,
    fd: OwnedFd,
    created: bool,
    write: bool,
    direct: bool,
    want: Option<u64>,
) -> Result<OpenTarget, TargetError> {
    let size = rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| io_err(path, "seek", e))?;
    let (logical, physical, rotational) = match kind {
        TargetKind::Block => {
            let lbs = rustix::fs::ioctl_blksszget(&fd).map_err(|e| io_err(path, "BLKSSZGET", e))?;
            let pbs = rustix::fs::ioctl_blkpbszget(&fd).unwrap_or(lbs);
            let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "fstat", e))?;
            // A partition has no queue of its own: its disk's.
            let dir = format!(
                "/sys/dev/block/{}:{}",
                rustix::fs::major(st.st_rdev),
                rustix::fs::minor(st.st_rdev)
            );
            let rot = ["queue/rotational", "../queue/rotational"]
                .iter()
                .find_map(|rel| std::fs::read_to_string(format!("{dir}/{rel}")).ok())
                .map(|s| s.trim() == "1");
            (u64::from(lbs), u64::from(pbs), rot)
        }
        TargetKind::File | TargetKind::Directory => {
            if size == 0 {
                return Err(TargetError::Empty(path.to_path_buf()));
            }
            if let Some(w) = want {
                if size < w {
                    return Err(TargetError::Smaller {
                        path: path.to_path_buf(),
                        size,
                        want: w,
                    });
                }
            }
            if !created {
                check_no_holes(&fd, path, size)?;
            }
            let (lbs, pbs) = file_alignment(&fd);
            (lbs, pbs, None)
        }
    };
    let memory_backed = super::backing::memory_backing(&fd, kind);
    let link = match kind {
        TargetKind::Block => {
            disk_name(&fd).and_then(|n| super::link::ceiling(Path::new("/sys"), &n))
        }
        _ => None,
    };
    let device = super::device::describe(&fd, kind);
    Ok(OpenTarget {
        path: path.to_path_buf(),
        kind,
        size,
        logical_block_size: logical,
        physical_block_size: physical,
        rotational,
        memory_backed,
        link,
        device,
        direct,
        writable: write,
        created: if created {
            super::Created::File
        } else {
            super::Created::Nothing
        },
        fd,
        hold: Hold::default(),
    })
}

/// O_DIRECT offset alignment and preferred I/O size of a file.
fn file_alignment(fd: &OwnedFd) -> (u64, u64) {
    let st = rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::DIOALIGN | StatxFlags::BASIC_STATS,
    );
    match st {
        Ok(s) if s.stx_dio_offset_align > 0 => (
            u64::from(s.stx_dio_offset_align),
            u64::from(s.stx_blksize).max(u64::from(s.stx_dio_offset_align)),
        ),
        Ok(s) => (512, u64::from(s.stx_blksize).max(512)),
        Err(_) => (512, 4096),
    }
}

pub(crate) fn check_no_holes(fd: &OwnedFd, path: &Path, size: u64) -> Result<(), TargetError> {
    match rustix::fs::seek(fd, SeekFrom::Hole(0)) {
        Ok(hole) if hole < size => Err(TargetError::Holes {
            path: path.to_path_buf(),
            hole,
        }),
        _ => Ok(()),
    }
}
