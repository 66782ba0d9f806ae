//! `iosurvey survey` end to end: on a test file it creates (any user), and
//! on loop and zram devices the tests create and remove (root only; without
//! root they print "skipping: <reason>" and pass). Lines for every point,
//! `.summary` and `.detail` files, aggregates that agree with their
//! regions, refusals with exit code 2, and 4096 outstanding I/Os per device.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

/// The flags of the small sweep: 1 to 4 regions, 1 to 8 outstanding I/Os.
const SMALL: &str = "--crglo 1 --crghi 4 --thrlo 1 --thrhi 8 --rszlo 64k --rszhi 64k";
/// (crg, thr) of the small sweep, in sgpdd-survey's order.
#[rustfmt::skip]
const SMALL_POINTS: [(u64, u64); 9] =
    [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8), (4, 4), (4, 8)];

/// `iosurvey survey TARGETS FLAGS` (FLAGS split at blanks).
fn survey(targets: &[&Path], flags: &str) -> std::process::Output {
    let mut args = vec!["survey"];
    args.extend(targets.iter().map(|t| path_str(t)));
    args.extend(flags.split_whitespace());
    iosurvey(&args)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn field(line: &str, key: &str) -> u64 {
    let mut w = line.split_whitespace();
    w.find(|x| *x == key).and_then(|_| w.next()).map_or_else(
        || panic!("no {key} in {line:?}"),
        |v| v.trim_end_matches('K').parse().unwrap(),
    )
}

/// Checks the summary: the title, then one line per (crg, thr) with both
/// actions, crg and thr summed over `devices`.
fn check_summary(text: &str, devices: u64, points: &[(u64, u64)]) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains(" sgpdd-survey on "), "{text}");
    assert_eq!(lines.len(), 1 + points.len(), "{text}");
    for (line, &(crg, thr)) in lines[1..].iter().zip(points) {
        assert_eq!(field(line, "dev"), devices, "{line}");
        assert_eq!(
            (field(line, "crg"), field(line, "thr")),
            (crg * devices, thr * devices)
        );
        assert!(
            line.contains(" write ") && line.contains(" read "),
            "{line}"
        );
        assert_eq!(line.matches('[').count(), 2, "{line}");
    }
}

/// Every point of a JSON report: the regions' bytes add up to the point's
/// total and to what the regions cover, and the aggregate (all bytes over
/// the last region's end) lies between the slowest region and the sum of
/// the regions' rates.
fn check_aggregates(report: &Value) -> usize {
    let points = report["points"].as_array().expect("points");
    for p in points {
        let action = if p["label"].as_str().unwrap().ends_with("write") {
            "write"
        } else {
            "read"
        };
        let streams = p["streams"].as_array().unwrap();
        let bytes: Vec<u64> = streams.iter().map(|s| u(&s[action]["bytes"])).collect();
        let sum: u64 = bytes.iter().sum();
        assert_eq!(sum, u(&p["total"][action]["bytes"]), "{}", p["label"]);
        let spans: u64 = streams.iter().map(|s| u(&s["span"])).sum();
        assert_eq!(sum, spans, "one pass over every region: {}", p["label"]);
        let rate = |b: u64, ns: u64| b as f64 / (ns as f64 / 1e9);
        let rates: Vec<f64> = streams
            .iter()
            .zip(&bytes)
            .map(|(s, &b)| rate(b, u(&s["elapsed_ns"])))
            .collect();
        let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let aggregate = rate(sum, u(&p["elapsed_ns"]));
        let total: f64 = rates.iter().sum();
        assert!(
            min <= aggregate * 1.000001,
            "{}: {min} > {aggregate}",
            p["label"]
        );
        assert!(
            aggregate <= total * 1.000001,
            "{}: {aggregate} > {total}",
            p["label"]
        );
    }
    points.len()
}

fn data_lines(path: &Path) -> usize {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.starts_with('#')).count()
}

#[test]
fn a_created_test_file_gets_every_point_summary_detail_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let prefix = dir.path().join("sv");
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let flags = format!(
        "--size 8m -q --out {} --json {} --csv {} {SMALL}",
        prefix.display(),
        json.display(),
        csv.display()
    );
    let out = survey(&[&f], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    check_summary(&text, 1, &SMALL_POINTS);
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l.contains("sz     8192K rsz   64K")),
        "{text}"
    );
    let summary = fs::read_to_string(dir.path().join("sv.summary")).unwrap();
    assert_eq!(summary, text);
    // 1, 2 or 4 regions a point, written and read.
    let regions: u64 = SMALL_POINTS.iter().map(|p| p.0 * 2).sum();
    assert_eq!(data_lines(&dir.path().join("sv.detail")), regions as usize);
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["mode"], "survey");
    assert_valid(&report);
    assert_eq!(check_aggregates(&report), 18);
    let rows = fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 1 + 18, "{rows}");
    assert!(
        rows.starts_with("point,devices,rsz,crg,thr,action,"),
        "{rows}"
    );
    assert!(!f.exists(), "the test file is removed");
}

#[test]
fn the_legacy_layout_prints_n_times_the_slowest_region() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let flags = "--size 4m -q --format legacy --crglo 2 --crghi 2 --thrlo 2 --thrhi 4";
    let out = survey(
        &[&f],
        &format!("{flags} --rszlo 128k --rszhi 128k --actions read"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in lines {
        assert!(
            l.starts_with("total_size     4096K rsz  128 crg     2 thr "),
            "{l}"
        );
        assert!(l.contains(" read ") && l.contains(" MB/s     2 x ") && !l.contains("write"));
    }
}

#[test]
fn dry_run_prints_the_plan_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let prefix = dir.path().join("sv");
    let flags = format!("--size 8m --dry-run --out {} {SMALL}", prefix.display());
    let out = survey(&[&f], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    assert!(text.starts_with("survey plan: 18 points"), "{text}");
    assert!(text.contains("rsz=64KiB crg=4 thr=8 read"), "{text}");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn bad_invocations_get_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let theirs = dir.path().join("theirs.dat");
    fs::write(&theirs, random_bytes(8 << 20, 3)).unwrap();
    let (f, theirs) = (path_str(&f), path_str(&theirs));
    // @F is a new test file; @T is 8 MiB of someone else's data.
    let cases = [
        ("@F", "--size is required"),
        ("@F --size 0", "--size must be greater than zero"),
        (
            "@F --size 8m --rszlo 2m",
            "--rszlo 2097152 is greater than --rszhi",
        ),
        ("@F --size 8m --crglo 8 --crghi 4", "--crglo 8 is greater"),
        (
            "@F --size 8m --thrlo 0",
            "--thrlo must be greater than zero",
        ),
        ("@F --size 8m --actions write,raed", "unknown action 'raed'"),
        (
            "@F --size 8m --rszlo 1000 --rszhi 1000",
            "not a multiple of",
        ),
        ("@F --size 8m", "lower --crghi (to 8 at most)"),
        ("/dev/iosurvey-none --size 8m", "no such device"),
        ("@F --size 8m --crghi 4 --out /nonexistent/p", "--out"),
        ("@T --size 8m --crghi 4 --actions read", "too small"),
        ("@T --size 4m --crghi 4", "--allow-destroy"),
    ];
    for (args, want) in cases {
        let args = args.replace("@F", f).replace("@T", theirs);
        let out = survey(&[], &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(want),
            "{args:?}: {err:?} does not say {want:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only theirs.dat"
    );
}

/// `iosurvey survey ARGS` with sgpdd-survey's variables `vars` set.
fn survey_env(vars: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .arg("survey")
        .args(args)
        .env_remove("scsidevs")
        .env_remove("rawdevs")
        .envs(vars.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running iosurvey")
}

#[test]
fn sgpdd_survey_variables_drive_the_survey_and_the_report_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let prefix = dir.path().join("sv");
    let devs = format!("{} {}", a.display(), b.display());
    let rslt = path_str(&prefix);
    let vars = [
        ("size", "8"),
        ("rszlo", "64"),
        ("rszhi", "64"),
        ("crglo", "1"),
        ("crghi", "2"),
        ("thrhi", "2"),
        ("actions", "write read"),
        ("scsidevs", devs.as_str()),
        ("rslt", rslt),
    ];
    // --crghi on the command line wins over crghi=2.
    let out = survey_env(&vars, &["--crghi", "1", "--output", "json"]);
    let report = report_of(&out);
    assert_valid(&report);
    let err = stderr_of(&out);
    let said = format!(
        "iosurvey: sgpdd-survey's variables taken: scsidevs=\"{devs}\" size=8 rszlo=64 rszhi=64 crglo=1 thrhi=2 actions=\"write read\" rslt={rslt} (the command line's own instead of crghi)"
    );
    assert_eq!(err.lines().next(), Some(said.as_str()), "{err}");
    let env: Vec<&str> = report["environment"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(env[0], format!("scsidevs={devs}"));
    assert!(env.contains(&"size=8") && !env.iter().any(|v| v.starts_with("crghi")));
    let line: Vec<&str> = report["command_line"].as_array().unwrap()[1..]
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(line, ["survey", "--crghi", "1", "--output", "json"]);
    // crg 1, thr 1 and 2, written then read: 4 points on both files.
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        assert_eq!(p["targets"].as_array().unwrap().len(), 2);
        let s = &p["streams"][0];
        // rsz 64 KB; size 8 MB a device, one region.
        assert_eq!((u(&s["bs"]), u(&s["span"])), (65536, 8 << 20));
    }
    let summary = fs::read_to_string(prefix.with_extension("summary")).unwrap();
    assert!(
        summary.contains("rsz   64K crg     2 thr     4 write"),
        "{summary}"
    );
    assert!(!a.exists() && !b.exists(), "the test files are removed");
}

#[test]
fn without_scsidevs_no_variable_is_read_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let fs_ = path_str(&f);
    // A shell's own `size` is not sgpdd-survey's: --size is still needed.
    let out = survey_env(&[("size", "8"), ("crghi", "2")], &[fs_]);
    assert_refused(&out, &["--size is required"]);
    assert_eq!(stderr_of(&out).lines().count(), 1);
    for (vars, want) in [
        (
            &[("scsidevs", fs_), ("size", "8g")][..],
            "sgpdd-survey's size=8g: give a whole number of MB",
        ),
        (
            &[("scsidevs", fs_), ("size", "8"), ("crghi", "lots")],
            "sgpdd-survey's crghi=lots: give a whole number",
        ),
        (
            &[("scsidevs", fs_), ("rawdevs", fs_), ("size", "8")],
            "both scsidevs and rawdevs are set",
        ),
        (
            &[("scsidevs", fs_), ("size", "8"), ("actions", "write raed")],
            "unknown action 'raed'",
        ),
    ] {
        let out = survey_env(vars, &[]);
        assert_refused(&out, &[want]);
        assert_eq!(stderr_of(&out).lines().count(), 1, "{vars:?}");
        assert!(out.stdout.is_empty(), "{vars:?}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn sigint_keeps_the_finished_points_in_the_summary_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let prefix = dir.path().join("sv");
    let summary = dir.path().join("sv.summary");
    let child = std::process::Command::new(BIN)
        .args([
            "survey",
            path_str(&f),
            "--size",
            "32m",
            "--rszlo",
            "4k",
            "--rszhi",
            "4k",
        ])
        .args(["-q", "--out", path_str(&prefix)])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !summary.exists() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let text = fs::read_to_string(&summary).unwrap();
    assert_eq!(text, stdout(&out), "the summary holds what was printed");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 2, "the first point is kept: {text}");
    assert!(lines[1].starts_with("dev  1 sz    32768K rsz    4K crg     1 thr     1 write "));
    for l in &lines[1..lines.len() - 1] {
        assert!(l.contains(" read ") && !l.contains("interrupted"), "{l}");
    }
    assert!(!f.exists(), "test file removed after Ctrl-C");
}

// ---------------------------------------------------------------------------
// Devices (root)
// ---------------------------------------------------------------------------

#[test]
fn two_loop_devices_aggregates_agree_with_their_regions() {
    let _lock = serial();
    need!(require_root());
    let a = need!(LoopDev::new(40 * MIB, 1));
    let b = need!(LoopDev::new(40 * MIB, 2));
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("sv");
    let json = dir.path().join("r.json");
    let flags = format!(
        "--size 32m --allow-destroy -q --json {} --out {} {SMALL}",
        json.display(),
        prefix.display()
    );
    let out = survey(&[a.path(), b.path()], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    check_summary(&text, 2, &SMALL_POINTS);
    assert!(
        text.lines().skip(1).all(|l| l.contains("sz    65536K")),
        "{text}"
    );
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(check_aggregates(&report), 18);
    let t = &report["points"][0]["targets"];
    assert_eq!(
        (t[0]["kind"].as_str(), t[1]["kind"].as_str()),
        (Some("block"), Some("block"))
    );
    // The regions start after the 1024-block boundary.
    let lbs = u(&t[0]["logical_block_size"]);
    assert_eq!(u(&report["points"][0]["streams"][0]["offset"]), 1024 * lbs);
    let summary = prefix.with_extension("summary");
    assert_eq!(fs::read_to_string(&summary).unwrap(), text);
    assert_eq!(data_lines(&summary), 1 + SMALL_POINTS.len());
    let regions: u64 = SMALL_POINTS.iter().map(|p| p.0 * 2 * 2).sum();
    assert_eq!(
        data_lines(&prefix.with_extension("detail")),
        regions as usize
    );
}

#[test]
fn scsidevs_names_loop_devices_that_take_writes_only_with_allow_destroy() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::new(40 * MIB, 4));
    let dev = path_str(l.path());
    let before = checksum(l.path(), None);
    let vars = [
        ("scsidevs", dev),
        ("size", "32"),
        ("crghi", "2"),
        ("thrhi", "2"),
    ];
    let out = survey_env(&vars, &["-q"]);
    assert_refused(&out, &["--allow-destroy"]);
    assert_eq!(checksum(l.path(), None), before, "the device was written");
    let out = survey_env(&vars, &["--allow-destroy", "-q", "--output", "json"]);
    let report = report_of(&out);
    let points = report["points"].as_array().unwrap();
    // crg 1 thr 1, crg 1 thr 2, crg 2 thr 2; write and read each.
    assert_eq!(points.len(), 6);
    assert_eq!(points[0]["targets"][0]["kind"], "block");
    assert_eq!(points[0]["targets"][0]["path"], dev);
    assert_eq!(u(&points[0]["streams"][0]["span"]), 32 << 20);
    assert_eq!(report["environment"][0], format!("scsidevs={dev}"));
}

#[test]
fn loop_device_writes_need_allow_destroy_and_the_device_must_be_big_enough() {
    let _lock = serial();
    need!(require_root());
    let a = need!(LoopDev::new(32 * MIB, 3));
    let before = checksum(a.path(), None);
    let out = survey(&[a.path()], "--size 16m --crghi 4 --thrhi 8");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));
    let out = survey(&[a.path()], "--size 32m --crghi 4 --allow-destroy");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("too small") && err.contains("--boundary"),
        "{err}"
    );
    assert_eq!(checksum(a.path(), None), before, "nothing was written");
    // Reads alone need no permission.
    let out = survey(
        &[a.path()],
        "--size 16m --actions read -q --crghi 2 --thrhi 2",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().count(),
        1 + 3,
        "(1, 1), (1, 2), (2, 2): {text}"
    );
    assert!(text
        .lines()
        .skip(1)
        .all(|l| l.contains(" read ") && !l.contains("write")));
}

#[test]
fn two_zram_devices_with_4096_outstanding_ios_each() {
    let _lock = serial();
    need!(require_root());
    let a = need!(Zram::new(72 * MIB));
    let b = need!(Zram::new(72 * MIB));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let flags = "--size 64m --rszlo 4k --rszhi 4k --crglo 256 --crghi 256 --allow-destroy -q";
    let flags = format!(
        "{flags} --thrlo 2048 --thrhi 4096 --json {}",
        json.display()
    );
    let out = survey(&[a.path(), b.path()], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    check_summary(&stdout(&out), 2, &[(256, 2048), (256, 4096)]);
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(check_aggregates(&report), 4);
    let p = &report["points"][2];
    assert_eq!(p["label"], "rsz=4KiB crg=256 thr=4096 write");
    let streams = p["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 512);
    let slots: u64 = streams.iter().map(|s| u(&s["outstanding"])).sum();
    assert_eq!(slots, 2 * 4096, "4096 outstanding I/Os per device");
    assert_eq!(u(&p["settings"]["workers"]), 1, "in one ring");
}

#[test]
fn zram_points_over_the_memory_check_print_enomem_and_do_no_io() {
    let _lock = serial();
    need!(require_root());
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap();
    let total = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .unwrap();
    let kib: u64 = total.split_whitespace().nth(1).unwrap().parse().unwrap();
    // (1 GiB in KiB * thr/2 + 64) * 2 regions must exceed MemTotal, with
    // thr/crg at most 16.
    let thr = (kib / (1 << 20) + 1).next_power_of_two().max(2);
    if thr > 32 {
        skip!("{kib} KiB of RAM is more than 32 outstanding 1 GiB records");
    }
    let z = need!(Zram::new(3 << 30));
    let flags = "--size 2g --actions read --rszlo 1g --rszhi 1g --crglo 2 --crghi 2 -q";
    let flags = format!("{flags} --thrlo {thr} --thrhi {thr}");
    let report = report_of(&survey(&[z.path()], &format!("{flags} --output json")));
    let p = &report["points"][0];
    assert_eq!(p["skipped"], "ENOMEM", "{p}");
    assert_valid(&report);
    assert_eq!(u(&p["total"]["read"]["bytes"]), 0);
    let out = survey(&[z.path()], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .ends_with(&format!("thr {thr:>5} ENOMEM")),
        "{text}"
    );
}

#[test]
fn a_point_deeper_than_one_ring_runs_on_as_many_rings() {
    // 2 zram devices x thr 40000: 80,000 outstanding I/Os, more than a
    // ring holds (65,536), so the point runs on two rings (two workers),
    // whole regions to each, and every record of every region is moved.
    let _lock = serial();
    need!(require_root());
    let a = need!(Zram::new(256 * MIB));
    let b = need!(Zram::new(256 * MIB));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let flags = format!(
        "--size 248m --rszlo 4k --rszhi 4k --crglo 2 --crghi 2 --thrlo 40000 --thrhi 40000 \
         --max-per-region 65536 --actions write,read --allow-destroy -q --json {}",
        json.display()
    );
    let out = survey(&[a.path(), b.path()], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    for p in report["points"].as_array().unwrap() {
        assert_eq!(u(&p["settings"]["workers"]), 2, "{}", p["label"]);
        let streams = p["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 4);
        let ops: u64 = streams
            .iter()
            .map(|s| class_ops(&s["read"]) + class_ops(&s["write"]))
            .sum();
        assert_eq!(ops, 2 * (248 * MIB) / 4096, "{}", p["label"]);
        assert!(streams.iter().all(|s| u(&s["outstanding"]) == 20000));
    }
}

#[test]
fn time_ends_each_point_before_its_pass_when_it_is_up() {
    // 256 MiB at 4 KiB records, one region, one I/O in flight: more than
    // 200 ms moves. Each point ends at its time, its regions short of
    // their pass, and never goes round again.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let json = dir.path().join("r.json");
    let flags = format!(
        "--size 256m --rszlo 4k --rszhi 4k --crglo 1 --crghi 1 --thrlo 1 --thrhi 1 --time 200ms -q --json {}",
        json.display()
    );
    let out = survey(&[&f], &flags);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    for p in report["points"].as_array().unwrap() {
        assert_eq!(u(&p["settings"]["time_ns"]), 200_000_000);
        let s = &p["streams"][0];
        let ops = class_ops(&s["read"]) + class_ops(&s["write"]);
        assert!(ops > 0 && ops < (256 << 20) / 4096, "{}: {ops}", p["label"]);
        assert!(u(&p["elapsed_ns"]) < 2_000_000_000);
    }
    let out = survey(&[&f], "--size 8m --time 0s");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--time must be greater than zero"));
}
