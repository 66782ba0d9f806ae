//! The profile presenters from fixed results (no I/O): a snapshot of the
//! chart and HD Tune's summary lines, the figures they are built from, and
//! the CSV, all rebuilt from the report's streams alone.

use iosurvey_model::document::*;
use iosurvey_report::profile::*;
use iosurvey_report::*;

use crate::fixtures;
use iosurvey_model::{Pattern, PointParams, ProfilePosition, TargetKind};
use iosurvey_stats::ClassStats;

const MIB: u64 = 1 << 20;
/// Ten zones of a 1000 MiB device: 100 MiB apart.
const ZONE_LEN: u64 = 100 * MIB;
/// A device that halves its speed part-way: MB/s of each zone.
const RATES: [f64; 10] = [
    520.0, 515.0, 508.0, 500.0, 490.0, 480.0, 260.0, 255.0, 250.0, 245.0,
];

/// `ops` reads of `bs` bytes, each taking `lat_ns`.
fn class(ops: u64, bs: u64, lat_ns: u64) -> ClassStats {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, bs, lat_ns + i % 100);
    }
    c
}

fn target(path: &str) -> TargetReport {
    TargetReport {
        path: path.into(),
        kind: TargetKind::Block,
        size_bytes: 1000 * MIB,
        logical_block_size: 512,
        physical_block_size: 4096,
        rotational: Some(true),
        direct: true,
        created: false,
        memory_backed: None,
        link_bytes_per_sec: None,
        link: None,
        device: None,
    }
}

/// One point of one read stream labelled `label`.
fn point(
    index: usize,
    label: &str,
    stream: (&str, Pattern, u64, u64, Option<u64>),
    read: ClassStats,
    elapsed_ns: u64,
) -> PointReport {
    let (slabel, pattern, bs, offset, span) = stream;
    let read = ClassReport::new(&read, elapsed_ns);
    let write = ClassReport::new(&ClassStats::new(), elapsed_ns);
    PointReport {
        repeat: 0,
        index,
        label: label.into(),
        params: PointParams::Profile {
            position: match slabel {
                "zone" => ProfilePosition::Zone {
                    index: index as u32,
                    offset,
                    len: span.unwrap_or(0),
                },
                "access" => ProfilePosition::Access,
                _ => ProfilePosition::Burst {
                    bs,
                    area: span.unwrap_or(0),
                },
            },
        },
        settings: Settings {
            engine: iosurvey_model::EngineKind::Sync,
            workers: 1,
            direct: true,
            seed: 0,
            time_ns: None,
            bytes: Some(64 * MIB),
            ramp_ns: 0,
            warm_bytes: 0,
            rate: None,
            interval_ns: 1_000_000_000,
            continue_on_error: false,
            registered_files: false,
            fixed_buffers: false,
            reap_window_us: None,
            empty_wakeups: 0,
            wrap: false,
            sqpoll: false,
            sqpoll_cpu: None,
            hipri: false,
            cpus: vec![],
            unique_blocks: true,
            unique_sectors: true,
            data_nonce: None,
            compressible_pct: 0,
            stream_detail: Default::default(),
        },
        targets: vec![target("/dev/sdb")],
        elapsed_ns,
        first_done_ns: elapsed_ns,
        interrupted: false,
        skipped: None,
        cpu_user_ns: elapsed_ns / 100,
        cpu_system_ns: elapsed_ns / 50,
        cpu_workers_ns: elapsed_ns / 25,
        cpu_us_per_io: None,
        failure: None,
        warnings: Vec::new(),
        streams: vec![StreamReport {
            samples: Vec::new(),
            bs_split: Vec::new(),
            trim: ClassReport::idle(),
            trim_pct: 0,
            label: slabel.into(),
            target: 0,
            rw: iosurvey_model::document::Rw::Read,
            read_pct: 100,
            pattern,
            dist: Default::default(),
            bs,
            outstanding: 1,
            offset,
            span,
            regions: 1,
            array: None,
            elapsed_ns,
            read: read.clone(),
            write: write.clone(),
        }],
        total: StreamTotals {
            read,
            write,
            whole: false,
            trim: ClassReport::idle(),
        },
        frames: None,
        verify: None,
        compression_check: None,
        ranks: Vec::new(),
        windows: None,
    }
}

/// Ten zones reading 64 MiB each at `RATES`, an access-time point of 1000
/// 4 KiB reads near 8 ms, and a burst point.
fn report() -> RunReport {
    let mut points: Vec<PointReport> = RATES
        .iter()
        .enumerate()
        .map(|(i, &mb)| {
            let bytes = 64 * MIB;
            let elapsed = (bytes as f64 / (mb * 1e6) * 1e9).round() as u64;
            point(
                i,
                &format!("zone {i}"),
                (
                    "zone",
                    Pattern::Forward,
                    MIB,
                    i as u64 * ZONE_LEN,
                    Some(ZONE_LEN),
                ),
                class(64, MIB, elapsed / 64),
                elapsed,
            )
        })
        .collect();
    points.push(point(
        10,
        "access time",
        ("access", Pattern::Random, 4096, 0, Some(10 * ZONE_LEN)),
        class(1000, 4096, 8_000_000),
        8_050_000_000,
    ));
    points.push(point(
        11,
        "burst 1MiB over 1MiB",
        ("burst", Pattern::Forward, MIB, 0, Some(MIB)),
        class(256, MIB, 400_000),
        128_000_000,
    ));
    fixtures::run_report("profile", points)
}

fn mb() -> TextOptions {
    TextOptions { mib: false }
}

#[test]
fn profile_chart_and_summary() {
    let text = render_profile(&report(), mb());
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn the_chart_has_one_row_per_zone_with_bars_scaled_to_the_fastest() {
    let text = render_profile(&report(), mb());
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() >= 3 && w[0].parse::<u32>().is_ok() && w[1].parse::<f64>().is_ok()
        })
        .collect();
    assert_eq!(rows.len(), 10, "{text}");
    let bar = |r: &str| r.chars().filter(|&c| c == '#').count();
    assert_eq!(bar(rows[0]), 50);
    // The step: zones 6 to 9 run at half speed, half a bar.
    assert!(
        rows[6..].iter().all(|r| (23..=26).contains(&bar(r))),
        "{text}"
    );
    assert!(
        rows[5].contains(" 524.3 ") && rows[5].trim_start().starts_with("5 "),
        "{text}"
    );
}

#[test]
fn figures_come_from_the_streams_not_the_labels() {
    let mut r = report();
    for p in &mut r.points {
        p.label = "renamed".into();
        for s in &mut p.streams {
            s.label = "renamed".into();
        }
    }
    let zones = profile_zones(&r);
    assert_eq!(zones.len(), 10);
    for (z, &mb) in zones.iter().zip(&RATES) {
        assert_eq!(z.offset, z.index as u64 * ZONE_LEN);
        assert_eq!((z.span, z.bytes), (ZONE_LEN, 64 * MIB));
        assert!((z.rate.unwrap() / 1e6 - mb).abs() < 0.01, "{z:?}");
    }
    let a = access_time(&r).unwrap();
    assert_eq!((a.ops, a.bs), (1000, 4096));
    assert!((a.mean_ns - 8_000_050.0).abs() < 10_000.0, "{a:?}");
    assert!(a.p99_ns.unwrap() >= 8_000_000, "{a:?}");
    let b = burst(&r).unwrap();
    assert_eq!((b.ops, b.span), (256, MIB));
    assert!((b.rate.unwrap() - 256.0 * MIB as f64 / 0.128).abs() < 1.0);
}

#[test]
fn mib_changes_units_of_rates_and_positions() {
    let text = render_profile(&report(), TextOptions { mib: true });
    assert!(text.contains("at MiB") && text.contains("MiB/s"), "{text}");
    assert!(!text.contains("MB/s"), "{text}");
    let row = text.lines().find(|l| l.starts_with("   1 ")).unwrap();
    assert!(row.contains(" 100.0 "), "zone 1 starts at 100 MiB: {row}");
}

#[test]
fn csv_has_one_row_per_zone_with_offset_bytes_and_rate() {
    let csv = render_profile_csv(&report());
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "zone,offset,span,bytes,elapsed_ns,mb_per_s");
    assert_eq!(lines.len(), 11, "{csv}");
    let cells: Vec<&str> = lines[7].split(',').collect();
    assert_eq!(&cells[..4], ["6", "629145600", "104857600", "67108864"]);
    let mb: f64 = cells[5].parse().unwrap();
    assert!((mb - 260.0).abs() < 0.01, "{mb}");
}

#[test]
fn a_zone_that_read_nothing_shows_a_dash_and_is_left_out_of_the_figures() {
    let mut r = report();
    r.points[3].streams[0].read = ClassReport::new(&ClassStats::new(), 0);
    r.points[3].interrupted = true;
    let text = render_profile(&r, mb());
    let row = text.lines().find(|l| l.starts_with("   3 ")).unwrap();
    assert!(row.trim_end().ends_with('-') && !row.contains('#'), "{row}");
    assert!(text.contains("mean of 9 zones"), "{text}");
    assert!(text.contains("INTERRUPTED"), "{text}");
}
