//! The interval series: too_short, unstable (stalls of few I/Os per
//! interval) and write_cache_collapse (its knee).

use super::*;

/// A loop device throttled to 21 MB/s of reads, and a run of 512 KiB
/// reads on it in its cgroup, optionally stopped (SIGSTOP) 1.2 s in for
/// `pause`: its first point.
struct Throttled {
    d: DiskLoop,
    cg: Cgroup,
}

impl Throttled {
    fn new() -> Result<Throttled, String> {
        require_blkio()?;
        let d = DiskLoop::new(64 * MIB, false)?;
        let cg = Cgroup::new()?;
        cg.set(
            "blkio.throttle.read_bps_device",
            &format!("{} 21000000", maj_min(d.dev.path())),
        );
        Ok(Throttled { d, cg })
    }

    fn point(&self, extra: &[&str], pause: Option<Duration>) -> Value {
        let mut all = vec![
            "run",
            self.d.path(),
            "--rw",
            "read",
            "--bs",
            "512k",
            "--engine",
            "sync",
            "--output",
            "json",
            "--quiet",
        ];
        all.extend_from_slice(extra);
        let child = self.cg.spawn_iosurvey(&all);
        if let Some(p) = pause {
            // Stopping the process for a while makes a gap in its rate.
            std::thread::sleep(Duration::from_millis(1200));
            let pid = child.id().to_string();
            must("kill", &["-STOP", &pid]);
            std::thread::sleep(p);
            must("kill", &["-CONT", &pid]);
        }
        let out = child.wait_with_output().unwrap();
        report_of(&out)["points"][0].clone()
    }
}

/// Issue 27: a run is too short under 5 s measured, whatever its
/// `--interval` (100 ms intervals dodged it).
#[test]
fn a_short_run_is_flagged_whatever_its_interval() {
    let _lock = serial();
    let t = need!(Throttled::new());
    for interval in ["500ms", "100ms"] {
        let p = t.point(&["--time", "1s", "--interval", interval], None);
        assert!(has(&p, "too_short"), "{interval}: {}", p["warnings"]);
    }
}

/// Issue 27: a stall is unstable although the intervals hold under 100
/// I/Os (about 20 here, which the check skipped, and a stall lowers): the
/// variation is judged against what counting alone gives. The same run
/// without a stall is silent.
#[test]
fn a_stalled_run_of_few_ios_per_interval_is_unstable_and_a_steady_one_is_not() {
    let _lock = serial();
    let t = need!(Throttled::new());
    let args = ["--time", "5s", "--interval", "500ms"];
    let p = t.point(&args, None);
    let c = codes(&p);
    for code in ["too_short", "unstable", "memory_backed", "unwritten_area"] {
        assert!(!c.iter().any(|x| x == code), "{code}: {}", p["warnings"]);
    }
    let p = t.point(&args, Some(Duration::from_millis(1500)));
    let w = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "unstable")
        .unwrap_or_else(|| panic!("no unstable: {}", p["warnings"]))
        .clone();
    let e = &w["evidence"];
    assert!(f(&e["ops_per_interval"]) < 100.0, "{w}");
    assert!(u(&e["stalled_intervals"]) >= 1, "{w}");
    assert!(f(&e["dispersion"]) > f(&e["dispersion_limit"]), "{w}");
    assert_eq!(f(&e["confidence"]), 0.999, "{w}");
}

/// Sectors the kernel has written to `dev` (its `stat`), in bytes.
fn written_bytes(dev: &Path) -> u64 {
    let stat = sysfs_read(dev, "stat");
    let sectors: u64 = stat.split_whitespace().nth(6).unwrap().parse().unwrap();
    sectors * 512
}

/// 4 s of 1 MiB writes to `dev` in a cgroup that holds them to 400 MB/s,
/// then, 2 s in, to 20 MB/s: a write cache of about 0.8 GB. The point, and
/// the bytes the device had been written when the rate fell.
fn cache_fills(dev: &Path) -> (Value, u64) {
    let cg = Cgroup::new().unwrap();
    let limit = |bps: &str| {
        cg.set(
            "blkio.throttle.write_bps_device",
            &format!("{} {bps}", maj_min(dev)),
        )
    };
    limit("400000000");
    let before = written_bytes(dev);
    let child = cg.spawn_iosurvey(&[
        "run",
        path_str(dev),
        "--rw",
        "write",
        "--bs",
        "1m",
        "--engine",
        "sync",
        "--time",
        "4s",
        "--interval",
        "250ms",
        "--allow-destroy",
        "--output",
        "json",
        "--quiet",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    let switch = written_bytes(dev) - before;
    limit("20000000");
    let out = child.wait_with_output().unwrap();
    (report_of(&out)["points"][0].clone(), switch)
}

/// Issue 27: a write cache under 1 GiB is found (the check began after
/// 1 GiB), on a loop device marked rotational too (the check skipped
/// rotational targets, and the kernel copies the flag of a loop's disk),
/// with its knee where the fast phase ended, within an interval's bytes.
#[test]
fn a_write_rate_that_collapses_names_the_knee_where_the_fast_phase_ended() {
    let _lock = serial();
    need!(require_blkio());
    let z = need!(Zram::new(128 * MIB));
    let rot = need!(DiskLoop::new(64 * MIB, true));
    for dev in [z.path(), rot.dev.path()] {
        let (p, switch) = cache_fills(dev);
        let w = p["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["code"] == "write_cache_collapse")
            .unwrap_or_else(|| {
                let series: Vec<u64> = p["total"]["write"]["series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| u(&s["bytes"]) >> 20)
                    .collect();
                panic!(
                    "{}: no collapse, MiB per interval {series:?}, the rate fell at {switch}: {}",
                    dev.display(),
                    p["warnings"]
                )
            })
            .clone();
        let e = &w["evidence"];
        let knee = u(&e["knee_bytes"]);
        let interval_bytes = f(&e["start_bytes_per_sec"]) / 4.0;
        assert!(knee < 1 << 30, "{w}");
        assert!(
            (knee as f64 - switch as f64).abs() < interval_bytes,
            "{}: knee {knee}, the rate fell at {switch}: {w}",
            dev.display()
        );
        assert!(
            f(&e["after_bytes_per_sec"]) < 0.2 * f(&e["start_bytes_per_sec"]),
            "{w}"
        );
    }
    assert_eq!(sysfs_read(rot.dev.path(), "queue/rotational"), "1");
    // Written without a collapse: silent. Paced at 64 MiB/s, which zram
    // holds however busy the machine is: unpaced, CI's other tests once
    // slowed its last two intervals from 346 to 220 MB/s, a real fall the
    // warning rightly named.
    let p = run_point(&[
        "--rw",
        "write",
        "--bs",
        "1m",
        "--qd",
        "4",
        "--time",
        "2s",
        "--interval",
        "200ms",
        "--rate",
        "64m",
        "--allow-destroy",
        path_str(z.path()),
    ]);
    assert!(!has(&p, "write_cache_collapse"), "{}", p["warnings"]);
}
