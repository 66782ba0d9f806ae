//! Targets that are not storage, or cannot be written, refused before any
//! I/O with one line that says what they are (issue 28 §5): files and
//! directories of the kernel's pseudo-filesystems (a `/proc` file gave
//! "seek failed"; a sysfs attribute was written with `--buffered
//! --allow-destroy`), a read-only filesystem (called "permission denied")
//! and a read-only device (every write failed with EPERM, exit 1); and the
//! words for an empty file or a missing directory when `--size` was given
//! (they said "give --size").

use crate::common::*;
use std::path::Path;

/// `iosurvey run TARGET --rw RW --bs 4k --bytes 64k --quiet EXTRA...`.
fn run(target: &Path, rw: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        path_str(target),
        "--rw",
        rw,
        "--bs",
        "4k",
        "--bytes",
        "64k",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    iosurvey(&args)
}

#[test]
fn a_proc_file_is_refused_as_a_kernel_interface() {
    let status = Path::new("/proc/self/status");
    for extra in [&["--buffered"][..], &[], &["--buffered", "--dry-run"]] {
        let out = run(status, "read", extra);
        assert_refused(&out, &["/proc/self/status", "on proc", "not storage"]);
    }
}

/// A sysfs attribute of a loop device the test made: offered for writing
/// with `--buffered --allow-destroy --force`, refused before a byte is
/// written, and its value is unchanged.
#[test]
fn a_sysfs_attribute_is_never_written() {
    let _lock = serial();
    let dev = need!(LoopDev::blank(16 * MIB, &[]));
    let attr = sysfs_dir(dev.path()).join("queue/read_ahead_kb");
    let before = std::fs::read_to_string(&attr).unwrap();
    for extra in [&[][..], &["--dry-run"]] {
        let mut flags = vec!["--buffered", "--allow-destroy", "--force"];
        flags.extend_from_slice(extra);
        let out = run(&attr, "write", &flags);
        assert_refused(&out, &["read_ahead_kb", "on sysfs", "not storage"]);
    }
    assert_eq!(std::fs::read_to_string(&attr).unwrap(), before);
    // A sysfs directory is no place for a test file either.
    let queue = sysfs_dir(dev.path()).join("queue");
    let out = run(&queue, "write", &["--size", "1m", "--buffered"]);
    assert_refused(&out, &["on sysfs"]);
    // Nor for video's frames directory (a write there is refused sooner,
    // for want of free space).
    let out = iosurvey(&[
        "video",
        path_str(&queue),
        "--frames",
        "2",
        "--buffered",
        "--quiet",
    ]);
    assert_refused(&out, &["on sysfs"]);
    assert!(!queue.join("iosurvey-frames").exists());
}

/// A tmpfs remounted read-only: a file on it offered for writing, and a
/// test file to create in it, are each called a read-only filesystem.
#[test]
fn a_read_only_filesystem_is_named_as_one() {
    let _lock = serial();
    let fs = need!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=8m"]));
    let file = fs.path().join("data");
    std::fs::write(&file, random_bytes(MIB as usize, 1)).unwrap();
    must("mount", &["-o", "remount,ro", path_str(fs.path())]);
    let out = run(&file, "write", &["--buffered", "--allow-destroy"]);
    assert_refused(&out, &["read-only filesystem"]);
    let out = run(fs.path(), "read", &["--buffered", "--size", "1m"]);
    assert_refused(&out, &["read-only filesystem"]);
}

/// A loop device attached read-only (`losetup -r`) opens for writing, and
/// each write then fails (EPERM, exit 1): refused before the first.
#[test]
fn a_read_only_device_is_refused_before_any_write() {
    let _lock = serial();
    let dev = need!(LoopDev::create(16 * MIB, Fill::Random(3), &["-r"]));
    let before = checksum(dev.path(), None);
    let out = run(dev.path(), "write", &["--allow-destroy", "--force"]);
    assert_refused(&out, &["read-only device"]);
    assert_eq!(checksum(dev.path(), None), before);
    // Reading it is fine.
    let out = run(dev.path(), "read", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

/// With `--size` given, no message asks for `--size`: an empty file that
/// iosurvey did not create, and a path under a file (not a directory).
#[test]
fn messages_given_size_do_not_ask_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&empty, "read", &["--size", "1m"]);
    assert_refused(&out, &["is empty", "remove it"]);
    assert!(
        !stderr_of(&out).contains("give --size"),
        "{}",
        describe(&out)
    );
    let under = empty.join("f");
    let out = run(&under, "read", &["--size", "1m"]);
    assert_refused(&out, &["no such directory"]);
    assert!(
        !stderr_of(&out).contains("give --size"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}
