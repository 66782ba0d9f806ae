//! `--sqpoll`, `--sqpoll-cpu`, `--hipri` and `--cpus`: refused where they
//! cannot hold (sync engine, a device without poll queues, a CPU this
//! process may not use), recorded in the report where they ran; and the
//! CPU time per I/O that every report carries.

use crate::common::*;
use serde_json::Value;

/// A 4 MiB file to read, in a directory removed on drop.
fn data_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    std::fs::write(&f, random_bytes(4 << 20, 7)).unwrap();
    (dir, f)
}

/// Asserts a refusal: exit 2, one line on stderr saying `what`, no stdout.
fn assert_refused(args: &[&str], what: &str) {
    let out = iosurvey(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(err.contains(what), "stderr does not say {what:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(out.stdout.is_empty(), "{}", describe(&out));
}

#[test]
fn polling_with_the_sync_engine_is_refused_before_any_io() {
    let (_d, f) = data_file();
    let f = path_str(&f);
    for flag in ["--sqpoll", "--hipri"] {
        for dry in [&["--dry-run"][..], &[]] {
            let mut args = vec!["run", f, "--engine", "sync", flag];
            args.extend_from_slice(dry);
            assert_refused(&args, &format!("{flag} needs the io_uring engine"));
        }
    }
    // profile runs sync unless told otherwise.
    assert_refused(
        &["profile", f, "--zones", "2", "--sqpoll", "--dry-run"],
        "--sqpoll needs the io_uring engine",
    );
}

#[test]
fn a_cpu_this_process_may_not_use_is_refused() {
    let (_d, f) = data_file();
    let f = path_str(&f);
    assert_refused(
        &["run", f, "--cpus", "0,4000", "--dry-run"],
        "--cpus: CPU 4000 is not one this process may run on",
    );
    assert_refused(
        &["run", f, "--sqpoll", "--sqpoll-cpu", "4000", "--dry-run"],
        "--sqpoll-cpu: CPU 4000",
    );
    assert_refused(&["run", f, "--cpus", "2-1"], "runs backwards");
    let out = iosurvey(&["run", f, "--sqpoll-cpu", "0", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "--sqpoll-cpu needs --sqpoll");
}

#[test]
fn hipri_on_a_file_on_no_block_device_is_refused() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        skip!("no /dev/shm (tmpfs) here");
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("t.dat");
    std::fs::write(&f, random_bytes(1 << 20, 1)).unwrap();
    assert_refused(
        &["run", path_str(&f), "--hipri", "--dry-run"],
        "is not on a block device",
    );
}

#[test]
fn workers_are_pinned_as_asked_and_the_report_says_so() {
    let (_d, f) = data_file();
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--rw",
        "randread",
        "--workers",
        "2",
        "--cpus",
        "0",
        "--bytes",
        "1m",
        "--buffered",
        "--output",
        "json",
        "--quiet",
    ]);
    let r = report_of(&out);
    assert_valid(&r);
    let s = &r["points"][0]["settings"];
    assert_eq!(s["cpus"], serde_json::json!([0]));
    assert_eq!(s["sqpoll"], Value::Bool(false));
    assert_eq!(s["hipri"], Value::Bool(false));
    assert!(s["sqpoll_cpu"].is_null());
}

#[test]
fn cpu_time_per_io_is_in_the_json_and_the_text() {
    let (_d, file) = data_file();
    let out = iosurvey(&[
        "run",
        path_str(&file),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--bytes",
        "2m",
        "--buffered",
        "--output",
        "json",
        "--quiet",
    ]);
    let r = report_of(&out);
    let p = &r["points"][0];
    let ops = u(&p["total"]["read"]["ops"]);
    assert_eq!(ops, 512);
    let cpu_ns = u(&p["cpu_user_ns"]) + u(&p["cpu_system_ns"]);
    let want = cpu_ns as f64 / 1e3 / ops as f64;
    assert!((f(&p["cpu_us_per_io"]) - want).abs() < 1e-9, "{p}");
    let text = iosurvey(&["run", path_str(&file), "--bytes", "1m", "--buffered", "-q"]);
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text.lines().find(|l| l.trim_start().starts_with("cpu:"));
    assert!(
        line.is_some_and(|l| l.ends_with("us per I/O")),
        "no CPU time per I/O in: {text}"
    );
}

#[test]
fn hipri_on_a_loop_device_without_poll_queues_is_refused() {
    let _g = serial();
    let l = need!(LoopDev::new(8 * MIB, 3));
    let dev = path_str(l.path());
    let io_poll = sysfs_read(l.path(), "queue/io_poll");
    assert_eq!(io_poll.trim(), "0", "this loop device has poll queues?");
    for dry in [&["--dry-run"][..], &[]] {
        let mut args = vec!["run", dev, "--hipri", "--bytes", "1m"];
        args.extend_from_slice(dry);
        assert_refused(&args, "has no poll queues");
    }
}

#[test]
fn sqpoll_runs_on_zram_and_the_report_says_so() {
    let _g = serial();
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    let out = iosurvey(&[
        "run",
        dev,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--bytes",
        "4m",
        "--sqpoll",
        "--sqpoll-cpu",
        "0",
        "--output",
        "json",
        "--quiet",
    ]);
    let r = report_of(&out);
    assert_valid(&r);
    let p = &r["points"][0];
    assert_eq!(
        p["settings"]["sqpoll"],
        Value::Bool(true),
        "{}",
        p["settings"]
    );
    assert_eq!(p["settings"]["sqpoll_cpu"], serde_json::json!(0));
    assert_eq!(u(&p["total"]["read"]["ops"]), 1024);
    assert!(p["failure"].is_null());
}

#[test]
fn hipri_on_a_partition_reads_the_poll_queues_of_its_disk() {
    let _g = serial();
    need!(require_root_and(&["losetup", "addpart"]));
    let l = need!(LoopDev::blank(32 * MIB, &["-P", "--direct-io=on"]));
    let dev = path_str(l.path());
    need!(sh("addpart", &[dev, "1", "2048", "16384"]));
    let p1 = format!("{dev}p1");
    let t0 = std::time::Instant::now();
    while !std::path::Path::new(&p1).exists() {
        if t0.elapsed() > std::time::Duration::from_secs(2) {
            skip!("the partition {p1} did not appear");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A partition has no queue of its own: the refusal must come from its
    // disk's queue/io_poll, not from a file that is not there.
    assert_refused(&["run", &p1, "--hipri", "--dry-run"], "has no poll queues");
}

/// The CPUs a thread named `name` of process `pid` may run on, as the
/// kernel lists them, once the thread exists.
fn thread_cpus(pid: u32, name: &str) -> Option<String> {
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            return status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string());
        }
    }
    None
}

#[test]
fn each_worker_thread_runs_on_its_cpu_of_the_list() {
    let allowed = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:").map(str::to_string))
        .unwrap();
    if !allowed.trim().starts_with("0-") {
        skip!(
            "needs CPUs 0 and 1; this process may use {}",
            allowed.trim()
        );
    }
    let (_d, file) = data_file();
    let mut child = std::process::Command::new(BIN)
        .args(["run", path_str(&file), "--rw", "randread", "--bs", "4k"])
        .args([
            "--workers",
            "2",
            "--cpus",
            "1,0",
            "--time",
            "3s",
            "--buffered",
            "-q",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = std::time::Instant::now();
    let mut seen = (None, None);
    // The last look while the workers run: a thread is pinned just after
    // it starts, so an early look may see it unpinned.
    while t0.elapsed() < std::time::Duration::from_millis(2500) {
        seen.0 = thread_cpus(pid, "iosurvey-w0").or(seen.0);
        seen.1 = thread_cpus(pid, "iosurvey-w1").or(seen.1);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(seen.0.as_deref(), Some("1"), "worker 0 is not on CPU 1");
    assert_eq!(seen.1.as_deref(), Some("0"), "worker 1 is not on CPU 0");
}
