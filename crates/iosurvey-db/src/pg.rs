//! The history database on PostgreSQL (`--db postgres://...`): the same
//! tables as the SQLite file, in a schema of their own (`iosurvey`, or
//! `?schema=NAME`), checked before a run (reachable, the password right,
//! the schema iosurvey's or empty, not newer, writable) and migrated
//! under an advisory lock, so that several processes starting at once
//! migrate once.

use crate::conn::{Conn, PgConn};
use crate::schema::{current, pg_ddl, table_names, APPLICATION_ID, MIGRATIONS};
use crate::store::{finish, now, Db, DbError};
use crate::url::{PgAt, Tls};
use crate::value::{pg_text, vals};
use postgres::Client;
use std::cell::RefCell;

/// Connects to `at`; any failure is refused with what to do.
fn connect(at: &PgAt, shown: &str) -> Result<Client, DbError> {
    let done = match at.tls {
        Tls::Disable => at.config.connect(postgres::NoTls),
        tls => {
            let connector = crate::url::connector(tls)
                .map_err(|m| DbError::Refused(format!("{shown}: {m}")))?;
            at.config.connect(connector)
        }
    };
    done.map_err(|e| {
        let code = e.code().map(|c| c.code().to_string());
        let todo = match code.as_deref() {
            Some("28P01" | "28000") => "check the user and password (in the URL or PGPASSWORD)",
            Some("3D000") => "create the database (createdb) or name one that is there",
            Some(_) => "see what the server said",
            None => {
                "check that the server runs, listens at that host and port, and takes this sslmode"
            }
        };
        DbError::Refused(format!("{shown}: cannot connect: {}; {todo}", pg_text(&e)))
    })
    .and_then(|mut c| {
        // Another session holding the schema's lock (a stuck import, a
        // psql left in a transaction) is waited for as long as SQLite
        // waits for a writer, then said, not waited for for ever.
        c.batch_execute("SET lock_timeout = '60s'")
            .map_err(|e| DbError::Refused(format!("{shown}: {}", pg_text(&e))))?;
        Ok(c)
    })
}

/// The error of `e`, met while `doing` on `shown`.
fn classify(shown: &str, doing: &str, e: &postgres::Error) -> DbError {
    DbError::Failed(format!("{shown}: {doing}: {}", pg_text(e)))
}

/// What schema `schema` holds: the version of its iosurvey tables (0:
/// missing or empty). A schema with tables that are not iosurvey's, or
/// of a newer iosurvey, is refused.
fn inspect(c: &mut Client, schema: &str, shown: &str) -> Result<u32, DbError> {
    let failed = |e: postgres::Error| classify(shown, "reading the schema", &e);
    let tables: Vec<String> = c
        .query(
            "SELECT c.relname::text FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              ORDER BY 1",
            &[&schema],
        )
        .map_err(failed)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if tables.is_empty() {
        return Ok(0);
    }
    let foreign = |which: &[&String]| {
        let list: Vec<&str> = which.iter().map(|s| s.as_str()).collect();
        DbError::Refused(format!(
            "{shown}: schema {schema} holds tables that are not iosurvey's ({}); give another schema (?schema=NAME) or database",
            list.join(", ")
        ))
    };
    if !tables.iter().any(|t| t == "schema_migrations") {
        return Err(foreign(&tables.iter().collect::<Vec<_>>()));
    }
    let have: Option<i64> = c
        .query_one(
            &format!("SELECT max(version) FROM \"{schema}\".schema_migrations"),
            &[],
        )
        .map_err(failed)?
        .get(0);
    let have = u32::try_from(have.unwrap_or(0)).unwrap_or(u32::MAX);
    if have > current() {
        return Err(DbError::Refused(format!(
            "{shown}: was made by a newer iosurvey (tables of version {have}; this build knows {}); use that iosurvey",
            current()
        )));
    }
    let known = table_names();
    let others: Vec<&String> = tables
        .iter()
        .filter(|t| *t != "schema_migrations" && !known.contains(&t.as_str()))
        .collect();
    if !others.is_empty() {
        return Err(foreign(&others));
    }
    Ok(have)
}

/// Checks `at` before a run that will record into it, changing nothing.
pub(crate) fn check(at: &PgAt, shown: &str) -> Result<(), DbError> {
    let mut c = connect(at, shown)?;
    let refuse = |m: String| DbError::Refused(format!("{shown}: {m}"));
    let failed = |e: postgres::Error| refuse(format!("checking: {}", pg_text(&e)));
    let s = &at.schema;
    let row = c
        .query_one(
            "SELECT pg_is_in_recovery(),
                    EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
                    has_database_privilege(current_database(), 'CREATE')",
            &[s],
        )
        .map_err(failed)?;
    let (standby, exists, create_schema): (bool, bool, bool) = (row.get(0), row.get(1), row.get(2));
    if standby {
        return Err(refuse(
            "the server is a read-only standby; give the primary".into(),
        ));
    }
    let have = inspect(&mut c, s, shown)?;
    if !exists {
        if !create_schema {
            return Err(refuse(format!(
                "may not create schema {s} in this database; GRANT CREATE ON DATABASE to the user, or create the schema for it"
            )));
        }
        return Ok(());
    }
    let row = c
        .query_one(
            "SELECT has_schema_privilege($1, 'USAGE'), has_schema_privilege($1, 'CREATE')",
            &[s],
        )
        .map_err(failed)?;
    let (usage, create): (bool, bool) = (row.get(0), row.get(1));
    if !usage || (have < current() && !create) {
        return Err(refuse(format!(
            "may not create tables in schema {s}; GRANT USAGE, CREATE ON SCHEMA {s} to the user"
        )));
    }
    // Each table there written and read, the run's row updated (a
    // document added by a later import).
    let denied: Vec<String> = c
        .query(
            "SELECT c.relname::text FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relkind = 'r'
                AND NOT (has_table_privilege(c.oid, 'INSERT')
                         AND has_table_privilege(c.oid, 'SELECT')
                         AND has_table_privilege(c.oid, 'UPDATE'))
              ORDER BY 1",
            &[s],
        )
        .map_err(failed)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !denied.is_empty() {
        return Err(refuse(format!(
            "may not write table {s}.{}; GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {s} to the user",
            denied.join(", ")
        )));
    }
    Ok(())
}

/// Connects with the schema's tables first in the search path.
fn connected(at: &PgAt, shown: &str) -> Result<Db, DbError> {
    let mut c = connect(at, shown)?;
    c.batch_execute(&format!("SET search_path TO \"{}\"", at.schema))
        .map_err(|e| classify(shown, "opening", &e))?;
    Ok(Db::new(
        Conn::Pg(Box::new(RefCell::new(PgConn::new(c, at.schema.clone())))),
        shown,
    ))
}

/// Opens `at` to write, making the schema and its tables when missing.
pub(crate) fn open(at: &PgAt, shown: &str) -> Result<Db, DbError> {
    let db = connected(at, shown)?;
    migrate(&db)?;
    Ok(db)
}

/// Opens `at` to read; a schema without iosurvey's tables is refused.
pub(crate) fn open_read(at: &PgAt, shown: &str) -> Result<Db, DbError> {
    let db = connected(at, shown)?;
    if version(&db)? == 0 {
        return Err(DbError::Refused(format!(
            "{shown}: schema {} holds no iosurvey runs yet; record runs into it with --db first",
            at.schema
        )));
    }
    Ok(db)
}

/// The version of the tables.
pub(crate) fn version(db: &Db) -> Result<u32, DbError> {
    let Conn::Pg(p) = &db.conn else {
        return Err(DbError::Failed(format!("{}: not PostgreSQL", db.shown())));
    };
    let mut p = p.borrow_mut();
    let schema = p.schema.clone();
    inspect(&mut p.client, &schema, db.shown())
}

/// Applies the migrations the schema has not had, in one transaction,
/// under the lock writers take.
pub(crate) fn migrate(db: &Db) -> Result<(), DbError> {
    let Conn::Pg(p) = &db.conn else {
        return Err(DbError::Failed(format!("{}: not PostgreSQL", db.shown())));
    };
    let schema = p.borrow().schema.clone();
    db.conn.begin_write().map_err(|e| db.err("migrating", e))?;
    let done = (|| {
        let have = version(db)?;
        if have == 0 {
            let there = db
                .conn
                .query_opt(
                    "SELECT 1 FROM pg_namespace WHERE nspname = ?1",
                    &vals![schema],
                )
                .map_err(|e| db.err("migrating", e))?
                .is_some();
            if !there {
                db.conn
                    .batch(&format!("CREATE SCHEMA \"{schema}\""))
                    .map_err(|e| db.err("migrating", e))?;
            }
            db.conn
                .batch(&format!(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (
                         version    BIGINT PRIMARY KEY,
                         applied_at TEXT NOT NULL
                     );
                     COMMENT ON TABLE schema_migrations IS
                       'iosurvey history database (application id {APPLICATION_ID:#x})';"
                ))
                .map_err(|e| db.err("migrating", e))?;
        }
        for v in have + 1..=current() {
            db.conn
                .batch(&pg_ddl(MIGRATIONS[v as usize - 1]))
                .map_err(|e| db.err("migrating", e))?;
            db.conn
                .execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    &vals![v, now()],
                )
                .map_err(|e| db.err("migrating", e))?;
        }
        Ok(())
    })();
    finish(&db.conn, done, |e| db.err("migrating", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `sslmode=require` is TLS indeed (when the test server offers it).
    #[test]
    fn sslmode_require_encrypts_and_disable_does_not() {
        let Ok(url) = std::env::var("IOSURVEY_TEST_POSTGRES") else {
            eprintln!("skipping: IOSURVEY_TEST_POSTGRES is not set");
            return;
        };
        let sep = if url.contains('?') { '&' } else { '?' };
        let ssl = |mode: &str| -> Option<bool> {
            let given = format!("{url}{sep}sslmode={mode}");
            let at = crate::url::postgres(Path::new(&given), "x").ok()??;
            let mut c = connect(&at, "x").ok()?;
            let row = c
                .query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .ok()?;
            Some(row.get(0))
        };
        assert_eq!(ssl("disable"), Some(false));
        match ssl("require") {
            Some(on) => assert!(on, "sslmode=require connected without TLS"),
            None => eprintln!("skipping: the test server does not take TLS"),
        }
    }
}
