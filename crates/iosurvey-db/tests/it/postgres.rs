//! PostgreSQL's own cases: the schema made with its migrations, a schema
//! holding someone else's tables or a newer iosurvey's refused and left
//! as it was, and a server that cannot be reached or a wrong password
//! refused in one line without the password; and the same runs give
//! the same answers from SQLite and PostgreSQL (the runs read back, the
//! history of each series, the changes `regress` finds, `export`'s lines).

use crate::backend::{Backend, VAR};
use crate::run;
use iosurvey_db::history::{plan_of, regressions, series, Figure};
use iosurvey_db::{Db, DbError, Filter};
use iosurvey_stats::changepoint::Options;
use std::path::Path;

fn refused(e: Result<(), DbError>) -> String {
    match e {
        Err(DbError::Refused(m)) => m,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_new_schema_gets_the_tables_and_a_missing_one_passes_the_check_unmade() {
    let Some(b) = Backend::pg("a_new_schema_gets_the_tables") else {
        return;
    };
    let url = b.at();
    Db::check(&url, "x").unwrap();
    let mut c = postgres::Client::connect(&std::env::var(VAR).unwrap(), postgres::NoTls).unwrap();
    let made = |c: &mut postgres::Client| {
        c.query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
            &[&b.schema().unwrap()],
        )
        .unwrap()
        .get::<_, i64>(0)
    };
    assert_eq!(made(&mut c), 0, "a check makes nothing");
    let db = Db::open(&url, "x").unwrap();
    assert!(db.is_postgres());
    assert_eq!(db.version().unwrap(), iosurvey_db::schema_version());
    drop(db);
    assert_eq!(made(&mut c), 1);
    let versions: Vec<i64> = c
        .query(
            &format!(
                "SELECT version FROM {}.schema_migrations ORDER BY version",
                b.schema().unwrap()
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        versions,
        (1..=i64::from(iosurvey_db::schema_version())).collect::<Vec<_>>()
    );
    // Opened again: nothing migrated twice.
    Db::open(&url, "x").unwrap();
    Db::check(&url, "x").unwrap();
}

#[test]
fn a_schema_with_another_programs_tables_is_refused_and_left_as_it_was() {
    let Some(b) = Backend::pg("a_schema_with_another_programs_tables") else {
        return;
    };
    let s = b.schema().unwrap().to_string();
    b.sql(&format!(
        "CREATE SCHEMA {s}; CREATE TABLE {s}.contacts (name TEXT); INSERT INTO {s}.contacts VALUES ('a');"
    ));
    let url = b.at();
    let m = refused(Db::check(&url, "--db pg"));
    assert!(
        m.contains("not iosurvey's") && m.contains("contacts"),
        "{m}"
    );
    assert!(matches!(Db::open(&url, "x"), Err(DbError::Refused(_))));
    assert!(matches!(Db::open_read(&url, "x"), Err(DbError::Refused(_))));
    // An iosurvey schema with a table of someone else's in it too.
    let t = b.named("mixed");
    drop(Db::open(&t, "x").unwrap());
    b.sql(&format!("CREATE TABLE {s}mixed.notes (n TEXT)"));
    assert!(refused(Db::check(&t, "x")).contains("notes"));
    // Left as it was: the one table, its row, nothing else.
    let mut c = postgres::Client::connect(&std::env::var(VAR).unwrap(), postgres::NoTls).unwrap();
    let tables: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1",
            &[&s],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1);
    let rows: i64 = c
        .query_one(&format!("SELECT count(*) FROM {s}.contacts"), &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
}

#[test]
fn a_table_the_user_may_not_write_is_refused_before_the_run() {
    let Some(b) = Backend::pg("a_table_the_user_may_not_write") else {
        return;
    };
    let url = b.at();
    drop(Db::open(&url, "x").unwrap());
    Db::check(&url, "x").unwrap();
    // The owner's own privilege taken away.
    b.sql(&format!(
        "REVOKE INSERT ON {}.figures FROM CURRENT_USER",
        b.schema().unwrap()
    ));
    let m = refused(Db::check(&url, "x"));
    assert!(
        m.contains("may not write table") && m.contains("figures"),
        "{m}"
    );
}

#[test]
fn a_schema_of_a_newer_iosurvey_is_refused() {
    let Some(b) = Backend::pg("a_schema_of_a_newer_iosurvey_is_refused") else {
        return;
    };
    let url = b.at();
    drop(Db::open(&url, "x").unwrap());
    b.sql(&format!(
        "INSERT INTO {}.schema_migrations (version, applied_at) VALUES (99, 'later')",
        b.schema().unwrap()
    ));
    let m = refused(Db::check(&url, "x"));
    assert!(m.contains("newer iosurvey"), "{m}");
    assert!(matches!(Db::open(&url, "x"), Err(DbError::Refused(_))));
    assert!(matches!(Db::open_read(&url, "x"), Err(DbError::Refused(_))));
}

#[test]
fn a_server_that_is_not_there_is_refused_in_one_line_without_the_password() {
    // Port 1 on the loopback: nothing listens there.
    let url = Path::new("postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=5");
    let shown = format!("--db {}", iosurvey_db::redact(url.to_str().unwrap()));
    let m = refused(Db::check(url, &shown));
    assert!(m.contains("cannot connect") && !m.contains("s3cret"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    assert!(m.contains("u:***@127.0.0.1"), "{m}");
    assert!(matches!(
        Db::open_read(url, &shown),
        Err(DbError::Refused(_))
    ));
}

#[test]
fn a_wrong_password_and_a_missing_database_are_refused() {
    let Ok(url) = std::env::var(VAR) else {
        iosurvey_testkit::not_running(&format!("a_wrong_password: {VAR} is not set"));
        return;
    };
    let cfg: postgres::Config = url.parse().unwrap();
    let host = match &cfg.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        other => panic!("{VAR} must name a TCP host, not {other:?}"),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432);
    let user = cfg.get_user().unwrap();
    let db = cfg.get_dbname().unwrap_or(user);
    let wrong = format!("postgres://{user}:not-the-password@{host}:{port}/{db}");
    let m = refused(Db::check(Path::new(&wrong), "x"));
    assert!(m.contains("password"), "{m}");
    assert!(!m.contains("not-the-password"), "{m}");
    let pw = std::str::from_utf8(cfg.get_password().unwrap_or_default()).unwrap();
    let missing = format!("postgres://{user}:{pw}@{host}:{port}/{db}_not_there_at_all");
    let m = refused(Db::check(Path::new(&missing), "x"));
    assert!(
        m.contains("does not exist") && m.contains("createdb"),
        "{m}"
    );
}

/// Everything the `db` commands answer from `p`, as text.
fn answers(p: &Path) -> String {
    let db = Db::open_read(p, "x").unwrap();
    let mut out = String::new();
    let all = Filter::default();
    for r in db.runs(&all).unwrap() {
        let mut rec = r.record.clone();
        rec.points = db.points(r.id).unwrap();
        rec.document = db.document(r.id).unwrap();
        out.push_str(&format!("{} {rec:?}\n", r.id));
        iosurvey_db::export::lines(r.id, &rec, &mut out).unwrap();
    }
    let mut f = all.clone();
    f.plan_hash = plan_of(&db, &f).unwrap();
    for figure in [Figure::Rate, Figure::P99, Figure::Mean] {
        let (ss, runs) = series(&db, &f, figure, None).unwrap();
        for s in &ss {
            let found = regressions(s, &runs, &Options::default());
            out.push_str(&format!("{s:?}\n{found:?}\n"));
        }
    }
    for label in ["before", "after"] {
        let by = Filter {
            label: Some(label.into()),
            ..Filter::default()
        };
        let ids: Vec<i64> = db.runs(&by).unwrap().iter().map(|r| r.id).collect();
        out.push_str(&format!("{label}: {ids:?}\n"));
    }
    out
}

#[test]
fn the_same_runs_give_the_same_history_regressions_and_export_on_both() {
    let Some(pg) = Backend::pg("the_same_runs_give_the_same_answers") else {
        return;
    };
    let lite = Backend::lite();
    let runs: Vec<_> = (0..30)
        .map(|i| {
            let after = i >= 20;
            // A deterministic wobble with a step down at run 20.
            let iops = if after { 80_000.0 } else { 100_000.0 } + f64::from((i * 37) % 11) * 250.0;
            let label = if after { "after" } else { "before" };
            let at = format!("2026-02-{:02}T00:00:00Z", 1 + i);
            run(
                &format!("s{i}"),
                &at,
                Some(label),
                iops,
                if after { "2.0" } else { "1.0" },
            )
        })
        .collect();
    for at in [lite.at(), pg.at()] {
        let mut db = Db::open(&at, "x").unwrap();
        for r in &runs {
            db.insert(r).unwrap();
        }
        // A second import changes nothing.
        for r in &runs {
            assert!(matches!(
                db.insert(r).unwrap(),
                iosurvey_db::Inserted::AlreadyThere(_)
            ));
        }
    }
    let a = answers(&lite.at());
    let b = answers(&pg.at());
    assert!(a.contains("\"after\"") && a.lines().count() > runs.len());
    assert_eq!(a, b);
}
