//! Where a target's verify state lives, and its file: read before a
//! verified run, replaced atomically after each verified write.
//!
//! - `--verify-state DIR`: in `DIR`, named after the target's absolute
//!   path (`/dev/loop3` → `dev%2Floop3.iosurvey-verify`).
//! - Without it: beside a file target (`FILE.iosurvey-verify`), inside
//!   a frames directory (`iosurvey-frames/frames.iosurvey-verify`); a block
//!   device has no default (refused: the user names the place).
//!
//! The file is iosurvey's own: one that exists and does not start with
//! the state's magic is never read as one nor replaced, a symbolic link is
//! never followed, and a new state is written to a temporary file created
//! with `O_EXCL|O_NOFOLLOW` in the same directory, synced, and renamed over
//! the old one (then the directory synced).

use iosurvey_engine::verify_state::{StateError, TargetState};
use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The suffix of a state file.
pub const SUFFIX: &str = ".iosurvey-verify";
/// A state larger than this is not one iosurvey wrote.
const MAX_BYTES: u64 = 1 << 32;

/// Why a state file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("--verify on block device {0} needs --verify-state DIR: the directory where iosurvey keeps what each verified run wrote to it (a device has no room of its own for it)")]
    NoPlace(PathBuf),
    #[error("--verify-state {0}: not a directory; name an existing directory")]
    NotADir(PathBuf),
    #[error("{path}: {why}; iosurvey keeps its verify state there and never replaces a file it did not write: move it, or name another directory with --verify-state")]
    NotOurs { path: PathBuf, why: String },
    #[error("{path}: the verify state {err}; remove it (the blocks it recorded can no longer be checked)")]
    Bad { path: PathBuf, err: StateError },
    #[error("{path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
}

fn io(path: &Path, err: impl Into<std::io::Error>) -> StateFileError {
    StateFileError::Io {
        path: path.to_path_buf(),
        err: err.into(),
    }
}

/// Where the state of the target at `target` lives.
pub fn state_path(target: &Path, dir: Option<&Path>) -> Result<PathBuf, StateFileError> {
    let abs = std::path::absolute(target).map_err(|e| io(target, e))?;
    if let Some(dir) = dir {
        if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(StateFileError::NotADir(dir.to_path_buf()));
        }
        let mut name = String::new();
        for c in abs.to_string_lossy().trim_start_matches('/').chars() {
            match c {
                '%' => name.push_str("%25"),
                '/' => name.push_str("%2F"),
                c => name.push(c),
            }
        }
        return Ok(dir.join(name + SUFFIX));
    }
    let meta = std::fs::metadata(&abs).ok();
    let ft = meta.as_ref().map(|m| m.file_type());
    if ft.is_some_and(|t| t.is_block_device() || t.is_char_device()) {
        return Err(StateFileError::NoPlace(target.to_path_buf()));
    }
    if ft.is_some_and(|t| t.is_dir()) {
        return Ok(abs.join(format!("frames{SUFFIX}")));
    }
    let mut name = abs.as_os_str().to_owned();
    name.push(SUFFIX);
    Ok(PathBuf::from(name))
}

/// The directory of `path`, opened, and the name in it.
fn parent(path: &Path) -> Result<(OwnedFd, &OsStr), StateFileError> {
    let name = path.file_name().ok_or_else(|| io(path, Errno::INVAL))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    let fd = rustix::fs::openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(dir, e))?;
    Ok((fd, name))
}

/// Opens `name` in `dir` for reading, never through a symlink: `None` when
/// nothing is there; refused when it is not a regular file.
fn open_existing(
    dir: &OwnedFd,
    name: &OsStr,
    path: &Path,
) -> Result<Option<OwnedFd>, StateFileError> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => {
            return Err(StateFileError::NotOurs {
                path: path.to_path_buf(),
                why: "a symbolic link is there".into(),
            })
        }
        Err(e) => return Err(io(path, e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io(path, e))?;
    let ft = rustix::fs::FileType::from_raw_mode(st.st_mode);
    if ft != rustix::fs::FileType::RegularFile {
        return Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: "it is not a regular file".into(),
        });
    }
    if st.st_size as u64 > MAX_BYTES {
        return Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: "it is too large to be a verify state".into(),
        });
    }
    Ok(Some(fd))
}

fn read_all(fd: &OwnedFd, path: &Path) -> Result<Vec<u8>, StateFileError> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(io(path, e)),
        }
    }
}

/// Reads the state at `path`: `None` when there is none yet.
pub fn load(path: &Path) -> Result<Option<TargetState>, StateFileError> {
    let (dir, name) = parent(path)?;
    let Some(fd) = open_existing(&dir, name, path)? else {
        return Ok(None);
    };
    let bytes = read_all(&fd, path)?;
    match TargetState::decode(&bytes) {
        Ok(s) => Ok(Some(s)),
        Err(StateError::NotAState) => Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: "a file that is not an iosurvey verify state is there".into(),
        }),
        Err(err) => Err(StateFileError::Bad {
            path: path.to_path_buf(),
            err,
        }),
    }
}

/// The file at `name` in `dir` is iosurvey's state, or nothing.
fn check_ours(dir: &OwnedFd, name: &OsStr, path: &Path) -> Result<bool, StateFileError> {
    let Some(fd) = open_existing(dir, name, path)? else {
        return Ok(false);
    };
    let mut head = [0u8; 8];
    let n = rustix::io::read(&fd, &mut head).map_err(|e| io(path, e))?;
    if !TargetState::is_state(&head[..n]) {
        return Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: "a file that is not an iosurvey verify state is there".into(),
        });
    }
    Ok(true)
}

/// The states this process saved: a test file this process created can
/// only have one of these (any other beside it is of an older file of the
/// same name, whatever its inode number).
static SAVED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// This process saved the state at `path`.
pub(crate) fn saved_here(path: &Path) -> bool {
    SAVED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|p| p == path)
}

/// Replaces the state at `path` with `state`, atomically and durably.
pub fn save(path: &Path, state: &TargetState) -> Result<(), StateFileError> {
    let (dir, name) = parent(path)?;
    check_ours(&dir, name, path)?;
    let bytes = state.encode();
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        crate::worker::now_ns()
    ));
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&dir, &tmp, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| io(path, e))?;
    let written = (|| -> Result<(), Errno> {
        let mut done = 0;
        while done < bytes.len() {
            match rustix::io::write(&fd, &bytes[done..]) {
                Ok(n) => done += n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e),
            }
        }
        rustix::fs::fsync(&fd)?;
        rustix::fs::renameat(&dir, &tmp, &dir, name)?;
        rustix::fs::fsync(&dir)
    })();
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&dir, &tmp, rustix::fs::AtFlags::empty());
        return Err(io(path, e));
    }
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    if !saved.iter().any(|p| p == path) {
        saved.push(path.to_path_buf());
    }
    Ok(())
}

/// Removes the state at `path` when it is iosurvey's (the target it
/// recorded was removed).
pub fn forget(path: &Path) -> Result<(), StateFileError> {
    let (dir, name) = parent(path)?;
    if check_ours(&dir, name, path)? {
        rustix::fs::unlinkat(&dir, name, rustix::fs::AtFlags::empty()).map_err(|e| io(path, e))?;
    }
    Ok(())
}

/// The identity a state records for the target open as `fd`.
pub(crate) fn ident(fd: impl AsFd) -> (u64, u64) {
    match rustix::fs::fstat(fd) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode)
                == rustix::fs::FileType::BlockDevice =>
        {
            (st.st_rdev, 0)
        }
        Ok(st) => (st.st_dev, st.st_ino),
        Err(_) => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_saved_replaced_and_read_back_and_a_foreign_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        let path = state_path(&target, None).unwrap();
        assert_eq!(path, dir.path().join("t.iosurvey-verify"));
        assert!(load(&path).unwrap().is_none());
        let s = TargetState::of(4096, (1, 2));
        save(&path, &s).unwrap();
        save(&path, &s).unwrap();
        assert_eq!(load(&path).unwrap(), Some(s.clone()));
        // Only the state is left: no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        forget(&path).unwrap();
        assert!(!path.exists());

        std::fs::write(&path, b"the user's notes").unwrap();
        assert!(matches!(load(&path), Err(StateFileError::NotOurs { .. })));
        assert!(matches!(
            save(&path, &s),
            Err(StateFileError::NotOurs { .. })
        ));
        assert!(matches!(forget(&path), Err(StateFileError::NotOurs { .. })));
        assert_eq!(std::fs::read(&path).unwrap(), b"the user's notes");
        std::fs::remove_file(&path).unwrap();

        let other = dir.path().join("other");
        std::fs::write(&other, b"x").unwrap();
        std::os::unix::fs::symlink(&other, &path).unwrap();
        assert!(matches!(
            save(&path, &s),
            Err(StateFileError::NotOurs { .. })
        ));
        assert_eq!(std::fs::read(&other).unwrap(), b"x");
    }

    #[test]
    fn a_device_needs_a_directory_named_for_its_state() {
        assert!(matches!(
            state_path(Path::new("/dev/null"), None),
            Err(StateFileError::NoPlace(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            state_path(Path::new("/dev/null"), Some(dir.path())).unwrap(),
            dir.path().join("dev%2Fnull.iosurvey-verify")
        );
        assert!(matches!(
            state_path(Path::new("/dev/null"), Some(&dir.path().join("nope"))),
            Err(StateFileError::NotADir(_))
        ));
    }
}
