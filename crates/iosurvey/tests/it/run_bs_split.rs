//! `run --bs 4k:70,64k:30`: each I/O's size drawn by weight (fio's
//! bssplit), sequential and random, reads and writes; the sizes counted
//! in the JSON match the split asked for; bad splits refused.

use crate::common::{assert_valid, iosurvey};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The report of `iosurvey run FILE --size 8m ARGS --output json`, which
/// must succeed and match the schema.
fn run(file: &Path, args: &[&str]) -> Value {
    let mut a = vec![
        "run",
        s(file),
        "--size",
        "8m",
        "--quiet",
        "--output",
        "json",
    ];
    a.extend_from_slice(args);
    let out = iosurvey(&a);
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&r);
    r
}

/// Each size's (bs, pct, ops) of the first point's stream.
fn sizes(r: &Value) -> Vec<(u64, u64, u64)> {
    r["points"][0]["streams"][0]["bs_split"]
        .as_array()
        .unwrap_or_else(|| panic!("no bs_split: {r}"))
        .iter()
        .map(|x| (u(&x["bs"]), u(&x["pct"]), u(&x["ops"])))
        .collect()
}

#[test]
fn the_sizes_done_are_the_split_asked_for_in_every_pattern_and_direction() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    for (rw, bytes) in [
        ("randread", "96m"),
        ("read", "96m"),
        ("backread", "64m"),
        ("randwrite", "32m"),
        ("write", "32m"),
    ] {
        let r = run(
            &f,
            &[
                "--rw",
                rw,
                "--bs",
                "4k:70,64k:30",
                "--qd",
                "4",
                "--bytes",
                bytes,
            ],
        );
        let p = &r["points"][0];
        assert_eq!(
            p["label"],
            format!("{rw} bs=4KiB:70,64KiB:30 qd=4 workers=1")
        );
        let st = &p["streams"][0];
        assert_eq!(u(&st["bs"]), 65536, "the largest size is the stream's bs");
        let got = sizes(&r);
        let done: u64 = got.iter().map(|x| x.2).sum();
        let class = if rw.contains("write") {
            "write"
        } else {
            "read"
        };
        let (ops, moved) = (u(&st[class]["ops"]), u(&st[class]["bytes"]));
        assert_eq!(done, ops, "{rw}: every I/O counted by its size");
        let by_size: u64 = got.iter().map(|x| x.0 * x.2).sum();
        assert_eq!(by_size, moved, "{rw}: the sizes add up to the bytes moved");
        assert!(done > 1000, "{rw}: enough I/Os to judge the split ({done})");
        for (bs, pct, n) in got {
            let share = n as f64 * 100.0 / done as f64;
            assert!(
                (share - pct as f64).abs() < 4.0,
                "{rw}: {bs}-byte I/Os were {share:.1}% of {done}, asked {pct}%"
            );
        }
        // A byte bound is met by whole I/Os: at most one of the largest
        // size past it.
        let asked = iosurvey_workload::units::parse_size(bytes).unwrap();
        assert!(
            moved >= asked && moved < asked + 65536,
            "{rw}: {moved} bytes"
        );
    }
    assert!(!f.exists());
}

#[test]
fn the_same_seed_draws_the_same_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    let args = |seed| {
        [
            "--rw",
            "randread",
            "--bs",
            "4k:50,8k:25,16k:25",
            "--bytes",
            "16m",
            "--seed",
            seed,
        ]
    };
    let a = sizes(&run(&f, &args("7")));
    assert_eq!(a, sizes(&run(&f, &args("7"))));
    assert_ne!(a, sizes(&run(&f, &args("8"))), "another seed, other draws");
    let pcts: Vec<u64> = a.iter().map(|x| x.1).collect();
    assert_eq!(pcts, [50, 25, 25]);
}

#[test]
fn the_text_names_the_split_and_a_sweep_of_depths_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    let j = dir.path().join("r.json");
    let out = iosurvey(&[
        "run",
        s(&f),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k:70,64k:30",
        "--bytes",
        "8m",
        "--quiet",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("run: randread bs=4KiB:70,64KiB:30 qd=1"),
        "{text}"
    );
    assert!(text.contains("bs split: 4KiB 70% asked, "), "{text}");
    assert!(text.contains("; 64KiB 30% asked, "), "{text}");
    let out = iosurvey(&[
        "run",
        s(&f),
        "--size",
        "8m",
        "--rw",
        "randread",
        "--bs",
        "4k:70,64k:30",
        "--bytes",
        "8m",
        "--qd",
        "1,4",
        "--quiet",
        "--json",
        s(&j),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_valid(&r);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, qd) in points.iter().zip([1, 4]) {
        assert_eq!(p["params"], serde_json::json!({"mode": "run", "qd": qd}));
        assert_eq!(p["streams"][0]["bs_split"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn bad_splits_are_refused_in_one_line_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("never");
    let cases: [(&[&str], &str); 8] = [
        (
            &["--bs", "4k:70,64k:20"],
            "the percents add up to 90, not 100",
        ),
        (
            &["--bs", "4k:70,64k:40"],
            "the percents add up to 110, not 100",
        ),
        (&["--bs", "4k:0,64k:100"], "a percent above 0"),
        (&["--bs", "4k:50,4096:50"], "4096 is given twice"),
        (&["--bs", "4k:70,64k"], "'64k' has no percent"),
        (&["--bs", "0:50,4k:50"], "--bs must be greater than zero"),
        (
            &["--bs", "4k:50,8k:50", "--rw", "randwrite", "--verify"],
            "--bs with a split (4KiB:50,8KiB:50) cannot go with --verify",
        ),
        (
            &["--bs", "4k:50,8k:50", "--simulate", "concat"],
            "cannot go with --simulate",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["run", s(&f), "--size", "1m"];
        a.extend_from_slice(args);
        let out = iosurvey(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!f.exists(), "{args:?} left the test file");
    }
}

/// Which 4 KiB blocks of `data` are all zeros.
fn zero_blocks(data: &[u8]) -> Vec<usize> {
    data.chunks(4096)
        .enumerate()
        .filter(|(_, b)| b.iter().all(|&x| x == 0))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_sequential_pass_with_a_split_writes_each_block_of_its_span_once() {
    // A file of zeros, 8 MiB; one pass over its first 4 MiB (no bound but
    // the pass) must write every 4 KiB block of them, and nothing twice:
    // the bytes written are the span's, exactly. It missed the last
    // blocks of each region (and wrote others twice) when a sequential
    // cursor wrapped wherever the largest size did not fit.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("zeros");
    let span = 4usize << 20;
    for extra in [
        &["--rw", "write"][..],
        &["--rw", "write", "--workers", "2", "--qd", "4"],
        &["--rw", "write", "--regions", "3", "--buffered"],
        &["--rw", "backwrite", "--qd", "2"],
    ] {
        std::fs::write(&f, vec![0u8; 2 * span]).unwrap();
        let mut a = vec![
            "run",
            s(&f),
            "--bs",
            "4k:50,64k:50",
            "--span",
            "4m",
            "--allow-destroy",
            "--quiet",
            "--output",
            "json",
        ];
        a.extend_from_slice(extra);
        let out = iosurvey(&a);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let written = u(&r["points"][0]["total"]["write"]["bytes"]);
        assert_eq!(written, span as u64, "{extra:?}: one pass, once");
        let data = std::fs::read(&f).unwrap();
        let holes = zero_blocks(&data[..span]);
        assert!(
            holes.is_empty(),
            "{extra:?}: blocks never written: {holes:?}"
        );
        assert_eq!(
            zero_blocks(&data[span..]).len(),
            span / 4096,
            "{extra:?}: written past the span"
        );
    }
}

#[test]
fn a_split_refused_for_o_direct_names_the_sizes_as_written() {
    // zram has 4 KiB logical blocks: 6k cannot go to it with O_DIRECT.
    // The refusal names 6k, not 2048 (the sizes' greatest common divisor,
    // which is what offsets step by, not an I/O size).
    let _lock = crate::common::serial();
    need!(crate::common::require_root());
    let z = need!(crate::common::Zram::new(16 << 20));
    let dev = s(z.path());
    let out = iosurvey(&[
        "run",
        dev,
        "--rw",
        "read",
        "--bs",
        "4k:50,6k:50",
        "--bytes",
        "6m",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--bs 4k:50,6k:50: 6k is not a multiple of the logical block size 4096, which O_DIRECT needs; give sizes that are multiples of 4096, or --buffered"),
        "{err}"
    );
    assert!(!err.contains("2048"), "{err}");
    // Buffered, or with sizes of whole blocks, it runs.
    for args in [
        &["--bs", "4k:50,6k:50", "--buffered"][..],
        &["--bs", "4k:50,8k:50"],
    ] {
        let mut a = vec!["run", dev, "--rw", "read", "--bytes", "8m", "--quiet"];
        a.extend_from_slice(args);
        let out = iosurvey(&a);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
