//! Where a target's verify state lives, and its file: read before a
//! verified run, replaced atomically after each verified write.
//!
//! - `--verify-state DIR`: in `DIR`, named after the target's absolute
//!   path (`/dev/loop3` → `dev%2Floop3.iosurvey-verify`).
//! - Without it: beside a file target (`FILE.iosurvey-verify`), inside
//!   a frames directory (`iosurvey-frames/frames.iosurvey-verify`); a block
//!   device has no default (refused: the user names the place).
//!
//! The file is iosurvey's own. Whatever is at its place is first opened
//! `O_PATH|O_NOFOLLOW` (which does nothing to a FIFO or a device) and read
//! only if it is a regular file no larger than a state of its target can
//! be; it counts as iosurvey's only when it decodes whole (magic, lengths,
//! crc32c) as a state of a target no larger than this one, so that its
//! blocks are never allocated before that is known. A new state is written
//! to a temporary file created with `O_EXCL|O_NOFOLLOW` in the same
//! directory and synced, then swapped in with `RENAME_EXCHANGE` and kept
//! only if what came out is the file read before the job (else swapped
//! back), or renamed in with `RENAME_NOREPLACE` when nothing was there.
//! Every removal (a state forgotten, the state that came out, a temporary
//! file) goes through `guard::trash`: whatever the name holds is moved
//! into a private directory first and judged there through a descriptor
//! (identity, and a whole state), then unlinked or put back; no name is
//! checked and then unlinked (issue 28: clean-up by descriptor).

use iosurvey_engine::verify_state::{StateError, TargetState};
use iosurvey_target::guard::trash::{Removal, Trash};
use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The suffix of a state file.
pub const SUFFIX: &str = ".iosurvey-verify";

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
    // One target, one state, by whichever name it is given: links are
    // resolved (a device by its `/dev/disk/by-id` name and by its own, a
    // file through a symbolic link); a file not made yet by its
    // directory's resolved path.
    let abs = std::fs::canonicalize(&abs).unwrap_or_else(|_| {
        match (abs.parent().map(std::fs::canonicalize), abs.file_name()) {
            (Some(Ok(dir)), Some(name)) => dir.join(name),
            _ => abs.clone(),
        }
    });
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

/// A file at the state's place, opened for reading: never through a
/// symbolic link, and only once it is known to be a regular file (it is
/// first opened `O_PATH`, which does nothing to a FIFO or a device, then
/// opened again through that descriptor, so the same inode). `None` when
/// nothing is there.
struct Existing {
    fd: OwnedFd,
    /// Its device and inode, for finding it again at the name.
    id: (u64, u64),
    size: u64,
}

fn open_existing(
    dir: &OwnedFd,
    name: &OsStr,
    path: &Path,
) -> Result<Option<Existing>, StateFileError> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let held = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    let st = rustix::fs::fstat(&held).map_err(|e| io(path, e))?;
    let not_ours = |why: &str| {
        Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: why.into(),
        })
    };
    match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::RegularFile => {}
        rustix::fs::FileType::Symlink => return not_ours("a symbolic link is there"),
        _ => return not_ours("it is not a regular file"),
    }
    let via = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&held));
    let fd = rustix::fs::openat(
        CWD,
        via.as_str(),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(path, e))?;
    Ok(Some(Existing {
        fd,
        id: (st.st_dev, st.st_ino),
        size: st.st_size as u64,
    }))
}

/// A file's device and inode.
pub type FileId = (u64, u64);

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

/// The most a state of a target of `size` bytes can take: a range of 8
/// bytes per block at worst, and the runs' table.
fn largest_state(size: u64) -> u64 {
    4096 + size.div_ceil(4096).saturating_mul(8) + (1 << 20)
}

/// The most bytes of data the target at `target` (of `size` bytes) can
/// hold: its size, or for a frames directory the capacity of its
/// filesystem. A state that claims more is not read (its blocks would be
/// allocated before anything else is checked).
pub fn capacity(target: &Path, size: u64) -> u64 {
    if std::fs::symlink_metadata(target).is_ok_and(|m| m.is_dir()) {
        if let Ok(v) = rustix::fs::statvfs(target) {
            return v.f_blocks.saturating_mul(v.f_frsize).max(size);
        }
    }
    size
}

/// Reads what is at `name` in `dir`: a state, checked whole, of a target
/// of at most `capacity` bytes; `None` when nothing is there.
fn read_state(
    dir: &OwnedFd,
    name: &OsStr,
    path: &Path,
    capacity: u64,
) -> Result<Option<(TargetState, FileId)>, StateFileError> {
    let Some(f) = open_existing(dir, name, path)? else {
        return Ok(None);
    };
    if f.size > largest_state(capacity) {
        return Err(StateFileError::NotOurs {
            path: path.to_path_buf(),
            why: "it is too large to be a verify state of this target".into(),
        });
    }
    let bytes = read_all(&f.fd, path)?;
    if TargetState::recorded_size(&bytes).is_some_and(|s| s > capacity) {
        return Err(StateFileError::Bad {
            path: path.to_path_buf(),
            err: StateError::Damaged,
        });
    }
    match TargetState::decode(&bytes) {
        Ok(s) => Ok(Some((s, f.id))),
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

/// Reads the state at `path` of a target of at most `capacity` bytes
/// ([`capacity`]): `None` when there is none yet.
pub fn load(path: &Path, capacity: u64) -> Result<Option<TargetState>, StateFileError> {
    Ok(load_id(path, capacity)?.map(|(s, _)| s))
}

/// [`load`], with the device and inode of the file read, for [`save`].
pub fn load_id(
    path: &Path,
    capacity: u64,
) -> Result<Option<(TargetState, FileId)>, StateFileError> {
    let (dir, name) = parent(path)?;
    read_state(&dir, name, path, capacity)
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

/// Replaces the state at `path` with `state`, atomically and durably. What
/// is at the name is replaced only if it is the state [`load_id`] read
/// before the job (`old`, its device and inode): the new state is swapped
/// in (`RENAME_EXCHANGE`), and swapped back out if what came out is not
/// that file; with no state read before, it is renamed in only while the
/// name is still free.
pub fn save(
    path: &Path,
    state: &TargetState,
    old: Option<FileId>,
) -> Result<FileId, StateFileError> {
    let (dir, name) = parent(path)?;
    // The largest target a state kept out may be of: this one, or twice
    // it (a frames directory grows).
    let capacity = state.size.max(state.len() as u64 * 4096).saturating_mul(2);
    let bytes = state.encode();
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        crate::clock::now_ns()
    ));
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&dir, &tmp, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| io(path, e))?;
    let new_id = rustix::fs::fstat(&fd)
        .map(|st| (st.st_dev, st.st_ino))
        .map_err(|e| io(path, e))?;
    // The temporary name is removed only while it names the file this
    // save made (anything moved there meanwhile stays).
    let unlink_tmp = || {
        let _ = remove_if_at(&dir, &tmp, |_, st| (st.st_dev, st.st_ino) == new_id);
    };
    let written = (|| -> Result<(), Errno> {
        let mut done = 0;
        while done < bytes.len() {
            match rustix::io::write(&fd, &bytes[done..]) {
                Ok(n) => done += n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e),
            }
        }
        rustix::fs::fsync(&fd)
    })();
    if let Err(e) = written {
        unlink_tmp();
        return Err(io(path, e));
    }
    use rustix::fs::{renameat_with, RenameFlags};
    match old {
        None => {
            if let Err(e) = renameat_with(&dir, &tmp, &dir, name, RenameFlags::NOREPLACE) {
                unlink_tmp();
                return Err(match e {
                    Errno::EXIST => StateFileError::NotOurs {
                        path: path.to_path_buf(),
                        why: "a file appeared there while iosurvey wrote its state".into(),
                    },
                    e => io(path, e),
                });
            }
        }
        Some(id) => {
            if let Err(e) = renameat_with(&dir, &tmp, &dir, name, RenameFlags::EXCHANGE) {
                unlink_tmp();
                return Err(io(path, e));
            }
            // `tmp` now names what was at the name: removed only if it is
            // the file read before (by identity) and still a whole state
            // (by content: an inode number reused by another file, or the
            // state's file written over in place, is not), judged through
            // a descriptor once out of everyone's reach.
            let came_out = remove_if_at(&dir, &tmp, |fd, st| is_state(fd, st, id, capacity, path))
                .map_err(|e| io(path, e))?;
            match came_out {
                Removal::Removed | Removal::Absent => {}
                Removal::PutBack => {
                    // Exchanged back; then only the new state is removed
                    // (whatever `tmp` names now stays unless it is that).
                    if renameat_with(&dir, &tmp, &dir, name, RenameFlags::EXCHANGE).is_ok() {
                        unlink_tmp();
                    }
                    return Err(StateFileError::NotOurs {
                        path: path.to_path_buf(),
                        why: "another file was put there while iosurvey wrote its state".into(),
                    });
                }
                Removal::Renamed(kept) => {
                    return Err(StateFileError::NotOurs {
                        path: path.to_path_buf(),
                        why: format!(
                            "another file was put there while iosurvey wrote its state; it is now {} beside it",
                            Path::new(&kept).display()
                        ),
                    })
                }
            }
        }
    }
    rustix::fs::fsync(&dir).map_err(|e| io(path, e))?;
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    if !saved.iter().any(|p| p == path) {
        saved.push(path.to_path_buf());
    }
    Ok(new_id)
}

/// Removes the state at `path` of a target of at most `capacity` bytes
/// when it is iosurvey's (the target it recorded was removed, or written
/// without `--verify`): a file there that
/// is not a whole, valid state (or a link, a FIFO, a device) stays, and
/// so does one put there after the check (the name is unlinked only while
/// it still names the inode that was checked).
pub fn forget(path: &Path, capacity: u64) -> Result<(), StateFileError> {
    let (dir, name) = parent(path)?;
    let checked = match read_state(&dir, name, path, capacity) {
        Ok(Some((_, id))) => id,
        Ok(None) => return Ok(()),
        Err(e) => return Err(e),
    };
    // Whatever the name holds now is taken out of everyone's reach, then
    // removed only if it is the file checked; anything else is put back.
    let not_ours = |why: String| StateFileError::NotOurs {
        path: path.to_path_buf(),
        why,
    };
    match remove_if_at(&dir, name, |fd, st| {
        is_state(fd, st, checked, capacity, path)
    })
    .map_err(|e| io(path, e))?
    {
        Removal::Removed | Removal::Absent => Ok(()),
        Removal::PutBack => Err(not_ours(
            "another file was put there while iosurvey checked it".into(),
        )),
        Removal::Renamed(kept) => Err(not_ours(format!(
            "another file was put there while iosurvey checked it; it is now {} beside it",
            Path::new(&kept).display()
        ))),
    }
}

/// Removes `name` in `dir` if `ours` says what is there at this moment is
/// ours, through [`Trash`]: moved out of everyone's reach first, judged
/// through a descriptor there, then unlinked or put back. No name is
/// checked and then unlinked.
fn remove_if_at(
    dir: &OwnedFd,
    name: &OsStr,
    ours: impl FnOnce(&OwnedFd, &rustix::fs::Stat) -> bool,
) -> Result<Removal, Errno> {
    Trash::new(dir.as_fd())?.remove_if(dir.as_fd(), name, ours)
}

/// Whether the file open as `fd` (`st`) is the state `id` and still a
/// whole state of a target of at most `capacity` bytes.
fn is_state(fd: &OwnedFd, st: &rustix::fs::Stat, id: FileId, capacity: u64, path: &Path) -> bool {
    if (st.st_dev, st.st_ino) != id || st.st_size as u64 > largest_state(capacity) {
        return false;
    }
    let Ok(bytes) = read_all(fd, path) else {
        return false;
    };
    TargetState::recorded_size(&bytes).is_none_or(|s| s <= capacity)
        && TargetState::decode(&bytes).is_ok()
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

    const CAP: u64 = 1 << 20;

    #[test]
    fn a_state_is_saved_replaced_and_read_back_and_a_foreign_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        let path = state_path(&target, None).unwrap();
        assert_eq!(path, dir.path().join("t.iosurvey-verify"));
        assert!(load(&path, CAP).unwrap().is_none());
        let s = TargetState::of(4096, (1, 2));
        save(&path, &s, None).unwrap();
        let (back, id) = load_id(&path, CAP).unwrap().unwrap();
        assert_eq!(back, s);
        save(&path, &s, Some(id)).unwrap();
        assert_eq!(load(&path, CAP).unwrap(), Some(s.clone()));
        // Only the state is left: no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        forget(&path, CAP).unwrap();
        assert!(!path.exists());

        std::fs::write(&path, b"the user's notes").unwrap();
        assert!(matches!(
            load(&path, CAP),
            Err(StateFileError::NotOurs { .. })
        ));
        assert!(matches!(
            save(&path, &s, None),
            Err(StateFileError::NotOurs { .. })
        ));
        assert!(matches!(
            forget(&path, CAP),
            Err(StateFileError::NotOurs { .. })
        ));
        assert_eq!(std::fs::read(&path).unwrap(), b"the user's notes");
        std::fs::remove_file(&path).unwrap();

        let other = dir.path().join("other");
        std::fs::write(&other, b"x").unwrap();
        std::os::unix::fs::symlink(&other, &path).unwrap();
        assert!(matches!(
            save(&path, &s, None),
            Err(StateFileError::NotOurs { .. })
        ));
        assert!(forget(&path, CAP).is_err());
        assert_eq!(std::fs::read(&other).unwrap(), b"x");
        assert!(path.symlink_metadata().is_ok(), "the link stays");
    }

    #[test]
    fn a_file_that_only_starts_like_a_state_is_never_removed_nor_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        let real = TargetState::of(4096, (1, 2)).encode();
        let mut notes = real[..16].to_vec();
        notes.extend_from_slice(b"USER PRECIOUS NOTES, not a state");
        std::fs::write(&path, &notes).unwrap();
        assert!(forget(&path, CAP).is_err());
        let s = TargetState::of(4096, (1, 2));
        assert!(save(&path, &s, None).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), notes);
    }

    #[test]
    fn a_state_written_over_in_place_by_someone_else_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        let s = TargetState::of(4096, (1, 2));
        save(&path, &s, None).unwrap();
        let (_, id) = load_id(&path, CAP).unwrap().unwrap();
        // The same inode, the user's notes in it now.
        std::fs::write(&path, b"my notes, not a state").unwrap();
        assert!(save(&path, &s, Some(id)).is_err());
        assert!(forget(&path, CAP).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"my notes, not a state");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_growing_frames_state_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frames.iosurvey-verify");
        let mut s = TargetState::of(16 * 4096, (1, 2));
        let map = iosurvey_engine::verify::GenMap::new(200 * 4096);
        map.commit(0, 200 * 4096, true);
        s.record(&map, 7, 0);
        save(&path, &s, None).unwrap();
        assert_eq!(load(&path, 1 << 30).unwrap(), Some(s));
    }

    #[test]
    fn a_fifo_at_the_place_is_judged_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        rustix::fs::mknodat(
            CWD,
            &path,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            load(&path, CAP),
            Err(StateFileError::NotOurs { .. })
        ));
        assert!(forget(&path, CAP).is_err());
        // Nobody holds it open for reading: a writer that will not wait
        // finds no reader.
        let w = rustix::fs::open(&path, OFlags::WRONLY | OFlags::NONBLOCK, Mode::empty());
        assert_eq!(w.err(), Some(Errno::NXIO));
        assert!(path.symlink_metadata().unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_state_claiming_more_than_its_target_is_refused_before_its_blocks_are_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        // A state of a 2 TiB target: 2^29 blocks, one range.
        let mut big = TargetState::of(2 << 40, (1, 2));
        let map = iosurvey_engine::verify::GenMap::new(0);
        big.record(&map, 1, 1);
        let mut bytes = big.encode();
        bytes.truncate(bytes.len() - 4);
        bytes[24..32].copy_from_slice(&(1u64 << 29).to_le_bytes());
        bytes[32..40].copy_from_slice(&1u64.to_le_bytes());
        bytes.extend_from_slice(&(1u32 << 29).to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        let crc = crc32c::crc32c(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(load(&path, CAP), Err(StateFileError::Bad { .. })));
        assert!(forget(&path, CAP).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it is");
    }

    /// Swaps the names `a` and `b` in `dir` over and over until `stop`.
    fn swapper(
        dir: PathBuf,
        a: &'static str,
        b: &'static str,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let d =
                rustix::fs::open(&dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = rustix::fs::renameat_with(&d, a, &d, b, rustix::fs::RenameFlags::EXCHANGE);
            }
        })
    }

    #[test]
    fn a_file_swapped_in_while_a_state_is_saved_or_forgotten_survives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        let precious = dir.path().join("precious");
        let s = TargetState::of(4096, (1, 2));
        let mut kept = 0;
        for round in 0..200 {
            let _ = std::fs::remove_file(&path);
            std::fs::write(&precious, b"PRECIOUS DATA").unwrap();
            save(&path, &s, None).unwrap();
            let (_, id) = load_id(&path, CAP).unwrap().unwrap();
            // The user's file and the state swap names over and over while
            // iosurvey replaces or removes the state.
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let t = swapper(
                dir.path().to_path_buf(),
                "t.iosurvey-verify",
                "precious",
                stop.clone(),
            );
            let _ = if round % 2 == 0 {
                save(&path, &s, Some(id)).map(|_| ())
            } else {
                forget(&path, CAP)
            };
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            t.join().unwrap();
            let names: Vec<PathBuf> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            let holders = names
                .iter()
                .filter(|p| std::fs::read(p).is_ok_and(|d| d == b"PRECIOUS DATA"))
                .count();
            assert_eq!(
                holders, 1,
                "round {round}: the user's file was removed or replaced ({names:?})"
            );
            // Put it back under its own name for the next round.
            for p in &names {
                if std::fs::read(p).is_ok_and(|d| d == b"PRECIOUS DATA") && *p != precious {
                    std::fs::rename(p, &precious).unwrap();
                    kept += 1;
                } else if *p != precious {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
        eprintln!("the user's file ended under another name {kept} times of 200, never lost");
    }

    /// Exchanges every temporary or aside name of a state that appears in
    /// `dir` (`.NAME.iosurvey-verify.PID.NS.tmp` / `.forget`, found by
    /// listing the directory) with `precious`, over and over until `stop`.
    fn temp_name_racer(
        dir: PathBuf,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let d =
                rustix::fs::open(&dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
            let mut swaps = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let names: Vec<std::ffi::OsString> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.file_name())
                    .filter(|n| {
                        let n = n.to_string_lossy();
                        n.starts_with(".t.iosurvey-verify.")
                            && (n.ends_with(".tmp") || n.ends_with(".forget"))
                    })
                    .collect();
                for n in &names {
                    for _ in 0..200 {
                        let r = rustix::fs::renameat_with(
                            &d,
                            n.as_os_str(),
                            &d,
                            "precious",
                            rustix::fs::RenameFlags::EXCHANGE,
                        );
                        swaps += u64::from(r.is_ok());
                    }
                }
            }
            swaps
        })
    }

    /// The files anywhere below `dir` (one level of subdirectories: a
    /// trash kept) that hold `data`.
    fn holders(dir: &Path, data: &[u8]) -> usize {
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                n += holders(&p, data);
            } else if std::fs::read(&p).is_ok_and(|d| d == data) {
                n += 1;
            }
        }
        n
    }

    #[test]
    fn a_file_swapped_with_a_states_temporary_name_is_never_removed() {
        // Before: save and forget checked their temporary (`.tmp`) or aside
        // (`.forget`) name, then unlinked it by name: a user's file
        // exchanged there in between was deleted. Every unlink now goes
        // through guard::trash, judged by descriptor.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iosurvey-verify");
        let precious = dir.path().join("precious");
        let s = TargetState::of(4096, (1, 2));
        let mut swaps = 0;
        for round in 0..300 {
            for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let _ = std::fs::remove_file(e.path());
                let _ = std::fs::remove_dir_all(e.path());
            }
            std::fs::write(&precious, b"PRECIOUS DATA").unwrap();
            save(&path, &s, None).unwrap();
            let (_, id) = load_id(&path, CAP).unwrap().unwrap();
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let t = temp_name_racer(dir.path().to_path_buf(), stop.clone());
            // Give the racer its first listing.
            std::thread::sleep(std::time::Duration::from_micros(200));
            let _ = match round % 3 {
                0 => save(&path, &s, Some(id)).map(|_| ()),
                1 => save(&path, &s, None).map(|_| ()),
                _ => forget(&path, CAP),
            };
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            swaps += t.join().unwrap();
            assert_eq!(
                holders(dir.path(), b"PRECIOUS DATA"),
                1,
                "round {round}: the user's file was removed"
            );
        }
        eprintln!("{swaps} exchanges made");
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
