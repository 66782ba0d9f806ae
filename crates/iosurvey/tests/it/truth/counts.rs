//! Counts that must not lie, on real files and loop devices (root): a file
//! truncated or a loop device shrunk under a run fails it with short
//! transfers; `parallel` ends a device's pass at its end unless `--loop`;
//! one pass over several workers reads every block once; `--bytes` is exact
//! or refused; one I/O has one latency.

use crate::common::*;

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::Duration;

/// Starts `iosurvey ARGS`, calls `meanwhile` after `after`, and waits.
fn run_while(args: &[&str], after: Duration, meanwhile: impl FnOnce()) -> Output {
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting iosurvey");
    // `after` counts from when the run holds its target (args[1]) open, not
    // from its start: on a loaded machine the checks before the first I/O
    // can take longer than `after` itself.
    wait_until_open(child.id(), Path::new(args[1]));
    sleep(after);
    meanwhile();
    child.wait_with_output().expect("waiting for iosurvey")
}

/// Waits (up to 30 s) until process `pid` holds `target` open.
fn wait_until_open(pid: u32, target: &Path) {
    let want = fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let fds = format!("/proc/{pid}/fd");
    for _ in 0..3000 {
        // A run that has already ended has no descriptors to look at.
        let Ok(dir) = fs::read_dir(&fds) else { return };
        let mut dir = dir.flatten().peekable();
        if dir.peek().is_none() {
            return;
        }
        if dir.any(|e| fs::read_link(e.path()).is_ok_and(|l| l == want)) {
            return;
        }
        sleep(Duration::from_millis(10));
    }
    panic!("iosurvey never opened {}", target.display());
}

/// The JSON report of a run that ended with exit code `code`.
fn report_with(out: &Output, code: i32) -> Value {
    assert_eq!(out.status.code(), Some(code), "{}", describe(out));
    let r: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", describe(out)));
    assert_valid(&r);
    r
}

/// Count of errors of kind `name` (`short`, `EIO`, ...) in a class.
fn errors_named(class: &Value, name: &str) -> u64 {
    class["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == name)
        .map(|e| u(&e["count"]))
        .sum()
}

/// A class moved only whole blocks: its bytes are its ops times `bs`.
fn assert_whole_blocks(class: &Value, bs: u64) {
    assert_eq!(u(&class["bytes"]), u(&class["ops"]) * bs, "{class}");
}

#[test]
fn a_file_truncated_under_a_run_fails_it_with_short_transfers() {
    let _g = serial();
    need!(require_root_and(&["mkfs.ext4"]));
    let dev = need!(LoopDev::blank(256 * MIB, &[]));
    must("mkfs.ext4", &["-q", "-F", path_str(dev.path())]);
    let mnt = need!(Mount::new(path_str(dev.path()), &[]));
    for engine in ["uring", "sync"] {
        let file = mnt.path().join(format!("victim-{engine}"));
        fs::write(&file, random_bytes(64 << 20, 3)).unwrap();
        let out = run_while(
            &[
                "run",
                path_str(&file),
                "--bs",
                "64k",
                "--time",
                "4s",
                "--engine",
                engine,
                "--output",
                "json",
                "--quiet",
            ],
            Duration::from_millis(800),
            || {
                fs::OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .unwrap()
                    .set_len(8 << 20)
                    .unwrap()
            },
        );
        // A failed run (exit 1), not 328k IOPS and exit 0.
        let r = report_with(&out, 1);
        let p = &r["points"][0];
        let f = &p["failure"];
        assert_eq!(
            (f["errno"].as_u64(), f["error"].as_str()),
            (Some(0), Some("short")),
            "{engine}: {f}"
        );
        assert!(
            u(&f["offset"]) >= 8 << 20,
            "{engine}: failed inside the file: {f}"
        );
        let read = &p["total"]["read"];
        assert_eq!(
            errors_named(read, "short"),
            1,
            "{engine}: stops at the first: {read}"
        );
        assert_whole_blocks(read, 64 << 10);
        assert!(
            u(&p["elapsed_ns"]) < 3_500_000_000,
            "{engine}: it stopped early"
        );
    }
    // With --continue-on-error every short transfer is counted, none as a
    // completed I/O, and the run still exits 1.
    let file = mnt.path().join("victim-continue");
    fs::write(&file, random_bytes(64 << 20, 4)).unwrap();
    let out = run_while(
        &[
            "run",
            path_str(&file),
            "--bs",
            "64k",
            "--time",
            "2s",
            "--continue-on-error",
        ],
        Duration::from_millis(700),
        || {
            fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .unwrap()
                .set_len(8 << 20)
                .unwrap()
        },
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("errors: short x"), "{text}");
    assert!(
        text.contains("short transfer (fewer bytes than asked, no errno)"),
        "{text}"
    );
}

#[test]
fn a_loop_device_shrunk_under_a_run_fails_it_with_short_transfers() {
    let _g = serial();
    need!(require_root());
    let dir = tempfile::Builder::new()
        .prefix("iosurvey-shrink")
        .tempdir_in("/dev/shm")
        .unwrap();
    let backing = dir.path().join("backing.img");
    fs::write(&backing, random_bytes(32 << 20, 5)).unwrap();
    let dev = need!(LoopDev::attach(&backing, &[]));
    let out = run_while(
        &[
            "run",
            path_str(dev.path()),
            "--bs",
            "64k",
            "--time",
            "3s",
            "--continue-on-error",
            "--output",
            "json",
            "--quiet",
        ],
        Duration::from_millis(800),
        || {
            fs::OpenOptions::new()
                .write(true)
                .open(&backing)
                .unwrap()
                .set_len(8 << 20)
                .unwrap();
            must("losetup", &["-c", path_str(dev.path())]);
        },
    );
    let r = report_with(&out, 1);
    let read = &r["points"][0]["total"]["read"];
    assert!(errors_named(read, "short") > 0, "{read}");
    assert_whole_blocks(read, 64 << 10);
    drop(dev);
}

fn parallel_json(dev: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["parallel", path_str(dev), "--output", "json", "--quiet"];
    args.extend_from_slice(extra);
    let r = report_of(&iosurvey(&args));
    assert_valid(&r);
    r["points"][0].clone()
}

#[test]
fn parallel_ends_a_device_pass_at_its_end_unless_looped() {
    let _g = serial();
    let dev = need!(LoopDev::new(16 * MIB, 6));
    let p = parallel_json(dev.path(), &["--time", "3s"]);
    let s = &p["streams"][0];
    assert_eq!(u(&s["read"]["bytes"]), 16 * MIB, "like dd: {s}");
    assert_eq!(p["settings"]["loop"], false);
    assert!(u(&p["elapsed_ns"]) < 3_000_000_000, "it ended at the end");
    let text = stdout_ok(&iosurvey(&[
        "parallel",
        path_str(dev.path()),
        "--time",
        "3s",
    ]));
    assert!(text.contains("16777216 bytes (17 MB) copied"), "{text}");
    assert!(!text.contains("looped"), "{text}");

    let p = parallel_json(dev.path(), &["--time", "1s", "--loop"]);
    assert!(u(&p["streams"][0]["read"]["bytes"]) > 16 * MIB);
    assert_eq!(p["settings"]["loop"], true);
    let text = stdout_ok(&iosurvey(&[
        "parallel",
        path_str(dev.path()),
        "--time",
        "500ms",
        "--loop",
    ]));
    assert!(text.contains("looped (--loop)"), "{text}");
}

#[test]
fn one_pass_over_three_workers_reads_every_block_exactly_once() {
    let _g = serial();
    // 1000 blocks of 4 KiB: not a multiple of 3 blocks.
    let dev = need!(LoopDev::new(1000 * 4096, 7));
    for rw in ["read", "backread", "randread"] {
        let p = run_point(&[
            path_str(dev.path()),
            "--rw",
            rw,
            "--bs",
            "4k",
            "--workers",
            "3",
        ]);
        let read = &p["total"]["read"];
        assert_eq!(u(&read["ops"]), 1000, "{rw}: {read}");
        assert_eq!(u(&read["bytes"]), 1000 * 4096, "{rw}");
    }
    // A file of 1000 blocks of 4 KiB, with each engine: every block once.
    let dir = tempfile::Builder::new()
        .prefix("iosurvey-pass")
        .tempdir_in("/dev/shm")
        .unwrap();
    let file = dir.path().join("f");
    fs::write(&file, random_bytes(1000 * 4096, 10)).unwrap();
    for engine in ["uring", "sync"] {
        let p = run_point(&[
            path_str(&file),
            "--bs",
            "4k",
            "--workers",
            "3",
            "--buffered",
            "--engine",
            engine,
        ]);
        let read = &p["total"]["read"];
        assert_eq!(u(&read["ops"]) * 4096, 1000 * 4096, "{engine}: {read}");
    }
    // Forward with several regions per worker too.
    let p = run_point(&[
        path_str(dev.path()),
        "--bs",
        "4k",
        "--workers",
        "3",
        "--regions",
        "7",
    ]);
    assert_eq!(u(&p["total"]["read"]["bytes"]), 1000 * 4096);
}

#[test]
fn a_byte_bound_is_exact_or_refused() {
    let _g = serial();
    let dev = need!(LoopDev::new(4 * MIB, 8));
    let out = iosurvey(&[
        "run",
        path_str(dev.path()),
        "--bytes",
        "1000k",
        "--bs",
        "64k",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(out.stdout.is_empty(), "nothing ran: {}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--bytes 1024000 is not a multiple of --bs 65536"),
        "{err}"
    );
    assert!(err.contains("983040") && err.contains("1048576"), "{err}");
    for workers in ["1", "3"] {
        let p = run_point(&[
            path_str(dev.path()),
            "--bytes",
            "960k",
            "--bs",
            "64k",
            "--workers",
            workers,
        ]);
        assert_eq!(u(&p["total"]["read"]["bytes"]), 960 << 10, "{workers}");
    }
}

#[test]
fn one_io_has_one_latency() {
    let _g = serial();
    let dev = need!(LoopDev::new(MIB, 9));
    let p = run_point(&[path_str(dev.path()), "--bs", "4k", "--bytes", "4k"]);
    let read = &p["total"]["read"];
    assert_eq!(u(&read["ops"]), 1);
    let lat = &read["latency"];
    let min = u(&lat["min_ns"]);
    assert_eq!(min, u(&lat["max_ns"]), "{lat}");
    assert!(min > 0);
    for pc in lat["percentiles"].as_array().unwrap() {
        assert_eq!(u(&pc["ns"]), min, "{lat}");
    }
    assert_eq!(f(&lat["mean_ns"]), min as f64);
    // The histogram is the stream's (a total's is left out: the merge of
    // its streams').
    let h = &p["streams"][0]["read"]["histogram"];
    assert_eq!((u(&h["min_ns"]), u(&h["max_ns"])), (min, min));
    // The interval series holds the same one latency.
    assert_eq!(u(&read["series"][0]["lat_max_ns"]), min);
}

#[test]
fn diskperf_prints_nan_for_a_write_test_that_failed() {
    let _g = serial();
    need!(require_root());
    let dir = tempfile::Builder::new()
        .prefix("iosurvey-dpshrink")
        .tempdir_in("/dev/shm")
        .unwrap();
    let backing = dir.path().join("backing.img");
    fs::File::create(&backing)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let dev = need!(LoopDev::attach(&backing, &[]));
    // The first test (fwd_wt, 5 s) hits the end of the shrunk device; every
    // later one fails at once.
    let out = run_while(
        &[
            "diskperf",
            path_str(dev.path()),
            "--write",
            "--allow-destroy",
            "--time",
            "5s",
            "--min",
            "1m",
            "--max",
            "1m",
        ],
        Duration::from_millis(400),
        || {
            // The run's writes past the new end can grow the backing file
            // again before the loop device reads its size: shrink until the
            // device says 8 MiB (past it, no write reaches the file).
            for _ in 0..100 {
                fs::OpenOptions::new()
                    .write(true)
                    .open(&backing)
                    .unwrap()
                    .set_len(8 << 20)
                    .unwrap();
                must("losetup", &["-c", path_str(dev.path())]);
                let size = Command::new("blockdev")
                    .args(["--getsize64", path_str(dev.path())])
                    .output()
                    .expect("blockdev");
                if String::from_utf8_lossy(&size.stdout).trim() == (8u64 << 20).to_string() {
                    return;
                }
            }
            panic!("{} never shrank to 8 MiB", dev.path().display());
        },
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("1048576"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "NaN", "fwd_wt failed: {text}");
    assert!(text.contains("fwd_wt: first failed I/O: write"), "{text}");
    drop(dev);
}
