//! Opening targets: probing files and block devices (size, logical and
//! physical block size, rotational flag, O_DIRECT), creating and laying out
//! test files with non-zero, incompressible data, and removing them. Each
//! target is opened once and judged by its descriptor (see `open`).

mod backing;
mod claim;
mod hold;
mod kernel_fs;
mod layout;
pub mod link;
mod open;
mod probe;

use crate::guard::{Refusal, WritePolicy};
use iosurvey_workload::TargetSpec;
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

pub(crate) use backing::memory_backing;
pub use claim::{created_by_iosurvey, Claim, Identity};
pub use iosurvey_model::TargetKind;
pub(crate) use kernel_fs::kernel_fs;
pub(crate) use layout::{check_free_space, dir_dio_alignment, fill};
pub use open::test_file_name;
pub use probe::{plan_geometry, plan_target, Geometry, Planned};

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
    /// What memory backs it, when memory does (tmpfs, zram, ...).
    pub memory_backed: Option<String>,
    /// The fastest its interface moves data (a block device's PCIe or
    /// SATA link, or its members' sum), when sysfs tells it.
    pub link: Option<link::Ceiling>,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened for writing.
    pub writable: bool,
    /// What this run created here, and removes at its end unless kept.
    pub created: Created,
    pub fd: OwnedFd,
    /// Held with the target: a device's lock, a test file's directory.
    pub(crate) hold: hold::Hold,
}

/// What a run created in a target, and removes at its end unless kept.
#[derive(Clone, Debug, Default)]
pub enum Created {
    /// Nothing: the target is the user's.
    #[default]
    Nothing,
    /// The test file itself, laid out by this run.
    File,
    /// Frames in a frames directory, by number (see
    /// [`crate::frame_target::CreatedFrames`]).
    Frames(crate::frame_target::CreatedFrames),
}

impl Created {
    /// Whether the run created anything here.
    pub fn any(&self) -> bool {
        !matches!(self, Created::Nothing)
    }
}

/// Why a target cannot be used. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{0}: no such file or directory; give an existing device, or --size to create a test file"
    )]
    NotFound(PathBuf),
    #[error("{0}: no such directory to create the test file in; create it first")]
    NoDirectory(PathBuf),
    #[error("{0}: permission denied")]
    Permission(PathBuf),
    #[error("{0}: read-only filesystem; nothing can be written there (remount it read-write, or give a target elsewhere)")]
    ReadOnlyFs(PathBuf),
    #[error("{0}: read-only device (blockdev --setro, losetup -r or a write-protected medium); a write test cannot run on it: make it writable, or drop the writes")]
    ReadOnlyDevice(PathBuf),
    #[error("{path}: on {fs}, a kernel interface, not storage (its files are the kernel's state and settings; a write changes them); give a file, directory or block device on real storage")]
    KernelFs { path: PathBuf, fs: &'static str },
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
    #[error("{0}: the file is empty, and iosurvey lays out only test files it creates; remove it (iosurvey then creates it at --size), or fill it first")]
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
        Errno::ACCESS | Errno::PERM => TargetError::Permission(path.to_path_buf()),
        Errno::ROFS => TargetError::ReadOnlyFs(path.to_path_buf()),
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

/// The test file iosurvey creates inside a directory target.
pub fn test_file_in(dir: &Path) -> PathBuf {
    dir.join(test_file_name())
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
    drop_pages(std::os::fd::AsFd::as_fd(&t.fd));
}

/// Syncs `fd` and drops its cached pages, so that the next reads come
/// from the device.
pub fn drop_pages(fd: std::os::fd::BorrowedFd<'_>) {
    let _ = rustix::fs::fsync(fd);
    let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
}

/// The alignment of buffers for I/O on every one of `targets`: the
/// largest logical block size, 4096 when there is none.
pub fn io_alignment(targets: &[OpenTarget]) -> usize {
    targets
        .iter()
        .map(|t| t.logical_block_size as usize)
        .max()
        .unwrap_or(4096)
}

impl OpenTarget {
    /// Removes the test file if it is still the one this run holds (a
    /// frames directory's frames are removed by `frame_target`, see
    /// [`OpenTarget::remove_if_created`]).
    pub(crate) fn remove_created_file(&self) -> std::io::Result<()> {
        open::remove_if_same(&self.path, &self.fd, &self.hold)
    }
}

#[cfg(test)]
mod tests;
