//! The write guard under attack, on real loop and zram devices and files: a
//! symlink flipped between a harmless target and a victim during a loop of
//! runs, a partition whose parent disk is mounted, a zram device that backs
//! a loop device holding a mounted ext4, a loop device over a mounted
//! device, swap on a device node of another name, a lazily unmounted
//! filesystem, and a fake `blkid` first in `$PATH`.
//! Each test checks the victim's contents afterwards. (Concurrent runs,
//! aliases, `--readonly` layouts and leftovers: `guard_runs.rs`.)
//!
//! Every test needs root (it creates its own loop and zram devices, mounts
//! and files and removes them through Drop guards); without root or a tool
//! it needs, it prints "skipping: <reason>" and passes.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

const SIZE: u64 = 16 * MIB;
/// Runs of a race on a device: their checks and open are milliseconds
/// apart, so about one in ten met the old guard's window.
const ROUNDS: usize = 100;
/// Runs of a race on a file: its checks and open are microseconds apart.
const FILE_ROUNDS: usize = 500;

/// `run DEV --rw write --bs 64k --bytes 1m --allow-destroy` with `flags`
/// then `extra`: a short write that only the guard stands in the way of.
fn destroy_args<'a>(dev: &'a str, flags: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--allow-destroy",
    ];
    args.extend_from_slice(flags);
    args.push("--quiet");
    args.extend_from_slice(extra);
    args
}

/// Points `link` at `to`, atomically (a new symlink renamed over it).
fn point(link: &Path, to: &Path) {
    let tmp = link.with_extension("new");
    if std::os::unix::fs::symlink(to, &tmp).is_err() {
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(to, &tmp).unwrap();
    }
    std::fs::rename(&tmp, link).unwrap();
}

/// A thread that flips `link` between `a` and `b` until dropped.
struct Flipper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Flipper {
    /// Holds each side from 1 µs to `2^max_shift` µs.
    fn start(link: &Path, a: &Path, b: &Path, max_shift: u64) -> Flipper {
        let stop = Arc::new(AtomicBool::new(false));
        let (link, a, b) = (link.to_path_buf(), a.to_path_buf(), b.to_path_buf());
        let s = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut flips = 0u64;
            let mut rng = 0x9e37_79b9_7f4a_7c15u64;
            while !s.load(Ordering::Relaxed) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Either side, held from 1 µs up: a run's checks and its
                // open, micro- to milliseconds apart, each see either.
                point(&link, if rng & (1 << 40) == 0 { &a } else { &b });
                flips += 1;
                // Spun, not slept: a sleep lasts far longer than asked on
                // a busy machine.
                let hold = Instant::now() + Duration::from_micros(1 << (rng % (max_shift + 1)));
                while Instant::now() < hold {
                    std::hint::spin_loop();
                }
            }
            flips
        });
        Flipper {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `args` `rounds` times; every run must exit 0 or 2. Returns how many
/// exited 0.
fn race(rounds: usize, args: &[&str]) -> usize {
    let mut ok = 0;
    let mut why = std::collections::BTreeMap::<String, u32>::new();
    for i in 0..rounds {
        let out = iosurvey(args);
        match out.status.code() {
            Some(0) => ok += 1,
            Some(2) => {
                // The reason, without the names that differ per run.
                let err = stderr_of(&out);
                let reason = err.split_once("): ").map_or(err.as_str(), |(_, r)| r);
                let reason = reason.rsplit(": ").next().unwrap_or(reason).trim();
                *why.entry(reason.chars().take(60).collect()).or_default() += 1;
            }
            _ => panic!("round {i}: unexpected outcome: {}", describe(&out)),
        }
    }
    eprintln!("refusals: {why:#?}");
    ok
}

#[test]
fn a_symlink_flipped_between_a_blank_and_an_ext4_device_never_reaches_the_ext4() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mkfs.ext4", "blkid"]));
    let blank = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let victim = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    mkfs_ext4(victim.path());
    let before = checksum(victim.path(), None);
    let probe = blkid_probe(victim.path());
    assert!(probe.contains("TYPE=ext4"), "{probe}");
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("dev");
    point(&link, blank.path());

    let flipper = Flipper::start(&link, blank.path(), victim.path(), 10);
    let ok = race(ROUNDS, &destroy_args(path_str(&link), &[], &[]));
    let flips = flipper.stop();
    eprintln!("{ok} of {ROUNDS} runs wrote the blank device; {flips} flips");

    assert_eq!(
        checksum(victim.path(), None),
        before,
        "the ext4 device was written through the flipping symlink"
    );
    assert_eq!(blkid_probe(victim.path()), probe);
}

#[test]
fn a_symlink_flipped_between_a_marked_file_and_a_user_file_never_reaches_the_user_file() {
    let _lock = serial();
    need!(require_root());
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours");
    let made = iosurvey(&[
        "run",
        path_str(&ours),
        "--size",
        "1m",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--buffered",
        "--keep",
        "--quiet",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", describe(&made));
    let mut buf = [0u8; 8];
    if rustix::fs::getxattr(&ours, "user.iosurvey.created", &mut buf[..]).is_err() {
        skip!(
            "{} has no user xattrs: iosurvey cannot mark its files",
            dir.path().display()
        );
    }
    let theirs = dir.path().join("theirs");
    let data = random_bytes(MIB as usize, 7);
    std::fs::write(&theirs, &data).unwrap();
    let link = dir.path().join("target");
    point(&link, &ours);

    // A file's checks and open are microseconds apart: flip faster.
    let flipper = Flipper::start(&link, &ours, &theirs, 2);
    let ok = race(
        FILE_ROUNDS,
        &[
            "run",
            path_str(&link),
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "1m",
            "--buffered",
            "--quiet",
        ],
    );
    let flips = flipper.stop();
    eprintln!("{ok} of {FILE_ROUNDS} runs wrote the marked file; {flips} flips");

    assert!(
        std::fs::read(&theirs).unwrap() == data,
        "the user's file was written through the flipping symlink"
    );
}

#[test]
fn a_partition_is_not_written_while_its_parent_disk_is_mounted() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "addpart",
        "mkfs.ext4",
        "mount",
        "umount",
        "fsfreeze"
    ]));
    let l = need!(LoopDev::blank(64 * MIB, &["-P", "--direct-io=on"]));
    // A partition the kernel knows, over the first half of the disk.
    need!(sh("addpart", &[path_str(l.path()), "1", "2048", "65536"]));
    let part = PathBuf::from(format!("{}p1", l.path().display()));
    let t0 = Instant::now();
    while !part.exists() && t0.elapsed() < Duration::from_secs(2) {
        sleep(Duration::from_millis(20));
    }
    if !part.exists() {
        skip!("{} did not appear", part.display());
    }
    mkfs_ext4(l.path());
    let m = need!(Mount::frozen(l.path()));
    let before = checksum(l.path(), None);

    for extra in [&[][..], &["--force"][..], &["--force", "--shared"][..]] {
        let args = destroy_args(path_str(&part), &[], extra);
        let out = iosurvey(&args);
        assert_refused(&out, &["is mounted at", l.name(), path_str(m.path())]);
    }
    assert_eq!(checksum(l.path(), None), before, "the mounted disk changed");
}

#[test]
fn zram_backing_a_loop_device_with_a_mounted_ext4_is_never_written() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "umount",
        "fsfreeze",
        "blkid"
    ]));
    let z = need!(Zram::new(64 * MIB));
    // Dropped in reverse: unmounted, then detached, then the zram removed.
    let l = need!(LoopDev::attach(z.path(), &[]));
    mkfs_ext4(l.path());
    let m = need!(Mount::frozen(l.path()));
    let before = checksum(z.path(), None);

    let out = iosurvey(&destroy_args(path_str(z.path()), &["--force"], &[]));
    assert_refused(&out, &["is mounted at", l.name()]);
    assert_eq!(checksum(z.path(), None), before, "the zram device changed");
    // Unfrozen and unmounted (which writes), the loop device on it is
    // still a use.
    drop(m);
    let before = checksum(z.path(), None);
    let out = iosurvey(&destroy_args(path_str(z.path()), &["--force"], &[]));
    assert_refused(&out, &["backs the loop device", l.name()]);
    assert_eq!(checksum(z.path(), None), before, "the zram device changed");
    assert!(blkid_probe(l.path()).contains("TYPE=ext4"));
}

#[test]
fn a_fake_blkid_first_in_path_does_not_let_an_ext4_through() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mkfs.ext4", "blkid"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    mkfs_ext4(l.path());
    let before = checksum(l.path(), None);
    let fake = tempfile::tempdir().unwrap();
    for (name, code) in [("blkid", 2), ("wipefs", 0)] {
        let p = fake.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\nexit {code}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(BIN)
        .args(destroy_args(path_str(l.path()), &[], &[]))
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_refused(&out, &["ext4 signature", "--force"]);
    assert_eq!(checksum(l.path(), None), before);
}

#[test]
fn swap_on_a_node_of_another_name_is_found_by_identity() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup", "mkswap", "swapon", "swapoff", "mknod"
    ]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dir = tempfile::tempdir().unwrap();
    // A second node of the same device, under a name /proc/swaps shows.
    let node = dir.path().join("other-name");
    let (maj, min) = maj_min(l.path())
        .split_once(':')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .unwrap();
    must("mknod", &[path_str(&node), "b", &maj, &min]);
    must("mkswap", &[path_str(&node)]);
    let _swap = need!(Swap::on(&node));
    let before = checksum(l.path(), None);
    for extra in [&[][..], &["--shared"][..]] {
        let args = destroy_args(path_str(l.path()), &["--force"], extra);
        assert_refused(&iosurvey(&args), &["in use as swap", "other-name"]);
    }
    assert_eq!(checksum(l.path(), None), before);
}

#[test]
fn a_lazily_unmounted_filesystem_still_claims_its_device() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "umount"
    ]));
    let disk = need!(LoopDev::blank(32 * MIB, &["--direct-io=on"]));
    mkfs_ext4(disk.path());
    let mnt = tempfile::tempdir().unwrap();
    must("mount", &[path_str(disk.path()), path_str(mnt.path())]);
    let img = mnt.path().join("img");
    std::fs::write(&img, random_bytes(4 * MIB as usize, 9)).unwrap();
    // Detached before `disk` (declared after it): the filesystem ends then.
    let on_file = need!(LoopDev::attach(&img, &[]));
    // Gone from every mount table, but alive while the loop device holds
    // its file: the kernel's O_EXCL still sees it, and so does the family
    // check, by the identity of the loop device's backing file.
    must("umount", &["-l", path_str(mnt.path())]);
    for extra in [&[][..], &["--shared"][..]] {
        let args = destroy_args(path_str(disk.path()), &["--force"], extra);
        let out = iosurvey(&args);
        assert_refused(&out, &[]);
        let err = stderr_of(&out);
        assert!(
            err.contains("refused to open the device exclusively")
                || err.contains(&format!("backs the loop device /dev/{}", on_file.name())),
            "{err}"
        );
    }
    drop(on_file);
    sleep(Duration::from_millis(300));
    assert!(blkid_probe(disk.path()).contains("TYPE=ext4"));
}

#[test]
fn a_loop_device_over_a_mounted_device_is_never_written() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let z = need!(Zram::new(32 * MIB));
    mkfs_ext4(z.path());
    let _m = need!(Mount::frozen(z.path()));
    // Detached before the mount goes (declared after it).
    let l = need!(LoopDev::attach(z.path(), &[]));
    let before = checksum(z.path(), None);
    let out = iosurvey(&destroy_args(path_str(l.path()), &["--force"], &[]));
    let zname = z.path().file_name().unwrap().to_str().unwrap();
    assert_refused(&out, &["is mounted at", zname]);
    assert_eq!(
        checksum(z.path(), None),
        before,
        "the mounted device changed"
    );
}
