//! `iosurvey matrix` end to end: a small real matrix on test files (ORION's
//! files, a schema-valid report, ORION's spellings, targets from
//! `<testname>.lun`), refusals with exit code 2 and one line; and, as root,
//! a raid0 matrix over two zram devices and a loop device throttled with the
//! blkio cgroup, where the large MB/s level off at the limit (seed 004's
//! "mountain where the top was neatly cut off").

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

pub(super) fn matrix(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .arg("matrix")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running iosurvey")
}

/// The one file in `dir` ending in `suffix`.
pub(super) fn file_ending(dir: &Path, suffix: &str) -> String {
    let names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(names.len(), 1, "{suffix}: {names:?}");
    fs::read_to_string(&names[0]).unwrap()
}

/// Two 16 MiB files of random data in a fresh directory.
pub(super) fn two_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (i, name) in ["a.dat", "b.dat"].iter().enumerate() {
        fs::write(dir.path().join(name), random_bytes(16 << 20, i as u64)).unwrap();
    }
    dir
}

#[test]
fn a_basic_matrix_on_files_writes_orions_files_and_a_valid_report() {
    let dir = two_files();
    let out = matrix(
        dir.path(),
        &["a.dat", "b.dat", "--num-disks", "1", "--time", "200ms"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("matrix of 7 points") && err.contains("this will take about 1 seconds"),
        "{err}"
    );
    let summary = file_ending(dir.path(), "_summary.txt");
    for line in [
        "Test: orion",
        "Small IO size: 8 KB",
        "Large IO size: 1024 KB",
        "Simulated Array Type: CONCAT",
        "Small Columns:,      0,      1,      2,      3,      4,      5",
        "Large Columns:,      0,      1,      2",
        // ORION's grid, with the (0, 0) cell it never runs.
        "Total Data Points: 8",
        "Name: a.dat\tSize: 16777216",
        "2 FILEs found.",
        "Maximum Large MBPS=",
        "Maximum Small IOPS=",
        "Minimum Small Latency=",
    ] {
        assert!(summary.contains(line), "no {line:?} in\n{summary}");
    }
    let mbps = file_ending(dir.path(), "_mbps.csv");
    assert!(
        mbps.starts_with("Large/Small,      0\n          1,"),
        "{mbps}"
    );
    let iops = file_ending(dir.path(), "_iops.csv");
    assert!(
        iops.starts_with("Large/Small,      1,      2,      3,      4,      5\n          0,"),
        "{iops}"
    );
    assert!(file_ending(dir.path(), "_lat.csv").lines().count() == 2);
    assert!(file_ending(dir.path(), "_hist.txt").contains("Small Read Latency: avg="));
    let report: Value = serde_json::from_str(&file_ending(dir.path(), "_report.json")).unwrap();
    assert_valid(&report);
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 7);
    for p in points {
        let streams = p["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 1, "one class a cell in the basic matrix");
        assert!(u(&streams[0]["read"]["ops"]) > 0, "{}", p["label"]);
        assert_eq!(streams[0]["array"]["members"], serde_json::json!([0, 1]));
    }
}

#[test]
fn orion_spellings_and_a_lun_file_are_accepted() {
    let dir = two_files();
    fs::write(dir.path().join("t1.lun"), "a.dat\n\nb.dat\n").unwrap();
    let out = matrix(
        dir.path(),
        &[
            "-run",
            "advanced",
            "-testname",
            "t1",
            "-num_disks",
            "2",
            "-size_small",
            "4",
            "-size_large",
            "512",
            "-type",
            "seq",
            "-simulate",
            "raid0",
            "-stripe",
            "1024",
            "-write",
            "0",
            "-duration",
            "1",
            "-matrix",
            "point",
            "-num_small",
            "3",
            "-num_large",
            "2",
            "-cache_size",
            "0",
            "-verbose",
            "--output",
            "json",
            "--quiet",
        ],
    );
    let report = report_of(&out);
    assert_valid(&report);
    let p = &report["points"][0];
    assert_eq!(p["label"], "small=3 large=2");
    let s = p["streams"].as_array().unwrap();
    assert_eq!((u(&s[0]["bs"]), u(&s[0]["outstanding"])), (4096, 3));
    assert_eq!((u(&s[1]["bs"]), u(&s[1]["outstanding"])), (512 << 10, 8));
    assert_eq!(
        (s[1]["pattern"].as_str(), u(&s[1]["regions"])),
        (Some("forward"), 2)
    );
    assert_eq!(s[1]["array"]["layout"], "raid0");
    assert_eq!(u(&p["settings"]["time_ns"]), 1_000_000_000);
    assert!(u(&s[0]["read"]["ops"]) > 0 && u(&s[1]["read"]["ops"]) > 0);
    assert!(file_ending(dir.path(), "_summary.txt").contains("Test: t1"));
}

#[test]
fn bad_matrices_are_refused_with_one_line_and_exit_2() {
    let dir = two_files();
    for (args, want) in [
        (
            &["a.dat", "--write-pct", "101"][..],
            "--write-pct 101 is out of range",
        ),
        (
            &["a.dat", "--matrix", "row"],
            "--matrix row needs --num-large",
        ),
        // ORION's -write is the percentage, under its own name.
        (
            &["a.dat", "-write", "101"],
            "--write-pct 101 is out of range",
        ),
        // A switch elsewhere, never a percentage here.
        (&["a.dat", "--write"], "unexpected argument '--write' found"),
        (
            &["a.dat", "--run", "simple", "--matrix", "col"],
            "--run advanced only",
        ),
        (&["--testname", "none"], "none.lun cannot be read"),
        (&["a.dat", "--cache-warm", "soon"], "--cache-warm 'soon'"),
        (
            &["a.dat", "--run", "sometimes"],
            "invalid value 'sometimes'",
        ),
        (&["a.dat", "--out", "missing-dir"], "not a directory"),
        // ORION's spelling, as a user pastes it: a name, not a path.
        (
            &["a.dat", "-testname", "../x"],
            "is a path; the test name is a name",
        ),
        (&["a.dat", "--testname", "sub/x"], "is a path"),
    ] {
        let out = matrix(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Two zram devices filled with random data, then a raid0 basic matrix.
#[test]
fn a_raid0_matrix_over_two_zram_devices() {
    let _lock = serial();
    let a = need!(Zram::new(64 * MIB));
    let b = need!(Zram::new(64 * MIB));
    let (pa, pb) = (path_str(a.path()), path_str(b.path()));
    for dev in [pa, pb] {
        let w = iosurvey(&[
            "run",
            dev,
            "--rw",
            "write",
            "--bs",
            "1m",
            "--qd",
            "4",
            "--allow-destroy",
            "--quiet",
        ]);
        assert_eq!(w.status.code(), Some(0), "{}", describe(&w));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = matrix(
        dir.path(),
        &[
            pa,
            pb,
            "--simulate",
            "raid0",
            "--num-disks",
            "1",
            "--time",
            "300ms",
            "--output",
            "json",
        ],
    );
    let report = report_of(&out);
    assert_valid(&report);
    assert_eq!(report["points"].as_array().unwrap().len(), 7);
    let summary = file_ending(dir.path(), "_summary.txt");
    assert!(
        summary.contains("Simulated Array Type: RAID 0"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("Name: {pa}\tSize: {}", 64 * MIB)),
        "{summary}"
    );
    // Writes to devices need --allow-destroy.
    let out = matrix(
        dir.path(),
        &[pa, pb, "--write-pct", "25", "--time", "200ms"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

/// A loop device read-throttled at 20 MiB/s: large MB/s climb to the
/// limit and stay there, whatever the load (the cut-off mountain top).
#[test]
fn large_mbps_level_off_at_a_throttled_limit() {
    let _lock = serial();
    need!(require_blkio());
    let dev = need!(LoopDev::new(128 * MIB, 7));
    let limit = 20.0 * MIB as f64 / 1e6;
    let cg = need!(Cgroup::new());
    cg.set(
        "blkio.throttle.read_bps_device",
        &format!("{} {}", maj_min(dev.path()), 20 * MIB),
    );
    let dir = tempfile::tempdir().unwrap();
    let out_dir = path_str(dir.path());
    let out = cg.run_iosurvey(&[
        "matrix",
        path_str(dev.path()),
        "--run",
        "dss",
        "--num-disks",
        "3",
        "--size-large",
        "128k",
        "--time",
        "3s",
        "--cache-warm",
        "1s",
        "--out",
        out_dir,
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let mbps = file_ending(dir.path(), "_mbps.csv");
    let rows: Vec<(u32, f64)> = mbps
        .lines()
        .skip(1)
        .map(|l| {
            let (large, v) = l.split_once(',').unwrap();
            (large.trim().parse().unwrap(), v.trim().parse().unwrap())
        })
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6],
        "{mbps}"
    );
    for (large, v) in &rows {
        assert!(
            *v <= limit * 1.05,
            "large={large}: {v} MB/s beat the {limit} MB/s limit\n{mbps}"
        );
        assert!(
            *v >= limit * 0.85,
            "large={large}: {v} MB/s is far below the plateau\n{mbps}"
        );
    }
}

#[test]
fn the_cache_is_warmed_before_large_sequential_points_as_orion_does() {
    let dir = two_files();
    let plan = |extra: &[&str]| {
        let mut args = vec!["a.dat", "--type", "seq", "--num-disks", "1", "--time", "1s"];
        args.extend_from_slice(extra);
        args.push("--dry-run");
        let out = matrix(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    // Without -cache_size: ORION's 2 minutes, before the 2 large points only.
    let text = plan(&[]);
    assert_eq!(text.matches("after 120s unmeasured").count(), 2, "{text}");
    assert!(text.contains("estimated duration: 247 s"), "{text}");
    // -cache_size N: N MB moved; 0: none.
    let text = plan(&["-cache_size", "64"]);
    assert_eq!(
        text.matches("after 67108864 bytes unmeasured").count(),
        2,
        "{text}"
    );
    let text = plan(&["-cache_size", "0"]);
    assert!(
        !text.contains("unmeasured") && text.contains("estimated duration: 7 s"),
        "{text}"
    );
    // A real run warms up by bytes, and the summary says so as ORION does.
    let out = matrix(
        dir.path(),
        &[
            "a.dat",
            "-type",
            "seq",
            "-num_disks",
            "1",
            "-duration",
            "1",
            "-matrix",
            "point",
            "-num_small",
            "0",
            "-num_large",
            "1",
            "-cache_size",
            "8",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("an unmeasured cache warm-up: 8388608 bytes moved"),
        "{err}"
    );
    let summary = file_ending(dir.path(), "_summary.txt");
    assert!(summary.contains("Cache Size: 8 MB\n"), "{summary}");
    let report: Value = serde_json::from_str(&file_ending(dir.path(), "_report.json")).unwrap();
    let p = &report["points"][0];
    assert_eq!(u(&p["settings"]["warm_bytes"]), 8 << 20);
    let elapsed = u(&p["elapsed_ns"]);
    assert!(
        (1_000_000_000..3_000_000_000).contains(&elapsed),
        "measured after the warm-up: {elapsed}"
    );
}

/// A 64 MiB loop device over a sparse file on a 16 MiB tmpfs that another
/// file has already filled: every write fails (ENOSPC), whatever its
/// offset (with room left, a later point's writes landed on the pages an
/// earlier one had taken and passed). Detached (field order) before the
/// tmpfs is unmounted.
struct FailingDev {
    dev: LoopDev,
    _fs: Mount,
}

impl FailingDev {
    fn new() -> Result<FailingDev, String> {
        require_root_and(&["losetup", "mount", "umount"])?;
        let fs = Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=16m"])?;
        let file = fs.path().join("backing.img");
        fs::File::create(&file)
            .and_then(|f| f.set_len(64 * MIB))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        fill_until_full(&fs.path().join("filler"))?;
        let dev = LoopDev::attach(&file, &["--direct-io=on"])?;
        Ok(FailingDev { dev, _fs: fs })
    }
}

/// Writes `path` until its filesystem is full.
fn fill_until_full(path: &Path) -> Result<(), String> {
    use std::io::Write;
    let mut f = fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let chunk = vec![0x5a_u8; 64 * 1024];
    loop {
        match f.write(&chunk) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(28) => return Ok(()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
}

/// Regression (issue 28 §5): on failing storage, matrix said nothing, and
/// its table, `_summary.txt` and CSVs showed the failed points as real
/// figures. Now each failed point is said on stderr as it ends (exit 1),
/// and marked FAILED in the text table, the summary (and left out of its
/// maxima), every CSV, the histograms file and the JSON.
#[test]
fn failed_points_are_said_and_marked_failed_in_every_output() {
    let _lock = serial();
    let full = need!(FailingDev::new());
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = matrix(
        dir.path(),
        &[
            path_str(full.dev.path()),
            "--run",
            "oltp",
            "--num-disks",
            "1",
            "--write-pct",
            "100",
            "--time",
            "300ms",
            "--allow-destroy",
            "--json",
            path_str(&json),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Small=1 Large=0: first failed I/O: write at offset")
            && err.contains("ENOSPC"),
        "the failure is not said: {err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 5, "{text}");
    assert!(rows.iter().all(|r| r.contains("FAILED")), "{text}");
    let summary = file_ending(dir.path(), "_summary.txt");
    assert!(summary.contains("FAILED Data Points: 5 of 5"), "{summary}");
    assert!(!summary.contains("Maximum Small IOPS"), "{summary}");
    for suffix in ["_iops.csv", "_lat.csv"] {
        let csv = file_ending(dir.path(), suffix);
        let cells: Vec<&str> = csv
            .lines()
            .skip(1)
            .flat_map(|l| l.split(',').skip(1))
            .map(str::trim)
            .collect();
        assert_eq!(cells, ["FAILED"; 5], "{suffix}: {csv}");
    }
    let hist = file_ending(dir.path(), "_hist.txt");
    assert!(
        hist.contains("FAILED @ Small=5 and Large=0: first failed I/O"),
        "{hist}"
    );
    let report = json_file(&json);
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 5);
    assert!(
        points.iter().all(|p| p["failure"]["error"] == "ENOSPC"),
        "{report}"
    );
}

/// Issue 28 §5: a `.lun` file's lines are input data. A target named there
/// with an escape sequence in its name is refused with its name spelled
/// out (`\x1b`), never acted on by the terminal.
#[test]
fn a_lun_line_with_an_escape_sequence_is_shown_spelled_out() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("orion.lun"),
        "/nonexistent/\u{1b}]0;pwned\u{7}x\n",
    )
    .unwrap();
    let out = matrix(dir.path(), &["--time", "200ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\\x1b]0;pwned\\x07x"), "{err:?}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
}

#[test]
fn the_csv_and_report_json_grow_in_the_files_the_run_wrote_first() {
    // Saved after every point: the rows of the new point written at the
    // end of the same file, not the whole CSV put in a new file each time;
    // ORION's report.json (the JSON report) appended to as --json is.
    // The file seen after an early point is held open: at the end it is
    // still the file at the name, and holds every point's rows.
    use std::io::{Read, Seek};
    let dir = two_files();
    let csv = dir.path().join("r.csv");
    let mut child = std::process::Command::new(BIN)
        .args(["matrix", "a.dat", "b.dat", "--num-disks", "1"])
        .args(["--time", "300ms", "--csv", "r.csv", "-q"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting iosurvey");
    let t0 = std::time::Instant::now();
    let mut early = loop {
        if let Ok(f) = fs::File::open(&csv) {
            break f;
        }
        if t0.elapsed().as_secs() >= 30 {
            let _ = child.kill();
            panic!("no CSV after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let mut seen = String::new();
    early.read_to_string(&mut seen).unwrap();
    // ORION's report.json, the JSON report: each point appended to it.
    let report_json = || {
        fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("_report.json"))
    };
    let mut early_json = loop {
        if let Some(f) = report_json().and_then(|p| fs::File::open(p).ok()) {
            break f;
        }
        if t0.elapsed().as_secs() >= 30 {
            let _ = child.kill();
            panic!("no _report.json after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let last = fs::read_to_string(&csv).unwrap();
    let rows = |t: &str| t.lines().count();
    // 7 points, each with its rows; the file was seen before the last.
    assert!(
        rows(&seen) < rows(&last),
        "seen {seen:?}, at the end {last:?}"
    );
    assert!(
        last.starts_with(&seen),
        "the start changed: {seen:?} {last:?}"
    );
    early.rewind().unwrap();
    let mut held = String::new();
    early.read_to_string(&mut held).unwrap();
    assert_eq!(held, last, "the file seen early is not the one at the name");
    let mut held_json = String::new();
    early_json.read_to_string(&mut held_json).unwrap();
    let json = fs::read_to_string(report_json().unwrap()).unwrap();
    assert_eq!(held_json, json, "the report.json seen early was replaced");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["points"].as_array().unwrap().len(), 7);
    assert_valid(&report);
    // Whole rows, each in its place: every line has the header's fields.
    assert!(!last.contains('\0'), "{last:?}");
    let fields = |l: &str| l.split(',').count();
    let width = fields(last.lines().next().unwrap());
    assert!(last.lines().all(|l| fields(l) == width), "{last}");
    let points: std::collections::BTreeSet<_> = last
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    assert_eq!(points.len(), 7, "{last}");
}
