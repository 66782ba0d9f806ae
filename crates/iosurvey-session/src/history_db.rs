//! `--db FILE`: the run recorded in the history database. The file is
//! judged with the other outputs (never a target, a device or another
//! output), checked before any I/O (an existing file must be an iosurvey
//! database this build can write, not locked, writable), and written once,
//! at the end, after the report files: a database that fails then loses
//! nothing, the run's figures being in those files. A PostgreSQL URL
//! (`--db postgres://...`) is no file: it is checked and written the same
//! way, and shown with its password hidden.

use crate::failure::Failure;
use anyhow::anyhow;
use iosurvey_db::{from_report, Db, DbError, Inserted};
use iosurvey_model::document::RunReport;
use iosurvey_target::output::database::check_database_kinds;
use iosurvey_target::output::path::{Ident, OutPath, Sink};
use std::path::{Path, PathBuf};

/// Where SQLite opens the file: the path judged, symlinks resolved, while
/// its directory is still the one held open since it was judged (a
/// directory swapped for another, or for a symlink, during the run is
/// refused; SQLite refuses a symlink in the last place itself, and puts its
/// write-ahead log and shared memory files beside the file).
fn place(out: &OutPath) -> Result<PathBuf, Failure> {
    let Sink::File { real, dir, .. } = &out.sink else {
        return Err(Failure::Usage(anyhow!(
            "{}: the history database must be a regular file (not stdout, a FIFO, a device or a file mounted on its own)",
            out.shown()
        )));
    };
    // The database judged there is still the one there (a file put at its
    // name during the run is not written); the files beside it are still
    // regular files of their own.
    if let Ident::Inode { dev, ino } = out.ident {
        let now = rustix::fs::stat(real).ok().map(|s| (s.st_dev, s.st_ino));
        if now.is_some_and(|n| n != (dev, ino)) {
            return Err(Failure::Run(anyhow!(
                "{}: is not the file it was when checked before the run; not written",
                out.shown()
            )));
        }
    }
    // What they hold is judged by the database's store, under its lock
    // (another run may be writing them now).
    check_database_kinds(real, &out.shown()).map_err(|e| Failure::Run(e.into()))?;
    let held = rustix::fs::fstat(dir.fd())
        .ok()
        .map(|s| (s.st_dev, s.st_ino));
    let now = real
        .parent()
        .and_then(|p| {
            rustix::fs::stat(if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            })
            .ok()
        })
        .map(|s| (s.st_dev, s.st_ino));
    if held.is_none() || held != now {
        return Err(Failure::Run(anyhow!(
            "{}: its directory is no longer the one judged before the run; not written",
            out.shown()
        )));
    }
    Ok(real.clone())
}

/// Before any I/O: refused (exit 2) when the run could not be recorded.
pub fn check(out: &OutPath) -> Result<(), Failure> {
    let at = place(out)?;
    Db::check(&at, &out.shown()).map_err(|e| match e {
        DbError::Refused(m) | DbError::Failed(m) => Failure::Usage(anyhow!(m)),
    })
}

/// Records `report`; `saved` names the files the run's report is in
/// (`--json` first, then `--html`), for the message when this fails
/// (exit 1): every failure says how to record the run later.
pub fn record(out: &OutPath, report: &RunReport, saved: &[String]) -> Result<(), Failure> {
    let given = out.given.display().to_string();
    let at = place(out).map_err(|f| match f {
        Failure::Usage(e) | Failure::Run(e) | Failure::Interrupted(e) => {
            not_recorded(e.to_string(), &given, saved)
        }
    })?;
    record_at(&at, (&out.shown(), &given), report, saved)
}

/// The failure of a recording: the reason, and how to record the run
/// later (`given` is the database as `--db` named it, password hidden).
fn not_recorded(m: String, given: &str, saved: &[String]) -> Failure {
    let kept = match saved.first() {
        None => "no report file was asked for: give --json next time, to record a run later with iosurvey db import".to_string(),
        Some(file) => format!(
            "its report is in {}: record it later with iosurvey db import --db {given} {file}{}",
            saved.join(", "),
            if given.contains(":***@") {
                " (the password in PGPASSWORD)"
            } else {
                ""
            }
        ),
    };
    Failure::Run(anyhow!("{m}; the run was not recorded ({kept})"))
}

/// How a PostgreSQL URL is shown: `--db` and the URL, its password hidden.
pub fn shown_url(url: &Path) -> String {
    format!("--db {}", iosurvey_db::redact(&url.to_string_lossy()))
}

/// [`check`] of a PostgreSQL database.
pub fn check_url(url: &Path) -> Result<(), Failure> {
    Db::check(url, &shown_url(url)).map_err(|e| match e {
        DbError::Refused(m) | DbError::Failed(m) => Failure::Usage(anyhow!(m)),
    })
}

/// [`record`] into a PostgreSQL database.
pub fn record_url(url: &Path, report: &RunReport, saved: &[String]) -> Result<(), Failure> {
    let given = iosurvey_db::redact(&url.to_string_lossy());
    record_at(url, (&shown_url(url), &given), report, saved)
}

/// Records `report` into the database at `at` (a file judged, or a URL),
/// shown as `shown` and named by `--db` as `given`.
fn record_at(
    at: &Path,
    (shown, given): (&str, &str),
    report: &RunReport,
    saved: &[String],
) -> Result<(), Failure> {
    let record = from_report(report, Some(iosurvey_report::to_json(report)));
    let done = Db::open(at, shown).and_then(|mut db| db.insert(&record));
    match done {
        Ok(Inserted::New(_)) => Ok(()),
        Ok(Inserted::AlreadyThere(id)) => Err(Failure::Run(anyhow!(
            "{shown}: run {id} there has this run's key already; not recorded twice"
        ))),
        Err(DbError::Refused(m) | DbError::Failed(m)) => Err(not_recorded(m, given, saved)),
    }
}

/// Opens the judged database to write (`db import`), making it when
/// missing: refused (exit 2) when it is not one this build can write.
pub fn open(out: &OutPath) -> Result<Db, Failure> {
    let at = place(out)?;
    open_at(&at, &out.shown())
}

/// [`open`] of a PostgreSQL database.
pub fn open_url(url: &Path) -> Result<Db, Failure> {
    open_at(url, &shown_url(url))
}

fn open_at(at: &Path, shown: &str) -> Result<Db, Failure> {
    Db::check(at, shown).map_err(|e| Failure::Usage(anyhow!(e)))?;
    Db::open(at, shown).map_err(|e| match e {
        DbError::Refused(m) => Failure::Usage(anyhow!(m)),
        DbError::Failed(m) => Failure::Run(anyhow!(m)),
    })
}
