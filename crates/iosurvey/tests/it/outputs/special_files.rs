//! Output files under attack, for real: character devices (`/dev/full`, a
//! `mknod`ed node), FIFOs, symlinks, a loop device, outputs equal to a target
//! or to each other, missing directories, stdout (`-`, a closed pipe), and
//! `--live` lines that add up to the report.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `run FILE --size 4m --time 200ms` plus `extra`.
fn quick_run(target: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", path_str(target), "--size", "4m", "--time", "200ms"];
    args.extend_from_slice(extra);
    iosurvey(&args)
}

/// Exit 2 with one line on stderr that names `word`.
fn assert_refused(out: &std::process::Output, word: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", describe(out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(word), "names {word}: {err}");
    assert!(out.stdout.is_empty(), "nothing run: {}", describe(out));
}

/// Names in `dir` (sorted), to prove nothing was left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn json_at_dev_full_fails_with_exit_1_and_dev_full_stays_a_char_device() {
    let dir = tempfile::tempdir().unwrap();
    let out = quick_run(&dir.path().join("t.dat"), &["--json", "/dev/full", "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--json /dev/full") && err.contains("No space left"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("IOPS"), "the results still on stdout: {text}");
    let m = std::fs::metadata("/dev/full").unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.rdev(), libc_makedev(1, 7));
}

/// Linux's encoding of a device number (major, minor).
fn libc_makedev(major: u64, minor: u64) -> u64 {
    ((major & 0xfffff000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffffff00) << 12)
        | (minor & 0xff)
}

#[test]
fn json_at_a_mknod_char_device_is_written_in_place_and_stays_a_char_device() {
    need!(require_root());
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("null-node");
    must("mknod", &[path_str(&node), "c", "1", "3"]);
    let csv = dir.path().join("also-null");
    must("mknod", &[path_str(&csv), "c", "1", "3"]);
    // Two nodes of one device are one output.
    let out = quick_run(
        &dir.path().join("t.dat"),
        &["--json", path_str(&node), "--csv", path_str(&csv)],
    );
    assert_refused(&out, "same file");
    let out = quick_run(
        &dir.path().join("t.dat"),
        &["--json", path_str(&node), "-q"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let m = std::fs::symlink_metadata(&node).unwrap();
    assert!(m.file_type().is_char_device(), "still a device node");
    assert_eq!(m.rdev(), libc_makedev(1, 3));
}

#[test]
fn json_through_a_symlink_replaces_the_named_file_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Replaced, not rewritten: what was open still reads the old contents.
    let mut old = std::fs::File::open(&real).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let out = quick_run(
        &dir.path().join("t.dat"),
        &["--json", path_str(&link), "-q"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.json"));
    let mut was = String::new();
    old.read_to_string(&mut was).unwrap();
    assert_eq!(was, "old", "replaced by a new file, not rewritten");
    let m = std::fs::metadata(&real).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o600, "mode kept");
    assert_valid(&json_file(&real));
    assert_eq!(
        names(dir.path()),
        ["link.json", "real.json"],
        "no temporary file left"
    );
}

#[test]
fn json_at_a_dangling_symlink_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dangling.json");
    std::os::unix::fs::symlink("elsewhere.json", &link).unwrap();
    let out = quick_run(&dir.path().join("t.dat"), &["--json", path_str(&link)]);
    assert_refused(&out, "symlink");
    assert_eq!(names(dir.path()), ["dangling.json"]);
}

#[test]
fn json_to_a_fifo_is_written_in_place_for_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    must("mkfifo", &[path_str(&fifo)]);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            s
        })
    };
    let mut child = Command::new(BIN)
        .args(["run", "t.dat", "--size", "4m", "--time", "200ms", "-q"])
        .args(["--json", path_str(&fifo)])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("iosurvey hung writing the FIFO");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // A writer that comes and goes frees a reader still waiting in open().
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(0o4000) // O_NONBLOCK
        .open(&fifo);
    assert_eq!(status.code(), Some(0));
    let r: Value = serde_json::from_str(&reader.join().unwrap()).expect("one JSON document");
    assert_valid(&r);
    assert!(u(&r["points"][0]["total"]["read"]["ops"]) > 0);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn json_equal_to_csv_is_refused_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let both = dir.path().join("both");
    let out = quick_run(
        &dir.path().join("t.dat"),
        &["--json", path_str(&both), "--csv", path_str(&both)],
    );
    assert_refused(&out, "same file");
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn json_equal_to_the_target_or_an_alias_of_it_is_refused_and_the_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.dat");
    let data = random_bytes(1 << 20, 7);
    std::fs::write(&target, &data).unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(&target, &alias).unwrap();
    let hard = dir.path().join("hard");
    std::fs::hard_link(&target, &hard).unwrap();
    for given in [&target, &alias, &hard] {
        let out = iosurvey(&[
            "run",
            path_str(&target),
            "--time",
            "200ms",
            "--json",
            path_str(given),
        ]);
        assert_refused(&out, "is the target");
    }
    // A test file not made yet is a target too.
    let fresh = dir.path().join("fresh.dat");
    let out = quick_run(&fresh, &["--csv", path_str(&fresh)]);
    assert_refused(&out, "is the target");
    assert!(!fresh.exists());
    assert_eq!(std::fs::read(&target).unwrap(), data, "target untouched");
    assert_eq!(names(dir.path()), ["alias", "hard", "target.dat"]);
}

#[test]
fn json_in_a_missing_directory_is_refused_before_any_test_file_is_laid_out() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir/out.json");
    // A directory target: the test file would go inside it.
    let out = iosurvey(&[
        "run",
        path_str(dir.path()),
        "--size",
        "4m",
        "--time",
        "200ms",
        "--json",
        path_str(&missing),
    ]);
    assert_refused(&out, "no such directory");
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    // Modes that announce their plan say nothing before the refusal.
    for mode in ["diskperf", "quick"] {
        let out = iosurvey(&[
            mode,
            path_str(dir.path()),
            "--size",
            "16m",
            "--time",
            "200ms",
            "--json",
            path_str(&missing),
        ]);
        assert_refused(&out, "no such directory");
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    // A directory, and a path under a file, are refused as well.
    let out = quick_run(&dir.path().join("t.dat"), &["--csv", path_str(dir.path())]);
    assert_refused(&out, "directory");
    let out = quick_run(&dir.path().join("t.dat"), &["--json", "/proc/x.json"]);
    assert_refused(&out, "cannot create a file in /proc");
    let out = quick_run(&dir.path().join("t.dat"), &["--live", "/etc/hostname/x"]);
    assert_refused(&out, "Not a directory");
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn live_at_a_loop_device_is_refused_and_its_bytes_stay() {
    let _s = serial();
    let dev = need!(LoopDev::new(4 * MIB, 41));
    let before = read_device(dev.path());
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--live", "--json", "--csv"] {
        let out = quick_run(&dir.path().join("t.dat"), &[flag, path_str(dev.path())]);
        assert_refused(&out, "block device");
    }
    assert!(names(dir.path()).is_empty());
    assert_eq!(read_device(dev.path()), before, "device bytes unchanged");
}

#[test]
fn json_dash_writes_the_report_on_stdout_instead_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = quick_run(&dir.path().join("t.dat"), &["--json", "-", "-q"]);
    let r: Value = serde_json::from_slice(&out.stdout).expect("stdout holds only JSON");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_valid(&r);
    // stdout carries one thing.
    let out = quick_run(&dir.path().join("t.dat"), &["--json", "-", "--csv", "-"]);
    assert_refused(&out, "stdout");
    let out = quick_run(
        &dir.path().join("t.dat"),
        &["--live", "-", "--output", "json"],
    );
    assert_refused(&out, "stdout");
}

#[test]
fn an_output_that_is_where_stdout_goes_counts_as_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stdout.txt");
    let run = |extra: &[&str]| {
        let sink = std::fs::File::create(&file).unwrap();
        let mut args = vec!["run", "t.dat", "--size", "4m", "--time", "200ms", "-q"];
        args.extend_from_slice(extra);
        Command::new(BIN)
            .args(&args)
            .current_dir(dir.path())
            .stdout(sink)
            .status()
            .unwrap()
    };
    // The file stdout goes to, named as --csv, takes stdout's place.
    assert_eq!(run(&["--csv", "stdout.txt"]).code(), Some(0));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("point,label,"), "the CSV: {text}");
    assert!(!text.contains("IOPS"), "no text summary as well: {text}");
    // ... and cannot be two things at once.
    assert_eq!(
        run(&["--csv", "stdout.txt", "--output", "json"]).code(),
        Some(2)
    );
}

#[test]
fn a_closed_stdout_stops_diskperf_early_and_the_json_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("dp.json");
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args([
            "diskperf",
            path_str(&dir.path().join("t.dat")),
            "--size",
            "16m",
            "--time",
            "300ms",
            "--max",
            "1m",
            "--json",
            path_str(&json),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // 9 sizes x 3 tests x 300 ms: about 8 s in full.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..2 {
        lines.next().unwrap().unwrap();
    }
    drop(lines); // `| head -2`
    let status = child.wait().unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(4), "stopped early: {took:?}");
    assert_eq!(status.code(), Some(130));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("stdout was closed"), "{err}");
    let r = json_file(&json);
    assert_valid(&r);
    let n = r["points"].as_array().unwrap().len();
    assert!((1..27).contains(&n), "saved, with fewer points: {n}");
    assert!(!dir.path().join("t.dat").exists(), "test file removed");
}

#[test]
fn live_lines_add_up_to_the_report_totals_and_end_with_a_partial_line() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    std::fs::write(&live, "old contents\n").unwrap();
    let out = iosurvey(&[
        "diskperf",
        path_str(&dir.path().join("t.dat")),
        "--size",
        "8m",
        "--time",
        "700ms",
        "--max",
        "8k",
        "--live",
        path_str(&live),
        "--output",
        "json",
        "-q",
    ]);
    let r = report_of(&out);
    let lines: Vec<Value> = std::fs::read_to_string(&live)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    for (i, p) in points.iter().enumerate() {
        let mine: Vec<&Value> = lines
            .iter()
            .filter(|l| u(&l["point"]) == i as u64)
            .collect();
        let total = &p["total"];
        let ops = u(&total["read"]["ops"]) + u(&total["write"]["ops"]);
        let bytes = u(&total["read"]["bytes"]) + u(&total["write"]["bytes"]);
        assert!(ops > 0);
        assert_eq!(mine.iter().map(|l| u(&l["ops"])).sum::<u64>(), ops);
        assert_eq!(mine.iter().map(|l| u(&l["bytes"])).sum::<u64>(), bytes);
        let (last, rest) = mine.split_last().unwrap();
        assert_eq!(last["partial"], true, "{last}");
        assert!(rest.iter().all(|l| l["partial"] == false));
        assert!(u(&last["dt_ns"]) < 1_000_000_000, "its real length: {last}");
    }
}

#[test]
fn a_failed_live_write_is_reported_and_the_run_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&[
        "run",
        path_str(&dir.path().join("t.dat")),
        "--size",
        "4m",
        "--time",
        "600ms",
        "--interval",
        "200ms",
        "--live",
        "/dev/full",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "said once: {err}");
    assert!(err.contains("--live /dev/full") && err.contains("No space left"));
}

#[test]
fn the_report_marks_the_real_length_of_the_last_interval_of_a_series() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&iosurvey(&[
        "run",
        path_str(&dir.path().join("t.dat")),
        "--size",
        "4m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "1100ms",
        "--interval",
        "400ms",
        "--output",
        "json",
        "-q",
    ]));
    assert_valid(&r);
    let p = &r["points"][0];
    let (elapsed, interval) = (u(&p["elapsed_ns"]), u(&p["settings"]["interval_ns"]));
    let total = &p["total"]["read"];
    let n = total["series"].as_array().unwrap().len() as u64;
    assert_eq!(
        n,
        elapsed / interval + 1,
        "the cut interval is in the series"
    );
    assert_eq!(u(&total["series_last_ns"]), elapsed - (n - 1) * interval);
    assert!(u(&total["series_last_ns"]) < interval);
    assert_eq!(
        p["streams"][0]["read"]["series_last_ns"],
        total["series_last_ns"]
    );
    assert_eq!(
        u(&p["total"]["write"]["series_last_ns"]),
        0,
        "no writes, no series"
    );
}

#[test]
fn an_output_in_the_frames_directory_of_a_video_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("iosurvey-frames");
    std::fs::create_dir(&frames).unwrap();
    let out = iosurvey(&[
        "video",
        path_str(dir.path()),
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--json",
        path_str(&frames.join("r.json")),
    ]);
    assert_refused(&out, "frames directory");
    assert!(names(&frames).is_empty());
}

/// Runs `run t.dat --size 16m` with `extra` in a fresh directory whose
/// FIFO `ff` has no reader, waits until iosurvey says it waits for one,
/// sends one SIGTERM, and checks that it ends within 2 s as interrupted
/// (130), saying the wait once, leaving nothing but the FIFO.
fn sigterm_while_waiting_for_a_fifo_reader(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ff");
    must("mkfifo", &[path_str(&fifo)]);
    let mut child = Command::new(BIN)
        .args(["run", "t.dat", "--size", "16m", "-q"])
        .args(extra)
        .arg(path_str(&fifo))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("waiting for a reader") {
                let _ = tx.send(());
            }
            all.push(line);
        }
        all
    });
    let waiting = rx.recv_timeout(Duration::from_secs(20)).is_ok();
    if !waiting {
        let _ = child.kill();
    }
    assert!(waiting, "iosurvey never said it waits for a reader");
    std::thread::sleep(Duration::from_millis(300));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(2) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("iosurvey still waits on the FIFO 2 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = lines.join().unwrap();
    assert_eq!(status.code(), Some(130), "{said:?}");
    let waits = said
        .iter()
        .filter(|l| l.contains("waiting for a reader on the FIFO"));
    assert_eq!(waits.count(), 1, "said once: {said:?}");
    assert_eq!(names(dir.path()), ["ff"], "nothing left behind");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn sigterm_ends_the_wait_for_a_reader_of_a_live_fifo() {
    sigterm_while_waiting_for_a_fifo_reader(&["--time", "2s", "--live"]);
}

#[test]
fn sigterm_ends_the_wait_for_a_reader_of_a_json_fifo_at_the_end() {
    sigterm_while_waiting_for_a_fifo_reader(&["--time", "300ms", "--json"]);
}

#[test]
fn dry_run_refuses_the_outputs_a_run_would_refuse_and_writes_none() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.dat");
    std::fs::write(&target, random_bytes(1 << 20, 3)).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", path_str(&target), "--dry-run"];
        args.extend_from_slice(extra);
        iosurvey(&args)
    };
    assert_refused(&run(&["--json", path_str(&target)]), "is the target");
    let missing = dir.path().join("nodir/x.json");
    assert_refused(&run(&["--json", path_str(&missing)]), "no such directory");
    let csv = dir.path().join("r.csv");
    let out = run(&["--json", path_str(&csv), "--csv", path_str(&csv)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let ok = dir.path().join("r.json");
    let out = run(&["--json", path_str(&ok)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        names(dir.path()),
        vec!["t.dat".to_string()],
        "nothing written"
    );
    assert_eq!(std::fs::read(&target).unwrap(), random_bytes(1 << 20, 3));
}

#[test]
fn an_output_reaching_the_target_through_a_bind_mount_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("K");
    std::fs::create_dir(&k).unwrap();
    let frames = dir.path().join("V/iosurvey-frames");
    std::fs::create_dir_all(&frames).unwrap();
    let kb = need!(Mount::new(path_str(&k), &["--bind"]));
    let vb = need!(Mount::new(path_str(&frames), &["--bind"]));
    // The test file still to be made, named through the bind mount.
    let out = iosurvey(&[
        "run",
        path_str(&k.join("newf")),
        "--rw",
        "write",
        "--size",
        "1m",
        "--json",
        path_str(&kb.path().join("newf")),
    ]);
    assert_refused(&out, "is the target");
    let out = iosurvey(&[
        "video",
        path_str(&dir.path().join("V")),
        "--write",
        "--frames",
        "4",
        "--frame-size",
        "64k",
        "--csv",
        path_str(&vb.path().join("f0000002.frm")),
    ]);
    assert_refused(&out, "frames directory");
    assert_eq!(names(&k), Vec::<String>::new(), "no test file laid out");
    assert_eq!(names(&frames), Vec::<String>::new(), "no frame written");
}
