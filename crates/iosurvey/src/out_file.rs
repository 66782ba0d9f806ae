//! Writing an output file by descriptor: everything happens relative to
//! the directory held since the output was judged (`out_path`), so a
//! directory swapped for a symlink during the run leads nowhere else. The
//! report goes into a new file (`O_CREAT|O_EXCL|O_NOFOLLOW`), which then
//! takes the name: with `RENAME_NOREPLACE` when nothing is there, by
//! `RENAME_EXCHANGE` with a regular file (which keeps its owner and mode),
//! never over anything else (a device node, a FIFO, a symlink, a directory
//! put there since). What the exchange brings out is removed only if it is
//! the file judged, through `iosurvey_run::guard::trash`.

use iosurvey_run::guard::trash::{remove_same, Removal, Trash};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// Creates a new file in `dir` for writing, named after `name` and unique,
/// with `O_CREAT|O_EXCL|O_NOFOLLOW`: it never opens what is already there
/// and never follows a symlink. Its name and descriptor.
pub fn create_temp_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    mode: u32,
) -> std::io::Result<(OsString, OwnedFd)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut tmp = OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".iosurvey-{}-{n}.tmp", std::process::id()));
        match rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => return Ok((tmp, fd)),
            Err(Errno::EXIST) if n < 1000 => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Removes the temporary file `tmp` in `dir` if it is still the file open
/// at `fd` (see `iosurvey_run::guard::trash`).
pub fn remove_temp(dir: BorrowedFd<'_>, tmp: &OsStr, fd: impl AsFd) -> std::io::Result<()> {
    let mine = rustix::fs::fstat(fd)?;
    remove_same(dir, tmp, &mine)?;
    Ok(())
}

/// Replaces (or creates) the regular file `name` in `dir` with `body`,
/// whole. A failure leaves what was there and removes the new file.
pub fn replace_at(dir: BorrowedFd<'_>, name: &OsStr, body: &[u8]) -> std::io::Result<()> {
    let (tmp, fd) = create_temp_at(dir, name, 0o644)?;
    let mut file = std::fs::File::from(fd);
    let done = file
        .write_all(body)
        .and_then(|_| put_in_place(dir, &tmp, name, &file));
    if done.is_err() {
        let _ = remove_temp(dir, &tmp, &file);
    }
    done
}

/// Creates an empty file that takes the place of `name` in `dir` at once,
/// for writing as the run goes (`--live`).
pub fn place_new(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<std::fs::File> {
    let (tmp, fd) = create_temp_at(dir, name, 0o644)?;
    let file = std::fs::File::from(fd);
    match put_in_place(dir, &tmp, name, &file) {
        Ok(()) => Ok(file),
        Err(e) => {
            let _ = remove_temp(dir, &tmp, &file);
            Err(e)
        }
    }
}

fn is_regular(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
}

/// What a thing that is not a regular file is called in messages.
fn kind_name(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::BlockDevice => "a block device",
        FileType::CharacterDevice => "a character device",
        FileType::Fifo => "a FIFO",
        FileType::Symlink => "a symlink",
        FileType::Directory => "a directory",
        FileType::Socket => "a socket",
        _ => "not a regular file",
    }
}

/// Gives the new file `tmp` (open as `file`) the name `name`: judged with
/// `fstatat(AT_SYMLINK_NOFOLLOW)` and taken atomically. A path that is no
/// longer absent or a regular file is an error, and nothing there changes.
fn put_in_place(
    dir: BorrowedFd<'_>,
    tmp: &OsStr,
    name: &OsStr,
    file: &std::fs::File,
) -> std::io::Result<()> {
    // Something may appear between the look and the rename: look again.
    for _ in 0..3 {
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => match rename(dir, tmp, name, RenameFlags::NOREPLACE) {
                Err(Errno::EXIST) => continue,
                r => return Ok(r?),
            },
            Ok(old) if is_regular(&old) => {
                keep_owner_and_mode(file, &old)?;
                return exchange(dir, tmp, name, &old);
            }
            Ok(old) => {
                return Err(std::io::Error::other(format!(
                    "is {} now (it was not when the run started); not replaced",
                    kind_name(&old)
                )))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::other(
        "kept changing while it was written; not replaced",
    ))
}

/// `renameat2(tmp, name, flags)` in `dir`; on a filesystem without
/// `renameat2`'s flags, a plain rename after the look just made.
fn rename(dir: BorrowedFd<'_>, tmp: &OsStr, name: &OsStr, flags: RenameFlags) -> Result<(), Errno> {
    match rustix::fs::renameat_with(dir, tmp, dir, name, flags) {
        Err(Errno::INVAL) => rustix::fs::renameat(dir, tmp, dir, name),
        r => r,
    }
}

/// The new file takes the owner and the mode of the regular file `old` it
/// replaces. Only root may give a file away: anyone else keeps it.
fn keep_owner_and_mode(file: &std::fs::File, old: &Stat) -> std::io::Result<()> {
    use rustix::fs::{Gid, Uid};
    let owner = (
        Some(Uid::from_raw(old.st_uid)),
        Some(Gid::from_raw(old.st_gid)),
    );
    match rustix::fs::fchown(file, owner.0, owner.1) {
        Ok(()) | Err(Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    // After the chown, which clears set-id bits.
    rustix::fs::fchmod(file, Mode::from_raw_mode(old.st_mode & 0o7777))?;
    Ok(())
}

/// Exchanges the new file `tmp` with the regular file `old` at `name`,
/// then removes what the exchange brought out if it is `old`; anything
/// else is exchanged back and the replacement fails.
fn exchange(dir: BorrowedFd<'_>, tmp: &OsStr, name: &OsStr, old: &Stat) -> std::io::Result<()> {
    match rustix::fs::renameat_with(dir, tmp, dir, name, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        // No exchange on this filesystem: a plain rename over the file
        // just judged regular.
        Err(Errno::INVAL) => return Ok(rustix::fs::renameat(dir, tmp, dir, name)?),
        Err(e) => return Err(e.into()),
    }
    let trash = Trash::new(dir)?;
    match trash.remove_if(dir, tmp, |_, st| same(st, old))? {
        Removal::Removed | Removal::Absent => Ok(()),
        Removal::PutBack => {
            rustix::fs::renameat_with(dir, tmp, dir, name, RenameFlags::EXCHANGE)?;
            Err(std::io::Error::other(
                "was replaced by something else while it was written; that was left, not replaced",
            ))
        }
        Removal::Renamed(kept) => Err(std::io::Error::other(format!(
            "changed while it was written; what was there is kept as {}",
            kept.to_string_lossy()
        ))),
    }
}

fn same(a: &Stat, b: &Stat) -> bool {
    (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
}
