//! The databases the tests run against: a SQLite file always, and a
//! PostgreSQL schema of its own for each test when `IOSURVEY_TEST_POSTGRES`
//! names a database (e.g. `postgres://iosurvey:iosurvey@127.0.0.1/iosurvey_test`);
//! without it the PostgreSQL half says why it is skipped and passes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable that names the test server.
pub const VAR: &str = "IOSURVEY_TEST_POSTGRES";

/// One database to run a test against, removed when dropped.
pub enum Backend {
    Lite(tempfile::TempDir),
    Pg { url: String, schema: String },
}

impl Backend {
    /// A new, empty SQLite file (not made yet).
    pub fn lite() -> Backend {
        Backend::Lite(tempfile::tempdir().unwrap())
    }

    /// A new, empty schema on the test server, or None (said on stderr,
    /// with `test`'s name) when no server is given.
    pub fn pg(test: &str) -> Option<Backend> {
        let Ok(url) = std::env::var(VAR) else {
            // Said on stderr; under CI (which sets it) a failure.
            iosurvey_testkit::not_running(&format!("{test}: PostgreSQL half: {VAR} is not set"));
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        // No `_` (a wildcard of LIKE, in Drop) and a letter last, so that
        // no test's name begins another's.
        let schema = format!(
            "t{}n{}x",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let b = Backend::Pg { url, schema };
        b.sql(&format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            b.schema().unwrap()
        ));
        Some(b)
    }

    /// SQLite, and PostgreSQL when there is a server.
    pub fn all(test: &str) -> Vec<Backend> {
        std::iter::once(Backend::lite())
            .chain(Backend::pg(test))
            .collect()
    }

    /// What `--db` would be given: the file, or the URL with its schema.
    pub fn at(&self) -> PathBuf {
        match self {
            Backend::Lite(d) => d.path().join("h.db"),
            Backend::Pg { .. } => self.named(""),
        }
    }

    /// Another database of the same kind beside this one: the file
    /// `name`, or the URL's schema with `name`'s letters after it.
    pub fn named(&self, name: &str) -> PathBuf {
        match self {
            Backend::Lite(d) => d.path().join(name),
            Backend::Pg { url, schema } => {
                let suffix: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
                let sep = if url.contains('?') { '&' } else { '?' };
                PathBuf::from(format!("{url}{sep}schema={schema}{suffix}"))
            }
        }
    }

    /// The schema the tests' tables are in (PostgreSQL).
    pub fn schema(&self) -> Option<&str> {
        match self {
            Backend::Lite(_) => None,
            Backend::Pg { schema, .. } => Some(schema),
        }
    }

    /// Runs `sql` on the test server (PostgreSQL), as the test's user.
    pub fn sql(&self, sql: &str) {
        if let Backend::Pg { url, .. } = self {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            c.batch_execute(sql).unwrap();
        }
    }

    /// The name of the backend, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Lite(_) => "SQLite",
            Backend::Pg { .. } => "PostgreSQL",
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Backend::Pg { url, schema } = self {
            // Every schema the test made: this one and those `named` made.
            if let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls) {
                let names: Vec<String> = c
                    .query(
                        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE $1 || '%'",
                        &[&schema.as_str()],
                    )
                    .map(|rows| rows.iter().map(|r| r.get(0)).collect())
                    .unwrap_or_default();
                for n in names {
                    let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {n} CASCADE"));
                }
            }
        }
    }
}
