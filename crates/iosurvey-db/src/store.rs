//! The SQLite file: checked before a run, opened and migrated, and a run
//! written in one transaction. WAL mode, so readers never wait for a
//! writer; writers wait for each other (`busy_timeout`), so runs of
//! several processes appending at once all land.

use crate::conn::Conn;
use crate::file_lock::{FileLock, Locking};
use crate::schema::{current, APPLICATION_ID, MIGRATIONS};
use crate::value::SqlError;
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// What went wrong with the database: refused before anything was done
/// (exit 2), or failed while writing (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Bad input: not a database, someone else's, newer, read-only,
    /// locked, missing. Said before any I/O.
    #[error("{0}")]
    Refused(String),
    /// A failure while recording or reading.
    #[error("{0}")]
    Failed(String),
}

/// How long a check before a run waits for another writer: longer than
/// another run takes to record a large survey, so that runs ending
/// together are not refused, short enough that a lock held by someone
/// else is said before long.
const CHECK_WAIT: Duration = Duration::from_secs(10);
/// How long a recording waits for other writers (other runs recording).
const WRITE_WAIT: Duration = Duration::from_secs(60);

/// An open database.
pub struct Db {
    /// Declared before the lock: dropped (closed) before it.
    pub(crate) conn: Conn,
    pub(crate) shown: String,
    /// A file's lock against other iosurvey processes making or writing
    /// it at the same time ([`crate::file_lock`]).
    pub(crate) _lock: Option<FileLock>,
}

impl Drop for Db {
    /// A reader takes its file's lock back before its connection closes
    /// (see [`FileLock::take_back`]); the fields then drop in order, the
    /// connection before the lock.
    fn drop(&mut self) {
        if let Some(l) = &self._lock {
            l.take_back(WRITE_WAIT);
        }
    }
}

/// What [`Db::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// A new run, with its id.
    New(i64),
    /// The run was there already (the same run key), with that id.
    AlreadyThere(i64),
}

impl Inserted {
    pub fn id(self) -> i64 {
        match self {
            Inserted::New(id) | Inserted::AlreadyThere(id) => id,
        }
    }
}

/// Refuses a database whose files SQLite would write through something
/// else than a regular file of its own, or did not make: iosurvey-target's
/// judgement, the same for a run's `--db` and a `db` command's.
fn check_files(path: &Path, shown: &str) -> Result<(), DbError> {
    iosurvey_target::output::database::check_database_files(path, shown)
        .map_err(|e| DbError::Refused(e.to_string()))
}

/// Judges the database's files ([`check_files`]) and locks it as `how`
/// says. A file beside it may look not SQLite's only because another
/// iosurvey holding the lock is writing it at this moment (runs ending
/// together: one records, the others judge its wal-index cut to 3 bytes,
/// or its header half written); such a refusal is judged again once the
/// lock is taken, when no other iosurvey writes there, and stands only
/// then. A database that is not there has no writer: its refusal stands.
fn judged_and_locked(
    path: &Path,
    how: Locking,
    wait: Duration,
    shown: &str,
) -> Result<Option<FileLock>, DbError> {
    // What the files are (a symlink, a hard link) does not pass.
    iosurvey_target::output::database::check_database_kinds(path, shown)
        .map_err(|e| DbError::Refused(e.to_string()))?;
    let first = check_files(path, shown);
    let again = first.is_err();
    if again && !path.exists() {
        first?;
    }
    let lock = FileLock::take(path, how, wait, shown).map_err(DbError::Refused)?;
    if again {
        check_files(path, shown)?;
    }
    Ok(lock)
}

/// Judges the files beside the database immediately before the first
/// statement of `conn` (which opens its log and wal-index), runs it
/// ([`inspect`]), then verifies what SQLite opened ([`crate::held`]).
fn first_read(conn: &Connection, path: &Path, shown: &str) -> Result<u32, DbError> {
    // What they are, not what is in them: a file SQLite holds in this
    // process must not be opened here (closing it would drop SQLite's
    // locks on it).
    iosurvey_target::output::database::check_database_kinds(path, shown)
        .map_err(|e| DbError::Refused(e.to_string()))?;
    let version = inspect(conn, shown)?;
    crate::held::verify_held(path, shown).map_err(DbError::Refused)?;
    Ok(version)
}

/// `PRAGMA quick_check`'s verdict in one line: the first problem and how
/// many others (SQLite says them on several lines, under a heading).
fn quick_check(conn: &Connection, shown: &str) -> Result<(), DbError> {
    let rows: Vec<String> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut q| q.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| classify(shown, "checking", e))?;
    let problems: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("*** in database"))
        .collect();
    let Some(first) = problems.first().filter(|p| **p != "ok") else {
        return Ok(());
    };
    // SQLite stops at 100 problems.
    let n = problems.len() - 1;
    let more = match n {
        0 => String::new(),
        _ => format!(
            ", and {n}{} other problem{}",
            if n >= 99 { " or more" } else { "" },
            if n == 1 { "" } else { "s" }
        ),
    };
    Err(DbError::Refused(format!(
        "{shown}: the database is corrupt ({first}{more}); recover it with sqlite3's .recover, or give a new file"
    )))
}

/// The error of `e` on `shown`: bad input refused, or a failure.
pub(crate) fn classify(shown: &str, doing: &str, e: rusqlite::Error) -> DbError {
    let code = e.sqlite_error_code();
    let text = match code {
        Some(ErrorCode::NotADatabase) => {
            return DbError::Refused(format!(
                "{shown}: is not a SQLite database (or its header is corrupt); give a new file or an iosurvey database"
            ))
        }
        Some(ErrorCode::DatabaseCorrupt) => {
            return DbError::Refused(format!(
                "{shown}: the database is corrupt ({e}); recover it with sqlite3's .recover, or give a new file"
            ))
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            return DbError::Refused(format!(
                "{shown}: is locked by another process (a transaction held open); try again when it is done"
            ))
        }
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            return DbError::Refused(format!("{shown}: cannot be written: {e}"))
        }
        _ => e.to_string(),
    };
    DbError::Failed(format!("{shown}: {doing}: {text}"))
}

/// What an existing file is, read through a read-only connection, before
/// any connection that could write to it is opened (opening one would roll
/// back another program's unfinished transaction, or switch its file to
/// WAL): the version of its iosurvey tables; another program's database, a
/// newer iosurvey's, or no database at all is refused. Nothing to say of a
/// missing file.
fn peek(path: &Path, shown: &str) -> Result<(), DbError> {
    if !path.exists() {
        return Ok(());
    }
    // `immutable`: no lock taken, no write-ahead log or shared memory file
    // made beside it (a refused file is left exactly as it was).
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NOFOLLOW
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let uri = format!("file:{}?immutable=1", uri_path(path));
    let conn =
        Connection::open_with_flags(&uri, flags).map_err(|e| classify(shown, "opening", e))?;
    inspect(&conn, shown).map(drop)
}

/// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped, made
/// absolute.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() && !b.is_ascii_control() => out.push(char::from(*b)),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Db {
    /// Checks `path` before a run that will record into it, changing
    /// nothing: a missing file is fine (it is made when the run is
    /// recorded); an existing one must be an iosurvey database (or an
    /// empty file) this build can write, not locked, and writable.
    pub(crate) fn check_file(path: &Path, shown: &str) -> Result<(), DbError> {
        // Held until the connection below is closed (declared before it);
        // none when the file is not there.
        let _lock = judged_and_locked(path, Locking::Write, CHECK_WAIT, shown)?;
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(DbError::Refused(format!("{shown}: {e}"))),
        };
        peek(path, shown)?;
        if meta.permissions().mode() & 0o222 == 0 {
            return Err(DbError::Refused(format!(
                "{shown}: is read-only (no write permission); make it writable or give another file"
            )));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| classify(shown, "opening", e))?;
        conn.busy_timeout(CHECK_WAIT)
            .map_err(|e| classify(shown, "opening", e))?;
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return Err(DbError::Refused(format!(
                "{shown}: can only be read (a read-only file or filesystem); give a file iosurvey can write"
            )));
        }
        first_read(&conn, path, shown)?;
        // A database damaged inside (not only its header) would fail the
        // recording after the run: found now. Linear in the file's size
        // (a fraction of a second for tens of MB).
        quick_check(&conn, shown)?;
        // Whether a write could start now: a lock held by another
        // process, or a read-only filesystem, is found here.
        conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
            .map_err(|e| classify(shown, "checking", e))?;
        Ok(())
    }

    /// Opens `path` to write, making it when missing, and migrates it to
    /// this build's tables.
    pub(crate) fn open_file(path: &Path, shown: &str) -> Result<Db, DbError> {
        let lock = judged_and_locked(path, Locking::Make, WRITE_WAIT, shown)?;
        peek(path, shown)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| classify(shown, "opening", e))?;
        conn.busy_timeout(WRITE_WAIT)
            .map_err(|e| classify(shown, "opening", e))?;
        let db = Db {
            conn: Conn::Lite(conn),
            shown: shown.to_string(),
            _lock: lock,
        };
        if let Conn::Lite(c) = &db.conn {
            first_read(c, path, shown)?;
        }
        db.migrate(path)?;
        Ok(db)
    }

    /// Opens an existing database to read (`db history`, `db export`,
    /// ...). A missing file, or one that is not an iosurvey database, is
    /// refused.
    pub(crate) fn open_read_file(path: &Path, shown: &str) -> Result<Db, DbError> {
        if !path.exists() {
            return Err(DbError::Refused(format!(
                "{shown}: no such file; record runs into it with --db first"
            )));
        }
        let lock = judged_and_locked(path, Locking::Read, WRITE_WAIT, shown)?;
        peek(path, shown)?;
        // Read-write when the file and its directory allow it (nothing is
        // written through it), so that SQLite removes its write-ahead log
        // and shared memory files on close; else (a read-only mount, a
        // file of another user's) immutably, which needs neither.
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let writable = |p: &Path| rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_ok();
        let conn = if writable(path) && writable(dir) {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(path, flags)
        } else {
            // Immutable: the runs still in a log would be left unsaid.
            crate::held::unmerged_log(path, shown).map_err(DbError::Refused)?;
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(format!("file:{}?immutable=1", uri_path(path)), flags)
        }
        .map_err(|e| classify(shown, "opening", e))?;
        conn.busy_timeout(WRITE_WAIT)
            .map_err(|e| classify(shown, "opening", e))?;
        if first_read(&conn, path, shown)? == 0 {
            return Err(DbError::Refused(format!(
                "{shown}: holds no iosurvey runs yet (an empty file); record runs into it with --db first"
            )));
        }
        if let Some(l) = &lock {
            l.let_go();
        }
        Ok(Db {
            conn: Conn::Lite(conn),
            shown: shown.to_string(),
            _lock: lock,
        })
    }

    /// Applies the migrations the file has not had, in one transaction.
    fn migrate(&self, path: &Path) -> Result<(), DbError> {
        let Conn::Lite(c) = &self.conn else {
            return Err(DbError::Failed(format!(
                "{}: not a SQLite file",
                self.shown
            )));
        };
        // Someone else's file is refused before anything is changed in it
        // (WAL mode is written into the file's header).
        inspect(c, &self.shown)?;
        // WAL is the file's own setting, kept once set; it cannot change
        // inside a transaction.
        c.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| self.err("setting WAL mode", e))?;
        // Opens the log (in WAL mode now): verified before it is written.
        first_read(c, path, &self.shown)?;
        c.pragma_update(None, "foreign_keys", true)
            .map_err(|e| self.err("opening", e))?;
        c.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err("migrating", e))?;
        let done = (|| {
            let have = inspect(c, &self.shown)?;
            if have == 0 {
                c.execute_batch(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (
                         version    INTEGER PRIMARY KEY,
                         applied_at TEXT NOT NULL
                     );",
                )
                .map_err(|e| self.err("migrating", e))?;
                c.pragma_update(None, "application_id", APPLICATION_ID)
                    .map_err(|e| self.err("migrating", e))?;
            }
            for v in have + 1..=current() {
                c.execute_batch(MIGRATIONS[v as usize - 1])
                    .map_err(|e| self.err("migrating", e))?;
                c.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    params![v, now()],
                )
                .map_err(|e| self.err("migrating", e))?;
            }
            Ok(())
        })();
        finish(&self.conn, done, |e| self.err("migrating", e))
    }

    /// The version of the tables (the newest migration applied).
    pub(crate) fn file_version(c: &Connection, shown: &str) -> Result<u32, DbError> {
        inspect(c, shown)
    }
}

/// Commits when `done` is Ok, else rolls back and returns its error.
pub(crate) fn finish<T>(
    c: &Conn,
    done: Result<T, DbError>,
    err: impl Fn(SqlError) -> DbError,
) -> Result<T, DbError> {
    match done {
        Ok(v) => {
            c.batch("COMMIT").map_err(err)?;
            Ok(v)
        }
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The time now, RFC 3339 UTC.
pub(crate) fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// What the file is: the version of its iosurvey tables (0: empty, none
/// yet). Someone else's database, or a newer iosurvey's, is refused.
fn inspect(c: &Connection, shown: &str) -> Result<u32, DbError> {
    // One statement, one snapshot: another process may be making the
    // tables meanwhile (its id and its tables come in one transaction).
    let (id, used): (i32, bool) = c
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id()),
                    (SELECT count(*) FROM sqlite_master)
                      + (SELECT user_version FROM pragma_user_version()) != 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| classify(shown, "reading", e))?;
    if id != APPLICATION_ID {
        if used || id != 0 {
            return Err(DbError::Refused(format!(
                "{shown}: is another program's SQLite database (application id {id:#x}, with tables, views or a user version of its own), not iosurvey's; give a new file"
            )));
        }
        return Ok(0);
    }
    let have: Option<u32> = c
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(|e| classify(shown, "reading", e))?
        .flatten();
    let have = have.unwrap_or(0);
    if have > current() {
        return Err(DbError::Refused(format!(
            "{shown}: was made by a newer iosurvey (tables of version {have}; this build knows {}); use that iosurvey",
            current()
        )));
    }
    Ok(have)
}
