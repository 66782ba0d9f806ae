//! Test files left behind by a run that could not clean up (SIGKILL, a
//! crash, a power cut): `iosurvey-<pid>.testfile` in a directory, whose
//! creating run is gone. A test file carries a pending mark (the
//! [`PENDING_XATTR`] of video frames: the creating run's pid) from its
//! creation until its run ends; a run with `--keep` clears it, so a kept
//! file is never a leftover. The next run that creates a test file in that
//! directory removes them, but only regular files that carry iosurvey's
//! mark and a pending mark of a dead process (read through a descriptor
//! opened with `O_NOFOLLOW`) and that no run holds locked.

use super::fd_is_marked;
use super::trash::Removal;
pub(crate) use crate::frame_target::fsops::{clear_pending, pending_pid, set_pending};
pub use crate::frame_target::PENDING_XATTR;
use rustix::fs::{FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use rustix::process::Pid;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A leftover test file found, and whether it was removed.
#[derive(Debug)]
pub struct Leftover {
    pub path: PathBuf,
    /// The process that created it.
    pub pid: u32,
    /// `Err` says why it could not be removed.
    pub removed: Result<(), String>,
}

/// The pid in a test file's name `iosurvey-<pid>.testfile`.
pub fn testfile_pid(name: &[u8]) -> Option<u32> {
    let digits = name
        .strip_prefix(b"iosurvey-")?
        .strip_suffix(b".testfile")?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Whether process `pid` exists (or may: another user's, another pid
/// namespace's mapping is not ours to judge).
fn alive(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    !matches!(rustix::process::test_kill_process(p), Err(Errno::SRCH))
}

/// Removes the leftover test files of dead runs in `dir`; what it found.
pub fn remove_leftovers(dir: &Path) -> Vec<Leftover> {
    let Ok(dfd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let me = std::process::id();
    // What a run killed in the middle of a removal had moved aside goes
    // back first: a user's file to its name, a test file to be judged here.
    super::trash::recover_stale(dfd.as_fd(), |pid| pid != me && !alive(pid));
    let Ok(entries) = rustix::fs::Dir::read_from(&dfd) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_bytes();
        if testfile_pid(name).is_none() {
            continue;
        }
        let name = OsStr::from_bytes(name).to_os_string();
        match remove_one(&dfd, Path::new(&name), me) {
            Ok(None) => {}
            Ok(Some(pid)) => out.push(Leftover {
                path: dir.join(&name),
                pid,
                removed: Ok(()),
            }),
            Err((pid, e)) => out.push(Leftover {
                path: dir.join(&name),
                pid,
                removed: Err(e),
            }),
        }
    }
    out
}

/// Removes `name` in `dir` if it is a marked regular file, pending for a
/// dead run (not `me`), that no one holds locked: that run's pid, or
/// `Ok(None)` when it is not ours to remove. A file that took its place
/// between the look and the removal is left, and said (`Err`).
fn remove_one(
    dir: &rustix::fd::OwnedFd,
    name: &Path,
    me: u32,
) -> Result<Option<u32>, (u32, String)> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        // A symlink (ELOOP), gone already, or unreadable: not ours.
        Err(_) => return Ok(None),
    };
    let Ok(st) = rustix::fs::fstat(&fd) else {
        return Ok(None);
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || !fd_is_marked(&fd) {
        return Ok(None);
    }
    // Kept (--keep), or its run still going.
    let pid = match pending_pid(&fd) {
        Some(pid) if pid != me && !alive(pid) => pid,
        _ => return Ok(None),
    };
    let fail = |e: Errno| (pid, e.to_string());
    // A run that was just killed may hold its lock a moment longer.
    let locked = super::retry_busy(None, || {
        match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            Err(Errno::WOULDBLOCK) => Ok::<_, Errno>(None),
            _ => Ok(Some(())),
        }
    })
    .map_err(fail)?;
    if locked.is_none() {
        return Ok(None);
    }
    // Still the file judged at the moment of removal, not one put in its
    // place since (even between a check and an unlink).
    match super::trash::remove_same(dir.as_fd(), name.as_os_str(), &st).map_err(fail)? {
        Removal::Removed => Ok(Some(pid)),
        Removal::Absent => Ok(None),
        Removal::PutBack => Err((
            pid,
            "another file took its place as it was being removed; that file was left alone"
                .to_string(),
        )),
        Removal::Renamed(kept) => Err((
            pid,
            format!(
                "another file took its place as it was being removed; that file was left \
                 alone, kept as {} beside it (its name was taken meanwhile)",
                kept.to_string_lossy()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::XattrFlags;

    #[test]
    fn test_file_names_give_their_pid() {
        assert_eq!(testfile_pid(b"iosurvey-123.testfile"), Some(123));
        assert_eq!(testfile_pid(b"iosurvey-.testfile"), None);
        assert_eq!(testfile_pid(b"iosurvey-12a.testfile"), None);
        assert_eq!(testfile_pid(b"iosurvey-12.testfile.bak"), None);
    }

    #[test]
    fn only_marked_files_of_dead_runs_are_removed() {
        let d = tempfile::tempdir().unwrap();
        // A pid that cannot be alive: above the kernel's pid_max limit.
        let dead = 4_194_305u32;
        let ours = d.path().join(format!("iosurvey-{dead}.testfile"));
        let fd = super::super::create_new_marked(&ours, OFlags::empty()).unwrap();
        if !fd_is_marked(&fd) {
            iosurvey_testkit::skip!("no user xattrs on the temporary directory");
        }
        let pending = |fd: &rustix::fd::OwnedFd, pid: u32| {
            let v = pid.to_string();
            rustix::fs::fsetxattr(fd, PENDING_XATTR, v.as_bytes(), XattrFlags::empty()).unwrap();
        };
        pending(&fd, dead);
        drop(fd);
        // Kept (--keep): marked, its pending mark cleared.
        let kept = d.path().join(format!("iosurvey-{}.testfile", dead + 3));
        let fd = super::super::create_new_marked(&kept, OFlags::empty()).unwrap();
        pending(&fd, dead + 3);
        let _ = rustix::fs::fremovexattr(&fd, PENDING_XATTR);
        drop(fd);
        let theirs = d.path().join(format!("iosurvey-{}.testfile", dead + 1));
        std::fs::write(&theirs, b"user data").unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"x").unwrap();
        let link = d.path().join(format!("iosurvey-{}.testfile", dead + 2));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let live = d
            .path()
            .join(format!("iosurvey-{}.testfile", std::process::id()));
        let fd = super::super::create_new_marked(&live, OFlags::empty()).unwrap();
        pending(&fd, std::process::id());
        drop(fd);

        let found = remove_leftovers(d.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, ours);
        assert_eq!(found[0].pid, dead);
        assert!(found[0].removed.is_ok());
        assert!(!ours.exists());
        assert!(theirs.exists() && victim.exists() && live.exists() && kept.exists());
        assert!(std::fs::symlink_metadata(&link).is_ok());
    }

    #[test]
    fn a_users_file_swapped_with_a_leftover_by_rename_exchange_is_never_removed() {
        // Before: a leftover's inode was checked, then its name unlinked;
        // a user's file swapped in between (RENAME_EXCHANGE) was deleted.
        let d = tempfile::tempdir().unwrap();
        let dead = 4_194_305u32;
        let left = d.path().join(format!("iosurvey-{dead}.testfile"));
        let user = d.path().join("users-file");
        let dir = |_| {
            let flags = OFlags::PATH | OFlags::DIRECTORY;
            rustix::fs::open(d.path(), flags, Mode::empty()).unwrap()
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        for round in 0..1000 {
            // A fresh user's file: the last round may have left a marked
            // file at its name.
            let _ = std::fs::remove_file(&left);
            let _ = std::fs::remove_file(&user);
            let fd = super::super::create_new_marked(&left, OFlags::empty()).unwrap();
            if !fd_is_marked(&fd) {
                iosurvey_testkit::skip!("no user xattrs on the temporary directory");
            }
            let v = dead.to_string();
            rustix::fs::fsetxattr(&fd, PENDING_XATTR, v.as_bytes(), XattrFlags::empty()).unwrap();
            drop(fd);
            std::fs::write(&user, b"user data").unwrap();
            stop.store(false, std::sync::atomic::Ordering::Relaxed);
            let racer = crate::guard::trash::exchanger(
                (dir(()), left.file_name().unwrap().into()),
                (dir(()), user.file_name().unwrap().into()),
                stop.clone(),
            );
            let _ = remove_leftovers(d.path());
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            racer.join().unwrap();
            let kept = std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .filter(|e| std::fs::read(e.path()).is_ok_and(|b| b == b"user data"))
                .count();
            assert_eq!(kept, 1, "round {round}: the user's file was lost");
        }
    }
}
