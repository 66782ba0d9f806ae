//! `iosurvey profile` run for real: a few zones of a temp file (chart rows,
//! CSV rows, schema-valid JSON), an existing file that is never written,
//! bad invocations; and, as root, a concat of a fast loop device and one
//! throttled by the blkio cgroup, whose profile shows the step where the
//! slow member starts.

use crate::common::*;
use serde_json::Value;

fn profile(args: &[&str]) -> std::process::Output {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

/// The chart's rows: zone index, position, rate (and the bar).
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .filter(|w| w.len() >= 3 && w[0].parse::<u32>().is_ok() && w[1].parse::<f64>().is_ok())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// The zone points' streams of a JSON report.
fn zone_streams(r: &Value) -> Vec<Value> {
    r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["streams"][0].clone())
        .filter(|s| s["label"] == "zone")
        .collect()
}

#[test]
fn a_temp_file_gives_a_row_per_zone_and_matching_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.dat");
    let (csv, json) = (dir.path().join("p.csv"), dir.path().join("p.json"));
    let out = profile(&[
        path_str(&f),
        "--size",
        "16m",
        "--zones",
        "5",
        "--per-zone",
        "1m",
        "--access-time",
        "--burst",
        "--csv",
        path_str(&csv),
        "--json",
        path_str(&json),
    ]);
    let text = stdout_ok(&out);
    let rows = rows(&text);
    assert_eq!(rows.len(), 5, "{text}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], i.to_string());
        assert!(num(&r[2]) > 0.0 && r[3].starts_with('#'), "{r:?}");
    }
    for needle in [
        "Transfer Rate Minimum :",
        "Transfer Rate Maximum :",
        "Transfer Rate Average :",
        "Access Time           :",
        "Burst Rate            :",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");

    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "zone,offset,span,bytes,elapsed_ns,mb_per_s");
    assert_eq!(lines.len(), 6, "{csv}");
    for l in &lines[1..] {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!(c[3], "1048576", "{l}");
        assert!(num(c[5]) > 0.0, "{l}");
    }

    let r = json_file(&json);
    assert_valid(&r);
    assert_eq!(r["mode"], "profile");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 7, "5 zones, access time, burst");
    assert!(points.iter().all(|p| u(&p["total"]["write"]["ops"]) == 0));
    // The zones tile the 16 MiB: each starts where the last ended.
    let zones = zone_streams(&r);
    let mut end = 0;
    for z in &zones {
        assert_eq!(u(&z["offset"]), end);
        assert_eq!(u(&z["read"]["bytes"]), MIB);
        end += u(&z["span"]);
    }
    assert_eq!(end, 16 * MIB);
    let access = &points[5]["streams"][0];
    assert_eq!(
        (&access["label"], &access["pattern"]),
        (&"access".into(), &"random".into())
    );
    assert!(u(&access["read"]["ops"]) > 0 && u(&access["bs"]) >= 4096);
    let burst = &points[6]["streams"][0];
    assert_eq!(burst["label"], "burst");
    assert_eq!(u(&burst["span"]), MIB);
    assert!(!f.exists(), "the test file is removed");
}

#[test]
fn an_existing_file_is_profiled_by_time_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("precious");
    let data = random_bytes(8 << 20, 5);
    std::fs::write(&f, &data).unwrap();
    let out = profile(&[
        path_str(&f),
        "--zones",
        "4",
        "--per-zone",
        "50ms",
        "--output",
        "json",
        "--quiet",
    ]);
    let r: Value = serde_json::from_str(&stdout_ok(&out)).unwrap();
    assert_valid(&r);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        assert_eq!(u(&p["settings"]["time_ns"]), 50_000_000);
        assert_eq!(p["targets"][0]["created"], false);
        assert!(u(&p["streams"][0]["read"]["ops"]) > 0);
    }
    assert!(std::fs::read(&f).unwrap() == data, "the file was written");
    assert!(out.stderr.is_empty(), "--quiet");
}

#[test]
fn dry_run_lists_a_point_per_zone_without_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dry");
    let out = profile(&[
        path_str(&f),
        "--size",
        "64m",
        "--zones",
        "8",
        "--per-zone",
        "1s",
        "--access-time",
        "--dry-run",
    ]);
    let text = stdout_ok(&out);
    assert!(text.contains("profile plan: 9 points"), "{text}");
    assert!(
        text.contains("zone 7") && text.contains("access time"),
        "{text}"
    );
    assert!(text.contains("estimated duration: 10 s"), "{text}");
    assert!(!f.exists());
}

#[test]
fn bad_invocations_get_one_line_and_exit_2_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let other = dir.path().join("other");
    let (n, o) = (path_str(&new), path_str(&other));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--zones", "0"], "--zones"),
        (vec!["--zones", "17"], "lower --zones"),
        (vec!["--bs", "3000"], "logical block size"),
        (vec!["--per-zone", "0"], "--per-zone"),
        (vec!["--per-zone", "0s"], "--per-zone"),
        (vec!["--per-zone", "fast"], "--per-zone"),
        (vec![o], "--simulate concat"),
    ];
    for (extra, needle) in cases {
        let mut args = vec![n, "--size", "16m"];
        args.extend_from_slice(&extra);
        let out = profile(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: one line, got {err}");
        assert!(
            err.contains(needle),
            "{extra:?}: expected '{needle}' in {err}"
        );
        assert!(out.stdout.is_empty(), "{extra:?}: nothing on stdout");
    }
    let out = profile(&[n]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

// ---------------------------------------------------------------------------
// Root only: devices the test creates and removes
// ---------------------------------------------------------------------------

/// A concat of a fast loop device (tmpfs-backed) and one throttled to
/// 20 MiB/s: the zones over the first member are fast, the ones over the
/// second read at the limit (within 10%), and the step is where the second
/// member starts. Neither device is written.
#[test]
fn a_concat_of_a_fast_and_a_throttled_device_shows_the_step() {
    let _lock = serial();
    need!(require_blkio());
    let fast = need!(LoopDev::new(128 * MIB, 21));
    let slow = need!(LoopDev::new(128 * MIB, 22));
    let limit = 20.0 * MIB as f64;
    let sums = (checksum(fast.path(), None), checksum(slow.path(), None));
    let mut last = String::new();
    // The throttle loses time when the shared CPU is busy: up to three tries.
    for _ in 0..3 {
        let cg = need!(Cgroup::new());
        cg.set(
            "blkio.throttle.read_bps_device",
            &format!("{} {}", maj_min(slow.path()), limit as u64),
        );
        let out = cg.run_iosurvey(&[
            "profile",
            path_str(fast.path()),
            path_str(slow.path()),
            "--simulate",
            "concat",
            "--zones",
            "8",
            "--bs",
            "256k",
            "--per-zone",
            "1500ms",
        ]);
        let text = stdout_ok(&out);
        let rows = rows(&text);
        assert_eq!(rows.len(), 8, "{text}");
        let rates: Vec<f64> = rows.iter().map(|r| num(&r[2]) * 1e6).collect();
        let fast_ok = rates[..4].iter().all(|&r| r > 2.0 * limit);
        // blk-throttle lets an idle group's first slice through at once, so
        // the first throttled zone may read up to a slice (100 ms) early:
        // at most 20% over on a 1.5 s zone. The zones after it sit at the
        // limit.
        let first_ok = rates[4] > 0.9 * limit && rates[4] < 1.2 * limit;
        let slow_ok = first_ok && rates[5..].iter().all(|&r| (r / limit - 1.0).abs() <= 0.10);
        // Positions: zone 4 starts where the slow member does (128 MiB).
        let at4 = num(&rows[4][1]);
        assert!((at4 - 134.2).abs() < 0.1, "zone 4 at {at4} MB: {text}");
        if fast_ok && slow_ok {
            eprintln!("{text}");
            assert!(text.contains("array (concat) of"), "{text}");
            assert_eq!(checksum(fast.path(), None), sums.0, "fast member written");
            assert_eq!(checksum(slow.path(), None), sums.1, "slow member written");
            return;
        }
        last = format!("rates {rates:?} against a limit of {limit}: {text}");
    }
    panic!("no clear step at the second member: {last}");
}
