//! `iosurvey compare` from reports made here: points matched by their
//! parameters, the verdicts (faster, slower, ~, n too small), the p-value
//! of four repeats against four, and the text and JSON.

mod fixtures;

use fixtures::{blank_point, run_report};
use iosurvey_model::params::PointParams;
use iosurvey_model::{Op, Pattern};
use iosurvey_report::compare::{compare, render_compare_text, CompareRow};
use iosurvey_report::{ClassReport, PointReport, RunReport, StreamTotals};
use iosurvey_stats::ClassStats;

/// A diskperf point of `size` bytes that read `mb` MB in 1 s, each read
/// taking `lat` ns, as repeat `repeat`.
fn point(size: u64, mb: u64, lat: u64, repeat: u32) -> PointReport {
    let elapsed = 1_000_000_000;
    let mut c = ClassStats::new();
    let n = mb * 1_000_000 / size;
    for _ in 0..n {
        c.record(0, size, lat);
    }
    let empty = ClassReport::new(&ClassStats::new(), elapsed);
    PointReport {
        label: format!("fwd read {size}"),
        params: PointParams::Diskperf {
            size,
            pattern: Pattern::Forward,
            op: Op::Read,
        },
        repeat,
        total: StreamTotals {
            read: ClassReport::new(&c, elapsed),
            write: empty,
        },
        ..blank_point(elapsed)
    }
}

/// A run of `repeats` repeats of two sizes, the 4 KiB one at `mb[k]` MB/s
/// in repeat k, the 64 KiB one always at 500.
fn run(mb: &[u64], lat: u64) -> RunReport {
    let mut points = Vec::new();
    for (k, &m) in mb.iter().enumerate() {
        points.push(point(4096, m, lat, k as u32));
        points.push(point(65536, 500, lat, k as u32));
    }
    RunReport {
        repeats: mb.len() as u32,
        ..run_report("diskperf", points)
    }
}

fn find<'a>(rows: &'a [CompareRow], point: &str, metric: &str) -> &'a CompareRow {
    rows.iter()
        .find(|r| r.point == point && r.metric == metric)
        .unwrap_or_else(|| panic!("no row {point} {metric}"))
}

#[test]
fn four_repeats_wholly_apart_are_significant_and_the_same_are_not() {
    let a = run(&[100, 102, 101, 99], 40_000);
    let b = run(&[80, 81, 79, 82], 50_000);
    let c = compare(&["a".into(), "b".into()], &[a, b]);
    let mb = find(&c.rows, "fwd read 4096", "MB/s");
    assert_eq!(mb.verdict, "slower");
    // 2 of the 70 ways four and four ranks can fall are as extreme.
    assert!((mb.p_value.unwrap() - 2.0 / 70.0).abs() < 1e-9);
    // Medians 100.5 and 80.5 (to the whole I/O).
    assert!((mb.ratio - 80.5 / 100.5).abs() < 0.01, "{}", mb.ratio);
    let (lo, hi) = mb.ratio_ci.unwrap();
    assert!(lo <= mb.ratio && mb.ratio <= hi);
    assert!(mb.slower_by_more_than(15.0) && !mb.slower_by_more_than(25.0));
    // Latency: every read took 50 us against 40 us; the percentile of the
    // merged histograms.
    let p99 = find(&c.rows, "fwd read 4096", "p99 latency");
    assert_eq!(p99.verdict, "slower");
    assert!((p99.ratio - 1.25).abs() < 0.01, "{}", p99.ratio);
    // The 64 KiB point moved 500 MB/s each time in both runs.
    let same = find(&c.rows, "fwd read 65536", "MB/s");
    assert_eq!(same.verdict, "~");
    assert_eq!(same.ratio, 1.0);
}

#[test]
fn fewer_than_four_repeats_get_no_verdict() {
    let a = run(&[100, 102, 101], 40_000);
    let b = run(&[50, 51, 49], 40_000);
    let c = compare(&["a".into(), "b".into()], &[a, b]);
    let mb = find(&c.rows, "fwd read 4096", "MB/s");
    assert_eq!(mb.verdict, "n too small");
    assert_eq!(mb.p_value, None);
    assert!(!mb.slower_by_more_than(1.0));
    let text = render_compare_text(&c);
    assert!(text.contains("n too small"), "{text}");
}

#[test]
fn points_are_matched_by_their_parameters_not_their_order() {
    let a = run(&[100, 100, 100, 100], 40_000);
    let mut b = run(&[100, 100, 100, 100], 40_000);
    b.points.reverse();
    for p in &mut b.points {
        p.label = format!("renamed {}", p.label);
    }
    let c = compare(&["a".into(), "b".into()], &[a, b]);
    let mb = find(&c.rows, "fwd read 4096", "MB/s");
    assert_eq!(mb.b.values.len(), 4);
    assert_eq!(mb.ratio, 1.0);
    assert_eq!(c.rows.iter().filter(|r| r.metric == "MB/s").count(), 2);
}
