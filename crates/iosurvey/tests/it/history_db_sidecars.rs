//! `--db` against what lies beside the database and how it is named: a
//! file of the user's named like SQLite's refused by every command and
//! kept, and a symlinked `--db` refused alike by a run and a read.

use crate::common::*;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `iosurvey run` of 300 ms of 4 KiB random reads on `t`, recorded in `db`.
fn run_args<'a>(t: &'a Path, db: &'a Path, time: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        s(t),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        time,
        "--quiet",
        "--db",
        s(db),
    ]
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Refused in one line (exit 2), said with `why`; the line.
fn refused(out: &std::process::Output, why: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(why), "{err}");
    err
}

fn beside(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

/// The runs `db export` finds in `db`.
fn runs_in(db: &Path) -> usize {
    let out = iosurvey(&["db", "export", "--db", s(db)]);
    ok(&out);
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn a_users_file_named_like_sqlites_is_refused_by_every_command_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let (t, db, json) = (d("t.dat"), d("h.db"), d("r.json"));
    ok(&iosurvey(
        &[run_args(&t, &db, "300ms"), vec!["--json", s(&json)]].concat(),
    ));
    let before = std::fs::read(&db).unwrap();
    for (suffix, text) in [
        ("-wal", "my log of the week\n"),
        ("-shm", "shared notes\n"),
        ("-journal", "journal of my trip\n"),
    ] {
        let side = beside(&db, suffix);
        std::fs::write(&side, text).unwrap();
        let why = format!("{} is not a file SQLite made", side.display());
        for a in [
            run_args(&t, &db, "300ms"),
            vec!["db", "history", "--db", s(&db)],
            vec!["db", "import", "--db", s(&db), s(&json)],
            vec!["db", "export", "--db", s(&db)],
        ] {
            refused(&iosurvey(&a), &why);
            assert_eq!(std::fs::read_to_string(&side).unwrap(), text, "{a:?}");
            assert!(std::fs::read(&db).unwrap() == before, "{a:?}");
            assert!(!t.exists(), "{a:?}: the run went on");
        }
        std::fs::remove_file(&side).unwrap();
    }
    assert_eq!(runs_in(&db), 1);
}

#[test]
fn a_symlinked_db_is_refused_alike_by_a_run_and_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let (t, db, link) = (d("t.dat"), d("real.db"), d("link.db"));
    ok(&iosurvey(&run_args(&t, &db, "300ms")));
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let before = std::fs::read(&db).unwrap();
    let by_run = refused(&iosurvey(&run_args(&t, &link, "300ms")), "is a symlink");
    assert!(!t.exists(), "the run went on");
    let by_read = refused(
        &iosurvey(&["db", "history", "--db", s(&link)]),
        "is a symlink",
    );
    assert_eq!(by_run, by_read);
    let by_import = refused(
        &iosurvey(&["db", "import", "--db", s(&link), s(&t)]),
        "is a symlink",
    );
    assert_eq!(by_run, by_import);
    assert!(std::fs::read(&db).unwrap() == before);
}
