//! The HTML report of `matrix`, `profile` and `video` from fixed reports
//! (no I/O): how many plots each mode draws, that each is well-formed SVG
//! with its series drawn and tooltips naming the figures, and that the
//! mode's tables hold the figures the text presenters compute.

use iosurvey_model::document::*;
use iosurvey_model::{FrameRecord, FrameStatus, PointParams, ProfilePosition};
use iosurvey_report::*;
use iosurvey_stats::ClassStats;

use crate::fixtures;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const MIB: u64 = 1 << 20;

// ---- reading the page ----

/// The inline SVG documents of a page, in order.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("an <svg> is closed") + start + 6;
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

/// What one SVG draws: the lines of its series, its markers and bars, its
/// tooltips and its text.
struct Drawn {
    /// Series lines (and dashed marks) as (colour, points): the axes and
    /// ticks are black and 1 wide, the legend's swatches 3 wide.
    lines: Vec<(String, usize)>,
    /// Markers and bars: visible circles, polygons and rectangles that are
    /// not the white background or the legend's box.
    shapes: usize,
    tips: Vec<String>,
    texts: Vec<String>,
}

fn drawn(svg: &str) -> Drawn {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    let mut d = Drawn {
        lines: Vec::new(),
        shapes: 0,
        tips: Vec::new(),
        texts: Vec::new(),
    };
    for n in doc.descendants().filter(|n| n.is_element()) {
        let invisible = n.attribute("fill-opacity") == Some("0")
            || matches!(n.attribute("fill"), Some("#FFFFFF" | "none") | None);
        match n.tag_name().name() {
            "polyline" if n.attribute("stroke-width") == Some("2") => {
                let points = n.attribute("points").unwrap_or_default();
                let stroke = n.attribute("stroke").unwrap_or_default();
                d.lines
                    .push((stroke.into(), points.split_whitespace().count()));
            }
            "circle" | "rect" | "polygon" if !invisible => d.shapes += 1,
            "title" => d.tips.push(n.text().unwrap_or_default().to_string()),
            "text" => d
                .texts
                .push(n.text().unwrap_or_default().trim().to_string()),
            _ => {}
        }
    }
    d
}

impl Drawn {
    fn tip(&self, want: &str) -> bool {
        self.tips.iter().any(|t| t == want)
    }

    fn text(&self, want: &str) -> bool {
        self.texts.iter().any(|t| t == want)
    }

    /// Lines of `points` points (a series through that many).
    fn lines_of(&self, points: usize) -> usize {
        self.lines.iter().filter(|l| l.1 == points).count()
    }
}

/// The plots of a report's page, each checked to parse and draw something.
fn plots(r: &RunReport) -> (String, Vec<Drawn>) {
    let html = render_html(r);
    let d: Vec<Drawn> = svgs(&html).into_iter().map(drawn).collect();
    for (i, p) in d.iter().enumerate() {
        assert!(!p.tips.is_empty(), "plot {i} has no tooltip");
        assert!(
            !p.lines.is_empty() || p.shapes > 0,
            "plot {i} draws nothing"
        );
    }
    (html, d)
}

/// The `<table>` whose caption starts with `caption`.
fn table<'a>(html: &'a str, caption: &str) -> &'a str {
    let at = html
        .find(&format!("<caption>{caption}"))
        .unwrap_or_else(|| panic!("no table {caption}"));
    let end = html[at..].find("</table>").unwrap() + at;
    &html[at..end]
}

/// The cells of the row of `table` whose first cell is `first`.
fn row(table: &str, first: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.starts_with("<tr><td") && l.contains(&format!(">{first}</td>")))
        .unwrap_or_else(|| panic!("no row {first} in {table}"));
    line.split("</td>")
        .filter_map(|c| c.rfind('>').map(|i| c[i + 1..].to_string()))
        .filter(|c| !c.is_empty() || line.contains("<td></td>"))
        .collect()
}

// ---- matrix ----

fn class(ops: u64, bs: u64, lat_ns: u64, elapsed_ns: u64) -> ClassReport {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, bs, lat_ns + (i % 100) * 1000);
    }
    ClassReport::new(&c, elapsed_ns)
}

fn stream(label: &str, bs: u64, n: u32, read: ClassReport, elapsed_ns: u64) -> StreamReport {
    StreamReport {
        samples: Vec::new(),
        bs_split: Vec::new(),
        trim: ClassReport::idle(),
        trim_pct: 0,
        label: label.into(),
        target: 0,
        rw: iosurvey_model::document::Rw::Read,
        read_pct: 100,
        pattern: iosurvey_model::Pattern::Random,
        dist: Default::default(),
        bs,
        outstanding: n,
        offset: 0,
        span: None,
        regions: 0,
        array: None,
        elapsed_ns,
        write: class(0, bs, 0, elapsed_ns),
        read,
    }
}

/// Cell (small, large) of a 15 s matrix point: 3000 small reads per
/// outstanding small I/O shared with the large load, 1 MiB large reads
/// levelling off at 2217 per point.
fn matrix_point(index: usize, small: u32, large: u32) -> PointReport {
    let e = 15 * SEC;
    let mut streams = Vec::new();
    if small > 0 {
        let ops = u64::from(small) * 3000 / (1 + u64::from(large));
        let lat = (3000 + 500 * u64::from(large)) * 1000;
        streams.push(stream("small", 4096, small, class(ops, 4096, lat, e), e));
    }
    if large > 0 {
        let ops = (u64::from(large) * 1100).min(2217) / (1 + u64::from(small) / 4);
        streams.push(stream("large", MIB, large, class(ops, MIB, 20 * MS, e), e));
    }
    PointReport {
        index,
        label: format!("point {index}"),
        params: PointParams::Matrix { small, large },
        streams,
        ..fixtures::blank_point(e)
    }
}

pub(crate) fn matrix_report() -> RunReport {
    let mut points = Vec::new();
    for large in [0, 1, 2] {
        for small in [0, 1, 2] {
            if (small, large) != (0, 0) {
                points.push(matrix_point(points.len(), small, large));
            }
        }
    }
    fixtures::run_report("matrix", points)
}

#[test]
fn matrix_plots_iops_latency_and_mbps_one_line_per_level_of_the_other_load() {
    let (_, p) = plots(&matrix_report());
    assert_eq!(p.len(), 6, "three plots, then three heatmaps");
    // Small IOPS: a line through small 1 and 2 for each large level.
    assert_eq!((p[0].lines.len(), p[0].lines_of(2)), (3, 3));
    assert!(p[0].tip("large=0: outstanding small I/Os 1, small IOPS (reads + writes) 200"));
    assert!(p[0].tip("large=1: outstanding small I/Os 2, small IOPS (reads + writes) 200"));
    assert!(p[0].tip("large=2: outstanding small I/Os 2, small IOPS (reads + writes) 133"));
    // Mean latency: 3 ms plus 0 to 99 µs, 0.5 ms more per large level.
    assert!(p[1].tip("large=0: outstanding small I/Os 1, mean small latency (µs) 3050"));
    assert!(p[1].tip("large=2: outstanding small I/Os 1, mean small latency (µs) 4050"));
    // Large MB/s against the large load, one line per small level.
    assert_eq!((p[2].lines.len(), p[2].lines_of(2)), (3, 3));
    assert!(p[2].tip("small=0: outstanding large I/Os 2, large MB/s (10^6 bytes/s) 154"));
    assert!(p[2].tip("small=2: outstanding large I/Os 1, large MB/s (10^6 bytes/s) 76.9"));
    assert!(p[0].text("outstanding small I/Os") && p[2].text("large MB/s (10^6 bytes/s)"));
}

/// The cells of a heatmap: (tooltip, fill) of each `<g>` that has one.
fn heat_cells(svg: &str) -> Vec<(String, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("g"))
        .filter_map(|g| {
            let tip = g.children().find(|n| n.has_tag_name("title"))?;
            let rect = g.children().find(|n| n.has_tag_name("rect"))?;
            Some((
                tip.text().unwrap_or_default().to_string(),
                rect.attribute("fill").unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

#[test]
fn matrix_heatmaps_colour_each_cell_of_the_grid_by_its_figure() {
    let (html, p) = plots(&matrix_report());
    let heat = &svgs(&html)[3..];
    assert_eq!(heat.len(), 3);
    assert!(heat[0].contains("Small IOPS") && heat[1].contains("Large MB/s"));
    assert!(heat[2].contains("Mean small latency"));
    // Small IOPS: small 1 and 2 across, large 0 to 2 down; every cell
    // written in it and in its tooltip, the highest darkest.
    let iops = heat_cells(heat[0]);
    assert_eq!(iops.len(), 6, "{iops:?}");
    let fill = |cells: &[(String, String)], tip: &str| {
        cells
            .iter()
            .find(|c| c.0 == tip)
            .unwrap_or_else(|| panic!("no cell {tip}: {cells:?}"))
            .1
            .clone()
    };
    assert_eq!(fill(&iops, "small 2, large 0: 400 IOPS"), "#0072B2");
    assert_eq!(fill(&iops, "small 1, large 2: 66.7 IOPS"), "#F0F7FC");
    let mid = fill(&iops, "small 2, large 1: 200 IOPS");
    assert!(mid != "#0072B2" && mid != "#F0F7FC", "{mid}");
    for v in ["400", "200", "66.7", "133"] {
        assert!(p[3].text(v), "{v} not written in its cell");
    }
    // The legend: the scale's ends with their figures.
    assert!(p[3].text("IOPS") && p[3].text("66.7"));
    assert!(p[3].text("outstanding small I/Os (across), large I/Os (down)"));
    // Large MB/s: the cells that ran large I/O only (large 1 and 2).
    let mbps = heat_cells(heat[1]);
    assert_eq!(mbps.len(), 6, "{mbps:?}");
    assert!(mbps.iter().all(|c| !c.0.contains("large 0")));
}

#[test]
fn matrix_tables_are_orions_three_matrices() {
    let html = render_html(&matrix_report());
    let mbps = table(&html, "Large MB/s");
    assert!(
        mbps.contains("<th>Large/Small</th><th>0</th><th>1</th><th>2</th>"),
        "{mbps}"
    );
    assert_eq!(row(mbps, "2"), ["2", "153.79", "153.79", "153.79"]);
    let iops = table(&html, "Small IOPS");
    assert!(
        iops.contains("<th>Large/Small</th><th>1</th><th>2</th></tr>"),
        "{iops}"
    );
    assert_eq!(row(iops, "0"), ["0", "200", "400"]);
    assert_eq!(row(iops, "2"), ["2", "67", "133"]);
    let lat = table(&html, "Mean small latency");
    assert_eq!(row(lat, "1"), ["1", "3549.47", "3549.47"]);
    // The CSV presenter lays out the same figures.
    let csv = matrix::render_matrix_csv(&matrix_report(), matrix::Metric::Iops);
    assert!(csv.contains("          2,     67,    133"), "{csv}");
}

// ---- profile ----

/// MB/s of the ten zones of a 1000 MiB device: fast, then half speed.
const RATES: [f64; 10] = [
    520.0, 515.0, 508.0, 500.0, 490.0, 480.0, 260.0, 255.0, 250.0, 245.0,
];
const ZONE: u64 = 100 * MIB;

fn profile_point(index: usize, position: ProfilePosition, s: StreamReport) -> PointReport {
    PointReport {
        index,
        label: "renamed: the plots go by the parameters".into(),
        params: PointParams::Profile { position },
        streams: vec![s],
        ..fixtures::blank_point(SEC)
    }
}

/// `ops` reads of `bs` bytes in `elapsed_ns`, each taking `lat_ns` and up
/// to 99 ns more.
fn reads(
    label: &str,
    bs: u64,
    offset: u64,
    ops: u64,
    lat_ns: u64,
    elapsed_ns: u64,
) -> StreamReport {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, bs, lat_ns + i % 100);
    }
    StreamReport {
        offset,
        span: Some(ZONE),
        ..stream(label, bs, 1, ClassReport::new(&c, elapsed_ns), elapsed_ns)
    }
}

pub(crate) fn profile_report() -> RunReport {
    let mut points: Vec<PointReport> = RATES
        .iter()
        .enumerate()
        .map(|(i, &mb)| {
            let elapsed = (64.0 * MIB as f64 / (mb * 1e6) * 1e9).round() as u64;
            let offset = i as u64 * ZONE;
            let position = ProfilePosition::Zone {
                index: i as u32,
                offset,
                len: ZONE,
            };
            let s = reads("zone", MIB, offset, 64, elapsed / 64, elapsed);
            profile_point(i, position, s)
        })
        .collect();
    let access = reads("access", 4096, 0, 1000, 8 * MS, 8050 * MS);
    points.push(profile_point(10, ProfilePosition::Access, access));
    let burst = reads("burst", MIB, 0, 256, 400_000, 128 * MS);
    let position = ProfilePosition::Burst { bs: MIB, area: MIB };
    points.push(profile_point(11, position, burst));
    fixtures::run_report("profile", points)
}

#[test]
fn profile_plots_rate_against_position_access_times_and_burst() {
    let (_, p) = plots(&profile_report());
    assert_eq!(p.len(), 3);
    // The zones: one line, its markers, and the tooltips of each.
    let zones = &p[0];
    assert_eq!(zones.lines_of(10), 1);
    assert_eq!(zones.shapes, 10);
    assert_eq!(zones.tips.len(), 10);
    assert!(
        zones.tip("zone 5: 524.3 to 629.1 MB, 480.0 MB/s"),
        "{:?}",
        zones.tips
    );
    assert!(zones.tip("zone 9: 943.7 to 1048.6 MB, 245.0 MB/s"));
    // Minimum, average (of the zones) and maximum as named lines.
    for name in ["minimum (245)", "average (402)", "maximum (520)"] {
        assert!(zones.text(name), "{name}: {:?}", zones.texts);
    }
    assert!(zones.text("zone start (MB)"));
    // Access times: percentiles of 1000 reads near 8 ms, the mean a line.
    let access = &p[1];
    assert!(access.text("Access time percentiles (1000 random 4096-byte reads, QD 1)"));
    assert!(access.tip("p90: 8.00ms") && access.tip("p99.9: 8.00ms"));
    assert_eq!(access.lines_of(61), 1, "{:?}", access.lines);
    assert!(access.text("mean (8.00ms)"), "{:?}", access.texts);
    // Burst beside the sustained rates: four bars.
    assert!(p[2].tip("burst: 2097.2 MB/s"), "{:?}", p[2].tips);
    assert!(p[2].tip("average: 402.3 MB/s"));
    assert_eq!(p[2].shapes, 4);
}

#[test]
fn profile_tables_hold_the_zones_and_hd_tunes_figures() {
    let html = render_html(&profile_report());
    let zones = table(&html, "Zones");
    assert_eq!(
        row(zones, "6"),
        ["6", "629.1", "104.9", "60.0", "67108864", "0.258", "260.0"]
    );
    let figures = table(&html, "HD Tune");
    assert_eq!(
        row(figures, "transfer rate minimum"),
        ["transfer rate minimum", "245.0 MB/s", "zone 9 at 943.7 MB"]
    );
    assert_eq!(row(figures, "transfer rate average")[1], "402.3 MB/s");
    let access = row(figures, "access time");
    assert_eq!(access[1], "8.00ms mean");
    assert!(
        access[2].ends_with("(1000 random 4096-byte reads)"),
        "{access:?}"
    );
    assert_eq!(
        row(figures, "burst rate"),
        [
            "burst rate",
            "2097.2 MB/s",
            "256 x 1048576-byte reads of the first 1048576 bytes"
        ]
    );
}

#[test]
fn a_profile_without_burst_or_access_points_draws_only_the_zones() {
    let mut r = profile_report();
    r.points.truncate(10);
    let (html, p) = plots(&r);
    assert_eq!(p.len(), 1);
    assert!(!html.contains("burst rate"));
}

// ---- video ----

const HD422: u64 = 4_149_248;
const HD4444: u64 = 8_294_400;

fn frame(frame: u64, end_ns: u64, ns: u64, bytes: u64, status: FrameStatus) -> FrameRecord {
    FrameRecord {
        frame,
        thread: 0,
        start_ns: end_ns - ns,
        end_ns,
        open_ns: 500_000.min(ns / 4),
        io_ns: ns - 2 * 500_000.min(ns / 4),
        close_ns: 500_000.min(ns / 4),
        bytes,
        status,
        errno: None,
    }
}

fn video_point(
    format: &str,
    frame_bytes: u64,
    fps: Option<iosurvey_model::Fps>,
    records: Vec<FrameRecord>,
    elapsed_ns: u64,
) -> PointReport {
    let f = FramesReport {
        layout: iosurvey_model::document::FramesLayout::Files,
        op: iosurvey_model::Op::Read,
        format: format.into(),
        frame_bytes,
        header_bytes: 0,
        frames: records.len() as u64,
        loops: 1,
        threads: 1,
        depth: 1,
        fps,
        queue: 4,
        order: iosurvey_model::FrameOrder::Forward,
        files_per_dir: 0,
        records,
        summary: None,
    };
    PointReport {
        label: "read".into(),
        params: PointParams::Video,
        frames: Some(f),
        ..fixtures::blank_point(elapsed_ns)
    }
}

/// 48 hd-422 frames read at 24 fps over 2 s, 20 ms each, but frames 10 to
/// 12 skipped and frames 20 and 30 late after 200 ms.
pub(crate) fn paced() -> RunReport {
    let interval = SEC / 24;
    let records = (0..48u64)
        .map(|i| {
            let start = i * interval;
            match i {
                10..=12 => FrameRecord {
                    start_ns: start + 4 * interval,
                    open_ns: 0,
                    io_ns: 0,
                    close_ns: 0,
                    ..frame(i, start + 4 * interval, 0, 0, FrameStatus::Skipped)
                },
                20 | 30 => frame(i, start + 200 * MS, 200 * MS, HD422, FrameStatus::Late),
                _ => frame(i, start + 20 * MS, 20 * MS, HD422, FrameStatus::Done),
            }
        })
        .collect();
    let p = video_point(
        "hd-422",
        HD422,
        Some(iosurvey_model::Fps { num: 24, den: 1 }),
        records,
        2 * SEC,
    );
    fixtures::run_report("video", vec![p])
}

/// 120 hd-4444 frames written unpaced over 12 s, ten ending in each second;
/// frame times by frame number modulo 10 from 4 to 90 ms.
pub(crate) fn unpaced() -> RunReport {
    const TIMES_MS: [u64; 10] = [4, 5, 6, 8, 12, 15, 25, 40, 60, 90];
    let records = (0..120u64)
        .map(|i| {
            let end = (i / 10) * SEC + (i % 10 + 1) * 90 * MS;
            frame(
                i,
                end,
                TIMES_MS[(i % 10) as usize] * MS,
                HD4444,
                FrameStatus::Done,
            )
        })
        .collect();
    let p = video_point("hd-4444", HD4444, None, records, 12 * SEC);
    fixtures::run_report("video", vec![p])
}

#[test]
fn paced_video_plots_frame_times_with_the_period_and_late_frames_marked() {
    let (_, p) = plots(&paced());
    assert_eq!(p.len(), 3);
    let times = &p[0];
    // 43 in time, 2 late, 3 skipped: one marker and one tooltip each.
    assert_eq!(times.tips.len(), 48);
    assert!(times.shapes >= 48);
    assert!(times
        .tip("frame 20 late: 200.000 ms (open 0.500, I/O 199.000, close 0.500), ended at 1.033 s"));
    assert!(times.tip("frame 11: skipped at 0.625 s, not started before its deadline"));
    assert!(
        times.text("frame period, 1/24 s (41.7)"),
        "{:?}",
        times.texts
    );
    for name in ["in time", "late", "skipped (no I/O)"] {
        assert!(times.text(name), "{name}");
    }
    // Whole seconds: 20 frames ended in the first, 25 in the second.
    let rate = &p[1];
    let blue = |d: &Drawn| d.lines.iter().filter(|l| l.0 == "#0072B2").count();
    assert_eq!(blue(rate), 1, "one line of the data rate: {:?}", rate.lines);
    assert!(
        rate.tip("0 s to 1 s: 20 frames, 83.0 MB/s"),
        "{:?}",
        rate.tips
    );
    assert!(rate.tip("1 s to 2 s: 25 frames, 103.7 MB/s"));
    assert!(rate.text("needed at 24 fps (99.6)"), "{:?}", rate.texts);
    // The histogram of frame times: 43 near 20 ms, 2 at 200 ms.
    assert!(p[2].tip("<50 ms: 43 frames"), "{:?}", p[2].tips);
    assert!(p[2].tip(">=1 s: 0 frames"));
}

#[test]
fn paced_video_table_gives_the_verdict_as_the_text_does() {
    let html = render_html(&paced());
    let s = table(&html, "Summary");
    assert_eq!(row(s, "frames tested")[1], "48");
    assert_eq!(row(s, "frames transferred")[1], "43 in time");
    assert_eq!(
        row(s, "frames dropped")[1],
        "5 (3 not started in time, 2 finished late)"
    );
    assert_eq!(row(s, "frames per second achieved")[1], "22.5 fps");
    assert_eq!(
        row(s, "real time at 24 fps")[1],
        "NOT held (5 of 48 frames dropped, 0 failed)"
    );
    let d = table(&html, "Averaged details");
    assert_eq!(row(d, "overall")[1], "45");
    assert!(!html.contains("Real-time verdict"));
}

#[test]
fn unpaced_video_plots_and_judges_every_preset() {
    let r = unpaced();
    let (html, p) = plots(&r);
    assert_eq!(p.len(), 3);
    assert_eq!(p[0].tips.len(), 120);
    assert!(!p[0].texts.iter().any(|t| t.starts_with("frame period")));
    assert!(p[0].tip(
        "frame 9 transferred: 90.000 ms (open 0.500, I/O 89.000, close 0.500), ended at 0.900 s"
    ));
    // Ten frames of 8.29 MB in each of the 12 seconds.
    assert!(
        p[1].tip("11 s to 12 s: 10 frames, 82.9 MB/s"),
        "{:?}",
        p[1].tips
    );
    assert!(p[1].text("overall (82.9)"), "{:?}", p[1].texts);
    assert!(p[2].tip("<5 ms: 12 frames") && p[2].tip("<10 ms: 36 frames"));
    let s = table(&html, "Summary");
    assert_eq!(row(s, "frames transferred")[1], "120");
    assert_eq!(
        row(s, "slowest 1 s window")[1],
        format_rate(82_944_000.0, TextOptions { mib: false })
    );
    let v = table(&html, "Real-time verdict");
    assert!(v.contains("hd-4444 (tested)"), "{v}");
    let tested = row(v, "hd-4444 (tested)");
    // 82.9 MB/s against 8.29 MB frames at 24 fps (199 MB/s): no.
    assert_eq!(tested[1], "8.29");
    assert_eq!(tested[2], "0.42x no");
}

#[test]
fn kept_records_only_cover_the_seconds_they_cover_in_full() {
    let mut r = paced();
    let p = &mut r.points[0];
    let f = p.frames.as_mut().unwrap();
    // The summary counts every frame; the records keep the first 30.
    f.summary = Some(FramesSummary::from_records(&f.records, p.elapsed_ns));
    f.records.truncate(30);
    let (html, p) = plots(&r);
    assert_eq!(p.len(), 3);
    assert_eq!(p[0].tips.len(), 30);
    // Frame 29 started at 1.208 s: only the first second is whole.
    assert!(p[1].text("Data rate per second (the first 30 of 48 frames are kept)"));
    assert_eq!(p[1].tips, ["0 s to 1 s: 20 frames, 83.0 MB/s"]);
    // The histogram and the summary still count all 48.
    assert!(p[2].tip("<50 ms: 43 frames"));
    let s = table(&html, "Summary");
    assert_eq!(row(s, "frames tested")[1], "48");
    assert_eq!(
        row(s, "per-frame records")[1],
        "the first 30 of 48 are kept; the counts here hold all"
    );
}
