//! Removing frames: the frames a run wrote, and those an earlier run left
//! behind when it was killed. Only regular files that carry iosurvey's
//! mark on the descriptor opened are unlinked, and only marked directories
//! that are left empty are removed; nothing is reached through a symlink.

use super::fsops::{
    clear_pending, dir_is_ours, forget_dir, frame_is_ours, frames_name, iosurvey_alive, is_offered,
    open_dir, pending_pid,
};
use crate::guard::trash::{Removal, Trash};
use crate::guard::{fd_is_marked, same_file};
use crate::target::{OpenTarget, TargetKind};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Unlinks `name` from `dir` if it is a regular file carrying the mark
/// (and not one the user offered), judged through a descriptor of what is
/// there at the moment of removal: moved into `trash` first, so that a
/// file swapped in between a check and an unlink is put back, never
/// removed. True when it was removed.
fn unlink_marked(dir: BorrowedFd<'_>, name: &Path, trash: &Trash) -> Result<bool, Errno> {
    let ours = |fd: &OwnedFd, _: &rustix::fs::Stat| frame_is_ours(fd) && !is_offered(fd);
    match trash.remove_if(dir, name.as_os_str(), ours) {
        Ok(r) => Ok(r == Removal::Removed),
        // A directory or a mount point at a frame's name: not ours.
        Err(Errno::ISDIR | Errno::NOTDIR | Errno::BUSY) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes the directory `name` from `parent` when it is marked, empty,
/// and still the directory open at `fd` at the moment of removal (through
/// `trash`, or one made in `parent`); anything else is left.
fn rmdir_marked(parent: BorrowedFd<'_>, name: &Path, fd: &OwnedFd, trash: Option<&Trash>) {
    if !dir_is_ours(fd) {
        return;
    }
    let Ok(st) = rustix::fs::fstat(fd) else {
        return;
    };
    let made;
    let trash = match trash {
        Some(t) => t,
        None => match Trash::new(parent) {
            Ok(t) => {
                made = t;
                &made
            }
            Err(_) => return,
        },
    };
    if trash.remove_dir_if(parent, name.as_os_str(), &st) == Ok(Removal::Removed) {
        forget_dir(fd);
    }
}

/// The user's directory and the frames directory in it, both held open;
/// `None` when the frames directory is gone or is not a real directory.
fn open_root(root: &Path) -> std::io::Result<Option<(OwnedFd, OwnedFd)>> {
    let parent = root.parent().unwrap_or(Path::new("."));
    let name = root.file_name().map_or_else(frames_name, PathBuf::from);
    // Looked up by path again, not through the run's held directory: a
    // directory moved away during the run is not cleaned where it went.
    let parent_fd = match rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::NOTDIR) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    match open_dir(parent_fd.as_fd(), &name) {
        Ok(Some(fd)) => Ok(Some((parent_fd, fd))),
        Ok(None) | Err(Errno::LOOP | Errno::NOTDIR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Listed frames of one directory above which the directory is read once
/// instead of looking each name up: an interrupted run lists every frame
/// but wrote few.
const READ_DIR_ABOVE: usize = 64;

/// The names of `dir` that are in `names` (sorted).
fn present(dir: &OwnedFd, names: &[&OsStr]) -> Result<Vec<OsString>, Errno> {
    let mut out = Vec::new();
    for e in rustix::fs::Dir::read_from(dir)? {
        let e = e?;
        let name = OsStr::from_bytes(e.file_name().to_bytes());
        if names.binary_search(&name).is_ok() {
            out.push(name.to_os_string());
        }
    }
    Ok(out)
}

/// Unlinks the marked frames of one directory named in `group`.
fn remove_group(dir: &OwnedFd, group: &[PathBuf], trash: &Trash) -> Result<(), Errno> {
    let mut names: Vec<&OsStr> = group.iter().filter_map(|f| f.file_name()).collect();
    if names.len() > READ_DIR_ABOVE {
        if !names.is_sorted() {
            names.sort_unstable();
        }
        for n in present(dir, &names)? {
            unlink_marked(dir.as_fd(), Path::new(&n), trash)?;
        }
    } else {
        for n in names {
            unlink_marked(dir.as_fd(), Path::new(n), trash)?;
        }
    }
    Ok(())
}

/// Removes the listed frames under `root` that carry iosurvey's mark
/// (those already gone are fine), then the marked directories that leaves
/// empty, `root` included. Unmarked files and directories are left.
///
/// `held` is the frames directory the run held open: the directory found
/// at `root` now must be that one. A frames directory that is no longer
/// where it was (moved, removed or replaced during the run, by another one
/// or through a symlink) while frames were listed is an error that says so:
/// nothing is removed, neither in the directory found there nor in the
/// run's, wherever it went.
pub fn remove_frames(root: &Path, files: &[PathBuf], held: BorrowedFd<'_>) -> std::io::Result<()> {
    let found = open_root(root)?.filter(|(_, fd)| same_fd(fd.as_fd(), held));
    let Some((parent_fd, root_fd)) = found else {
        if files.is_empty() {
            return Ok(());
        }
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the frames directory is no longer there (moved, removed or replaced during the \
             run), so nothing was removed: the frames written are where it went",
        ));
    };
    let trash = Trash::new(root_fd.as_fd())?;
    let mut first_err: Option<Errno> = None;
    // The frames of one directory are listed one after the other.
    let mut rest = files;
    while let Some(first) = rest.first() {
        let parent = first.parent();
        let n = rest.iter().take_while(|f| f.parent() == parent).count();
        let (group, next) = rest.split_at(n);
        rest = next;
        let sub = parent
            .and_then(|p| p.strip_prefix(root).ok())
            .filter(|p| !p.as_os_str().is_empty());
        let removed = match sub {
            None => remove_group(&root_fd, group, &trash),
            Some(d) => match open_dir(root_fd.as_fd(), d) {
                Ok(Some(fd)) => {
                    let r = remove_group(&fd, group, &trash);
                    rmdir_marked(root_fd.as_fd(), d, &fd, Some(&trash));
                    r
                }
                Ok(None) | Err(Errno::LOOP | Errno::NOTDIR) => Ok(()),
                Err(e) => Err(e),
            },
        };
        if let Err(e) = removed {
            first_err.get_or_insert(e);
        }
    }
    // The trash is in the frames directory: gone before that is removed.
    drop(trash);
    clear_pending(&root_fd);
    let name = root.file_name().map_or_else(frames_name, PathBuf::from);
    rmdir_marked(parent_fd.as_fd(), &name, &root_fd, None);
    first_err.map_or(Ok(()), |e| Err(e.into()))
}

/// Whether `a` and `b` are descriptors of one file.
fn same_fd(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(x), Ok(y)) => same_file(&x, &y),
        _ => false,
    }
}

/// Removes the marked directories of the frames directory `root` that are
/// empty, then `root` if it is marked and empty: what a run that stopped
/// before writing a frame made.
pub(crate) fn remove_empty_dirs(root: &Path) {
    let Ok(Some((parent_fd, root_fd))) = open_root(root) else {
        return;
    };
    let mut subdirs = Vec::new();
    if let Ok(dir) = rustix::fs::Dir::read_from(&root_fd) {
        for e in dir.flatten() {
            let name = e.file_name().to_bytes();
            if is_subdir_name(name) {
                subdirs.push(PathBuf::from(String::from_utf8_lossy(name).into_owned()));
            }
        }
    }
    if let Ok(trash) = Trash::new(root_fd.as_fd()) {
        for s in subdirs {
            if let Ok(Some(fd)) = open_dir(root_fd.as_fd(), &s) {
                rmdir_marked(root_fd.as_fd(), &s, &fd, Some(&trash));
            }
        }
    }
    clear_pending(&root_fd);
    let name = root.file_name().map_or_else(frames_name, PathBuf::from);
    rmdir_marked(parent_fd.as_fd(), &name, &root_fd, None);
}

/// What an earlier, killed run left in a frames directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leftovers {
    /// The process id of the run that left them.
    pub pid: u32,
    /// Marked frames removed.
    pub frames: u64,
}

/// Whether `name` is a frame file's name (`f0000123.frm`).
fn is_frame_name(name: &[u8]) -> bool {
    name.len() > 5 && name.starts_with(b"f") && name.ends_with(b".frm")
}

/// Whether `name` is a frame subdirectory's name (`d00012`).
fn is_subdir_name(name: &[u8]) -> bool {
    name.len() > 1 && name[0] == b'd' && name[1..].iter().all(u8::is_ascii_digit)
}

/// Removes the marked frames in `dir`; returns how many.
fn sweep(dir: &OwnedFd, trash: &Trash) -> Result<u64, Errno> {
    let mut removed = 0;
    let mut subdirs = Vec::new();
    let mut frames = Vec::new();
    for e in rustix::fs::Dir::read_from(dir)? {
        let e = e?;
        let name = e.file_name().to_bytes();
        if is_frame_name(name) {
            frames.push(PathBuf::from(String::from_utf8_lossy(name).into_owned()));
        } else if is_subdir_name(name) {
            subdirs.push(PathBuf::from(String::from_utf8_lossy(name).into_owned()));
        }
    }
    for f in frames {
        if unlink_marked(dir.as_fd(), &f, trash)? {
            removed += 1;
        }
    }
    for s in subdirs {
        if let Ok(Some(sub)) = open_dir(dir.as_fd(), &s) {
            if fd_is_marked(&sub) {
                removed += sweep(&sub, trash)?;
                rmdir_marked(dir.as_fd(), &s, &sub, Some(trash));
            }
        }
    }
    Ok(removed)
}

/// Finds the frames an earlier run left in the marked frames directory of
/// `dir` when it was killed before its clean-up (its pending mark names a
/// process that is no longer running), and removes them: marked frames and
/// marked directories only. `Ok(None)` when there is nothing to do.
pub fn remove_leftovers(dir: &Path) -> std::io::Result<Option<Leftovers>> {
    let root = dir.join(frames_name());
    let Some((parent_fd, root_fd)) = open_root(&root)? else {
        return Ok(None);
    };
    let Some(pid) = pending_pid(&root_fd) else {
        return Ok(None);
    };
    if !fd_is_marked(&root_fd) || pid == std::process::id() || iosurvey_alive(pid) {
        return Ok(None);
    }
    let trash = Trash::new(root_fd.as_fd())?;
    let frames = sweep(&root_fd, &trash)?;
    drop(trash);
    let _ = rustix::fs::fremovexattr(&root_fd, super::fsops::PENDING_XATTR);
    rmdir_marked(parent_fd.as_fd(), &frames_name(), &root_fd, None);
    Ok(Some(Leftovers { pid, frames }))
}

/// Ends this process's use of the frames directory of `dir` (kept with
/// `--keep`): clears its pending mark, so the next run does not take the
/// kept frames for leftovers.
pub fn finish_frames(dir: &Path) {
    if let Ok(Some((_, root_fd))) = open_root(&dir.join(frames_name())) {
        clear_pending(&root_fd);
    }
}

impl OpenTarget {
    /// Removes the file if iosurvey created it; for a frames directory,
    /// the frames it wrote and then the directories they leave empty.
    pub fn remove_if_created(&self) -> std::io::Result<()> {
        if !self.created.any() {
            return Ok(());
        }
        if self.kind == TargetKind::Directory {
            return remove_frames(&self.path, &self.frame_files(), self.fd.as_fd());
        }
        self.remove_created_file()
    }
}
