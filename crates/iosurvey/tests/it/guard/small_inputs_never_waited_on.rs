//! A fio job file (`run --fio JOB`) and ORION's `<testname>.lun` are read
//! only when they are regular files: anything else is refused at once, one
//! line, exit 2. A FIFO with no writer was opened (a blocking open(2))
//! before it was looked at, so the run hung in `fifo_open` forever instead
//! of refusing it; opening first also hands any device named there its
//! open(2) side effects (a tape rewinds, a watchdog is armed) before the
//! refusal.
//!
//! Files only: no root needed.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs iosurvey with `args` in `dir`, killed after 20 s: `None` if it
/// was still running then.
fn run_bounded(dir: &Path, args: &[&str]) -> Option<Output> {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("scsidevs")
        .env_remove("rawdevs")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        0o600.into(),
        0,
    )
    .unwrap();
}

#[test]
fn a_fifo_as_the_fio_job_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("j.fio"));
    let out = run_bounded(dir.path(), &["run", "--fio", "j.fio"])
        .expect("run --fio FIFO hung waiting for a writer instead of refusing it");
    assert_refused(&out, &["j.fio"]);
    assert_eq!(
        stderr_of(&out).trim_end().lines().count(),
        1,
        "{}",
        describe(&out)
    );
}

#[test]
fn a_fifo_as_orions_lun_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("q.lun"));
    let out = run_bounded(
        dir.path(),
        &[
            "matrix",
            "-run",
            "simple",
            "-num_disks",
            "1",
            "-duration",
            "1",
            "-testname",
            "q",
        ],
    )
    .expect(
        "matrix with a FIFO as <testname>.lun hung waiting for a writer instead of refusing it",
    );
    assert_refused(&out, &["q.lun"]);
    assert_eq!(
        stderr_of(&out).trim_end().lines().count(),
        1,
        "{}",
        describe(&out)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("q.lun")],
        "files left behind"
    );
}
