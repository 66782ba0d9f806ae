//! The clean-up raced for real: a thread swaps a user's file with the
//! run's test file, or with a killed run's leftover, by
//! `renameat2(RENAME_EXCHANGE)` in a loop while iosurvey removes it. The
//! user's file must survive every round, under one name or the other.

use crate::common::*;
use rustix::fs::{Mode, OFlags, RenameFlags};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const USER_DATA: &[u8] = b"the user's own file";

/// Exchanges `a` and `b` in `dir` in a loop until `stop`.
fn racer(
    dir: &Path,
    a: OsString,
    b: OsString,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::empty()).unwrap();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let _ = rustix::fs::renameat_with(&fd, &a, &fd, &b, RenameFlags::EXCHANGE);
        }
    })
}

/// How many files in `dir` hold the user's data.
fn users_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read(e.path()).is_ok_and(|b| b == USER_DATA))
        .count()
}

/// Empties `dir` and puts the user's file back in it.
fn fresh(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let _ = std::fs::remove_file(e.path());
        let _ = std::fs::remove_dir(e.path());
    }
    std::fs::write(dir.join("users-file"), USER_DATA).unwrap();
}

/// Test files carry iosurvey's mark in a user extended attribute.
fn user_xattrs(dir: &Path) -> Result<(), String> {
    let flags = rustix::fs::XattrFlags::empty();
    rustix::fs::setxattr(dir, "user.iosurvey.probe", b"1", flags)
        .map_err(|e| format!("no user xattrs on {}: {e}", dir.display()))?;
    let _ = rustix::fs::removexattr(dir, "user.iosurvey.probe");
    Ok(())
}

/// `run DIR` with a test file of 1 MiB, for `time`.
fn run_in(dir: &Path, time: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args(["run", path_str(dir), "--size", "1m", "--time", time, "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

#[test]
fn a_users_file_swapped_with_the_test_file_during_its_removal_survives() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    need!(user_xattrs(d.path()));
    for round in 0..15 {
        fresh(d.path());
        let child = run_in(d.path(), "100ms").spawn().unwrap();
        let test_file = format!("iosurvey-{}.testfile", child.id());
        let stop = Arc::new(AtomicBool::new(false));
        let r = racer(
            d.path(),
            test_file.into(),
            "users-file".into(),
            stop.clone(),
        );
        let out = child.wait_with_output().unwrap();
        stop.store(true, Ordering::Relaxed);
        r.join().unwrap();
        assert_eq!(
            users_files(d.path()),
            1,
            "round {round}: the user's file was removed: {}",
            describe(&out)
        );
    }
}

#[test]
fn a_users_file_swapped_with_a_leftover_during_its_removal_survives() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    need!(user_xattrs(d.path()));
    for round in 0..15 {
        fresh(d.path());
        // A run killed outright leaves its test file behind.
        let mut killed = run_in(d.path(), "30s").spawn().unwrap();
        let left = d.path().join(format!("iosurvey-{}.testfile", killed.id()));
        let t0 = std::time::Instant::now();
        while std::fs::metadata(&left).map_or(0, |m| m.len()) < MIB {
            assert!(
                t0.elapsed().as_secs() < 30,
                "the test file was never laid out"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        killed.kill().unwrap();
        killed.wait().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let name = left.file_name().unwrap().to_os_string();
        let r = racer(d.path(), name, "users-file".into(), stop.clone());
        let out = run_in(d.path(), "100ms").output().unwrap();
        stop.store(true, Ordering::Relaxed);
        r.join().unwrap();
        assert_eq!(
            users_files(d.path()),
            1,
            "round {round}: the user's file was removed: {}",
            describe(&out)
        );
    }
}

#[test]
fn a_users_file_swapped_with_a_frame_during_the_clean_up_survives() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    need!(user_xattrs(d.path()));
    let frames = d.path().join("iosurvey-frames");
    for round in 0..15 {
        fresh(d.path());
        let child = Command::new(BIN)
            .args(["video", path_str(d.path()), "--write", "-q"])
            .args(["--frame-size", "64k", "--frames", "40"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The racer swaps a frame with the user's file, which is outside
        // the frames directory, from the moment that frame exists.
        let frame = frames.join(format!("f{:07}.frm", round * 2 + 1));
        let t0 = std::time::Instant::now();
        while !frame.exists() && t0.elapsed().as_secs() < 30 {
            std::thread::yield_now();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let r = cross_racer(&frame, &d.path().join("users-file"), stop.clone());
        let out = child.wait_with_output().unwrap();
        stop.store(true, Ordering::Relaxed);
        r.join().unwrap();
        let found = users_files(d.path()) + dir_users_files(&frames);
        assert_eq!(
            found,
            1,
            "round {round}: the user's file was removed: {}",
            describe(&out)
        );
        let _ = std::fs::remove_dir_all(&frames);
    }
}

/// How many files in `dir`, if it is there, hold the user's data.
fn dir_users_files(dir: &Path) -> usize {
    if dir.is_dir() {
        users_files(dir)
    } else {
        0
    }
}

/// Exchanges the files `a` and `b`, in two directories, in a loop until
/// `stop`.
fn cross_racer(a: &Path, b: &Path, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let open = |p: &Path| rustix::fs::open(p.parent().unwrap(), flags, Mode::empty());
    let (da, db) = (open(a), open(b));
    let (na, nb) = (
        a.file_name().unwrap().to_owned(),
        b.file_name().unwrap().to_owned(),
    );
    std::thread::spawn(move || {
        let (Ok(da), Ok(db)) = (da, db) else {
            return;
        };
        while !stop.load(Ordering::Relaxed) {
            let _ = rustix::fs::renameat_with(&da, &na, &db, &nb, RenameFlags::EXCHANGE);
        }
    })
}

#[test]
fn a_test_file_on_a_filesystem_filled_mid_run_is_still_removed() {
    // Before: the removal made a new trash directory, which a filesystem
    // with no inode or block left refuses: "could not remove ... No
    // space left on device", exit 0, the test file left behind. The
    // trash is now made when the run creates its test file.
    let _g = serial();
    let fs = need!(Mount::new(
        "tmpfs",
        &["-t", "tmpfs", "-o", "size=8m,nr_inodes=64"]
    ));
    let d = fs.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let child = Command::new(BIN)
        .args(["run", path_str(&d), "--size", "1m", "--time", "1500ms"])
        .args(["--buffered", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let test_file = d.join(format!("iosurvey-{}.testfile", child.id()));
    let t0 = std::time::Instant::now();
    while std::fs::metadata(&test_file).map_or(0, |m| m.len()) < MIB {
        assert!(
            t0.elapsed().as_secs() < 30,
            "the test file was never laid out"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let fillers = fill_filesystem(fs.path(), 0);
    assert!(
        std::fs::create_dir(fs.path().join("x")).is_err(),
        "the filesystem is full"
    );
    let out = child.wait_with_output().unwrap();
    for f in fillers {
        let _ = std::fs::remove_file(f);
    }
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}: {}", describe(&out));
}

/// `chattr +i` on a directory, undone on drop (also when the test fails).
struct Immutable<'a>(&'a Path);

impl Drop for Immutable<'_> {
    fn drop(&mut self) {
        let _ = sh("chattr", &["-i", path_str(self.0)]);
    }
}

#[test]
fn a_test_file_that_cannot_be_removed_is_exit_1_not_0() {
    // Before: "could not remove test file ...", exit 0: a run that
    // leaves its own file behind said it had succeeded.
    let _g = serial();
    need!(require_root_and(&["chattr"]));
    let d = tempfile::tempdir().unwrap();
    if let Err(e) = sh("chattr", &["+i", path_str(d.path())]) {
        skip!("no immutable flag here: {e}");
    }
    drop(Immutable(d.path()));
    let child = run_in(d.path(), "1s").spawn().unwrap();
    let test_file = d.path().join(format!("iosurvey-{}.testfile", child.id()));
    let t0 = std::time::Instant::now();
    while std::fs::metadata(&test_file).map_or(0, |m| m.len()) < MIB {
        assert!(
            t0.elapsed().as_secs() < 30,
            "the test file was never laid out"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let frozen = Immutable(d.path());
    sh("chattr", &["+i", path_str(d.path())]).expect("chattr +i");
    let out = child.wait_with_output().unwrap();
    drop(frozen);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(
        err.lines().count() == 1 && err.contains("could not remove test file"),
        "{err}"
    );
}
