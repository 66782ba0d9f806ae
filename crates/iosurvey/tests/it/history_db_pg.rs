//! `--db postgres://...` end to end: runs recorded into PostgreSQL and
//! the `db` commands answering exactly as they do from a SQLite file with
//! the same runs; a server that cannot be reached, a wrong password or a
//! schema of someone else's refused (exit 2) before any I/O, in one line
//! that never shows the password, which no report keeps either. The
//! server is `IOSURVEY_TEST_POSTGRES` (e.g.
//! `postgres://iosurvey:iosurvey@127.0.0.1/iosurvey_test`); without it
//! the tests that need it skip.

use crate::common::*;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

const VAR: &str = "IOSURVEY_TEST_POSTGRES";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A schema of the test server of its own, dropped with it.
struct Schema {
    server: String,
    name: String,
}

impl Schema {
    fn new() -> Result<Schema, String> {
        let server = std::env::var(VAR).map_err(|_| format!("{VAR} is not set"))?;
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "cli{}n{}x",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let s = Schema { server, name };
        s.sql(&format!("DROP SCHEMA IF EXISTS {} CASCADE", s.name));
        Ok(s)
    }

    /// The `--db` URL of the schema.
    fn url(&self) -> String {
        let sep = if self.server.contains('?') { '&' } else { '?' };
        format!("{}{sep}schema={}", self.server, self.name)
    }

    fn sql(&self, sql: &str) {
        let mut c = postgres::Client::connect(&self.server, postgres::NoTls).unwrap();
        c.batch_execute(sql).unwrap();
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.server, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        }
    }
}

/// `iosurvey run` of 300 ms of 4 KiB random reads on `t`, recorded in `db`.
fn recorded(t: &Path, db: &str, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "run",
        s(t),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "300ms",
        "--quiet",
        "--db",
        db,
    ];
    a.extend_from_slice(extra);
    iosurvey(&a)
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_server_that_cannot_be_reached_or_a_bad_url_is_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    for url in [
        "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=5",
        "postgres://u:s3cret@127.0.0.1/db?sslmode=sometimes",
        "postgresql://u:s3cret@127.0.0.1/db?schema=Not-A-Name",
    ] {
        let out = recorded(&t, url, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("u:***@") && !err.contains("s3cret"), "{err}");
        assert!(!t.exists(), "{url}: the target was made");
        for cmd in ["history", "export"] {
            let out = iosurvey(&["db", cmd, "--db", url]);
            assert_eq!(out.status.code(), Some(2), "db {cmd} {url}");
            assert!(!String::from_utf8_lossy(&out.stderr).contains("s3cret"));
        }
    }
}

#[test]
fn a_wrong_password_and_a_schema_of_someone_elses_are_refused_before_any_io() {
    let schema = need!(Schema::new());
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    let cfg: postgres::Config = schema.server.parse().unwrap();
    let host = match &cfg.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        other => panic!("{VAR} must name a TCP host, not {other:?}"),
    };
    let user = cfg.get_user().unwrap();
    let db = cfg.get_dbname().unwrap_or(user);
    let wrong = format!("postgres://{user}:wrong-pw@{host}/{db}");
    let out = recorded(&t, &wrong, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("password") && !err.contains("wrong-pw"),
        "{err}"
    );
    let n = &schema.name;
    schema.sql(&format!(
        "CREATE SCHEMA {n}; CREATE TABLE {n}.orders (id INT)"
    ));
    let out = recorded(&t, &schema.url(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not iosurvey's") && err.contains("orders"),
        "{err}"
    );
    assert!(!t.exists(), "the target was made");
    let out = iosurvey(&["db", "history", "--db", &schema.url()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn runs_recorded_into_postgres_answer_as_they_do_from_sqlite() {
    let (pg, again) = (need!(Schema::new()), need!(Schema::new()));
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    let (lite, lite2) = (dir.path().join("h.db"), dir.path().join("h2.db"));
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    // One run recorded into each.
    ok(&recorded(
        &t,
        s(&lite),
        &["--label", "fw-1", "--json", s(&a)],
    ));
    ok(&recorded(
        &t,
        &pg.url(),
        &["--label", "fw-2", "--json", s(&b)],
    ));
    let report = std::fs::read_to_string(&b).unwrap();
    assert!(report.contains(":***@"), "the URL is in the report, hidden");
    let cfg: postgres::Config = pg.server.parse().unwrap();
    let pw = String::from_utf8_lossy(cfg.get_password().unwrap_or_default()).into_owned();
    if !pw.is_empty() {
        assert!(!report.contains(&format!(":{pw}@")), "the password is kept");
    }
    let history = |db: &str| {
        ok(&iosurvey(&[
            "db", "history", "--db", db, "--output", "json",
        ]))
    };
    assert!(history(&pg.url()).contains("fw-2"));
    // Both runs, imported in the same order into a new file and schema.
    for db in [s(&lite2).to_string(), again.url()] {
        ok(&iosurvey(&["db", "import", "--db", &db, s(&a), s(&b)]));
    }
    let l2 = s(&lite2).to_string();
    let answers = |db: &str| {
        let regress = iosurvey(&["db", "regress", "--db", db]);
        (
            history(db),
            ok(&iosurvey(&["db", "export", "--db", db])),
            regress.status.code(),
            String::from_utf8_lossy(&regress.stdout).into_owned(),
        )
    };
    let (x, y) = (answers(&l2), answers(&again.url()));
    assert!(x.0.contains("fw-1") && x.0.contains("fw-2"), "{}", x.0);
    assert_eq!(x.1.lines().count(), y.1.lines().count());
    assert_eq!(x, y);
}

#[test]
fn four_runs_ending_together_all_land_in_one_new_schema() {
    let pg = need!(Schema::new());
    let dir = tempfile::tempdir().unwrap();
    let url = pg.url();
    let running: Vec<_> = (0..4)
        .map(|k| {
            let t = dir.path().join(format!("t{k}.dat"));
            let label = format!("L{k}");
            iosurvey_cmd(&[
                "run",
                s(&t),
                "--size",
                "8m",
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--time",
                "500ms",
                "--quiet",
                "--db",
                &url,
                "--label",
                &label,
            ])
            .spawn()
        })
        .collect();
    for mut r in running {
        ok(&r.0.take().unwrap().wait_with_output().unwrap());
    }
    let text = ok(&iosurvey(&["db", "export", "--db", &url]));
    let mut labels: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["run"]["label"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels, ["L0", "L1", "L2", "L3"]);
}
