//! A stop in the first moments of a run, before it has opened anything:
//! exit 130 (never the 143 of SIGTERM's default action), one line on
//! stderr, and no `.iosurvey-trash-*` directory left beside the report.
//! Before, the handler was installed only after the outputs were judged
//! (which makes their trash directories), and a SIGTERM sent before that
//! killed the run with them left behind.
//!
//! The moments are found by what the run does, not by the clock: a
//! Pushgateway of the test's own that holds the run's readiness check
//! (made once the outputs are judged), and the handler seen in
//! `/proc/PID/status`.

use crate::common::*;
use rustix::process::{Pid, Signal};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a run may take to reach a moment before the test gives up
/// (a hang, not a figure: a loaded machine takes what it takes below it).
const PATIENCE: Duration = Duration::from_secs(60);

/// Starts a run that writes a test file in `target` and its report to
/// `out/run.json`, with `extra` flags.
fn start(target: &Path, out: &Path, extra: &[&str]) -> Child {
    Command::new(BIN)
        .arg("run")
        .arg(target)
        .args(["--rw", "randwrite", "--bs", "4k", "--size", "8m"])
        .args(["--time", "5s", "--quiet", "--json"])
        .arg(out.join("run.json"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting iosurvey")
}

/// The names in `dir`.
fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Sends SIGTERM to `child`.
fn terminate(child: &Child) {
    rustix::process::kill_process(Pid::from_child(child), Signal::TERM).unwrap();
}

/// What every early stop must end with: exit 130, at most one line on
/// stderr (the run's own words for where it stopped; none once it was
/// measuring, with --quiet), no trash in `outdir` and no test file in
/// `target`. `when` says which stop it was.
fn assert_stopped_clean(out: &Output, target: &Path, outdir: &Path, when: &str) {
    assert_eq!(out.status.code(), Some(130), "{when}: {}", describe(out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().count() <= 1, "{when}: {}", describe(out));
    let trash: Vec<String> = names_in(outdir)
        .into_iter()
        .filter(|n| n.starts_with(".iosurvey-trash-"))
        .collect();
    assert!(
        trash.is_empty(),
        "{when}: left beside the report: {trash:?}"
    );
    let left = names_in(target);
    assert!(left.is_empty(), "{when}: left in the target: {left:?}");
}

/// Accepts the one connection the run makes to `listener`, within
/// [`PATIENCE`]; `None` if the run never made it.
fn accept_within(listener: &TcpListener, child: &mut Child) -> Option<TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + PATIENCE;
    while Instant::now() < until {
        match listener.accept() {
            Ok((c, _)) => return Some(c),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("accepting: {e}"),
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        sleep(Duration::from_millis(5));
    }
    None
}

/// Reads an HTTP request's head from `c` (up to its blank line).
fn read_head(c: &mut TcpStream) -> String {
    c.set_nonblocking(false).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && c.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A SIGTERM while the run's outputs are judged, their trash directories
/// made, and the run waits for its Pushgateway's readiness check (the
/// test's listener, which answers only once the signal is sent): the run
/// ends as interrupted before it opens its target, and removes its trash.
/// Before, it died of the signal (143), its trash left beside the report.
#[test]
fn sigterm_while_the_outputs_are_judged_exits_130_and_leaves_no_trash() {
    // Alone: the timed stop tests beside it must not share the CPUs.
    let _lock = serial();
    let target = tempfile::tempdir().unwrap();
    let outdir = tempfile::tempdir().unwrap();
    let gateway = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", gateway.local_addr().unwrap());
    let child = start(target.path(), outdir.path(), &["--metrics-push", &url]);
    let mut run = Running(Some(child));
    let child = run.0.as_mut().unwrap();
    let Some(mut check) = accept_within(&gateway, child) else {
        let out = run.0.take().unwrap().wait_with_output().unwrap();
        panic!("the run never checked its gateway: {}", describe(&out));
    };
    let head = read_head(&mut check);
    assert!(head.starts_with("GET "), "not a readiness check: {head:?}");
    // The run is inside its checks, its outputs judged: their trash is
    // there now (what the signal used to leave behind).
    let made = names_in(outdir.path());
    assert!(
        made.iter().any(|n| n.starts_with(".iosurvey-trash-")),
        "no trash made before the readiness check: {made:?}"
    );
    terminate(child);
    // The answer may find the run gone (killed by the signal): that is
    // the failure the assertions below describe.
    let _ = check.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    drop(check);
    let out = run.0.take().unwrap().wait_with_output().unwrap();
    assert_stopped_clean(&out, target.path(), outdir.path(), "judging");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{}", describe(&out));
    assert!(err.contains("stopped by a signal"), "{}", describe(&out));
    assert!(
        !outdir.path().join("run.json").exists(),
        "a report of nothing was written"
    );
}

/// Whether process `pid` catches SIGTERM (its handler is installed), by
/// the `SigCgt` mask of `/proc/PID/status`; `None` once it is gone.
fn catches_sigterm(pid: u32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
    let mask = u64::from_str_radix(mask.trim(), 16).ok()?;
    Some(mask & (1 << (Signal::TERM.as_raw() - 1)) != 0)
}

/// SIGTERM at several moments from the first one the process can take it
/// (its handler seen installed) into the layout of its test file: each
/// run ends with 130 and one line, and leaves nothing behind.
#[test]
fn sigterm_at_any_early_moment_exits_130_and_leaves_nothing() {
    let _lock = serial();
    for after_ms in [0, 1, 5, 20, 50] {
        let target = tempfile::tempdir().unwrap();
        let outdir = tempfile::tempdir().unwrap();
        let child = start(target.path(), outdir.path(), &[]);
        let mut run = Running(Some(child));
        let pid = run.0.as_ref().unwrap().id();
        let started = Instant::now();
        while catches_sigterm(pid) == Some(false) {
            assert!(started.elapsed() < PATIENCE, "no SIGTERM handler came");
            std::thread::yield_now();
        }
        sleep(Duration::from_millis(after_ms));
        let child = run.0.take().unwrap();
        terminate(&child);
        let out = child.wait_with_output().unwrap();
        let when = format!("SIGTERM {after_ms} ms after the handler");
        assert_stopped_clean(&out, target.path(), outdir.path(), &when);
    }
}

/// Whether process `pid` is asleep in a system call (state `D`, a
/// syscall number in `/proc/PID/syscall`): waiting on the frozen
/// filesystem.
fn blocked_in_a_syscall(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command's name, which ends with the last ')'.
    let state = stat.rsplit_once(')').map(|(_, r)| r.trim_start());
    let call = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
    let number = call
        .split(' ')
        .next()
        .and_then(|n| n.trim().parse::<u64>().ok());
    state.is_some_and(|s| s.starts_with('D')) && number.is_some()
}

/// The hostile tester's case: the report goes to a frozen filesystem
/// (`fsfreeze`), so the judging of the output waits there; a SIGTERM
/// then, and a thaw. Before, the signal killed the run once the thaw let
/// it go (143), its trash made and left in the report's directory.
#[test]
fn sigterm_while_the_output_filesystem_is_frozen_exits_130_and_leaves_no_trash() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let l = need!(LoopDev::blank(64 * MIB, &[]));
    mkfs_ext4_settled(l.path());
    let mut m = need!(Mount::new(path_str(l.path()), &[]));
    let outdir = m.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    m.freeze().expect("fsfreeze -f");
    let target = tempfile::tempdir().unwrap();
    let child = start(target.path(), &outdir, &[]);
    let mut run = Running(Some(child));
    let pid = run.0.as_ref().unwrap().id();
    let started = Instant::now();
    // Three looks in a row: not a moment's wait for a page of the binary.
    let mut seen = 0;
    while seen < 3 {
        assert!(
            started.elapsed() < PATIENCE,
            "the run never waited on the frozen filesystem"
        );
        seen = if blocked_in_a_syscall(pid) {
            seen + 1
        } else {
            0
        };
        sleep(Duration::from_millis(10));
    }
    let child = run.0.take().unwrap();
    terminate(&child);
    must("fsfreeze", &["-u", path_str(m.path())]);
    let out = child.wait_with_output().unwrap();
    assert_stopped_clean(&out, target.path(), &outdir, "frozen");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stopped by a signal"), "{}", describe(&out));
}

/// A command that never looks at the stop flag is ended by a signal at
/// once, with 130: `report -` waiting on a terminal that never types.
/// Before, SIGTERM's default action ended it (143).
#[test]
fn sigterm_ends_a_report_waiting_on_stdin_with_130() {
    let _lock = serial();
    let outdir = tempfile::tempdir().unwrap();
    let child = Command::new(BIN)
        .args(["report", "-", "--html"])
        .arg(outdir.path().join("r.html"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting iosurvey");
    let mut run = Running(Some(child));
    let pid = run.0.as_ref().unwrap().id();
    let started = Instant::now();
    while catches_sigterm(pid) == Some(false) {
        assert!(started.elapsed() < PATIENCE, "no SIGTERM handler came");
        std::thread::yield_now();
    }
    let mut child = run.0.take().unwrap();
    // Its stdin stays open, and empty, until the end.
    let stdin = child.stdin.take();
    terminate(&child);
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let left = names_in(outdir.path());
    assert!(left.is_empty(), "left beside the page: {left:?}");
}
