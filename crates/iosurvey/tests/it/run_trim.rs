//! `run --rw trim|randtrim` and `--trim PCT`: discards on zram devices the
//! tests make (as root) and remove, counted as their own direction and
//! proved to reach the device; and every target that takes no discards
//! (a regular file, a test file, a directory, a device whose queue does
//! not discard) refused in one line, exit 2, with nothing created.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// `iosurvey run ARGS --output json --quiet`: the whole report, checked
/// against the schema.
fn report(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json", "--quiet"]);
    let r = report_of(&iosurvey(&all));
    assert_valid(&r);
    r
}

/// Asserts a refusal in one line (exit 2) that contains every needle.
fn refused_in_one_line(out: &std::process::Output, needles: &[&str]) {
    assert_refused(out, needles);
    let err = stderr_of(out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
}

/// The device written whole with 1 MiB writes: no block of it is zeros.
fn fill(dev: &str) {
    let p = run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    assert!(u(&p["total"]["write"]["ops"]) > 0);
}

/// Asserts that device `dev` (filled, then trimmed over its first `cut`
/// bytes) reads back zeros in every 4 KiB block of them, and data in the
/// `cut` bytes after them.
fn assert_discarded_up_to(dev: &Path, cut: u64) {
    let data = read_device(dev);
    let cut = cut as usize;
    let kept: Vec<usize> = data[..cut]
        .chunks(4096)
        .enumerate()
        .filter(|(_, b)| b.iter().any(|&x| x != 0))
        .map(|(i, _)| i)
        .collect();
    assert!(kept.is_empty(), "blocks not discarded: {kept:?}");
    assert!(
        data[cut..2 * cut].iter().any(|&b| b != 0),
        "past --size was trimmed"
    );
}

#[test]
fn trim_discards_each_block_of_its_size_and_the_region_reads_back_zeros() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    fill(dev);
    let r = report(&[
        "--rw",
        "trim",
        "--bs",
        "4k",
        "--size",
        "4m",
        "--allow-destroy",
        dev,
    ]);
    let p = &r["points"][0];
    // One pass over 4 MiB of 4 KiB blocks: 1024 discards, nothing else.
    assert_eq!(u(&p["total"]["trim"]["ops"]), 1024, "{}", p["total"]);
    assert_eq!(u(&p["total"]["trim"]["bytes"]), 4 * MIB);
    assert_eq!(
        u(&p["total"]["read"]["ops"]) + u(&p["total"]["write"]["ops"]),
        0
    );
    let s = &p["streams"][0];
    assert_eq!(s["rw"], "trim");
    assert_eq!(s["trim_pct"], 100);
    assert!(s.get("read").is_none() && s.get("write").is_none(), "{s}");
    let lat = &s["trim"]["latency"];
    assert!(u(&lat["min_ns"]) > 0 && u(&lat["max_ns"]) >= u(&lat["min_ns"]));
    // The discards reached the device: the region reads back as zeros,
    // and what follows it still holds the data written.
    assert_discarded_up_to(z.path(), 4 * MIB);
}

#[test]
fn randtrim_on_the_sync_engine_counts_one_discard_per_block_of_its_budget() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    fill(dev);
    let r = report(&[
        "--rw",
        "randtrim",
        "--bs",
        "8k",
        "--bytes",
        "2m",
        "--engine",
        "sync",
        "--allow-destroy",
        dev,
    ]);
    let p = &r["points"][0];
    assert_eq!(u(&p["total"]["trim"]["ops"]), 256, "{}", p["total"]);
    assert_eq!(u(&p["total"]["trim"]["bytes"]), 2 * MIB);
    assert_eq!(p["streams"][0]["pattern"], "random");
    // Text output: a trim line beside the others.
    let out = iosurvey(&[
        "run",
        "--rw",
        "randtrim",
        "--bs",
        "4k",
        "--bytes",
        "1m",
        "--allow-destroy",
        dev,
    ]);
    let text = stdout_ok(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("  trim ") && l.contains(" 256 ops ")),
        "{text}"
    );
}

#[test]
fn a_trim_share_splits_the_budget_three_ways_and_counts_each_apart() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    fill(dev);
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.jsonl");
    let csv = dir.path().join("r.csv");
    let r = report(&[
        "--live",
        path_str(&live),
        "--csv",
        path_str(&csv),
        "--rw",
        "randrw",
        "--mix",
        "70",
        "--trim",
        "10",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--bytes",
        "8m",
        "--allow-destroy",
        dev,
    ]);
    let p = &r["points"][0];
    let ops = |c: &str| u(&p["total"][c]["ops"]);
    let (reads, writes, trims) = (ops("read"), ops("write"), ops("trim"));
    assert_eq!(reads + writes + trims, 2048, "{}", p["total"]);
    // 10% discards, 63% reads, 27% writes (within a few percent).
    assert!((120..300).contains(&trims), "{trims} trims");
    assert!((1150..1450).contains(&reads), "{reads} reads");
    assert!((420..700).contains(&writes), "{writes} writes");
    assert_eq!(u(&p["total"]["trim"]["bytes"]), trims * 4096);
    let s = &p["streams"][0];
    assert_eq!(
        (s["rw"].as_str(), u(&s["trim_pct"]), u(&s["read_pct"])),
        (Some("mixed"), 10, 70)
    );
    assert!(
        p["label"].as_str().unwrap().contains("trim=10%"),
        "{}",
        p["label"]
    );
    // The --live lines of the discards add up to their total.
    let lines = std::fs::read_to_string(&live).unwrap();
    let live_trims: u64 = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["dir"] == "trim")
        .map(|v| u(&v["ops"]))
        .sum();
    assert_eq!(live_trims, trims, "{lines}");
    // A CSV row of its own.
    let csv = std::fs::read_to_string(&csv).unwrap();
    let row = csv
        .lines()
        .find(|l| l.contains(",trim,"))
        .expect("a trim row");
    assert!(
        row.contains(&format!(",{trims},{},", trims * 4096)),
        "{row}"
    );
}

#[test]
fn a_fio_job_of_randtrim_runs_on_a_device() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    let dir = tempfile::tempdir().unwrap();
    let job = format!("[t]\nfilename={dev}\nrw=randtrim\nbs=4k\nsize=1m\ndirect=1\n");
    std::fs::write(dir.path().join("t.fio"), job).unwrap();
    let out = iosurvey_cmd(&[
        "run",
        "--fio",
        "t.fio",
        "--allow-destroy",
        "--output",
        "json",
        "--quiet",
    ])
    .current_dir(dir.path())
    .output();
    let r = report_of(&out);
    assert_valid(&r);
    let p = &r["points"][0];
    assert_eq!(u(&p["total"]["trim"]["ops"]), 256, "{}", p["total"]);
    assert_eq!(p["streams"][0]["rw"], "trim");
    assert_eq!(p["streams"][0]["pattern"], "random");
}

#[test]
fn a_split_trim_pass_discards_each_block_of_its_area_once() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    fill(dev);
    let r = report(&[
        "--rw",
        "trim",
        "--bs",
        "4k:50,64k:50",
        "--size",
        "4m",
        "--qd",
        "4",
        "--allow-destroy",
        dev,
    ]);
    let p = &r["points"][0];
    // One pass: the sizes tile the 4 MiB, none past it, none twice.
    assert_eq!(u(&p["total"]["trim"]["bytes"]), 4 * MIB, "{}", p["total"]);
    assert_discarded_up_to(z.path(), 4 * MIB);
}

#[test]
fn discards_off_the_logical_blocks_are_refused_before_any_io_buffered_or_not() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    fill(dev);
    let before = read_device(z.path());
    // zram's logical blocks are 4 KiB: the kernel refuses a 6 KiB discard
    // with EINVAL, and the run must not get that far.
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--rw", "trim", "--bs", "6k", "--buffered"],
            &["I/Os of 6144 bytes", "logical block size 4096", "discards"],
        ),
        (
            &["--rw", "trim", "--bs", "6k"],
            &["I/Os of 6144 bytes", "logical block size 4096", "discards"],
        ),
        (
            &["--rw", "trim", "--bs", "4k:50,6k:50", "--buffered"],
            &["--bs 4k:50,6k:50: 6k is not a multiple of the logical block size 4096"],
        ),
        (
            &["--rw", "randrw", "--trim", "10", "--bs", "6k", "--buffered"],
            &["I/Os of 6144 bytes", "discards"],
        ),
    ];
    for (args, needles) in cases {
        let mut all = vec!["run", "--bytes", "6m", "--allow-destroy", dev];
        all.extend_from_slice(args);
        let out = iosurvey(&all);
        refused_in_one_line(&out, needles);
        assert!(!stderr_of(&out).contains("--buffered"), "{args:?}");
    }
    assert!(
        read_device(z.path()) == before,
        "a refused run changed the device"
    );
}

#[test]
fn a_device_whose_queue_does_not_discard_is_refused() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    let name = z.path().file_name().unwrap().to_str().unwrap().to_string();
    let knob = Path::new("/sys/block")
        .join(&name)
        .join("queue/discard_max_bytes");
    need!(std::fs::write(&knob, "0").map_err(|e| format!("cannot turn discard off on {name}: {e}")));
    let out = iosurvey(&[
        "run",
        "--rw",
        "randtrim",
        "--bs",
        "4k",
        "--allow-destroy",
        dev,
    ]);
    refused_in_one_line(&out, &[dev, "does not support discard"]);
    // Reads and writes still run there.
    let p = run_point(&[
        "--rw",
        "write",
        "--bs",
        "1m",
        "--bytes",
        "1m",
        "--allow-destroy",
        dev,
    ]);
    assert_eq!(u(&p["total"]["write"]["ops"]), 1);
}

#[test]
fn files_and_directories_are_refused_with_nothing_created_or_changed() {
    let dir = tempfile::tempdir().unwrap();
    // A test file to create: refused before it exists.
    let new = dir.path().join("t.dat");
    let out = iosurvey(&["run", path_str(&new), "--size", "1m", "--rw", "trim"]);
    refused_in_one_line(&out, &[path_str(&new), "refusing discards", "block device"]);
    assert!(!new.exists(), "the refused run created its test file");
    // An existing file, even offered: refused, left as it was.
    let old = dir.path().join("old.dat");
    std::fs::write(&old, vec![7u8; 1 << 20]).unwrap();
    for args in [
        &["--rw", "randtrim"][..],
        &["--rw", "randrw", "--trim", "10"][..],
    ] {
        let mut all = vec!["run", path_str(&old), "--bs", "4k", "--allow-destroy"];
        all.extend_from_slice(args);
        let out = iosurvey(&all);
        refused_in_one_line(&out, &[path_str(&old), "regular file takes no discards"]);
    }
    assert!(std::fs::read(&old).unwrap().iter().all(|&b| b == 7));
    // A directory: no test file made in it.
    let out = iosurvey(&["run", path_str(dir.path()), "--size", "1m", "--rw", "trim"]);
    refused_in_one_line(&out, &["refusing discards"]);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "only old.dat: {names:?}");
}

#[test]
fn verify_and_out_of_range_shares_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let t = path_str(&f);
    let out = iosurvey(&["run", t, "--size", "1m", "--rw", "trim", "--verify"]);
    refused_in_one_line(&out, &["--verify does not take discards"]);
    for pct in ["0", "101"] {
        let out = iosurvey(&["run", t, "--size", "1m", "--rw", "randrw", "--trim", pct]);
        refused_in_one_line(
            &out,
            &[&format!("--trim {pct} is out of range"), "1 to 100"],
        );
    }
    let out = iosurvey(&["run", t, "--size", "1m", "--rw", "randtrim", "--trim", "5"]);
    refused_in_one_line(&out, &["--rw randtrim is all discards already"]);
    assert!(!f.exists());
}
