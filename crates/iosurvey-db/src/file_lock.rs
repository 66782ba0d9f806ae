//! One iosurvey at a time makes, migrates and writes a database file: an
//! advisory `flock` on the file, taken before anything of it is read and
//! held until SQLite's connection is closed.
//!
//! SQLite alone lets several processes write one WAL database, but not
//! make one together: while one switches a new file to WAL, another
//! reading it without locks (the immutable peek that keeps a foreign file
//! untouched) sees it half written, and a `journal_mode` change that meets
//! another connection fails at once instead of waiting. Four runs ending
//! together lost runs that way (`database is locked`, `malformed`).
//! `flock` locks are not SQLite's (which are `fcntl` locks, released when
//! any descriptor of the file in the process is closed): the descriptor
//! here is closed only after SQLite's connection is, so that its locks
//! are never dropped under it. Readers take the lock shared: they wait
//! for a writer's few hundred milliseconds rather than see its file half
//! made, and let it go while they read, taking it back to close.

use rustix::fs::{FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// A database file locked; unlocked when dropped.
#[derive(Debug)]
pub(crate) struct FileLock {
    fd: OwnedFd,
    /// A reader's lock, let go while it reads (see [`FileLock::let_go`]).
    let_go: std::cell::Cell<bool>,
}

/// How the lock is taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Locking {
    /// To write, making the file when it is missing.
    Make,
    /// To write a file that is there.
    Write,
    /// To read a file that is there.
    Read,
}

impl FileLock {
    /// Lets a reader's lock go once its connection has opened the file
    /// (the descriptor stays open: closing it would drop SQLite's locks),
    /// so that a long read (an export into a slow pipe) never holds a
    /// run's recording up.
    pub(crate) fn let_go(&self) {
        if rustix::fs::flock(&self.fd, FlockOperation::Unlock).is_ok() {
            self.let_go.set(true);
        }
    }

    /// Takes a reader's lock again, before its connection closes: a
    /// connection's close may write the log into the file (a checkpoint),
    /// which a writer's look at the file must not meet half done. Waits
    /// at most `wait`; past it the close goes on (SQLite's own locks keep
    /// the checkpoint safe for SQLite; only a writer's immutable look
    /// could then see it half done, and says so rather than writing).
    pub(crate) fn take_back(&self, wait: Duration) {
        if !self.let_go.get() {
            return;
        }
        let until = Instant::now() + wait;
        while rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockShared).is_err()
            && Instant::now() < until
        {
            std::thread::sleep(RETRY);
        }
        self.let_go.set(false);
    }
}

/// How often a lock held by another process is tried again.
const RETRY: Duration = Duration::from_millis(20);

impl FileLock {
    /// Locks database `path` as `how` says, waiting at most `wait` for
    /// another process's lock. `None` when the file is not there (and is
    /// not to be made): nothing to lock. The error is a refusal's line.
    pub(crate) fn take(
        path: &Path,
        how: Locking,
        wait: Duration,
        shown: &str,
    ) -> Result<Option<FileLock>, String> {
        let mut flags = OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::NONBLOCK;
        flags |= match how {
            Locking::Make => OFlags::RDWR | OFlags::CREATE,
            Locking::Write => OFlags::RDWR,
            Locking::Read => OFlags::RDONLY,
        };
        let fd = match rustix::fs::open(path, flags, Mode::from_raw_mode(0o644)) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if how != Locking::Make => return Ok(None),
            // Read-only files and places are said by the checks after.
            Err(Errno::ACCESS | Errno::ROFS | Errno::PERM) if how == Locking::Write => {
                return Ok(None)
            }
            Err(e) => return Err(format!("{shown}: opening: {e}")),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| format!("{shown}: {e}"))?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(format!(
                "{shown}: is not a regular file; give the database's file"
            ));
        }
        let op = match how {
            Locking::Read => FlockOperation::NonBlockingLockShared,
            _ => FlockOperation::NonBlockingLockExclusive,
        };
        let until = Instant::now() + wait;
        loop {
            match rustix::fs::flock(&fd, op) {
                Ok(()) => {
                    return Ok(Some(FileLock {
                        fd,
                        let_go: std::cell::Cell::new(false),
                    }))
                }
                Err(Errno::WOULDBLOCK | Errno::INTR) if Instant::now() < until => {
                    std::thread::sleep(RETRY)
                }
                Err(Errno::WOULDBLOCK) => {
                    return Err(format!(
                        "{shown}: another iosurvey has held it for {} s (recording or importing runs into it, or opening it to read); try again when it is done",
                        wait.as_secs()
                    ))
                }
                Err(e) => return Err(format!("{shown}: locking: {e}")),
            }
        }
    }
}
