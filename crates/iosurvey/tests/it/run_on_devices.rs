//! Tests on real block devices: loop devices over files, zram devices, and
//! an accuracy test against a device of known speed (a loop device throttled
//! by the blkio cgroup v1).
//!
//! Every test here needs root: it creates its own devices and removes them
//! again through Drop guards, also when an assertion fails. Without root, or
//! when losetup, zram or the blkio cgroup are missing, a test prints
//! "skipping: <reason>" on stderr and passes.
//!
//! The tests take one lock between them, so that a CPU-hungry zram run never
//! disturbs the throttled accuracy runs of the same test binary.

use crate::common::*;

// ---------------------------------------------------------------------------
// zram
// ---------------------------------------------------------------------------

#[test]
fn quick_on_a_device_runs_the_read_half_and_leaves_it_untouched() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(64 * MIB));
    let dev = path_str(z.path());
    let fill = run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    assert_eq!(u(&fill["total"]["write"]["bytes"]), 64 * MIB);
    let before = checksum(z.path(), None);
    let out = iosurvey(&["quick", dev, "--time", "200ms", "--ramp", "0s"]);
    assert!(out.status.success(), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the read half only"), "{err}");
    let card = String::from_utf8_lossy(&out.stdout);
    let mut lines = card.lines().skip_while(|l| !l.starts_with("RND4K Q32T1"));
    let (read, write) = (lines.next().unwrap(), lines.next().unwrap());
    // Read figures, then the write row empty.
    assert!(
        read.split_whitespace().nth(3).is_some_and(|mbs| mbs != "-"),
        "{card}"
    );
    assert!(
        write.trim_start().starts_with("Write")
            && write.split_whitespace().skip(1).all(|w| w == "-"),
        "{card}"
    );
    assert_eq!(
        checksum(z.path(), None),
        before,
        "quick wrote to the device"
    );
}

#[test]
fn size_on_an_existing_device_bounds_the_area_as_fios_size_does() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(64 * MIB));
    let dev = path_str(z.path());
    // Random 4 KiB writes for a while on a new (zeroed) device, bounded
    // to its first 4 MiB: nothing past them is written.
    let p = run_point(&[
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--size",
        "4m",
        "--time",
        "300ms",
        "--allow-destroy",
        dev,
    ]);
    assert!(u(&p["total"]["write"]["ops"]) > 1024, "{}", p["total"]);
    let data = read_device(z.path());
    let bound = (4 * MIB) as usize;
    assert!(
        data[..bound].iter().any(|&b| b != 0),
        "the area was written"
    );
    assert!(
        data[bound..].iter().all(|&b| b == 0),
        "a write landed past --size"
    );
    // One pass of reads over the bounded area, and from an offset in it.
    let p = run_point(&["--rw", "read", "--bs", "64k", "--size", "4m", dev]);
    assert_eq!(u(&p["total"]["read"]["bytes"]), 4 * MIB);
    let p = run_point(&[
        "--rw", "read", "--bs", "64k", "--size", "4m", "--offset", "1m", dev,
    ]);
    assert_eq!(u(&p["total"]["read"]["bytes"]), 3 * MIB);
    // Past the device's end: refused, never grown.
    let out = iosurvey(&["run", "--rw", "read", "--size", "128m", dev]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("never grown") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn zram_randread_reports_block_target_and_exact_bytes() {
    let _lock = serial();
    need!(require_root());
    let size = 64 * MIB;
    let z = need!(Zram::new(size));
    let dev = path_str(z.path());

    // Fill it with iosurvey's own (incompressible) write data: one pass.
    let fill = run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    assert_eq!(u(&fill["total"]["write"]["bytes"]), size, "{fill}");
    assert_eq!(u(&fill["total"]["write"]["ops"]), size / MIB, "{fill}");
    assert_eq!(u(&fill["total"]["read"]["ops"]), 0, "{fill}");

    let p = run_point(&["--rw", "randread", "--bs", "4k", "--time", "1s", dev]);
    let read = &p["total"]["read"];
    let ops = u(&read["ops"]);
    assert!(ops > 0, "no reads: {read}");
    assert_eq!(u(&read["bytes"]), ops * 4096, "{read}");
    assert_eq!(u(&p["total"]["write"]["ops"]), 0);
    assert!(f(&read["iops"]) > 0.0);

    let t = &p["targets"][0];
    assert_eq!(t["path"], dev);
    assert_eq!(t["kind"], "block");
    assert_eq!(u(&t["size_bytes"]), size);
    let lbs: u64 = sysfs_read(z.path(), "queue/logical_block_size")
        .parse()
        .unwrap();
    assert_eq!(u(&t["logical_block_size"]), lbs, "{t}");
}

/// A raid0 array of two zram devices with a stripe smaller than the I/O:
/// each 256 KiB write is cut into four 64 KiB pieces, two per member, as a
/// real RAID 0 cuts it, with O_DIRECT; a stripe the devices' logical block
/// size does not divide is refused before anything is written; and ORION's
/// command line with such a stripe runs.
#[test]
fn a_raid0_stripe_smaller_than_the_io_cuts_it_across_the_members() {
    let _lock = serial();
    need!(require_root());
    let (z1, z2) = (need!(Zram::new(4 * MIB)), need!(Zram::new(4 * MIB)));
    let (d1, d2) = (path_str(z1.path()), path_str(z2.path()));
    let p = run_point(&[
        "--simulate",
        "raid0",
        "--stripe",
        "64k",
        "--rw",
        "write",
        "--bs",
        "256k",
        "--bytes",
        "1m",
        "--allow-destroy",
        d1,
        d2,
    ]);
    let w = &p["streams"][0]["write"];
    assert_eq!((u(&w["ops"]), u(&w["bytes"])), (4, MIB), "{w}");
    assert_eq!(p["targets"][0]["direct"], true, "{}", p["targets"][0]);
    // Array bytes 0..1 MiB are stripes 0..15: the even ones on the first
    // member, the odd ones on the second, each member's first 512 KiB.
    let half = (MIB / 2) as usize;
    for dev in [z1.path(), z2.path()] {
        let data = read_device(dev);
        for (k, stripe) in data[..half].chunks(64 << 10).enumerate() {
            assert!(
                stripe.iter().any(|&b| b != 0),
                "{}: stripe {k} not written",
                dev.display()
            );
        }
        assert!(
            data[half..].iter().all(|&b| b == 0),
            "{}: written past its share",
            dev.display()
        );
    }

    // zram's logical blocks are 4 KiB: a 2 KiB stripe would cut O_DIRECT
    // I/Os at 2 KiB. Refused, and nothing written.
    let before = (checksum(z1.path(), None), checksum(z2.path(), None));
    let out = iosurvey(&[
        "run",
        "--simulate",
        "raid0",
        "--stripe",
        "2k",
        "--rw",
        "write",
        "--bs",
        "8k",
        "--allow-destroy",
        d1,
        d2,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("logical block size") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        (checksum(z1.path(), None), checksum(z2.path(), None)),
        before
    );

    // ORION: 1 MiB large reads over a 64 KB stripe.
    let dir = tempfile::tempdir().unwrap();
    let out = iosurvey(&[
        "matrix",
        "-run",
        "simple",
        "-testname",
        "striped",
        "-num_disks",
        "2",
        "-size_large",
        "1024",
        "-simulate",
        "raid0",
        "-stripe",
        "64",
        "-cache_size",
        "0",
        "-duration",
        "1",
        "--out",
        path_str(dir.path()),
        d1,
        d2,
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    let summary = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_summary.txt"))
        .expect("a summary file");
    let summary = std::fs::read_to_string(summary).unwrap();
    assert!(summary.contains("Stripe Depth: 64 KB"), "{summary}");
    let mbps: f64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("Maximum Large MBPS="))
        .and_then(|l| l.split_whitespace().next())
        .expect("a large MBPS line")
        .parse()
        .unwrap();
    assert!(mbps > 0.0, "{summary}");
    assert_eq!(
        (checksum(z1.path(), None), checksum(z2.path(), None)),
        before,
        "ORION's reads wrote"
    );
}

// ---------------------------------------------------------------------------
// Loop devices
// ---------------------------------------------------------------------------

#[test]
fn two_loop_devices_in_one_run_give_two_streams() {
    let _lock = serial();
    need!(require_root());
    let a = need!(LoopDev::new(32 * MIB, 1));
    let b = need!(LoopDev::new(32 * MIB, 2));
    let (pa, pb) = (path_str(a.path()), path_str(b.path()));

    let p = run_point(&["--rw", "read", "--bs", "1m", "--time", "2s", pa, pb]);
    let targets = p["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2, "{p}");
    assert_eq!(targets[0]["path"], pa);
    assert_eq!(targets[1]["path"], pb);
    for t in targets {
        assert_eq!(t["kind"], "block");
        assert_eq!(u(&t["size_bytes"]), 32 * MIB);
    }

    let streams = p["streams"].as_array().expect("streams");
    assert_eq!(streams.len(), 2, "{p}");
    let (mut ops, mut bytes) = (0, 0);
    for (i, s) in streams.iter().enumerate() {
        assert_eq!(u(&s["target"]), i as u64, "{s}");
        let r = &s["read"];
        assert!(u(&r["ops"]) > 0, "stream {i} did no reads: {r}");
        assert_eq!(u(&r["bytes"]), u(&r["ops"]) * MIB, "stream {i}: {r}");
        // Its writes did nothing: left out (schema 6).
        assert!(s.get("write").is_none(), "{s}");
        ops += u(&r["ops"]);
        bytes += u(&r["bytes"]);
    }
    assert_eq!(u(&p["total"]["read"]["ops"]), ops);
    assert_eq!(u(&p["total"]["read"]["bytes"]), bytes);
}

#[test]
fn writes_to_a_loop_device_need_allow_destroy() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::new(16 * MIB, 3));
    let dev = path_str(l.path());
    let before = read_device(l.path());
    assert_eq!(before.len() as u64, l.size);

    for rw in ["write", "randwrite", "backwrite", "randrw"] {
        let out = iosurvey(&["run", dev, "--rw", rw, "--bs", "64k", "--time", "1s"]);
        assert_eq!(out.status.code(), Some(2), "--rw {rw}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--allow-destroy"),
            "--rw {rw}: the refusal should name --allow-destroy: {err}"
        );
    }
    // --readonly wins over --allow-destroy.
    let out = iosurvey(&[
        "run",
        dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--time",
        "1s",
        "--allow-destroy",
        "--readonly",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        read_device(l.path()) == before,
        "a refused write changed the device"
    );

    let p = run_point(&[
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--allow-destroy",
        dev,
    ]);
    assert_eq!(u(&p["total"]["write"]["ops"]), 16, "{p}");
    assert_eq!(u(&p["total"]["write"]["bytes"]), MIB, "{p}");
    let after = read_device(l.path());
    let m = MIB as usize;
    assert!(
        after[..m] != before[..m],
        "the write did not reach the device"
    );
    assert!(
        after[m..] == before[m..],
        "a 1 MiB sequential write changed bytes beyond the first MiB"
    );
}

#[test]
fn backward_and_mixed_workloads_on_a_loop_device() {
    let _lock = serial();
    need!(require_root());
    let l = need!(LoopDev::new(16 * MIB, 4));
    let dev = path_str(l.path());
    let m = MIB as usize;

    // backread: exactly 4 MiB in 64 KiB reads.
    let p = run_point(&["--rw", "backread", "--bs", "64k", "--bytes", "4m", dev]);
    assert_eq!(u(&p["total"]["read"]["ops"]), 64, "{p}");
    assert_eq!(u(&p["total"]["read"]["bytes"]), 4 * MIB, "{p}");
    assert_eq!(u(&p["total"]["write"]["ops"]), 0, "{p}");

    // backwrite starts at the end of the device: 1 MiB of it changes the
    // last MiB and nothing else.
    let before = read_device(l.path());
    let p = run_point(&[
        "--rw",
        "backwrite",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--allow-destroy",
        dev,
    ]);
    assert_eq!(u(&p["total"]["write"]["ops"]), 16, "{p}");
    assert_eq!(u(&p["total"]["write"]["bytes"]), MIB, "{p}");
    assert_eq!(u(&p["total"]["read"]["ops"]), 0, "{p}");
    let after = read_device(l.path());
    let tail = before.len() - m;
    assert!(
        after[tail..] != before[tail..],
        "backwrite left the last MiB"
    );
    assert!(
        after[..tail] == before[..tail],
        "backwrite of 1 MiB changed bytes before the last MiB"
    );

    // randrw --mix 70: both kinds, reads about 70% of the ops.
    let total_ops = 4096;
    let p = run_point(&[
        "--rw",
        "randrw",
        "--mix",
        "70",
        "--bs",
        "4k",
        "--bytes",
        "16m",
        "--seed",
        "7",
        "--allow-destroy",
        dev,
    ]);
    let (r, w) = (&p["total"]["read"], &p["total"]["write"]);
    let (rops, wops) = (u(&r["ops"]), u(&w["ops"]));
    assert!(
        rops > 0 && wops > 0,
        "randrw needs both: {rops} reads, {wops} writes"
    );
    assert_eq!(rops + wops, total_ops, "{p}");
    assert_eq!(u(&r["bytes"]), rops * 4096);
    assert_eq!(u(&w["bytes"]), wops * 4096);
    let share = 100.0 * rops as f64 / (rops + wops) as f64;
    assert!(
        (60.0..=80.0).contains(&share),
        "--mix 70 gave {share:.1}% reads ({rops} reads, {wops} writes)"
    );
    let s = &p["streams"][0];
    assert_eq!(u(&s["read_pct"]), 70, "{s}");
}

// ---------------------------------------------------------------------------
// Accuracy against a throttled device
// ---------------------------------------------------------------------------
//
// blk-throttle (cgroup v1) hands out its budget in 100 ms slices: a throttled
// reader gets one slice's worth of I/O at once, then waits for the next
// slice. Two consequences for a 4 s measurement:
//
// * At the start of a fresh group the first slice's worth completes at once
//   (5 MiB at 50 MiB/s). `--ramp 1s` keeps that burst, and any other start-up
//   transient, out of the measured phase.
// * The one I/O issued just before the deadline waits for the next slice and
//   its completion ends the measured time: about one I/O in ~4.09 s, so the
//   figures come out about 2% under the limit (measured: 48.9 MiB/s and
//   979 IOPS for limits of 50 MiB/s and 1000 IOPS). That is well inside 5%.
//
// A CPU-starved machine can make the throttle itself deliver less than its
// limit (slices whose budget nobody used are lost): the device then really
// is slower, and iosurvey correctly measures less. So a run is repeated up to
// three times; one run must land within 5% of the limit, and no run may
// exceed the limit by more than 5% (which no amount of noise can cause).

const BPS_LIMIT: f64 = 50.0 * MIB as f64;
const IOPS_LIMIT: f64 = 1000.0;
const ATTEMPTS: usize = 3;

enum Limit {
    Bps(f64),
    Iops(f64),
}

/// Runs iosurvey (read workload) in a fresh cgroup that throttles `dev`,
/// returning the measured rate that corresponds to the limit.
fn throttled_rate(dev: &LoopDev, limit: &Limit, args: &[&str]) -> Result<f64, String> {
    let cg = Cgroup::new()?;
    let mm = maj_min(dev.path());
    match limit {
        Limit::Bps(b) => cg.set(
            "blkio.throttle.read_bps_device",
            &format!("{mm} {}", *b as u64),
        ),
        Limit::Iops(n) => cg.set(
            "blkio.throttle.read_iops_device",
            &format!("{mm} {}", *n as u64),
        ),
    }
    let mut all = vec!["run", path_str(dev.path())];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json", "--quiet"]);
    let out = cg.run_iosurvey(&all);
    let report = report_of(&out);
    let p = &report["points"][0];
    assert!(p["failure"].is_null(), "{}", p["failure"]);
    let r = &p["total"]["read"];
    assert!(u(&r["ops"]) > 0, "{r}");
    Ok(match limit {
        Limit::Bps(_) => f(&r["bytes_per_sec"]),
        Limit::Iops(_) => f(&r["iops"]),
    })
}

/// Measures up to ATTEMPTS times; see the comment above.
fn assert_accurate(what: &str, dev: &LoopDev, limit: Limit, args: &[&str]) -> Result<(), String> {
    let (target, unit, scale) = match limit {
        Limit::Bps(b) => (b, "MiB/s", MIB as f64),
        Limit::Iops(n) => (n, "IOPS", 1.0),
    };
    let mut seen = Vec::new();
    for _ in 0..ATTEMPTS {
        let got = throttled_rate(dev, &limit, args)?;
        let ratio = got / target;
        eprintln!(
            "accuracy: {what}: limit {:.1} {unit}, measured {:.2} {unit} ({:+.1}%)",
            target / scale,
            got / scale,
            (ratio - 1.0) * 100.0
        );
        assert!(
            ratio <= 1.05,
            "{what}: measured {:.2} {unit}, more than 5% over the limit of {:.1} {unit}",
            got / scale,
            target / scale
        );
        seen.push(got / scale);
        if ratio >= 0.95 {
            return Ok(());
        }
    }
    panic!(
        "{what}: no run within 5% of the limit of {:.1} {unit}; measured {seen:.2?} {unit}",
        target / scale
    );
}

#[test]
fn accuracy_throttled_bandwidth() {
    let _lock = serial();
    need!(require_blkio());
    let l = need!(LoopDev::new(64 * MIB, 5));
    // Sequential O_DIRECT reads, 64 KiB, both engines; and 1 MiB with the
    // sync engine. (1 MiB with io_uring is not accurate on this kernel; see
    // `throttled_uring_large_requests` below.)
    for (engine, bs) in [("sync", "64k"), ("uring", "64k"), ("sync", "1m")] {
        let what = format!("read --engine {engine} --bs {bs}");
        let args = [
            "--rw", "read", "--bs", bs, "--engine", engine, "--time", "4s", "--ramp", "1s",
        ];
        need!(assert_accurate(&what, &l, Limit::Bps(BPS_LIMIT), &args));
    }
}

#[test]
fn accuracy_throttled_iops() {
    let _lock = serial();
    need!(require_blkio());
    let l = need!(LoopDev::new(64 * MIB, 6));
    for engine in ["sync", "uring"] {
        let what = format!("randread --engine {engine} --bs 4k");
        let args = [
            "--rw", "randread", "--bs", "4k", "--engine", engine, "--time", "4s", "--ramp", "1s",
        ];
        need!(assert_accurate(&what, &l, Limit::Iops(IOPS_LIMIT), &args));
    }
}

/// With QD I/Os always outstanding on a device that completes IOPS per
/// second, each I/O waits QD/IOPS on average (Little's law): 4 at 500 IOPS
/// is 8 ms. The burst blk-throttle lets through at the start of a fresh
/// group (its first 100 ms slice at once) would pull the mean down, so
/// `--ramp 1s` keeps it out of the measured phase. Retried like the rates:
/// a starved throttle makes the device slower and the latency longer, never
/// shorter, so no run may come out more than 5% under QD/IOPS.
#[test]
fn accuracy_throttled_latency_is_queue_depth_over_iops() {
    let _lock = serial();
    need!(require_blkio());
    let l = need!(LoopDev::new(64 * MIB, 8));
    const LIMIT: f64 = 500.0;
    const QD: u32 = 4;
    let expect_ns = f64::from(QD) / LIMIT * 1e9;
    for engine in ["uring", "sync"] {
        let workers = if engine == "sync" { QD } else { 1 };
        let qd = if engine == "sync" { 1 } else { QD };
        let (qd, workers) = (qd.to_string(), workers.to_string());
        let args = [
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--qd",
            &qd,
            "--workers",
            &workers,
            "--engine",
            engine,
            "--time",
            "4s",
            "--ramp",
            "1s",
        ];
        let mut seen = Vec::new();
        for _ in 0..ATTEMPTS {
            let cg = need!(Cgroup::new());
            let mm = maj_min(l.path());
            cg.set(
                "blkio.throttle.read_iops_device",
                &format!("{mm} {}", LIMIT as u64),
            );
            let mut all = vec!["run", path_str(l.path())];
            all.extend_from_slice(&args);
            all.extend_from_slice(&["--output", "json", "--quiet"]);
            let report = report_of(&cg.run_iosurvey(&all));
            let r = &report["points"][0]["total"]["read"];
            assert!(u(&r["ops"]) > 0, "{r}");
            let mean = f(&r["latency"]["mean_ns"]);
            let ratio = mean / expect_ns;
            eprintln!(
                "accuracy: latency, {engine}, {QD} outstanding at {LIMIT} IOPS: mean {:.3} ms, \
                 expected {:.3} ms ({:+.1}%), {:.1} IOPS",
                mean / 1e6,
                expect_ns / 1e6,
                (ratio - 1.0) * 100.0,
                f(&r["iops"])
            );
            assert!(
                ratio >= 0.95,
                "{engine}: mean latency {:.3} ms is more than 5% under {QD}/{LIMIT} IOPS = {:.3} ms",
                mean / 1e6,
                expect_ns / 1e6
            );
            seen.push(mean / 1e6);
            if ratio <= 1.05 {
                break;
            }
        }
        let last = *seen.last().unwrap();
        assert!(
            last <= expect_ns / 1e6 * 1.05,
            "{engine}: no run within 5% of {:.3} ms; mean latencies {seen:.3?} ms",
            expect_ns / 1e6
        );
    }
}

/// Not a check of iosurvey: documents a kernel interaction. With io_uring,
/// a request that the block layer must split (1 MiB here: more pages than
/// the loop device's 128 segments) is first tried without blocking; that
/// attempt is charged by blk-throttle and then fails with EAGAIN, and the
/// blocking retry is charged again. The group's own counters
/// (blkio.throttle.io_service_bytes) show twice the bytes iosurvey read, and
/// iosurvey (like fio) measures half the limit: about 25 MiB/s under
/// 50 MiB/s. 512 KiB requests are not split and measure right. Run with
/// `cargo test -p iosurvey --test it run_on_devices -- --ignored --nocapture`.
#[test]
#[ignore = "documents a kernel interaction; prints figures, asserts only the 512 KiB case"]
fn throttled_uring_large_requests() {
    let _lock = serial();
    need!(require_blkio());
    let l = need!(LoopDev::new(64 * MIB, 7));
    for bs in ["512k", "1m"] {
        let args = [
            "--rw", "read", "--bs", bs, "--engine", "uring", "--time", "4s", "--ramp", "1s",
        ];
        let got = need!(throttled_rate(&l, &Limit::Bps(BPS_LIMIT), &args));
        eprintln!(
            "uring --bs {bs}: limit 50.0 MiB/s, measured {:.2} MiB/s",
            got / MIB as f64
        );
    }
    need!(assert_accurate(
        "read --engine uring --bs 512k",
        &l,
        Limit::Bps(BPS_LIMIT),
        &["--rw", "read", "--bs", "512k", "--engine", "uring", "--time", "4s", "--ramp", "1s"],
    ));
}
