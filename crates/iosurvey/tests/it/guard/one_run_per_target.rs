//! One run per target, one name per target, and what runs leave behind,
//! on real loop devices and files: a second run on a device or file in use
//! is refused unless `--shared` (which the report records), the same target
//! named twice (a symlink, a hard link) is refused in every mode,
//! `--readonly` lays out no test file, `--dry-run` checks the targets, and
//! the test file of a killed run is removed by the next run in its
//! directory, and nothing else is.
//!
//! The device tests need root (they create their own loop devices and
//! remove them through Drop guards); without it they print "skipping:
//! <reason>" and pass.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const SIZE: u64 = 16 * MIB;

/// Starts `iosurvey ARGS` in the background and waits until it runs.
fn start(args: &[&str]) -> Running {
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting iosurvey");
    sleep(Duration::from_millis(1500));
    Running(Some(child))
}

/// Stops a run started by `start` with SIGINT; it must end as stopped.
fn finish(mut run: Running) {
    let child = run.0.take().unwrap();
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 130)),
        "{}",
        describe(&out)
    );
}

#[test]
fn a_second_run_on_a_target_in_use_is_refused_unless_shared() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    let read = |extra: &[&str]| {
        let mut a = vec![
            "run", dev, "--rw", "read", "--bs", "64k", "--bytes", "1m", "--quiet",
        ];
        a.extend_from_slice(extra);
        iosurvey(&a)
    };
    let write = |extra: &[&str]| {
        let mut a = vec![
            "run",
            dev,
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "1m",
            "--allow-destroy",
            "--quiet",
        ];
        a.extend_from_slice(extra);
        iosurvey(&a)
    };

    // A read run holds the device: a read and a write are refused, and
    // so is a --shared run, as the run holding it did not give --shared.
    let first = start(&["run", dev, "--rw", "read", "--bs", "64k", "--time", "60s"]);
    assert_refused(&read(&[]), &["another iosurvey run", "--shared"]);
    assert_refused(&write(&[]), &["another iosurvey run", "--shared"]);
    assert_refused(&read(&["--shared"]), &["without --shared"]);
    finish(first);

    // A --shared read run: --shared runs beside it (a write too, as a
    // reader does not open the device exclusively); others are refused.
    let shared_read = ["run", dev, "--rw", "read", "--bs", "64k", "--time", "60s"];
    let first = start(&[&shared_read[..], &["--shared"]].concat());
    let shared = read(&["--shared", "--output", "json"]);
    let report = report_of(&shared);
    assert_eq!(report["shared"], true, "--shared is recorded");
    assert_valid(&report);
    let out = write(&["--shared"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_refused(&read(&[]), &["another iosurvey run"]);
    finish(first);

    // A write run holds it exclusively.
    let first = start(&[
        "run",
        dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--time",
        "60s",
        "--allow-destroy",
    ]);
    assert_refused(&write(&[]), &["--shared"]);
    assert_refused(&read(&[]), &["another iosurvey run"]);
    // --shared never overrides a failed exclusive open.
    assert_refused(&write(&["--shared"]), &["exclusively", "--shared"]);
    finish(first);
    // Once it has ended, the device is free again.
    let out = read(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    // The same with a file.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let fs = path_str(&f);
    let made = iosurvey(&[
        "run",
        fs,
        "--size",
        "4m",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--keep",
        "--quiet",
        "--buffered",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", describe(&made));
    let first = start(&[
        "run",
        fs,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--time",
        "60s",
        "--buffered",
    ]);
    let again = iosurvey(&[
        "run",
        fs,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--buffered",
        "--quiet",
    ]);
    assert_refused(&again, &["another iosurvey run", "--shared"]);
    let shared_args = [
        "run",
        fs,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--buffered",
        "--quiet",
        "--shared",
    ];
    assert_refused(&iosurvey(&shared_args), &["without --shared"]);
    finish(first);
    // Beside a --shared run, a --shared run runs.
    let first = start(&[
        "run",
        fs,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--time",
        "60s",
        "--buffered",
        "--shared",
    ]);
    let shared = iosurvey(&shared_args);
    assert_eq!(shared.status.code(), Some(0), "{}", describe(&shared));
    finish(first);
}

#[test]
fn the_same_target_named_twice_is_refused_in_every_mode() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(32 * MIB, &["--direct-io=on"]));
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(l.path(), &alias).unwrap();
    let (dev, al) = (path_str(l.path()), path_str(&alias));
    let cases: [&[&str]; 6] = [
        &["run", dev, al, "--rw", "read", "--bytes", "1m"],
        &["run", dev, al, "--rw", "read", "--bytes", "1m", "--dry-run"],
        &["parallel", dev, al],
        &["matrix", dev, al, "--dry-run"],
        &[
            "profile",
            dev,
            al,
            "--simulate",
            "concat",
            "--zones",
            "4",
            "--dry-run",
        ],
        &[
            "survey",
            dev,
            al,
            "--size",
            "16m",
            "--crghi",
            "2",
            "--actions",
            "read",
        ],
    ];
    for args in cases {
        let out = iosurvey(args);
        assert_refused(&out, &["the same target as", dev]);
    }
    // A file and a hard link to it.
    let f = dir.path().join("f");
    std::fs::write(&f, random_bytes(MIB as usize, 3)).unwrap();
    let hard = dir.path().join("hard");
    std::fs::hard_link(&f, &hard).unwrap();
    let out = iosurvey(&[
        "run",
        path_str(&f),
        path_str(&hard),
        "--rw",
        "read",
        "--buffered",
    ]);
    assert_refused(&out, &["the same target as"]);
    // One directory twice: one test file, named twice.
    let d = path_str(dir.path());
    let out = iosurvey(&["run", d, d, "--size", "1m", "--rw", "read", "--buffered"]);
    assert_refused(&out, &["the same target as"]);
}

#[test]
fn readonly_lays_out_no_test_file() {
    let _lock = serial();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new");
    for target in [path_str(&f), path_str(dir.path())] {
        let out = iosurvey(&[
            "run",
            target,
            "--size",
            "16m",
            "--readonly",
            "--rw",
            "read",
            "--quiet",
        ]);
        assert_refused(&out, &["--readonly", "lay out"]);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "--readonly left a file"
        );
    }
    // An existing file of that size is read.
    std::fs::write(&f, random_bytes(MIB as usize, 5)).unwrap();
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--size",
        "1m",
        "--readonly",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--buffered",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn leftovers_of_a_killed_run_are_removed_by_the_next_and_nothing_else() {
    let _lock = serial();
    need!(require_root());
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let mut child = Command::new(BIN)
        .args([
            "run",
            d,
            "--size",
            "8m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--time",
            "30s",
            "--buffered",
            "--quiet",
        ])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let left = dir.path().join(format!("iosurvey-{pid}.testfile"));
    let t0 = Instant::now();
    while !(left.exists() && t0.elapsed() > Duration::from_millis(1500)) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no test file appeared"
        );
        sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(left.exists(), "SIGKILL leaves the test file behind");
    let mut buf = [0u8; 8];
    if rustix::fs::getxattr(&left, "user.iosurvey.created", &mut buf[..]).is_err() {
        skip!("{d} has no user xattrs: iosurvey cannot mark its files");
    }
    // A user's file with a test file's name, of a process that is gone.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let theirs = dir.path().join(format!("iosurvey-{}.testfile", gone.id()));
    std::fs::write(&theirs, b"user data").unwrap();

    let out = iosurvey(&[
        "run",
        d,
        "--size",
        "1m",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--buffered",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr_of(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("left behind")).collect();
    assert_eq!(lines.len(), 1, "one line per leftover: {err}");
    assert!(lines[0].contains(path_str(&left)), "{err}");
    assert!(!left.exists(), "the leftover was not removed");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"user data");
}

#[test]
fn dry_run_checks_the_targets_and_creates_nothing() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mkfs.ext4"]));
    let blank = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let ext4 = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    mkfs_ext4(ext4.path());
    let w = |dev: &Path, extra: &[&str]| {
        let mut a = vec!["run", path_str(dev), "--rw", "write", "--dry-run"];
        a.extend_from_slice(extra);
        iosurvey(&a)
    };
    assert_refused(&w(blank.path(), &[]), &["--allow-destroy"]);
    assert_refused(&w(ext4.path(), &["--allow-destroy"]), &["ext4 signature"]);
    let ok = w(blank.path(), &["--allow-destroy"]);
    assert_eq!(ok.status.code(), Some(0), "{}", describe(&ok));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new");
    let out = iosurvey(&["run", path_str(&f), "--size", "1m", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(!f.exists(), "--dry-run created the test file");
}

#[test]
fn a_disk_and_its_partition_in_one_run_are_refused_but_siblings_are_not() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "addpart"]));
    let l = need!(LoopDev::blank(32 * MIB, &["-P", "--direct-io=on"]));
    let dev = path_str(l.path());
    need!(sh("addpart", &[dev, "1", "2048", "16384"]));
    need!(sh("addpart", &[dev, "2", "18432", "16384"]));
    let (p1, p2) = (format!("{dev}p1"), format!("{dev}p2"));
    let t0 = Instant::now();
    while !(Path::new(&p1).exists() && Path::new(&p2).exists()) {
        if t0.elapsed() > Duration::from_secs(2) {
            skip!("the partitions of {dev} did not appear");
        }
        sleep(Duration::from_millis(20));
    }
    for pair in [[dev, p1.as_str()], [p1.as_str(), dev]] {
        let out = iosurvey(&[
            "run", pair[0], pair[1], "--rw", "read", "--bs", "64k", "--bytes", "1m", "--quiet",
        ]);
        assert_refused(&out, &["overlaps"]);
    }
    let out = iosurvey(&[
        "run", &p1, &p2, "--rw", "read", "--bs", "64k", "--bytes", "1m", "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn a_target_another_program_holds_a_flock_on_is_refused_naming_that_program() {
    // `flock -x FILE CMD` (a backup, a script's own guard): refused, and
    // not as "another iosurvey run", which would send the user looking
    // for a run that is not there.
    need!(require_tool("flock"));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("held.dat");
    std::fs::write(&f, vec![7u8; MIB as usize]).unwrap();
    let mut holder = Command::new("flock")
        .arg("-x")
        .arg(&f)
        .args(["sleep", "60"])
        .spawn()
        .unwrap();
    let holder_pid = holder.id();
    // Until flock holds it (a refusal of any kind before that proves
    // nothing).
    let until = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .any(|l| l.contains(&format!(" {holder_pid} ")))
    {
        assert!(Instant::now() < until, "flock did not take its lock");
        sleep(Duration::from_millis(20));
    }
    let refused_for = |pid: u32, comm: &str| {
        for extra in [&[][..], &["--shared"][..]] {
            let mut a = vec!["run", path_str(&f), "--rw", "read", "--bs", "4k"];
            a.extend(["--bytes", "64k", "--quiet"]);
            a.extend_from_slice(extra);
            let out = iosurvey(&a);
            assert_refused(
                &out,
                &[&format!("process {pid} ({comm}) holds a lock on it")],
            );
            assert!(
                !stderr_of(&out).contains("iosurvey run"),
                "{}",
                describe(&out)
            );
        }
    };
    refused_for(holder_pid, "flock");
    // flock killed, its `sleep` left holding the file (and so the lock):
    // the process holding it is named.
    let children = format!("/proc/{holder_pid}/task/{holder_pid}/children");
    let sleeper: u32 = loop {
        // flock takes the lock, then starts its command.
        match std::fs::read_to_string(&children).unwrap().trim().parse() {
            Ok(pid) => break pid,
            Err(_) if Instant::now() < until => sleep(Duration::from_millis(20)),
            Err(e) => panic!("flock started no command: {e}"),
        }
    };
    let _ = holder.kill();
    let _ = holder.wait();
    refused_for(sleeper, "sleep");
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(sleeper as i32).unwrap(),
        rustix::process::Signal::KILL,
    );
    let until = Instant::now() + Duration::from_secs(20);
    while Path::new(&format!("/proc/{sleeper}")).exists() && Instant::now() < until {
        sleep(Duration::from_millis(20));
    }
    let _ = holder.kill();
    let _ = holder.wait();
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--rw",
        "read",
        "--bs",
        "4k",
        "--bytes",
        "64k",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}
