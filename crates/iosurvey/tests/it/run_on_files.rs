//! The binary run against temp files: figures that add up, JSON that
//! matches the schema, test files laid out and removed, and every bad
//! invocation refused with one line and exit code 2.

use assert_cmd::Command;
use iosurvey_testkit::histogram_count;
use serde_json::Value;
use std::path::Path;

fn iosurvey() -> Command {
    Command::cargo_bin("iosurvey").unwrap()
}

/// Runs `iosurvey run ARGS --output json` and returns the parsed report.
fn run_json(args: &[&str]) -> Value {
    let out = iosurvey()
        .arg("run")
        .args(args)
        .args(["--output", "json", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout holds only JSON")
}

fn schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/run-report.schema.json"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn assert_valid(report: &Value) {
    let errors: Vec<String> = schema()
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn random_reads_on_a_created_file_add_up_and_the_file_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let r = run_json(&[
        path_str(&f),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--bytes",
        "2m",
    ]);
    assert_valid(&r);
    let p = &r["points"][0];
    let read = &p["total"]["read"];
    assert_eq!(u(&read["ops"]), 512);
    assert_eq!(u(&read["bytes"]), 2 << 20);
    assert_eq!(u(&p["total"]["write"]["ops"]), 0);
    // Each histogram is written once, by its stream: the totals' are
    // their merge, made again on read.
    assert!(read.get("histogram").is_none(), "{read}");
    let hist_total: u64 = p["streams"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["read"]["histogram"]["counts"].as_array().unwrap())
        .map(|c| u(&c[1]))
        .sum();
    assert_eq!(hist_total, 512);
    let series_ops: u64 = read["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| u(&s["ops"]))
        .sum();
    assert_eq!(series_ops, 512);
    assert_eq!(p["targets"][0]["created"], true);
    assert_eq!(p["targets"][0]["kind"], "file");
    assert_eq!(u(&p["targets"][0]["size_bytes"]), 8 << 20);
    assert!(u(&p["elapsed_ns"]) > 0);
    assert!(!f.exists(), "the test file is removed at the end");
}

/// The report of 1 MiB of 4 KiB random reads from each of two new 4 MiB
/// files `a` and `b` in `dir` (256 per stream), with `extra` flags.
fn two_files_read(dir: &Path, extra: &[&str]) -> Value {
    let (a, b) = (dir.join("a"), dir.join("b"));
    let mut v = vec![path_str(&a), path_str(&b)];
    v.extend([
        "--size", "4m", "--rw", "randread", "--bs", "4k", "--bytes", "1m",
    ]);
    v.extend(extra);
    run_json(&v)
}

#[test]
fn summarised_streams_leave_their_histograms_to_the_totals_which_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let args = |detail: Option<&'static str>| {
        let extra: Vec<&str> = detail
            .map(|d| ["--stream-detail", d])
            .into_iter()
            .flatten()
            .collect();
        two_files_read(dir.path(), &extra)
    };
    // Alone, every stream is whole by default.
    let full = args(None);
    assert!(full["points"][0]["settings"].get("stream_detail").is_none());
    let r = args(Some("summary"));
    assert_valid(&r);
    let p = &r["points"][0];
    assert_eq!(p["settings"]["stream_detail"], "summary");
    let streams = p["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2);
    for s in streams {
        assert_eq!(u(&s["read"]["ops"]), 256, "{s}");
        // Neither is written (schema 6: left out when empty).
        assert!(s["read"].get("histogram").is_none(), "{s}");
        assert!(s["read"].get("series").is_none(), "{s}");
        assert!(u(&s["read"]["latency"]["percentiles"][0]["ns"]) > 0, "{s}");
    }
    let read = &p["total"]["read"];
    // The totals carry the histogram.
    assert_eq!(histogram_count(read), 512);
    // Read back (its page embeds the document as read): the totals are
    // the ones written, not made again from the streams' (which hold none).
    let saved = dir.path().join("r.json");
    std::fs::write(&saved, serde_json::to_vec(&r).unwrap()).unwrap();
    let page = dir.path().join("r.html");
    let out = iosurvey()
        .args(["report", path_str(&saved), "--html", path_str(&page)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let hist = serde_json::to_string(&read["histogram"]["counts"]).unwrap();
    assert!(
        html.contains(&hist),
        "the totals' histogram is not in the page"
    );
    assert!(html.contains(r#""stream_detail":"summary""#));
    // Its charts draw the totals, the only histograms and series it has.
    assert!(html.contains("all 2 streams read"), "no line of the totals");
}

#[test]
fn the_stream_file_holds_every_stream_whole_while_the_report_summarises_them() {
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("streams.jsonl");
    let r = two_files_read(
        dir.path(),
        &[
            "--repeat",
            "2",
            "--stream-detail",
            "summary",
            "--stream-file",
            path_str(&lines),
        ],
    );
    assert_valid(&r);
    let text = std::fs::read_to_string(&lines).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON document"))
        .collect();
    // One line per stream of each point run, in order.
    let keys: Vec<(u64, u64, u64, u64)> = lines
        .iter()
        .map(|l| {
            (
                u(&l["point"]),
                u(&l["repeat"]),
                u(&l["rank"]),
                u(&l["stream"]),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [(0, 0, 0, 0), (0, 0, 0, 1), (0, 1, 0, 0), (0, 1, 0, 1)]
    );
    let points = r["points"].as_array().unwrap();
    for l in &lines {
        let p = &points[u(&l["repeat"]) as usize];
        let s = &p["streams"][u(&l["stream"]) as usize];
        // The report keeps the summary, the file the whole stream: its
        // histogram counts every I/O the summary counts.
        assert!(s["read"].get("histogram").is_none(), "{s}");
        assert_eq!(l["label"], s["label"]);
        assert_eq!(u(&l["read"]["ops"]), u(&s["read"]["ops"]));
        // The line carries the histogram.
        assert_eq!(histogram_count(&l["read"]), 256, "{l}");
        assert_eq!(
            l["read"]["latency"]["max_ns"], s["read"]["latency"]["max_ns"],
            "the summary's figures are the whole stream's"
        );
    }
}

#[test]
fn summarised_streams_are_refused_where_the_output_reads_each_stream_s_series() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let out = iosurvey()
        .args(["parallel", path_str(&a), path_str(&b), "--size", "1m"])
        .args(["--stream-detail", "summary"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--stream-detail summary"), "{err}");
    assert!(!a.exists() && !b.exists(), "nothing is created");
}

#[test]
fn a_sequential_pass_covers_the_area_once_per_worker_region() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("seq");
    for (rw, workers) in [("read", "1"), ("backread", "2"), ("read", "2")] {
        let r = run_json(&[
            path_str(&f),
            "--size",
            "4m",
            "--rw",
            rw,
            "--bs",
            "64k",
            "--workers",
            workers,
            "--qd",
            "2",
        ]);
        assert_eq!(
            u(&r["points"][0]["total"]["read"]["ops"]),
            64,
            "{rw} x{workers}"
        );
        assert_eq!(
            r["points"][0]["streams"][0]["pattern"],
            if rw == "read" { "forward" } else { "backward" }
        );
    }
}

#[test]
fn several_targets_get_a_worker_each_unless_workers_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| path_str(&dir.path().join(format!("t{i}"))).to_string())
        .collect();
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
        args.extend([
            "--size", "1m", "--rw", "randread", "--bs", "4k", "--bytes", "512k",
        ]);
        args.extend(extra);
        let r = run_json(&args);
        let p = &r["points"][0];
        // Every target moves its own --bytes, whatever runs it.
        for t in 0..3 {
            assert_eq!(u(&p["streams"][t]["read"]["ops"]), 128, "{extra:?}");
        }
        assert_eq!(
            p["label"].as_str().unwrap().rsplit('=').next().unwrap(),
            p["settings"]["workers"].to_string()
        );
        u(&p["settings"]["workers"])
    };
    // By default a worker per target, as fio gives each job a thread,
    // io_uring or sync.
    assert_eq!(run(&["--qd", "4"]), 3);
    assert_eq!(run(&["--engine", "sync"]), 3);
    // Given, --workers wins: all three on one worker, as before.
    assert_eq!(run(&["--qd", "4", "--workers", "1"]), 1);
    assert_eq!(run(&["--qd", "4", "--workers", "2"]), 2);
}

#[test]
fn mixed_workload_splits_reads_and_writes_by_mix() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mix");
    let r = run_json(&[
        path_str(&f),
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--mix",
        "70",
        "--bs",
        "4k",
        "--bytes",
        "8m",
        "--engine",
        "sync",
        "--qd",
        "1",
        "--workers",
        "2",
    ]);
    let t = &r["points"][0]["total"];
    let (reads, writes) = (u(&t["read"]["ops"]), u(&t["write"]["ops"]));
    assert_eq!(reads + writes, 2048);
    let share = reads as f64 / 2048.0;
    assert!((0.65..0.75).contains(&share), "read share {share}");
    assert_eq!(r["points"][0]["settings"]["engine"], "sync");
    assert_eq!(u(&r["points"][0]["settings"]["workers"]), 2);
}

#[test]
fn time_bound_ramp_and_interval_series() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("timed");
    let r = run_json(&[
        path_str(&f),
        "--size",
        "4m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "1200ms",
        "--ramp",
        "300ms",
        "--interval",
        "250ms",
    ]);
    let p = &r["points"][0];
    assert!(u(&p["elapsed_ns"]) >= 1_200_000_000);
    assert_eq!(u(&p["settings"]["ramp_ns"]), 300_000_000);
    let series = p["total"]["read"]["series"].as_array().unwrap();
    assert!(series.len() >= 5, "{} intervals", series.len());
    let sum: u64 = series.iter().map(|s| u(&s["ops"])).sum();
    assert_eq!(sum, u(&p["total"]["read"]["ops"]));
}

#[test]
fn writes_to_a_file_iosurvey_did_not_create_need_allow_destroy() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("precious");
    std::fs::write(&f, vec![0x5au8; 1 << 20]).unwrap();
    iosurvey()
        .args(["run", path_str(&f), "--rw", "write", "--bs", "4k"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--allow-destroy"));
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0x5a));
    let r = run_json(&[
        path_str(&f),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--allow-destroy",
        "--bytes",
        "64k",
    ]);
    assert_eq!(u(&r["points"][0]["total"]["write"]["ops"]), 16);
    assert_eq!(r["points"][0]["targets"][0]["created"], false);
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 1 << 20, "an existing file keeps its size");
    assert!(
        f.exists(),
        "a file iosurvey did not create is never removed"
    );
}

#[test]
fn readonly_refuses_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ro");
    iosurvey()
        .args([
            "run",
            path_str(&f),
            "--size",
            "1m",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--readonly",
            "--allow-destroy",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--readonly"));
    assert!(!f.exists());
}

#[test]
fn keep_leaves_the_test_file_for_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("kept");
    run_json(&[
        path_str(&f),
        "--size",
        "1m",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--keep",
    ]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    let r = run_json(&[path_str(&f), "--rw", "read", "--bs", "64k"]);
    assert_eq!(r["points"][0]["targets"][0]["created"], false);
    assert!(f.exists());
}

#[test]
fn four_thousand_outstanding_ios_on_two_workers() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep");
    let r = run_json(&[
        path_str(&f),
        "--size",
        "16m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "2048",
        "--workers",
        "2",
        "--bytes",
        "64m",
    ]);
    assert_eq!(u(&r["points"][0]["total"]["read"]["ops"]), 16384);
    assert_eq!(u(&r["points"][0]["streams"][0]["outstanding"]), 2048);
}

#[test]
fn json_file_and_text_summary_together() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("both");
    let j = dir.path().join("out.json");
    let out = iosurvey()
        .args([
            "run",
            path_str(&f),
            "--size",
            "2m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--bytes",
            "256k",
            "--json",
        ])
        .arg(&j)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("IOPS") && text.contains("MB/s"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("laying out"));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_valid(&r);
    assert_eq!(u(&r["points"][0]["total"]["read"]["ops"]), 64);
    assert!(r["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--json"));
}

#[test]
fn bad_invocations_get_one_line_and_exit_2_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let n = path_str(&new);
    let d = path_str(dir.path());
    let nested = dir.path().join("nodir").join("x");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![n, "--size", "4x"], "invalid size"),
        (
            vec![path_str(&nested), "--size", "1m"],
            "nodir: no such directory to create the test file in; create it first",
        ),
        (vec![n, "--size", "1m", "--bs", "0"], "--bs"),
        (vec![n, "--size", "1m", "--qd", "0"], "--qd"),
        (
            vec![n, "--size", "1m", "--qd", "-3"],
            "'-3' for '--qd <QD>': cannot be negative",
        ),
        (
            vec![n, "--size", "1m", "--bs", "-4k"],
            "'-4k' for '--bs <BS>': cannot be negative",
        ),
        (vec![n, "--size", "-1m"], "cannot be negative"),
        (
            vec![n, "--size", "1m", "--time", "-5s"],
            "cannot be negative",
        ),
        (vec![n, "--size", "1m", "--workers", "0"], "--workers"),
        (
            vec![n, "--size", "1m", "--time", "soon"],
            "invalid duration",
        ),
        (vec![n, "--size", "1m", "--time", "0s"], "--time"),
        (vec![n, "--size", "99999999999999999999"], "too large"),
        (
            vec![n, "--size", "1m", "--rw", "randrw", "--mix", "101"],
            "--mix",
        ),
        (
            vec![n, "--size", "1m", "--rw", "read", "--mix", "50"],
            "--mix",
        ),
        (vec![n, "--size", "1m", "--rw", "sideways"], "--rw"),
        (
            vec![n, "--size", "1m", "--engine", "sync", "--qd", "4"],
            "--engine sync",
        ),
        (
            vec![n, "--size", "1m", "--engine", "carrier-pigeon"],
            "'carrier-pigeon' for '--engine <ENGINE>' (valid: uring, sync)",
        ),
        (
            vec![n, "--size", "1m", "--output", "xml"],
            "(valid: text, json)",
        ),
        (
            vec![n, "--size", "1m", "--ouput", "json"],
            "'--ouput' found: did you mean '--output'?",
        ),
        (vec![n], "--size"),
        (vec![d], "directory"),
        (vec!["/dev/null"], "character device"),
        (
            vec![n, "--size", "1m", "--bs", "3000"],
            "logical block size",
        ),
        (
            vec![n, "--size", "1m", "--bs", "2m"],
            "larger than the area",
        ),
        (vec![n, "--size", "1m", "--offset", "2m"], "--offset"),
        (
            vec![n, "--size", "1m", "--span", "2m"],
            "runs past the end of the target",
        ),
        (
            vec![n, "--size", "1m", "--simulate", "raid0", "--stripe", "2m"],
            "the array cannot be built",
        ),
        (
            vec![
                n,
                "--size",
                "1m",
                "--buffered",
                "--simulate",
                "raid0",
                "--stripe",
                "512",
                "--bs",
                "1m",
                "--qd",
                "64",
            ],
            "raise --stripe",
        ),
        (
            vec![n, "--size", "1m", "--rw", "randread", "--regions", "4"],
            "--regions",
        ),
        (vec![n, "--size", "1000p"], "free space"),
        (vec![n, "--size", "1m", "--bogus-flag"], "--bogus-flag"),
    ];
    for (args, needle) in cases {
        let out = iosurvey().arg("run").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // Said once: no clause repeated after a colon.
        let clauses: Vec<&str> = err.trim_end().split(": ").collect();
        for (k, c) in clauses.iter().enumerate() {
            assert!(
                c.len() < 12 || !clauses[k + 1..].contains(c),
                "{args:?}: said twice: {err}"
            );
        }
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line, got {err}"
        );
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(!new.exists(), "{args:?} left a file behind");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
}

#[test]
fn a_misspelt_command_and_a_bad_orion_option_are_named_whole() {
    for (args, needle) in [
        (
            vec!["runn"],
            "unrecognized subcommand 'runn': did you mean 'run'?",
        ),
        (vec!["matrix", "-foo"], "unknown ORION option '-foo'"),
        (
            vec!["matrix", "x.dat", "-num_disk", "3"],
            "unknown ORION option '-num_disk'",
        ),
    ] {
        let out = iosurvey().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in {err}"
        );
    }
}

#[test]
fn every_commands_help_is_true_to_it() {
    let help = |c: &str| {
        let out = iosurvey().args([c, "--help"]).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let engine = |c: &str| {
        let h = help(c);
        let at = h.find("--engine <ENGINE>").expect("an --engine flag");
        h[at..].lines().nth(1).unwrap_or("").trim().to_string()
    };
    assert!(engine("run").contains("[default: uring]"));
    assert!(engine("video").contains("[default: sync at --depth 1"));
    assert!(engine("profile").contains("[default: sync"));
    assert!(engine("diskperf").contains("[default: sync at --qd 1"));
    for c in [
        "run", "quick", "diskperf", "parallel", "survey", "matrix", "profile", "video", "report",
        "compare",
    ] {
        let h = help(c);
        for line in h.lines() {
            assert!(
                !line.trim_end().ends_with(','),
                "{c}: a dangling comma: {line}"
            );
        }
    }
    let run = help("run");
    let at = run.find("--regions").unwrap();
    let regions: String = run[at..].lines().take(3).collect();
    assert!(
        regions.contains("one per worker") && !regions.contains("[default: 0]"),
        "{regions}"
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let out = iosurvey().args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("130 interrupted") && help.contains("2 bad usage"));
}

#[test]
fn sigint_saves_partial_results_removes_the_test_file_and_exits_130() {
    interrupted_run_keeps_what_it_measured(rustix::process::Signal::INT);
}

#[test]
fn sigterm_is_handled_like_ctrl_c() {
    interrupted_run_keeps_what_it_measured(rustix::process::Signal::TERM);
}

fn interrupted_run_keeps_what_it_measured(signal: rustix::process::Signal) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("long");
    let j = dir.path().join("partial.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args([
            "run",
            path_str(&f),
            "--size",
            "4m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--time",
            "60s",
            "--quiet",
            "--json",
        ])
        .arg(&j)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let start = std::time::Instant::now();
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed().as_secs() < 10, "stopped promptly");
    assert_eq!(out.status.code(), Some(130));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_valid(&r);
    assert_eq!(r["points"][0]["interrupted"], true);
    assert!(u(&r["points"][0]["total"]["read"]["ops"]) > 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("INTERRUPTED"));
    assert!(!f.exists(), "test file removed after Ctrl-C");
}

#[test]
fn live_writes_one_json_line_per_interval_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("live-target");
    let live = dir.path().join("live.jsonl");
    let r = run_json(&[
        path_str(&f),
        "--size",
        "4m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "1600ms",
        "--interval",
        "400ms",
        "--live",
        path_str(&live),
    ]);
    let text = std::fs::read_to_string(&live).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 2, "{text}");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(u(&l["point"]), 0);
        assert!(u(&l["interval"]) >= i as u64);
        assert!(u(&l["dt_ns"]) > 0);
    }
    let live_ops: u64 = lines.iter().map(|l| u(&l["ops"])).sum();
    assert!(live_ops <= u(&r["points"][0]["total"]["read"]["ops"]));
}

#[test]
fn a_directory_target_gets_a_test_file_inside_that_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(&[
        path_str(dir.path()),
        "--size",
        "2m",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--bytes",
        "256k",
    ]);
    let target = r["points"][0]["targets"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        target.starts_with(path_str(dir.path())) && target.ends_with(".testfile"),
        "{target}"
    );
    assert_eq!(u(&r["points"][0]["total"]["write"]["ops"]), 64);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test file removed"
    );
    iosurvey()
        .args(["run", path_str(dir.path()), "--rw", "read"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--size"));
}

#[test]
fn quick_on_an_existing_file_reads_only_unless_its_data_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let data: Vec<u8> = (0..(16u32 << 20))
        .map(|i| (i * 7 + i / 4096) as u8)
        .collect();
    std::fs::write(&f, &data).unwrap();
    let card = |extra: &[&str]| {
        let out = iosurvey()
            .args(["quick", path_str(&f), "--time", "200ms", "--ramp", "0s"])
            .args(extra)
            .args(["--output", "json", "--quiet"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        r["points"].as_array().unwrap().clone()
    };
    for extra in [&[][..], &["--readonly"]] {
        let points = card(extra);
        assert_eq!(points.len(), 4, "{extra:?}: the read half");
        assert!(points
            .iter()
            .all(|p| u(&p["total"]["read"]["ops"]) > 0 && u(&p["total"]["write"]["ops"]) == 0));
        assert!(
            std::fs::read(&f).unwrap() == data,
            "{extra:?} changed the file"
        );
    }
    let points = card(&["--allow-destroy"]);
    assert_eq!(points.len(), 8, "offered: both halves");
    assert!(u(&points[4]["total"]["write"]["ops"]) > 0);
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        16 << 20,
        "used as it is, kept"
    );
}

/// Regression (issue 28 §5): `quick PATH` with a missing PATH laid out a
/// 1 GiB file named PATH in its parent. It is refused (exit 2, one line,
/// nothing created), `--dry-run` too.
#[test]
fn quick_on_a_missing_path_is_refused_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nodir");
    for extra in [&[][..], &["--dry-run"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args([
                "quick",
                path_str(&missing),
                "--size",
                "16m",
                "--time",
                "200ms",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(
            err.contains("does not exist") && err.contains("quick takes a directory"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{extra:?}"
        );
    }
}

#[test]
fn quick_prints_the_card_and_removes_its_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("quick.json");
    let out = iosurvey()
        .current_dir(dir.path())
        .args([
            "quick", "--size", "16m", "--time", "300ms", "--ramp", "0s", "--json",
        ])
        .arg(&j)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let card = String::from_utf8(out.stdout).unwrap();
    for row in [
        "SEQ1M Q8T1",
        "SEQ1M Q1T1",
        "RND4K Q32T1",
        "RND4K Q1T1",
        "Read",
        "Write",
        "p99",
    ] {
        assert!(card.contains(row), "{row} missing from\n{card}");
    }
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_valid(&r);
    assert_eq!(r["mode"], "quick");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 8);
    for p in &points[..4] {
        assert!(u(&p["total"]["read"]["ops"]) > 0 && u(&p["total"]["write"]["ops"]) == 0);
    }
    for p in &points[4..] {
        assert!(u(&p["total"]["write"]["ops"]) > 0 && u(&p["total"]["read"]["ops"]) == 0);
    }
    assert_eq!(u(&points[2]["streams"][0]["outstanding"]), 32);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "quick.json")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bare_iosurvey_runs_quick_on_the_current_directory() {
    // No arguments at all means `quick .`; a bad flag after nothing still
    // gets the usual one-line refusal, and --help shows the commands.
    let out = iosurvey().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("quick") && help.contains("run"));
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey()
        .current_dir(dir.path())
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The bare command itself, made quick through a tiny free-space-safe
    // run: it must start the quick plan (its first message says so).
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("8 tests"), "{err}");
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test file removed after Ctrl-C"
    );
}

/// Regression: `iosurvey run ... | head -c 100` panicked on the broken pipe.
/// A closed stdout now stops the run as Ctrl-C does (exit 130).
#[test]
fn a_reader_that_closes_stdout_early_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pipe");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args([
            "run",
            path_str(&f),
            "--size",
            "1m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--output",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!f.exists());
}

/// Regression (issue 28 §5): `iosurvey run ... 2>&1 | head -1` panicked
/// on the first line to the closed stderr (exit 134 with the release
/// build's `panic = "abort"`, the test file left behind). Stdout and stderr
/// share one pipe whose reader closes after the first line: the run stops
/// as on Ctrl-C (exit 130) and removes its test file.
#[test]
fn a_reader_of_stdout_and_stderr_that_closes_after_one_line_is_a_stop() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args([
            "run",
            path_str(dir.path()),
            "--size",
            "64m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--time",
            "5s",
        ])
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    // `| head -1`: one line, then the reader is gone (the child holds the
    // only write ends).
    let mut first = String::new();
    std::io::BufReader::new(reader)
        .read_line(&mut first)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!first.is_empty(), "nothing was printed");
    assert_ne!(status.code(), Some(134), "aborted on the closed pipe");
    assert_ne!(status.code(), Some(101), "panicked on the closed pipe");
    assert_eq!(status.code(), Some(130), "{status}; first line: {first}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `--simulate raid0` stripes one stream over the targets: three 64 KiB
/// writes with a 64 KiB stripe land on a@0, b@0 and a@64k, and nowhere else.
#[test]
fn simulate_raid0_stripes_writes_round_robin_over_the_members() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, vec![0u8; 1 << 20]).unwrap();
    std::fs::write(&b, vec![0u8; 1 << 20]).unwrap();
    let r = run_json(&[
        path_str(&a),
        path_str(&b),
        "--simulate",
        "raid0",
        "--stripe",
        "64k",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "192k",
        "--allow-destroy",
    ]);
    assert_valid(&r);
    let s = &r["points"][0]["streams"][0];
    assert_eq!(r["points"][0]["streams"].as_array().unwrap().len(), 1);
    assert_eq!(s["array"]["layout"], "raid0");
    assert_eq!(u(&s["array"]["stripe"]), 65536);
    assert_eq!(u(&s["write"]["ops"]), 3);
    let written = |data: &[u8], from: usize, to: usize| data[from..to].iter().any(|&x| x != 0);
    let (da, db) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(written(&da, 0, 64 << 10) && written(&da, 64 << 10, 128 << 10));
    assert!(!written(&da, 128 << 10, 1 << 20));
    assert!(written(&db, 0, 64 << 10));
    assert!(!written(&db, 64 << 10, 1 << 20));
}

/// A stripe smaller than the I/O: each 192 KiB write goes out as three
/// 64 KiB pieces, round robin over the members, and counts as one I/O;
/// the same on the one-at-a-time engine.
#[test]
fn simulate_raid0_cuts_an_io_larger_than_the_stripe_across_the_members() {
    for engine in ["uring", "sync"] {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, vec![0u8; 1 << 20]).unwrap();
        std::fs::write(&b, vec![0u8; 1 << 20]).unwrap();
        let r = run_json(&[
            path_str(&a),
            path_str(&b),
            "--simulate",
            "raid0",
            "--stripe",
            "64k",
            "--rw",
            "write",
            "--bs",
            "192k",
            "--bytes",
            "384k",
            "--engine",
            engine,
            "--allow-destroy",
        ]);
        let w = &r["points"][0]["streams"][0]["write"];
        assert_eq!((u(&w["ops"]), u(&w["bytes"])), (2, 384 << 10), "{engine}");
        let timed: u64 = w["histogram"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| u(&c[1]))
            .sum();
        assert_eq!(timed, 2, "{engine}: each I/O timed once: {w}");
        // Stripes 0..5 of the array: a@0, b@0, a@64k, b@64k, a@128k, b@128k.
        let stripes_written = |data: &[u8]| -> Vec<bool> {
            data.chunks(64 << 10)
                .take(4)
                .map(|c| c.iter().any(|&x| x != 0))
                .collect()
        };
        let (da, db) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert_eq!(stripes_written(&da), [true, true, true, false], "{engine}");
        assert_eq!(stripes_written(&db), [true, true, true, false], "{engine}");
    }
}

#[test]
fn simulate_concat_reads_the_members_end_to_end_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let r = run_json(&[
        path_str(&a),
        path_str(&b),
        "--size",
        "1m",
        "--simulate",
        "concat",
        "--rw",
        "read",
        "--bs",
        "64k",
    ]);
    let s = &r["points"][0]["streams"][0];
    assert_eq!(s["array"]["layout"], "concat");
    assert_eq!(u(&s["read"]["ops"]), 32, "one pass over both 1 MiB members");
    let out = iosurvey()
        .args([
            "run",
            path_str(&a),
            "--size",
            "1m",
            "--simulate",
            "raid0",
            "--stripe",
            "2m",
            "--bs",
            "4k",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("smaller than one stripe"));
    assert!(!a.exists());
}

/// This host's name, as `uname -n` gives it.
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_target_on_this_host_runs_as_its_path_and_one_on_another_host_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    let on_me = format!("{}:{}", host_name(), path_str(&f));
    let r = run_json(&[&on_me, "--size", "1m", "--rw", "read", "--bytes", "1m"]);
    assert_eq!(r["points"][0]["targets"][0]["path"], path_str(&f));
    assert!(r.get("ranks").is_none(), "one host: no ranks section");
    // A placeholder takes rank 0 when no launcher started several.
    let pattern = format!("{}/f.{{rank}}", path_str(dir.path()));
    let r = run_json(&[&pattern, "--size", "1m", "--rw", "read", "--bytes", "1m"]);
    let want = format!("{}/f.0", path_str(dir.path()));
    assert_eq!(r["points"][0]["targets"][0]["path"], want.as_str());
    // A relative name with a colon is a file of that name, never the
    // file after the colon.
    let rel = format!("{}:foo", host_name());
    let out = iosurvey()
        .current_dir(dir.path())
        .args(["run", &rel, "--size", "1m", "--bytes", "1m", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !dir.path().join("foo").exists(),
        "wrote the file after the colon"
    );
    let out = iosurvey()
        .args(["run", "elsewhere-9:/dev/sdb"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no rank runs on host elsewhere-9"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A build without the `mpi` feature, started by a launcher as several
/// copies, refuses: it must not run the job once per copy.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_copies_started_by_a_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    for (vars, says) in [
        (
            &[("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_RANK", "0")][..],
            true,
        ),
        (
            &[("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_RANK", "3")][..],
            false,
        ),
        (&[("PMI_SIZE", "2"), ("PMI_RANK", "0")][..], true),
        (
            &[("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "8")][..],
            true,
        ),
    ] {
        let out = iosurvey()
            .args(["run", path_str(&f), "--size", "1m", "--time", "1s"])
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{vars:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.contains("built without MPI"), says, "{vars:?}: {err}");
        assert!(!f.exists(), "{vars:?}: nothing is created");
    }
    // One copy is a plain run.
    let out = iosurvey()
        .args(["run", path_str(&f), "--size", "1m", "--bytes", "1m"])
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = iosurvey().arg("--version").output().unwrap();
    assert!(out.status.success());
    let v = String::from_utf8(out.stdout).unwrap();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    match head {
        Some(h) => {
            let h = String::from_utf8(h.stdout).unwrap();
            assert!(v.contains(&format!("(commit {})", h.trim())), "{v}");
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("t.dat");
            let r = run_json(&[path_str(&f), "--size", "64k", "--bs", "4k", "--bytes", "4k"]);
            assert_eq!(r["tool"]["commit"], h.trim(), "{}", r["tool"]);
        }
        None => assert!(v.contains("not built from a git checkout"), "{v}"),
    }
}

#[test]
fn completions_and_manual_pages_cover_every_command() {
    let text = |args: &[&str]| {
        let out = iosurvey().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let commands = [
        "run", "quick", "diskperf", "parallel", "survey", "matrix", "profile", "video", "report",
        "compare",
    ];
    let bash = text(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("iosurvey.bash");
    std::fs::write(&script, &bash).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(check.success(), "bash -n rejects the completion script");
    for c in commands {
        assert!(
            bash.contains(&format!("iosurvey__subcmd__{c}")),
            "bash lacks {c}"
        );
    }
    assert!(bash.contains("--write-pct") && bash.contains("--size-small"));
    assert!(text(&["completions", "zsh"]).starts_with("#compdef iosurvey"));
    assert!(text(&["completions", "fish"]).contains("complete -c iosurvey"));

    let page = text(&["man"]);
    assert!(page.contains(".TH iosurvey 1"), "{page}");
    for c in commands {
        assert!(
            page.contains(&format!("iosurvey\\-{c}(1)")),
            "the page lists {c}"
        );
        let sub = text(&["man", c]);
        assert!(sub.contains(&format!(".TH iosurvey-{c} 1")), "{c}: {sub}");
    }
    assert!(text(&["man", "run"]).contains("\\-\\-bs"));
    let out = iosurvey().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("iosurvey: no command 'nope'") && err.lines().count() == 1,
        "{err}"
    );
}
