//! What backs a target: memory_backed (loop devices judged by their
//! backing), the seek floor and the class ceiling of rotational devices,
//! and a warning of many diskperf rows printed once.

use super::*;

#[test]
fn memory_backed_targets_are_named_and_a_disk_backed_one_is_not() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(32 * MIB));
    let dev = path_str(z.path());
    run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    let p = run_point(&["--rw", "randread", "--bs", "4k", "--time", "1s", dev]);
    assert!(has(&p, "memory_backed"), "{}", p["warnings"]);
    assert_eq!(p["targets"][0]["memory_backed"], "zram");

    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = shm.path().join("t");
    let p = run_point(&["--size", "8m", "--rw", "read", "--bs", "1m", path_str(&f)]);
    assert_eq!(
        p["targets"][0]["memory_backed"], "tmpfs",
        "{}",
        p["targets"]
    );

    let l = need!(LoopDev::new(8 * MIB, 1));
    let p = run_point(&["--rw", "read", "--bs", "1m", path_str(l.path())]);
    assert!(
        has(&p, "memory_backed"),
        "a loop over /dev/shm: {}",
        p["warnings"]
    );

    let d = need!(DiskLoop::new(16 * MIB, false));
    let p = run_point(&["--rw", "read", "--bs", "1m", d.path()]);
    assert!(!has(&p, "memory_backed"), "{}", p["warnings"]);
    assert!(p["targets"][0].get("memory_backed").is_none());
}

/// Issue 27: a loop device is judged by what backs it, found by identity
/// (a deleted file too), and a backing device is judged as that device,
/// not as its node on devtmpfs.
#[test]
fn loops_over_memory_are_named_by_what_backs_them() {
    let _lock = serial();
    need!(require_root());
    // A file on tmpfs, deleted once attached: only the identity finds it.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = shm.path().join("gone.img");
    std::fs::write(&file, random_bytes(8 * MIB as usize, 7)).unwrap();
    let gone = need!(LoopDev::attach(&file, &[]));
    std::fs::remove_file(&file).unwrap();
    let p = randread(path_str(gone.path()));
    assert!(has(&p, "memory_backed"), "{}", p["warnings"]);
    assert_eq!(backing(&p), "a loop device over a deleted file on tmpfs");

    // A loop over zram, and a loop over a loop over tmpfs: the devices,
    // not their nodes in /dev.
    let z = need!(Zram::new(16 * MIB));
    let over_zram = need!(LoopDev::attach(z.path(), &[]));
    run_point(&[
        "--rw",
        "write",
        "--bs",
        "1m",
        "--allow-destroy",
        path_str(over_zram.path()),
    ]);
    let p = randread(path_str(over_zram.path()));
    let over = format!("a loop device over {} (zram)", path_str(z.path()));
    assert_eq!(backing(&p), over, "{}", p["targets"]);
    let lower = need!(LoopDev::new(8 * MIB, 2));
    let upper = need!(LoopDev::attach(lower.path(), &[]));
    let p = randread(path_str(upper.path()));
    let over = format!(
        "a loop device over {} (a loop device over a file on tmpfs)",
        path_str(lower.path())
    );
    assert_eq!(backing(&p), over, "{}", p["targets"]);
}

/// Issue 27: a loop device over a file on a disk, without direct I/O, is
/// answered by the page cache: memory_backed, and no seek floor although
/// the kernel copies the disk's rotational flag to it. With direct I/O it
/// is storage.
#[test]
fn a_loop_without_direct_io_is_the_page_cache_and_one_with_it_is_not() {
    let _lock = serial();
    let plain = need!(DiskLoop::attached(16 * MIB, &[]));
    if backing(&randread(plain.path())).contains("tmpfs") {
        skip!("/var/tmp is itself in memory here");
    }
    assert_eq!(sysfs_read(plain.dev.path(), "loop/dio"), "0");
    let p = randread(plain.path());
    assert!(has(&p, "memory_backed"), "{}", p["warnings"]);
    assert!(backing(&p).contains("page-cached file"), "{}", p["targets"]);
    assert!(!has(&p, "latency_below_floor"), "{}", p["warnings"]);

    let direct = need!(DiskLoop::attached(16 * MIB, &["--direct-io=on"]));
    assert_eq!(sysfs_read(direct.dev.path(), "loop/dio"), "1");
    let p = randread(direct.path());
    assert!(!has(&p, "memory_backed"), "{}", p["warnings"]);
    assert_eq!(backing(&p), "");
}

#[test]
fn random_reads_faster_than_a_seek_on_a_rotational_device_are_flagged() {
    let _lock = serial();
    let rot = need!(DiskLoop::new(16 * MIB, true));
    let p = run_point(&["--rw", "randread", "--bs", "4k", "--time", "1s", rot.path()]);
    assert!(has(&p, "latency_below_floor"), "{}", p["warnings"]);
    // Sequential reads, or a device that is not rotational: no floor.
    let p = run_point(&["--rw", "read", "--bs", "4k", "--time", "1s", rot.path()]);
    assert!(!has(&p, "latency_below_floor"), "{}", p["warnings"]);
    let flat = need!(DiskLoop::new(16 * MIB, false));
    let p = run_point(&[
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "1s",
        flat.path(),
    ]);
    assert!(!has(&p, "latency_below_floor"), "{}", p["warnings"]);
}

/// Issue 27: diskperf prints a warning raised by many of its rows once,
/// with how many more raised it (the JSON keeps each point's own).
#[test]
fn a_warning_of_many_diskperf_rows_is_printed_once() {
    let _lock = serial();
    let rot = need!(DiskLoop::new(16 * MIB, true));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("d.json");
    let out = iosurvey(&[
        "diskperf",
        rot.path(),
        "--min",
        "4k",
        "--max",
        "64k",
        "--time",
        "200ms",
        "--json",
        path_str(&json),
    ]);
    let text = stdout_ok(&out);
    let raised = json_file(&json)["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| has(p, "latency_below_floor"))
        .count();
    assert!(raised >= 2, "random reads of 5 sizes from a disk: {text}");
    let printed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("[latency_below_floor:"))
        .collect();
    assert_eq!(printed.len(), 1, "{text}");
    let more = match raised {
        2 => "(and 1 more point)".to_string(),
        n => format!("(and {} more points)", n - 1),
    };
    assert!(printed[0].ends_with(&more), "{text}");
}

/// Issue 27: a rotational device (not memory) faster than any platters is
/// flagged, and the same device marked non-rotational is not.
#[test]
fn a_rotational_device_faster_than_platters_is_flagged() {
    let _lock = serial();
    let rot = need!(DiskLoop::new(64 * MIB, true));
    let args = [
        "--rw",
        "read",
        "--bs",
        "1m",
        "--qd",
        "8",
        "--time",
        "1s",
        rot.path(),
    ];
    let p = run_point(&args);
    let rate = f(&p["total"]["read"]["bytes_per_sec"]);
    assert_eq!(
        has(&p, "rate_above_class"),
        rate > 600e6,
        "{rate}: {}",
        p["warnings"]
    );
    if rate > 600e6 {
        let w = warning(&p, "rate_above_class");
        assert_eq!(w["evidence"]["class"], "rotational", "{w}");
    } else {
        eprintln!("note: {rate} B/s, under a disk's 600 MB/s: only the silence is tested");
    }
    let flat = sysfs_dir(rot.dev.path()).join("queue/rotational");
    std::fs::write(&flat, "0").unwrap();
    let p = run_point(&args);
    assert!(!has(&p, "rate_above_class"), "{}", p["warnings"]);
}

#[test]
fn a_file_held_in_the_page_cache_is_memory_and_the_same_file_let_go_is_not() {
    let dir = tempfile::Builder::new()
        .prefix("iosurvey-warn")
        .tempdir_in("/var/tmp")
        .unwrap();
    let file = dir.path().join("t");
    std::fs::write(&file, random_bytes(8 * MIB as usize, 5)).unwrap();
    let args = [
        "--rw",
        "read",
        "--bs",
        "1m",
        "--buffered",
        "--time",
        "1s",
        path_str(&file),
    ];
    let p = run_point(&args);
    if p["targets"][0].get("memory_backed").is_some() {
        skip!("/var/tmp is itself in memory here");
    }
    assert!(!has(&p, "memory_backed"), "{}", p["warnings"]);

    // Mapped and touched by this process: the kernel cannot drop the
    // pages, and every read of the run comes from them.
    let f = std::fs::File::open(&file).unwrap();
    let len = 8 * MIB as usize;
    // SAFETY: a fresh read-only shared mapping of a file this test made
    // and nothing else writes; it is unmapped below.
    let map = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            len,
            rustix::mm::ProtFlags::READ,
            rustix::mm::MapFlags::SHARED,
            &f,
            0,
        )
    }
    .unwrap();
    // SAFETY: the mapping is `len` bytes, readable.
    let bytes = unsafe { std::slice::from_raw_parts(map.cast::<u8>(), len) };
    let touched: u64 = bytes.iter().step_by(4096).map(|&b| u64::from(b)).sum();
    assert!(touched > 0);
    let p = run_point(&args);
    // SAFETY: `map` came from the mmap above, of `len` bytes.
    unsafe { rustix::mm::munmap(map, len) }.unwrap();
    let w = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "memory_backed")
        .unwrap_or_else(|| panic!("no memory_backed in {}", p["warnings"]));
    assert_eq!(w["evidence"]["backing"], "page cache", "{w}");
    assert_eq!(
        u(&w["evidence"]["resident_pages"]),
        u(&w["evidence"]["pages"])
    );
}

/// Issue 27: a filesystem whose files carry a device number of its own
/// (btrfs) is judged by the device its mount names: a file on btrfs on
/// zram, and a loop device over it, are memory (both were missed).
#[test]
fn a_file_on_btrfs_on_zram_is_memory_and_so_is_a_loop_over_it() {
    let _lock = serial();
    need!(require_root_and(&["mkfs.btrfs", "mount", "umount"]));
    let z = need!(Zram::new(256 * MIB));
    need!(sh("mkfs.btrfs", &["-q", "-f", path_str(z.path())]));
    let m = need!(Mount::new(path_str(z.path()), &[]));
    let file = m.path().join("t.dat");
    let p = run_point(&[
        "--size",
        "8m",
        "--rw",
        "read",
        "--bs",
        "1m",
        "--keep",
        path_str(&file),
    ]);
    assert_eq!(
        backing(&p),
        "a file on a filesystem on zram",
        "{}",
        p["targets"]
    );
    let over = need!(LoopDev::attach(&file, &["--direct-io=on"]));
    let p = randread(path_str(over.path()));
    assert_eq!(
        backing(&p),
        "a loop device over a file on a filesystem on zram",
        "{}",
        p["targets"]
    );
}
