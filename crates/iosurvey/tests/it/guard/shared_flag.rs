//! What `--shared` relaxes and what it never does, and test files kept
//! with `--keep`, on real loop devices and files: a failed exclusive open
//! of a device a run writes is refused whatever `--shared` says (a lazily
//! unmounted filesystem is still alive behind it), a second node of the
//! same device and a run on a disk and one on its partition meet the first
//! run's lock, and a kept test file is never taken for the leftover of a
//! killed run.

use crate::common::*;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::Duration;

/// A run in the background, killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `iosurvey ARGS` in the background and waits until it holds its
/// target.
fn start(args: &[&str]) -> Running {
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting iosurvey");
    sleep(Duration::from_millis(1000));
    Running(child)
}

fn reader(dev: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["run", dev, "--rw", "read", "--bs", "64k"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String]) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    iosurvey(&a)
}

#[test]
fn shared_never_writes_over_a_lazily_unmounted_filesystem() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mkfs.ext4", "e2fsck"]));
    let l = need!(LoopDev::blank(32 * MIB, &["--direct-io=on"]));
    let dev = path_str(l.path());
    must("mkfs.ext4", &["-q", "-F", dev]);
    let mnt = tempfile::tempdir().unwrap();
    let m = path_str(mnt.path());
    must("mount", &[dev, m]);
    let data = mnt.path().join("data");
    std::fs::write(&data, b"precious").unwrap();
    must("sync", &[]);
    // Held open, the filesystem lives on after a lazy unmount, out of
    // sight of /proc/mounts.
    let held = std::fs::File::open(&data).unwrap();
    must("umount", &["-l", m]);

    let plain = start(
        &reader(dev, &["--time", "20s"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let writer = [
        "run",
        dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "4m",
        "--allow-destroy",
        "--force",
        "--quiet",
    ];
    let shared = iosurvey(&[&writer[..], &["--shared"]].concat());
    assert_refused(&shared, &["exclusively"]);
    let out = iosurvey(&writer);
    assert_refused(&out, &["exclusively"]);
    drop(plain);
    // With no run at all, the kernel's O_EXCL still refuses it.
    let shared = iosurvey(&[&writer[..], &["--shared"]].concat());
    assert_refused(&shared, &["exclusively"]);

    // The filesystem is intact: once released, it checks clean and holds
    // the data.
    drop(held);
    sleep(Duration::from_millis(300));
    must("e2fsck", &["-n", "-f", dev]);
    must("mount", &["-o", "ro", dev, m]);
    let back = std::fs::read(&data);
    must("umount", &[m]);
    assert_eq!(back.unwrap(), b"precious");
}

#[test]
fn a_second_node_of_a_device_meets_the_first_runs_lock() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mknod"]));
    let l = need!(LoopDev::blank(16 * MIB, &["--direct-io=on"]));
    let dev = path_str(l.path());
    let mm = maj_min(l.path());
    let (maj, min) = mm.split_once(':').unwrap();
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("zalias");
    must("mknod", &[path_str(&alias), "b", maj, min]);
    let al = path_str(&alias);
    let once = ["--bytes", "1m", "--quiet"];

    let first = start(
        &reader(dev, &["--time", "20s"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_refused(&run(&reader(al, &once)), &["another iosurvey run"]);
    assert_refused(
        &run(&reader(al, &[&once[..], &["--shared"]].concat())),
        &["without --shared"],
    );
    drop(first);

    // Two --shared readers, through either node, both run.
    let first = start(
        &reader(dev, &["--time", "20s", "--shared"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let out = run(&reader(al, &[&once[..], &["--shared"]].concat()));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_refused(&run(&reader(al, &once)), &["another iosurvey run"]);
    drop(first);
    let out = run(&reader(al, &once));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn a_kept_test_file_is_not_a_leftover_but_a_killed_runs_is() {
    let _lock = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run",
            d,
            "--size",
            "4m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--buffered",
            "--quiet",
        ];
        a.extend_from_slice(extra);
        iosurvey(&a)
    };
    let out = args(&["--keep"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut buf = [0u8; 8];
    if rustix::fs::getxattr(&kept[0], "user.iosurvey.created", &mut buf[..]).is_err() {
        skip!("{d} has no user xattrs: iosurvey cannot mark its files");
    }
    assert!(
        rustix::fs::getxattr(&kept[0], "user.iosurvey.pending", &mut buf[..]).is_err(),
        "a kept file is pending no more"
    );
    let out = args(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(!err.contains("left behind"), "{err}");
    assert!(kept[0].exists(), "the kept file was removed");
    // The kept file is reused as a target of its own (a write: it is ours).
    let out = iosurvey(&[
        "run",
        path_str(&kept[0]),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--buffered",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    // A killed run's file is still a leftover, and removed.
    let killed = start(&[
        "run",
        d,
        "--size",
        "4m",
        "--rw",
        "read",
        "--time",
        "20s",
        "--buffered",
    ]);
    let left = dir
        .path()
        .join(format!("iosurvey-{}.testfile", killed.0.id()));
    assert!(left.exists(), "no test file appeared");
    drop(killed);
    assert!(left.exists(), "SIGKILL leaves the test file behind");
    let out = args(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("left behind") && err.contains(path_str(&left)),
        "{err}"
    );
    assert!(!left.exists());
    assert!(kept[0].exists(), "the kept file was removed");
}

#[test]
fn runs_on_a_disk_and_on_its_partition_meet_but_siblings_do_not() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "addpart"]));
    let l = need!(LoopDev::blank(32 * MIB, &["-P", "--direct-io=on"]));
    let dev = path_str(l.path());
    need!(sh("addpart", &[dev, "1", "2048", "16384"]));
    need!(sh("addpart", &[dev, "2", "18432", "16384"]));
    let (p1, p2) = (format!("{dev}p1"), format!("{dev}p2"));
    let t0 = std::time::Instant::now();
    while !(Path::new(&p1).exists() && Path::new(&p2).exists()) {
        if t0.elapsed() > Duration::from_secs(2) {
            skip!("the partitions of {dev} did not appear");
        }
        sleep(Duration::from_millis(20));
    }
    let once = ["--bytes", "1m", "--quiet"];
    let long = |t: &str, extra: &[&str]| {
        let a = reader(t, &[&["--time", "20s"][..], extra].concat());
        start(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };

    let first = long(dev, &[]);
    assert_refused(&run(&reader(&p1, &once)), &["another iosurvey run"]);
    drop(first);

    let first = long(&p1, &[]);
    assert_refused(&run(&reader(dev, &once)), &["another iosurvey run"]);
    let out = run(&reader(&p2, &once));
    assert_eq!(
        out.status.code(),
        Some(0),
        "a sibling runs: {}",
        describe(&out)
    );
    drop(first);

    // A writer on a partition and a reader of the whole disk.
    let first = start(&[
        "run",
        &p1,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--time",
        "20s",
        "--allow-destroy",
    ]);
    assert_refused(&run(&reader(dev, &once)), &["another iosurvey run"]);
    drop(first);

    // --shared on both: they run together.
    let first = long(dev, &["--shared"]);
    let out = run(&reader(&p1, &[&once[..], &["--shared"]].concat()));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_refused(&run(&reader(&p1, &once)), &["another iosurvey run"]);
    drop(first);
}
