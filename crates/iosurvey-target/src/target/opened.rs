//! What an opened target is, how it is asked for, and why it may be
//! refused: the plain types every file of the target layer shares.

use crate::frame_target::CreatedFrames;
use crate::guard::{Refusal, WritePolicy};
use iosurvey_model::TargetKind;
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

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
    pub link: Option<super::link::Ceiling>,
    /// The device under it (its model, firmware, scheduler, ...; a file's
    /// filesystem and mount options), for the report.
    pub device: Option<iosurvey_model::document::DeviceReport>,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened for writing.
    pub writable: bool,
    /// What this run created here, and removes at its end unless kept.
    pub created: Created,
    pub fd: OwnedFd,
    /// Held with the target: a device's lock, a test file's directory.
    pub(crate) hold: super::hold::Hold,
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
    Frames(CreatedFrames),
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
    #[error("{path}: refusing discards: {why}")]
    NoDiscard { path: PathBuf, why: String },
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
    /// The job discards on it (and so writes): it must be a block device
    /// that supports discard.
    pub trim: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// What the user allowed to be written.
    pub policy: WritePolicy,
    /// Set by Ctrl-C: stops laying out a test file (which is then removed).
    pub stop: Option<&'a AtomicBool>,
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
