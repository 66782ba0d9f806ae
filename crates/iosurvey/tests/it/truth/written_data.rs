//! What iosurvey writes (issues 12 and 27): in every mode that writes,
//! every 512-byte sector is unique, within a run and across runs, holds no
//! run of repeated bytes, and no 128 KiB record of it shrinks by 1% under
//! zlib level 1, lz4 or zstd level 1; btrfs with `compress-force=zstd`
//! stores it whole. `--compressible PCT` data shrinks by PCT percent under
//! the same compressors. Read back from loop devices and files after each
//! run (root for the devices).

use crate::common::*;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

const SECTOR: usize = 512;
const RECORD: usize = 128 << 10;

fn zlib1(d: &[u8]) -> usize {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
    z.write_all(d).unwrap();
    z.finish().unwrap().len()
}

fn lz4(d: &[u8]) -> usize {
    lz4_flex::block::compress(d).len()
}

fn zstd1(d: &[u8]) -> usize {
    zstd::bulk::compress(d, 1).unwrap().len()
}

type Compressor = fn(&[u8]) -> usize;
const COMPRESSORS: [(&str, Compressor); 3] = [("zlib -1", zlib1), ("lz4", lz4), ("zstd -1", zstd1)];

/// The longest run of one byte value in `s`.
fn longest_run(s: &[u8]) -> usize {
    let (mut best, mut cur) = (1, 1);
    for w in s.windows(2) {
        cur = if w[0] == w[1] { cur + 1 } else { 1 };
        best = best.max(cur);
    }
    best
}

/// Asserts what every written sector of `data` (those not all zeros, in
/// order) must be: at least `min` of them, all distinct, none with a run of
/// 8 equal bytes, and no 128 KiB record of them that a compressor shrinks
/// by 1%. Returns the set of sectors.
fn assert_truthful(data: &[u8], min: usize, what: &str) -> HashSet<Vec<u8>> {
    let written: Vec<&[u8]> = data
        .chunks(SECTOR)
        .filter(|s| s.iter().any(|&b| b != 0))
        .collect();
    assert!(
        written.len() >= min,
        "{what}: only {} sectors written, {min} expected",
        written.len()
    );
    let set: HashSet<Vec<u8>> = written.iter().map(|s| s.to_vec()).collect();
    assert_eq!(
        set.len(),
        written.len(),
        "{what}: {} distinct among {} written sectors",
        set.len(),
        written.len()
    );
    for (i, s) in written.iter().enumerate() {
        assert!(
            longest_run(s) < 8,
            "{what}: sector {i} has a run of {}",
            longest_run(s)
        );
    }
    let joined: Vec<u8> = written.concat();
    for (r, record) in joined.chunks_exact(RECORD).enumerate() {
        for (name, c) in COMPRESSORS {
            let n = c(record);
            assert!(
                n * 100 >= RECORD * 99,
                "{what}: {name} shrank 128 KiB record {r} to {n} bytes"
            );
        }
    }
    set
}

/// What each compressor keeps of `data`, as a share of it.
fn kept_shares(data: &[u8]) -> Vec<(&'static str, f64)> {
    COMPRESSORS
        .iter()
        .map(|&(name, c)| {
            let n: usize = data.chunks(RECORD).map(c).sum();
            (name, n as f64 / data.len() as f64)
        })
        .collect()
}

fn run_ok(args: &[&str]) -> String {
    let out = iosurvey(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_sector_a_run_writes_to_a_device_is_unique_and_incompressible() {
    let _lock = serial();
    need!(require_root());
    let size = 16 * MIB;
    let sectors = (size as usize) / SECTOR;
    let cases: &[(&str, &[&str], usize)] = &[
        // The figures before: 12.5% of sectors distinct, records
        // compressed to 3-4% of their size.
        ("seq 4k qd1", &["--rw", "write", "--bs", "4k"], sectors),
        (
            "seq 1m qd4",
            &["--rw", "write", "--bs", "1m", "--qd", "4"],
            sectors,
        ),
        (
            "rand 4k qd32",
            &[
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--qd",
                "32",
                "--bytes",
                "16m",
            ],
            sectors / 2,
        ),
        (
            "sync 4k",
            &["--rw", "write", "--bs", "4k", "--engine", "sync"],
            sectors,
        ),
        (
            "two workers, randrw",
            &[
                "--rw",
                "randrw",
                "--bs",
                "8k",
                "--workers",
                "2",
                "--bytes",
                "32m",
            ],
            sectors / 4,
        ),
        // A write that starts in the middle of a block.
        (
            "seq 6k at 2k",
            &["--rw", "write", "--bs", "6k", "--offset", "2k"],
            sectors - 16,
        ),
    ];
    for (what, args, min) in cases {
        let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
        let dev = path_str(l.path());
        let mut all = vec!["--allow-destroy", dev];
        all.extend_from_slice(args);
        let p = run_point(&all);
        assert_eq!(p["settings"]["unique_sectors"], true, "{what}");
        assert_truthful(&read_device(l.path()), *min, what);
    }
}

#[test]
fn a_laid_out_file_and_small_writes_over_it_are_unique_and_incompressible() {
    let dir = tempfile::tempdir().unwrap();
    // Laid out before a read run.
    let laid = dir.path().join("laid-out");
    run_point(&[
        "--size",
        "16m",
        "--rw",
        "read",
        "--bs",
        "1m",
        "--keep",
        path_str(&laid),
    ]);
    let data = std::fs::read(&laid).unwrap();
    assert_truthful(&data, data.len() / SECTOR, "layout");
    // 4 KiB writes at QD 1 over it, twice the file: the worst case
    // (3-4% per record under every compressor).
    let f = dir.path().join("small-writes");
    run_point(&[
        "--size",
        "16m",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--bytes",
        "32m",
        "--keep",
        path_str(&f),
    ]);
    let data = std::fs::read(&f).unwrap();
    assert_truthful(&data, data.len() / SECTOR, "4k QD1 random writes");
}

#[test]
fn quick_writes_unique_incompressible_data() {
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&[
        "quick",
        path_str(dir.path()),
        "--size",
        "16m",
        "--time",
        "300ms",
        "--ramp",
        "0s",
        "--keep",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "the kept test file: {files:?}");
    let data = std::fs::read(&files[0]).unwrap();
    assert_truthful(&data, data.len() / SECTOR, "quick");
}

#[test]
fn video_frames_and_streams_are_unique_and_incompressible() {
    let _lock = serial();
    let dir = tempfile::tempdir().unwrap();
    run_ok(&[
        "video",
        path_str(dir.path()),
        "--write",
        "--format",
        "dpx-2k",
        "--frames",
        "3",
        "--keep",
        "--quiet",
    ]);
    let mut data = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("iosurvey-frames"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for n in names {
        data.extend(std::fs::read(n).unwrap());
    }
    assert_truthful(&data, data.len() / SECTOR, "video frames");

    need!(require_root());
    let l = need!(LoopDev::blank(16 * MIB, &["--direct-io=on"]));
    run_ok(&[
        "video",
        path_str(l.path()),
        "--write",
        "--mode",
        "stream",
        "--frame-size",
        "1m",
        "--frames",
        "16",
        "--allow-destroy",
        "--quiet",
    ]);
    let data = read_device(l.path());
    assert_truthful(&data, data.len() / SECTOR, "video stream");
}

#[test]
fn survey_matrix_parallel_and_diskperf_write_unique_incompressible_data() {
    let _lock = serial();
    need!(require_root());
    let size = 16 * MIB;
    let sectors = (size as usize) / SECTOR;

    let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
    run_ok(&[
        "survey",
        path_str(l.path()),
        "--size",
        "8m",
        // 4 KiB records through a few buffers: each buffer is written
        // hundreds of times.
        "--rszlo",
        "4k",
        "--rszhi",
        "4k",
        "--crghi",
        "4",
        "--thrhi",
        "8",
        "--actions",
        "write",
        "--allow-destroy",
        "-q",
    ]);
    assert_truthful(&read_device(l.path()), sectors / 2, "survey");

    let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args([
            "matrix",
            path_str(l.path()),
            "--run",
            "advanced",
            "--matrix",
            "point",
            "--num-small",
            "8",
            "--num-large",
            "0",
            "--write-pct",
            "100",
            "--time",
            "1s",
            "--num-disks",
            "1",
            "--allow-destroy",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_truthful(&read_device(l.path()), sectors / 4, "matrix");

    let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
    run_ok(&[
        "parallel",
        "--write",
        "--bs",
        "1m",
        "--allow-destroy",
        "--quiet",
        path_str(l.path()),
    ]);
    assert_truthful(&read_device(l.path()), sectors, "parallel --write");

    // diskperf's write sweep: forward, backward and random at each size.
    let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
    run_ok(&[
        "diskperf",
        path_str(l.path()),
        "--write",
        "--allow-destroy",
        "--min",
        "4k",
        "--max",
        "64k",
        "--time",
        "200ms",
        "--quiet",
    ]);
    assert_truthful(&read_device(l.path()), sectors / 4, "diskperf --write");
}

#[test]
fn verified_writes_stay_unique_and_incompressible_under_their_headers() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::blank(8 * MIB, &["--direct-io=on"]));
    let state = tempfile::tempdir().unwrap();
    run_point(&[
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--bytes",
        "16m",
        "--verify",
        "--verify-state",
        path_str(state.path()),
        "--allow-destroy",
        path_str(l.path()),
    ]);
    let data = read_device(l.path());
    // The 64-byte verify header of each 4 KiB block holds a run of up to 9
    // zero bytes (its version's high byte, flags, target 0, the low byte
    // of a 4 KiB offset): every check of assert_truthful but that one.
    let written: Vec<&[u8]> = data
        .chunks(SECTOR)
        .filter(|s| s.iter().any(|&b| b != 0))
        .collect();
    assert!(written.len() >= (8 * MIB as usize) / SECTOR / 2);
    let set: HashSet<&[u8]> = written.iter().copied().collect();
    assert_eq!(set.len(), written.len(), "verified sectors repeat");
    let joined = written.concat();
    for record in joined.chunks_exact(RECORD) {
        for (name, c) in COMPRESSORS {
            let n = c(record);
            assert!(n * 100 >= RECORD * 99, "verified data: {name} kept {n}");
        }
    }
}

#[test]
fn two_runs_with_the_same_seed_never_write_the_same_sector() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::blank(4 * MIB, &["--direct-io=on"]));
    let dev = path_str(l.path());
    let args = ["--rw", "write", "--bs", "64k", "--allow-destroy", dev];
    let a = run_point(&args);
    let first = assert_truthful(&read_device(l.path()), 8192, "first run");
    let b = run_point(&args);
    let second = assert_truthful(&read_device(l.path()), 8192, "second run");
    assert_eq!(a["settings"]["seed"], b["settings"]["seed"]);
    let (na, nb) = (&a["settings"]["data_nonce"], &b["settings"]["data_nonce"]);
    assert!(
        na.as_str().is_some_and(|s| s.len() == 16) && na != nb,
        "each run records its own nonce: {na} {nb}"
    );
    let common = first.intersection(&second).count();
    assert_eq!(
        common, 0,
        "the same settings and seed wrote {common} sectors both times"
    );
}

#[test]
fn compressible_data_shrinks_by_the_percent_asked_under_every_compressor() {
    let _lock = serial();
    need!(require_root());
    let size = 8 * MIB;
    for pct in [0u32, 30, 70, 99, 100] {
        let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
        let dev = path_str(l.path());
        let p = run_point(&[
            "--rw",
            "write",
            "--bs",
            "128k",
            "--compressible",
            &pct.to_string(),
            "--allow-destroy",
            dev,
        ]);
        assert_eq!(p["settings"]["compressible_pct"], pct, "{}", p["settings"]);
        let data = read_device(l.path());
        // Every sector keeps its first 16 bytes generated (unique).
        let want = (1.0 - f64::from(pct) / 100.0).max(16.0 / 512.0);
        for (name, got) in kept_shares(&data) {
            // The compressors' own framing: lz4 spends about 5 bytes on
            // each sector's zeros.
            let slack = 0.02;
            assert!(
                (got - want).abs() <= slack,
                "--compressible {pct}: {name} kept {got:.4} of the data, {want:.2} asked"
            );
        }
        assert_eq!(p["settings"]["unique_sectors"], true);
        // Compressible or not, no sector repeats, and none is all zeros.
        let written = data.chunks(SECTOR).filter(|s| s.iter().any(|&b| b != 0));
        let all: Vec<&[u8]> = written.collect();
        let set: HashSet<&[u8]> = all.iter().copied().collect();
        assert_eq!(set.len(), all.len(), "--compressible {pct}");
        assert_eq!(all.len(), (size as usize) / SECTOR, "--compressible {pct}");
    }
}

/// `compsize -b FILE`: (bytes on disk, bytes uncompressed) of its TOTAL row.
fn compsize(file: &Path) -> (u64, u64) {
    let out = must("compsize", &["-b", path_str(file)]);
    let total = out
        .lines()
        .find(|l| l.starts_with("TOTAL"))
        .unwrap_or_else(|| panic!("no TOTAL row in compsize's output:\n{out}"));
    let f: Vec<u64> = total
        .split_whitespace()
        .skip(2)
        .map(|x| x.parse().unwrap())
        .collect();
    (f[0], f[1])
}

#[test]
fn btrfs_with_forced_zstd_compression_stores_every_byte() {
    let _lock = serial();
    need!(require_root_and(&["mkfs.btrfs", "compsize"]));
    let l = need!(LoopDev::blank(512 * MIB, &[]));
    must("mkfs.btrfs", &["-q", "-f", path_str(l.path())]);
    let m = need!(Mount::new(
        path_str(l.path()),
        &["-o", "compress-force=zstd"]
    ));
    let stored = |name: &str, extra: &[&str]| {
        let f = m.path().join(name);
        // Buffered 4 KiB writes: the page cache hands btrfs whole 128 KiB
        // records of them to compress (O_DIRECT writes of 4 KiB are
        // extents too small to compress).
        let mut args = vec![
            "--size",
            "64m",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--buffered",
            "--keep",
        ];
        args.extend_from_slice(extra);
        args.push(path_str(&f));
        run_point(&args);
        must("sync", &[]);
        let (disk, raw) = compsize(&f);
        assert!(raw >= 64 * MIB, "{name}: compsize saw {raw} bytes");
        disk as f64 / raw as f64
    };
    // The figure before: a 256 MiB file stored in 16 MiB (6%).
    let full = stored("incompressible", &[]);
    assert!(full >= 0.99, "btrfs stored {full:.4} of iosurvey's data");
    // The same file system does compress what can be: the check is real.
    let half = stored("half", &["--compressible", "50"]);
    assert!(
        (0.4..0.65).contains(&half),
        "--compressible 50: btrfs stored {half:.4}"
    );
}

#[test]
fn a_compressible_percent_out_of_range_is_refused() {
    for bad in ["101", "-1", "x"] {
        let out = iosurvey(&["run", "/dev/null", "--rw", "read", "--compressible", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", describe(&out));
        let err = stderr_of(&out);
        assert!(err.contains("--compressible"), "{bad}: {err}");
    }
}
