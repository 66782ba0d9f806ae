//! What a run holds of a target besides the descriptor it does I/O on: the
//! lock on a block device's number, and the directory a test file was
//! created in (so that its removal goes through that directory).

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};

/// Held for as long as the run holds the target.
#[derive(Debug, Default)]
pub struct Hold {
    /// `/sys/dev/block/MAJ:MIN` of a block device and of each of its
    /// partitions, locked like the target.
    pub(crate) dev_locks: Vec<OwnedFd>,
    /// The directory (`O_PATH`) a created test file is in, and its name.
    pub(crate) dir: Option<(OwnedFd, OsString)>,
}

impl Hold {
    /// Drops the locks on the device numbers now.
    pub(crate) fn release(&self) {
        for l in &self.dev_locks {
            crate::guard::unlock(l.as_fd());
        }
    }
}
