//! `iosurvey diskperf` run for real: short sweeps on temp files (the table,
//! its CSV and JSON), read-only runs that never write, bad invocations, and
//! (as root) loop and zram devices the tests create and remove.

use crate::common::*;
use serde_json::Value;

pub(super) fn diskperf(args: &[&str]) -> std::process::Output {
    let mut all = vec!["diskperf"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

/// The data lines of a diskperf table (every line that is not a comment),
/// split into fields; blank lines end a data set.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

#[test]
fn a_write_sweep_gives_a_row_per_size_and_matching_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let (csv, json) = (dir.path().join("t.csv"), dir.path().join("t.json"));
    let out = diskperf(&[
        path_str(&f),
        "--size",
        "16m",
        "--write",
        "--min",
        "4k",
        "--max",
        "16k",
        "--time",
        "200ms",
        "--label",
        "temp file",
        "--csv",
        path_str(&csv),
        "--json",
        path_str(&json),
    ]);
    let text = stdout_ok(&out);
    assert!(text.contains("# iosurvey diskperf: temp file"), "{text}");
    assert!(text.contains("engine sync, O_DIRECT"), "{text}");
    let rows = rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
    for (r, size) in rows.iter().zip(["4096", "8192", "16384"]) {
        assert_eq!(r.len(), 7, "{r:?}");
        assert_eq!(r[0], size);
        assert!(r[1..].iter().all(|v| num(v) > 0.0), "{r:?}");
    }

    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "req_size,fwd_wt,fwd_rd,bwd_wt,bwd_rd,rnd_wt,rnd_rd"
    );
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[1..]
        .iter()
        .all(|l| l.split(',').skip(1).all(|v| num(v) > 0.0)));

    let r = json_file(&json);
    assert_valid(&r);
    assert_eq!(r["mode"], "diskperf");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 18);
    assert_eq!(points[0]["label"], "4096 fwd_wt");
    assert_eq!(points[17]["label"], "16384 rnd_rd");
    for p in points {
        assert_eq!(p["settings"]["engine"], "sync");
        assert_eq!(u(&p["settings"]["workers"]), 1);
        assert_eq!(u(&p["streams"][0]["outstanding"]), 1);
        assert!(u(&p["elapsed_ns"]) >= 200_000_000);
    }
    assert!(!f.exists(), "the test file is removed");
}

#[test]
fn a_read_only_sweep_of_an_existing_file_never_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("precious");
    let data = random_bytes(4 << 20, 7);
    std::fs::write(&f, &data).unwrap();
    let j = dir.path().join("ro.json");
    let out = diskperf(&[
        path_str(&f),
        "--min",
        "4k",
        "--max",
        "16k",
        "--time",
        "200ms",
        "--json",
        path_str(&j),
    ]);
    let text = stdout_ok(&out);
    assert!(text.contains("NaN, which gnuplot skips"), "{text}");
    let rows = rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
    for r in &rows {
        assert_eq!([&r[1], &r[3], &r[5]], ["NaN"; 3], "{r:?}");
        assert!([&r[2], &r[4], &r[6]].iter().all(|v| num(v) > 0.0), "{r:?}");
    }
    let r = json_file(&j);
    assert_valid(&r);
    assert_eq!(r["points"].as_array().unwrap().len(), 9);
    assert!(r["points"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| u(&p["total"]["write"]["ops"]) == 0 && p["targets"][0]["created"] == false));

    let out = diskperf(&[path_str(&f), "--write", "--max", "16k", "--time", "100ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));
    assert!(std::fs::read(&f).unwrap() == data, "the file was written");
}

#[test]
fn the_engine_is_sync_at_qd1_and_io_uring_above_or_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("e.dat");
    let base = [
        path_str(&f),
        "--size",
        "1m",
        "--max",
        "4k",
        "--time",
        "100ms",
    ];
    for (extra, engine, qd) in [
        (&[][..], "sync", 1),
        (&["--qd", "4"][..], "uring", 4),
        (&["--engine", "uring"][..], "uring", 1),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--output", "json", "--quiet"]);
        let r: Value = serde_json::from_str(&stdout_ok(&diskperf(&args))).unwrap();
        let p = &r["points"][0];
        assert_eq!(p["settings"]["engine"], engine, "{extra:?}");
        assert_eq!(u(&p["streams"][0]["outstanding"]), qd, "{extra:?}");
    }
}

#[test]
fn a_frame_preset_with_fps_adds_the_real_time_block() {
    let dir = tempfile::tempdir().unwrap();
    let out = diskperf(&[
        path_str(dir.path()),
        "--size",
        "8m",
        "--min",
        "pal-422",
        "--max",
        "2m",
        "--fps",
        "25",
        "--time",
        "100ms",
        "--mib",
    ]);
    let text = stdout_ok(&out);
    assert!(
        text.contains("# frame pal-422 (720x576x2 = 829440 bytes"),
        "{text}"
    );
    assert!(text.contains("#  (bytes) (MiB/s)"), "{text}");
    let table = rows(&text);
    assert_eq!(table.len(), 2, "{text}");
    let frame: u64 = table[0][0].parse().unwrap();
    assert!((829440..829440 + 4096).contains(&frame), "{frame}");
    let head = format!("# x real time at 25 fps ({frame} bytes/frame = ");
    let (_, second) = text.split_once(&head).expect("the real-time block");
    let x = rows(second.split_once('\n').unwrap().1);
    assert_eq!(x.len(), 2, "{text}");
    let mib = num(&table[0][2]);
    let want = mib * 1048576.0 / (frame as f64 * 25.0);
    assert!((num(&x[0][2]) - want).abs() < 0.01 + want * 0.01, "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn dry_run_prints_the_points_and_an_estimate_and_does_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dry");
    let out = diskperf(&[
        path_str(&f),
        "--size",
        "16m",
        "--write",
        "--max",
        "16k",
        "--time",
        "2s",
        "--dry-run",
    ]);
    let text = stdout_ok(&out);
    assert!(text.contains("diskperf plan: 18 points"), "{text}");
    assert!(text.contains("4096 fwd_wt") && text.contains("16384 rnd_rd"));
    assert!(text.contains("estimated duration: 36 s"), "{text}");
    assert!(!f.exists());
}

#[test]
fn bad_invocations_get_one_line_and_exit_2_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let n = path_str(&new);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--min", "0"], "--min"),
        (vec!["--min", "8k", "--max", "4k"], "--max"),
        (vec!["--min", "hd-555"], "frame preset"),
        (vec!["--scale", "0"], "--scale"),
        (vec!["--scale", "-1"], "--scale"),
        (vec!["--time", "0"], "--time"),
        (vec!["--fps", "0"], "--fps"),
        (vec!["--fps", "-25"], "--fps"),
        (vec!["--qd", "0"], "--qd"),
        (vec!["--qd", "4", "--engine", "sync"], "--engine sync"),
        (vec!["--min", "3000"], "logical block size"),
        (vec!["--max", "32m"], "lower --max"),
        (vec!["--write", "--readonly"], "--readonly"),
    ];
    for (extra, needle) in cases {
        let mut args = vec![n, "--size", "16m", "--time", "100ms"];
        args.extend_from_slice(&extra);
        let out = diskperf(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: one line, got {err}");
        assert!(
            err.contains(needle),
            "{extra:?}: expected '{needle}' in {err}"
        );
        assert!(out.stdout.is_empty(), "{extra:?}: nothing on stdout");
        assert!(!new.exists(), "{extra:?} left a file behind");
    }
    let out = diskperf(&["/dev/null"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("character device"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Regression (issue 28 §5): `diskperf -s 1e308` printed `inf` in every
/// column with exit 0. A factor that overflows or vanishes the figures
/// (either spelling) is refused with one line and exit 2, before any I/O.
#[test]
fn a_scale_or_fps_beyond_what_the_figures_hold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let n = path_str(&new);
    let cases: Vec<Vec<&str>> = vec![
        vec!["-s", "1e308", "-c16m", "-t1", n],
        vec!["-s1e-320", "-c16m", "-t1", n],
        vec![n, "--size", "16m", "--time", "1s", "--scale", "1e308"],
        vec![n, "--size", "16m", "--time", "1s", "--scale", "inf"],
        vec![n, "--size", "16m", "--time", "1s", "--scale", "NaN"],
        vec![n, "--size", "1g", "--min", "hd-422", "--fps", "1e-308"],
        vec![n, "--size", "1g", "--min", "hd-422", "--fps", "1e308"],
    ];
    for args in cases {
        let out = diskperf(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err}");
        assert!(
            err.contains("--scale") || err.contains("--fps"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(!new.exists(), "{args:?} left a file behind");
    }
}

#[test]
fn the_irix_command_line_runs_the_sweep_it_names_and_is_recorded_as_typed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let args = [
        "-W",
        "-D",
        "-r4k",
        "-m",
        "8k",
        "-t0.2",
        "-c4m",
        "-n",
        "SGI ST373405LC",
        path_str(&f),
        "--output",
        "json",
        "-q",
    ];
    let r = report_of(&diskperf(&args));
    assert_valid(&r);
    assert_eq!(r["diskperf"]["label"], "SGI ST373405LC");
    let mut typed = vec!["diskperf"];
    typed.extend_from_slice(&args);
    let line: Vec<&str> = r["command_line"].as_array().unwrap()[1..]
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(line, typed);
    let points = r["points"].as_array().unwrap();
    // -W: six tests a size, for 4k and 8k (-r4k -m 8k).
    assert_eq!(points.len(), 12);
    let shapes: Vec<(u64, &str)> = points
        .iter()
        .map(|p| {
            let s = &p["streams"][0];
            (u(&s["bs"]), s["rw"].as_str().unwrap())
        })
        .collect();
    assert_eq!(shapes[0], (4096, "write"));
    assert_eq!(shapes[1], (4096, "read"));
    assert_eq!(shapes[11], (8192, "read"));
    for p in points {
        // -t0.2: 200 ms a test; -D: O_DIRECT; -c4m: the test file's size.
        assert_eq!(u(&p["settings"]["time_ns"]), 200_000_000);
        assert_eq!(p["settings"]["direct"], true);
        assert_eq!(u(&p["targets"][0]["size_bytes"]), 4 << 20);
    }
    assert!(!f.exists(), "the test file is removed");
}

#[test]
fn irix_options_without_an_equivalent_are_refused_by_name_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let n = path_str(&new);
    for (args, needle) in [
        (
            vec!["-W", "-R", n],
            "IRIX diskperf's -R (the realtime subvolume",
        ),
        (vec!["-L", n], "IRIX diskperf's -L (the log subvolume"),
        (
            vec!["-d", "2", n],
            "IRIX diskperf's -d (a delay between tests)",
        ),
        (vec!["-M4m", n], "unknown IRIX diskperf option '-M'"),
        (vec![n, "-m"], "IRIX diskperf's -m needs a size"),
        (vec!["-r4x", n], "IRIX diskperf's -r '4x': give a size"),
        (vec!["-c", "0", n], "--size must be greater than zero"),
        (vec!["-t", "soon", n], "IRIX diskperf's -t 'soon'"),
    ] {
        let out = diskperf(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

// ---------------------------------------------------------------------------
// Root only: devices the tests create and remove
// ---------------------------------------------------------------------------

#[test]
fn a_loop_device_is_read_by_default_and_never_written_without_allow_destroy() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::new(32 * MIB, 3));
    let dev = path_str(l.path());
    let before = checksum(l.path(), None);
    let out = diskperf(&[dev, "--min", "4k", "--max", "64k", "--time", "200ms"]);
    let text = stdout_ok(&out);
    assert!(text.contains("(block device, 33554432 bytes"), "{text}");
    let rows = rows(&text);
    assert_eq!(rows.len(), 5, "{text}");
    for r in &rows {
        assert_eq!([&r[1], &r[3], &r[5]], ["NaN"; 3], "{r:?}");
        assert!([&r[2], &r[4], &r[6]].iter().all(|v| num(v) > 0.0), "{r:?}");
    }
    let out = diskperf(&[dev, "--write", "--max", "64k", "--time", "200ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"));
    assert!(out.stdout.is_empty());
    assert_eq!(checksum(l.path(), None), before, "the device was written");
}

#[test]
fn a_zram_write_sweep_fills_every_column() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(64 * MIB));
    let dev = path_str(z.path());
    run_point(&[
        "--rw",
        "write",
        "--bs",
        "1m",
        "--qd",
        "4",
        "--allow-destroy",
        dev,
    ]);
    let j = tempfile::NamedTempFile::new().unwrap();
    let out = diskperf(&[
        dev,
        "--write",
        "--allow-destroy",
        "--min",
        "4k",
        "--max",
        "64k",
        "--time",
        "200ms",
        "--json",
        path_str(j.path()),
    ]);
    let text = stdout_ok(&out);
    let rows = rows(&text);
    assert_eq!(rows.len(), 5, "{text}");
    assert!(
        rows.iter().all(|r| r[1..].iter().all(|v| num(v) > 0.0)),
        "{text}"
    );
    let r = json_file(j.path());
    assert_valid(&r);
    assert_eq!(r["points"][0]["targets"][0]["kind"], "block");
    assert_eq!(r["points"].as_array().unwrap().len(), 30);
}

#[test]
fn frame_presets_are_the_one_catalogue_video_takes_and_sizes_read_first() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    std::fs::write(&f, random_bytes(64 << 20, 3)).unwrap();
    let plan = |args: &[&str]| {
        let mut all = vec![path_str(&f), "--time", "1s", "--dry-run"];
        all.extend_from_slice(args);
        let out = diskperf(&all);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // 2k is a size here: 2048 bytes.
    let (code, text, err) = plan(&["--min", "2k", "--max", "4k"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        text.contains("2048 fwd_rd") && text.contains("4096 fwd_rd"),
        "{text}"
    );
    // video's names, for --min and --max alike: pal-422 (829440 bytes,
    // rounded up to the file's 512-byte blocks) up to pal-4444 (1658880).
    let (code, text, err) = plan(&["--min", "pal-422", "--max", "pal-4444"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        text.contains("829440 fwd_rd") && text.contains("1658880 fwd_rd"),
        "{text}"
    );
    // diskperf's old names are gone; the refusal lists the catalogue.
    let (code, _, err) = plan(&["--min", "hd-444"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("hd-4444") && err.contains("dpx-2k") && !err.contains(", 2k,"),
        "{err}"
    );
}
