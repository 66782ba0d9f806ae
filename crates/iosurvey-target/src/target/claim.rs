//! How a run holds its target: by identity, locked or shared, and the
//! mark that says iosurvey created it.

use super::{Created, OpenTarget};
use crate::guard::CREATED_XATTR;
use std::ffi::OsString;
use std::path::Path;

/// What a target is, by identity rather than by name: two names of one
/// target (a symlink, a `/dev/disk/by-id` alias, a hard link) are equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

/// Whether iosurvey created this file (in an earlier run, with `--keep`).
/// Judged by path: for display and for the frames of a video workload; the
/// target layer reads the mark of the descriptor it holds.
pub fn created_by_iosurvey(path: &Path) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::getxattr(path, CREATED_XATTR, &mut buf[..]).is_ok()
}

impl OpenTarget {
    /// Drops this run's lock on the target now (see [`crate::guard::unlock`]).
    pub fn release(&self) {
        crate::guard::unlock(std::os::fd::AsFd::as_fd(&self.fd));
        self.hold.release();
    }

    /// Keeps a test file iosurvey created (`--keep`): clears its pending
    /// mark, so that later runs reuse it and never take it for the
    /// leftover of a killed run.
    pub fn keep_created(&self) {
        if matches!(self.created, Created::File) {
            crate::guard::leftovers::clear_pending(&self.fd);
        }
    }
}
