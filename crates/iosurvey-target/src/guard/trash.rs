//! Removing only what is ours at the moment of removal. A check of a name
//! followed by an unlink of that name can be raced: a file swapped in
//! between the two (`renameat2(RENAME_EXCHANGE)`) is the one unlinked. So
//! a file is first renamed, atomically, into a private directory iosurvey
//! created beside it ([`Trash`], mode 0700, on the same filesystem): what
//! was at the name is then out of everyone else's reach, and is judged
//! there. It is unlinked only if it is ours; anything else is renamed back
//! (`RENAME_NOREPLACE`), and if its name was taken meanwhile, kept under a
//! new name beside it, never lost.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What became of a name given to [`Trash::remove_if`].
#[derive(Debug, PartialEq, Eq)]
pub enum Removal {
    /// It was ours and is gone.
    Removed,
    /// Nothing was there.
    Absent,
    /// Something not ours was there: it is back under its name.
    PutBack,
    /// Something not ours was there and its name was taken meanwhile: it
    /// is kept under this name in the same directory.
    Renamed(OsString),
}

/// A private directory (0700, owned by this process's user) created in a
/// directory iosurvey holds, removed again when dropped if it is empty.
/// Made for one removal, or shared: the one [`reserve`]d for its parent
/// directory when no new directory can be made there (a full filesystem).
pub struct Trash(Arc<TrashDir>);

/// The directory of a [`Trash`].
pub struct TrashDir {
    parent: OwnedFd,
    /// The parent's device and inode, to find a reserved trash again.
    parent_id: (u64, u64),
    name: OsString,
    fd: OwnedFd,
    st: Stat,
    next: AtomicU64,
}

impl std::ops::Deref for Trash {
    type Target = TrashDir;
    fn deref(&self) -> &TrashDir {
        &self.0
    }
}

/// The trash directories made ahead, one for each directory a run removes
/// or replaces files in, made when that directory is first held: a removal
/// needs a new directory (one inode, maybe one block), which a filesystem
/// filled during the run no longer has, and without it the run's test file
/// or a temporary report would be left behind.
static RESERVED: Mutex<Vec<Arc<TrashDir>>> = Mutex::new(Vec::new());

fn reserved() -> std::sync::MutexGuard<'static, Vec<Arc<TrashDir>>> {
    RESERVED.lock().unwrap_or_else(|e| e.into_inner())
}

fn id_of(fd: BorrowedFd<'_>) -> Result<(u64, u64), Errno> {
    rustix::fs::fstat(fd).map(|st| (st.st_dev, st.st_ino))
}

/// Makes the trash of the directory open at `parent` now, while there is
/// room, and keeps it until [`release_reserved`]; once per directory.
pub fn reserve(parent: BorrowedFd<'_>) -> Result<(), Errno> {
    let id = id_of(parent)?;
    let mut all = reserved();
    if !all.iter().any(|d| d.parent_id == id) {
        all.push(Arc::new(TrashDir::make(parent)?));
    }
    Ok(())
}

/// Removes the trash directories made ahead (each one only if it is empty
/// and still the one made), at the end of the run.
pub fn release_reserved() {
    reserved().clear();
}

/// The trash made ahead for the directory open at `parent`, if any.
fn reserved_for(parent: BorrowedFd<'_>) -> Option<Trash> {
    let id = id_of(parent).ok()?;
    let all = reserved();
    all.iter()
        .find(|d| d.parent_id == id)
        .map(|d| Trash(Arc::clone(d)))
}

/// A name no other run and no earlier call of this run uses.
fn unique_name(what: &str) -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".iosurvey-{what}-{}-{now:08x}{n}", std::process::id()).into()
}

impl Trash {
    /// Creates the private directory in `parent` and holds it open; when
    /// the filesystem has no room for a new directory (ENOSPC, EDQUOT,
    /// EMLINK), the one [`reserve`]d for `parent` instead.
    pub fn new(parent: BorrowedFd<'_>) -> Result<Trash, Errno> {
        match TrashDir::make(parent) {
            Ok(d) => Ok(Trash(Arc::new(d))),
            Err(e @ (Errno::NOSPC | Errno::DQUOT | Errno::MLINK)) => reserved_for(parent).ok_or(e),
            Err(e) => Err(e),
        }
    }
}

impl TrashDir {
    /// Creates the private directory in `parent` and holds it open. The
    /// directory opened must be the one made: a real directory, owned by
    /// this user, that no one else may enter.
    fn make(parent: BorrowedFd<'_>) -> Result<TrashDir, Errno> {
        let parent_id = id_of(parent)?;
        let parent = rustix::io::fcntl_dupfd_cloexec(parent, 0)?;
        for _ in 0..100 {
            let name = unique_name("trash");
            match rustix::fs::mkdirat(&parent, &name, Mode::RWXU) {
                Ok(()) => {}
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e),
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&parent, &name, flags, Mode::empty())?;
            if !is_private(&fd)? {
                return Err(Errno::PERM);
            }
            let st = rustix::fs::fstat(&fd)?;
            return Ok(TrashDir {
                parent,
                parent_id,
                name,
                fd,
                st,
                next: AtomicU64::new(0),
            });
        }
        Err(Errno::EXIST)
    }

    /// The name in the trash for `name`: unique, and still saying what it
    /// was (should the run be killed before it is put back).
    fn held_name(&self, name: &OsStr) -> OsString {
        let mut held = OsString::from(format!("{}-", self.next.fetch_add(1, Ordering::Relaxed)));
        // Its last part only: `name` may be a path below `dir`.
        held.push(std::path::Path::new(name).file_name().unwrap_or_default());
        held
    }

    /// Moves `name` in `dir` into the trash as `held`. The trash is
    /// private and `held` a name it never gave before, so a plain rename
    /// (on a filesystem without `renameat2`'s flags) replaces nothing.
    fn move_in(&self, dir: BorrowedFd<'_>, name: &OsStr, held: &OsStr) -> Result<(), Errno> {
        match rustix::fs::renameat_with(dir, name, &self.fd, held, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL) => rustix::fs::renameat(dir, name, &self.fd, held),
            r => r,
        }
    }

    /// Removes `name` in `dir` (on the trash's filesystem) if `ours` says
    /// that what is there at this moment is ours: it is moved into the
    /// trash first, then judged there through a descriptor of it (regular
    /// files only; anything else is never ours), then unlinked, or put
    /// back.
    pub fn remove_if(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        ours: impl FnOnce(&OwnedFd, &Stat) -> bool,
    ) -> Result<Removal, Errno> {
        let held = self.held_name(name);
        match self.move_in(dir, name, &held) {
            Ok(()) => {}
            Err(Errno::NOENT) => return Ok(Removal::Absent),
            Err(e) => return Err(e),
        }
        if judge_held(&self.fd, &held, ours) {
            rustix::fs::unlinkat(&self.fd, &held, AtFlags::empty())?;
            return Ok(Removal::Removed);
        }
        self.put_back(&held, dir, name)
    }

    /// Removes the empty directory `name` in `dir` if it is, at this
    /// moment, the directory `ours` (by device and inode): moved into the
    /// trash, judged there, removed there, or put back (also when it is
    /// not empty).
    pub fn remove_dir_if(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        ours: &Stat,
    ) -> Result<Removal, Errno> {
        let held = self.held_name(name);
        match self.move_in(dir, name, &held) {
            Ok(()) => {}
            Err(Errno::NOENT) => return Ok(Removal::Absent),
            Err(e) => return Err(e),
        }
        let now = rustix::fs::statat(&self.fd, &held, AtFlags::SYMLINK_NOFOLLOW);
        if now.is_ok_and(|now| super::same_file(&now, ours))
            && rustix::fs::unlinkat(&self.fd, &held, AtFlags::REMOVEDIR).is_ok()
        {
            return Ok(Removal::Removed);
        }
        self.put_back(&held, dir, name)
    }

    /// Returns what was moved in as `held` to `name` in `dir`; if the name
    /// was taken meanwhile, to a new name beside it.
    fn put_back(&self, held: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> Result<Removal, Errno> {
        match self.move_out(held, dir, name) {
            Ok(()) => return Ok(Removal::PutBack),
            Err(Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
        for _ in 0..100 {
            let mut other = name.to_os_string();
            other.push(unique_name("kept"));
            match self.move_out(held, dir, &other) {
                Ok(()) => return Ok(Removal::Renamed(other)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Errno::EXIST)
    }
}

impl TrashDir {
    /// Moves `held` out of the trash to `name` in `dir`, never over
    /// anything there: `RENAME_NOREPLACE`, or on a filesystem without it a
    /// look just before a plain rename.
    fn move_out(&self, held: &OsStr, dir: BorrowedFd<'_>, name: &OsStr) -> Result<(), Errno> {
        match rustix::fs::renameat_with(&self.fd, held, dir, name, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL) => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Err(Errno::NOENT) => rustix::fs::renameat(&self.fd, held, dir, name),
                Ok(_) => Err(Errno::EXIST),
                Err(e) => Err(e),
            },
            r => r,
        }
    }
}

/// Whether the directory open at `fd` is the private one just made: owned
/// by this user (no one else can make one this user owns, so a directory
/// put in its place by another is refused), closed to others (made 0700,
/// and again here; a filesystem that keeps no modes, such as FAT, ignores
/// that, and its directories are all the mount's user's anyway).
fn is_private(fd: &OwnedFd) -> Result<bool, Errno> {
    let _ = rustix::fs::fchmod(fd, Mode::RWXU);
    let st = rustix::fs::fstat(fd)?;
    Ok(st.st_uid == rustix::process::geteuid().as_raw())
}

/// Whether `held` in the trash is a regular file that `ours` accepts,
/// judged through a descriptor that is that file.
fn judge_held(trash: &OwnedFd, held: &OsStr, ours: impl FnOnce(&OwnedFd, &Stat) -> bool) -> bool {
    let Ok(st) = rustix::fs::statat(trash, held, AtFlags::SYMLINK_NOFOLLOW) else {
        return false;
    };
    // A device node or a FIFO is never opened: opening may act on it.
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return false;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(trash, held, flags, Mode::empty()) else {
        return false;
    };
    match rustix::fs::fstat(&fd) {
        Ok(now) if super::same_file(&now, &st) => ours(&fd, &now),
        _ => false,
    }
}

impl Drop for TrashDir {
    /// Removes the trash directory when it is still the one made and is
    /// empty; something that could not be put back keeps it.
    fn drop(&mut self) {
        let here = rustix::fs::statat(&self.parent, &self.name, AtFlags::SYMLINK_NOFOLLOW);
        if here.is_ok_and(|h| super::same_file(&h, &self.st)) {
            let _ = rustix::fs::unlinkat(&self.parent, &self.name, AtFlags::REMOVEDIR);
        }
    }
}

/// The pid in a trash directory's name `.iosurvey-trash-<pid>-…`.
fn trash_pid(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".iosurvey-trash-")?;
    let end = rest.iter().position(|&c| c == b'-')?;
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// Puts back what a run killed in the middle of a removal left in its
/// trash in `dir` (a trash whose run is `dead`): each entry `N-name` goes
/// back to `name` in `dir`, never over anything there (iosurvey's own test
/// files are then leftovers like any other). A trash left empty is
/// removed. The names put back.
pub fn recover_stale(dir: BorrowedFd<'_>, dead: impl Fn(u32) -> bool) -> Vec<OsString> {
    let mut back = Vec::new();
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return back;
    };
    let stale: Vec<OsString> = entries
        .flatten()
        .filter(|e| trash_pid(e.file_name().to_bytes()).is_some_and(&dead))
        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .collect();
    for name in stale {
        back.extend(empty_stale(dir, &name));
    }
    back
}

/// Empties the stale trash `name` in `dir` back into `dir`, then removes it
/// if it is empty and still the one emptied.
fn empty_stale(dir: BorrowedFd<'_>, name: &OsStr) -> Vec<OsString> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
        return Vec::new();
    };
    let Ok(st) = rustix::fs::fstat(&fd) else {
        return Vec::new();
    };
    if st.st_uid != rustix::process::geteuid().as_raw() {
        return Vec::new();
    }
    let mut back = Vec::new();
    let held: Vec<OsString> = match rustix::fs::Dir::read_from(&fd) {
        Ok(d) => d
            .flatten()
            .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
            .filter(|n| n != "." && n != "..")
            .collect(),
        Err(_) => return back,
    };
    for h in held {
        let Some(orig) = h.as_bytes().splitn(2, |&c| c == b'-').nth(1) else {
            continue;
        };
        let orig = OsStr::from_bytes(orig);
        match rustix::fs::renameat_with(&fd, &h, dir, orig, RenameFlags::NOREPLACE) {
            Ok(()) => back.push(orig.to_os_string()),
            Err(_) => continue,
        }
    }
    let here = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW);
    if here.is_ok_and(|h| super::same_file(&h, &st)) {
        let _ = rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR);
    }
    back
}

/// Removes `name` in `dir` if it is still the file `ours` (by device and
/// inode) at the moment of removal, through a [`Trash`] made in `dir`.
pub fn remove_same(dir: BorrowedFd<'_>, name: &OsStr, ours: &Stat) -> Result<Removal, Errno> {
    let trash = Trash::new(dir)?;
    trash.remove_if(dir, name, |_, st| super::same_file(st, ours))
}

/// Like [`remove_same`], with the file judged through a descriptor of it.
pub fn remove_same_fd(dir: BorrowedFd<'_>, name: &OsStr, fd: impl AsFd) -> Result<Removal, Errno> {
    let ours = rustix::fs::fstat(fd)?;
    remove_same(dir, name, &ours)
}

/// `renameat2(RENAME_EXCHANGE)` of two names, in a loop until `stop`: the
/// racer of the tests. How many exchanges were made.
#[cfg(test)]
pub(crate) fn exchanger(
    a: (OwnedFd, OsString),
    b: (OwnedFd, OsString),
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            let r = rustix::fs::renameat_with(&a.0, &a.1, &b.0, &b.1, RenameFlags::EXCHANGE);
            n += u64::from(r.is_ok());
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn dir_fd(p: &std::path::Path) -> OwnedFd {
        rustix::fs::open(p, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn a_file_not_ours_is_put_back_and_the_trash_removed() {
        let d = tempfile::tempdir().unwrap();
        let dfd = dir_fd(d.path());
        std::fs::write(d.path().join("mine"), b"m").unwrap();
        std::fs::write(d.path().join("user"), b"u").unwrap();
        let mine = rustix::fs::stat(d.path().join("mine")).unwrap();
        let r = remove_same(dfd.as_fd(), OsStr::new("user"), &mine).unwrap();
        assert_eq!(r, Removal::PutBack);
        assert_eq!(std::fs::read(d.path().join("user")).unwrap(), b"u");
        let r = remove_same(dfd.as_fd(), OsStr::new("mine"), &mine).unwrap();
        assert_eq!(r, Removal::Removed);
        let r = remove_same(dfd.as_fd(), OsStr::new("mine"), &mine).unwrap();
        assert_eq!(r, Removal::Absent);
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn a_file_swapped_in_by_rename_exchange_is_never_removed() {
        let d = tempfile::tempdir().unwrap();
        let dfd = dir_fd(d.path());
        let user = d.path().join("user");
        let stop = Arc::new(AtomicBool::new(false));
        for round in 0..300 {
            let ours = d.path().join("ours");
            std::fs::write(&ours, b"ours").unwrap();
            std::fs::write(&user, b"user data").unwrap();
            let st = rustix::fs::stat(&ours).unwrap();
            stop.store(false, Ordering::Relaxed);
            let racer = exchanger(
                (dir_fd(d.path()), "ours".into()),
                (dir_fd(d.path()), "user".into()),
                stop.clone(),
            );
            let r = remove_same(dfd.as_fd(), OsStr::new("ours"), &st);
            stop.store(true, Ordering::Relaxed);
            racer.join().unwrap();
            r.unwrap();
            let kept = std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .filter(|e| std::fs::read(e.path()).is_ok_and(|b| b == b"user data"))
                .count();
            assert_eq!(kept, 1, "round {round}: the user's file was lost");
            let trash = std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("trash"))
                .count();
            assert_eq!(trash, 0, "round {round}: the trash directory was left");
            let _ = std::fs::remove_file(&ours);
        }
    }

    #[test]
    fn a_killed_runs_trash_is_put_back_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let dfd = dir_fd(d.path());
        let dead = 4_194_305u32;
        let trash = d.path().join(format!(".iosurvey-trash-{dead}-1a2b0"));
        std::fs::create_dir(&trash).unwrap();
        std::fs::write(trash.join("0-users-file"), b"user data").unwrap();
        std::fs::write(trash.join("1-taken"), b"user data 2").unwrap();
        std::fs::write(d.path().join("taken"), b"other").unwrap();
        let live = d
            .path()
            .join(format!(".iosurvey-trash-{}-1", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        std::fs::write(live.join("0-mine"), b"x").unwrap();
        let back = recover_stale(dfd.as_fd(), |p| p == dead);
        assert_eq!(back, [OsString::from("users-file")]);
        assert_eq!(
            std::fs::read(d.path().join("users-file")).unwrap(),
            b"user data"
        );
        // A name taken: nothing is put over it, the trash stays.
        assert_eq!(std::fs::read(d.path().join("taken")).unwrap(), b"other");
        assert_eq!(
            std::fs::read(trash.join("1-taken")).unwrap(),
            b"user data 2"
        );
        std::fs::remove_file(d.path().join("taken")).unwrap();
        recover_stale(dfd.as_fd(), |p| p == dead);
        assert!(!trash.exists(), "an emptied trash is removed");
        assert!(live.join("0-mine").exists(), "a live run's trash is left");
    }
}
