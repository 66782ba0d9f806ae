//! Outputs attacked during the run, on real files, loop devices and a full
//! tmpfs: the directory swapped for a symlink, a device node or a FIFO
//! planted where an output is to be created, stdout on a block device, an
//! output that backs a loop device, another user's file replaced, and one
//! output on a full filesystem beside healthy ones.

use crate::common::*;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `run FILE --size 4m` for `time`, with `extra`, started in the background.
fn spawn_run(target: &Path, time: &str, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args([
            "run",
            path_str(target),
            "--size",
            "4m",
            "--time",
            time,
            "-q",
        ])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting iosurvey")
}

/// Waits until the run's test file or target exists (the run is past its
/// checks), at most 30 s.
fn wait_for(p: &Path) {
    let t0 = Instant::now();
    while !p.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{} never came",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Moves directory `dir` aside (it stays the run's) and puts a symlink to
/// `other` at its path. Where it went.
fn swap_for_symlink(dir: &Path, other: &Path) -> PathBuf {
    let aside = dir.with_extension("aside");
    std::fs::rename(dir, &aside).unwrap();
    std::os::unix::fs::symlink(other, dir).unwrap();
    aside
}

/// Names, sizes and checksums of everything in `dir`, to prove it
/// untouched.
fn contents(dir: &Path) -> Vec<(String, usize, u64)> {
    use std::hash::{DefaultHasher, Hasher};
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let body = std::fs::read(e.path()).unwrap_or_default();
            let mut h = DefaultHasher::new();
            h.write(&body);
            (
                e.file_name().to_string_lossy().into_owned(),
                body.len(),
                h.finish(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_directory_swapped_for_a_symlink_mid_run_leads_no_output_elsewhere() {
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let outs = t.path().join("outs");
    let other = t.path().join("other");
    std::fs::create_dir(&outs).unwrap();
    std::fs::create_dir(&other).unwrap();
    for name in ["r.json", "r.csv", "r.html"] {
        std::fs::write(outs.join(name), b"old report").unwrap();
        std::fs::write(other.join(name), b"somebody else's file").unwrap();
    }
    let before = contents(&other);
    let (j, c, h) = (outs.join("r.json"), outs.join("r.csv"), outs.join("r.html"));
    let child = spawn_run(
        &target,
        "2s",
        &[
            "--json",
            path_str(&j),
            "--csv",
            path_str(&c),
            "--html",
            path_str(&h),
        ],
    );
    wait_for(&target);
    std::thread::sleep(Duration::from_millis(300));
    let held = swap_for_symlink(&outs, &other);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(contents(&other), before, "the other directory was written");
    let report = json_file(&held.join("r.json"));
    assert_eq!(report["mode"], "run", "the report is in the directory held");
    assert!(std::fs::read_to_string(held.join("r.csv"))
        .unwrap()
        .contains(','));
    assert!(std::fs::read_to_string(held.join("r.html"))
        .unwrap()
        .contains("<html"));
}

#[test]
fn survey_out_follows_its_directory_not_a_symlink_put_in_its_place() {
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let outs = t.path().join("outs");
    let other = t.path().join("other");
    std::fs::create_dir(&outs).unwrap();
    std::fs::create_dir(&other).unwrap();
    for name in ["sv.summary", "sv.detail"] {
        std::fs::write(other.join(name), b"somebody else's file").unwrap();
    }
    let before = contents(&other);
    let child = Command::new(BIN)
        .args(["survey", path_str(&target), "--size", "16m"])
        .args([
            "--rszlo", "1m", "--rszhi", "1m", "--crghi", "2", "--thrhi", "2",
        ])
        .args(["-q", "--out", path_str(&outs.join("sv"))])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&outs.join("sv.summary"));
    let held = swap_for_symlink(&outs, &other);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(contents(&other), before, "the other directory was written");
    let summary = std::fs::read_to_string(held.join("sv.summary")).unwrap();
    assert_eq!(
        summary,
        String::from_utf8_lossy(&out.stdout),
        "the whole summary is in the directory held"
    );
}

/// Linux's encoding of a device number (major, minor).
fn makedev(major: u64, minor: u64) -> u64 {
    ((major & 0xfffff000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffffff00) << 12)
        | (minor & 0xff)
}

#[test]
fn a_device_node_or_fifo_planted_at_a_missing_output_is_never_written_or_replaced() {
    let _g = serial();
    let lo = need!(LoopDev::new(4 * MIB, 7));
    let sum = checksum(lo.path(), None);
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let (j, c, h) = (
        t.path().join("r.json"),
        t.path().join("r.csv"),
        t.path().join("r.html"),
    );
    let child = spawn_run(
        &target,
        "1s",
        &[
            "--json",
            path_str(&j),
            "--csv",
            path_str(&c),
            "--html",
            path_str(&h),
        ],
    );
    wait_for(&target);
    // A node of the loop device where the JSON is to be created, a FIFO
    // where the CSV is.
    let (maj, min) = {
        let m = maj_min(lo.path());
        let (a, b) = m.split_once(':').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let mode = rustix::fs::FileType::BlockDevice.as_raw_mode() | 0o600;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &j,
        rustix::fs::FileType::BlockDevice,
        rustix::fs::Mode::from_raw_mode(mode),
        makedev(maj, min),
    )
    .unwrap();
    rustix::fs::mkfifoat(rustix::fs::CWD, &c, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("--json") && err.contains("block device"),
        "{err}"
    );
    assert!(err.contains("--csv") && err.contains("FIFO"), "{err}");
    let m = std::fs::symlink_metadata(&j).unwrap();
    assert!(m.file_type().is_block_device(), "the node was replaced");
    assert_eq!(m.rdev(), makedev(maj, min));
    assert!(std::fs::symlink_metadata(&c).unwrap().file_type().is_fifo());
    assert_eq!(checksum(lo.path(), None), sum, "the device was written");
    assert!(
        std::fs::read_to_string(&h).unwrap().contains("<html"),
        "--html still written"
    );
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
}

#[test]
fn stdout_on_a_block_device_is_never_an_output() {
    let _g = serial();
    let lo = need!(LoopDev::new(4 * MIB, 8));
    let sum = checksum(lo.path(), None);
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    // The text summary too, with no --json at all.
    for extra in [&["--json", "-"][..], &["--json", "/dev/stdout"], &[]] {
        let dev = std::fs::OpenOptions::new()
            .write(true)
            .open(lo.path())
            .unwrap();
        let json = extra.join(" ");
        let out = Command::new(BIN)
            .args(["run", path_str(&target), "--size", "4m", "--time", "200ms"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(dev)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "[{json}]: {}", describe(&out));
        let err = stderr_of(&out);
        assert!(
            err.contains("block device") && err.lines().count() == 1,
            "{err}"
        );
        assert_eq!(checksum(lo.path(), None), sum, "[{json}] wrote the device");
        assert!(!target.exists(), "nothing laid out");
    }
}

/// Runs iosurvey with `args` and its stdout opened read-write, without
/// truncation, on the file `onto` (the shell's `1<>FILE`).
fn with_stdout_on(onto: &Path, args: &[&str]) -> std::process::Output {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(onto)
        .unwrap();
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Asserts one refusal line naming `needle`, exit 2.
fn assert_stdout_refused(out: &std::process::Output, what: &str, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "[{what}]: {}", describe(out));
    let err = stderr_of(out);
    assert!(
        err.contains("stdout") && err.contains(needle) && err.lines().count() == 1,
        "[{what}]: {err}"
    );
}

#[test]
fn stdout_on_a_file_that_backs_a_loop_device_is_never_an_output() {
    // Before: `1<>IMG` made every one of these write its report (or its
    // text summary) into the image of a loop device, exit 0.
    let _g = serial();
    let lo = need!(LoopDev::new(4 * MIB, 10));
    let backing = PathBuf::from(sysfs_read(lo.path(), "loop/backing_file"));
    let before = checksum(&backing, None);
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let saved = t.path().join("saved.json");
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "4m",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(&saved),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let run = |extra: &[&str]| {
        let mut a = vec!["run", path_str(&target), "--size", "4m", "--time", "200ms"];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let cases: Vec<Vec<String>> = vec![
        run(&["--json", "-"]),
        run(&["--json", "/dev/stdout"]),
        run(&["--json", "/proc/self/fd/1"]),
        run(&[]),
        run(&["--output", "json"]),
        ["report", path_str(&saved), "--html", "-"]
            .map(String::from)
            .to_vec(),
        [
            "compare",
            path_str(&saved),
            path_str(&saved),
            "--output",
            "json",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = with_stdout_on(&backing, &args);
        assert_stdout_refused(&out, &args.join(" "), "backs the loop device");
        assert_eq!(
            checksum(&backing, None),
            before,
            "[{args:?}] wrote the image"
        );
    }
    assert!(!target.exists(), "refused before any I/O");
}

#[test]
fn stdout_on_a_target_or_an_input_is_never_an_output() {
    // Before: `run FILE --readonly --json - 1<>FILE` rewrote the target
    // it promised not to write, and `report R --html - 1<>R` its input.
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    std::fs::write(&target, random_bytes(4 * MIB as usize, 11)).unwrap();
    let before = std::fs::read(&target).unwrap();
    for extra in [&["--json", "-"][..], &[]] {
        let mut args = vec!["run", path_str(&target), "--readonly", "--time", "200ms"];
        args.extend_from_slice(extra);
        let out = with_stdout_on(&target, &args);
        assert_stdout_refused(&out, &args.join(" "), "is the target");
        assert!(
            std::fs::read(&target).unwrap() == before,
            "the target was written"
        );
    }
    let saved = t.path().join("saved.json");
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--readonly",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(&saved),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report = std::fs::read(&saved).unwrap();
    let s = path_str(&saved);
    for args in [
        &["report", s, "--html", "-"][..],
        &["compare", s, s, "--output", "json"],
        &["compare", s, s],
    ] {
        let out = with_stdout_on(&saved, args);
        assert_stdout_refused(&out, &args.join(" "), "a report being read");
        assert!(
            std::fs::read(&saved).unwrap() == report,
            "the input was written"
        );
    }
}

#[test]
fn an_output_that_backs_a_loop_device_is_refused() {
    let _g = serial();
    let lo = need!(LoopDev::new(4 * MIB, 9));
    let backing = PathBuf::from(sysfs_read(lo.path(), "loop/backing_file"));
    let before = std::fs::read(&backing).unwrap();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    // Also through a hard link: the file is judged by its identity.
    let link = backing.with_file_name("report.json");
    std::fs::hard_link(&backing, &link).unwrap();
    for json in [&backing, &link] {
        let out = iosurvey(&[
            "run",
            path_str(&target),
            "--size",
            "4m",
            "--time",
            "200ms",
            "--json",
            path_str(json),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        let err = stderr_of(&out);
        assert!(
            err.contains("backs the loop device") && err.lines().count() == 1,
            "{err}"
        );
        assert!(!target.exists(), "refused before any I/O");
    }
    assert_eq!(std::fs::read(&backing).unwrap(), before);
    let st = std::fs::metadata(&backing).unwrap();
    assert_eq!(st.nlink(), 2, "the backing file is still the loop device's");
}

#[test]
fn a_replaced_output_keeps_its_owner_and_mode() {
    let _g = serial();
    need!(require_root());
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = t.path().join("r.json");
    std::fs::write(&j, b"old").unwrap();
    std::os::unix::fs::chown(&j, Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(&j, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "4m",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(&j),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(json_file(&j)["mode"], "run");
    let m = std::fs::metadata(&j).unwrap();
    assert_eq!((m.uid(), m.gid()), (4321, 4322), "the owner was lost");
    assert_eq!(m.mode() & 0o7777, 0o640);
}

#[test]
fn a_file_moved_onto_an_output_mid_run_is_never_removed_or_replaced() {
    // Before: the name was looked at afresh at the end, so a user's file
    // moved onto it (from a path never offered) was exchanged out and
    // removed, exit 0. Now only the file judged at the start (or nothing)
    // is replaced; the user's file stays at the name, exit 1.
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let (was, missing) = (t.path().join("was.json"), t.path().join("missing.json"));
    std::fs::write(&was, b"judged at the start").unwrap();
    let child = spawn_run(
        &target,
        "1s",
        &["--json", path_str(&was), "--csv", path_str(&missing)],
    );
    wait_for(&target);
    let users = |n: &str| {
        let p = t.path().join(n);
        std::fs::write(&p, format!("the user's {n}")).unwrap();
        p
    };
    std::fs::rename(users("a"), &was).unwrap();
    std::fs::rename(users("b"), &missing).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 2, "one line each: {err}");
    assert!(err.contains("--json") && err.contains("--csv"), "{err}");
    assert_eq!(std::fs::read_to_string(&was).unwrap(), "the user's a");
    assert_eq!(std::fs::read_to_string(&missing).unwrap(), "the user's b");
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
}

#[test]
fn a_file_exchanged_onto_an_output_mid_run_is_put_back() {
    // A racer exchanging a user's file with the output, over and over:
    // whatever the moment, the user's file is never removed.
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = t.path().join("r.json");
    let users = t.path().join("users.json");
    std::fs::write(&j, b"judged").unwrap();
    std::fs::write(&users, b"the user's").unwrap();
    let child = spawn_run(&target, "1s", &["--json", path_str(&j)]);
    wait_for(&target);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let racer = {
        let (stop, j, users) = (stop.clone(), j.clone(), users.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &users,
                    rustix::fs::CWD,
                    &j,
                    rustix::fs::RenameFlags::EXCHANGE,
                );
            }
        })
    };
    let out = child.wait_with_output().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    racer.join().unwrap();
    let bodies = [std::fs::read(&j).unwrap(), std::fs::read(&users).unwrap()];
    assert!(
        bodies.iter().any(|b| b == b"the user's"),
        "the user's file was removed ({}): {}",
        out.status.code().unwrap_or(-1),
        describe(&out)
    );
}

#[test]
fn a_replaced_output_loses_its_set_id_bits() {
    let _g = serial();
    need!(require_root());
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = t.path().join("r.json");
    std::fs::write(&j, b"old").unwrap();
    std::fs::set_permissions(&j, std::fs::Permissions::from_mode(0o6755)).unwrap();
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "4m",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(&j),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let m = std::fs::metadata(&j).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o755, "set-uid/set-gid kept");
}

#[test]
fn a_temporary_report_on_a_filesystem_filled_mid_run_is_removed() {
    // Before: the report's temporary file was made with the last inode,
    // its write failed (no space), and its removal needed a new trash
    // directory the full filesystem refused: `.r.json.iosurvey-PID-N.tmp`
    // stayed. The trash is now made when the output is judged.
    let _g = serial();
    let fs = need!(Mount::new(
        "tmpfs",
        &["-t", "tmpfs", "-o", "size=1m,nr_inodes=64"]
    ));
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = fs.path().join("r.json");
    let child = spawn_run(&target, "1s", &["--json", path_str(&j)]);
    wait_for(&target);
    // No block left, and one inode: the temporary file is made, its write
    // fails, and no new directory can be made to remove it through.
    let fillers = fill_filesystem(fs.path(), 1);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(
        err.lines().count() == 1 && err.contains("--json") && err.contains("No space left"),
        "{err}"
    );
    let ours: Vec<_> = std::fs::read_dir(fs.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(ours.is_empty(), "left behind: {ours:?}");
    for f in fillers {
        let _ = std::fs::remove_file(f);
    }
}

/// `run TARGET --size 4m --time 200ms -q --json JSON`.
fn run_with_json(target: &Path, json: &Path) -> std::process::Output {
    iosurvey(&[
        "run",
        path_str(target),
        "--size",
        "4m",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(json),
    ])
}

/// Undoes a `chattr +i` or a bind mount on drop, also when a test fails.
struct Undo(&'static str, Vec<String>);

impl Drop for Undo {
    fn drop(&mut self) {
        let args: Vec<&str> = self.1.iter().map(String::as_str).collect();
        let _ = sh(self.0, &args);
    }
}

#[test]
fn an_immutable_or_append_only_output_is_refused_before_the_run() {
    // Before: it passed the check, and the rename after the measurement
    // failed (EPERM): the report was lost, exit 1.
    let _g = serial();
    need!(require_root_and(&["chattr"]));
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = t.path().join("r.json");
    for flag in ["+i", "+a"] {
        std::fs::write(&j, b"kept").unwrap();
        if let Err(e) = sh("chattr", &[flag, path_str(&j)]) {
            skip!("no chattr {flag} here: {e}");
        }
        let undo = Undo("chattr", vec![flag.replace('+', "-"), path_str(&j).into()]);
        let out = run_with_json(&target, &j);
        drop(undo);
        assert_eq!(out.status.code(), Some(2), "[{flag}] {}", describe(&out));
        let err = stderr_of(&out);
        assert!(
            err.lines().count() == 1 && err.contains("immutable or append-only"),
            "{err}"
        );
        assert!(!target.exists(), "refused before any I/O");
        assert_eq!(std::fs::read(&j).unwrap(), b"kept");
    }
}

#[test]
fn a_bind_mounted_output_file_is_written_in_place() {
    // Before: the rename over a mount point failed (EBUSY) after the
    // measurement, the report lost, exit 1 (the container case).
    let _g = serial();
    need!(require_root_and(&["mount", "umount"]));
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let src = a.path().join("host.json");
    let j = b.path().join("r.json");
    std::fs::write(&src, b"old, and longer than nothing").unwrap();
    std::fs::write(&j, b"").unwrap();
    if let Err(e) = sh("mount", &["--bind", path_str(&src), path_str(&j)]) {
        skip!("no bind mount here: {e}");
    }
    let _undo = Undo("umount", vec![path_str(&j).into()]);
    let target = b.path().join("t.dat");
    let out = run_with_json(&target, &j);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        json_file(&src)["mode"],
        "run",
        "written into the mounted file"
    );
    let left: Vec<_> = std::fs::read_dir(b.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
}

#[test]
fn an_output_whose_name_is_name_max_long_is_written() {
    // Before: the temporary name (`.NAME.iosurvey-PID-N.tmp`) passed
    // NAME_MAX: the check passed, the write after the run failed.
    let _g = serial();
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = t.path().join(format!("{}.json", "r".repeat(250)));
    let out = run_with_json(&target, &j);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(json_file(&j)["mode"], "run");
}

#[test]
fn a_symlink_another_user_planted_in_a_sticky_directory_is_not_followed() {
    // Before: root followed a link uid 4321 planted in a /tmp-like
    // directory (the path is resolved in user space, which
    // fs.protected_symlinks never sees) and replaced the file it named,
    // exit 0.
    let _g = serial();
    need!(require_root());
    let sticky = tempfile::tempdir().unwrap();
    std::fs::set_permissions(sticky.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, b"the victim's file").unwrap();
    let theirs = sticky.path().join("r.json");
    std::os::unix::fs::symlink(&victim, &theirs).unwrap();
    std::os::unix::fs::lchown(&theirs, Some(4321), Some(4321)).unwrap();
    let target = elsewhere.path().join("t.dat");
    // Also as a directory on the way.
    let dir_link = sticky.path().join("d");
    std::os::unix::fs::symlink(elsewhere.path(), &dir_link).unwrap();
    std::os::unix::fs::lchown(&dir_link, Some(4321), Some(4321)).unwrap();
    for json in [theirs.clone(), dir_link.join("victim")] {
        let out = run_with_json(&target, &json);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        let err = stderr_of(&out);
        assert!(
            err.lines().count() == 1 && err.contains("protected_symlinks"),
            "{err}"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"the victim's file");
        assert!(!target.exists(), "refused before any I/O");
    }
    // A link of this user's own is followed, as before.
    let mine = sticky.path().join("mine.json");
    std::os::unix::fs::symlink(&victim, &mine).unwrap();
    let out = run_with_json(&target, &mine);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(json_file(&victim)["mode"], "run");
}

#[test]
fn a_full_filesystem_under_one_output_does_not_keep_the_others_from_being_written() {
    let _g = serial();
    let full = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64k"]));
    // Fill it: the report no longer fits, the probe (an empty file) does.
    let filler = full.path().join("filler");
    let _ = std::fs::write(&filler, vec![7u8; 64 << 10]);
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("t.dat");
    let j = full.path().join("r.json");
    let (c, h) = (t.path().join("r.csv"), t.path().join("r.html"));
    let out = iosurvey(&[
        "run",
        path_str(&target),
        "--size",
        "4m",
        "--time",
        "200ms",
        "-q",
        "--json",
        path_str(&j),
        "--csv",
        path_str(&c),
        "--html",
        path_str(&h),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr_of(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line for the one failure: {err}");
    assert!(
        lines[0].contains("--json") && lines[0].contains("No space left"),
        "{err}"
    );
    assert!(
        std::fs::read_to_string(&c).unwrap().contains(','),
        "--csv not written"
    );
    assert!(
        std::fs::read_to_string(&h).unwrap().contains("<html"),
        "--html not written"
    );
    assert!(!j.exists(), "no partial JSON");
    let left: Vec<_> = std::fs::read_dir(full.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only the filler left: {left:?}");
}
