//! The HTML page of `diskperf`, `parallel` and `survey` from fixed results
//! (no I/O): how many plots each mode draws, that each is well-formed SVG
//! with its series drawn and a tooltip per figure, and the figures of the
//! mode's tables.

use iosurvey_model::document::*;
use iosurvey_model::{Op, PointParams, TargetKind};
use iosurvey_report::*;
use iosurvey_stats::ClassStats;

use crate::fixtures;

// --- reading the page back ---

/// Every inline SVG of the page, each checked to parse as XML.
fn plots(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let len = rest[start..].find("</svg>").expect("an <svg> is closed") + "</svg>".len();
        let svg = &rest[start..start + len];
        if let Err(e) = roxmltree::Document::parse(svg) {
            panic!("SVG {} does not parse: {e}\n{svg}", out.len());
        }
        out.push(svg);
        rest = &rest[start + len..];
    }
    out
}

/// The `<title>` tooltips of an SVG.
fn tooltips(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect()
}

/// The text of an SVG's `<text>` elements (tick labels, titles, legend).
fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// How many `tag` elements of an SVG have `attr` = `colour` (a series
/// colour of the chart's palette).
fn drawn(svg: &str, tag: &str, attr: &str, colour: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name(tag))
        .filter(|n| {
            n.attribute(attr)
                .is_some_and(|c| c.eq_ignore_ascii_case(colour))
        })
        .count()
}

/// The number of points of each polyline of stroke `colour`, in order:
/// a series' line, then its legend entry (always 2).
fn polylines(svg: &str, colour: &str) -> Vec<usize> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| {
            n.attribute("stroke")
                .is_some_and(|c| c.eq_ignore_ascii_case(colour))
        })
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect()
}

const BLUE: &str = "#0072B2";
const VERMILION: &str = "#D55E00";
const GREEN: &str = "#009E73";
const PURPLE: &str = "#CC79A7";
const ORANGE: &str = "#E69F00";
const SKY: &str = "#56B4E9";

/// The table whose caption starts with `caption`.
fn table<'a>(html: &'a str, caption: &str) -> &'a str {
    let start = html
        .find(&format!("<caption>{caption}"))
        .unwrap_or_else(|| panic!("no table {caption:?}"));
    let end = start + html[start..].find("</table>").unwrap();
    &html[start..end]
}

/// The cells of a table's body rows, as text.
fn rows(table: &str) -> Vec<Vec<String>> {
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr>")
        .skip(1)
        .map(|r| {
            r.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find("</td>").unwrap()].replace("&#39;", "'")
                })
                .collect()
        })
        .collect()
}

fn header_row(table: &str) -> Vec<String> {
    let head = &table[table.find("<thead>").unwrap()..table.find("</thead>").unwrap()];
    head.split("<th>")
        .skip(1)
        .map(|c| c[..c.find("</th>").unwrap()].replace("&#92;", "\\"))
        .collect()
}

fn settings(interval_ns: u64) -> Settings {
    Settings {
        interval_ns,
        ..fixtures::blank_point(1).settings
    }
}

fn target(path: &str) -> TargetReport {
    TargetReport {
        path: path.into(),
        kind: TargetKind::Block,
        size_bytes: 1 << 40,
        logical_block_size: 512,
        physical_block_size: 4096,
        rotational: Some(false),
        direct: true,
        created: false,
        memory_backed: None,
        link_bytes_per_sec: None,
        link: None,
        device: None,
    }
}

fn stream(
    label: &str,
    target: usize,
    bs: u64,
    ns: u64,
    read: ClassStats,
    write: ClassStats,
) -> StreamReport {
    let rw = if write.ops > 0 || read.ops == 0 {
        Rw::Write
    } else {
        Rw::Read
    };
    StreamReport {
        samples: Vec::new(),
        bs_split: Vec::new(),
        trim: ClassReport::idle(),
        trim_pct: 0,
        label: label.into(),
        target,
        rw,
        read_pct: if rw == Rw::Read { 100 } else { 0 },
        pattern: iosurvey_model::Pattern::Forward,
        dist: Default::default(),
        bs,
        outstanding: 1,
        offset: 0,
        span: None,
        regions: 1,
        array: None,
        elapsed_ns: ns,
        read: ClassReport::new(&read, ns),
        write: ClassReport::new(&write, ns),
    }
}

// --- diskperf ---

const DISKPERF_NS: u64 = 2_000_000_000;

/// Seed 000's gist figures (MB/s), one row per size from 4 KiB, in
/// diskperf's column order: fwd_wt fwd_rd bwd_wt bwd_rd rnd_wt rnd_rd.
const DISKPERF: [[f64; 6]; 3] = [
    [0.68, 24.14, 0.69, 10.63, 0.77, 0.85],
    [1.35, 41.02, 1.36, 19.80, 1.50, 1.66],
    [2.70, 62.51, 2.66, 33.09, 2.91, 3.20],
];

fn diskperf_point(index: usize, bs: u64, col: usize, mb_per_s: f64) -> PointReport {
    let (_, pattern, op) = diskperf::COLUMNS[col];
    let ops = (mb_per_s * 1e6 * DISKPERF_NS as f64 / 1e9 / bs as f64).round() as u64;
    let mut moved = ClassStats::new();
    for i in 0..ops {
        moved.record((i * 2 / ops) as usize, bs, 100_000);
    }
    let (read, write) = if op == Op::Read {
        (moved, ClassStats::new())
    } else {
        (ClassStats::new(), moved)
    };
    let s = stream(pattern.name(), 0, bs, DISKPERF_NS, read, write);
    PointReport {
        index,
        label: format!("{bs} {pattern} {op}"),
        params: PointParams::Diskperf {
            size: bs,
            pattern,
            op,
        },
        settings: settings(1_000_000_000),
        targets: vec![target("/dev/sdz")],
        total: StreamTotals {
            read: s.read.clone(),
            write: s.write.clone(),
            whole: false,
            trim: ClassReport::idle(),
        },
        streams: vec![s],
        ..fixtures::blank_point(DISKPERF_NS)
    }
}

/// Three sizes from 4 KiB, every column (or the reads only); the random
/// write of 16 KiB fails.
pub(crate) fn diskperf_report(write: bool) -> RunReport {
    let mut points = Vec::new();
    for (row, figures) in DISKPERF.iter().enumerate() {
        for (col, &mb) in figures.iter().enumerate() {
            if write || diskperf::COLUMNS[col].2 == Op::Read {
                points.push(diskperf_point(points.len(), 4096 << row, col, mb));
            }
        }
    }
    if write {
        let p = points
            .iter_mut()
            .find(|p| p.label == "16384 random write")
            .unwrap();
        p.failure = Some(FailureReport {
            stream: 0,
            op: iosurvey_model::Op::Write,
            offset: 8192,
            errno: 5,
            error: "Input/output error".into(),
            at_ns: 1_000,
        });
    }
    fixtures::run_report("diskperf", points)
}

#[test]
fn diskperf_draws_six_lines_against_request_size() {
    let html = render_html(&diskperf_report(true));
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 1, "one chart: MB/s by request size");
    let svg = svgs[0];
    // Series colours in order: forward read, forward write, backward read...
    assert_eq!(polylines(svg, BLUE), [3, 2], "forward read, and its legend");
    assert_eq!(polylines(svg, VERMILION), [3, 2], "forward write");
    assert_eq!(polylines(svg, ORANGE), [3, 2], "random read");
    assert_eq!(
        polylines(svg, SKY),
        [2, 2],
        "random write, less its failed test"
    );
    let tips = tooltips(svg);
    for want in [
        "forward read, 4 KiB: 24.14 MB/s",
        "forward read, 16 KiB: 62.51 MB/s",
        "backward write, 8 KiB: 1.36 MB/s",
        "random write, 8 KiB: 1.50 MB/s",
        "random read, 16 KiB: 3.20 MB/s",
    ] {
        assert!(
            tips.iter().any(|t| t == want),
            "no tooltip {want:?} in {tips:?}"
        );
    }
    // 18 tests, one failed: no point for it, neither NaN nor zero.
    assert_eq!(tips.len(), 17, "{tips:?}");
    assert!(
        !tips.iter().any(|t| t.starts_with("random write, 16 KiB")),
        "{tips:?}"
    );
    let labels = texts(svg);
    for want in ["4 KiB", "8 KiB", "16 KiB", "request size (bytes, log2)"] {
        assert!(
            labels.iter().any(|t| t == want),
            "no label {want:?} in {labels:?}"
        );
    }
    assert!(!html.contains("NaN"));
}

#[test]
fn diskperf_table_has_a_row_per_size_in_diskperf_columns() {
    let html = render_html(&diskperf_report(true));
    let t = table(&html, "diskperf");
    assert_eq!(
        header_row(t),
        [
            "request size",
            "bytes",
            "fwd_wt MB/s",
            "fwd_rd MB/s",
            "bwd_wt MB/s",
            "bwd_rd MB/s",
            "rnd_wt MB/s",
            "rnd_rd MB/s"
        ]
    );
    assert_eq!(
        rows(t),
        [
            ["4 KiB", "4096", "0.68", "24.14", "0.69", "10.63", "0.77", "0.85"],
            ["8 KiB", "8192", "1.35", "41.02", "1.36", "19.80", "1.50", "1.66"],
            ["16 KiB", "16384", "2.70", "62.51", "2.66", "33.09", "-", "3.20"],
        ]
    );
}

#[test]
fn diskperf_read_only_draws_the_reads_and_leaves_the_writes_empty() {
    let html = render_html(&diskperf_report(false));
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 1);
    assert_eq!(polylines(svgs[0], BLUE), [3, 2], "forward read");
    assert_eq!(polylines(svgs[0], VERMILION), [0; 0], "no forward write");
    let tips = tooltips(svgs[0]);
    assert_eq!(tips.len(), 9, "{tips:?}");
    assert!(tips.iter().all(|t| t.contains(" read, ")), "{tips:?}");
    let cells = rows(table(&html, "diskperf"));
    assert_eq!(
        cells[1],
        ["8 KiB", "8192", "-", "41.02", "-", "19.80", "-", "1.66"]
    );
}

// --- parallel ---

const INTERVAL: u64 = 10_000_000;

/// A device that read `mb_per_s` in 1 MiB records for `ms` milliseconds,
/// recorded interval by interval.
fn device(mb_per_s: f64, ms: u64) -> ClassStats {
    let mut c = ClassStats::new();
    let per_interval = mb_per_s * 1e6 * (INTERVAL as f64 / 1e9);
    let mut carried = 0.0;
    for i in 0..(ms * 1_000_000 / INTERVAL) as usize {
        carried += per_interval;
        while carried >= 1048576.0 {
            c.record(i, 1 << 20, 5_000_000);
            carried -= 1048576.0;
        }
    }
    c
}

fn parallel_point(index: usize, rates: &[(f64, u64)]) -> PointReport {
    let streams: Vec<StreamReport> = rates
        .iter()
        .enumerate()
        .map(|(t, &(mb, ms))| {
            stream(
                &format!("dev{t}"),
                t,
                1 << 20,
                ms * 1_000_000,
                device(mb, ms),
                ClassStats::new(),
            )
        })
        .collect();
    let last = rates.iter().map(|r| r.1).max().unwrap() * 1_000_000;
    PointReport {
        index,
        label: format!("{} devices", rates.len()),
        params: PointParams::Parallel {
            devices: rates.len(),
        },
        settings: settings(INTERVAL),
        targets: (0..rates.len())
            .map(|i| target(&format!("/dev/sd{}", (b'b' + i as u8) as char)))
            .collect(),
        streams,
        ..fixtures::blank_point(last)
    }
}

/// 80 MB/s alone; the controller caps the sum near 240 MB/s, so the
/// fourth device adds little: the knee.
pub(crate) fn parallel_report() -> RunReport {
    fixtures::run_report(
        "parallel",
        vec![
            parallel_point(0, &[(80.0, 2000)]),
            parallel_point(1, &[(78.0, 2000), (78.0, 2100)]),
            parallel_point(2, &[(76.0, 2000), (76.0, 2000), (75.0, 2100)]),
            parallel_point(3, &[(60.0, 2000), (60.0, 2000), (60.0, 2000), (60.0, 2100)]),
        ],
    )
}

#[test]
fn parallel_scale_draws_bars_per_step_and_the_scaling_with_its_knee() {
    let html = render_html(&parallel_report());
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 2, "per-device bars, and scaling");
    let bars = svgs[0];
    // One bar series per step: 1 + 2 + 3 + 4 bars, in four colours.
    for (colour, n) in [(BLUE, 1), (VERMILION, 2), (GREEN, 3), (PURPLE, 4)] {
        assert_eq!(drawn(bars, "rect", "fill", colour), n, "{colour}");
    }
    let labels = texts(bars);
    for dev in ["/dev/sdb", "/dev/sdc", "/dev/sdd", "/dev/sde"] {
        assert!(
            labels.iter().any(|t| t == dev),
            "no tick {dev} in {labels:?}"
        );
    }
    let tips = tooltips(bars);
    assert_eq!(tips.len(), 10, "{tips:?}");
    assert!(
        tips.contains(&"/dev/sdb, 1 device at once: 79.7 MB/s over 2.000 s".to_string()),
        "{tips:?}"
    );
    assert!(
        tips.contains(&"/dev/sde, 4 devices at once: 59.8 MB/s over 2.000 s".to_string()),
        "{tips:?}"
    );

    let scaling = svgs[1];
    // The per-device mean (blue) over its band, the aggregate (vermilion)
    // and the ideal (green) as lines; the knee as one cross (purple).
    for colour in [BLUE, VERMILION, GREEN] {
        assert_eq!(polylines(scaling, colour), [4, 2], "{colour}");
    }
    assert_eq!(
        drawn(scaling, "polygon", "fill", BLUE),
        1,
        "the min-max band"
    );
    assert_eq!(
        drawn(scaling, "line", "stroke", PURPLE),
        2,
        "the knee's cross"
    );
    let tips = tooltips(scaling);
    for want in [
        "1 devices: aggregate 79.7 MB/s, 100.0% of ideal",
        "4 devices: aggregate 239.1 MB/s, 75.0% of ideal",
        "4 devices: ideal 318.8 MB/s",
        "3 devices: per device 75.3 MB/s mean, 75.0 min, 75.5 max",
        "knee: from 4 devices, each added device adds less than half a device's rate",
    ] {
        assert!(
            tips.iter().any(|t| t == want),
            "no tooltip {want:?} in {tips:?}"
        );
    }
    let labels = texts(scaling);
    assert!(
        labels.iter().any(|t| t == "knee at 4 devices"),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|t| t == "ideal: N x 79.7 MB/s"),
        "{labels:?}"
    );
}

#[test]
fn parallel_tables_rate_each_device_and_each_step() {
    let html = render_html(&parallel_report());
    let per_device = rows(table(&html, "Per device"));
    assert_eq!(per_device.len(), 1 + 2 + 3 + 4);
    assert_eq!(per_device[0][..3], ["1 devices", "/dev/sdb", "79.7"]);
    // The late device's tail is outside the window: fewer bytes in it
    // than in all.
    assert_eq!(per_device[2][..3], ["2 devices", "/dev/sdc", "77.6"]);
    let (window, all): (f64, f64) = (
        per_device[2][3].parse().unwrap(),
        per_device[2][5].parse().unwrap(),
    );
    assert!(window < all, "{:?}", per_device[2]);
    assert_eq!(per_device[9][..3], ["4 devices", "/dev/sde", "59.8"]);

    let steps = rows(table(&html, "Scaling"));
    assert_eq!(
        steps,
        [
            ["1", "79.7", "79.7", "79.7", "79.7", "100.0%", ""],
            ["2", "155.2", "77.6", "77.6", "77.6", "97.4%", ""],
            ["3", "226.0", "75.0", "75.3", "75.5", "94.5%", ""],
            ["4", "239.1", "59.8", "59.8", "59.8", "75.0%", "knee"],
        ]
    );
}

#[test]
fn parallel_single_step_draws_only_the_bars() {
    let r = fixtures::run_report(
        "parallel",
        vec![parallel_point(0, &[(80.0, 2000), (40.0, 2000)])],
    );
    let html = render_html(&r);
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 1);
    assert_eq!(drawn(svgs[0], "rect", "fill", BLUE), 2);
    let tips = tooltips(svgs[0]);
    assert_eq!(
        tips,
        [
            "/dev/sdb, 2 devices at once: 79.7 MB/s over 2.000 s",
            "/dev/sdc, 2 devices at once: 39.8 MB/s over 2.000 s"
        ]
    );
    assert!(!html.contains("<caption>Scaling"));
}

#[test]
fn parallel_many_steps_show_one_device_alone_and_the_most_at_once() {
    let points = (1..=6)
        .map(|n| parallel_point(n - 1, &vec![(50.0, 2000); n]))
        .collect();
    let html = render_html(&fixtures::run_report("parallel", points));
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 2);
    let bars = svgs[0];
    assert!(texts(bars).iter().any(|t| {
        t == "Per-device throughput over the common window (one device alone, and the most at once)"
    }));
    assert_eq!(drawn(bars, "rect", "fill", BLUE), 1, "one device alone");
    assert_eq!(drawn(bars, "rect", "fill", VERMILION), 6, "six at once");
    assert_eq!(drawn(bars, "rect", "fill", GREEN), 0, "no third series");
    // Six devices, each as fast as one alone: no knee.
    assert_eq!(drawn(svgs[1], "line", "stroke", PURPLE), 0);
    assert_eq!(rows(table(&html, "Per device")).len(), 21);
}

// --- survey ---

const MIB: u64 = 1 << 20;
/// Each device moves 64 MiB per point, over two devices: 128 MiB.
const PER_DEVICE: u64 = 64 * MIB;

/// A survey point: `crg` regions on each of two devices, the last ending
/// at `ms`, so its aggregate is 128 MiB over `ms`.
fn survey_point(index: usize, crg: u32, thr: u32, action: Op, ms: u64) -> PointReport {
    let write = action == Op::Write;
    let mut streams = Vec::new();
    for dev in 0..2 {
        for j in 0..u64::from(crg) {
            let span = PER_DEVICE / u64::from(crg);
            let mut c = ClassStats::new();
            for _ in 0..span / MIB {
                c.record(0, MIB, 1_000_000);
            }
            // Region j ends j ms before the last one.
            let ns = (ms - j) * 1_000_000;
            let (r, w) = if write {
                (ClassStats::new(), c)
            } else {
                (c, ClassStats::new())
            };
            let mut s = stream(&format!("dev{dev} r{j}"), dev, MIB, ns, r, w);
            s.span = Some(span);
            s.offset = j * span;
            streams.push(s);
        }
    }
    let elapsed = ms * 1_000_000;
    PointReport {
        index,
        label: format!("rsz=1MiB crg={crg} thr={thr} {}", action.name()),
        params: PointParams::Survey {
            rsz: MIB,
            crg,
            thr,
            action,
        },
        settings: settings(1_000_000_000),
        targets: vec![target("/dev/zram1"), target("/dev/zram2")],
        streams,
        ..fixtures::blank_point(elapsed)
    }
}

/// crg 1 and 2 by thr 1, 2 and 4, writes then reads; crg 2 thr 1 writes
/// fail on one region, crg 2 thr 4 writes are skipped for memory and its
/// reads interrupted.
pub(crate) fn survey_report() -> RunReport {
    let sweep = [
        (1, 1, 128, 100),
        (1, 2, 100, 80),
        (1, 4, 80, 64),
        (2, 1, 64, 50),
        (2, 2, 64, 40),
        (2, 4, 50, 50),
    ];
    let mut points = Vec::new();
    for (crg, thr, wms, rms) in sweep {
        points.push(survey_point(points.len(), crg, thr, Op::Write, wms));
        points.push(survey_point(points.len(), crg, thr, Op::Read, rms));
    }
    // crg 2 thr 1 write: a region failed.
    points[6].streams[1].write.errors.push(ErrorCount {
        errno: 5,
        name: "EIO".into(),
        count: 1,
    });
    points[10].skipped = Some("ENOMEM".into());
    points[11].interrupted = true;
    fixtures::run_report("survey", points)
}

#[test]
fn survey_draws_a_chart_per_record_size_and_action() {
    let html = render_html(&survey_report());
    let svgs = plots(&html);
    assert_eq!(svgs.len(), 2, "write and read, at one record size");
    let (write, read) = (svgs[0], svgs[1]);
    let titles = texts(write);
    assert!(
        titles
            .iter()
            .any(|t| t == "sgpdd-survey write, rsz 1 MiB, 2 devices"),
        "{titles:?}"
    );
    assert!(titles.iter().any(|t| t == "1 crg/device"), "{titles:?}");
    assert!(texts(read)
        .iter()
        .any(|t| t == "sgpdd-survey read, rsz 1 MiB, 2 devices"));
    // One line per crg: blue for 1, vermilion for 2. Write crg 2 has one
    // figure left (thr 2): a line of one point, and its marker.
    assert_eq!(polylines(write, BLUE), [3, 2]);
    assert_eq!(polylines(write, VERMILION), [1, 2]);
    assert_eq!(
        drawn(write, "polygon", "fill", VERMILION),
        1,
        "one triangle"
    );
    assert_eq!(polylines(read, BLUE), [3, 2]);
    let w = tooltips(write);
    assert_eq!(
        w,
        [
            "crg 1, thr 1: 1000.00 MiB/s [500.00, 500.00] per region",
            "crg 1, thr 2: 1280.00 MiB/s [640.00, 640.00] per region",
            "crg 1, thr 4: 1600.00 MiB/s [800.00, 800.00] per region",
            "crg 2, thr 2: 2000.00 MiB/s [500.00, 507.94] per region",
        ]
    );
    let r = tooltips(read);
    assert_eq!(r.len(), 5, "{r:?}");
    assert!(
        r.contains(&"crg 2, thr 2: 3200.00 MiB/s [800.00, 820.51] per region".to_string()),
        "{r:?}"
    );
    assert_eq!(
        polylines(read, VERMILION),
        [2, 2],
        "read crg 2, less the interrupted point"
    );
}

#[test]
fn survey_pivots_crg_by_thr_per_record_size_and_action() {
    let html = render_html(&survey_report());
    let write = table(&html, "sgpdd-survey write, rsz 1 MiB, 2 devices");
    assert_eq!(header_row(write), ["crg \\ thr", "1", "2", "4"]);
    assert_eq!(
        rows(write),
        [
            ["1", "1000.00", "1280.00", "1600.00"],
            ["2", "1 failed", "2000.00", "ENOMEM"],
        ]
    );
    let read = table(&html, "sgpdd-survey read, rsz 1 MiB, 2 devices");
    assert_eq!(
        rows(read),
        [
            ["1", "1280.00", "1600.00", "2000.00"],
            ["2", "2560.00", "3200.00", "interrupted"],
        ]
    );
}
