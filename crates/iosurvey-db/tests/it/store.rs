//! The file: made with its tables, refused when it cannot take a run (and
//! then left as it was), runs written whole and read back, many writers.

use crate::backend::Backend;
use crate::run;
use iosurvey_db::{Db, DbError, Filter, Inserted, APPLICATION_ID};
use rusqlite::Connection;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn refused(e: Result<(), DbError>) -> String {
    match e {
        Err(DbError::Refused(m)) => m,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_new_file_gets_the_tables_in_wal_mode_and_a_missing_one_passes_the_check_unmade() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    Db::check(&p, "--db h.db").unwrap();
    assert!(!p.exists(), "a check makes nothing");
    let db = Db::open(&p, "--db h.db").unwrap();
    assert_eq!(db.version().unwrap(), iosurvey_db::schema_version());
    drop(db);
    let c = Connection::open(&p).unwrap();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let id: i32 = c
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    assert_eq!(id, APPLICATION_ID);
    let versions: Vec<u32> = c
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        versions,
        (1..=iosurvey_db::schema_version()).collect::<Vec<_>>()
    );
    // Opened again: nothing migrated twice.
    drop(c);
    Db::open(&p, "x").unwrap();
    Db::check(&p, "x").unwrap();
}

#[test]
fn another_programs_database_a_text_file_and_a_corrupt_one_are_refused_and_left_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.db");
    {
        let c = Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('a');")
            .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    let m = refused(Db::check(&other, "--db other.db"));
    assert!(m.contains("another program's SQLite database"), "{m}");
    assert!(matches!(Db::open(&other, "x"), Err(DbError::Refused(_))));
    assert!(matches!(
        Db::open_read(&other, "x"),
        Err(DbError::Refused(_))
    ));
    assert!(
        std::fs::read(&other).unwrap() == before,
        "another program's file was changed"
    );

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "my notes, not a database\n".repeat(200)).unwrap();
    let m = refused(Db::check(&text, "--db notes.txt"));
    assert!(m.contains("is not a SQLite database"), "{m}");
    assert!(matches!(Db::open(&text, "x"), Err(DbError::Refused(_))));
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "my notes, not a database\n".repeat(200)
    );

    // An iosurvey database whose header was overwritten.
    let bad = dir.path().join("bad.db");
    Db::open(&bad, "x").unwrap();
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[..16].copy_from_slice(b"garbage garbage!");
    std::fs::write(&bad, &bytes).unwrap();
    let m = refused(Db::check(&bad, "--db bad.db"));
    assert!(m.contains("not a SQLite database"), "{m}");
    assert!(
        std::fs::read(&bad).unwrap() == bytes,
        "the corrupt file was changed"
    );
}

#[test]
fn a_database_of_a_newer_iosurvey_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    drop(Db::open(&p, "x").unwrap());
    Connection::open(&p)
        .unwrap()
        .execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (99, 'later')",
            [],
        )
        .unwrap();
    let m = refused(Db::check(&p, "--db h.db"));
    assert!(m.contains("newer iosurvey"), "{m}");
    assert!(matches!(Db::open_read(&p, "x"), Err(DbError::Refused(_))));
}

#[test]
fn a_read_only_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    drop(Db::open(&p, "x").unwrap());
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let m = refused(Db::check(&p, "--db h.db"));
    assert!(m.contains("read-only"), "{m}");
    // Still read.
    Db::open_read(&p, "x").unwrap();
}

#[test]
fn a_database_locked_by_another_writer_is_refused_after_a_short_wait() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    drop(Db::open(&p, "x").unwrap());
    let holder = Connection::open(&p).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let m = refused(Db::check(&p, "--db h.db"));
    assert!(m.contains("locked by another process"), "{m}");
    holder.execute_batch("COMMIT").unwrap();
    Db::check(&p, "--db h.db").unwrap();
}

#[test]
fn a_write_ahead_log_or_database_that_is_a_symlink_is_refused_and_what_it_names_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious");
    std::fs::write(&precious, b"keep me").unwrap();
    let p = dir.path().join("h.db");
    std::os::unix::fs::symlink(&precious, dir.path().join("h.db-wal")).unwrap();
    let m = refused(Db::check(&p, "--db h.db"));
    assert!(m.contains("h.db-wal is a symlink"), "{m}");
    assert!(matches!(Db::open(&p, "x"), Err(DbError::Refused(_))));
    assert!(!p.exists());
    let q = dir.path().join("q.db");
    std::os::unix::fs::symlink(&precious, &q).unwrap();
    assert!(refused(Db::check(&q, "--db q.db")).contains("is a symlink"));
    assert!(matches!(Db::open(&q, "x"), Err(DbError::Refused(_))));
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
}

#[test]
fn a_run_is_read_back_as_it_was_written_and_written_once() {
    for b in Backend::all("a_run_is_read_back_as_it_was_written_and_written_once") {
        read_back(&b.at());
    }
}

fn read_back(p: &Path) {
    let mut db = Db::open(p, "x").unwrap();
    let r = run("k1", "2026-01-01T00:00:00Z", Some("fw-1"), 1234.5, "1.0");
    let id = match db.insert(&r).unwrap() {
        Inserted::New(id) => id,
        other => panic!("{other:?}"),
    };
    assert_eq!(db.insert(&r).unwrap(), Inserted::AlreadyThere(id));
    let back = db.runs(&Filter::default()).unwrap();
    assert_eq!(back.len(), 1);
    let mut got = back[0].record.clone();
    got.points = db.points(id).unwrap();
    got.document = db.document(id).unwrap();
    assert_eq!(got, r);
    // The filters select by what they name.
    let by = |f: Filter| db.runs(&f).unwrap().len();
    assert_eq!(
        by(Filter {
            firmware: Some("1.0".into()),
            ..Filter::default()
        }),
        1
    );
    assert_eq!(
        by(Filter {
            firmware: Some("2.0".into()),
            ..Filter::default()
        }),
        0
    );
    assert_eq!(
        by(Filter {
            host: Some("h1".into()),
            ..Filter::default()
        }),
        1
    );
    assert_eq!(
        by(Filter {
            kernel: Some("6.1.0".into()),
            ..Filter::default()
        }),
        1
    );
    assert_eq!(
        by(Filter {
            label: Some("fw-2".into()),
            ..Filter::default()
        }),
        0
    );
    assert_eq!(
        by(Filter {
            model: Some("Drive 9000".into()),
            ..Filter::default()
        }),
        1
    );
}

/// Runs written by `writers` threads at once, each with its own
/// connection, `each` runs apiece.
fn write_at_once(p: &Path, writers: usize, each: usize) {
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let p = p.to_path_buf();
            std::thread::spawn(move || {
                let mut db = Db::open(&p, "x").unwrap();
                for k in 0..each {
                    let key = format!("w{w}-{k}");
                    let r = run(&key, "2026-01-01T00:00:00Z", None, 100.0, "1.0");
                    assert!(matches!(db.insert(&r).unwrap(), Inserted::New(_)));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn eight_writers_at_once_into_a_new_database_lose_nothing() {
    for b in Backend::all("eight_writers_at_once_into_a_new_database_lose_nothing") {
        let p = b.at();
        write_at_once(&p, 8, 10);
        let db = Db::open_read(&p, "x").unwrap();
        let runs = db.runs(&Filter::default()).unwrap();
        assert_eq!(runs.len(), 80, "{}", b.name());
        for r in &runs {
            assert_eq!(db.points(r.id).unwrap().len(), 1);
        }
        // Each run once, whichever writer ran first.
        let mut ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), 80);
    }
}

#[test]
fn export_then_import_gives_the_same_figures() {
    // Each backend to itself, and SQLite to PostgreSQL.
    let lite = Backend::lite();
    let pg = Backend::pg("export_then_import_gives_the_same_figures");
    let mut pairs = vec![(lite.named("a.db"), lite.named("b.db"))];
    if let Some(pg) = &pg {
        pairs.push((pg.named("a"), pg.named("b")));
        pairs.push((lite.named("c.db"), pg.named("c")));
    }
    for (a, b) in pairs {
        export_import(&a, &b);
    }
}

fn export_import(a: &Path, b: &Path) {
    let mut a = Db::open(a, "a").unwrap();
    for k in 0..3 {
        let r = run(
            &format!("k{k}"),
            "2026-01-01T00:00:00Z",
            None,
            100.0 + f64::from(k),
            "1.0",
        );
        a.insert(&r).unwrap();
    }
    let mut text = String::new();
    let runs = a.runs(&Filter::default()).unwrap();
    for r in &runs {
        let mut rec = r.record.clone();
        rec.points = a.points(r.id).unwrap();
        iosurvey_db::export::lines(r.id, &rec, &mut text).unwrap();
    }
    assert_eq!(text.lines().count(), 3);
    let back = iosurvey_db::export::read_lines(&text).unwrap();
    let mut b = Db::open(b, "b").unwrap();
    for r in &back {
        b.insert(r).unwrap();
    }
    let again = b.runs(&Filter::default()).unwrap();
    assert_eq!(again.len(), 3);
    for (x, y) in runs.iter().zip(&again) {
        assert_eq!(x.record.head, y.record.head);
        assert_eq!(x.record.targets, y.record.targets);
        assert_eq!(a.points(x.id).unwrap(), b.points(y.id).unwrap());
    }
    assert!(iosurvey_db::export::read_lines("{\"format\": \"other\"}").is_err());
}
