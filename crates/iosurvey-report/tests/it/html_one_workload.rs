//! The HTML report of one workload: the page's parts, its plots as SVG
//! that parses, the embedded JSON, and the same page from a saved report
//! of any schema version.

use crate::fixtures::{blank_point, run_report};
use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_model::document::{StreamReport, StreamTotals};
use iosurvey_report::{embedded_json, render_html, to_json};
use iosurvey_stats::ClassStats;

/// A class of `n` reads per interval over `intervals` intervals, the k-th
/// I/O of each interval taking `base + k` ns.
fn reads(intervals: usize, n: u64, base: u64) -> ClassStats {
    let mut c = ClassStats::new();
    for i in 0..intervals {
        for k in 0..n {
            c.record(i, 4096, base + k);
        }
    }
    c
}

pub(crate) fn report() -> RunReport {
    let elapsed = 4_000_000_000;
    let c = reads(4, 1000, 50_000);
    let class = ClassReport::new(&c, elapsed);
    let empty = ClassReport::new(&ClassStats::new(), elapsed);
    let mut p = PointReport {
        label: "randread bs=4KiB qd=16".into(),
        params: iosurvey_model::PointParams::RUN,
        streams: vec![StreamReport {
            samples: Vec::new(),
            bs_split: Vec::new(),
            trim: ClassReport::idle(),
            trim_pct: 0,
            label: "main".into(),
            target: 0,
            rw: iosurvey_model::document::Rw::Read,
            read_pct: 100,
            pattern: iosurvey_model::Pattern::Random,
            dist: Default::default(),
            bs: 4096,
            outstanding: 16,
            offset: 0,
            span: None,
            regions: 0,
            array: None,
            elapsed_ns: elapsed,
            read: class.clone(),
            write: empty.clone(),
        }],
        total: StreamTotals {
            read: class,
            write: empty,
            whole: false,
            trim: ClassReport::idle(),
        },
        ..blank_point(elapsed)
    };
    for s in p
        .streams
        .iter_mut()
        .map(|s| &mut s.read)
        .chain([&mut p.total.read])
    {
        s.set_last_interval(1_000_000_000, elapsed);
    }
    run_report("run", vec![p])
}

/// The `<svg>` documents of a page, each parsed as XML.
fn svgs(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").expect("every svg is closed") + i + 6;
        let doc = &rest[i..end];
        roxmltree::Document::parse(doc).unwrap_or_else(|e| panic!("an SVG that is not XML: {e}"));
        out.push(doc.to_string());
        rest = &rest[end..];
    }
    out
}

#[test]
fn a_run_has_its_five_plots_each_drawn_and_valid_xml() {
    let page = render_html(&report());
    let svgs = svgs(&page);
    assert_eq!(
        svgs.len(),
        5,
        "percentiles, MB/s, IOPS, histogram, histogram on a log scale"
    );
    for (svg, title) in svgs.iter().zip([
        "Latency percentiles",
        "Throughput per interval",
        "IOPS per interval",
        "Latency histogram (10 bins",
        "Latency histogram, I/Os on a log scale",
    ]) {
        assert!(svg.contains(title), "{title} missing");
        assert!(svg.contains("<title>"), "{title}: no tooltip");
    }
    for svg in &svgs[..4] {
        assert!(svg.contains("<polyline"), "no line drawn: {svg}");
    }
    // 1,000 I/Os of 4 KiB in each 1 s interval: 4.096 MB/s and 1,000 IOPS.
    assert!(svgs[1].contains("MB/s 4.10</title>"), "{}", svgs[1]);
    assert!(svgs[2].contains("IOPS 1000</title>"));
    // The slowest I/O took 50,999 ns: the top of the percentile curve.
    assert!(svgs[0].contains("latency 51.00µs</title>"), "{}", svgs[0]);
}

#[test]
fn the_page_holds_the_settings_host_targets_warnings_and_tables() {
    let page = render_html(&report());
    for id in ["settings", "host", "warnings", "plots", "tables"] {
        assert!(page.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    assert!(page.contains("<td>iosurvey run</td>"), "the command line");
    assert!(page.contains("<p>None.</p>"), "no warning");
    // The table of every point: 4,000 reads, 4.10 MB/s, 1,000 IOPS.
    let row = "<td class=\"n\">4000</td><td class=\"n\">4.10</td><td class=\"n\">1000</td>";
    assert!(
        page.contains(row),
        "{}",
        &page[page.find("Every point").unwrap()..]
    );
    // Nothing is loaded from elsewhere, and no script runs.
    for loads in [" src=", " href=", "url(", "@import", "<link", "<script>"] {
        assert!(!page.contains(loads), "{loads}");
    }
}

#[test]
fn the_command_line_follows_the_variables_it_took_from_the_environment() {
    let mut r = report();
    r.environment = vec!["scsidevs=/dev/sdb /dev/sdc".into(), "size=8192".into()];
    let page = render_html(&r);
    assert!(
        page.contains("<td>scsidevs=&quot;/dev/sdb /dev/sdc&quot; size=8192 iosurvey run</td>"),
        "the command line with its variables"
    );
    let back: RunReport = serde_json::from_str(&to_json(&r)).unwrap();
    assert_eq!(back.environment, r.environment);
    // Left out of a report that took none.
    assert!(!to_json(&report()).contains("\"environment\""));
}

#[test]
fn the_embedded_json_is_the_report_and_renders_the_same_page() {
    let r = report();
    let page = render_html(&r);
    let json = embedded_json(&page).expect("embedded");
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
    assert_eq!(render_html(&back), page, "a pure function of the report");
}

#[test]
fn a_script_end_inside_a_string_cannot_end_the_embedded_json() {
    let mut r = report();
    r.command_line
        .push("</script><script>alert(1)</script>".into());
    let page = render_html(&r);
    assert_eq!(page.matches("</script>").count(), 1);
    let back: RunReport = serde_json::from_str(&embedded_json(&page).unwrap()).unwrap();
    assert_eq!(back.command_line, r.command_line);
    assert!(
        page.contains("&lt;/script&gt;"),
        "escaped in the settings table"
    );
}

#[test]
fn a_schema_version_1_report_renders_with_its_text_warnings() {
    let mut v: serde_json::Value = serde_json::from_str(&to_json(&report())).unwrap();
    v["schema_version"] = 1.into();
    let p = &mut v["points"][0];
    p["warnings"] = serde_json::json!(["reads were served from the page cache"]);
    p.as_object_mut().unwrap().remove("params");
    let old: RunReport = serde_json::from_value(v).unwrap();
    let page = render_html(&old);
    assert!(page.contains("reads were served from the page cache"));
    assert_eq!(svgs(&page).len(), 5);
}

/// The text of every `<text>` of an SVG.
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

#[test]
fn the_histogram_is_also_drawn_with_its_counts_on_a_log_axis() {
    // 4,000 reads of 50.000 to 50.999 µs, and one of 9 ms: on a linear
    // axis the slow one is a bar of 1 beside 3,000; on a log axis it is a
    // marker a fourth of the way up.
    let mut r = report();
    let mut c = reads(4, 1000, 50_000);
    c.record(3, 4096, 9_000_000);
    let class = ClassReport::new(&c, 4_000_000_000);
    r.points[0].streams[0].read = class.clone();
    r.points[0].total.read = class;
    let svgs = svgs(&render_html(&r));
    let (linear, log) = (&svgs[3], &svgs[4]);
    assert!(log.contains("I/Os (log scale)"), "{log}");
    // Whole powers of ten on the count axis, from 1 (the slow I/O) up.
    let ticks = texts(log);
    for power in ["1", "10", "100", "1000"] {
        assert!(
            ticks.iter().any(|t| t == power),
            "{power} not a tick: {ticks:?}"
        );
    }
    assert!(!texts(linear).iter().any(|t| t == "10"), "linear counts");
    // Every bin with I/O has its marker and tooltip; no empty bin has one
    // (there is no zero on a log axis).
    let tips: Vec<&str> = log.matches("<title>").collect();
    assert_eq!(tips.len(), 3, "two bins round 50 µs and one at 9 ms: {log}");
    assert!(log.contains("I/Os (log scale) 1</title>"), "{log}");
    assert!(
        linear.matches("<title>").count() > tips.len(),
        "the linear histogram draws its empty bins at zero"
    );
}

#[test]
fn latency_per_interval_is_plotted_from_the_series_percentiles() {
    let mut r = report();
    let series = &mut r.points[0].streams[0].read.series;
    for (k, s) in series.iter_mut().enumerate() {
        let k = k as u64;
        (s.lat_p50_ns, s.lat_p99_ns, s.lat_p999_ns) = (50_000 + k, 60_000 + k, 70_000 + k);
    }
    let page = render_html(&r);
    let svgs = svgs(&page);
    assert_eq!(svgs.len(), 6, "the five, and latency per interval");
    let lat = svgs
        .iter()
        .find(|s| s.contains("Latency per interval"))
        .expect("the latency plot");
    assert!(lat.contains("<polyline"), "its lines drawn");
    assert!(
        lat.contains("read p50") && lat.contains("read p99"),
        "{lat}"
    );
    // The last interval's p99, 60,003 ns, at its end (4 s).
    assert!(lat.contains("latency 60.00µs</title>"), "{lat}");
    // A report whose series have no percentiles (before they were kept)
    // shows the four plots only: see a_run_has_its_four_plots_each_drawn_and_valid_xml.
}
