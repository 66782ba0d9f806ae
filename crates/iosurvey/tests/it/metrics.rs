//! `--metrics-file` and `--metrics-push` end to end: the file replaced at
//! every interval while the run goes, its counters never going down and
//! ending at the report's figures, accepted by `promtool check metrics`; a
//! real Pushgateway holding the same series; a bad address or file refused
//! before any I/O with nothing made; a file name that is another name of
//! the user's file replaced without touching that file.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The value of the first series of `metric` whose labels hold `direction`.
fn value(text: &str, metric: &str, direction: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .find(|l| l.contains(&format!("direction=\"{direction}\"")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The report's measured reads of its first point.
fn reads(report: &Value) -> u64 {
    class_ops(&report["points"][0]["total"]["read"])
}

fn run_args<'a>(t: &'a Path, time: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        s(t),
        "--size",
        "16m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        time,
        "--interval",
        "250ms",
        "--quiet",
        "--output",
        "json",
    ];
    a.extend_from_slice(extra);
    a
}

#[test]
fn the_file_is_replaced_each_interval_and_its_counters_only_grow() {
    let dir = tempfile::tempdir().unwrap();
    let (t, m) = (dir.path().join("t.dat"), dir.path().join("io.prom"));
    let json = dir.path().join("r.json");
    let args = run_args(&t, "2500ms", &["--metrics-file", s(&m), "--json", s(&json)]);
    let mut running = iosurvey_cmd(&args).spawn();
    let child = running.0.as_mut().unwrap();
    // Read the file as the run goes, as node_exporter would.
    let mut seen: Vec<f64> = Vec::new();
    let until = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        if let Ok(text) = std::fs::read_to_string(&m) {
            if let Some(v) = value(&text, "iosurvey_io_ops_total", "read") {
                if seen.last() != Some(&v) {
                    seen.push(v);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = running.0.take().unwrap().wait_with_output().unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let report = json_file(&json);
    assert!(
        seen.len() >= 4,
        "the file changed {} times while running: {seen:?}",
        seen.len()
    );
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "a counter went down: {seen:?}"
    );
    let text = std::fs::read_to_string(&m).unwrap();
    let total = reads(&report);
    assert!(total > 0);
    assert_eq!(
        value(&text, "iosurvey_io_ops_total", "read"),
        Some(total as f64)
    );
    assert_eq!(
        value(&text, "iosurvey_io_bytes_total", "read"),
        Some(4096.0 * total as f64)
    );
    assert_eq!(
        value(&text, "iosurvey_io_latency_seconds_count", "read"),
        Some(total as f64)
    );
    // The histogram's buckets grow with `le` up to the count.
    let buckets: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("iosurvey_io_latency_seconds_bucket{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(buckets.len(), 23);
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    assert_eq!(buckets.last(), Some(&(total as f64)));
    // The plan label is the history database's plan hash for this run.
    assert!(text.contains(&format!("target=\"{}\"", s(&t))), "{text}");
    // Nothing but the outputs is left (no temporary files).
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["io.prom", "r.json"],
        "the test file made is removed"
    );
    need!(require_tool("promtool"));
    let checked = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&m).unwrap())
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn the_plan_label_is_the_plan_hash_of_the_history_database() {
    let dir = tempfile::tempdir().unwrap();
    let (t, m, db) = (
        dir.path().join("t.dat"),
        dir.path().join("io.prom"),
        dir.path().join("h.db"),
    );
    let args = run_args(&t, "300ms", &["--metrics-file", s(&m), "--db", s(&db)]);
    let out = iosurvey(&args);
    assert!(out.status.success(), "{}", describe(&out));
    let h = iosurvey(&["db", "history", "--db", s(&db), "--output", "json"]);
    let h: Value = serde_json::from_slice(&h.stdout).unwrap();
    let plan = h[0]["plan_hash"].as_str().expect("history names its plan");
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains(&format!("plan=\"{plan}\"")), "{plan}\n{text}");
}

/// A Pushgateway of its own on a free port, stopped when dropped.
struct Gateway {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Gateway {
    fn start() -> Result<Gateway, String> {
        require_tool("prometheus-pushgateway")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let child = Command::new("prometheus-pushgateway")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            // In memory only: Debian's default keeps every gateway's
            // metrics in one file under /var/lib.
            .arg("--persistence.file=")
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let url = format!("http://127.0.0.1:{port}");
        let g = Gateway {
            child,
            url,
            _dir: dir,
        };
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if fetch(&format!("{}/-/ready", g.url)).is_some() {
                return Ok(g);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("the Pushgateway did not become ready in 20 s".into())
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET `url` by plain HTTP/1.0: the body, when the answer is 200.
fn fetch(url: &str) -> Option<String> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
    let mut c = std::net::TcpStream::connect(host).ok()?;
    write!(c, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").ok()?;
    let mut all = String::new();
    c.read_to_string(&mut all).ok()?;
    let (head, body) = all.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?;
    (status == "200").then(|| body.to_string())
}

#[test]
fn a_pushgateway_holds_the_series_of_the_run_at_its_end() {
    let g = need!(Gateway::start());
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    let args = run_args(&t, "1s", &["--metrics-push", &g.url, "--label", "pushed"]);
    let out = iosurvey(&args);
    let report = report_of(&out);
    let text = fetch(&format!("{}/metrics", g.url)).expect("the gateway answers");
    let ours: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("iosurvey_io_ops_total{"))
        .collect();
    assert_eq!(ours.len(), 1, "{text}");
    assert!(ours[0].contains("job=\"iosurvey\""), "{}", ours[0]);
    assert!(ours[0].contains("direction=\"read\""), "{}", ours[0]);
    let pushed: f64 = ours[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(pushed, reads(&report) as f64);
    assert!(text.contains("label=\"pushed\""));
}

#[test]
fn a_bad_address_or_file_is_refused_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.dat");
    let json = dir.path().join("r.json");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--metrics-push", "https://127.0.0.1:9091"],
            &["https is not built in"],
        ),
        (&["--metrics-push", "127.0.0.1:9091"], &["http://HOST:PORT"]),
        (
            &["--metrics-push", &closed],
            &["did not answer its readiness check"],
        ),
        (&["--metrics-file", "-"], &["not a regular file"]),
        (
            &["--metrics-file", s(&json), "--json", s(&json)],
            &["--metrics-file"],
        ),
    ];
    for (extra, needles) in cases {
        let out = iosurvey(&run_args(&t, "200ms", extra));
        assert_refused(&out, needles);
        assert!(!t.exists(), "{extra:?}: the target was made");
        assert!(!json.exists(), "{extra:?}: a report was written");
    }
    let out = iosurvey(&run_args(&t, "200ms", &["--metrics-file", s(&t)]));
    assert_refused(&out, &["target"]);
}

#[test]
fn a_metrics_file_that_is_another_name_of_a_users_file_leaves_that_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (t, mine, m) = (
        dir.path().join("t.dat"),
        dir.path().join("mine.txt"),
        dir.path().join("io.prom"),
    );
    std::fs::write(&mine, b"the user's own words\n").unwrap();
    std::fs::hard_link(&mine, &m).unwrap();
    let out = iosurvey(&run_args(&t, "600ms", &["--metrics-file", s(&m)]));
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(std::fs::read(&mine).unwrap(), b"the user's own words\n");
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("iosurvey_io_ops_total{"), "{text}");
}

#[test]
fn each_repeat_of_a_point_is_a_series_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (t, m) = (dir.path().join("t.dat"), dir.path().join("io.prom"));
    let args = run_args(&t, "300ms", &["--metrics-file", s(&m), "--repeat", "2"]);
    let report = report_of(&iosurvey(&args));
    let text = std::fs::read_to_string(&m).unwrap();
    let last = &report["points"][1];
    assert_eq!(last["repeat"], 1);
    let series = text
        .lines()
        .find(|l| l.starts_with("iosurvey_io_ops_total{"))
        .unwrap();
    assert!(series.contains("repeat=\"1\""), "{series}");
    let v: f64 = series.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(v, class_ops(&last["total"]["read"]) as f64);
}

/// The verify state of a target is the record of what the verified runs
/// wrote: no output may be written there, by any name (it was replaced by
/// the metrics or the report, with exit 0).
#[test]
fn no_output_is_written_over_a_targets_verify_state() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("vt");
    let state = dir.path().join("vt.iosurvey-verify");
    let made = iosurvey(&[
        "run",
        s(&t),
        "--size",
        "8m",
        "--rw",
        "randwrite",
        "--bytes",
        "1m",
        "--verify",
        "--keep",
        "--quiet",
    ]);
    assert!(made.status.success(), "{}", describe(&made));
    let kept = std::fs::read(&state).expect("a verified write keeps its state");
    for flag in ["--metrics-file", "--json"] {
        let out = iosurvey(&[
            "run",
            s(&t),
            "--rw",
            "randread",
            "--bytes",
            "1m",
            "--verify",
            "--quiet",
            flag,
            s(&state),
        ]);
        assert_refused(&out, &["is the verify state of the target"]);
        assert_eq!(std::fs::read(&state).unwrap(), kept, "{flag}");
    }
    // A device's state in --verify-state DIR, named through a symlink.
    let l = need!(LoopDev::blank(16 << 20, &[]));
    let states = tempfile::tempdir().unwrap();
    let made = iosurvey(&[
        "run",
        s(l.path()),
        "--rw",
        "randwrite",
        "--bytes",
        "1m",
        "--verify",
        "--verify-state",
        s(states.path()),
        "--allow-destroy",
        "--quiet",
    ]);
    assert!(made.status.success(), "{}", describe(&made));
    let state = std::fs::read_dir(states.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let kept = std::fs::read(&state).unwrap();
    let link = dir.path().join("report.json");
    std::os::unix::fs::symlink(&state, &link).unwrap();
    let out = iosurvey(&[
        "run",
        s(l.path()),
        "--rw",
        "randread",
        "--bytes",
        "1m",
        "--verify",
        "--verify-state",
        s(states.path()),
        "--quiet",
        "--json",
        s(&link),
    ]);
    assert_refused(&out, &["is the verify state of the target"]);
    assert_eq!(std::fs::read(&state).unwrap(), kept);
}
