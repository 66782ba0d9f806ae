//! The history database's files (`--db`): the file, judged as any output,
//! and the three files SQLite writes in place beside it (`-wal`, `-shm`,
//! `-journal`), which it truncates, overwrites and removes whatever they
//! are. Each of those must be a regular file of its own (not a symlink,
//! not a hard link to another name, not a loop device's backing file),
//! and is judged as an output too, so that no target, input or other
//! output of the run is one of them.

use crate::output::path::{judge, target_idents, Ident, OutPath, OutputError, Sink};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What SQLite names the files beside a database.
pub const SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The files beside database `db`.
pub fn sidecar_paths(db: &Path) -> Vec<PathBuf> {
    SIDECARS
        .iter()
        .map(|s| {
            let mut p = db.as_os_str().to_owned();
            p.push(s);
            PathBuf::from(p)
        })
        .collect()
}

/// Refuses a file beside database `db` that is there and is not a
/// regular file of its own (`shown` names the database in the message),
/// or is one SQLite did not make (a file of the user's with such a name:
/// SQLite would truncate or rewrite it). Without the database's lock:
/// another iosurvey may be writing them now, and what they hold is
/// judged as it settles ([`not_sqlite_made_settled`]).
///
/// [`not_sqlite_made_settled`]: crate::output::sqlite_made::not_sqlite_made_settled
pub fn check_sidecars(db: &Path, shown: &str) -> Result<(), OutputError> {
    judge_sidecars(db, shown, Read::Settled)
}

/// How the files beside a database are judged.
#[derive(Clone, Copy)]
enum Read {
    /// By their kind only.
    Kind,
    /// By what they begin with too, in one look (the database's lock
    /// held: no other iosurvey writes them).
    Once,
    /// By what they begin with, as it settles (no lock held).
    Settled,
}

/// The files beside `db` judged as `read` says.
fn judge_sidecars(db: &Path, shown: &str, read: Read) -> Result<(), OutputError> {
    use crate::output::sqlite_made::{not_sqlite_made, not_sqlite_made_settled};
    for (p, suffix) in sidecar_paths(db).into_iter().zip(SIDECARS) {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let made = || match read {
            Read::Kind => None,
            Read::Once => not_sqlite_made(&p, suffix),
            Read::Settled => not_sqlite_made_settled(&p, suffix),
        };
        let what = if m.file_type().is_symlink() {
            "a symlink"
        } else if !m.file_type().is_file() {
            "not a regular file"
        } else if m.nlink() > 1 {
            "a hard link to another name"
        } else if let Some(why) = made() {
            return Err(OutputError::new(format!(
                "{shown}: {} is not a file SQLite made ({why}), and SQLite would overwrite or delete it; move it elsewhere (or remove it if it is not wanted), or give another database",
                p.display()
            )));
        } else {
            continue;
        };
        return Err(not_in_place(shown, &p, what));
    }
    Ok(())
}

/// [`check_database_files`] without reading what the files hold: for a
/// database this process has open in SQLite, whose files must not be
/// opened beside it (closing a descriptor of a file drops every `fcntl`
/// lock the process holds on it: SQLite's, under it).
pub fn check_database_kinds(db: &Path, shown: &str) -> Result<(), OutputError> {
    check_database_itself(db, shown)?;
    judge_sidecars(db, shown, Read::Kind)
}

/// The refusal of `p`, which is `what` where SQLite writes in place.
fn not_in_place(shown: &str, p: &Path, what: &str) -> OutputError {
    OutputError::new(format!(
        "{shown}: {} is {what}; SQLite writes the database and the files beside it in place, so each must be a regular file of its own (give the file itself, or remove what is in the way)",
        p.display()
    ))
}

/// Refuses database `db` itself when it is there and is a symlink or not
/// a regular file (the same words for a run's `--db` and a `db` command's),
/// then the files beside it as [`check_sidecars`] does, but in one look at
/// what they hold: for a process that holds the database's lock (so that
/// no other iosurvey is writing them) and has not opened it in SQLite yet;
/// or, without the lock, as a first look whose refusal is looked at again
/// under it. The database may have other names (hard links of the
/// user's); what SQLite writes beside it may not.
pub fn check_database_files(db: &Path, shown: &str) -> Result<(), OutputError> {
    check_database_itself(db, shown)?;
    judge_sidecars(db, shown, Read::Once)
}

/// Refuses database `db` itself when it is there and is a symlink or not
/// a regular file.
fn check_database_itself(db: &Path, shown: &str) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(db) {
        Ok(m) if m.file_type().is_symlink() => Err(not_in_place(shown, db, "a symlink")),
        Ok(m) if m.is_dir() => Err(not_in_place(shown, db, "a directory")),
        Ok(m) if !m.file_type().is_file() => Err(not_in_place(shown, db, "not a regular file")),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OutputError::new(format!("{shown}: {}: {e}", db.display()))),
    }
}

/// Judges database `given` and the files beside it, to write them: the
/// database first. Each is an output for the checks between outputs,
/// targets and inputs ([`crate::output::path::check_all`]).
pub fn judge_database(given: &Path) -> Result<Vec<OutPath>, OutputError> {
    let shown = format!("--db {}", given.display());
    if given.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(OutputError::new(format!(
            "{shown}: names a directory; give the database's file name"
        )));
    }
    // A symlink is refused as `db` commands refuse it (SQLite opens the
    // database without following one), not followed.
    if std::fs::symlink_metadata(given).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(not_in_place(&shown, given, "a symlink"));
    }
    let db = judge("--db", given)?;
    let Sink::File { real, .. } = &db.sink else {
        return Err(OutputError::new(format!(
            "{shown}: the history database must be a regular file (not stdout, a FIFO, a device or a file mounted on its own)"
        )));
    };
    check_sidecars(real, &shown)?;
    let mut all = vec![db.clone()];
    for (p, suffix) in sidecar_paths(real).into_iter().zip(SIDECARS) {
        let flag = format!("--db (its {suffix} file)");
        // SQLite makes and removes these as other processes open and
        // close the database: one that comes or goes while it is judged
        // is judged again (as it is then).
        let mut judged = judge(&flag, &p);
        for _ in 0..3 {
            if judged.is_ok() {
                break;
            }
            judged = judge(&flag, &p);
        }
        all.push(judged?);
    }
    Ok(all)
}

/// The identities of database `given` and the files beside it, learnt
/// without writing anything (to read it: no output may be one of them).
pub fn database_idents(given: &Path) -> Vec<Ident> {
    let mut ids = target_idents(given);
    for p in sidecar_paths(given) {
        ids.extend(target_idents(&p));
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_or_symlink_beside_the_database_is_refused_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let keep = dir.path().join("keep");
        std::fs::write(&keep, b"mine").unwrap();
        let db = dir.path().join("h.db");
        std::fs::hard_link(&keep, dir.path().join("h.db-shm")).unwrap();
        let e = judge_database(&db).unwrap_err().to_string();
        assert!(e.contains("h.db-shm is a hard link"), "{e}");
        std::fs::remove_file(dir.path().join("h.db-shm")).unwrap();
        std::os::unix::fs::symlink(&keep, dir.path().join("h.db-wal")).unwrap();
        let e = judge_database(&db).unwrap_err().to_string();
        assert!(e.contains("h.db-wal is a symlink"), "{e}");
        std::fs::remove_file(dir.path().join("h.db-wal")).unwrap();
        assert_eq!(std::fs::read(&keep).unwrap(), b"mine");
        // A directory named as the database.
        let slash = PathBuf::from(format!("{}/", db.display()));
        assert!(judge_database(&slash)
            .unwrap_err()
            .to_string()
            .contains("names a directory"));
        // All well: the database and its three, each its own output.
        let all = judge_database(&db).unwrap();
        assert_eq!(all.len(), 4);
        let ids = database_idents(&db);
        for o in &all {
            assert!(ids.contains(&o.ident), "{}", o.shown());
        }
    }
}
