//! `--db` against what lies beside the database and how it is named: a
//! file of the user's named like SQLite's refused by every command and
//! kept, a log left by a writer read back (and refused where it cannot be
//! merged), a symlinked `--db` refused alike by a run and a read, a
//! recording that fails saying how to record the run later, and a path
//! that is not UTF-8.

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

/// Holds `db` open from another process (python3's sqlite3), as a second
/// reader would, so that the log is neither merged nor removed when a run
/// recording into it closes; killed on drop.
struct Holder(std::process::Child);

impl Holder {
    fn new(db: &Path) -> Holder {
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import sqlite3,sys,time\n\
                 c=sqlite3.connect(sys.argv[1])\n\
                 c.execute('select count(*) from runs').fetchall()\n\
                 print('open',flush=True)\n\
                 time.sleep(60)",
                s(db),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "open");
        Holder(child)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Copies `db` and the files beside it into `to`, as they are now.
fn copy_db(db: &Path, to: &Path) -> PathBuf {
    let q = to.join("h.db");
    for suffix in ["", "-wal", "-shm"] {
        std::fs::copy(beside(db, suffix), beside(&q, suffix)).unwrap();
    }
    q
}

#[test]
fn a_log_left_by_a_writer_is_read_back_and_refused_where_it_cannot_be_merged() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (t, db) = (dir.path().join("t.dat"), dir.path().join("h.db"));
    ok(&iosurvey(&run_args(&t, &db, "300ms")));
    let holder = Holder::new(&db);
    ok(&iosurvey(&run_args(&t, &db, "300ms")));
    // The second run is in the log only: a copy now is what a crash
    // leaves.
    assert!(std::fs::metadata(beside(&db, "-wal")).unwrap().len() > 32);
    let copy = tempfile::tempdir().unwrap();
    let q = copy_db(&db, copy.path());
    assert_eq!(runs_in(&q), 2, "a real log is read back");
    // Where SQLite cannot write beside the database, the log cannot be
    // merged: refused, rather than answers without its runs.
    let m = require!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64m"]));
    let r = copy_db(&db, m.path());
    drop(holder);
    must("mount", &["-o", "remount,ro", s(m.path())]);
    let out = iosurvey(&["db", "history", "--db", s(&r)]);
    let err = refused(&out, "write-ahead log");
    assert!(err.contains("copy the database with its -wal"), "{err}");
    // Merged (by a writable copy's read), it is read where it is.
    must("mount", &["-o", "remount,rw", s(m.path())]);
    assert_eq!(runs_in(&r), 2);
    assert!(
        !beside(&r, "-wal").exists(),
        "the log was merged and removed"
    );
    must("mount", &["-o", "remount,ro", s(m.path())]);
    assert_eq!(runs_in(&r), 2);
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

#[test]
fn a_recording_that_fails_says_how_to_record_the_run_later() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let (t, db, json) = (d("t.dat"), d("h.db"), d("r.json"));
    let mut child =
        iosurvey_cmd(&[run_args(&t, &db, "2s"), vec!["--json", s(&json)]].concat()).spawn();
    let t0 = std::time::Instant::now();
    while !t.exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(t.exists(), "the run never started");
    // During the run, a file of the user's where SQLite keeps its log.
    let wal = beside(&db, "-wal");
    std::fs::write(&wal, "my log of the week\n").unwrap();
    let out = child.0.take().unwrap().wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is not a file SQLite made"), "{err}");
    let hint = format!("iosurvey db import --db {} {}", s(&db), s(&json));
    assert!(err.trim_end().ends_with(&format!("{hint})")), "{err}");
    assert_eq!(
        std::fs::read_to_string(&wal).unwrap(),
        "my log of the week\n"
    );
    // The hint works.
    std::fs::remove_file(&wal).unwrap();
    ok(&iosurvey(&["db", "import", "--db", s(&db), s(&json)]));
    assert_eq!(runs_in(&db), 1);
}

#[test]
fn a_path_that_is_not_utf8_is_refused_in_one_line_not_a_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let mut name = dir.path().as_os_str().as_bytes().to_vec();
    name.extend_from_slice(b"/\xff.db");
    let db = OsStr::from_bytes(&name);
    for a in [
        vec![
            OsStr::new("db"),
            OsStr::new("history"),
            OsStr::new("--db"),
            db,
        ],
        vec![OsStr::new("quick"), OsStr::new("--db"), db],
    ] {
        let out = std::process::Command::new(BIN).args(&a).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("is not valid UTF-8"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
