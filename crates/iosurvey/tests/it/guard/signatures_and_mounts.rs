//! The write guard and the I/O error path on real block devices: loop
//! devices that carry a filesystem, a partition table or swap, that are
//! mounted or in use as swap, that were never formatted, and one over a file
//! on a nearly full tmpfs that fails writes part way through a run.
//!
//! Every test here needs root: it creates its own loop devices, mounts and
//! swap and removes them again through Drop guards (unmount, swapoff, then
//! detach), also when an assertion fails. Without root, or when a tool it
//! needs (losetup, mkfs.ext4, blkid, sfdisk, mkswap, ...) is missing, a test
//! prints "skipping: <reason>" on stderr and passes.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::thread::sleep;
use std::time::Duration;

const SIZE: u64 = 64 * MIB;

/// Asserts that iosurvey refused the run: exit code 2 and one line on
/// stderr that contains every one of `needles`.
fn assert_refused(out: &Output, needles: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected a refusal (exit 2): {}",
        describe(out)
    );
    let err = stderr_of(out);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "the refusal should be one line: {err:?}"
    );
    for n in needles {
        assert!(err.contains(n), "the refusal should contain {n:?}: {err}");
    }
}

/// `iosurvey run DEV --rw write --bs 1m --bytes 4m EXTRA... --quiet`.
fn write_run(dev: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run", dev, "--rw", "write", "--bs", "1m", "--bytes", "4m", "--quiet",
    ];
    args.extend_from_slice(extra);
    iosurvey(&args)
}

/// The first partition of a device attached with `losetup -P`, once its
/// node exists. This kernel may lack the parser for the partition table
/// (CONFIG_EFI_PARTITION is not set on the CI machines), so when the kernel
/// found no partition, `partx -a` (util-linux) adds it from user space.
fn first_partition(l: &LoopDev) -> Result<PathBuf, String> {
    let name = format!("{}p1", l.name());
    let sys = Path::new("/sys/block").join(l.name()).join(&name);
    let node = PathBuf::from(format!("/dev/{name}"));
    if !sys.exists() {
        require_tool("partx")?;
        sh("partx", &["-a", path_str(l.path())])?;
    }
    for _ in 0..50 {
        if sys.exists() && node.exists() {
            return Ok(node);
        }
        sleep(Duration::from_millis(40));
    }
    Err(format!(
        "{} has a partition table but {} did not appear",
        l.path().display(),
        node.display()
    ))
}

// ---------------------------------------------------------------------------
// Mounted, swap, signatures
// ---------------------------------------------------------------------------

#[test]
fn mounted_ext4_is_never_written_but_can_be_read() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    mkfs_ext4(l.path());
    // Declared after the loop device: unmounted before it is detached.
    let m = need!(Mount::frozen(l.path()));
    let before = checksum(l.path(), None);

    let out = write_run(dev, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["mounted", path_str(m.path())]);
    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["is mounted at"]);

    // Reading a mounted device is harmless and allowed.
    let p = run_point(&["--rw", "read", "--bs", "1m", "--bytes", "1m", dev]);
    assert_eq!(u(&p["total"]["read"]["bytes"]), MIB, "{p}");
    assert_eq!(u(&p["total"]["write"]["ops"]), 0, "{p}");

    assert_eq!(
        checksum(l.path(), None),
        before,
        "the device of a mounted filesystem changed"
    );
}

/// A raid0 array whose stripe cuts each write into pieces on every member
/// is refused whole, before any piece is written, when one member is a
/// mounted filesystem's device, when a member is another one under a
/// symlink, or when a member is a file iosurvey did not make and its data
/// was not offered.
#[test]
fn a_striped_write_with_a_member_not_offered_is_refused_before_any_piece() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let mounted = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let free = need!(LoopDev::new(SIZE, 11));
    mkfs_ext4(mounted.path());
    // Declared after the loop device: unmounted before it is detached.
    let m = need!(Mount::frozen(mounted.path()));
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(free.path(), &alias).unwrap();
    let file = dir.path().join("theirs.dat");
    std::fs::write(&file, random_bytes(SIZE as usize, 12)).unwrap();
    let sums = || {
        (
            checksum(mounted.path(), None),
            checksum(free.path(), None),
            checksum(&file, None),
        )
    };
    let before = sums();
    let striped = |a: &str, b: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            a,
            b,
            "--simulate",
            "raid0",
            "--stripe",
            "4k",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "4m",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        iosurvey(&args)
    };
    let (fr, mo) = (path_str(free.path()), path_str(mounted.path()));
    let out = striped(fr, mo, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["mounted", path_str(m.path())]);
    let out = striped(fr, path_str(&alias), &["--allow-destroy"]);
    assert_refused(&out, &["the same target as"]);
    let out = striped(fr, path_str(&file), &[]);
    assert_refused(&out, &["--allow-destroy"]);
    assert_eq!(sums(), before, "a piece of a refused run was written");
}

#[test]
fn ext4_signature_needs_force() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "mkfs.ext4", "blkid"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    mkfs_ext4(l.path());
    assert!(
        blkid_probe(l.path()).contains("TYPE=ext4"),
        "mkfs.ext4 left no ext4 signature"
    );
    let before = checksum(l.path(), Some(MIB));

    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["holds data (", "ext4 signature", "--force"]);
    assert_eq!(
        checksum(l.path(), Some(MIB)),
        before,
        "a refused write wrote"
    );

    let out = write_run(dev, &["--allow-destroy", "--force", "--output", "json"]);
    let report = report_of(&out);
    let p = &report["points"][0];
    assert!(p["failure"].is_null(), "{}", p["failure"]);
    assert_eq!(u(&p["total"]["write"]["bytes"]), 4 * MIB, "{p}");
    assert_ne!(
        checksum(l.path(), Some(MIB)),
        before,
        "--force: the first MiB did not change"
    );
    let probe = blkid_probe(l.path());
    assert!(
        !probe.contains("TYPE=ext4"),
        "blkid -p still finds ext4 after a forced write: {probe}"
    );
}

#[test]
fn gpt_needs_force_and_a_mounted_partition_refuses_even_force() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "sfdisk",
        "blkid",
        "mkfs.ext4",
        "mount",
        "umount"
    ]));
    let l = need!(LoopDev::blank(SIZE, &["-P", "--direct-io=on"]));
    let dev = path_str(l.path());
    need!(sh(
        "sh",
        &["-c", r#"printf 'label: gpt\n,\n' | sfdisk -q "$0""#, dev]
    ));
    let probe = blkid_probe(l.path());
    assert!(probe.contains("PTTYPE=gpt"), "sfdisk made no GPT: {probe}");
    let before = checksum(l.path(), None);

    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["holds data (", "gpt partition table", "--force"]);
    assert_eq!(checksum(l.path(), None), before, "a refused write wrote");

    let part = need!(first_partition(&l));
    mkfs_ext4(&part);
    let _m = need!(Mount::new(path_str(&part), &[]));
    let name = part.file_name().unwrap().to_str().unwrap().to_string();
    let out = write_run(dev, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", &name]);
}

/// Regression: once the primary GPT header is overwritten, `blkid -p`
/// finds nothing, but the backup header at the end still marks the device;
/// `wipefs` sees it, so the guard still asks for --force.
#[test]
fn a_backup_gpt_header_alone_still_needs_force() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "sfdisk", "wipefs", "dd"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    need!(sh(
        "sh",
        &["-c", r#"printf 'label: gpt\n,\n' | sfdisk -q "$0""#, dev]
    ));
    let of = format!("of={dev}");
    must(
        "dd",
        &[
            "if=/dev/zero",
            &of,
            "bs=1M",
            "count=1",
            "oflag=direct",
            "status=none",
        ],
    );
    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["holds data (", "gpt", "--force"]);
}

#[test]
fn swap_signature_needs_force_and_active_swap_refuses_even_force() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup", "mkswap", "swapon", "swapoff", "blkid"
    ]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    must("mkswap", &[dev]);
    let before = checksum(l.path(), None);

    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["holds data (", "swap signature", "--force"]);

    // Declared after the loop device: swapped off before it is detached.
    let _swap = need!(Swap::on(l.path()));
    let out = write_run(dev, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["in use as swap"]);
    let out = write_run(dev, &["--allow-destroy"]);
    assert_refused(&out, &["swap"]);
    assert_eq!(checksum(l.path(), None), before, "a refused write wrote");
}

#[test]
fn blank_device_needs_only_allow_destroy() {
    let _lock = serial();
    need!(require_root_and(&["losetup", "blkid"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());
    let probe = blkid_probe(l.path());
    assert!(probe.is_empty(), "blkid -p finds something: {probe}");

    let out = write_run(dev, &[]);
    assert_refused(&out, &["--allow-destroy"]);

    let p = run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    let w = &p["total"]["write"];
    assert!(u(&w["ops"]) > 0, "{w}");
    assert_eq!(u(&w["ops"]), SIZE / MIB, "one pass over the device: {w}");
    assert_eq!(u(&w["bytes"]), SIZE, "{w}");
}

#[test]
fn readonly_refuses_a_blank_device_whatever_else_is_given() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let l = need!(LoopDev::blank(SIZE, &["--direct-io=on"]));
    let dev = path_str(l.path());

    for rw in ["write", "randwrite", "randrw"] {
        let out = iosurvey(&[
            "run",
            dev,
            "--rw",
            rw,
            "--bs",
            "64k",
            "--bytes",
            "1m",
            "--allow-destroy",
            "--force",
            "--readonly",
            "--quiet",
        ]);
        assert_refused(&out, &["--readonly"]);
    }
    assert!(
        read_device(l.path()).iter().all(|&b| b == 0),
        "--readonly: the blank device was written"
    );
}

// ---------------------------------------------------------------------------
// I/O errors part way through a run
// ---------------------------------------------------------------------------

/// The size of the tmpfs under a 64 MiB sparse backing file: writes past
/// the first 16 MiB find no space.
const TMPFS: &str = "size=16m";
const ROOM: u64 = 16 * MIB;

/// A 64 MiB loop device over a sparse file on a 16 MiB tmpfs. The loop
/// device is detached (field order) before the tmpfs is unmounted.
struct FullDev {
    dev: LoopDev,
    _fs: Mount,
}

impl FullDev {
    /// `direct_io`: whether the loop device does O_DIRECT on its backing
    /// file (`--direct-io=on`) or goes through the page cache.
    fn new(direct_io: bool) -> Result<FullDev, String> {
        require_root_and(&["losetup", "mount", "umount"])?;
        let fs = Mount::new("tmpfs", &["-t", "tmpfs", "-o", TMPFS])?;
        let file = fs.path().join("backing.img");
        std::fs::File::create(&file)
            .and_then(|f| f.set_len(SIZE))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let opts: &[&str] = if direct_io {
            &["--direct-io=on"]
        } else {
            &["--direct-io=off"]
        };
        let dev = LoopDev::attach(&file, opts)?;
        if direct_io && sysfs_read(dev.path(), "loop/dio") != "1" {
            return Err("the loop device refused direct I/O on tmpfs".into());
        }
        Ok(FullDev { dev, _fs: fs })
    }
}

/// Runs a 64 MiB sequential write over a FullDev and returns the report
/// read from `--json FILE`, after checking the exit code is 1.
fn failing_write(full: &FullDev, engine: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("report.json");
    let mut args = vec![
        "run",
        path_str(full.dev.path()),
        "--rw",
        "write",
        "--bs",
        "1m",
        "--bytes",
        "64m",
        "--engine",
        engine,
        "--allow-destroy",
        "--json",
        path_str(&json),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let out = iosurvey(&args);
    let what = format!("--engine {engine} {}", extra.join(" "));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{what}: a run with failed I/O should exit 1: {}",
        describe(&out)
    );
    let text = std::fs::read(&json).unwrap_or_else(|e| {
        panic!(
            "{what}: no JSON report at {} after a failed run ({e}): {}",
            json.display(),
            describe(&out)
        )
    });
    serde_json::from_slice(&text)
        .unwrap_or_else(|e| panic!("{what}: the JSON report does not parse: {e}"))
}

/// Checks the failure record and the error counts of a point; returns the
/// errno and its count.
fn check_failure(p: &Value, what: &str) -> (u64, u64) {
    let fail = &p["failure"];
    assert!(fail.is_object(), "{what}: no failure in the point: {p}");
    assert_eq!(fail["op"], "write", "{what}: {fail}");
    assert_eq!(u(&fail["stream"]), 0, "{what}: {fail}");
    let errno = u(&fail["errno"]);
    let name = fail["error"].as_str().unwrap_or_default();
    // A full backing filesystem: the loop device passes ENOSPC on (seen
    // here); other kernels may turn it into EIO.
    assert!(
        matches!((errno, name), (28, "ENOSPC") | (5, "EIO")),
        "{what}: expected ENOSPC (28) or EIO (5): {fail}"
    );
    let offset = u(&fail["offset"]);
    assert!(
        offset.is_multiple_of(MIB) && offset < SIZE,
        "{what}: offset {offset} is not one of the run's 1 MiB writes"
    );
    u(&fail["at_ns"]);

    let w = &p["total"]["write"];
    let ops = u(&w["ops"]);
    assert!(ops > 0, "{what}: the writes that succeeded were lost: {w}");
    assert!(
        ops * MIB <= ROOM,
        "{what}: more writes succeeded than fit: {w}"
    );
    assert_eq!(u(&w["bytes"]), ops * MIB, "{what}: {w}");
    let errors = w["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no total.write.errors: {w}"));
    let entry = errors
        .iter()
        .find(|e| e["errno"] == fail["errno"])
        .unwrap_or_else(|| panic!("{what}: errno {errno} not in total.write.errors: {w}"));
    assert_eq!(entry["name"], name, "{what}: {entry}");
    let count = u(&entry["count"]);
    assert!(count >= 1, "{what}: {entry}");
    eprintln!(
        "{what}: {ops} writes done, then {name} (errno {errno}) at offset {offset}, counted {count}x"
    );
    (errno, count)
}

#[test]
fn io_errors_stop_the_run_and_keep_partial_results() {
    let _lock = serial();
    need!(require_root());
    for direct_io in [true, false] {
        let full = need!(FullDev::new(direct_io));
        for engine in ["uring", "sync"] {
            let what = format!("loop direct-io={direct_io} --engine {engine}");
            let report = failing_write(&full, engine, &[]);
            let p = &report["points"][0];
            let (_, count) = check_failure(p, &what);
            // QD 1: the first failed write is the only one, and it comes
            // right after the ones that fit.
            assert_eq!(count, 1, "{what}: the run did not stop at the first error");
            let ops = u(&p["total"]["write"]["ops"]);
            assert_eq!(
                u(&p["failure"]["offset"]),
                ops * MIB,
                "{what}: the failed write is not the one after the last good one"
            );
        }
    }
}

#[test]
fn continue_on_error_counts_every_failed_write() {
    let _lock = serial();
    need!(require_root());
    for direct_io in [true, false] {
        let full = need!(FullDev::new(direct_io));
        for engine in ["uring", "sync"] {
            let what = format!("loop direct-io={direct_io} --engine {engine} --continue-on-error");
            let report = failing_write(&full, engine, &["--continue-on-error"]);
            let p = &report["points"][0];
            let (_, count) = check_failure(p, &what);
            assert!(count > 1, "{what}: only {count} failed write counted");
            let ops = u(&p["total"]["write"]["ops"]);
            assert_eq!(
                ops + count,
                SIZE / MIB,
                "{what}: every one of the 64 writes should be done or counted as failed"
            );
        }
    }
}
