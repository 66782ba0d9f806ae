//! `iosurvey parallel`: dd-style lines, the scaling table and its checks on
//! files; and, as root, per-device and aggregate figures on loop devices
//! throttled at known rates.

use crate::common::*;

use serde_json::Value;

fn parallel(args: &[&str]) -> std::process::Output {
    let mut all = vec!["parallel"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

#[test]
fn scaling_over_files_prints_dd_lines_and_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| dir.path().join(format!("d{i}")).display().to_string())
        .collect();
    let csv = dir.path().join("p.csv");
    let json = dir.path().join("p.json");
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.extend_from_slice(&[
        "--size", "8m", "--bs", "64k", "--time", "300ms", "--scale", "--quiet", "--csv",
    ]);
    let csv_s = csv.display().to_string();
    let json_s = json.display().to_string();
    args.push(&csv_s);
    args.extend_from_slice(&["--json", &json_s]);
    let out = parallel(&args);
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    // dd's line for every device of every step: 1 + 2 + 3.
    let dd_lines = text
        .lines()
        .filter(|l| l.contains(" bytes (") && l.contains(" copied, "))
        .count();
    assert_eq!(dd_lines, 6, "{text}");
    assert!(
        text.contains("aggregate MB/s") && text.contains("efficiency"),
        "{text}"
    );
    let table: Vec<&str> = text.lines().filter(|l| l.starts_with("   ")).collect();
    assert_eq!(table.len(), 3, "{text}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p["streams"].as_array().unwrap().len(), i + 1);
        for s in p["streams"].as_array().unwrap() {
            assert!(u(&s["read"]["ops"]) > 0);
            // Its writes did nothing: left out (schema 6).
            assert!(s.get("write").is_none(), "{s}");
        }
    }
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 1 + 6, "{csv_text}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "test files removed, reports kept"
    );
}

#[test]
fn bad_parallel_invocations_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a").display().to_string();
    let b = dir.path().join("b").display().to_string();
    for (args, needle) in [
        (
            vec![a.as_str(), b.as_str(), "--size", "4m", "--steps", "1,3"],
            "more than the 2 devices",
        ),
        (
            vec![a.as_str(), b.as_str(), "--size", "4m", "--steps", "2,1"],
            "ascending",
        ),
        (vec![a.as_str(), a.as_str(), "--size", "4m"], "named twice"),
        (
            vec![a.as_str(), "--size", "4m", "--engine", "sync", "--qd", "4"],
            "--engine uring",
        ),
        (vec![a.as_str(), "--size", "4m", "--time", "0s"], "--time"),
        (
            vec![a.as_str(), "--size", "4m", "--bytes", "100k"],
            "give --bytes 0 or 1048576",
        ),
        (vec![a.as_str(), "--size", "4m", "--bytes", "0"], "--bytes"),
        (vec![a.as_str()], "--size"),
    ] {
        let out = parallel(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bytes_moves_a_fixed_amount_per_device_like_dds_count() {
    // dd bs=64k count=48 on each of two files: 3 MiB each, whatever the
    // time it takes.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let json = dir.path().join("p.json");
    let out = parallel(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--size",
        "8m",
        "--bs",
        "64k",
        "--bytes",
        "3m",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    // The dd lines give what each device moved over the common window.
    assert_eq!(text.matches(" bytes (").count(), 2, "{text}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &r["points"][0];
    for s in p["streams"].as_array().unwrap() {
        assert_eq!(u(&s["read"]["bytes"]), 3 << 20, "{s}");
        assert_eq!(u(&s["read"]["ops"]), 48);
    }
    assert!(p["settings"]["time_ns"].is_null(), "{}", p["settings"]);
    assert_eq!(u(&p["settings"]["bytes"]), 3 << 20);
}

#[test]
fn dry_run_lists_the_steps_without_io() {
    // --dry-run checks the targets (issue 10): they must exist.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for f in [&a, &b] {
        std::fs::write(f, vec![7u8; 1 << 20]).unwrap();
    }
    let out = parallel(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--scale",
        "--time",
        "3s",
        "--dry-run",
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("2 points") && text.contains("estimated duration: 6 s"),
        "{text}"
    );
}

/// Two loop devices throttled at 20 and 40 MiB/s in one cgroup: each
/// device's figure is its own limit and the aggregate their sum, within 5%.
#[test]
fn throttled_devices_give_their_limits_and_the_aggregate_their_sum() {
    let _lock = serial();
    need!(require_blkio());
    let slow = need!(LoopDev::new(64 * MIB, 11));
    let fast = need!(LoopDev::new(64 * MIB, 12));
    let limits = [(&slow, 20.0 * MIB as f64), (&fast, 40.0 * MIB as f64)];
    for engine in ["uring", "sync"] {
        let mut last_err = String::new();
        let mut ok = false;
        // The throttle loses time when the shared CPU is busy: up to three
        // tries, none of which may exceed a limit by more than 5%.
        for _ in 0..3 {
            let cg = need!(Cgroup::new());
            for (dev, bps) in &limits {
                cg.set(
                    "blkio.throttle.read_bps_device",
                    &format!("{} {}", maj_min(dev.path()), *bps as u64),
                );
            }
            let out = cg.run_iosurvey(&[
                "parallel",
                path_str(slow.path()),
                path_str(fast.path()),
                // 64 MiB is less than 5 s at 40 MiB/s: go round.
                "--loop",
                "--bs",
                "64k",
                "--time",
                "4s",
                "--ramp",
                "1s",
                "--engine",
                engine,
                "--output",
                "json",
                "--quiet",
            ]);
            let r = report_of(&out);
            let p = &r["points"][0];
            let interval = u(&p["settings"]["interval_ns"]) as f64;
            let window = p["streams"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| u(&s["elapsed_ns"]))
                .min()
                .unwrap() as f64;
            let mut rates = Vec::new();
            for s in p["streams"].as_array().unwrap() {
                // The same cut as the presenter: whole intervals inside the
                // window and a share of the one it cuts.
                let bytes: f64 = s["read"]["series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(k, x)| {
                        f(&x["bytes"]) * ((window - k as f64 * interval) / interval).clamp(0.0, 1.0)
                    })
                    .sum();
                rates.push(bytes / (window / 1e9));
            }
            let over = rates.iter().zip(&limits).any(|(r, (_, l))| *r > l * 1.05);
            assert!(!over, "{engine}: a device beat its throttle: {rates:?}");
            let within = rates
                .iter()
                .zip(&limits)
                .all(|(r, (_, l))| (r / l - 1.0).abs() <= 0.05);
            let sum: f64 = rates.iter().sum();
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let agg_ok = (sum / (60.0 * MIB as f64) - 1.0).abs() <= 0.05;
            if within && agg_ok {
                ok = true;
                break;
            }
            last_err =
                format!("{engine}: rates {rates:?} (sum {sum}) against 20 and 40 MiB/s: {text}");
        }
        assert!(ok, "{last_err}");
    }
}

/// Two zram devices, filled with incompressible data by a parallel write,
/// then read in parallel with each engine: one stream each, both moving
/// data, and the sync engine gives each device its own worker.
#[test]
fn zram_devices_written_then_read_in_parallel() {
    let _lock = serial();
    let a = need!(Zram::new(64 * MIB));
    let b = need!(Zram::new(64 * MIB));
    let (pa, pb) = (path_str(a.path()), path_str(b.path()));
    let out = parallel(&[
        pa,
        pb,
        "--write",
        "--allow-destroy",
        "--time",
        "500ms",
        "--output",
        "json",
        "--quiet",
    ]);
    let w = report_of(&out);
    for s in w["points"][0]["streams"].as_array().unwrap() {
        assert!(u(&s["write"]["ops"]) > 0, "{s}");
    }
    for engine in ["uring", "sync"] {
        let out = parallel(&[
            pa, pb, "--time", "500ms", "--loop", "--engine", engine, "--output", "json", "--quiet",
        ]);
        let r = report_of(&out);
        let p = &r["points"][0];
        assert_eq!(
            u(&p["settings"]["workers"]),
            if engine == "sync" { 2 } else { 1 }
        );
        let streams = p["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 2);
        for (i, s) in streams.iter().enumerate() {
            assert_eq!(u(&s["target"]), i as u64);
            assert!(
                u(&s["read"]["ops"]) > 0 && s.get("write").is_none(),
                "{engine}: {s}"
            );
            assert!(u(&s["elapsed_ns"]) >= 500_000_000);
        }
    }
    // Without --allow-destroy the write is refused and nothing runs.
    let out = parallel(&[pa, "--write", "--time", "200ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}
