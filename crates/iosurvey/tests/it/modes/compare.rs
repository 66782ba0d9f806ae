//! `iosurvey compare`'s gate (`--fail-if-slower`, `--gate`) and its exit
//! codes, from sets of reports made here: one real run on a temporary file
//! gives the report's shape, and its points are replaced by synthetic
//! repeats with known rates and latencies (a typed `RunReport`, so the
//! files are what iosurvey itself would write).

use crate::common::*;
use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_stats::ClassStats;
use std::path::{Path, PathBuf};

const ELAPSED: u64 = 1_000_000_000;

/// One repeat of a point read in 4 KiB I/Os: `mb` MB in 1 s, a share
/// `fast` (in percent) of the reads taking 100 us and the rest 310 us (a
/// cache hit or miss: the p50 falls on one side or the other).
fn repeat(template: &PointReport, label: &str, k: u32, mb: u64, fast: u64) -> PointReport {
    let n = mb * 1_000_000 / 4096;
    let mut c = ClassStats::new();
    let quick = n * fast / 100;
    c.record_n(0, quick, quick * 4096, 100_000);
    c.record_n(0, n - quick, (n - quick) * 4096, 310_000);
    let mut p = template.clone();
    p.label = label.into();
    p.repeat = k;
    p.skipped = None;
    p.interrupted = false;
    p.elapsed_ns = ELAPSED;
    p.total.read = ClassReport::new(&c, ELAPSED);
    p.total.write = ClassReport::new(&ClassStats::new(), ELAPSED);
    // The streams add up to the totals, as in a real report (whose
    // totals' histograms are the merge of the streams', made on read).
    for (i, s) in p.streams.iter_mut().enumerate() {
        s.read = if i == 0 {
            p.total.read.clone()
        } else {
            ClassReport::new(&ClassStats::new(), ELAPSED)
        };
        s.write = ClassReport::new(&ClassStats::new(), ELAPSED);
    }
    p
}

/// A set of five repeats of three points, as one `--repeat 5` run:
/// `mb[k]` and `fast[k]` for repeat k of the first point, `mb` alone for
/// the others (always 60% fast).
fn set(template: &RunReport, labels: [&str; 3], mb: [u64; 5], fast: [u64; 5]) -> RunReport {
    let mut r = template.clone();
    r.repeats = 5;
    r.points = Vec::new();
    for k in 0..5 {
        let t = &template.points[0];
        r.points
            .push(repeat(t, labels[0], k as u32, mb[k], fast[k]));
        r.points.push(repeat(t, labels[1], k as u32, mb[k], 60));
        r.points.push(repeat(t, labels[2], k as u32, mb[k], 60));
    }
    r
}

fn write(dir: &Path, name: &str, r: &RunReport) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(r).unwrap()).unwrap();
    path
}

const POINTS: [&str; 3] = ["randread 4k qd1", "randread 4k qd8", "randread 4k qd32"];

/// The report of one short run on a file in `dir`.
fn template(dir: &Path) -> RunReport {
    let f = dir.join("t.dat");
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--size",
        "64k",
        "--bs",
        "4k",
        "--bytes",
        "16k",
        "--output",
        "json",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A: the baseline; B: the same settings again, the MB/s interleaved with
/// A's, but the first point's p50 on the slow side in every repeat (a
/// 3.1x "slowdown" with p = 2/252); C: the first point 30% slower.
fn sets(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let t = template(dir);
    let a = set(&t, POINTS, [100, 103, 98, 101, 99], [60, 62, 58, 61, 59]);
    let b = set(&t, POINTS, [102, 97, 100, 104, 99], [40, 42, 38, 41, 39]);
    let mut c = set(&t, POINTS, [70, 72, 69, 71, 68], [60, 62, 58, 61, 59]);
    for p in &mut c.points {
        if p.label != POINTS[0] {
            *p = repeat(&t.points[0], &p.label.clone(), p.repeat, 100, 60);
        }
    }
    (
        write(dir, "a.json", &a),
        write(dir, "b.json", &b),
        write(dir, "c.json", &c),
    )
}

fn compare(args: &[&str]) -> std::process::Output {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

#[test]
fn identical_settings_pass_the_default_gate_and_a_real_drop_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = sets(dir.path());
    let (a, b, c) = (path_str(&a), path_str(&b), path_str(&c));
    // The p50 rise is there, and called slower uncorrected...
    let out = compare(&[a, b, "--output", "json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout_ok(&out)).unwrap();
    let p50 = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["point"] == POINTS[0] && r["metric"] == "p50 latency")
        .unwrap();
    assert_eq!(p50["verdict"], "slower", "{p50}");
    assert!((f(&p50["ratio"]) - 3.1).abs() < 0.01, "{p50}");
    assert!((f(&p50["p_value"]) - 2.0 / 252.0).abs() < 1e-9, "{p50}");
    // ...but the default gate judges the three points' rates (IOPS, at
    // 4 KiB), none of which moved: exit 0.
    let out = compare(&[a, b, "--fail-if-slower", "10"]);
    let text = stdout_ok(&out);
    assert!(
        text.contains("gate: 3 tests (rate), Holm-corrected at alpha 0.05"),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with(POINTS[0]) && l.contains("fails")),
        "{text}"
    );
    // A 30% drop of the first point's rate: 2/252 alone, 3 x 2/252 =
    // 0.024 after the correction, below 0.05: exit 1, one line.
    let out = compare(&[a, c, "--fail-if-slower", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("1 gated figure is significantly slower by more than 10% after Holm's correction over 3 tests")
            && err.contains(POINTS[0])
            && err.contains("IOPS")
            && err.contains("p Holm 0.024"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("0.024 fails"));
    // Not by more than 40%.
    let out = compare(&[a, c, "--fail-if-slower", "40"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // The JSON and the page carry the corrected p-values.
    let page = dir.path().join("c.html");
    let out = compare(&[
        a,
        c,
        "--fail-if-slower",
        "10",
        "--output",
        "json",
        "--html",
        path_str(&page),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["gate"]["tests"], 3);
    assert_eq!(json["gate"]["failed"].as_array().unwrap().len(), 1);
    let gated: Vec<f64> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["gated"] == true)
        .map(|r| f(&r["p_holm"]))
        .collect();
    assert_eq!(gated.len(), 3);
    assert!(
        gated.iter().any(|p| (p - 6.0 / 252.0).abs() < 1e-9),
        "{gated:?}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("p Holm") && html.contains("Holm-corrected"));
}

#[test]
fn gate_names_the_figures_judged_and_corrects_for_all_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _) = sets(dir.path());
    let (a, b) = (path_str(&a), path_str(&b));
    // p50 gated: three tests, 3 x 2/252 = 0.024 for the first point's
    // 3.1x: it fails.
    let out = compare(&[a, b, "--fail-if-slower", "10", "--gate", "p50"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("p50 latency") && err.contains("over 3 tests") && err.lines().count() == 1,
        "{err}"
    );
    // Every figure of every point gated (the old gate, corrected): 15
    // tests, and 15 x 2/252 = 0.12 is no evidence. As a list or repeated.
    for args in [
        &["--gate", "mbps,iops,mean,p50,p99"][..],
        &[
            "--gate", "mbps", "--gate", "iops", "--gate", "mean", "--gate", "p50", "--gate", "p99",
        ][..],
    ] {
        let mut all = vec![a, b, "--fail-if-slower", "10"];
        all.extend_from_slice(args);
        let out = compare(&all);
        let text = stdout_ok(&out);
        assert!(
            text.contains("gate: 15 tests (mbps,iops,mean,p50,p99)"),
            "{text}"
        );
    }
    // --gate without --fail-if-slower, or a figure compare does not
    // show, is bad usage.
    let out = compare(&[a, b, "--gate", "p50"]);
    assert_refused(&out, &["--fail-if-slower"]);
    let out = compare(&[a, b, "--fail-if-slower", "10", "--gate", "p95"]);
    assert_refused(&out, &["p95"]);
}

#[test]
fn no_point_in_common_exits_1_with_one_line_and_a_missing_file_2() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _, _) = sets(dir.path());
    let t: RunReport = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let other = set(
        &t,
        ["seqread 1m qd1", "seqread 1m qd8", "seqread 1m qd32"],
        [100, 103, 98, 101, 99],
        [60, 62, 58, 61, 59],
    );
    let d = write(dir.path(), "d.json", &other);
    let out = compare(&[path_str(&a), path_str(&d), "--fail-if-slower", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("iosurvey: no point of")
            && err.contains("matched one of")
            && err.contains("`randread 4k qd1`")
            && err.contains("`seqread 1m qd1`")
            && err.contains("differ in label"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing compared, nothing shown");
    // Without the gate too.
    let out = compare(&[path_str(&a), path_str(&d)]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let missing = dir.path().join("missing.json");
    let out = compare(&[path_str(&a), path_str(&missing)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

/// Regression (issue 28 §5): compare's text printed a report's hostname,
/// labels and mode raw, so a report could set the terminal's title, clear
/// the screen or forge table lines. Every control character from the
/// reports is spelled out (`\x1b`), on stdout and stderr alike.
#[test]
fn control_characters_in_reports_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let t = template(dir.path());
    let evil = [
        "\u{1b}]0;pwned\u{7}qd1",
        "\u{1b}[2Jqd8\nforged  line",
        "qd\u{9b}32\u{202e}",
    ];
    let mut a = set(&t, evil, [100, 103, 98, 101, 99], [60, 62, 58, 61, 59]);
    let mut b = set(&t, evil, [70, 72, 69, 71, 68], [60, 62, 58, 61, 59]);
    for r in [&mut a, &mut b] {
        r.host.hostname = "\u{1b}]2;title\u{7}host\u{1b}[H".into();
        for p in &mut r.points {
            for s in &mut p.streams {
                s.label = "\u{1b}[31mclass".into();
            }
        }
    }
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let out = compare(&[path_str(&pa), path_str(&pb), "--fail-if-slower", "5"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let acted = text
            .chars()
            .find(|&c| (c.is_control() && c != '\n') || c == '\u{202e}');
        assert_eq!(acted, None, "{name} carries a control character: {text:?}");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\\x1b]2;title\\x07host"), "{text}");
    assert!(text.contains("\\x1b[2Jqd8\\x0aforged  line"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("forged")), "{text}");
}

/// Regression (issue 28 §5): `report` (and `compare`) took
/// `schema_version: 0` and `mode: "bogus"` for reports. Each is refused
/// with one line and exit 2, and every version from the first is read.
#[test]
fn documents_no_version_wrote_are_refused_and_every_older_version_read() {
    let dir = tempfile::tempdir().unwrap();
    let t = template(dir.path());
    let doc = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = serde_json::to_value(&t).unwrap();
        edit(&mut v);
        let p = dir.path().join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let zero = doc("zero.json", &|v| v["schema_version"] = 0.into());
    let bogus = doc("bogus.json", &|v| v["mode"] = "bogus\u{1b}[2J".into());
    let page = dir.path().join("page.html");
    for (bad, needle) in [
        (&zero, "schema_version 0"),
        (&bogus, "mode \"bogus\\x1b[2J\""),
    ] {
        for out in [
            iosurvey(&["report", path_str(bad), "--html", path_str(&page)]),
            compare(&[path_str(bad), path_str(bad)]),
        ] {
            assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
            let err = stderr_of(&out);
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains(needle), "{err}");
            assert!(!err.contains('\u{1b}'), "{err:?}");
        }
        assert!(!page.exists());
    }
    for v in 1..=iosurvey_report::SCHEMA_VERSION {
        let old = doc(&format!("v{v}.json"), &|d| d["schema_version"] = v.into());
        let out = iosurvey(&["report", path_str(&old), "--html", path_str(&page)]);
        assert_eq!(out.status.code(), Some(0), "v{v}: {}", describe(&out));
    }
}

/// The errors of `doc` against `schema/compare-report.schema.json`.
fn compare_schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/compare-report.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[test]
fn compare_json_validates_against_the_published_compare_schema() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b, c) = sets(d);
    let (a, b, c) = (path_str(&a), path_str(&b), path_str(&c));
    // Three runs, to stdout.
    let out = compare(&[a, b, c, "--output", "json"]);
    let three: serde_json::Value = serde_json::from_str(&stdout_ok(&out)).unwrap();
    assert_eq!(three["runs"].as_array().unwrap().len(), 3);
    // A gate that fails, to a file.
    let file = d.join("c.compare.json");
    let out = compare(&[a, c, "--fail-if-slower", "10", "--json", path_str(&file)]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let gated: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(gated["gate"].is_object(), "{gated}");
    // Two real runs of other settings: what differs is listed.
    let (x, y) = (d.join("x.json"), d.join("y.json"));
    let f = d.join("data");
    std::fs::write(&f, random_bytes(MIB as usize, 9)).unwrap();
    for (bs, out) in [("4k", &x), ("8k", &y)] {
        let r = iosurvey(&[
            "run",
            path_str(&f),
            "--rw",
            "read",
            "--bs",
            bs,
            "--bytes",
            "256k",
            "--json",
            path_str(out),
            "--quiet",
        ]);
        assert_eq!(r.status.code(), Some(0), "{}", describe(&r));
    }
    let out = compare(&[path_str(&x), path_str(&y), "--output", "json"]);
    let real: serde_json::Value = serde_json::from_str(&stdout_ok(&out)).unwrap();
    let bs = real["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["setting"] == "bs")
        .unwrap_or_else(|| panic!("bs differs: {real}"));
    assert_eq!((&bs["a"], &bs["b"]), (&"4096".into(), &"8192".into()));
    for doc in [&three, &gated, &real] {
        let errors = compare_schema_errors(doc);
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // The schema is closed: a property compare does not write is refused.
    let mut extra = real.clone();
    extra["rows"][0]["surprise"] = 1.into();
    assert!(!compare_schema_errors(&extra).is_empty());
}
