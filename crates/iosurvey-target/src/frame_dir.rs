//! The directory a files-layout video run was given, opened once before the
//! run: its lock, its room and the descriptors its workers need are judged on
//! that one handle, and the frame layer later works from the same handle
//! ([`held`]) instead of looking the path up again.

use iosurvey_workload::{frames_dir, FrameJob, FrameLayout};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// File descriptors a process needs besides its workers': standard
/// streams, output files, directories held open, io_uring and signals.
const BASE_FDS: u64 = 64;

/// A video run refused before it starts; each message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum FrameDirError {
    #[error(
        "{}: another iosurvey video run is using this directory; wait for it to end, \
         give another directory, or add --shared to both runs",
        .0.display()
    )]
    InUse(PathBuf),
    #[error(
        "{}: --frames {frames} of {frame_bytes} bytes are {want} bytes, more than the {size} \
         bytes of its filesystem; lower --frames or the frame size",
        dir.display()
    )]
    LargerThanFs {
        dir: PathBuf,
        frames: u64,
        frame_bytes: u64,
        want: u128,
        size: u128,
    },
    #[error(
        "{}: --frames {frames} of {frame_bytes} bytes need {want} bytes, and {free} are free; \
         lower --frames or the frame size",
        dir.display()
    )]
    NotFree {
        dir: PathBuf,
        frames: u64,
        frame_bytes: u64,
        want: u128,
        free: u128,
    },
    #[error(
        "{}: --frames {frames} needs a file per frame, and its filesystem has room for \
         {inodes} more files; lower --frames or use --mode stream",
        dir.display()
    )]
    NoInodes {
        dir: PathBuf,
        frames: u64,
        inodes: u64,
    },
    #[error(
        "--threads {threads} needs about {need} open files, more than the {hard} this process \
         may have (RLIMIT_NOFILE, ulimit -n); lower --threads or raise the limit"
    )]
    TooManyFiles { threads: u32, need: u64, hard: u64 },
}

/// The directories held by a [`FrameDir`] in this process, by the path
/// they were opened at.
static HELD: Mutex<Vec<(PathBuf, Arc<OwnedFd>)>> = Mutex::new(Vec::new());

fn held_dirs() -> MutexGuard<'static, Vec<(PathBuf, Arc<OwnedFd>)>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// A descriptor of the directory a [`FrameDir`] holds at `path`, if one is
/// held: the frame layer opens its target through it, so the directory
/// judged (locked, its room counted) is the one written.
pub(crate) fn held(path: &Path) -> Option<OwnedFd> {
    let dirs = held_dirs();
    let (_, fd) = dirs.iter().find(|(p, _)| p == path)?;
    rustix::io::fcntl_dupfd_cloexec(fd.as_fd(), 0).ok()
}

/// A video run's directory, open from before its checks until the run's
/// end. Dropping it releases the lock.
pub struct FrameDir {
    path: PathBuf,
    fd: Arc<OwnedFd>,
}

impl FrameDir {
    /// Opens the directory at `path`, or `None` when it cannot be opened:
    /// the frame layer then refuses it, naming it, when it opens its target.
    pub fn open(path: &Path) -> Option<FrameDir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let fd = Arc::new(fd);
        held_dirs().push((path.to_path_buf(), fd.clone()));
        Some(FrameDir {
            path: path.to_path_buf(),
            fd,
        })
    }

    /// Takes a `flock` on the directory, held while this lives: exclusive,
    /// since a second video run on the same directory would measure the
    /// first one's load and take its frames for its own; shared with
    /// `--shared`, so only runs that all gave it go together.
    pub fn lock(&self, shared: bool) -> Result<(), FrameDirError> {
        let how = if shared {
            FlockOperation::NonBlockingLockShared
        } else {
            FlockOperation::NonBlockingLockExclusive
        };
        match rustix::fs::flock(self.fd.as_fd(), how) {
            Ok(()) => Ok(()),
            Err(Errno::WOULDBLOCK) => Err(FrameDirError::InUse(self.path.clone())),
            // Locks not supported here: nothing to hold.
            Err(_) => Ok(()),
        }
    }

    /// Refuses, before any frame is looked at, frames that cannot fit:
    /// more bytes than the filesystem holds, more files than it has
    /// inodes, or, when there is no frames directory yet, more than is
    /// free. (With a frames directory, the frames already there are counted
    /// after the survey.)
    pub fn check_room(&self, fj: &FrameJob) -> Result<(), FrameDirError> {
        if !matches!(fj.layout, FrameLayout::Files { .. }) {
            return Ok(());
        }
        let Ok(vfs) = rustix::fs::fstatvfs(self.fd.as_fd()) else {
            return Ok(());
        };
        let name = frames_dir(Path::new(""));
        let fresh = matches!(
            rustix::fs::statat(self.fd.as_fd(), &name, AtFlags::SYMLINK_NOFOLLOW),
            Err(Errno::NOENT)
        );
        let writes = fj.op == iosurvey_engine::Op::Write || fj.prepare;
        let want = u128::from(fj.frames) * u128::from(fj.frame_bytes);
        let size = u128::from(vfs.f_blocks) * u128::from(vfs.f_frsize);
        let free = u128::from(vfs.f_bavail) * u128::from(vfs.f_frsize);
        let (dir, frames, frame_bytes) = (self.path.clone(), fj.frames, fj.frame_bytes);
        if size > 0 && want > size {
            return Err(FrameDirError::LargerThanFs {
                dir,
                frames,
                frame_bytes,
                want,
                size,
            });
        }
        if writes && fresh && want > free {
            return Err(FrameDirError::NotFree {
                dir,
                frames,
                frame_bytes,
                want,
                free,
            });
        }
        if writes && vfs.f_files > 0 {
            let inodes = if fresh { vfs.f_favail } else { vfs.f_files };
            if frames > inodes {
                return Err(FrameDirError::NoInodes {
                    dir,
                    frames,
                    inodes,
                });
            }
        }
        Ok(())
    }
}

impl Drop for FrameDir {
    fn drop(&mut self) {
        held_dirs().retain(|(_, fd)| !Arc::ptr_eq(fd, &self.fd));
    }
}

/// Refuses `threads` workers that would need more file descriptors than
/// RLIMIT_NOFILE allows, after raising the soft limit as far as the hard
/// one lets it. Each worker holds the target, the frame it moves in the
/// files layout, and its io_uring ring.
pub fn check_fd_limit(threads: u32, files: bool, uring: bool) -> Result<(), FrameDirError> {
    let per_thread = 1 + u64::from(files) + u64::from(uring);
    let need = BASE_FDS + u64::from(threads) * per_thread;
    crate::fd_limit::make_room(need).map_err(|hard| FrameDirError::TooManyFiles {
        threads,
        need,
        hard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_on_a_locked_directory_is_refused_until_the_first_lets_go() {
        let d = tempfile::tempdir().unwrap();
        let first = FrameDir::open(d.path()).unwrap();
        first.lock(false).unwrap();
        let second = FrameDir::open(d.path()).unwrap();
        assert!(matches!(second.lock(false), Err(FrameDirError::InUse(_))));
        assert!(matches!(second.lock(true), Err(FrameDirError::InUse(_))));
        drop(first);
        second.lock(false).unwrap();
    }

    #[test]
    fn shared_locks_go_together_and_keep_an_exclusive_one_out() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            FrameDir::open(d.path()).unwrap(),
            FrameDir::open(d.path()).unwrap(),
            FrameDir::open(d.path()).unwrap(),
        );
        a.lock(true).unwrap();
        b.lock(true).unwrap();
        assert!(matches!(c.lock(false), Err(FrameDirError::InUse(_))));
    }

    #[test]
    fn the_frame_layer_reaches_the_held_directory_not_the_path() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("given");
        std::fs::create_dir(&path).unwrap();
        let dir = FrameDir::open(&path).unwrap();
        let judged = rustix::fs::fstat(dir.fd.as_fd()).unwrap();
        // The path now names another directory: the held one is still
        // what the frame layer gets.
        std::fs::rename(&path, d.path().join("moved")).unwrap();
        std::fs::create_dir(&path).unwrap();
        let got = rustix::fs::fstat(held(&path).unwrap()).unwrap();
        assert_eq!((got.st_dev, got.st_ino), (judged.st_dev, judged.st_ino));
        drop(dir);
        assert!(held(&path).is_none());
    }

    #[test]
    fn a_missing_directory_is_left_to_the_frame_layer_to_refuse() {
        let d = tempfile::tempdir().unwrap();
        assert!(FrameDir::open(&d.path().join("none")).is_none());
    }
}
