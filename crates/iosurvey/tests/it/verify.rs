//! `--verify` on loop devices the tests make (root): a run's own writes
//! read back, and a kept run's blocks checked after the test has damaged
//! them in the backing file, one way per failure class: a flipped byte
//! (corruption), a block copied over another (misdirected write), zeros
//! (lost allocation), an old copy of one block of a multi-block write
//! (torn write), an old copy of a whole write (lost write or stale read).

use crate::common::*;
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const BLOCK: u64 = 4096;

/// A loop device over a file the test can reach, and a directory for its
/// verify state.
struct Backed {
    _dir: tempfile::TempDir,
    file: PathBuf,
    state: tempfile::TempDir,
    dev: LoopDev,
}

impl Backed {
    fn new(size: u64) -> Result<Backed, String> {
        require_root()?;
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-verify")
            .tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .map_err(|e| e.to_string())?;
        let file = dir.path().join("backing.img");
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(size))
            .map_err(|e| e.to_string())?;
        let dev = LoopDev::attach(&file, &["--direct-io=on"])?;
        let state = tempfile::tempdir().map_err(|e| e.to_string())?;
        Ok(Backed {
            _dir: dir,
            file,
            state,
            dev,
        })
    }

    fn path(&self) -> &str {
        path_str(self.dev.path())
    }

    /// `--verify-state DIR` for this device.
    fn state_args(&self) -> [&str; 2] {
        ["--verify-state", path_str(self.state.path())]
    }

    /// [`run`] on the device, its state in the test's directory.
    fn run(&self, args: &[&str]) -> (Option<i32>, Value) {
        let mut all = args.to_vec();
        all.extend(self.state_args());
        run(self.path(), &all)
    }

    fn block(&self, n: u64) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK as usize];
        let f = std::fs::File::open(&self.file).unwrap();
        f.read_exact_at(&mut b, n * BLOCK).unwrap();
        b
    }

    fn put(&self, n: u64, data: &[u8]) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.file)
            .unwrap();
        f.write_all_at(data, n * BLOCK).unwrap();
        f.sync_all().unwrap();
    }
}

/// `iosurvey run DEV ARGS --output json --quiet`: exit code and the point.
fn run(dev: &str, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["run", dev, "--output", "json", "--quiet"];
    all.extend_from_slice(args);
    let out = iosurvey(&all);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", describe(&out)));
    assert_valid(&report);
    (out.status.code(), report["points"][0].clone())
}

/// The failures the report lists, as (block, class).
fn failures(p: &Value) -> Vec<(u64, String)> {
    p["verify"]["failures"]
        .as_array()
        .unwrap_or_else(|| panic!("no verify failures in {p}"))
        .iter()
        .map(|f| {
            (
                u(&f["offset"]) / BLOCK,
                f["class"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn write_run(b: &Backed, bs: &str) -> Value {
    let (code, p) = b.run(&[
        "--rw",
        "write",
        "--bs",
        bs,
        "--qd",
        "4",
        "--verify",
        "--allow-destroy",
    ]);
    assert_eq!(code, Some(0), "{p}");
    p
}

#[test]
fn a_runs_own_writes_read_back_clean() {
    let _lock = serial();
    let b = need!(Backed::new(8 * MIB));
    for args in [
        &["--rw", "write", "--bs", "64k", "--qd", "8"][..],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "16",
            "--bytes",
            "8m",
        ],
        &[
            "--rw",
            "randrw",
            "--bs",
            "16k",
            "--qd",
            "8",
            "--bytes",
            "8m",
            "--workers",
            "2",
        ],
        &["--rw", "write", "--bs", "8k", "--engine", "sync"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--verify", "--allow-destroy"]);
        let (code, p) = b.run(&all);
        assert_eq!(code, Some(0), "{args:?}: {p}");
        let v = &p["verify"];
        assert_eq!(v["mode"], "write", "{v}");
        assert!(u(&v["blocks_checked"]) > 0, "{args:?}: {v}");
        assert_eq!(v["failures"].as_array().unwrap().len(), 0, "{args:?}: {v}");
        assert_eq!(u(&v["counts"]["corruption"]), 0);
        assert_eq!(v["run_id"].as_str().map(str::len), Some(16), "{v}");
        assert_eq!(u(&v["backlog_checks"]), 0, "{v}");
    }
}

#[test]
fn a_backlog_reads_back_every_n_writes_during_the_job() {
    let _lock = serial();
    let b = need!(Backed::new(8 * MIB));
    let (code, p) = b.run(&[
        "--rw",
        "randwrite",
        "--bs",
        "8k",
        "--qd",
        "8",
        "--workers",
        "2",
        "--bytes",
        "16m",
        "--verify",
        "--verify-backlog",
        "32",
        "--allow-destroy",
    ]);
    assert_eq!(code, Some(0), "{p}");
    let v = &p["verify"];
    // 2048 writes in all, 1024 per worker: a read-back once 32 have
    // completed since the last (a reap may bring a few more), so up to 32
    // each.
    let checks = u(&v["backlog_checks"]);
    assert!((40..=64).contains(&checks), "{v}");
    // The read-backs check blocks on top of the pass after the job.
    assert!(u(&v["blocks_checked"]) > 8 * MIB / BLOCK, "{v}");
    assert_eq!(u(&v["counts"]["lost_or_stale_write"]), 0, "{v}");
    let out = iosurvey(&["run", b.path(), "--rw", "read", "--verify-backlog", "4"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn damage_between_a_kept_write_and_a_verifying_read_is_named_by_class() {
    let _lock = serial();
    let b = need!(Backed::new(4 * MIB));
    // Run A, then run B over it, both in 16 KiB writes of 4 blocks.
    write_run(&b, "16k");
    let old45 = b.block(45);
    let run_b = write_run(&b, "16k");
    let clean = b.run(&["--rw", "read", "--bs", "1m", "--verify"]);
    assert_eq!(clean.0, Some(0), "{}", clean.1);
    assert_eq!(clean.1["verify"]["run_id"], run_b["verify"]["run_id"]);
    assert_eq!(u(&clean.1["verify"]["blocks_checked"]), 4 * MIB / BLOCK);

    let mut flipped = b.block(10);
    flipped[100] ^= 0x5a;
    b.put(10, &flipped);
    b.put(30, &b.block(20));
    b.put(41, &[0u8; BLOCK as usize]);
    b.put(45, &old45);

    let (code, p) = b.run(&["--rw", "read", "--bs", "1m", "--verify"]);
    assert_eq!(code, Some(1), "a failed verify exits 1: {p}");
    let got = failures(&p);
    let want: Vec<(u64, String)> = [
        (10, "corruption"),
        (30, "misdirected_write"),
        (41, "unwritten"),
        (45, "lost_or_stale_write"),
    ]
    .iter()
    .map(|&(b, c)| (b, c.to_string()))
    .collect();
    assert_eq!(got, want, "{}", p["verify"]);
    let c = &p["verify"]["counts"];
    for k in [
        "corruption",
        "misdirected_write",
        "unwritten",
        "lost_or_stale_write",
    ] {
        assert_eq!(u(&c[k]), 1, "{k}: {c}");
    }
    assert_eq!(u(&c["read_error"]), 0, "{c}");
    // The text output names them too.
    let mut args = vec!["run", b.path(), "--rw", "read", "--bs", "1m", "--verify"];
    args.extend(b.state_args());
    let out = iosurvey(&args);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("VERIFY FAILED: 4 blocks"), "{text}");
    assert!(
        text.contains("offset 184320: lost or stale write"),
        "{text}"
    );
}

#[test]
fn an_old_copy_of_a_whole_write_is_a_lost_or_stale_write() {
    let _lock = serial();
    let b = need!(Backed::new(2 * MIB));
    write_run(&b, "4k");
    let old = b.block(50);
    write_run(&b, "4k");
    b.put(50, &old);
    let (code, p) = b.run(&["--rw", "randread", "--bs", "4k", "--time", "1s", "--verify"]);
    assert_eq!(code, Some(1), "{p}");
    assert_eq!(
        failures(&p),
        [(50, "lost_or_stale_write".to_string())],
        "{}",
        p["verify"]
    );
}

#[test]
fn a_device_no_verified_run_wrote_has_nothing_to_check_and_fails() {
    let _lock = serial();
    let b = need!(Backed::new(MIB));
    b.put(3, &random_bytes(BLOCK as usize, 1));
    let (code, p) = b.run(&["--rw", "read", "--bs", "64k", "--verify"]);
    assert_eq!(code, Some(1), "checking nothing is a failure: {p}");
    let v = &p["verify"];
    assert_eq!(u(&v["blocks_checked"]), 0, "{v}");
    assert!(v["run_id"].is_null());
    assert!(v["nothing_checked"].is_string(), "{v}");
    // A plain file no verified run wrote: one line says why, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, random_bytes(MIB as usize, 2)).unwrap();
    let out = iosurvey(&["run", path_str(&file), "--rw", "read", "--verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("no block")).collect();
    assert_eq!(lines.len(), 1, "{}", describe(&out));
    assert!(
        lines[0].starts_with("iosurvey: --verify could check no block: "),
        "{}",
        describe(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("VERIFY FAILED: no block could be checked"),
        "{text}"
    );
    assert!(!text.contains("no failure"), "{text}");
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    let f = path_str(&f);
    for (args, needle) in [
        (&["--bs", "6k"][..], "multiple of 4096"),
        (&["--bs", "4k", "--offset", "512"], "multiple of 4096"),
        (
            &["--bs", "4k", "--qd", "64", "--span", "64k"],
            "too few blocks",
        ),
        (
            &["--bs", "4k", "--check-compression"],
            "--check-compression",
        ),
        (
            &["--bs", "4k", "--verify-state", "/nonexistent-iosurvey-dir"],
            "not a directory",
        ),
    ] {
        let mut all = vec![
            "run",
            f,
            "--rw",
            "randwrite",
            "--size",
            "1m",
            "--verify",
            "--buffered",
        ];
        all.extend_from_slice(args);
        let out = iosurvey(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(
            stderr_of(&out).contains(needle),
            "{args:?}: {}",
            describe(&out)
        );
        assert!(
            !Path::new(f).exists(),
            "{args:?}: a refused run left its test file"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
    // A file of the user's where the state would go is neither read as
    // one nor replaced.
    let notes = format!("{f}.iosurvey-verify");
    std::fs::write(&notes, b"my notes").unwrap();
    let out = iosurvey(&[
        "run",
        f,
        "--rw",
        "write",
        "--size",
        "1m",
        "--verify",
        "--buffered",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr_of(&out).contains("never replaces a file it did not write"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes");
    assert!(!Path::new(f).exists());
    std::fs::remove_file(&notes).unwrap();
}

#[test]
fn a_device_needs_a_place_named_for_its_verify_state() {
    let _lock = serial();
    let b = need!(Backed::new(MIB));
    let before = b.blocks(0, 256);
    for rw in ["write", "read"] {
        let out = iosurvey(&["run", b.path(), "--rw", rw, "--verify", "--allow-destroy"]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        let err = stderr_of(&out);
        assert!(err.contains("needs --verify-state DIR"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(b.blocks(0, 256), before, "a refused run wrote the device");
}

#[test]
fn video_frames_in_one_stream_are_verified() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("frames.dat");
    let f = path_str(&file);
    let video = |extra: &[&str]| {
        let mut all = vec![
            "video",
            f,
            "--mode",
            "stream",
            "--frame-size",
            "256k",
            "--frames",
            "16",
            "--verify",
            "--buffered",
            "--output",
            "json",
            "--quiet",
        ];
        all.extend_from_slice(extra);
        iosurvey(&all)
    };
    let out = video(&["--write", "--threads", "2", "--keep"]);
    let p = report_of(&out)["points"][0].clone();
    assert_eq!(p["verify"]["mode"], "write", "{}", p["verify"]);
    assert_eq!(
        u(&p["verify"]["blocks_checked"]),
        16 * 64,
        "{}",
        p["verify"]
    );
    let out = video(&[]);
    assert_eq!(
        report_of(&out)["points"][0]["verify"]["counts"]["corruption"],
        0
    );

    // One byte of frame 5 changed on the way.
    let fh = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    fh.write_all_at(b"!", 5 * 256 * 1024 + 3 * BLOCK + 200)
        .unwrap();
    fh.sync_all().unwrap();
    let out = video(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        failures(&p["points"][0]),
        [(5 * 64 + 3, "corruption".to_string())]
    );
}

#[test]
fn video_frames_in_files_of_their_own_are_verified_as_one_stream() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("iosurvey-frames");
    let video = |extra: &[&str]| {
        let mut all = vec![
            "video",
            path_str(dir.path()),
            "--mode",
            "files",
            "--frame-size",
            "64k",
            "--frames",
            "8",
            "--verify",
            "--buffered",
            "--output",
            "json",
            "--quiet",
        ];
        all.extend_from_slice(extra);
        iosurvey(&all)
    };
    // Two loops: every frame file written twice, generation 2 expected.
    let out = video(&["--write", "--threads", "2", "--loops", "2", "--keep"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let v = report_of(&out)["points"][0]["verify"].clone();
    assert_eq!(v["mode"], "write", "{v}");
    assert_eq!(u(&v["blocks_checked"]), 8 * 16, "{v}");
    assert_eq!(v["failures"].as_array().map_or(0, Vec::len), 0, "{v}");
    let out = video(&["--read"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        u(&report_of(&out)["points"][0]["verify"]["blocks_checked"]),
        8 * 16
    );

    // Frames 1 and 2 swapped, one byte of frame 6 changed.
    let name = |k: u64| frames.join(format!("f{k:07}.frm"));
    std::fs::rename(name(1), frames.join("x")).unwrap();
    std::fs::rename(name(2), name(1)).unwrap();
    std::fs::rename(frames.join("x"), name(2)).unwrap();
    let fh = std::fs::OpenOptions::new()
        .write(true)
        .open(name(6))
        .unwrap();
    fh.write_all_at(b"!", 3 * BLOCK + 200).unwrap();
    fh.sync_all().unwrap();
    let out = video(&["--read"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = report["points"][0]["verify"].clone();
    assert_eq!(u(&v["counts"]["misdirected_write"]), 2 * 16, "{v}");
    assert_eq!(u(&v["counts"]["corruption"]), 1, "{v}");
    let listed: Vec<(String, u64, String)> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                u(&f["offset"]),
                f["class"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Each failure names its frame file and its offset in it.
    assert_eq!(
        listed[0],
        ("f0000001.frm".into(), 0, "misdirected_write".into())
    );
    assert_eq!(
        listed[16],
        ("f0000002.frm".into(), 0, "misdirected_write".into())
    );
    assert_eq!(
        listed[32],
        ("f0000006.frm".into(), 3 * BLOCK, "corruption".into())
    );
    // The text names the file too.
    let out = iosurvey(&[
        "video",
        path_str(dir.path()),
        "--mode",
        "files",
        "--frame-size",
        "64k",
        "--frames",
        "8",
        "--verify",
        "--buffered",
        "--read",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("iosurvey-frames/f0000006.frm offset 12288: corruption"),
        "{text}"
    );
    // A frame file swapped for a symlink to another frame is never
    // followed: refused before any read (exit 2), the other frame unread
    // and unchanged.
    let kept = std::fs::read(name(4)).unwrap();
    std::fs::remove_file(name(3)).unwrap();
    std::os::unix::fs::symlink(name(4), name(3)).unwrap();
    let out = video(&["--read"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr_of(&out).contains("symbolic link"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read(name(4)).unwrap(), kept);
}

/// The offset in `image` of the 4 KiB block whose verify header names
/// byte `offset` of its target (the header is the contract: magic at 0,
/// the block's offset at 16).
fn find_block(image: &Path, offset: u64) -> Option<u64> {
    let data = std::fs::read(image).ok()?;
    data.chunks_exact(BLOCK as usize)
        .position(|b| &b[..8] == b"iosVRFY1" && b[16..24] == offset.to_le_bytes())
        .map(|i| i as u64 * BLOCK)
}

#[test]
fn a_read_error_fails_its_own_block_only_with_its_errno() {
    let _lock = serial();
    need!(require_root_and(&["mkfs.btrfs", "mount", "umount"]));
    // btrfs on a loop device; one data block of a verified file changed
    // behind its back reads back as EIO (a checksum error).
    let b = need!(Backed::new(200 * MIB));
    need!(sh("mkfs.btrfs", &["-q", "-f", b.path()]));
    let m = need!(Mount::new(b.path(), &[]));
    let file = m.path().join("t");
    let f = path_str(&file);
    let (code, p) = run(
        f,
        &[
            "--size", "4m", "--rw", "write", "--bs", "1m", "--verify", "--keep",
        ],
    );
    assert_eq!(code, Some(0), "{p}");
    must("sync", &[]);
    let at = find_block(&b.file, 5 * BLOCK).expect("block 5 of the file on the image");
    let mut block = b.block(at / BLOCK);
    block[1000] ^= 0xff;
    b.put(at / BLOCK, &block);
    std::fs::write("/proc/sys/vm/drop_caches", "3").unwrap();

    let (code, p) = run(f, &["--rw", "read", "--bs", "1m", "--verify"]);
    assert_eq!(code, Some(1), "{p}");
    let v = &p["verify"];
    assert_eq!(failures(&p), [(5, "read_error".to_string())], "{v}");
    assert_eq!(v["failures"][0]["errno"], 5, "{v}");
    assert_eq!(u(&v["counts"]["read_error"]), 1, "{v}");
    assert_eq!(u(&v["counts"]["corruption"]), 0, "{v}");
    assert_eq!(u(&v["blocks_checked"]), 1024, "{v}");
    drop(m);
}

/// `iosurvey run DEV ARGS --output json --quiet`, stopped by SIGINT after
/// `after`: exit code and the point.
fn run_interrupted(b: &Backed, args: &[&str], after: std::time::Duration) -> (Option<i32>, Value) {
    let mut all = vec!["run", b.path(), "--output", "json", "--quiet"];
    all.extend_from_slice(args);
    all.extend(b.state_args());
    let child = std::process::Command::new(BIN)
        .args(&all)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", describe(&out)));
    assert_valid(&report);
    (out.status.code(), report["points"][0].clone())
}

#[test]
fn an_interrupted_verify_says_what_it_checked_and_what_it_skipped() {
    let _lock = serial();
    let b = need!(Backed::new(16 * MIB));
    let after = std::time::Duration::from_millis(700);
    // A verified write stopped during its job: nothing read back, every
    // block it wrote counted as skipped.
    let (code, p) = run_interrupted(
        &b,
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--time",
            "30s",
            "--verify",
            "--allow-destroy",
        ],
        after,
    );
    assert_eq!(code, Some(130), "{p}");
    let v = &p["verify"];
    assert_eq!(v["interrupted"], true, "{v}");
    assert_eq!(u(&v["blocks_checked"]), 0, "{v}");
    assert!(u(&v["blocks_skipped"]) > 0, "{v}");
    assert!(v["nothing_checked"].is_null(), "{v}");

    // A read-only verify stopped during its job: the blocks of the area
    // it would have checked are skipped.
    write_run(&b, "1m");
    let (code, p) = run_interrupted(
        &b,
        &[
            "--rw", "randread", "--bs", "4k", "--time", "30s", "--verify",
        ],
        after,
    );
    assert_eq!(code, Some(130), "{p}");
    let v = &p["verify"];
    assert_eq!(v["interrupted"], true, "{v}");
    assert_eq!(
        u(&v["blocks_checked"]) + u(&v["blocks_skipped"]),
        16 * MIB / BLOCK,
        "{v}"
    );
    assert!(u(&v["blocks_skipped"]) > 0, "{v}");

    // The text says so too.
    let child = std::process::Command::new(BIN)
        .args([
            "run",
            b.path(),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--time",
            "30s",
            "--verify",
        ])
        .args(b.state_args())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "verify: INTERRUPTED: 0 blocks checked, {} skipped",
            16 * MIB / BLOCK
        )),
        "{text}"
    );
    assert!(!text.contains("no failure"), "{text}");
}

impl Backed {
    /// `n` blocks from block `first`, read from the backing file.
    fn blocks(&self, first: u64, n: u64) -> Vec<u8> {
        let mut b = vec![0u8; (n * BLOCK) as usize];
        let f = std::fs::File::open(&self.file).unwrap();
        f.read_exact_at(&mut b, first * BLOCK).unwrap();
        b
    }

    /// A read-only `--verify` of the whole device.
    fn check(&self) -> (Option<i32>, Value) {
        self.run(&["--rw", "read", "--bs", "1m", "--verify"])
    }
}

#[test]
fn a_lost_whole_write_is_found_and_its_class_does_not_depend_on_what_was_there_before() {
    let _lock = serial();
    let b = need!(Backed::new(4 * MIB));
    // Run A; then foreign data on blocks 100..104 and zeros on 300..304;
    // then run B over everything, in 16 KiB writes of 4 blocks.
    write_run(&b, "16k");
    let foreign = random_bytes(4 * BLOCK as usize, 3);
    b.put(100, &foreign);
    b.put(300, &[0u8; 4 * BLOCK as usize]);
    let a200 = b.blocks(200, 4);
    write_run(&b, "16k");
    let (code, p) = b.check();
    assert_eq!(code, Some(0), "{}", p["verify"]);
    // Three of B's writes lost: what was there before is back.
    b.put(100, &foreign);
    b.put(200, &a200);
    b.put(300, &[0u8; 4 * BLOCK as usize]);
    let (code, p) = b.check();
    assert_eq!(code, Some(1), "{}", p["verify"]);
    let want: Vec<(u64, String)> = (100..104)
        .chain(200..204)
        .map(|k| (k, "lost_or_stale_write".to_string()))
        .chain((300..304).map(|k| (k, "unwritten".to_string())))
        .collect();
    assert_eq!(failures(&p), want, "{}", p["verify"]);

    // Run C in 1 MiB writes; one of them zeroed, one overwritten by B's.
    let b512 = b.blocks(512, 256);
    let (code, p) = b.run(&["--rw", "write", "--bs", "1m", "--verify", "--allow-destroy"]);
    assert_eq!(code, Some(0), "{p}");
    b.put(256, &vec![0u8; MIB as usize]);
    b.put(512, &b512);
    let (code, p) = b.check();
    assert_eq!(code, Some(1), "{}", p["verify"]);
    let v = &p["verify"];
    assert_eq!(u(&v["counts"]["unwritten"]), 256, "{v}");
    assert_eq!(u(&v["counts"]["lost_or_stale_write"]), 256, "{v}");
    assert_eq!(u(&v["blocks_checked"]), 1024, "{v}");
    // Each failure at its own block.
    let listed = failures(&p);
    assert_eq!(listed.len(), 100);
    for (i, (blk, class)) in listed.iter().enumerate() {
        assert_eq!((*blk, class.as_str()), (256 + i as u64, "unwritten"));
    }
}

#[test]
fn twenty_mixed_verified_writes_leave_no_false_alarm() {
    let _lock = serial();
    let b = need!(Backed::new(16 * MIB));
    let t0 = std::time::Instant::now();
    fn w<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = extra.to_vec();
        a.extend(["--verify", "--allow-destroy"]);
        a
    }
    let runs: [&[&str]; 20] = [
        &["--rw", "write", "--bs", "1m", "--qd", "4"],
        &[
            "--rw", "write", "--bs", "64k", "--offset", "4m", "--span", "4m",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "16",
            "--bytes",
            "1m",
        ],
        &["interrupt", "--rw", "randwrite", "--bs", "16k", "--qd", "8"],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--qd",
            "8",
            "--bytes",
            "2m",
            "--workers",
            "2",
        ],
        &["--rw", "write", "--bs", "128k", "--offset", "12m"],
        &["--rw", "randrw", "--bs", "8k", "--qd", "8", "--bytes", "2m"],
        &[
            "interrupt",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--engine",
            "sync",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "32",
            "--bytes",
            "512k",
            "--verify-backlog",
            "16",
        ],
        &[
            "--rw", "write", "--bs", "1m", "--span", "3m", "--offset", "1m",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "64k",
            "--qd",
            "4",
            "--bytes",
            "4m",
        ],
        &[
            "interrupt",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "32",
            "--workers",
            "2",
        ],
        &[
            "--rw", "write", "--bs", "8k", "--engine", "sync", "--offset", "8m", "--span", "1m",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--bytes",
            "256k",
        ],
        &["--rw", "write", "--bs", "1m", "--qd", "2"],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "32k",
            "--qd",
            "16",
            "--bytes",
            "3m",
        ],
        &["interrupt", "--rw", "randrw", "--bs", "16k", "--qd", "8"],
        &[
            "--rw", "write", "--bs", "256k", "--offset", "2m", "--span", "2m",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--bytes",
            "1m",
            "--workers",
            "2",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--qd",
            "4",
            "--bytes",
            "2m",
        ],
    ];
    let mut interrupted = 0;
    for (k, args) in runs.iter().enumerate() {
        let p = match args.split_first() {
            Some((&"interrupt", rest)) => {
                let mut a = w(rest);
                a.extend(["--time", "30s"]);
                let (code, p) = run_interrupted(&b, &a, std::time::Duration::from_millis(300));
                assert_eq!(code, Some(130), "run {k} {args:?}: {}", p["verify"]);
                interrupted += 1;
                p
            }
            _ => {
                let (code, p) = b.run(&w(args));
                assert_eq!(code, Some(0), "run {k} {args:?}: {}", p["verify"]);
                p
            }
        };
        assert_eq!(u(&p["verify"]["counts"]["lost_or_stale_write"]), 0);
        let (code, p) = b.check();
        let v = &p["verify"];
        assert_eq!(code, Some(0), "check after run {k} {args:?}: {v}");
        assert_eq!(v["failures"].as_array().unwrap().len(), 0, "{v}");
        assert!(u(&v["blocks_checked"]) > 0, "{v}");
        // The first run wrote every block: from then on every block is
        // known and checked.
        assert_eq!(
            u(&v["blocks_checked"]),
            16 * MIB / BLOCK,
            "after run {k}: {v}"
        );
    }
    assert_eq!(interrupted, 4);
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        t0.elapsed()
    );
}

#[test]
fn a_test_file_keeps_its_verify_state_beside_it_only_while_it_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t");
    let state = dir.path().join("t.iosurvey-verify");
    let f = path_str(&file);
    let write = |keep: bool| {
        let mut a = vec![
            "--size",
            "1m",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--bytes",
            "512k",
            "--verify",
            "--buffered",
        ];
        if keep {
            a.push("--keep");
        }
        run(f, &a)
    };
    let (code, p) = write(false);
    assert_eq!(code, Some(0), "{p}");
    assert!(
        !file.exists() && !state.exists(),
        "a removed test file leaves no state"
    );
    let (code, p) = write(true);
    assert_eq!(code, Some(0), "{p}");
    assert!(file.exists() && state.exists());
    let (code, p) = run(f, &["--rw", "read", "--verify", "--buffered"]);
    assert_eq!(code, Some(0), "{p}");
    let v = &p["verify"];
    assert_eq!(
        u(&v["blocks_checked"]) + u(&v["blocks_unwritten"]),
        256,
        "{v}"
    );
    assert!(u(&v["blocks_checked"]) > 0, "{v}");
    // One block of the file changed to another kept block: found.
    let fh = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&file)
        .unwrap();
    let written: Vec<u64> = (0..256)
        .filter(|k| {
            let mut h = [0u8; 8];
            fh.read_exact_at(&mut h, k * BLOCK).unwrap();
            &h == b"iosVRFY1"
        })
        .collect();
    let (a, z) = (written[0], written[written.len() - 1]);
    let mut blk = vec![0u8; BLOCK as usize];
    fh.read_exact_at(&mut blk, a * BLOCK).unwrap();
    fh.write_all_at(&blk, z * BLOCK).unwrap();
    fh.sync_all().unwrap();
    let (code, p) = run(f, &["--rw", "read", "--verify", "--buffered"]);
    assert_eq!(code, Some(1), "{p}");
    assert_eq!(failures(&p), [(z, "misdirected_write".to_string())]);
    // The file removed behind iosurvey's back, a new one laid out in its
    // place (the same inode number, often): the old state is not its.
    std::fs::remove_file(&file).unwrap();
    let (code, p) = run(
        f,
        &[
            "--size",
            "1m",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--bytes",
            "8k",
            "--verify",
            "--buffered",
            "--keep",
        ],
    );
    assert_eq!(code, Some(0), "{p}");
    let (code, p) = run(f, &["--rw", "read", "--verify", "--buffered"]);
    assert_eq!(code, Some(0), "{p}");
    assert_eq!(u(&p["verify"]["blocks_checked"]), 2, "{}", p["verify"]);
    // A write without --verify makes the state untrue: it goes, and a
    // later check has nothing to check (not a lost write per block).
    let (code, p) = run(f, &["--rw", "write", "--bs", "64k", "--buffered", "--keep"]);
    assert_eq!(code, Some(0), "{p}");
    assert!(file.exists() && !state.exists());
    let (code, p) = run(f, &["--rw", "read", "--verify", "--buffered"]);
    assert_eq!(code, Some(1), "{p}");
    assert_eq!(p["verify"]["counts"]["lost_or_stale_write"], 0);
    assert!(
        p["verify"]["nothing_checked"].is_string(),
        "{}",
        p["verify"]
    );
}

#[test]
fn a_verify_stopped_during_its_read_back_says_what_it_checked_and_skipped() {
    let _lock = serial();
    let b = need!(Backed::new(64 * MIB));
    let cg = need!(Cgroup::new());
    write_run(&b, "1m");
    // The job reads 1 MiB; the check after it reads 64 MiB at 8 MiB/s.
    cg.set(
        "blkio.throttle.read_bps_device",
        &format!("{} {}", maj_min(b.dev.path()), 8 * MIB),
    );
    let mut args = vec![
        "run",
        b.path(),
        "--rw",
        "read",
        "--bs",
        "1m",
        "--bytes",
        "1m",
        "--verify",
        "--output",
        "json",
        "--quiet",
    ];
    args.extend(b.state_args());
    let child = cg.spawn_iosurvey(&args);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &report["points"][0]["verify"];
    assert_eq!(v["interrupted"], true, "{v}");
    let (checked, skipped) = (u(&v["blocks_checked"]), u(&v["blocks_skipped"]));
    assert!(checked > 0 && skipped > 0, "{v}");
    assert_eq!(checked + skipped, 64 * MIB / BLOCK, "{v}");
    assert_eq!(v["failures"].as_array().unwrap().len(), 0, "{v}");
}

/// A verified write killed outright (no chance to save what it did), and a
/// state directory with no room: neither leaves a state that blames the
/// device afterwards. Before the job, the state marks the blocks it will
/// write as unknown; the save after it records what completed.
#[test]
fn a_verified_write_killed_or_unsaved_leaves_no_false_alarm() {
    let _lock = serial();
    let b = need!(Backed::new(16 * MIB));
    write_run(&b, "1m");
    // Random 16 KiB writes over the first 4 MiB, killed with SIGKILL.
    let mut all = vec!["run", b.path(), "--quiet"];
    let args = [
        "--rw",
        "randwrite",
        "--bs",
        "16k",
        "--qd",
        "8",
        "--span",
        "4m",
        "--time",
        "30s",
        "--verify",
        "--allow-destroy",
    ];
    all.extend_from_slice(&args);
    all.extend(b.state_args());
    let mut child = std::process::Command::new(BIN)
        .args(&all)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until it has written something, by the device's own count: reading
    // the backing file here would hold it open, and a file another process
    // holds is refused as in use (issue 28).
    let first = writes_done(b.dev.path());
    let t0 = std::time::Instant::now();
    while writes_done(b.dev.path()) == first {
        assert!(t0.elapsed().as_secs() < 20, "the run never wrote");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let (code, p) = b.run(&["--rw", "read", "--bs", "1m", "--verify"]);
    assert_eq!(code, Some(0), "a false alarm after a killed run: {p}");
    let v = &p["verify"];
    assert_eq!(failures(&p), [], "{v}");
    // The 12 MiB the killed run did not touch are still checked exactly.
    assert!(u(&v["blocks_checked"]) >= 3072, "{v}");

    // A state directory that is full: refused before any I/O, and the
    // device is left as it was.
    let full = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64k"]));
    {
        use std::io::Write;
        let mut f = std::fs::File::create(full.path().join("filler")).unwrap();
        while f.write_all(&[1u8; 4096]).is_ok() {}
    }
    let before = read_device(b.dev.path());
    let out = iosurvey(&[
        "run",
        b.path(),
        "--rw",
        "write",
        "--bs",
        "1m",
        "--verify",
        "--allow-destroy",
        "--quiet",
        "--verify-state",
        path_str(full.path()),
    ]);
    assert_ne!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        read_device(b.dev.path()) == before,
        "written although its state could not be saved"
    );
}

/// One device under two names has one state; `--verify` with `--shared`
/// (another run's writes would make the state untrue) is refused.
#[test]
fn a_device_named_through_a_link_shares_its_state_and_shared_is_refused() {
    let _lock = serial();
    let b = need!(Backed::new(8 * MIB));
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("by-id-disk");
    std::os::unix::fs::symlink(b.dev.path(), &link).unwrap();
    let (code, p) = run(
        path_str(&link),
        &[
            "--rw",
            "write",
            "--bs",
            "1m",
            "--verify",
            "--allow-destroy",
            "--verify-state",
            path_str(b.state.path()),
        ],
    );
    assert_eq!(code, Some(0), "{p}");
    let (code, p) = b.run(&["--rw", "read", "--bs", "1m", "--verify"]);
    assert_eq!(code, Some(0), "{}", p["verify"]);
    assert_eq!(u(&p["verify"]["blocks_checked"]), 2048, "{}", p["verify"]);

    let out = iosurvey(&[
        "run",
        b.path(),
        "--rw",
        "write",
        "--verify",
        "--shared",
        "--allow-destroy",
        "--verify-state",
        path_str(b.state.path()),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr_of(&out).contains("--shared"), "{}", describe(&out));
}
