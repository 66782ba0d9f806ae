//! `run --qd 1,2,4` and `--bs 4k,16k`: one run of a point per value (the
//! product of both lists, block size first), reported in text, JSON, CSV
//! and HTML, repeated, recorded, interrupted; bad lists refused.

use crate::common::{assert_valid, iosurvey};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// `iosurvey run FILE --size 4m --rw randread --bytes 64k ARGS`: its exit
/// must be 0; stdout and stderr.
fn sweep(file: &Path, args: &[&str]) -> (String, String) {
    let mut a = vec![
        "run",
        s(file),
        "--size",
        "4m",
        "--rw",
        "randread",
        "--bytes",
        "64k",
        "--quiet",
    ];
    a.extend_from_slice(args);
    let out = iosurvey(&a);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    (stdout, stderr)
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each point's (qd, bs) as its stream ran it, and its swept parameters.
fn settings(r: &Value) -> Vec<(u64, u64, Value)> {
    r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let st = &p["streams"][0];
            (u(&st["outstanding"]), u(&st["bs"]), p["params"].clone())
        })
        .collect()
}

#[test]
fn a_qd_sweep_is_one_run_with_a_point_per_depth_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (j, c, h) = (
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
        dir.path().join("r.html"),
    );
    let (text, _) = sweep(
        &dir.path().join("t"),
        &[
            "--bs",
            "4k",
            "--qd",
            "1,2,4",
            "--json",
            s(&j),
            "--csv",
            s(&c),
            "--html",
            s(&h),
        ],
    );
    let r = report(&j);
    assert_valid(&r);
    let got = settings(&r);
    assert_eq!(got.len(), 3, "one point per depth");
    for ((qd, bs, params), want) in got.iter().zip([1, 2, 4]) {
        assert_eq!((*qd, *bs), (want, 4096));
        // Only the swept value is a parameter.
        assert_eq!(params, &serde_json::json!({"mode": "run", "qd": want}));
    }
    for p in r["points"].as_array().unwrap() {
        assert_eq!(u(&p["total"]["read"]["ops"]), 16, "64k of 4k reads");
    }
    // The text is the sweep's table: a header and a row per point.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(
        text.starts_with("run: sweep of queue depths, 3 points"),
        "{text}"
    );
    assert!(text.contains("IOPS") && text.contains("p99"), "{text}");
    assert_eq!(rows.len(), 3, "{text}");
    for (row, qd) in rows.iter().zip(["1", "2", "4"]) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[..3], [qd, "4KiB", "read"], "{row}");
    }
    // CSV: a row per point (one stream, reads only) under the header.
    let csv = std::fs::read_to_string(&c).unwrap();
    let outstanding: Vec<String> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(8).unwrap().to_string())
        .collect();
    assert_eq!(outstanding, ["1", "2", "4"], "{csv}");
    // HTML: IOPS and latency plotted against the depth, and the table.
    let html = std::fs::read_to_string(&h).unwrap();
    assert!(html.contains("run sweep: IOPS against queue depth"));
    assert!(html.contains("run sweep: latency against queue depth (mean and p99)"));
    assert!(html.contains("run sweep: one row per point and direction"));
}

#[test]
fn both_lists_run_their_product_block_size_first() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let (text, _) = sweep(
        &dir.path().join("t"),
        &["--qd", "1,4", "--bs", "4k,16k", "--json", s(&j)],
    );
    let r = report(&j);
    assert_valid(&r);
    let got: Vec<(u64, u64)> = settings(&r).iter().map(|(q, b, _)| (*q, *b)).collect();
    assert_eq!(got, [(1, 4096), (4, 4096), (1, 16384), (4, 16384)]);
    assert_eq!(
        r["points"][3]["params"],
        serde_json::json!({"mode": "run", "qd": 4, "bs": 16384})
    );
    assert!(text.starts_with("run: sweep of each block size at each queue depth, 4 points"));
}

#[test]
fn a_block_size_sweep_plots_against_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let (j, h) = (dir.path().join("r.json"), dir.path().join("r.html"));
    sweep(
        &dir.path().join("t"),
        &["--bs", "4k,8k,16k", "--json", s(&j), "--html", s(&h)],
    );
    let got: Vec<(u64, u64, Value)> = settings(&report(&j));
    let sizes: Vec<u64> = got.iter().map(|(_, b, _)| *b).collect();
    assert_eq!(sizes, [4096, 8192, 16384]);
    assert_eq!(got[2].2, serde_json::json!({"mode": "run", "bs": 16384}));
    let html = std::fs::read_to_string(&h).unwrap();
    assert!(html.contains("run sweep: IOPS against block size"));
    assert!(html.contains("run sweep: throughput against block size"));
}

#[test]
fn one_value_is_todays_plain_run() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let (text, _) = sweep(
        &dir.path().join("t"),
        &["--bs", "4k", "--qd", "2", "--json", s(&j)],
    );
    let r = report(&j);
    assert_eq!(r["points"].as_array().unwrap().len(), 1);
    assert_eq!(r["points"][0]["params"], serde_json::json!({"mode": "run"}));
    assert!(
        text.starts_with("run: randread bs=4KiB qd=2 workers=1 (engine"),
        "{text}"
    );
}

#[test]
fn every_repeat_runs_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let (text, _) = sweep(
        &dir.path().join("t"),
        &[
            "--bs",
            "4k",
            "--qd",
            "1,2",
            "--repeat",
            "2",
            "--json",
            s(&j),
        ],
    );
    let r = report(&j);
    let runs: Vec<(u64, u64)> = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let repeat = p["repeat"].as_u64().unwrap_or(0);
            (repeat, u(&p["streams"][0]["outstanding"]))
        })
        .collect();
    assert_eq!(runs, [(0, 1), (0, 2), (1, 1), (1, 2)]);
    assert_eq!(
        text.matches("run: sweep of queue depths, 2 points").count(),
        2
    );
}

#[test]
fn a_database_records_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    sweep(
        &dir.path().join("t"),
        &["--bs", "4k", "--qd", "1,2,4", "--db", s(&db)],
    );
    let lines = dir.path().join("x.jsonl");
    let out = iosurvey(&["db", "export", "--db", s(&db), "--to", s(&lines)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<Value> = std::fs::read_to_string(&lines)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One document per point (and figure), each with its swept depth,
    // all of one plan.
    let mut depths: Vec<u64> = docs
        .iter()
        .map(|d| u(&d["point"]["params"]["qd"]))
        .collect();
    depths.dedup();
    assert_eq!(depths, [1, 2, 4]);
    let plans: Vec<&Value> = docs.iter().map(|d| &d["run"]["plan_hash"]).collect();
    assert!(plans.iter().all(|p| p.is_string() && *p == plans[0]));
    // `db history` keeps each point's history apart, by its label.
    let out = iosurvey(&["db", "history", "--db", s(&db)]);
    let text = String::from_utf8_lossy(&out.stdout);
    for qd in [1, 2, 4] {
        assert!(
            text.contains(&format!("randread bs=4KiB qd={qd} workers=1 read IOPS")),
            "{text}"
        );
    }
}

#[test]
fn bad_lists_are_refused_in_one_line_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("never");
    let cases: [(&[&str], &str); 9] = [
        (&["--qd", "1,,2"], "--qd 1,,2: an empty item"),
        (&["--qd", "1,2,"], "--qd 1,2,: an empty item"),
        (&["--qd", "1,2,2"], "--qd 1,2,2: 2 is given twice"),
        (&["--qd", "1,0"], "--qd must be greater than zero"),
        (&["--qd", "1,x"], "--qd 1,x: 'x' is not a whole number"),
        (&["--bs", "4k,4096"], "--bs 4k,4096: 4096 is given twice"),
        (&["--bs", "4k,0"], "--bs must be greater than zero"),
        (&["--bs", "4k,4q"], "invalid size '4q'"),
        (
            &["--qd", "1,2", "--rw", "randwrite", "--verify"],
            "--verify proves one point's writes",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["run", s(&f), "--size", "1m"];
        a.extend_from_slice(args);
        let out = iosurvey(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!f.exists(), "{args:?} left the test file");
    }
}

#[test]
fn ctrl_c_keeps_the_points_that_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (f, j) = (dir.path().join("t"), dir.path().join("r.json"));
    let child = std::process::Command::new(crate::common::BIN)
        .args([
            "run",
            s(&f),
            "--size",
            "4m",
            "--rw",
            "randread",
            "--bs",
            "4k",
        ])
        .args(["--qd", "1,2,4", "--time", "1s", "--quiet", "--json", s(&j)])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The report is written as each point ends: stop the run once the
    // first point is in it.
    let start = std::time::Instant::now();
    let finished = |r: &Value| r["points"].as_array().is_some_and(|p| !p.is_empty());
    while !std::fs::read_to_string(&j)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|r| finished(&r))
    {
        assert!(start.elapsed().as_secs() < 60, "no point finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r = report(&j);
    assert_valid(&r);
    let points = r["points"].as_array().unwrap();
    assert!(points.len() < 3 || points[2]["interrupted"] == true);
    assert_eq!(points[0]["interrupted"], false);
    assert_eq!(u(&points[0]["streams"][0]["outstanding"]), 1);
    assert!(u(&points[0]["total"]["read"]["ops"]) > 0);
    assert!(!f.exists(), "test file removed after Ctrl-C");
}
