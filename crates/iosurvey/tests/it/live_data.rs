//! Live data: `--live` lines per interval, target and direction with their
//! latency, the report's per-interval latency percentiles, and where a
//! plan of several points is ("point N of M").

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn path_str(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

fn lines_of(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            assert!(l.starts_with("{\"live\":\"interval\","), "grep-able: {l}");
            serde_json::from_str(l).expect("a JSON line")
        })
        .collect()
}

#[test]
fn live_lines_give_each_target_and_direction_its_counts_and_latency() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let live = dir.path().join("live.jsonl");
    let json = dir.path().join("r.json");
    let out = iosurvey(&[
        "run",
        path_str(&a),
        path_str(&b),
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--time",
        "1200ms",
        "--interval",
        "400ms",
        "--live",
        path_str(&live),
        "--json",
        path_str(&json),
        "-q",
    ]);
    stdout_ok(&out);
    let r = json_file(&json);
    let point = &r["points"][0];
    let lines = lines_of(&live);
    let label = point["label"].as_str().unwrap();
    let mut seen = BTreeSet::new();
    for l in &lines {
        assert_eq!(l["label"], label, "{l}");
        seen.insert((
            l["target"].as_str().unwrap().to_string(),
            l["dir"].as_str().unwrap().to_string(),
        ));
        if l["partial"] == false {
            assert!(u(&l["ops"]) > 0, "{l}");
            assert!(u(&l["dt_ns"]) > 0 && f(&l["iops"]) > 0.0, "{l}");
            let (mean, p99, max) = (
                u(&l["lat_mean_ns"]),
                u(&l["lat_p99_ns"]),
                u(&l["lat_max_ns"]),
            );
            assert!(mean > 0 && mean <= max && p99 <= max, "{l}");
            let rate = u(&l["bytes"]) as f64 * 1e9 / u(&l["dt_ns"]) as f64;
            assert!((f(&l["bytes_per_sec"]) - rate).abs() < 1.0, "{l}");
        }
    }
    let want: BTreeSet<(String, String)> = [&a, &b]
        .iter()
        .flat_map(|t| ["read", "write"].map(|d| (path_str(t).to_string(), d.to_string())))
        .collect();
    assert_eq!(seen, want, "both targets, both directions");
    // Interval 0 has a line for each of the four, none twice.
    let first: Vec<&Value> = lines.iter().filter(|l| u(&l["interval"]) == 0).collect();
    assert_eq!(first.len(), 4, "{first:?}");
    // Each target's and direction's lines add up to its stream's totals.
    for (si, s) in point["streams"].as_array().unwrap().iter().enumerate() {
        let target = point["targets"][u(&s["target"]) as usize]["path"]
            .as_str()
            .unwrap();
        assert!(target.ends_with(["a.dat", "b.dat"][si]));
        for d in ["read", "write"] {
            let mine = lines.iter().filter(|l| {
                l["dir"] == d
                    && l["target"]
                        .as_str()
                        .unwrap()
                        .ends_with(["a.dat", "b.dat"][si])
            });
            let (ops, bytes) =
                mine.fold((0, 0), |(o, b), l| (o + u(&l["ops"]), b + u(&l["bytes"])));
            assert_eq!(
                (ops, bytes),
                (u(&s[d]["ops"]), u(&s[d]["bytes"])),
                "{target} {d}"
            );
        }
    }
}

#[test]
fn the_series_keep_each_intervals_latency_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = iosurvey(&[
        "run",
        path_str(&dir.path().join("t.dat")),
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--workers",
        "2",
        "--time",
        "1s",
        "--interval",
        "250ms",
        "--json",
        path_str(&json),
        "-q",
    ]);
    stdout_ok(&out);
    let r = json_file(&json);
    assert_valid(&r);
    let mut intervals = 0;
    for s in r["points"][0]["streams"].as_array().unwrap() {
        for d in ["read", "write"] {
            for x in s[d]["series"].as_array().unwrap() {
                if u(&x["ops"]) == 0 {
                    continue;
                }
                intervals += 1;
                let (p50, p99, p999, max) = (
                    u(&x["lat_p50_ns"]),
                    u(&x["lat_p99_ns"]),
                    u(&x["lat_p999_ns"]),
                    u(&x["lat_max_ns"]),
                );
                assert!(p50 > 0 && p50 <= p99 && p99 <= p999 && p999 <= max, "{x}");
                // The mean lies within the interval's latencies.
                let mean = u(&x["lat_sum_ns"]) / u(&x["ops"]);
                assert!(mean <= max, "{x}");
            }
        }
    }
    assert!(
        intervals >= 6,
        "reads and writes over four intervals: {intervals}"
    );
    // An older report, whose series have no percentiles, still renders.
    let mut old = r.clone();
    for s in old["points"][0]["streams"].as_array_mut().unwrap() {
        for d in ["read", "write"] {
            for x in s[d]["series"].as_array_mut().unwrap() {
                let x = x.as_object_mut().unwrap();
                for k in ["lat_p50_ns", "lat_p99_ns", "lat_p999_ns"] {
                    x.remove(k);
                }
            }
        }
    }
    assert_valid(&old);
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let html = dir.path().join("old.html");
    let out = iosurvey(&["report", path_str(&old_path), "--html", path_str(&html)]);
    assert!(out.status.success(), "{}", describe(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Throughput per interval"));
    assert!(
        !page.contains("Latency per interval"),
        "no percentiles, no plot"
    );
}

#[test]
fn a_plan_of_several_points_says_which_point_and_the_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&[
        "diskperf",
        path_str(&dir.path().join("t.dat")),
        "--size",
        "8m",
        "--time",
        "300ms",
        "--max",
        "8k",
    ]);
    stdout_ok(&out);
    let err = stderr_of(&out);
    assert!(!err.contains('\r'), "plain lines off a terminal: {err:?}");
    let progress: Vec<&str> = err.lines().filter(|l| l.contains(" of 6")).collect();
    assert_eq!(progress.len(), 6, "{err}");
    for (i, l) in progress.iter().enumerate() {
        assert!(
            l.starts_with(&format!("iosurvey: point {} of 6, about ", i + 1)),
            "{l}"
        );
        assert!(l.contains(" s left: "), "{l}");
    }
    // Not with --quiet, nor for a single point.
    let quiet = iosurvey(&[
        "diskperf",
        path_str(&dir.path().join("q.dat")),
        "--size",
        "8m",
        "--time",
        "100ms",
        "--max",
        "4k",
        "-q",
    ]);
    assert!(
        !stderr_of(&quiet).contains("point 1 of"),
        "{}",
        describe(&quiet)
    );
    let one = iosurvey(&[
        "run",
        path_str(&dir.path().join("o.dat")),
        "--size",
        "1m",
        "--time",
        "100ms",
    ]);
    assert!(
        !stderr_of(&one).contains("point 1 of"),
        "{}",
        describe(&one)
    );
}
