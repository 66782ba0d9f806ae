//! What a run holds of a target besides the descriptor it does I/O on: the
//! lock on a block device's number, and the directory a test file was
//! created in (so that its removal goes through that directory).

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};

/// Held for as long as the run holds the target.
#[derive(Debug, Default)]
pub struct Hold {
    /// `/sys/dev/block/MAJ:MIN` of a block device, locked like the target.
    pub(crate) dev_lock: Option<OwnedFd>,
    /// The directory (`O_PATH`) a created test file is in, and its name.
    pub(crate) dir: Option<(OwnedFd, OsString)>,
}

impl Hold {
    /// Drops the lock on the device number now.
    pub(crate) fn release(&self) {
        if let Some(l) = &self.dev_lock {
            crate::guard::unlock(l.as_fd());
        }
    }
}
