//! parallel: short_window and super_linear.

use super::*;

/// Issue 27: `parallel --scale` over loop devices the page cache answers,
/// without --loop: they end within a fraction of the 2 s asked, and each
/// point says its common window is short and its targets are memory.
#[test]
fn parallel_over_page_cached_devices_warns_of_its_short_window() {
    let _lock = serial();
    let loops: Vec<DiskLoop> = need!((0..3)
        .map(|_| DiskLoop::attached(16 * MIB, &[]))
        .collect::<Result<Vec<_>, _>>());
    let mut args = vec!["parallel", "--scale", "--time", "2s", "--bs", "1m"];
    args.extend(loops.iter().map(DiskLoop::path));
    args.extend(["--output", "json", "--quiet"]);
    let r = report_of(&iosurvey(&args));
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{r}");
    for p in points {
        let w = warning(p, "short_window");
        assert!(f(&w["evidence"]["share"]) < 0.5, "{w}");
        assert_eq!(u(&w["evidence"]["run_ns"]), 2_000_000_000, "{w}");
        if !p["targets"][0]["memory_backed"].is_null() {
            assert!(has(p, "memory_backed"), "{}", p["warnings"]);
        }
    }
    assert!(
        backing(&points[0]).contains("page-cached"),
        "{}",
        points[0]["targets"]
    );
}

/// Issue 27: a step of `parallel --scale` that beats its devices times
/// the first step's rate is super-linear: here the first device is held to
/// 40 MB/s by a cgroup and the others are not. With --loop the common
/// window is the run: no short_window.
#[test]
fn parallel_scaling_beyond_the_sum_of_its_devices_is_super_linear() {
    let _lock = serial();
    need!(require_blkio());
    let loops: Vec<DiskLoop> = need!((0..2)
        .map(|_| DiskLoop::new(16 * MIB, false))
        .collect::<Result<Vec<_>, _>>());
    let cg = need!(Cgroup::new());
    cg.set(
        "blkio.throttle.read_bps_device",
        &format!("{} 40000000", maj_min(loops[0].dev.path())),
    );
    let mut args = vec![
        "parallel", "--scale", "--loop", "--time", "1s", "--bs", "256k",
    ];
    args.extend(loops.iter().map(DiskLoop::path));
    args.extend(["--engine", "sync", "--output", "json", "--quiet"]);
    let r = report_of(&cg.run_iosurvey(&args));
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{r}");
    assert!(
        !has(&points[0], "super_linear"),
        "{}",
        points[0]["warnings"]
    );
    let w = warning(&points[1], "super_linear");
    assert!(f(&w["evidence"]["efficiency"]) > 1.1, "{w}");
    assert_eq!(u(&w["evidence"]["devices"]), 2, "{w}");
    for p in points {
        assert!(!has(p, "short_window"), "{}", p["warnings"]);
    }
}
