//! Opening targets: probing files and block devices (size, logical and
//! physical block size, rotational flag, O_DIRECT), creating and laying out
//! test files with non-zero, incompressible data, and removing them. Each
//! target is opened once and judged by its descriptor (see `open`).

mod hold;
mod layout;
mod open;

use crate::guard::{Refusal, WritePolicy, CREATED_XATTR};
use iosurvey_workload::TargetSpec;
use rustix::io::Errno;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

pub(crate) use layout::{check_free_space, dir_dio_alignment, fill};
pub use open::test_file_name;

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
    /// Held with the target: a device's lock, a test file's directory.
    pub(crate) hold: hold::Hold,
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

/// What a target is, by identity rather than by name: two names of one
/// target (a symlink, a `/dev/disk/by-id` alias, a hard link) are equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Identity {
    /// A block device: its device number.
    Block(u64),
    /// An existing file: its device and inode.
    File { dev: u64, ino: u64 },
    /// A test file still to be created: `name` in the directory of device
    /// `dev`, inode `ino`.
    New { dev: u64, ino: u64, name: OsString },
}

/// How a run holds its target, beside the write guard.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    /// `--shared`: another run may use the target at the same time (each
    /// measures the other's load): its lock and exclusive open are shared,
    /// not refused; every other use still is.
    pub shared: bool,
    /// What planning found: the open refuses anything else.
    pub expect: Option<Identity>,
}

/// What planning found of a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub geometry: Geometry,
    pub identity: Identity,
}

/// The test file iosurvey creates inside a directory target.
pub fn test_file_in(dir: &Path) -> PathBuf {
    dir.join(test_file_name())
}

/// Whether iosurvey created this file (in an earlier run, with `--keep`).
/// Judged by path: for display and for the frames of a video workload; the
/// target layer reads the mark of the descriptor it holds.
pub fn created_by_iosurvey(path: &Path) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::getxattr(path, CREATED_XATTR, &mut buf[..]).is_ok()
}

/// Opens (creating and laying out if needed) the target of `spec`, after
/// the write guard has allowed it, locked for this run.
pub fn open_target(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<OpenTarget, TargetError> {
    open_target_claimed(spec, opts, &Claim::default())
}

/// [`open_target`], held as `claim` says; refused when the target is not
/// the one planned (`claim.expect`).
pub fn open_target_claimed(
    spec: &TargetSpec,
    opts: OpenOptions<'_>,
    claim: &Claim,
) -> Result<OpenTarget, TargetError> {
    let found = open::find(spec)?;
    if claim
        .expect
        .as_ref()
        .is_some_and(|e| *e != found.identity())
    {
        return Err(Refusal::Changed(found.path().to_path_buf()).into());
    }
    match &found {
        open::Found::Existing { path, kind, .. } => {
            let (fd, hold) = open::open_existing(&found, &opts, claim, opts.write)?;
            let mut t = open::describe(
                path,
                *kind,
                fd,
                false,
                opts.write,
                opts.direct,
                spec.create_size,
            )?;
            t.hold = hold;
            Ok(t)
        }
        open::Found::ToCreate { path, .. } => {
            let (fd, hold) = open::create(&found, &opts, claim)?;
            let held =
                rustix::io::fcntl_dupfd_cloexec(&fd, 0).map_err(|e| io_err(path, "dup", e))?;
            let t = open::describe(
                path,
                TargetKind::File,
                fd,
                true,
                opts.write,
                opts.direct,
                None,
            );
            match t {
                Ok(mut t) => {
                    t.hold = hold;
                    Ok(t)
                }
                Err(e) => {
                    let _ = open::remove_if_same(path, &held, &hold);
                    Err(e)
                }
            }
        }
    }
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
/// Takes no lock: see [`plan_target`] for what a run will hold.
pub fn plan_geometry(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<Geometry, TargetError> {
    let lenient = Claim {
        shared: true,
        expect: None,
    };
    plan_target(spec, opts, &lenient).map(|p| p.geometry)
}

/// [`plan_geometry`] and the target's identity; unless `claim.shared`, also
/// refused when another run holds the target (its lock, or for a block
/// device the run writes, an exclusive open).
pub fn plan_target(
    spec: &TargetSpec,
    opts: OpenOptions<'_>,
    claim: &Claim,
) -> Result<Planned, TargetError> {
    let found = open::find(spec)?;
    let identity = found.identity();
    let geometry = match &found {
        open::Found::Existing { path, kind, .. } => {
            let (fd, _hold) = open::open_existing(&found, &opts, claim, false)?;
            open::describe(path, *kind, fd, false, false, opts.direct, spec.create_size)?.geometry()
        }
        open::Found::ToCreate { .. } => {
            open::check_create(&found, &opts)?;
            open::planned_new(&found, opts.direct)
        }
    };
    Ok(Planned { geometry, identity })
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

    /// Drops this run's lock on the target now (see [`crate::guard::unlock`]).
    pub fn release(&self) {
        crate::guard::unlock(std::os::fd::AsFd::as_fd(&self.fd));
        self.hold.release();
    }

    /// Keeps a test file iosurvey created (`--keep`): clears its pending
    /// mark, so that later runs reuse it and never take it for the
    /// leftover of a killed run.
    pub fn keep_created(&self) {
        if self.created && self.kind == TargetKind::File {
            crate::guard::leftovers::clear_pending(&self.fd);
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
        open::remove_if_same(&self.path, &self.fd, &self.hold)
    }
}

#[cfg(test)]
mod tests;
