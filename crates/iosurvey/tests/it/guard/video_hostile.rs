//! `iosurvey video` tried as a hostile or careless user would, as root on
//! real filesystems (a small ext4 on a loop device, a tiny tmpfs): files,
//! symlinks and directories at frame paths, a full filesystem, impossible
//! sizes, signals, a huge thread count and a killed run. Every test checks
//! what is on disk afterwards, not only the exit code.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh ext4 of `mib` MiB on a loop device, mounted; unmounted and
/// detached on drop (the mount first).
struct Ext4 {
    mount: Mount,
    _dev: LoopDev,
}

impl Ext4 {
    fn new(mib: u64) -> Result<Ext4, String> {
        require_root_and(&["losetup", "mkfs.ext4", "mount"])?;
        let dev = LoopDev::blank(mib * MIB, &[])?;
        sh("mkfs.ext4", &["-q", "-F", path_str(dev.path())])?;
        let mount = Mount::new(path_str(dev.path()), &[])?;
        Ok(Ext4 { mount, _dev: dev })
    }

    fn path(&self) -> &Path {
        self.mount.path()
    }
}

fn video(args: &[&str]) -> std::process::Output {
    let mut all = vec!["video"];
    all.extend_from_slice(args);
    iosurvey(&all)
}

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("video")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running iosurvey")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit code 2 and one line on stderr that names `what`.
fn assert_refused(out: &std::process::Output, what: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", describe(out));
    let err = stderr(out);
    assert!(err.contains(what), "stderr does not name {what}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

/// Every name under `dir`, recursively, relative to it, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

fn frame_count(dir: &Path) -> usize {
    if !dir.exists() {
        return 0;
    }
    tree(dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "frm"))
        .count()
}

/// Waits up to `secs` for `cond`.
fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Starts a write paced at 10 fps into a new directory `media` with `args`
/// after `--write`, and waits for its first frame; gives the run and its
/// frames directory. Frame k is due k/10 s after the start.
fn paced_write(media: &Path, args: &[&str]) -> (Child, PathBuf) {
    std::fs::create_dir(media).unwrap();
    let mut all = vec![path_str(media), "--write", "--fps", "10"];
    all.extend_from_slice(args);
    let run = spawn(&all);
    let root = media.join("iosurvey-frames");
    assert!(wait_for(10, || frame_count(&root) >= 1), "the run started");
    (run, root)
}

fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

#[test]
fn a_users_file_at_a_frame_path_is_refused_and_left_as_it_was() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    let root = fs.path().join("iosurvey-frames");
    std::fs::create_dir(&root).unwrap();
    let theirs = root.join("f0000000.frm");
    std::fs::write(&theirs, b"the user's own data").unwrap();
    for args in [
        vec![
            m,
            "--read",
            "--frame-size",
            "64k",
            "--frames",
            "3",
            "--prepare",
        ],
        vec![m, "--write", "--frame-size", "64k", "--frames", "3"],
    ] {
        let out = video(&args);
        assert_refused(&out, "iosurvey-frames/f0000000.frm");
        assert_eq!(std::fs::read(&theirs).unwrap(), b"the user's own data");
        assert_eq!(tree(fs.path()).len(), 3, "lost+found, the dir, the file");
    }
    // Offered with --allow-destroy on --write: the file is rewritten but
    // stays (unmarked), the frames iosurvey made go, and the directory
    // iosurvey did not make stays.
    let out = video(&[m, "--write", "--frame-size", "64k", "--frames", "3"])
        .status
        .code();
    assert_eq!(out, Some(2));
    let out = video(&[
        m,
        "--write",
        "--allow-destroy",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--quiet",
    ]);
    stdout_ok(&out);
    assert!(root.is_dir(), "the user's directory is not removed");
    assert_eq!(tree(&root), [PathBuf::from("f0000000.frm")]);
    assert!(!is_marked(&theirs), "an offered file never gets the mark");
}

/// Whether `path` carries iosurvey's mark, `user.iosurvey.created`.
fn is_marked(path: &Path) -> bool {
    let f = std::fs::File::open(path).unwrap();
    let mut buf = [0u8; 8];
    rustix::fs::fgetxattr(&f, "user.iosurvey.created", &mut buf[..]).is_ok()
}

#[test]
fn files_offered_with_allow_destroy_are_written_but_never_marked_nor_removed() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    let root = fs.path().join("iosurvey-frames");
    std::fs::create_dir(&root).unwrap();
    let theirs: Vec<PathBuf> = (0..3)
        .map(|i| root.join(format!("f000000{i}.frm")))
        .collect();
    for (i, f) in theirs.iter().enumerate() {
        std::fs::write(f, random_bytes(64 << 10, i as u64 + 1)).unwrap();
    }
    let link = fs.path().join("userlink.frm");
    std::fs::hard_link(&theirs[1], &link).unwrap();
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--allow-destroy",
        "--quiet",
    ]);
    stdout_ok(&out);
    for f in &theirs {
        assert!(f.is_file(), "{} was removed", f.display());
        assert!(!is_marked(f), "{} got iosurvey's mark", f.display());
    }
    assert!(!is_marked(&link));
    // The mark would let a later run write the user's file unasked.
    let out = iosurvey(&["run", path_str(&link), "--rw", "write", "--bs", "4k"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("--allow-destroy"), "{}", stderr(&out));

    // --prepare with --allow-destroy on short, unmarked frames: written
    // whole, still the user's after the run; the frame it made goes.
    std::fs::remove_file(&link).unwrap();
    std::fs::remove_file(&theirs[2]).unwrap();
    for f in &theirs[..2] {
        std::fs::write(f, b"short").unwrap();
    }
    let out = video(&[
        m,
        "--read",
        "--prepare",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--allow-destroy",
        "--quiet",
    ]);
    stdout_ok(&out);
    for f in &theirs[..2] {
        assert_eq!(std::fs::metadata(f).unwrap().len(), 64 << 10, "prepared");
        assert!(!is_marked(f), "{} got iosurvey's mark", f.display());
    }
    assert!(!theirs[2].exists(), "the frame --prepare made is removed");
    assert_eq!(tree(&root).len(), 2);
}

#[test]
fn a_dangling_symlink_at_a_frame_path_creates_nothing_outside() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    let outside = fs.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let root = fs.path().join("iosurvey-frames");
    std::fs::create_dir(&root).unwrap();
    let victim = outside.join("victim");
    std::os::unix::fs::symlink(&victim, root.join("f0000001.frm")).unwrap();
    for extra in [None, Some("--allow-destroy")] {
        let mut args = vec![m, "--write", "--frame-size", "64k", "--frames", "3"];
        args.extend(extra);
        let out = video(&args);
        assert_refused(&out, "f0000001.frm");
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        assert!(!victim.exists(), "nothing created through the link");
        assert_eq!(tree(&outside).len(), 0);
        assert_eq!(tree(&root), [PathBuf::from("f0000001.frm")]);
    }
    // The same link in a frame subdirectory, and a FIFO.
    std::fs::remove_file(root.join("f0000001.frm")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d00000")).unwrap();
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--files-per-dir",
        "2",
    ]);
    assert_refused(&out, "d00000");
    assert_eq!(tree(&outside).len(), 0);
    std::fs::remove_file(root.join("d00000")).unwrap();
    sh("mkfifo", &[path_str(&root.join("f0000002.frm"))]).unwrap();
    let out = video(&[m, "--write", "--frame-size", "64k", "--frames", "3"]);
    assert_refused(&out, "f0000002.frm");
}

#[test]
fn a_symlinked_frames_directory_is_refused_and_its_target_untouched() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    let elsewhere = fs.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("f0000000.frm"), b"short").unwrap();
    std::fs::write(elsewhere.join("notes.txt"), b"keep").unwrap();
    std::os::unix::fs::symlink(&elsewhere, fs.path().join("iosurvey-frames")).unwrap();
    for args in [
        vec![
            m,
            "--write",
            "--allow-destroy",
            "--frame-size",
            "64k",
            "--frames",
            "3",
        ],
        vec![
            m,
            "--read",
            "--prepare",
            "--frame-size",
            "64k",
            "--frames",
            "3",
        ],
        vec![m, "--read", "--frame-size", "64k", "--frames", "3"],
    ] {
        let out = video(&args);
        assert_refused(&out, "iosurvey-frames");
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        assert_eq!(
            tree(&elsewhere),
            [PathBuf::from("f0000000.frm"), PathBuf::from("notes.txt")]
        );
        assert_eq!(
            std::fs::read(elsewhere.join("f0000000.frm")).unwrap(),
            b"short"
        );
    }
    assert!(fs.path().join("iosurvey-frames").is_symlink());
}

#[test]
fn the_clean_up_leaves_unmarked_directories_and_files() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    // The user made the frames directory and one frame subdirectory, with
    // a file of their own in it.
    let root = fs.path().join("iosurvey-frames");
    std::fs::create_dir_all(root.join("d00001")).unwrap();
    std::fs::write(root.join("d00001/notes.txt"), b"keep").unwrap();
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "6",
        "--files-per-dir",
        "2",
        "--quiet",
    ]);
    stdout_ok(&out);
    assert_eq!(
        tree(&root),
        [PathBuf::from("d00001"), PathBuf::from("d00001/notes.txt")],
        "iosurvey's frames and subdirectories d00000 and d00002 are gone; the user's stay"
    );
    // Its own tree, made from nothing, is removed whole.
    std::fs::remove_dir_all(&root).unwrap();
    let out = video(&[
        m,
        "--read",
        "--prepare",
        "--frame-size",
        "64k",
        "--frames",
        "6",
        "--files-per-dir",
        "2",
        "--quiet",
    ]);
    stdout_ok(&out);
    assert!(!root.exists());
}

#[test]
fn enospc_on_a_frame_write_is_reported_as_enospc() {
    let _g = serial();
    need!(require_root());
    // A tiny tmpfs, filled up under a paced run: the next frame's write is
    // short, and its errno is ENOSPC, not EIO.
    let fs = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=1m"]));
    let json = tempfile::NamedTempFile::new().unwrap();
    let m = path_str(fs.path());
    let child = spawn(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "12",
        "--fps",
        "10",
        "--buffered",
        "--quiet",
        "--json",
        path_str(json.path()),
    ]);
    let root = fs.path().join("iosurvey-frames");
    assert!(wait_for(10, || frame_count(&root) >= 1), "the run started");
    // Fill the filesystem, then give back 40 KiB: less than a frame.
    let filler = fs.path().join("filler");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k"])
        .arg(format!("of={}", filler.display()))
        .stderr(Stdio::null())
        .status();
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len - 40 * 1024)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let r = json_file(json.path());
    assert_valid(&r);
    let p = &r["points"][0];
    assert_eq!(p["failure"]["errno"], 28, "{}", p["failure"]);
    assert_eq!(p["failure"]["error"], "ENOSPC");
    assert_eq!(p["frames"]["summary"]["first_failed"]["errno"], 28);
    let errors = p["total"]["write"]["errors"].as_array().unwrap();
    assert!(errors.iter().all(|e| e["name"] == "ENOSPC"), "{errors:?}");
    assert_eq!(
        frame_count(&root),
        0,
        "its frames removed after the failure"
    );
}

#[test]
fn paced_totals_add_up() {
    let _g = serial();
    let fs = need!(Ext4::new(64));
    let m = path_str(fs.path());
    // 400 fps with a one-frame queue on a buffered, synced 1 MiB frame:
    // some frames finish late or never start; none is counted twice.
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "1m",
        "--frames",
        "40",
        "--fps",
        "400",
        "--queue",
        "1",
        "--buffered",
        "--output",
        "json",
        "--quiet",
    ]);
    let r = report_of(&out);
    assert_valid(&r);
    let s = &r["points"][0]["frames"]["summary"];
    let (done, late, skipped, failed) = (
        u(&s["done"]),
        u(&s["late"]),
        u(&s["skipped"]),
        u(&s["failed"]),
    );
    assert_eq!(done + late + skipped + failed, 40, "{s}");
    assert_eq!(
        u(&s["windows"].as_array().unwrap().last().unwrap()["frames"]),
        done + late
    );
    let recs = r["points"][0]["frames"]["records"].as_array().unwrap();
    assert_eq!(recs.len(), 40);
    // The text says the same, and its lines add up to the frames tested.
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "1m",
        "--frames",
        "40",
        "--fps",
        "400",
        "--queue",
        "1",
        "--buffered",
        "--quiet",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let field = |label: &str| -> u64 {
        let l = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {text}"));
        l[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let failed = if text.contains("Frames failed:") {
        field("Frames failed:")
    } else {
        0
    };
    assert_eq!(field("Frames tested:"), 40, "{text}");
    assert_eq!(
        field("Frames transferred:") + field("Frames dropped:") + failed,
        40,
        "{text}"
    );
}

#[test]
fn a_long_empty_run_keeps_its_report_and_memory_bounded() {
    let _g = serial();
    let fs = need!(Ext4::new(64));
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let child = spawn(&[
        path_str(fs.path()),
        "--write",
        "--empty",
        "--frames",
        "100",
        "--loops",
        "100000",
        "--quiet",
        "--json",
        path_str(&json),
        "--csv",
        path_str(&csv),
    ]);
    let rss = || -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let l = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    std::thread::sleep(Duration::from_secs(1));
    let early = rss();
    std::thread::sleep(Duration::from_secs(2));
    let late = rss();
    signal(&child, rustix::process::Signal::INT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(
        late < early + 4 * MIB,
        "RSS grew from {early} to {late} bytes in 2 s"
    );
    let size = std::fs::metadata(&json).unwrap().len();
    assert!(size < 4 * MIB, "the JSON is {size} bytes");
    let r = json_file(&json);
    assert_valid(&r);
    let f = &r["points"][0]["frames"];
    let done = u(&f["summary"]["done"]);
    assert!(done > 10_000, "{done} frames in 3 s");
    assert_eq!(f["records"].as_array().unwrap().len(), 4096);
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(rows, 4097, "a header and the records kept");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains(&format!("the first 4096 of {done} are kept")),
        "{text}"
    );
    assert_eq!(frame_count(&fs.path().join("iosurvey-frames")), 0);
}

#[test]
fn a_huge_frame_count_is_refused_at_once() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    for args in [
        vec![
            m,
            "--write",
            "--frame-size",
            "64k",
            "--frames",
            "99999999999",
        ],
        vec![m, "--write", "--empty", "--frames", "99999999999"],
        vec![m, "--read", "--prepare", "--frames", "99999999999"],
        vec![m, "--read", "--frames", "99999999999"],
        // Fits in the filesystem, not in what is free.
        vec![m, "--write", "--frame-size", "1m", "--frames", "40"],
        // --dry-run checks the target too.
        vec![
            m,
            "--write",
            "--frame-size",
            "64k",
            "--frames",
            "99999999999",
            "--dry-run",
        ],
    ] {
        let t = Instant::now();
        let out = video(&args);
        assert_refused(&out, "--frames");
        // Refused from the numbers, not after laying out the frames.
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(tree(fs.path()), [PathBuf::from("lost+found")]);
    }
    // With a frames directory there, the sizes are refused all the same.
    std::fs::create_dir(fs.path().join("iosurvey-frames")).unwrap();
    let t = Instant::now();
    let out = video(&[
        m,
        "--read",
        "--frame-size",
        "64k",
        "--frames",
        "99999999999",
    ]);
    assert_refused(&out, "--frames");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn sigterm_stops_a_long_survey_at_once() {
    let _g = serial();
    need!(require_root());
    let fs = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=16m"]));
    std::fs::create_dir(fs.path().join("iosurvey-frames")).unwrap();
    // Fifty million frame paths to look at: minutes of survey.
    let child = spawn(&[
        path_str(fs.path()),
        "--read",
        "--empty",
        "--frames",
        "50000000",
        "--files-per-dir",
        "1000",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    signal(&child, rustix::process::Signal::TERM);
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    // Minutes of survey cut short: well under them, with room for a busy
    // machine (a bound of 1 s failed on load elsewhere, not on the code).
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    assert_eq!(tree(fs.path()), [PathBuf::from("iosurvey-frames")]);
}

#[test]
fn threads_beyond_the_fd_limit_are_refused() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let out = video(&[
        path_str(fs.path()),
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--threads",
        "100000",
    ]);
    assert_refused(&out, "--threads");
    assert!(stderr(&out).contains("RLIMIT_NOFILE"), "{}", stderr(&out));
    assert_eq!(tree(fs.path()), [PathBuf::from("lost+found")]);
}

#[test]
fn frames_left_by_a_killed_run_are_removed_by_the_next() {
    let _g = serial();
    let fs = need!(Ext4::new(128));
    let m = path_str(fs.path());
    let root = fs.path().join("iosurvey-frames");
    let child = spawn(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "1000",
        "--files-per-dir",
        "100",
        "--fps",
        "200",
        "--buffered",
        "--quiet",
    ]);
    assert!(wait_for(20, || frame_count(&root) >= 20), "frames written");
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    let left = frame_count(&root);
    assert!(left >= 20);
    // A file of the user's in the frames directory is not a leftover.
    std::fs::write(root.join("notes.txt"), b"keep").unwrap();
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "2",
        "--quiet",
    ]);
    stdout_ok(&out);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("removed {left} leftover frames")),
        "{err}"
    );
    assert_eq!(tree(&root), [PathBuf::from("notes.txt")]);
    // Frames kept on purpose are no leftovers.
    std::fs::remove_file(root.join("notes.txt")).unwrap();
    let out = video(&[
        m,
        "--write",
        "--keep",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--quiet",
    ]);
    stdout_ok(&out);
    let out = video(&[
        m,
        "--read",
        "--frame-size",
        "64k",
        "--frames",
        "3",
        "--quiet",
    ]);
    stdout_ok(&out);
    assert_eq!(stderr(&out), "");
    assert_eq!(frame_count(&root), 3);
}

#[test]
fn a_second_run_on_the_same_directory_is_refused_and_the_first_goes_on() {
    let _g = serial();
    let fs = need!(Ext4::new(32));
    let m = path_str(fs.path());
    let first = spawn(&[
        m,
        "--write",
        "--frame-size",
        "64k",
        "--frames",
        "20",
        "--fps",
        "10",
        "--quiet",
        "--output",
        "json",
    ]);
    let root = fs.path().join("iosurvey-frames");
    assert!(
        wait_for(10, || frame_count(&root) >= 1),
        "the first run started"
    );
    for args in [
        vec![m, "--write", "--frame-size", "64k", "--frames", "20"],
        vec![
            m,
            "--read",
            "--prepare",
            "--frame-size",
            "64k",
            "--frames",
            "20",
        ],
        // --shared on one side only: the first run holds the directory alone.
        vec![
            m,
            "--write",
            "--frame-size",
            "64k",
            "--frames",
            "20",
            "--shared",
        ],
    ] {
        let out = video(&args);
        assert_refused(&out, "another iosurvey video run");
        assert_refused(&out, "add --shared to both runs");
    }
    let out = first.wait_with_output().unwrap();
    let r = report_of(&out);
    assert_eq!(u(&r["points"][0]["frames"]["summary"]["done"]), 20);
    assert!(!root.exists());
}

#[test]
fn on_a_filesystem_without_marks_a_file_planted_during_the_run_is_never_written_or_removed() {
    let _g = serial();
    // ramfs keeps no user xattrs: nothing there can carry iosurvey's mark,
    // so only the frames this run created may be rewritten or removed.
    let fs = need!(Mount::new("ramfs", &["-t", "ramfs"]));
    let users = fs.path().join("users");
    std::fs::create_dir(&users).unwrap();
    let decoy = users.join("decoy");
    std::fs::write(&decoy, b"the user's data").unwrap();
    // 40 empty frames: frames 30 and 31 are due after 3 s, long after the
    // plants below (ramfs reports no free space: --empty).
    let media = fs.path().join("media");
    let (run, root) = paced_write(&media, &["--empty", "--buffered", "--frames", "40"]);
    // A hard link to a file outside, and a plain file of the user's.
    std::fs::hard_link(&decoy, root.join("f0000030.frm")).unwrap();
    std::fs::write(root.join("f0000031.frm"), b"another of the user's files").unwrap();
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(std::fs::read(&decoy).unwrap(), b"the user's data");
    assert_eq!(
        std::fs::read(root.join("f0000031.frm")).unwrap(),
        b"another of the user's files",
        "the user's file was neither truncated nor removed"
    );
    assert_eq!(
        std::fs::read(root.join("f0000030.frm")).unwrap(),
        b"the user's data"
    );
    // Every frame the run created is gone; only the user's two are left.
    assert_eq!(frame_count(&root), 2);
}

#[test]
fn a_frames_directory_replaced_during_the_run_is_not_cleaned_up() {
    let _g = serial();
    let fs = need!(Ext4::new(64));
    // Frames another run kept, marked as iosurvey's.
    let other = fs.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let o = path_str(&other);
    let out = video(&[
        o,
        "--write",
        "--frame-size",
        "16k",
        "--frames",
        "8",
        "--keep",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let kept = other.join("iosurvey-frames");
    assert_eq!(frame_count(&kept), 8);
    // A paced run in `media`; during it, `media` is moved away and a
    // symlink to `other` put in its place.
    let media = fs.path().join("media");
    let (run, _) = paced_write(&media, &["--frame-size", "16k", "--frames", "20"]);
    let moved = fs.path().join("media.old");
    std::fs::rename(&media, &moved).unwrap();
    std::os::unix::fs::symlink(&other, &media).unwrap();
    let out = run.wait_with_output().unwrap();
    assert!(
        stderr(&out).contains("could not remove the frames in")
            && stderr(&out).contains("no longer there"),
        "the clean-up says why it removed nothing: {}",
        describe(&out)
    );
    assert_eq!(frame_count(&kept), 8, "the other run's frames are kept");
    assert_eq!(
        frame_count(&moved.join("iosurvey-frames")),
        20,
        "the run's own frames are where its directory went"
    );
}

#[test]
fn a_marked_file_linked_in_during_the_run_is_neither_written_nor_removed() {
    let _g = serial();
    let fs = need!(Ext4::new(64));
    // A file outside that carries iosurvey's mark (copied with its xattrs,
    // or set by hand), hard-linked to a frame path due later in the run.
    let decoy = fs.path().join("decoy");
    std::fs::write(&decoy, b"the user's data").unwrap();
    rustix::fs::setxattr(
        &decoy,
        "user.iosurvey.created",
        b"1",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    let media = fs.path().join("media");
    let (run, root) = paced_write(&media, &["--frame-size", "16k", "--frames", "40"]);
    std::fs::hard_link(&decoy, root.join("f0000030.frm")).unwrap();
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(std::fs::read(&decoy).unwrap(), b"the user's data");
    assert_eq!(
        std::fs::read(root.join("f0000030.frm")).unwrap(),
        b"the user's data",
        "the second name was neither written nor removed"
    );
}

#[test]
fn a_fifo_put_at_a_frame_path_during_a_read_is_never_opened() {
    use rustix::fs::inotify;
    let _g = serial();
    let fs = need!(Ext4::new(64));
    let media = fs.path().join("media");
    std::fs::create_dir(&media).unwrap();
    let m = path_str(&media);
    let out = video(&[
        m,
        "--write",
        "--frame-size",
        "16k",
        "--frames",
        "40",
        "--keep",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // Buffered: O_DIRECT alone would make the open of a FIFO fail.
    let run = spawn(&[
        m,
        "--read",
        "--buffered",
        "--frame-size",
        "16k",
        "--frames",
        "40",
        "--fps",
        "10",
    ]);
    std::thread::sleep(Duration::from_millis(500));
    // Frame 30 (due after 3 s) becomes a FIFO, watched for any open: a
    // device node there would be opened the same way, and a tape's open and
    // close alone can write.
    let frame = media.join("iosurvey-frames/f0000030.frm");
    std::fs::remove_file(&frame).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &frame,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let ino = inotify::init(inotify::CreateFlags::NONBLOCK).unwrap();
    inotify::add_watch(&ino, &frame, inotify::WatchFlags::OPEN).unwrap();
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let mut buf = [std::mem::MaybeUninit::uninit(); 1024];
    let opened = inotify::Reader::new(&ino, &mut buf).next().is_ok();
    assert!(!opened, "the FIFO at the frame path was opened");
    let kind = std::fs::symlink_metadata(&frame).unwrap().file_type();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&kind),
        "the FIFO is left"
    );
}
