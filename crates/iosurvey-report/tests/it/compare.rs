//! `iosurvey compare` from reports made here: points matched by their
//! parameters, the verdicts (faster, slower, ~, n too small), the p-value
//! of four repeats against four, the text and JSON, the gate (its figures,
//! Holm's correction) and runs with no point in common.

use crate::fixtures::{blank_point, run_report};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamTotals};
use iosurvey_model::params::PointParams;
use iosurvey_model::{Op, Pattern};
use iosurvey_report::compare::{
    compare, compare_json, gate, render_compare_html, render_compare_text, CompareReport,
    CompareRow, Figure, GateFigure, NoMatch,
};
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
            whole: false,
            trim: ClassReport::idle(),
        },
        ..blank_point(elapsed)
    }
}

/// A run of `repeats` repeats of two sizes, the 4 KiB one at `mb[k]` MB/s
/// in repeat k, the 64 KiB one always at 500.
pub(crate) fn run(mb: &[u64], lat: u64) -> RunReport {
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

fn find<'a>(rows: &'a [CompareRow], point: &str, metric: Figure) -> &'a CompareRow {
    rows.iter()
        .find(|r| r.point == point && r.metric == metric)
        .unwrap_or_else(|| panic!("no row {point} {metric}"))
}

fn compared(a: RunReport, b: RunReport) -> CompareReport {
    compare(&["a".into(), "b".into()], &[a, b]).unwrap()
}

#[test]
fn four_repeats_wholly_apart_are_significant_and_the_same_are_not() {
    let a = run(&[100, 102, 101, 99], 40_000);
    let b = run(&[80, 81, 79, 82], 50_000);
    let c = compared(a, b);
    let mb = find(&c.rows, "fwd read 4096", Figure::Mbps);
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
    let p99 = find(&c.rows, "fwd read 4096", Figure::P99Latency);
    assert_eq!(p99.verdict, "slower");
    assert!((p99.ratio - 1.25).abs() < 0.01, "{}", p99.ratio);
    // The 64 KiB point moved 500 MB/s each time in both runs.
    let same = find(&c.rows, "fwd read 65536", Figure::Mbps);
    assert_eq!(same.verdict, "~");
    assert_eq!(same.ratio, 1.0);
}

#[test]
fn fewer_than_four_repeats_get_no_verdict() {
    let a = run(&[100, 102, 101], 40_000);
    let b = run(&[50, 51, 49], 40_000);
    let c = compared(a, b);
    let mb = find(&c.rows, "fwd read 4096", Figure::Mbps);
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
    let c = compared(a, b);
    let mb = find(&c.rows, "fwd read 4096", Figure::Mbps);
    assert_eq!(mb.b.values.len(), 4);
    assert_eq!(mb.ratio, 1.0);
    assert_eq!(
        c.rows.iter().filter(|r| r.metric == Figure::Mbps).count(),
        2
    );
}

#[test]
fn the_gate_judges_each_points_headline_rate_by_default() {
    let a = run(&[100, 102, 101, 99], 40_000);
    let b = run(&[80, 81, 79, 82], 50_000);
    let mut c = compared(a, b);
    gate(&mut c, &[GateFigure::Rate], 10.0);
    let gated: Vec<(&str, Figure)> = c
        .rows
        .iter()
        .filter(|r| r.gated)
        .map(|r| (r.point.as_str(), r.metric))
        .collect();
    // IOPS under 64 KiB, MB/s from 64 KiB on; never the latencies.
    assert_eq!(
        gated,
        [
            ("fwd read 4096", Figure::Iops),
            ("fwd read 65536", Figure::Mbps)
        ]
    );
    let g = c.gate.as_ref().unwrap();
    assert_eq!((g.tests, g.untested), (2, 0));
    // Two runs of one point each, 4 KiB against 64 KiB: sizes that
    // straddle the line are judged by MB/s (IOPS would call the larger
    // I/O slower).
    let one = |r: RunReport, size: &str| RunReport {
        points: r
            .points
            .into_iter()
            .filter(|p| p.label.ends_with(size))
            .collect(),
        ..r
    };
    let mut two = compared(
        one(run(&[100, 100, 100, 100], 40_000), " 4096"),
        one(run(&[100, 100, 100, 100], 40_000), " 65536"),
    );
    gate(&mut two, &[GateFigure::Rate], 10.0);
    let gated: Vec<Figure> = two
        .rows
        .iter()
        .filter(|r| r.gated)
        .map(|r| r.metric)
        .collect();
    assert_eq!(gated, [Figure::Mbps]);
    // 4 KiB is slower with p = 2/70 alone, but two tests at four repeats
    // a side: 2 x 0.0286 is not below 0.05, so nothing fails, and the
    // gate says it could not.
    let iops = find(&c.rows, "fwd read 4096", Figure::Iops);
    assert_eq!(iops.verdict, "slower");
    assert!((iops.p_holm.unwrap() - 4.0 / 70.0).abs() < 1e-9);
    assert!(g.failed.is_empty() && !g.reachable);
    assert_eq!(
        find(&c.rows, "fwd read 4096", Figure::MeanLatency).p_holm,
        None
    );
    let text = render_compare_text(&c);
    assert!(
        text.contains("gate: 2 tests (rate), Holm-corrected at alpha 0.05")
            && text.contains("cannot fail"),
        "{text}"
    );
    // The JSON carries the corrected p-values and the gate.
    let json: serde_json::Value = serde_json::from_str(&compare_json(&c)).unwrap();
    assert_eq!(json["gate"]["correction"], "holm");
    assert_eq!(json["gate"]["tests"], 2);
    let rows = json["rows"].as_array().unwrap();
    let gated = rows.iter().filter(|r| r["gated"] == true).count();
    assert_eq!(gated, 2);
    assert!(rows.iter().any(|r| r["p_holm"].as_f64().is_some()));
}

#[test]
fn the_gate_judges_the_figures_named_and_fails_on_a_significant_slowdown() {
    let a = run(&[100, 102, 101, 99], 40_000);
    let b = run(&[80, 81, 79, 82], 50_000);
    let mut c = compared(a.clone(), b.clone());
    gate(&mut c, &[GateFigure::P99], 10.0);
    let g = c.gate.clone().unwrap();
    // p99 of both points (40 us against 50 us in every repeat): the
    // latency is judged when named, the rates are not.
    assert_eq!(g.figures, ["p99"]);
    assert_eq!(g.tests, 2);
    assert!(c
        .rows
        .iter()
        .all(|r| r.gated == (r.metric == Figure::P99Latency)));
    let p99 = find(&c.rows, "fwd read 4096", Figure::P99Latency);
    assert!((p99.p_holm.unwrap() - 4.0 / 70.0).abs() < 1e-9, "{p99:?}");
    assert!(g.failed.is_empty());
    // The 4 KiB point alone: one test, 2/70 below 0.05; 20% slower fails
    // a 10% gate, not a 25% one.
    let only_4k = |mut r: RunReport| {
        r.points.retain(|p| p.label == "fwd read 4096");
        r
    };
    for (pct, fails) in [(10.0, true), (25.0, false)] {
        let mut c = compared(only_4k(a.clone()), only_4k(b.clone()));
        gate(&mut c, &[GateFigure::Mbps, GateFigure::P99], pct);
        let g = c.gate.unwrap();
        // MB/s and p99: both wholly apart, 2 x 2/70 each.
        assert_eq!((g.tests, g.reachable), (2, false));
        assert!(g.failed.is_empty());
        let mut c = compared(only_4k(a.clone()), only_4k(b.clone()));
        gate(&mut c, &[GateFigure::Mbps], pct);
        let g = c.gate.clone().unwrap();
        assert_eq!((g.tests, g.reachable), (1, true));
        assert_eq!(g.failed.len(), usize::from(fails), "{pct}");
        if fails {
            assert_eq!(c.rows[g.failed[0]].metric, Figure::Mbps);
            assert!(render_compare_text(&c).contains("0.029 fails"));
        }
    }
}

#[test]
fn runs_with_no_point_in_common_are_an_error_that_says_why() {
    let a = run(&[100, 100, 100, 100], 40_000);
    let mut b = run(&[100, 100, 100, 100], 40_000);
    for p in &mut b.points {
        if let PointParams::Diskperf { size, .. } = &mut p.params {
            *size *= 2;
        }
    }
    let err = compare(&["a.json".into(), "b.json".into()], &[a.clone(), b]).unwrap_err();
    let NoMatch::Points { .. } = &err else {
        panic!("{err:?}")
    };
    let line = err.to_string();
    assert!(
        line.starts_with("no point of b.json matched one of a.json")
            && line.contains("differ in size")
            && !line.contains('\n'),
        "{line}"
    );
    // Every point skipped: nothing measured.
    let mut none = run(&[100, 100, 100, 100], 40_000);
    for p in &mut none.points {
        p.skipped = Some("refused".into());
    }
    let err = compare(&["a.json".into(), "c.json".into()], &[a.clone(), none]).unwrap_err();
    assert_eq!(
        err,
        NoMatch::Empty {
            run: "c.json".into()
        }
    );
    // The same points, one run reading and the other writing.
    let mut w = run(&[100, 100, 100, 100], 40_000);
    for p in &mut w.points {
        std::mem::swap(&mut p.total.read, &mut p.total.write);
    }
    let err = compare(&["a.json".into(), "w.json".into()], &[a, w]).unwrap_err();
    assert!(matches!(err, NoMatch::Classes { .. }), "{err:?}");
}

/// The lines of the first series' colour in a page's plot, as their
/// points.
fn blue_lines(page: &str) -> Vec<Vec<(f64, f64)>> {
    let start = page.find("<svg").expect("a plot");
    let end = page[start..].find("</svg>").unwrap() + start + 6;
    let doc = roxmltree::Document::parse(&page[start..end]).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#0072B2"))
        // Not the legend's swatch, which is 3 wide.
        .filter(|n| n.attribute("stroke-width") == Some("2"))
        .map(|n| {
            n.attribute("points")
                .unwrap_or_default()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_page_draws_each_ratio_with_its_interval_as_a_whisker() {
    let c = compared(
        run(&[100, 102, 101, 99], 40_000),
        run(&[80, 81, 79, 82], 50_000),
    );
    let page = render_compare_html(&c);
    assert!(page.contains("whiskers: its 95% bootstrap interval"));
    let lines = blue_lines(&page);
    // A whisker per point: a vertical line and a cap at either end.
    let vertical: Vec<&Vec<(f64, f64)>> = lines
        .iter()
        .filter(|l| l.len() == 2 && l[0].0 == l[1].0)
        .collect();
    assert_eq!(vertical.len(), 2, "{lines:?}");
    let caps = lines
        .iter()
        .filter(|l| l.len() == 2 && l[0].1 == l[1].1 && l[0].0 != l[1].0)
        .count();
    assert_eq!(caps, 4, "{lines:?}");
    // The 4 KiB point's ratio varies over its repeats: a whisker of some
    // length; the 64 KiB point's is 1 in every repeat: none.
    let len = |l: &Vec<(f64, f64)>| (l[0].1 - l[1].1).abs();
    assert!(len(vertical[0]) > 5.0, "{vertical:?}");
    assert_eq!(len(vertical[1]), 0.0, "{vertical:?}");
    // Without enough repeats there is no interval, and no whisker.
    let c = compared(run(&[100, 102], 40_000), run(&[80, 81], 50_000));
    let page = render_compare_html(&c);
    assert!(blue_lines(&page).iter().all(|l| l.len() != 2), "no whisker");
}

#[test]
fn the_settings_that_differ_are_listed_and_same_settings_said() {
    let a = run(&[100, 102, 101, 99], 40_000);
    let c = compared(a.clone(), a.clone());
    assert!(c.differences.is_empty());
    let page = render_compare_html(&c);
    assert!(page.contains("Settings that differ") && page.contains("same settings"));
    let mut b = a.clone();
    b.host.kernel = "6.1".into();
    b.tool.version = "0.0.1-test".into();
    for p in &mut b.points {
        p.settings.workers = 4;
        p.settings.engine = iosurvey_model::EngineKind::Uring;
    }
    let c = compared(a, b);
    let got: Vec<(String, String, String)> = c
        .differences
        .iter()
        .map(|d| (d.setting.clone(), d.a.clone(), d.b.clone()))
        .collect();
    let want = |s: &str, a: &str, b: &str| (s.to_string(), a.to_string(), b.to_string());
    assert_eq!(
        got,
        [
            want("engine", "sync", "uring"),
            want("workers", "1", "4"),
            want("kernel", "6.0", "6.1"),
            want("version", "iosurvey 0.0.0-test", "iosurvey 0.0.1-test"),
        ]
    );
    assert!(c.differences.iter().all(|d| d.run == 1));
    let page = render_compare_html(&c);
    assert!(!page.contains("same settings"));
    assert!(
        page.contains(
            "<tr><td>B1</td><td>kernel</td><td class=\"n\">6.0</td><td class=\"n\">6.1</td></tr>"
        ),
        "{page}"
    );
    // And in the JSON, for scripts.
    let v: serde_json::Value = serde_json::from_str(&compare_json(&c)).unwrap();
    assert_eq!(v["differences"][2]["setting"], "kernel");
}

#[test]
fn trims_are_compared_as_a_class_of_their_own() {
    // Points that trimmed (`--trim 20`): their discards get rows of their
    // own, beside the reads', in a comparison and in a run's table of its
    // repeats.
    let with_trims = |mb: &[u64], lat: u64| {
        let mut r = run(mb, 40_000);
        for p in &mut r.points {
            let mut c = ClassStats::new();
            for _ in 0..1000 {
                c.record(0, 4096, lat);
            }
            p.total.trim = ClassReport::new(&c, 1_000_000_000);
        }
        r
    };
    let a = with_trims(&[100, 100, 100, 100], 10_000);
    // The run's own page spreads each class over its repeats, trims too.
    let page = iosurvey_report::render_html(&a);
    let at = page.find("Repeats (4 runs").expect("a repeats table");
    let repeats = &page[at..at + page[at..].find("</table>").unwrap()];
    assert_eq!(repeats.matches(">trim<").count(), 2, "{repeats}");
    let c = compared(a, with_trims(&[100, 100, 100, 100], 20_000));
    let trims: Vec<&CompareRow> = c.rows.iter().filter(|r| r.class == "trim").collect();
    // Two points, five figures each.
    assert_eq!(trims.len(), 10, "{:?}", c.rows);
    let p50 = trims
        .iter()
        .find(|r| r.point == "fwd read 4096" && r.metric == Figure::P50Latency)
        .unwrap();
    assert!((p50.ratio - 2.0).abs() < 0.02, "{}", p50.ratio);
    let text = render_compare_text(&c);
    assert!(
        text.lines()
            .any(|l| l.contains("fwd read 4096") && l.contains(" trim ")),
        "{text}"
    );
    // Without trims in either run, no trim row.
    let c = compared(run(&[100; 4], 40_000), run(&[100; 4], 40_000));
    assert!(c.rows.iter().all(|r| r.class != "trim"));
}
