//! The write guard and loop devices whose backing file the guard must know
//! by identity, not by the path in sysfs: a loop device over a device node
//! that was removed (or whose path now names another device), loop devices
//! with no node in this mount namespace's /dev (asked through a node of
//! iosurvey's own), a regular file that backs a mounted loop device, and a
//! loop device run beside its own backing file.
//! Each test checks the victim's contents afterwards.
//!
//! Every test needs root (it creates its own loop devices, nodes, mounts
//! and files and removes them through Drop guards); without root or a tool
//! it needs, it prints "skipping: <reason>" and passes.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

const SIZE: u64 = 32 * MIB;

/// `mknod PATH b MAJ MIN` of the device `dev`.
fn mknod_of(path: &Path, dev: &Path) {
    let mm = maj_min(dev);
    let (maj, min) = mm.split_once(':').expect("MAJ:MIN");
    must("mknod", &[path_str(path), "b", maj, min]);
}

/// A destructive write of `target` that adds every override.
fn write_forced(target: &str) -> Output {
    iosurvey(&[
        "run",
        target,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--allow-destroy",
        "--force",
        "--quiet",
    ])
}

/// A file of `size` bytes with every block allocated (random data).
fn allocated_file(path: &Path, size: u64) {
    std::fs::write(path, random_bytes(size as usize, 7)).unwrap();
}

#[test]
fn a_loop_over_a_removed_node_still_ties_its_mounted_fs_to_the_device_below() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "umount",
        "fsfreeze",
        "mknod",
        "fsck.ext4"
    ]));
    let lower = need!(LoopDev::blank(SIZE, &[]));
    let decoy = need!(LoopDev::blank(SIZE, &[]));
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("node");
    mknod_of(&node, lower.path());
    let upper = need!(LoopDev::attach(&node, &[]));
    // The path sysfs shows now names nothing, then another device.
    std::fs::remove_file(&node).unwrap();
    assert!(sysfs_read(upper.path(), "loop/backing_file").ends_with("(deleted)"));
    mknod_of(&node, decoy.path());
    mkfs_ext4_settled(upper.path());
    let mut m = need!(Mount::new(path_str(upper.path()), &[]));
    std::fs::write(m.path().join("data"), b"precious\n").unwrap();
    m.freeze().expect("fsfreeze -f");
    let before = checksum(lower.path(), None);

    let out = write_forced(path_str(lower.path()));
    assert_refused(&out, &["is mounted at", upper.name()]);
    assert_eq!(checksum(lower.path(), None), before, "the device changed");
    // The node at the old path names the decoy, which nothing uses.
    let out = write_forced(path_str(&node));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    // Unmounted, the loop device over it is still a use.
    drop(m);
    let before = checksum(lower.path(), None);
    let out = write_forced(path_str(lower.path()));
    assert_refused(&out, &["backs the loop device", upper.name()]);
    assert_eq!(checksum(lower.path(), None), before, "the device changed");
    let fsck = Command::new("fsck.ext4")
        .args(["-n", "-f"])
        .arg(upper.path())
        .output()
        .unwrap();
    assert!(fsck.status.success(), "fsck: {}", describe(&fsck));
}

#[test]
fn a_loop_device_without_a_node_in_this_namespace_is_still_seen() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mknod", "unshare", "mount"]));
    let target = need!(LoopDev::blank(SIZE, &[]));
    // A loop device over the target, with no node in a private /dev that
    // holds only the target's: what it sits on is asked of the kernel
    // through a node iosurvey makes for it, so it is seen backed by the
    // target (it was "cannot tell", which refused every device write on
    // the host, whatever the loop device sat on).
    let hidden = need!(LoopDev::attach(target.path(), &[]));
    let before = checksum(target.path(), None);
    let mm = maj_min(target.path());
    let (maj, min) = mm.split_once(':').unwrap();
    let script = format!(
        "mount -t tmpfs none /dev && mknod /dev/{} b {maj} {min} && exec {BIN} run /dev/{} --rw write --bs 64k --bytes 1m --allow-destroy --force --quiet",
        target.name(),
        target.name()
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_refused(&out, &["backs the loop device", hidden.name()]);
    assert_eq!(checksum(target.path(), None), before, "the device changed");
    drop(hidden);
}

#[test]
fn a_file_that_backs_a_loop_device_is_never_written() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("lb2.img");
    allocated_file(&img, SIZE);
    let l = need!(LoopDev::attach(&img, &[]));
    mkfs_ext4_settled(l.path());
    let m = need!(Mount::frozen(l.path()));
    let before = checksum(&img, None);
    let write = || {
        iosurvey(&[
            "run",
            path_str(&img),
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "1m",
            "--allow-destroy",
            "--force",
            "--quiet",
        ])
    };
    let out = write();
    assert_refused(&out, &["backs the loop device", l.name(), "losetup -d"]);
    assert_eq!(checksum(&img, None), before, "the file changed");
    // Unmounted, the loop device is still attached: still refused.
    drop(m);
    let before = checksum(&img, None);
    let out = write();
    assert_refused(&out, &["backs the loop device", l.name()]);
    assert_eq!(checksum(&img, None), before, "the file changed");
    // Detached, the file is the user's to destroy.
    drop(l);
    let out = write();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn a_loop_device_and_its_backing_file_are_one_target() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("img");
    allocated_file(&img, SIZE);
    let l = need!(LoopDev::attach(&img, &[]));
    // A loop device over the loop device: a member of its family.
    let top = need!(LoopDev::attach(l.path(), &[]));
    for pair in [
        [path_str(l.path()), path_str(&img)],
        [path_str(&img), path_str(l.path())],
        [path_str(top.path()), path_str(&img)],
    ] {
        let out = iosurvey(&["run", pair[0], pair[1], "--bytes", "1m", "--quiet"]);
        assert_refused(&out, &["overlaps", pair[0], pair[1]]);
    }
    // Each alone is fine.
    let out = iosurvey(&["run", path_str(&img), "--bytes", "1m", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}
