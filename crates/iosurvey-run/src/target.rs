//! Opening targets: probing files and block devices (size, logical and
//! physical block size, rotational flag, O_DIRECT), creating and laying out
//! test files with non-zero, incompressible data, and removing them.

use crate::guard::{check_block_write, mark_created, Refusal, WritePolicy, CREATED_XATTR};
use iosurvey_engine::BufferPool;
use iosurvey_workload::TargetSpec;
use rustix::fs::{FileType, Mode, OFlags, SeekFrom, StatxFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
    /// The directory of a files-per-frame video workload.
    Directory,
}

/// A target opened for one job.
#[derive(Debug)]
pub struct OpenTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size: u64,
    /// Smallest unit of O_DIRECT offsets and lengths.
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    /// From sysfs, for block devices.
    pub rotational: Option<bool>,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened for writing.
    pub writable: bool,
    /// iosurvey created (and laid out) this file and will remove it.
    pub created: bool,
    /// A frames directory: the frame files iosurvey wrote, removed with
    /// the directory when `created`.
    pub frame_files: Vec<PathBuf>,
    pub fd: OwnedFd,
}

/// The shape of a target that validation needs: known before a test file
/// is laid out, so bad settings are refused before any I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub path: PathBuf,
    pub size: u64,
    pub logical_block_size: u64,
    pub direct: bool,
}

/// Why a target cannot be used. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{0}: no such file or directory; give an existing device, or --size to create a test file"
    )]
    NotFound(PathBuf),
    #[error("{0}: permission denied")]
    Permission(PathBuf),
    #[error("{path}: unsupported file type ({what}); give a regular file or a block device")]
    Unsupported { path: PathBuf, what: &'static str },
    #[error("{0}: is a directory; give --size for the test file iosurvey creates (and removes) inside it")]
    DirectoryNeedsSize(PathBuf),
    #[error("{0}: interrupted while laying out the test file; it was removed")]
    Interrupted(PathBuf),
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("{0}: the filesystem does not support O_DIRECT; add --buffered to go through the page cache")]
    NoDirect(PathBuf),
    #[error("{0}: the file is empty; give --size to lay out a test file")]
    Empty(PathBuf),
    #[error("{path}: the file has unwritten holes (first at byte {hole}); reading them would not touch the device. Remove it so iosurvey lays it out, or fill it first")]
    Holes { path: PathBuf, hole: u64 },
    #[error("{path}: {size} bytes is smaller than the {want} bytes the run needs (--size, or the frames of a video stream)")]
    Smaller { path: PathBuf, size: u64, want: u64 },
    #[error("{path}: not enough free space for a {want}-byte test file ({free} bytes free); lower --size")]
    NoSpace { path: PathBuf, want: u64, free: u64 },
    #[error("{0}: the files layout needs a directory to hold one file per frame; give a directory, or --mode stream for a file or device")]
    FramesNeedDir(PathBuf),
    #[error("{0}: no such directory; create it first (frames go in an iosurvey-frames directory inside it)")]
    NoFramesDir(PathBuf),
    #[error("{dir}: {missing} of {frames} frames were never written (first: {first}); write them first with --write --keep and the same --format, --frames and --files-per-dir, or add --prepare")]
    FramesMissing {
        dir: PathBuf,
        missing: u64,
        frames: u64,
        first: PathBuf,
    },
    #[error("{path}: {op} failed: {err}")]
    Io {
        path: PathBuf,
        op: &'static str,
        err: std::io::Error,
    },
}

pub(crate) fn io_err(path: &Path, op: &'static str, e: Errno) -> TargetError {
    match e {
        Errno::ACCESS | Errno::PERM | Errno::ROFS => TargetError::Permission(path.to_path_buf()),
        Errno::NOENT => TargetError::NotFound(path.to_path_buf()),
        _ => TargetError::Io {
            path: path.to_path_buf(),
            op,
            err: e.into(),
        },
    }
}

/// How to open a target.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions<'a> {
    /// The job writes to it.
    pub write: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// What the user allowed to be written.
    pub policy: WritePolicy,
    /// Set by Ctrl-C: stops laying out a test file (which is then removed).
    pub stop: Option<&'a AtomicBool>,
}

/// What a target path turns into: an existing file or device, or a test
/// file to create (a missing path, or a file inside a directory).
enum Resolved {
    Existing {
        path: PathBuf,
        kind: TargetKind,
        rdev: u64,
    },
    ToCreate {
        path: PathBuf,
        size: u64,
    },
}

/// The test file iosurvey creates inside a directory target.
pub fn test_file_in(dir: &Path) -> PathBuf {
    dir.join(format!("iosurvey-{}.testfile", std::process::id()))
}

fn resolve(spec: &TargetSpec) -> Result<Resolved, TargetError> {
    let path = spec.path.as_path();
    let st = match rustix::fs::stat(path) {
        Ok(st) => st,
        Err(Errno::NOENT) => {
            return match spec.create_size {
                Some(size) => Ok(Resolved::ToCreate {
                    path: path.to_path_buf(),
                    size,
                }),
                None => Err(TargetError::NotFound(path.to_path_buf())),
            }
        }
        Err(e) => return Err(io_err(path, "stat", e)),
    };
    let unsupported = |what| TargetError::Unsupported {
        path: path.to_path_buf(),
        what,
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(Resolved::Existing {
            path: path.to_path_buf(),
            kind: TargetKind::File,
            rdev: 0,
        }),
        FileType::BlockDevice => Ok(Resolved::Existing {
            path: path.to_path_buf(),
            kind: TargetKind::Block,
            rdev: st.st_rdev,
        }),
        FileType::Directory => match spec.create_size {
            Some(size) => Ok(Resolved::ToCreate {
                path: test_file_in(path),
                size,
            }),
            None => Err(TargetError::DirectoryNeedsSize(path.to_path_buf())),
        },
        FileType::CharacterDevice => Err(unsupported("character device")),
        _ => Err(unsupported("fifo, socket or other")),
    }
}

/// Refuses writes the policy does not allow, before anything is opened.
fn guard(resolved: &Resolved, opts: &OpenOptions<'_>) -> Result<(), TargetError> {
    if !opts.write {
        return Ok(());
    }
    match resolved {
        Resolved::ToCreate { path, .. } if opts.policy.readonly => {
            Err(Refusal::ReadOnly(path.clone()).into())
        }
        Resolved::ToCreate { .. } => Ok(()),
        Resolved::Existing {
            path,
            kind: TargetKind::Block,
            rdev,
        } => Ok(check_block_write(
            path,
            rustix::fs::major(*rdev),
            rustix::fs::minor(*rdev),
            opts.policy,
        )?),
        Resolved::Existing { path, .. } => {
            if opts.policy.readonly {
                Err(Refusal::ReadOnly(path.clone()).into())
            } else if opts.policy.allow_destroy || created_by_iosurvey(path) {
                Ok(())
            } else {
                Err(Refusal::ForeignFile(path.clone()).into())
            }
        }
    }
}

/// Whether iosurvey created this file (in an earlier run, with `--keep`).
pub fn created_by_iosurvey(path: &Path) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::getxattr(path, CREATED_XATTR, &mut buf[..]).is_ok()
}

/// Opens (creating and laying out if needed) the target of `spec`, after
/// the write guard has allowed it.
pub fn open_target(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<OpenTarget, TargetError> {
    let resolved = resolve(spec)?;
    guard(&resolved, &opts)?;
    let (path, kind, created) = match resolved {
        Resolved::ToCreate { path, size } => {
            create_file(&path, size, opts.stop)?;
            (path, TargetKind::File, true)
        }
        Resolved::Existing { path, kind, .. } => (path, kind, false),
    };
    let want = spec.create_size.filter(|_| !created);
    let opened = open_probed(&path, kind, created, opts.write, opts.direct, want);
    if opened.is_err() && created {
        let _ = std::fs::remove_file(&path);
    }
    opened
}

fn open_probed(
    path: &Path,
    kind: TargetKind,
    created: bool,
    write: bool,
    direct: bool,
    want: Option<u64>,
) -> Result<OpenTarget, TargetError> {
    let mut flags = if write { OFlags::RDWR } else { OFlags::RDONLY };
    flags |= OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::INVAL) if direct => return Err(TargetError::NoDirect(path.to_path_buf())),
        Err(e) => return Err(io_err(path, "open", e)),
    };
    let size = rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| io_err(path, "seek", e))?;
    let (logical, physical, rotational) = match kind {
        TargetKind::Block => {
            let lbs = rustix::fs::ioctl_blksszget(&fd).map_err(|e| io_err(path, "BLKSSZGET", e))?;
            let pbs = rustix::fs::ioctl_blkpbszget(&fd).unwrap_or(lbs);
            let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "fstat", e))?;
            let rot = std::fs::read_to_string(format!(
                "/sys/dev/block/{}:{}/queue/rotational",
                rustix::fs::major(st.st_rdev),
                rustix::fs::minor(st.st_rdev)
            ))
            .ok()
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
    Ok(OpenTarget {
        path: path.to_path_buf(),
        kind,
        size,
        logical_block_size: logical,
        physical_block_size: physical,
        rotational,
        direct,
        writable: write,
        created,
        frame_files: Vec::new(),
        fd,
    })
}

/// O_DIRECT offset alignment and preferred I/O size of a file.
fn file_alignment(fd: &OwnedFd) -> (u64, u64) {
    let st = rustix::fs::statx(
        fd,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
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

/// Creates `path` at `size` bytes, every byte written with non-zero,
/// incompressible data and flushed to the device.
fn create_file(path: &Path, size: u64, stop: Option<&AtomicBool>) -> Result<(), TargetError> {
    check_free_space(path, parent_dir(path), size)?;
    let fd = create_marked(path, OFlags::EXCL)?;
    let laid = fill(path, &fd, size, stop);
    if laid.is_err() {
        drop(fd);
        let _ = std::fs::remove_file(path);
    }
    laid
}

/// Creates (or with `flags` such as TRUNC, reopens) `path` for writing and
/// marks it as iosurvey's.
pub(crate) fn create_marked(path: &Path, flags: OFlags) -> Result<OwnedFd, TargetError> {
    let fd = rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC | flags,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| io_err(path, "create", e))?;
    mark_created(&fd);
    Ok(fd)
}

/// Lays out `size` bytes of data in `fd` (the file at `path`).
pub(crate) fn fill(
    path: &Path,
    fd: &OwnedFd,
    size: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), TargetError> {
    lay_out(fd, size, stop).map_err(|e| match e {
        Errno::INTR => TargetError::Interrupted(path.to_path_buf()),
        e => io_err(path, "lay out", e),
    })
}

fn lay_out(fd: &OwnedFd, size: u64, stop: Option<&AtomicBool>) -> Result<(), Errno> {
    const CHUNK: usize = 4 << 20;
    let mut pool = BufferPool::new(1, CHUNK, 4096, 0x1057_5eed).map_err(|_| Errno::NOMEM)?;
    let mut off = 0u64;
    let mut round = 0u64;
    while off < size {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(Errno::INTR);
        }
        let n = (size - off).min(CHUNK as u64) as usize;
        let buf = pool.get_mut(0);
        // Vary each chunk so no two chunks are equal (no dedupe).
        buf[..8].copy_from_slice(&round.to_le_bytes());
        buf[8..16].copy_from_slice(&off.to_le_bytes());
        let written = rustix::io::pwrite(fd, &buf[..n], off)?;
        if written == 0 {
            return Err(Errno::NOSPC);
        }
        off += written as u64;
        round += 1;
    }
    rustix::fs::fsync(fd)?;
    // Drop what the layout left in the page cache.
    let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
    Ok(())
}

/// Writes back and evicts the target's pages from the page cache, so that
/// a buffered read phase starts cold.
pub fn drop_cache(t: &OpenTarget) {
    let _ = rustix::fs::fsync(&t.fd);
    let _ = rustix::fs::fadvise(&t.fd, 0, None, rustix::fs::Advice::DontNeed);
}

/// The geometry `spec` will have once opened, found without creating or
/// writing anything: the write guard runs, an existing target is opened
/// read-only and probed, and a test file still to be created is checked
/// against its directory (free space, O_DIRECT alignment of the filesystem).
pub fn plan_geometry(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<Geometry, TargetError> {
    let resolved = resolve(spec)?;
    guard(&resolved, &opts)?;
    match resolved {
        Resolved::Existing { path, kind, .. } => {
            let t = open_probed(&path, kind, false, false, opts.direct, spec.create_size)?;
            Ok(t.geometry())
        }
        Resolved::ToCreate { path, size } => {
            let dir = parent_dir(&path);
            let st = rustix::fs::stat(dir).map_err(|e| io_err(dir, "stat", e))?;
            if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
                return Err(TargetError::NotFound(path));
            }
            check_free_space(&path, dir, size)?;
            Ok(Geometry {
                logical_block_size: dir_dio_alignment(dir, st.st_dev),
                path,
                size,
                direct: opts.direct,
            })
        }
    }
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// O_DIRECT alignment new files in `dir` will have: what the filesystem
/// reports for the directory, else the logical block size of the device it
/// lives on, else 512.
pub(crate) fn dir_dio_alignment(dir: &Path, dev: u64) -> u64 {
    if let Ok(s) = rustix::fs::statx(
        rustix::fs::CWD,
        dir,
        rustix::fs::AtFlags::empty(),
        StatxFlags::DIOALIGN,
    ) {
        if s.stx_dio_offset_align > 0 {
            return u64::from(s.stx_dio_offset_align);
        }
    }
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(v) = std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/{rel}")) {
            if let Ok(n) = v.trim().parse::<u64>() {
                return n;
            }
        }
    }
    512
}

pub(crate) fn check_free_space(path: &Path, dir: &Path, size: u64) -> Result<(), TargetError> {
    if let Ok(vfs) = rustix::fs::statvfs(dir) {
        let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
        if free < size {
            return Err(TargetError::NoSpace {
                path: path.to_path_buf(),
                want: size,
                free,
            });
        }
    }
    Ok(())
}

impl OpenTarget {
    /// What validation needs to know of this target.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            path: self.path.clone(),
            size: self.size,
            logical_block_size: self.logical_block_size,
            direct: self.direct,
        }
    }

    /// Removes the file if iosurvey created it; for a frames directory,
    /// the frames it wrote and then the directories they leave empty.
    pub fn remove_if_created(&self) -> std::io::Result<()> {
        if !self.created {
            return Ok(());
        }
        if self.kind == TargetKind::Directory {
            return crate::frame_target::remove_frames(&self.path, &self.frame_files);
        }
        std::fs::remove_file(&self.path)
    }
}

#[cfg(test)]
mod tests;
