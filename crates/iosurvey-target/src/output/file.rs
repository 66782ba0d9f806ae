//! Writing an output file by descriptor: everything happens relative to
//! the directory held since the output was judged (`out_path`), so a
//! directory swapped for a symlink during the run leads nowhere else. The
//! report goes into a new file (`O_CREAT|O_EXCL|O_NOFOLLOW`), which then
//! takes the name: with `RENAME_NOREPLACE` when nothing is there, by
//! `RENAME_EXCHANGE` with a regular file (which keeps its owner and mode),
//! never over anything else (a device node, a FIFO, a symlink, a directory,
//! or a regular file moved or exchanged there since). What the exchange
//! brings out is removed only if it is the file judged at the start (or
//! the report this run put there since), by identity, through
//! `crate::guard::trash`; anything else is exchanged back.

use crate::guard::trash::{remove_same, Removal, Trash};
use crate::output::judged::{AtName, Judged};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// Creates a new file in `dir` for writing, with a unique name of a fixed,
/// short length (`.iosurvey-PID-N.tmp`: one derived from the output's
/// name passed NAME_MAX for a long one, and failed after the run), with
/// `O_CREAT|O_EXCL|O_NOFOLLOW`: it never opens what is already there and
/// never follows a symlink. Its name and descriptor.
pub fn create_temp_at(dir: BorrowedFd<'_>, mode: u32) -> std::io::Result<(OsString, OwnedFd)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = OsString::from(format!(".iosurvey-{}-{n}.tmp", std::process::id()));
        match rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => return Ok((tmp, fd)),
            Err(Errno::EXIST) if n < 1000 => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Removes the temporary file `tmp` in `dir` if it is still the file open
/// at `fd` (see `crate::guard::trash`).
pub fn remove_temp(dir: BorrowedFd<'_>, tmp: &OsStr, fd: impl AsFd) -> std::io::Result<()> {
    let mine = rustix::fs::fstat(fd)?;
    remove_same(dir, tmp, &mine)?;
    Ok(())
}

/// Replaces (or creates) the regular file `name` in `dir` with `body`,
/// whole, in place of the file `at` knows there (or of nothing). A failure
/// leaves what was there and removes the new file. The new file, open for
/// writing (see [`write_into_placed`]).
pub fn replace_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    at: &AtName,
    body: &[u8],
) -> std::io::Result<std::fs::File> {
    let (tmp, fd) = create_temp_at(dir, 0o644)?;
    let mut file = std::fs::File::from(fd);
    let done = file
        .write_all(body)
        .and_then(|_| put_in_place(dir, &tmp, name, &file, at));
    if done.is_err() {
        let _ = remove_temp(dir, &tmp, &file);
    }
    done.map(|()| file)
}

/// Writes `bytes` at `offset` into `file`, a file [`replace_at`] put at
/// `name` in `dir`, while that name still holds it: the file `at` knows
/// there, by identity, and `file` itself. `Ok(false)`, with nothing
/// written, when the name holds anything else or nothing (moved, removed
/// or replaced since): the caller then writes the whole again through
/// [`replace_at`], which decides what may be done there. Only the
/// process's own new file is ever written this way.
pub fn write_into_placed(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    at: &AtName,
    file: &std::fs::File,
    offset: u64,
    bytes: &[u8],
) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let Some(judged) = at.get() else {
        return Ok(false);
    };
    let mine = rustix::fs::fstat(file)?;
    let there = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let regular = FileType::from_raw_mode(there.st_mode) == FileType::RegularFile;
    if !regular || !same(&there, &judged) || !same(&mine, &judged) {
        return Ok(false);
    }
    file.write_all_at(bytes, offset)?;
    Ok(true)
}

/// Creates an empty file that takes the place of `name` in `dir` at once,
/// for writing as the run goes (`--live`).
pub fn place_new(dir: BorrowedFd<'_>, name: &OsStr, at: &AtName) -> std::io::Result<std::fs::File> {
    let (tmp, fd) = create_temp_at(dir, 0o644)?;
    let file = std::fs::File::from(fd);
    match put_in_place(dir, &tmp, name, &file, at) {
        Ok(()) => Ok(file),
        Err(e) => {
            let _ = remove_temp(dir, &tmp, &file);
            Err(e)
        }
    }
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
        FileType::RegularFile => "another file",
        _ => "not a regular file",
    }
}

/// Gives the new file `tmp` (open as `file`) the name `name`, in place of
/// the file `at` knows there and of nothing else: a name that was free
/// when the run started is only taken if it is still free
/// (`RENAME_NOREPLACE`); a file judged there is replaced only while it is
/// still that file (by identity). Then `at` knows the new file, which the
/// next rewrite replaces.
fn put_in_place(
    dir: BorrowedFd<'_>,
    tmp: &OsStr,
    name: &OsStr,
    file: &std::fs::File,
    at: &AtName,
) -> std::io::Result<()> {
    let judged = at.get();
    match &judged {
        None => take_free_name(dir, tmp, name)?,
        Some(old) => {
            keep_owner_and_mode(file, old)?;
            exchange(dir, tmp, name, old)?;
        }
    }
    let mine = Judged::of(&rustix::fs::fstat(file)?);
    // The owner and mode stay those of the file judged at the start.
    at.set(judged.map_or(mine, |old| Judged {
        dev: mine.dev,
        ino: mine.ino,
        ..old
    }));
    Ok(())
}

/// Gives `tmp` the name `name` only if nothing is there: whatever was put
/// there during the run (nothing was when it started) stays.
fn take_free_name(dir: BorrowedFd<'_>, tmp: &OsStr, name: &OsStr) -> std::io::Result<()> {
    match rustix::fs::renameat_with(dir, tmp, dir, name, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(Errno::EXIST) => Err(put_there_since(dir, name)),
        // No renameat2 flags on this filesystem: a plain rename right
        // after a look that found nothing.
        Err(Errno::INVAL) => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => Ok(rustix::fs::renameat(dir, tmp, dir, name)?),
            _ => Err(put_there_since(dir, name)),
        },
        Err(e) => Err(e.into()),
    }
}

/// The failure for a name taken by something the run did not judge.
fn put_there_since(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Error {
    let what = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => kind_name(&st),
        Err(_) => "something",
    };
    std::io::Error::other(format!(
        "{what} was put there during the run (it is not what was there when the run started); not replaced"
    ))
}

/// The new file takes the owner and the mode of the regular file `old` it
/// replaces, without its set-user-ID and set-group-ID bits (a report is no
/// program to run as its owner). Only root may give a file away: anyone
/// else keeps it.
fn keep_owner_and_mode(file: &std::fs::File, old: &Judged) -> std::io::Result<()> {
    use rustix::fs::{Gid, Uid};
    match rustix::fs::fchown(
        file,
        Some(Uid::from_raw(old.uid)),
        Some(Gid::from_raw(old.gid)),
    ) {
        Ok(()) | Err(Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    let mode = old.mode & 0o7777 & !(0o4000 | 0o2000);
    rustix::fs::fchmod(file, Mode::from_raw_mode(mode))?;
    Ok(())
}

/// Exchanges the new file `tmp` with the file `old` judged at `name`, then
/// removes what the exchange brought out if it is `old` (by identity);
/// anything else is exchanged back and the replacement fails. A judged
/// file that is gone leaves the name free to take.
fn exchange(dir: BorrowedFd<'_>, tmp: &OsStr, name: &OsStr, old: &Judged) -> std::io::Result<()> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => return take_free_name(dir, tmp, name),
        Ok(st) if !same(&st, old) => return Err(put_there_since(dir, name)),
        Ok(_) => {}
        Err(e) => return Err(e.into()),
    }
    match rustix::fs::renameat_with(dir, tmp, dir, name, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        // No exchange on this filesystem: a plain rename over the file
        // just seen to be the one judged.
        Err(Errno::INVAL) => return Ok(rustix::fs::renameat(dir, tmp, dir, name)?),
        Err(Errno::NOENT) => return take_free_name(dir, tmp, name),
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

fn same(a: &Stat, b: &Judged) -> bool {
    (a.st_dev, a.st_ino) == (b.dev, b.ino)
}

/// Rewrites the mounted regular file `file` (held since it was judged)
/// with `body`, in place: truncated, then written from its start.
pub fn rewrite_held(file: &std::fs::File, body: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.set_len(0)?;
    file.write_all_at(body, 0)?;
    Ok(())
}
