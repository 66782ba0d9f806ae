//! `iosurvey video` run for real: frames written one file per frame and
//! read back, a stream file, pacing, refusals of frames never written and
//! of bad input; and, as root, a loop device throttled by the blkio cgroup
//! that holds a slow frame rate and drops frames at a fast one.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

pub(super) fn video(args: &[&str]) -> std::process::Output {
    let mut all = vec!["video"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

/// The JSON report of a `video` run that must succeed.
fn video_report(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--output", "json", "--quiet"]);
    report_of(&video(&all))
}

/// The frame records of a report's first point.
fn records(r: &Value) -> Vec<Value> {
    r["points"][0]["frames"]["records"]
        .as_array()
        .unwrap_or_else(|| panic!("no frame records: {r}"))
        .clone()
}

fn count(recs: &[Value], status: &str) -> usize {
    recs.iter().filter(|r| r["status"] == status).count()
}

/// Frame files under `dir`, recursively.
fn frame_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(frame_files(&p));
        } else if p.extension().is_some_and(|x| x == "frm") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn list_formats_prints_every_preset_with_its_size() {
    let text = stdout_ok(&video(&["--list-formats"]));
    for want in [
        "ntsc-422", "pal-4444", "hd-422", "dpx-2k", "dpx-4k", "uhd-422", "12812288", "51052544",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
}

#[test]
fn frames_written_one_file_each_are_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let (csv, json) = (dir.path().join("w.csv"), dir.path().join("w.json"));
    let common = [
        "--frame-size",
        "64k",
        "--frames",
        "20",
        "--files-per-dir",
        "8",
    ];
    let mut args = vec![d, "--write", "--keep", "--depth", "2", "--threads", "2"];
    args.extend_from_slice(&common);
    args.extend_from_slice(&["--csv", path_str(&csv), "--json", path_str(&json)]);
    let text = stdout_ok(&video(&args));
    assert!(text.contains("Frames transferred: 20"), "{text}");
    let report = json_file(&json);
    assert_valid(&report);
    let frames = &report["points"][0]["frames"];
    assert_eq!(
        report["points"][0]["settings"]["engine"], "uring",
        "pieces in flight"
    );
    assert_eq!(frames["layout"], "files");
    assert_eq!(frames["op"], "write");
    assert_eq!(u(&frames["frame_bytes"]), 65536);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 20);
    assert!(recs.iter().all(|r| u(&r["bytes"]) == 65536));
    assert!(recs.iter().all(|r| u(&r["end_ns"]) >= u(&r["start_ns"])));
    assert!(recs.iter().all(|r| u(&r["open_ns"]) > 0), "open is timed");
    assert_eq!(
        u(&report["points"][0]["total"]["write"]["bytes"]),
        20 * 65536
    );
    let lines: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 21, "a header and a row per frame");
    assert!(lines[0].starts_with("frame,"), "{}", lines[0]);

    // Kept: 20 frames of 64 KiB in three subdirectories of 8.
    let root = dir.path().join("iosurvey-frames");
    let files = frame_files(&root);
    assert_eq!(files.len(), 20);
    assert!(files.iter().all(|f| f.metadata().unwrap().len() == 65536));
    assert!(root.join("d00002/f0000019.frm").exists());

    // Read them back, in random order; they stay (this run did not write them).
    let mut args = vec![d, "--read", "--order", "random"];
    args.extend_from_slice(&common);
    let report = video_report(&args);
    assert_valid(&report);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 20);
    assert_eq!(
        u(&report["points"][0]["total"]["read"]["bytes"]),
        20 * 65536
    );
    let order: Vec<u64> = recs.iter().map(|r| u(&r["frame"])).collect();
    assert_ne!(order, (0..20).collect::<Vec<_>>(), "shuffled");
    assert_eq!(frame_files(&root).len(), 20);

    // Writing again without --keep rewrites them and cleans up after.
    let mut args = vec![d, "--write", "--quiet"];
    args.extend_from_slice(&common);
    stdout_ok(&video(&args));
    assert!(!root.exists(), "frames removed without --keep");
}

#[test]
fn reading_frames_never_written_is_refused_unless_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let out = video(&[d, "--frame-size", "16k", "--frames", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("never written") && err.contains("--prepare"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!dir.path().join("iosurvey-frames").exists());

    let report = video_report(&[d, "--frame-size", "16k", "--frames", "5", "--prepare"]);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 5);
    assert_eq!(report["points"][0]["frames"]["op"], "read");
    assert_eq!(
        report["points"][0]["settings"]["engine"], "sync",
        "one I/O per frame runs on pread/pwrite by default"
    );
    assert!(
        !dir.path().join("iosurvey-frames").exists(),
        "prepared frames are removed at the end"
    );
}

#[test]
fn a_stream_file_is_laid_out_written_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let report = video_report(&[
        path_str(dir.path()),
        "--mode",
        "stream",
        "--write",
        "--format",
        "pal-422",
        "--frames",
        "12",
        "--depth",
        "4",
        "--order",
        "rev",
    ]);
    assert_valid(&report);
    let p = &report["points"][0];
    assert_eq!(p["frames"]["layout"], "stream");
    assert_eq!(u(&p["frames"]["frame_bytes"]), 831_488);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 12);
    assert_eq!(u(&recs[0]["frame"]), 11, "reverse order starts at the end");
    assert!(recs
        .iter()
        .all(|r| u(&r["open_ns"]) == 0 && u(&r["close_ns"]) == 0));
    assert_eq!(u(&p["total"]["write"]["ops"]), 48, "four I/Os per frame");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the stream file is removed"
    );
}

#[test]
fn paced_frames_follow_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let report = video_report(&[
        path_str(dir.path()),
        "--write",
        "--frame-size",
        "16k",
        "--frames",
        "10",
        "--fps",
        "100",
        "--queue",
        "50",
    ]);
    let p = &report["points"][0];
    // A fraction since schema version 4.
    assert_eq!(
        p["frames"]["fps"],
        serde_json::json!({"num": 100, "den": 1})
    );
    let recs = records(&report);
    assert_eq!(recs.len(), 10);
    for (k, r) in recs.iter().enumerate() {
        assert!(
            u(&r["start_ns"]) >= k as u64 * 10_000_000,
            "frame {k} started before its release: {r}"
        );
    }
    // A 50-frame queue (half a second) absorbs any hiccup of tmpfs.
    assert_eq!(count(&recs, "done"), 10, "{recs:?}");
    assert!(u(&p["elapsed_ns"]) >= 90_000_000);
}

#[test]
fn bad_input_is_one_line_and_exit_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let file = dir.path().join("plain.dat");
    std::fs::write(&file, vec![7u8; 65536]).unwrap();
    let missing = dir.path().join("missing");
    let root = dir.path().join("iosurvey-frames");
    std::fs::create_dir(&root).unwrap();
    let foreign = root.join("f0000000.frm");
    std::fs::write(&foreign, b"the user's").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![d, "--fps", "0"], "greater than zero"),
        (vec![d, "--fps", "fast"], "frame rate"),
        (vec![d, "--format", "vhs"], "unknown format"),
        (
            vec![d, "--format", "hd", "--frame-size", "1m"],
            "cannot be used with",
        ),
        (
            vec![d, "--mode", "stream", "--files-per-dir", "3"],
            "--files-per-dir",
        ),
        (vec![d, "--queue", "2"], "--fps"),
        (vec![d, "--frames", "0"], "--frames"),
        (vec![d, "--depth", "0"], "--depth"),
        (vec![d, "--write", "--prepare"], "--prepare"),
        (vec![d, "--write", "--read"], "cannot be used with"),
        (vec![path_str(&file), "--write"], "needs a directory"),
        (vec![path_str(&missing), "--write"], "no such directory"),
        (vec![d, "--write", "--frames", "2"], "did not create"),
        (vec![d, "--write", "--readonly"], "--readonly refuses"),
        (vec![], "TARGET"),
    ];
    for (args, want) in cases {
        let out = video(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), b"the user's");
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 65536]);
    assert_eq!(frame_files(&root).len(), 1, "nothing was created");
    assert!(!missing.exists());
}

/// The frame settings of a report's first point.
fn frames_of(r: &Value) -> Value {
    let mut f = r["points"][0]["frames"].clone();
    f.as_object_mut().unwrap().remove("records");
    f.as_object_mut().unwrap().remove("summary");
    f
}

#[test]
fn frametest_command_lines_write_and_read_the_frames_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    // A size in KB, 8 frames by 2 threads, twice over.
    let args = ["-w", "64", "-n", "8", "-t", "2", "-l", "2", d, "--keep"];
    let r = video_report(&args);
    assert_valid(&r);
    let f = frames_of(&r);
    assert_eq!(
        (f["op"].as_str(), f["format"].as_str(), u(&f["frame_bytes"])),
        (Some("write"), Some("custom"), 65536)
    );
    assert_eq!(
        (u(&f["frames"]), u(&f["threads"]), u(&f["loops"])),
        (8, 2, 2)
    );
    assert_eq!(frame_files(dir.path()).len(), 8);
    let line: Vec<&str> = r["command_line"].as_array().unwrap()[2..]
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(line[..args.len()], args, "recorded as typed");
    // Read back with the size after -r, in reverse (-v).
    let r = video_report(&["-r", "64", "-n", "8", "-v", d]);
    let f = frames_of(&r);
    assert_eq!(
        (f["op"].as_str(), u(&f["frame_bytes"]), f["order"].as_str()),
        (Some("read"), 65536, Some("rev"))
    );
    assert_eq!(count(&records(&r), "done"), 8);
    // A format name, one stream, a pace and its queue.
    let other = tempfile::tempdir().unwrap();
    let o = path_str(other.path());
    let text = stdout_ok(&video(&[
        "-w",
        "2k",
        "-n",
        "48",
        "-s",
        "-f",
        "24",
        "-q",
        "2",
        o,
        "--dry-run",
    ]));
    assert!(
        text.contains("write 48 frames of dpx-2k (12812288 bytes"),
        "{text}"
    );
    assert!(text.contains("one stream"), "{text}");
    assert!(text.contains("at 24.000 fps, queue 2"), "{text}");
    // The empty-frame test: only the create and the close.
    let r = video_report(&["-e", "-n", "5", "-d", "2", o]);
    let f = frames_of(&r);
    assert_eq!(
        (
            f["op"].as_str(),
            f["format"].as_str(),
            u(&f["files_per_dir"])
        ),
        (Some("write"), Some("empty"), 2)
    );
}

#[test]
fn frametest_options_without_a_meaning_here_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    for (args, want) in [
        (
            vec!["-w", "vhs", d],
            "frametest's -w 'vhs': give a frame size in KB",
        ),
        (vec!["-w", "2k", "-r", d], "-w and -r are two tests"),
        (
            vec!["-w", "2k", "-q", "4", d],
            "-q N (frames queued before one is dropped) needs -f RATE",
        ),
        (
            vec!["-w", "2k", "-a", "4", d],
            "frametest's -a (asynchronous overlapped I/Os)",
        ),
        (vec!["-w", "2k", "-x", "out.csv", d], "--csv FILE"),
        (
            vec!["-w", "2k", "-h", "5", d],
            "frametest's -h (the histogram window)",
        ),
        (vec!["-w", "2k", "-k", d], "unknown frametest option '-k'"),
        (vec!["-w", "2k", "-t", "many", d], "frametest's -t 'many'"),
        (
            vec!["-e", "-w", "2k", d],
            "-e (empty frames) takes no frame size",
        ),
    ] {
        let out = video(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn dry_run_describes_the_frames_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = stdout_ok(&video(&[
        path_str(dir.path()),
        "--write",
        "--format",
        "dpx-2k",
        "--fps",
        "24",
        "--frames",
        "48",
        "--dry-run",
    ]));
    assert!(
        text.contains("write 48 frames of dpx-2k (12812288 bytes"),
        "{text}"
    );
    assert!(text.contains("estimated duration: 2 s"), "{text}");
    // Without its 64 KiB DPX header, a 2K frame is its pixels alone.
    // (Written: --dry-run checks the targets, and a read needs frames.)
    let text = stdout_ok(&video(&[
        path_str(dir.path()),
        "--write",
        "--format",
        "dpx-2k",
        "--header",
        "0",
        "--frames",
        "10",
        "--dry-run",
    ]));
    assert!(text.contains("frames of dpx-2k (12746752 bytes"), "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // The target is checked as the run would check it.
    // 2k is a size (2048 bytes), never a format.
    let out = video(&[path_str(dir.path()), "--format", "2k", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'2k' is a size (2048 bytes)"));
    let out = video(&[path_str(dir.path()), "--format", "dpx-2k", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("never written"),
        "{}",
        describe(&out)
    );
    let out = video(&[
        path_str(&dir.path().join("missing")),
        "--write",
        "--dry-run",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_throttled_device_holds_a_slow_rate_and_drops_frames_at_a_fast_one() {
    let _lock = serial();
    need!(require_blkio());
    let dev = need!(LoopDev::new(64 * MIB, 31));
    let before = checksum(dev.path(), None);
    // 8 MB/s: 1 MiB frames hold 4 fps and cannot hold 24.
    let limit = 8_000_000u64;
    let run = |fps: &str| {
        let cg = need_cgroup();
        cg.set(
            "blkio.throttle.read_bps_device",
            &format!("{} {limit}", maj_min(dev.path())),
        );
        let out = cg.run_iosurvey(&[
            "video",
            path_str(dev.path()),
            "--mode",
            "stream",
            "--frame-size",
            "1m",
            "--frames",
            "16",
            "--fps",
            fps,
            "--queue",
            "2",
            "--output",
            "json",
            "--quiet",
        ]);
        report_of(&out)
    };
    let slow = run("4");
    assert_valid(&slow);
    let recs = records(&slow);
    assert_eq!(
        count(&recs, "done"),
        16,
        "4 MB/s fits under 8 MB/s: {recs:?}"
    );
    let fast = run("24");
    let recs = records(&fast);
    let dropped = count(&recs, "skipped") + count(&recs, "late");
    assert!(
        dropped >= 8,
        "24 MB/s on an 8 MB/s device drops frames: {dropped} of 16"
    );
    assert_eq!(checksum(dev.path(), None), before, "reads never write");
}

/// A blkio cgroup, or a skip (the caller has checked the controller).
fn need_cgroup() -> Cgroup {
    Cgroup::new().expect("creating a blkio cgroup")
}

#[test]
fn a_device_takes_stream_writes_only_with_allow_destroy_and_only_the_frames() {
    let _lock = serial();
    let dev = need!(LoopDev::new(32 * MIB, 32));
    let before = read_device(dev.path());
    let mut args = vec![
        "video",
        path_str(dev.path()),
        "--mode",
        "stream",
        "--write",
        "--frame-size",
        "1m",
        "--frames",
        "16",
        "--depth",
        "4",
        "--output",
        "json",
        "--quiet",
    ];
    let out = iosurvey(&args);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--allow-destroy"),
        "{}",
        describe(&out)
    );
    assert_eq!(read_device(dev.path()), before, "a refusal writes nothing");

    args.push("--allow-destroy");
    let report = report_of(&iosurvey(&args));
    assert_valid(&report);
    assert_eq!(report["points"][0]["targets"][0]["kind"], "block");
    assert_eq!(count(&records(&report), "done"), 16);
    let after = read_device(dev.path());
    let frames = 16 * MIB as usize;
    assert_ne!(after[..frames], before[..frames], "the frames were written");
    assert_eq!(
        after[frames..],
        before[frames..],
        "nothing past the last frame"
    );

    // Read back from the device, in reverse.
    let report = report_of(&iosurvey(&[
        "video",
        path_str(dev.path()),
        "--mode",
        "stream",
        "--frame-size",
        "1m",
        "--frames",
        "16",
        "--order",
        "rev",
        "--output",
        "json",
        "--quiet",
    ]));
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 16);
    assert_eq!(u(&recs[0]["frame"]), 15);
    assert_eq!(read_device(dev.path()), after, "reads never write");
}

#[test]
fn loops_rewrite_the_same_frames() {
    let dir = tempfile::tempdir().unwrap();
    let report = video_report(&[
        path_str(dir.path()),
        "--write",
        "--frame-size",
        "8k",
        "--frames",
        "5",
        "--loops",
        "3",
        "--keep",
    ]);
    assert_valid(&report);
    let p = &report["points"][0];
    assert_eq!(u(&p["frames"]["loops"]), 3);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 15);
    let order: Vec<u64> = recs.iter().map(|r| u(&r["frame"])).collect();
    assert_eq!(order, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    assert_eq!(u(&p["total"]["write"]["bytes"]), 15 * 8192);
    assert_eq!(frame_files(&dir.path().join("iosurvey-frames")).len(), 5);
    let out = video(&[path_str(dir.path()), "--loops", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn empty_frames_time_only_the_create_and_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let json = dir.path().join("e.json");
    let text = stdout_ok(&video(&[
        d,
        "--write",
        "--empty",
        "--frames",
        "50",
        "--keep",
        "--json",
        path_str(&json),
    ]));
    assert!(text.contains("Empty frames: only the create"), "{text}");
    assert!(!text.contains("Real-time verdict"), "{text}");
    let report = json_file(&json);
    assert_valid(&report);
    let recs = records(&report);
    assert_eq!(count(&recs, "done"), 50);
    assert!(recs
        .iter()
        .all(|r| u(&r["bytes"]) == 0 && u(&r["io_ns"]) == 0));
    assert!(recs.iter().all(|r| u(&r["open_ns"]) > 0));
    assert_eq!(
        u(&report["points"][0]["total"]["write"]["ops"]),
        0,
        "no I/O"
    );
    let files = frame_files(&dir.path().join("iosurvey-frames"));
    assert_eq!(files.len(), 50);
    assert!(files.iter().all(|f| f.metadata().unwrap().len() == 0));

    let report = video_report(&[d, "--empty", "--frames", "50"]);
    assert_eq!(count(&records(&report), "done"), 50);

    for (args, want) in [
        (vec![d, "--empty", "--mode", "stream"], "--mode files"),
        (vec![d, "--empty", "--format", "hd"], "cannot be used with"),
        (vec![d, "--empty", "--depth", "2"], "--depth"),
    ] {
        let out = video(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{args:?}: {}",
            describe(&out)
        );
    }
}

#[test]
fn time_ends_a_run_with_the_frames_done_by_then() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let r = video_report(&[
        d,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "200000",
        "--time",
        "300ms",
    ]);
    let p = &r["points"][0];
    assert_eq!(u(&p["settings"]["time_ns"]), 300_000_000);
    let elapsed = u(&p["elapsed_ns"]);
    assert!((300_000_000..3_000_000_000).contains(&elapsed), "{elapsed}");
    let frames = u(&p["streams"][0]["write"]["ops"]);
    assert!(frames > 0 && frames < 200_000, "{frames} frames");
    assert_eq!(p["interrupted"], false, "a time bound is not an interrupt");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "the frames are removed: {left:?}");
}
