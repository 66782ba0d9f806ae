//! The files beside the database as SQLite opens them: what it holds open,
//! verified once it has opened it (the write-ahead log, the wal-index
//! (`-shm`) and a journal SQLite holds at `FILE-wal`, `FILE-shm`,
//! `FILE-journal` must be regular files with one name each, on the
//! database's filesystem), and a log that an immutable open would not see.
//!
//! The files beside the database are judged (a symlink, a hard link to
//! another name, a file SQLite did not make is refused) immediately before
//! the first statement, the one that makes SQLite open them; but a hard
//! link put at one of those names in between is opened by SQLite all the
//! same. SQLite opens them by name and cannot be handed a descriptor, so
//! the names are read back here from `/proc/self/fd` after that first read
//! transaction, and a file that is not its own is refused before anything
//! is written to the log or the database.
//!
//! What is left: the window between the last judgement and SQLite's
//! `open()` (microseconds, no slow work in it), and what SQLite does at
//! that `open()` before this check: the first connection to a database
//! cuts its `-shm` to 3 bytes and rebuilds it from the log, and a new
//! database writes a `-journal` while it is switched to WAL. A hard link
//! made there in that window loses its contents. Only a process that can
//! write in the database's directory can make one, and with
//! `fs.protected_hardlinks = 1` (the default of every distribution) only
//! to a file it owns or can already read and write: nothing it could not
//! have overwritten itself.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Refuses, before anything is written, when a file SQLite holds open at
/// one of the names beside database `db` is not a regular file of its
/// own on the database's filesystem (`shown` names the database); the
/// error is the refusal's one line.
pub(crate) fn verify_held(db: &Path, shown: &str) -> Result<(), String> {
    let refuse = |why: String| format!("{shown}: {why}");
    let real = std::fs::canonicalize(db).map_err(|e| refuse(format!("{}: {e}", db.display())))?;
    let dev = std::fs::metadata(&real)
        .map_err(|e| refuse(format!("{}: {e}", db.display())))?
        .dev();
    let names: Vec<OsString> = ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| {
            let mut n = real.as_os_str().to_owned();
            n.push(s);
            n
        })
        .collect();
    let fds = std::fs::read_dir("/proc/self/fd").map_err(|e| {
        refuse(format!(
            "cannot list the files SQLite holds open (/proc/self/fd: {e}), to verify them; mount /proc"
        ))
    })?;
    for fd in fds.flatten() {
        let link = fd.path();
        let Ok(name) = std::fs::read_link(&link) else {
            continue;
        };
        if !names.iter().any(|n| n == name.as_os_str()) {
            continue;
        }
        // The file the descriptor is open on (the link is followed to it).
        let Ok(m) = std::fs::metadata(&link) else {
            continue;
        };
        // Still the same descriptor (another thread may have closed it and
        // opened another file under its number).
        if std::fs::read_link(&link).ok().as_deref() != Some(name.as_path()) {
            continue;
        }
        let what = if !m.file_type().is_file() {
            "not a regular file"
        } else if m.nlink() != 1 {
            "a hard link to another name"
        } else if m.dev() != dev {
            "on another filesystem than the database"
        } else {
            continue;
        };
        return Err(refuse(format!(
            "{} as SQLite opened it is {what} (put there while it was being opened); nothing was written: remove it and try again",
            name.display()
        )));
    }
    Ok(())
}

/// Refuses database `path` when a write-ahead log beside it is not empty:
/// read immutably (where SQLite cannot write beside it), its runs there
/// would be missing from every answer (the error is the refusal's line).
pub(crate) fn unmerged_log(path: &Path, shown: &str) -> Result<(), String> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = PathBuf::from(wal);
    match std::fs::symlink_metadata(&wal) {
        Ok(m) if m.len() > 0 => Err(format!(
            "{shown}: its write-ahead log {} may hold runs not yet merged into the database, and SQLite cannot merge them here (it cannot write beside the database); copy the database with its -wal and -shm somewhere writable and read it there, or checkpoint it where it can be written (sqlite3 FILE 'PRAGMA wal_checkpoint(TRUNCATE)')",
            wal.display()
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn a_log_that_got_a_second_name_while_sqlite_held_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.db");
        let c = Connection::open(&p).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        // SQLite holds the log and the wal-index open: its own, all well.
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        verify_held(&p, "--db h.db").unwrap();
        // A second name given to each, as a hard link put at the name just
        // before SQLite opened it would have.
        for suffix in ["-wal", "-shm"] {
            let side = dir.path().join(format!("h.db{suffix}"));
            let other = dir.path().join(format!("other{suffix}"));
            std::fs::hard_link(&side, &other).unwrap();
            let m = verify_held(&p, "--db h.db").unwrap_err();
            assert!(
                m.contains(&format!(
                    "{} as SQLite opened it is a hard link",
                    side.display()
                )),
                "{m}"
            );
            std::fs::remove_file(&other).unwrap();
        }
        verify_held(&p, "--db h.db").unwrap();
    }
}
