//! Memory has a budget, checked before anything runs: a plan whose memory
//! (I/O buffers, rings, series, the report) is over what the process may
//! use is refused with exit 2 and one line naming the figure and the flag
//! to lower, before any I/O and under `--dry-run` too. What the process may
//! use is its memory cgroup's limit (v2 `memory.max` or v1
//! `memory.limit_in_bytes`, the tests make one of their own), else the
//! available memory, or `--memory-limit`.
//!
//! The cgroup and device tests need root (they create their own cgroups and
//! loop devices and remove them through Drop guards); without it they print
//! "skipping: <reason>" and pass (and fail under `CI`).

use crate::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::Duration;

/// A memory cgroup of its own (v2 where the memory controller is there,
/// else v1), with a limit, removed on drop.
struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    fn new(limit: u64) -> Result<MemoryCgroup, String> {
        require_root()?;
        let v2 = Path::new("/sys/fs/cgroup");
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2_memory = fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
        let (parent, file) = if v2_memory {
            (v2, "memory.max")
        } else if v1.join("memory.limit_in_bytes").exists() {
            (v1, "memory.limit_in_bytes")
        } else {
            return Err("no memory cgroup controller (v2 or v1) to limit a run".into());
        };
        let dir = parent.join(unique("iosurvey-test"));
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let group = MemoryCgroup { dir };
        fs::write(group.dir.join(file), limit.to_string())
            .map_err(|e| format!("setting {file}: {e}"))?;
        Ok(group)
    }

    /// Runs iosurvey with `args` as a member of this group.
    fn run(&self, args: &[&str]) -> Output {
        Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(self.dir.join("cgroup.procs"))
            .arg(BIN)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("running sh")
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // The group empties as soon as its (waited-for) process has exited.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            sleep(Duration::from_millis(100));
        }
        eprintln!("warning: could not remove cgroup {}", self.dir.display());
    }
}

/// Write I/Os the device has completed (field 5 of its `stat`).
fn writes_done(dev: &Path) -> u64 {
    let stat = sysfs_read(dev, "stat");
    stat.split_whitespace().nth(4).unwrap().parse().unwrap()
}

/// Exit 2 and one line naming the figure and the flags to lower.
fn assert_over_budget(out: &Output, source: &str, flag: &str) {
    assert_refused(
        out,
        &["the plan needs", "this process may use", source, flag],
    );
    let err = stderr_of(out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

#[test]
fn a_write_over_the_cgroups_memory_is_refused_before_any_io() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(64 * MIB, &[]));
    let group = need!(MemoryCgroup::new(256 * MIB));
    let dev = path_str(l.path());
    let before = writes_done(l.path());
    // 512 MiB of buffers in a group of 256 MiB: OOM-killed before.
    let args = ["run", dev, "--rw", "write", "--bs", "16m", "--qd", "32"];
    let out = group.run(&[&args[..], &["--allow-destroy", "--time", "2s"]].concat());
    assert_over_budget(&out, "memory cgroup", "--qd");
    assert_eq!(writes_done(l.path()), before, "the refused run wrote");
    let dry = group.run(&[&args[..], &["--allow-destroy", "--dry-run"]].concat());
    assert_over_budget(&dry, "memory cgroup", "--qd");
}

#[test]
fn matrix_and_video_over_the_cgroups_memory_are_refused() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(64 * MIB, &[]));
    let group = need!(MemoryCgroup::new(256 * MIB));
    let out_dir = tempfile::tempdir().unwrap();
    let out = path_str(out_dir.path());
    // 6000 large I/Os of 1 MiB in flight.
    let matrix = group.run(&[
        "matrix",
        "-matrix",
        "point",
        "-num_large",
        "6000",
        "-num_small",
        "0",
        "--dry-run",
        "--out",
        out,
        path_str(l.path()),
    ]);
    assert_over_budget(&matrix, "memory cgroup", "-num_large");
    // 64 threads, each with a 63 MiB 8K frame in flight.
    let frames = tempfile::tempdir().unwrap();
    let video = group.run(&[
        "video",
        "--write",
        "--format",
        "8k-422",
        "--threads",
        "64",
        "--frames",
        "128",
        "--dry-run",
        path_str(frames.path()),
    ]);
    assert_over_budget(&video, "memory cgroup", "--threads");
}

#[test]
fn surveys_memory_check_counts_the_cgroups_limit() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(320 * MIB, &[]));
    let group = need!(MemoryCgroup::new(512 * MIB));
    // 256 threads of 1 to 16 MiB records: from 2 MiB on (513 MiB and more)
    // over the group's memory, though under the host's: sgpdd-survey's
    // check skips them (ENOMEM).
    let out = group.run(&[
        "survey",
        path_str(l.path()),
        "--size",
        "256m",
        "--rszlo",
        "1m",
        "--rszhi",
        "16m",
        "--thrlo",
        "256",
        "--thrhi",
        "256",
        "--crglo",
        "16",
        "--crghi",
        "16",
        "--actions",
        "read",
        "--dry-run",
    ]);
    let plan = stdout_ok(&out);
    assert_eq!(plan.matches("[skipped: ENOMEM]").count(), 4, "{plan}");
}

#[test]
fn memory_limit_alone_sets_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    let target = path_str(&target);
    let plan = ["run", target, "--size", "64m", "--bs", "16m", "--qd", "8"];
    // 128 MiB of buffers.
    let out = iosurvey(&[&plan[..], &["--dry-run", "--memory-limit", "64m"]].concat());
    assert_over_budget(&out, "--memory-limit", "--bs, --qd or --workers");
    let ok = iosurvey(&[&plan[..], &["--dry-run", "--memory-limit", "1g"]].concat());
    assert_eq!(ok.status.code(), Some(0), "{}", describe(&ok));
    // A long series at a short interval is memory too.
    let series = iosurvey(&[
        "run",
        target,
        "--size",
        "64m",
        "--bs",
        "4k",
        "--time",
        "10h",
        "--interval",
        "1ms",
        "--dry-run",
        "--memory-limit",
        "256m",
    ]);
    assert_over_budget(&series, "--memory-limit", "--interval");
    assert!(
        !Path::new(target).exists(),
        "a refused plan left its test file"
    );
}

#[test]
fn sixty_four_workers_of_a_thousand_sixteen_mib_ios_are_refused() {
    // 1 TiB of buffers: accepted before, even by --dry-run, and OOM-killed.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "64m",
        "--rw",
        "randwrite",
        "--bs",
        "16m",
        "--qd",
        "1024",
        "--workers",
        "64",
        "--dry-run",
    ]);
    assert_over_budget(&out, "this process may use", "--workers");
}

#[test]
fn a_matrix_of_three_thousand_disks_is_judged_before_it_is_built() {
    need!(require_tool("time"));
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    fs::write(&target, random_bytes(MIB as usize, 1)).unwrap();
    // 394,239 points, whose heaviest holds 63 GiB of buffers: before, the
    // whole plan was built (835 MB) and printed with exit 0.
    let out = Command::new("/usr/bin/time")
        .args(["-f", "maxrss %M", BIN, "matrix", "-run", "normal"])
        .args(["-num_disks", "3000", "--memory-limit", "16g", "--dry-run"])
        .arg("--out")
        .arg(dir.path())
        .arg(&target)
        .stdin(Stdio::null())
        .output()
        .expect("running /usr/bin/time");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the plan needs"), "{err}");
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maxrss in {err}"));
    assert!(kib < 64 << 10, "{kib} KiB to judge the plan");
}

/// The JSON report of a short run with a fine series, in `dir`.
fn saved_report(dir: &Path) -> PathBuf {
    let json = dir.join("run.json");
    let target = dir.join("t");
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "8m",
        "--bs",
        "4k",
        "--rw",
        "randread",
        "--time",
        "1s",
        "--interval",
        "1ms",
        "--quiet",
        "--json",
        path_str(&json),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    json
}

#[test]
fn report_and_compare_inputs_are_bounded_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let json = saved_report(dir.path());
    let size = fs::metadata(&json).unwrap().len();
    let html = dir.path().join("page.html");
    // A tenth of five times the report: half of it.
    let limit = (5 * size).to_string();
    let report = iosurvey(&[
        "report",
        path_str(&json),
        "--html",
        path_str(&html),
        "--memory-limit",
        &limit,
    ]);
    assert_refused(&report, &["the inputs may take", "--memory-limit"]);
    assert!(!html.exists(), "a refused report wrote its page");
    // Together over the budget: each alone fits a tenth of 15 times one.
    let limit = (15 * size).to_string();
    let compare = iosurvey(&[
        "compare",
        path_str(&json),
        path_str(&json),
        "--memory-limit",
        &limit,
    ]);
    assert_refused(&compare, &["after", "the inputs may take"]);
    // Stdin is read no further than the budget.
    let piped = Command::new(BIN)
        .args(["report", "-", "--html", path_str(&html)])
        .args(["--memory-limit", &(5 * size).to_string()])
        .stdin(fs::File::open(&json).unwrap())
        .output()
        .unwrap();
    assert_refused(&piped, &["stdin: a report of more than"]);
    let ok = iosurvey(&["report", path_str(&json), "--html", path_str(&html)]);
    assert_eq!(ok.status.code(), Some(0), "{}", describe(&ok));
}

#[test]
fn presenting_a_report_takes_memory_linear_in_its_size() {
    need!(require_tool("time"));
    let dir = tempfile::tempdir().unwrap();
    let json = saved_report(dir.path());
    // The point repeated: a report of some 20 MB.
    let mut report: serde_json::Value = json_file(&json);
    let one = report["points"][0].clone();
    let copies = (20 * MIB / serde_json::to_vec(&one).unwrap().len() as u64).max(2);
    let points: Vec<_> = (0..copies)
        .map(|i| {
            let mut p = one.clone();
            p["index"] = i.into();
            p
        })
        .collect();
    report["points"] = points.into();
    let big = dir.path().join("big.json");
    fs::write(&big, serde_json::to_vec(&report).unwrap()).unwrap();
    let size = fs::metadata(&big).unwrap().len();
    let html = dir.path().join("page.html");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "maxrss %M", BIN, "report"])
        .arg(&big)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maxrss in {err}"));
    // The README's figure: about 5 bytes of memory per byte of report in
    // a release build (the budget takes 10, which a debug build, as here,
    // must keep to too), over the process's own 32 MiB.
    assert!(
        kib * 1024 <= 10 * size + 32 * MIB,
        "{kib} KiB to present {size} bytes"
    );
}
