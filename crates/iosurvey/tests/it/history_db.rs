//! `--db` and `iosurvey db ...` end to end: runs recorded with their
//! device, a bad database refused before any I/O with nothing left behind,
//! a database that fails at the end losing nothing, fio's own JSON
//! imported, export then import, history as a page, compare by label, and
//! `db regress` gating on a step in a history of 40 runs.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `iosurvey run` of 1 s of 4 KiB random reads on `t`, recorded in `db`.
fn recorded(t: &Path, db: &Path, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "run",
        s(t),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--time",
        "300ms",
        "--quiet",
        "--db",
        s(db),
    ];
    a.extend_from_slice(extra);
    iosurvey(&a)
}

fn history_json(db: &Path, extra: &[&str]) -> Value {
    let mut a = vec!["db", "history", "--db", s(db), "--output", "json"];
    a.extend_from_slice(extra);
    let out = iosurvey(&a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn runs_recorded_with_db_form_a_history_that_exports_and_imports_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (t, db) = (dir.path().join("t.dat"), dir.path().join("h.db"));
    for label in ["fw-1", "fw-1", "fw-2"] {
        let json = dir.path().join(format!("{label}.json"));
        let out = recorded(&t, &db, &["--label", label, "--json", s(&json)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_valid(&report);
        assert_eq!(report["label"], label);
        let device = &report["points"][0]["targets"][0]["device"];
        assert!(
            device["filesystem"].is_string(),
            "no filesystem in {device}"
        );
    }
    let h = history_json(&db, &[]);
    let series = h.as_array().unwrap();
    assert_eq!(series.len(), 1, "{h}");
    let runs = series[0]["runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["fw-1", "fw-1", "fw-2"]);
    assert_eq!(series[0]["figure"], "IOPS");
    assert!(runs.iter().all(|r| r["value"].as_f64().unwrap() > 0.0));
    // Selected by label.
    assert_eq!(
        history_json(&db, &["--label", "fw-2"])[0]["runs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Exported, then imported into a new database: the same history.
    let lines = dir.path().join("x.jsonl");
    let out = iosurvey(&["db", "export", "--db", s(&db), "--to", s(&lines)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&lines).unwrap();
    assert_eq!(text.lines().count(), 3, "one line per point and figure");
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["format"], "iosurvey-db-export/1");
    assert!(first["figure"]["iops"].as_f64().unwrap() > 0.0);
    let db2 = dir.path().join("h2.db");
    let out = iosurvey(&["db", "import", "--db", s(&db2), s(&lines)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(history_json(&db2, &[]), h);
    // Importing the same again adds nothing.
    let out = iosurvey(&["db", "import", "--db", s(&db2), s(&lines)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 runs added"));

    // Compared by label: fw-1's two runs against fw-2's one.
    let out = iosurvey(&[
        "db",
        "compare",
        "--db",
        s(&db),
        "--label",
        "fw-1",
        "--label",
        "fw-2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("A: fw-1") && text.contains("2 repeats"),
        "{text}"
    );

    // History as a page.
    let page = dir.path().join("h.html");
    let out = iosurvey(&["db", "history", "--db", s(&db), "--html", s(&page)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg") && html.contains("fw-2"));
}

#[test]
fn a_database_that_cannot_take_the_run_is_refused_before_any_io_with_nothing_left() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a database\n").unwrap();
    let json = dir.path().join("r.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--db", s(&notes)], "not a SQLite database"),
        (vec!["--db", s(dir.path())], "is a directory"),
        (vec!["--db", s(&json), "--json", s(&json)], "the same file"),
        (vec!["--db", s(&t)], "is the target"),
        (vec!["--db", "/dev/null"], "regular file"),
        (vec!["--label", ""], "empty"),
    ];
    for (extra, why) in cases {
        let mut a = vec![
            "run",
            s(&t),
            "--size",
            "8m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--time",
            "1s",
        ];
        a.extend_from_slice(&extra);
        let out = iosurvey(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(why), "{extra:?}: {err}");
        assert!(!t.exists(), "{extra:?}: the target was laid out");
        assert!(!json.exists(), "{extra:?}: a report was written");
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "not a database\n");
    // A database locked by another process's transaction.
    let db = dir.path().join("h.db");
    let out = recorded(&t, &db, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!t.exists(), "the run removes the file it made");
    let holder = rusqlite_lock(&db);
    let out = recorded(&t, &db, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("locked by another process"), "{err}");
    assert!(!t.exists());
    drop(holder);
}

/// Holds a write lock on `db` until dropped, from another process
/// (python3's sqlite3), as another program holding a transaction would.
fn rusqlite_lock(db: &Path) -> KillOnDrop {
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys,time\n\
             c=sqlite3.connect(sys.argv[1],isolation_level=None)\n\
             c.execute('BEGIN EXCLUSIVE')\n\
             print('locked',flush=True)\n\
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
    assert_eq!(line.trim(), "locked");
    KillOnDrop(child)
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_database_that_fails_at_the_end_loses_nothing_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (t, db, json) = (
        dir.path().join("t.dat"),
        dir.path().join("h.db"),
        dir.path().join("r.json"),
    );
    let mut child = iosurvey_cmd(&[
        "run",
        s(&t),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "2s",
        "--quiet",
        "--db",
        s(&db),
        "--json",
        s(&json),
    ])
    .spawn();
    // Once the run is under way (its checks passed: its test file is laid
    // out), something else takes the database's name: a file of someone's,
    // which must stay as it is.
    let t0 = std::time::Instant::now();
    while !t.exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(t.exists(), "the run never started");
    std::fs::write(&db, "someone's notes\n").unwrap();
    let out = child.0.take().unwrap().wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not recorded") && err.contains("r.json"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "someone's notes\n");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        report["points"].as_array().unwrap().len(),
        1,
        "the JSON landed"
    );
    // It can be added later.
    std::fs::remove_file(&db).unwrap();
    let out = iosurvey(&["db", "import", "--db", s(&db), s(&json)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        history_json(&db, &[])[0]["runs"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn fios_own_json_is_imported_under_the_same_figure_names() {
    let Some(fio) = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("fio"))
        .find(|p| p.is_file())
    else {
        skip!("fio is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    std::fs::write(&t, vec![7u8; 8 << 20]).unwrap();
    let mut all = Vec::new();
    for format in ["json", "json+"] {
        let out = std::process::Command::new(&fio)
            .args([
                "--name=rr",
                &format!("--filename={}", s(&t)),
                "--rw=randread",
                "--bs=4k",
                "--size=8m",
                "--io_size=4m",
                "--ioengine=psync",
                &format!("--output-format={format}"),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = dir.path().join(format!("fio-{format}.json"));
        std::fs::write(&path, &out.stdout).unwrap();
        all.push(path);
    }
    let db = dir.path().join("h.db");
    let out = iosurvey(&[
        "db",
        "import",
        "--db",
        s(&db),
        "--host",
        "box1",
        "--label",
        "fio",
        s(&all[0]),
        s(&all[1]),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = history_json(&db, &["--mode", "fio"]);
    let runs = h[0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{h}");
    assert_eq!(h[0]["host"], "box1");
    assert_eq!(h[0]["point"], "rr");
    // The IOPS fio reported, as recorded.
    let fio_json: Value = serde_json::from_slice(&std::fs::read(&all[1]).unwrap()).unwrap();
    let iops = fio_json["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((runs[1]["value"].as_f64().unwrap() - iops).abs() < 1e-6 * iops.max(1.0));
    // Latency too, in microseconds.
    let lat = history_json(&db, &["--mode", "fio", "--figure", "mean"]);
    let mean = fio_json["jobs"][0]["read"]["lat_ns"]["mean"]
        .as_f64()
        .unwrap()
        / 1e3;
    assert!((lat[0]["runs"][1]["value"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
}

/// The lines of `db export` for 40 runs made from one real line: IOPS of
/// 3% noise around 100000, 10% lower from run 25 on with a new firmware
/// (when `step`).
fn forty_runs(template: &Value, step: bool) -> String {
    let mut state: u64 = 42;
    let mut out = String::new();
    for i in 0..40u64 {
        let mut u = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (u(), u());
        let z = (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos();
        let new = step && i >= 25;
        let iops = if new { 90_000.0 } else { 100_000.0 } + 3_000.0 * z;
        let mut l = template.clone();
        l["run"]["run_key"] = json!(format!("synthetic-{i}"));
        l["run"]["started_at"] = json!(format!("2026-02-{:02}T00:00:00Z", 1 + i / 2));
        l["run"]["targets"][0]["firmware"] = json!(if new { "2.0" } else { "1.0" });
        l["figure"]["iops"] = json!(iops);
        l["figure"]["ops"] = json!(iops);
        l["figure"]["bytes"] = json!(iops * 4096.0);
        l["figure"]["bytes_per_sec"] = json!(iops * 4096.0);
        out.push_str(&l.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn db_regress_fails_on_a_step_in_the_newest_runs_and_names_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (t, db) = (dir.path().join("t.dat"), dir.path().join("one.db"));
    let out = recorded(&t, &db, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = iosurvey(&["db", "export", "--db", s(&db)]);
    let template: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    for (step, code) in [(true, 1), (false, 0)] {
        let lines = dir.path().join(format!("step-{step}.jsonl"));
        std::fs::write(&lines, forty_runs(&template, step)).unwrap();
        let db = dir.path().join(format!("step-{step}.db"));
        let out = iosurvey(&["db", "import", "--db", s(&db), s(&lines)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The change is 15 runs back: not among the newest 5, so it is
        // shown but passes; among the newest 20 it fails.
        let out = iosurvey(&["db", "regress", "--db", s(&db)]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        let out = iosurvey(&["db", "regress", "--db", s(&db), "--newest", "20"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{text}{err}");
        if step {
            assert!(text.contains("REGRESSION"), "{text}");
            assert!(text.contains("target 0 firmware: 1.0 -> 2.0"), "{text}");
            assert!(err.contains("1 regression beyond 5%"), "{err}");
        } else {
            assert!(text.contains("no change found"), "{text}");
        }
    }
}

#[test]
fn db_commands_refuse_bad_input_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello\n").unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["db", "history", "--db", s(&missing)],
        vec!["db", "regress", "--db", s(&notes)],
        vec!["db", "import", "--db", s(&missing), s(&notes)],
        vec!["db", "import", "--db", s(&notes), s(&notes)],
        vec!["db", "compare", "--db", s(&missing), "--label", "a"],
        vec!["db", "regress", "--db", s(&missing), "--alpha", "2"],
        // A gate that could never fire.
        vec!["db", "regress", "--db", s(&missing), "--permutations", "19"],
        vec!["db", "regress", "--db", s(&missing), "--newest", "2"],
    ];
    for a in cases {
        let out = iosurvey(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(!missing.exists(), "{a:?} made the database");
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "hello\n");
    }
}

#[test]
fn the_files_sqlite_writes_beside_the_database_are_guarded_as_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let (t, db) = (d("t.dat"), d("h.db"));
    let out = recorded(&t, &db, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let keep = d("keep");
    let mine: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
    std::fs::write(&keep, &mine).unwrap();
    let refused = |a: &[&str], why: &str| {
        let out = iosurvey(a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(why), "{a:?}: {err}");
    };
    // A hard link to someone's file where SQLite keeps its shared memory
    // or log: refused, by a run and by a read alike, the file untouched.
    for side in ["h.db-shm", "h.db-wal", "h.db-journal"] {
        std::fs::hard_link(&keep, d(side)).unwrap();
        let r = [
            "run",
            s(&t),
            "--size",
            "8m",
            "--rw",
            "randread",
            "--time",
            "1s",
            "--db",
            s(&db),
        ];
        refused(&r, "hard link");
        refused(&["db", "history", "--db", s(&db)], "hard link");
        refused(&["db", "import", "--db", s(&db), s(&keep)], "hard link");
        std::fs::remove_file(d(side)).unwrap();
        assert!(
            std::fs::read(&keep).unwrap() == mine,
            "{side}: the linked file changed"
        );
        assert!(!t.exists());
    }
    // The run's own target, or another output, named as one of them (a
    // file that begins as a log does, so that SQLite could have made it).
    let wal = d("h.db-wal");
    let mine = [&[0x37, 0x7f, 0x06, 0x82][..], &mine].concat();
    std::fs::write(&wal, &mine).unwrap();
    let r = [
        "run",
        s(&wal),
        "--rw",
        "randread",
        "--time",
        "1s",
        "--db",
        s(&db),
    ];
    refused(&r, "is the target");
    assert!(
        std::fs::read(d("h.db-wal")).unwrap() == mine,
        "the target changed"
    );
    std::fs::remove_file(d("h.db-wal")).unwrap();
    let r = [
        "run",
        s(&t),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--time",
        "1s",
        "--db",
        s(&db),
        "--json",
        s(&wal),
    ];
    refused(&r, "the same file");
    refused(
        &[
            "db",
            "export",
            "--db",
            s(&db),
            "--to",
            s(&d("h.db-journal")),
        ],
        "is the database",
    );
    refused(&["db", "import", "--db", s(&db), s(&db)], "itself");
    // Stdout appended to the database.
    let f = std::fs::OpenOptions::new().append(true).open(&db).unwrap();
    let out = std::process::Command::new(BIN)
        .args(["db", "history", "--db", s(&db)])
        .stdout(f)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing was left beside it by the refusals.
    for side in ["h.db-shm", "h.db-wal", "h.db-journal"] {
        assert!(!d(side).exists(), "{side} left behind");
    }
    let out = iosurvey(&["db", "history", "--db", s(&db), "--output", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_refused_database_is_left_exactly_as_it_was_with_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let t = d("t.dat");
    // Another program's database in WAL mode, one with a view only, one of
    // a newer iosurvey.
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys\n\
             a=sqlite3.connect(sys.argv[1]); a.execute('pragma journal_mode=wal'); a.execute('create table t(x)'); a.commit(); a.close()\n\
             b=sqlite3.connect(sys.argv[2]); b.execute('create view v as select 1'); b.commit(); b.close()",
            s(&d("app.sqlite")),
            s(&d("view.db")),
        ])
        .status()
        .unwrap();
    assert!(made.success());
    let db = d("new.db");
    let out = recorded(&t, &db, &[]);
    assert!(out.status.success());
    let bump = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1]); c.execute(\"insert into schema_migrations values (99, 'later')\"); c.commit(); c.close()",
            s(&db),
        ])
        .status()
        .unwrap();
    assert!(bump.success());
    for (name, why) in [
        ("app.sqlite", "another program's"),
        ("view.db", "another program's"),
        ("new.db", "newer iosurvey"),
    ] {
        let before = std::fs::read(d(name)).unwrap();
        let out = recorded(&t, &d(name), &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
        let out = iosurvey(&["db", "history", "--db", s(&d(name))]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(std::fs::read(d(name)).unwrap() == before, "{name} changed");
        for side in ["-wal", "-shm", "-journal"] {
            let p = d(&format!("{name}{side}"));
            assert!(!p.exists(), "{} left behind", p.display());
        }
    }
}

#[test]
fn six_runs_ending_together_all_land_in_one_new_database() {
    // Three times: made, switched to WAL and written by six processes at
    // once, a new file lost runs about one time in four (`database is
    // locked`, `malformed`, a bus error when a wal-index was cut under a
    // process), before the file lock (iosurvey-db's file_lock.rs).
    for _ in 0..3 {
        runs_ending_together(6);
    }
}

fn runs_ending_together(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let running: Vec<_> = (0..n)
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
                "300ms",
                "--quiet",
                "--db",
                s(&db),
                "--label",
                &label,
            ])
            .spawn()
        })
        .collect();
    for mut r in running {
        let out = r.0.take().unwrap().wait_with_output().unwrap();
        assert!(out.status.success(), "{}", describe(&out));
    }
    let out = iosurvey(&["db", "export", "--db", s(&db)]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut labels: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["run"]["label"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    labels.sort();
    labels.dedup();
    let want: Vec<String> = (0..n).map(|k| format!("L{k}")).collect();
    assert_eq!(labels, want);
}

#[test]
fn each_label_of_a_point_keeps_its_trims_in_the_database() {
    // A point of two labels (ORION's small and large), each with discards
    // as a trimming job's would be: the database keeps the trims of each
    // label beside its reads (it kept only reads and writes per label).
    let dir = tempfile::tempdir().unwrap();
    for (i, name) in ["a.dat", "b.dat"].iter().enumerate() {
        std::fs::write(dir.path().join(name), random_bytes(16 << 20, i as u64)).unwrap();
    }
    let json = dir.path().join("m.json");
    let out = std::process::Command::new(BIN)
        .args([
            "matrix",
            "a.dat",
            "b.dat",
            "--num-disks",
            "1",
            "--time",
            "200ms",
        ])
        .args(["--run", "advanced", "--matrix", "point"])
        .args([
            "--num-small",
            "1",
            "--num-large",
            "1",
            "-q",
            "--json",
            "m.json",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let mut r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for p in r["points"].as_array_mut().unwrap() {
        for st in p["streams"].as_array_mut().unwrap() {
            st["trim"] = st["read"].clone();
        }
        p["total"]["trim"] = p["total"]["read"].clone();
    }
    std::fs::write(&json, r.to_string()).unwrap();
    let db = dir.path().join("h.db");
    let out = iosurvey(&["db", "import", "--db", s(&db), s(&json)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = iosurvey(&["db", "export", "--db", s(&db)]);
    let rows: Vec<(String, String, f64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f = serde_json::from_str::<Value>(l).unwrap()["figure"].clone();
            Some((
                f["stream"].as_str()?.to_string(),
                f["direction"].as_str()?.to_string(),
                f["ops"].as_f64()?,
            ))
        })
        .collect();
    for label in ["small", "large"] {
        let ops = |dir: &str| {
            rows.iter()
                .find(|(s, d, _)| s == label && d == dir)
                .map(|r| r.2)
                .unwrap_or_else(|| panic!("no {label} {dir} row in {rows:?}"))
        };
        assert!(ops("read") > 0.0);
        assert_eq!(ops("trim"), ops("read"), "{rows:?}");
    }
}
