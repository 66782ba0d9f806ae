//! What iosurvey writes (issue 12): every 4 KiB block unique, in every mode,
//! within a run and across runs, so that no deduplicating store can shrink
//! it; and `--compressible PCT` data that compresses by about PCT percent.
//! On loop devices and tmpfs directories the tests make (root), read back
//! after each run.

#[macro_use]
mod common;

use common::*;
use std::collections::HashSet;
use std::io::Write;

const BLOCK: usize = 4096;

/// The 4 KiB blocks of `data` that are not all zeros.
fn written_blocks(data: &[u8]) -> Vec<&[u8]> {
    data.chunks(BLOCK)
        .filter(|b| b.iter().any(|&x| x != 0))
        .collect()
}

/// Asserts that the written blocks of `data` are all different, and that
/// there are at least `min` of them.
fn assert_unique(data: &[u8], min: usize, what: &str) -> HashSet<Vec<u8>> {
    let written = written_blocks(data);
    let set: HashSet<Vec<u8>> = written.iter().map(|b| b.to_vec()).collect();
    assert!(
        written.len() >= min,
        "{what}: only {} blocks written, {min} expected",
        written.len()
    );
    assert_eq!(
        set.len(),
        written.len(),
        "{what}: {} distinct among {} written blocks",
        set.len(),
        written.len()
    );
    set
}

#[test]
fn every_block_a_run_writes_to_a_device_is_unique() {
    let _lock = serial();
    need!(require_root());
    let size = 16 * MIB;
    let blocks = (size as usize) / BLOCK;
    let cases: &[(&str, &[&str], usize)] = &[
        // The figures before: 1 unique block, then 1,024, then 33.
        ("seq 4k", &["--rw", "write", "--bs", "4k"], blocks),
        (
            "seq 1m qd4",
            &["--rw", "write", "--bs", "1m", "--qd", "4"],
            blocks,
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
            blocks / 2,
        ),
        (
            "sync 4k",
            &["--rw", "write", "--bs", "4k", "--engine", "sync"],
            blocks,
        ),
        // A write that starts in the middle of a block stamps both halves.
        (
            "seq 6k at 2k",
            &["--rw", "write", "--bs", "6k", "--offset", "2k"],
            // Less the tail no whole 6 KiB write fits in.
            blocks - 2,
        ),
    ];
    for (what, args, min) in cases {
        let l = need!(LoopDev::blank(size, &["--direct-io=on"]));
        let dev = path_str(l.path());
        let mut all = vec!["--allow-destroy", dev];
        all.extend_from_slice(args);
        run_point(&all);
        assert_unique(&read_device(l.path()), *min, what);
    }
}

#[test]
fn two_runs_never_write_the_same_block() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::blank(4 * MIB, &["--direct-io=on"]));
    let dev = path_str(l.path());
    let args = ["--rw", "write", "--bs", "64k", "--allow-destroy", dev];
    run_point(&args);
    let first = assert_unique(&read_device(l.path()), 1024, "first run");
    run_point(&args);
    let second = assert_unique(&read_device(l.path()), 1024, "second run");
    assert!(
        first.is_disjoint(&second),
        "the same settings and seed wrote a block both times"
    );
}

#[test]
fn parallel_dd_and_a_laid_out_test_file_are_unique_too() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::blank(8 * MIB, &["--direct-io=on"]));
    let out = iosurvey(&[
        "parallel",
        "--write",
        "--bs",
        "1m",
        "--allow-destroy",
        "--quiet",
        path_str(l.path()),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_unique(&read_device(l.path()), 2048, "parallel --write");

    // A test file iosurvey lays out before a read run (it repeated every
    // 4 MiB: 1,027 unique blocks in 16 MiB).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("laid-out");
    let f = path_str(&file);
    run_point(&["--size", "16m", "--rw", "read", "--bs", "1m", "--keep", f]);
    let data = std::fs::read(&file).unwrap();
    assert_unique(&data, 4096, "layout");
}

#[test]
fn video_frames_are_unique() {
    let _lock = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&[
        "video",
        path_str(dir.path()),
        "--write",
        "--format",
        "dpx-2k",
        "--frames",
        "4",
        "--keep",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let mut data = Vec::new();
    for e in std::fs::read_dir(dir.path().join("iosurvey-frames")).unwrap() {
        data.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    assert_unique(&data, 4 * 3000, "video frames");
}

/// Deflate's output size over the input size.
fn deflated_ratio(data: &[u8]) -> f64 {
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(data).unwrap();
    z.finish().unwrap().len() as f64 / data.len() as f64
}

#[test]
fn compressible_data_shrinks_by_about_the_percent_asked_and_is_recorded() {
    let _lock = serial();
    need!(require_root());
    let size = 8 * MIB;
    for pct in [0u32, 30, 70, 100] {
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
        assert_eq!(p["settings"]["unique_blocks"], true);
        let data = read_device(l.path());
        let want = 1.0 - f64::from(pct) / 100.0;
        let got = deflated_ratio(&data);
        assert!(
            (got - want).abs() < 0.06,
            "--compressible {pct}: deflate kept {got:.3} of the data, about {want:.2} expected"
        );
        // Compressible or not, no block repeats.
        assert_unique(&data, (size as usize) / BLOCK, "compressible");
    }
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
