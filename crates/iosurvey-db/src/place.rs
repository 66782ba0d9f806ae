//! Where the database is, as `--db` gives it: a SQLite file, or a
//! PostgreSQL URL (`postgres://` or `postgresql://`); every caller opens
//! it through these, whichever it is.

use crate::conn::Conn;
use crate::store::{classify, Db, DbError};
use crate::value::{pg_text, SqlError};
use std::path::Path;

impl Db {
    /// Checks the database before a run that will record into it,
    /// changing nothing: a missing file, or a PostgreSQL schema not made
    /// yet, is fine (made when the run is recorded); an existing one must
    /// be iosurvey's, of a version this build can write, and writable.
    pub fn check(given: &Path, shown: &str) -> Result<(), DbError> {
        match crate::url::postgres(given, shown)? {
            Some(at) => crate::pg::check(&at, shown),
            None => Db::check_file(given, shown),
        }
    }

    /// Opens the database to write, making it when missing, and migrates
    /// it to this build's tables.
    pub fn open(given: &Path, shown: &str) -> Result<Db, DbError> {
        match crate::url::postgres(given, shown)? {
            Some(at) => crate::pg::open(&at, shown),
            None => Db::open_file(given, shown),
        }
    }

    /// Opens an existing database to read (`db history`, `db export`,
    /// ...). A missing one, or one that is not iosurvey's, is refused.
    pub fn open_read(given: &Path, shown: &str) -> Result<Db, DbError> {
        match crate::url::postgres(given, shown)? {
            Some(at) => crate::pg::open_read(&at, shown),
            None => Db::open_read_file(given, shown),
        }
    }

    /// The version of the tables (the newest migration applied).
    pub fn version(&self) -> Result<u32, DbError> {
        match &self.conn {
            Conn::Lite(c) => Db::file_version(c, self.shown()),
            Conn::Pg(_) => crate::pg::version(self),
        }
    }

    pub(crate) fn new(conn: Conn, shown: &str) -> Db {
        Db {
            conn,
            shown: shown.to_string(),
            _lock: None,
        }
    }

    /// The error of `e`, met while `doing`: the database's refusal or
    /// failure, with the name it is shown by.
    pub(crate) fn err(&self, doing: &str, e: impl Into<SqlError>) -> DbError {
        match e.into() {
            SqlError::Lite(e) => classify(&self.shown, doing, e),
            SqlError::Pg(e) => DbError::Failed(format!("{}: {doing}: {}", self.shown, pg_text(&e))),
            SqlError::Type(m) => DbError::Failed(format!("{}: {doing}: {m}", self.shown)),
        }
    }

    /// The name the database is shown by in messages (a URL's password
    /// hidden).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether the database is on PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.conn, Conn::Pg(_))
    }
}
