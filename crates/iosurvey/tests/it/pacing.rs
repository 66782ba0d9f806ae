//! `run --rate-iops`, `--rate` and `--dist` on temp files: the rate asked
//! is the rate reached (in all, or per worker), a cap the run cannot
//! reach is warned about, the cap and the distribution are in the text
//! and the JSON, and bad values are refused with one line and exit 2.

use crate::common::{assert_valid, iosurvey, run_point};
use serde_json::Value;

fn ops(p: &Value) -> u64 {
    p["total"]["read"]["ops"].as_u64().unwrap() + p["total"]["write"]["ops"].as_u64().unwrap()
}

fn codes(p: &Value) -> Vec<String> {
    p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// A 2 s random-read run on a created file with `extra` flags.
fn capped(extra: &[&str]) -> Value {
    capped_for("2s", extra)
}

/// A random-read run of `time` on a created file with `extra` flags.
fn capped_for(time: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let mut args = vec![
        f.to_str().unwrap(),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        time,
    ];
    args.extend_from_slice(extra);
    run_point(&args)
}

fn within(got: u64, want: u64, share: f64) -> bool {
    (got as f64 - want as f64).abs() <= want as f64 * share
}

#[test]
fn a_rate_cap_is_the_rate_reached_in_all_or_per_worker() {
    let p = capped(&["--rate-iops", "500"]);
    assert!(within(ops(&p), 1000, 0.05), "{} ops", ops(&p));
    assert_eq!(p["settings"]["rate"]["unit"], "iops");
    assert_eq!(p["settings"]["rate"]["per_second"], 500);
    assert_eq!(p["settings"]["rate"]["per_worker"], false);
    assert!(!codes(&p).contains(&"rate_not_reached".into()));
    // The cap in all, shared by 2 workers: the total, not double.
    let p = capped(&["--rate-iops", "500", "--workers", "2", "--qd", "2"]);
    assert!(within(ops(&p), 1000, 0.05), "{} ops", ops(&p));
    // Each worker's: double.
    let p = capped(&["--rate-iops", "250/worker", "--workers", "2"]);
    assert!(within(ops(&p), 1000, 0.05), "{} ops", ops(&p));
    assert_eq!(p["settings"]["rate"]["per_worker"], true);
    // By bytes: 2 MB/s of 4 KiB reads for 2 s.
    let p = capped(&["--rate", "2MB"]);
    let bytes = p["total"]["read"]["bytes"].as_u64().unwrap();
    assert!(within(bytes, 4_000_000, 0.05), "{bytes} bytes");
}

#[test]
fn a_cap_the_run_cannot_reach_is_warned_about() {
    // No file answers 50 million random reads a second at QD 1.
    let p = capped(&["--rate-iops", "50000000"]);
    assert!(
        codes(&p).contains(&"rate_not_reached".into()),
        "{:?}",
        codes(&p)
    );
    let w = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "rate_not_reached")
        .unwrap();
    assert_eq!(w["evidence"]["asked_per_sec"], 50_000_000);
    assert!(w["evidence"]["reached_per_sec"].as_f64().unwrap() < 50e6 * 0.95);
}

#[test]
fn the_cap_and_the_distribution_are_in_the_text_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let j = dir.path().join("r.json");
    let out = iosurvey(&[
        "run",
        f.to_str().unwrap(),
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--time",
        "300ms",
        "--rate-iops",
        "200/worker",
        "--dist",
        "zipf:1.2",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("rate capped at 200 IOPS per worker"),
        "{text}"
    );
    assert!(text.contains("offsets by zipf:1.2"), "{text}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_valid(&report);
    let s = &report["points"][0]["streams"][0];
    assert_eq!(s["dist"]["kind"], "zipf");
    assert_eq!(s["dist"]["theta"], 1.2);
    // A uniform run leaves both out, as every report before them.
    let p = capped_for("100ms", &[]);
    assert!(p["settings"]["rate"].is_null());
    assert!(p["streams"][0].get("dist").is_none());
}

#[test]
fn bad_rates_and_distributions_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let f = f.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--rate-iops", "0"], "--rate-iops '0'"),
        (&["--rate-iops", "5k"], "--rate-iops '5k'"),
        (&["--rate", "fast/worker"], "--rate 'fast/worker'"),
        (&["--rate", "1m", "--rate-iops", "5"], "cannot be used with"),
        (&["--rw", "randread", "--dist", "zipf:0"], "--dist zipf:0"),
        (
            &["--rw", "randread", "--dist", "pareto:1.5"],
            "--dist pareto:1.5",
        ),
        (
            &["--rw", "randread", "--dist", "gauss"],
            "unknown --dist 'gauss'",
        ),
        (
            &["--rw", "write", "--dist", "zipf:1.2"],
            "applies to random workloads",
        ),
        (
            &["--rw", "randwrite", "--verify", "--dist", "zipf:1.2"],
            "--verify does not take --dist zipf:1.2",
        ),
        (
            &["--rate-iops", "10", "--simulate", "concat"],
            "do not apply with --simulate",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", f, "--size", "1m"];
        args.extend_from_slice(extra);
        let out = iosurvey(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
        assert!(!std::path::Path::new(f).exists(), "nothing left behind");
    }
}
