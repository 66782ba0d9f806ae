//! The diskperf presenters from fixed results (no I/O): snapshots of the
//! text layout with and without writes and with the real-time block, and
//! the CSV, all rebuilt from the report's streams alone.

use iosurvey_model::document::*;
use iosurvey_model::{Op, PointParams};
use iosurvey_report::diskperf::*;
use iosurvey_report::*;

use crate::fixtures;
use iosurvey_model::TargetKind;
use iosurvey_stats::ClassStats;

const ELAPSED: u64 = 2_000_000_000;

/// Figures of seed 000's gist run (MB/s), one row per size.
const FIGURES: [[f64; 6]; 3] = [
    [0.68, 24.14, 0.69, 10.63, 0.77, 0.85],
    [1.35, 41.02, 1.36, 19.80, 1.50, 1.66],
    [2.70, 62.51, 2.66, 33.09, 2.91, 3.20],
];

fn class(ops: u64, bs: u64) -> ClassStats {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record((i * 2 / ops.max(1)) as usize, bs, 100_000 + i % 1000);
    }
    c
}

fn point(index: usize, bs: u64, col: usize, mb_per_s: f64) -> PointReport {
    let (name, pattern, op) = COLUMNS[col];
    let ops = (mb_per_s * 1e6 * ELAPSED as f64 / 1e9 / bs as f64).round() as u64;
    let moved = ClassReport::new(&class(ops, bs), ELAPSED);
    let idle = ClassReport::new(&ClassStats::new(), ELAPSED);
    let (read, write) = if op == Op::Read {
        (moved, idle)
    } else {
        (idle, moved)
    };
    PointReport {
        index,
        label: format!("{bs} {name}"),
        params: PointParams::Diskperf {
            size: bs,
            pattern,
            op,
        },
        settings: Settings {
            engine: iosurvey_model::EngineKind::Sync,
            workers: 1,
            direct: true,
            seed: 0,
            time_ns: Some(ELAPSED),
            bytes: None,
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
        targets: vec![TargetReport {
            path: "/d/test".into(),
            kind: TargetKind::File,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: None,
            direct: true,
            created: true,
            memory_backed: None,
            link_bytes_per_sec: None,
            link: None,
            device: None,
        }],
        elapsed_ns: ELAPSED,
        streams: vec![StreamReport {
            samples: Vec::new(),
            bs_split: Vec::new(),
            trim: ClassReport::idle(),
            trim_pct: 0,
            label: name.into(),
            target: 0,
            rw: if op == Op::Read { Rw::Read } else { Rw::Write },
            read_pct: if op == Op::Read { 100 } else { 0 },
            pattern,
            dist: Default::default(),
            bs,
            outstanding: 1,
            offset: 0,
            span: None,
            regions: 0,
            array: None,
            elapsed_ns: ELAPSED,
            read: read.clone(),
            write: write.clone(),
        }],
        total: StreamTotals {
            read,
            write,
            whole: false,
            trim: ClassReport::idle(),
        },
        ..fixtures::blank_point(ELAPSED)
    }
}

/// Seed 000's HD 4:4:4:4 figures (MB/s), first three rows.
const HD_FIGURES: [[f64; 6]; 3] = [
    [453.61, 502.87, 438.06, 316.56, 438.17, 309.13],
    [455.71, 509.40, 451.16, 392.44, 450.71, 383.15],
    [455.03, 511.44, 452.22, 444.92, 453.11, 442.38],
];

/// A diskperf report of three sizes from `first`, with or without writes.
fn report(first: u64, write: bool) -> RunReport {
    report_of(first, write, &FIGURES)
}

fn report_of(first: u64, write: bool, figures: &[[f64; 6]; 3]) -> RunReport {
    let mut points = Vec::new();
    for (row, figures) in figures.iter().enumerate() {
        for (col, &mb) in figures.iter().enumerate() {
            if write || COLUMNS[col].2 == Op::Read {
                points.push(point(points.len(), first << row, col, mb));
            }
        }
    }
    fixtures::run_report("diskperf", points)
}

fn mb() -> TextOptions {
    TextOptions { mib: false }
}

fn labelled() -> DiskperfSettings {
    DiskperfSettings {
        label: Some("SGI ST373405LC".into()),
        ..Default::default()
    }
}

#[test]
fn diskperf_layout_with_writes() {
    insta::assert_snapshot!(render_diskperf(&report(4096, true), mb(), &labelled()));
}

#[test]
fn diskperf_layout_read_only_prints_nan_for_writes() {
    let text = render_diskperf(&report(4096, false), mb(), &DiskperfSettings::default());
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let cells: Vec<&str> = r.split_whitespace().collect();
        assert_eq!([cells[1], cells[3], cells[5]], ["NaN"; 3], "{r}");
        assert!(cells[2].parse::<f64>().unwrap() > 0.0, "{r}");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn diskperf_layout_with_real_time_block() {
    // HD 4:4:4:4 frames (8294400 bytes, a multiple of 4096) at 30 fps:
    // seed 000's "about 2X faster than real-time for HD".
    let set = DiskperfSettings {
        label: Some("Octane2 JBOD".into()),
        scale: 1.0,
        fps: Some(30.0),
        frame: Some("hd-444 (1920x1080x4 = 8294400 bytes)".into()),
    };
    let r = report_of(8294400, true, &HD_FIGURES);
    let text = render_diskperf(&r, mb(), &set);
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    // Two blank lines, then the second data set (gnuplot's `index 1`).
    assert_eq!(rows.len(), 3 + 2 + 3, "{text}");
    let x: f64 = rows[5].split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((1.9..2.1).contains(&x), "fwd_rd {x} x real time");
    insta::assert_snapshot!(text);
}

#[test]
fn data_lines_keep_diskperf_widths_and_the_header_is_verbatim() {
    let text = render_diskperf(&report(4096, true), mb(), &labelled());
    assert!(text.contains(
        "#---------------------------------------------------------\n\
         # req_size  fwd_wt  fwd_rd  bwd_wt  bwd_rd  rnd_wt  rnd_rd\n\
         #  (bytes)  (MB/s)  (MB/s)  (MB/s)  (MB/s)  (MB/s)  (MB/s)\n\
         #---------------------------------------------------------\n"
    ));
    let first = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(
        first,
        "       4096    0.68   24.14    0.69   10.63    0.77    0.85"
    );
    let scaled = DiskperfSettings {
        scale: 10.0,
        ..labelled()
    };
    let text = render_diskperf(&report(4096, true), mb(), &scaled);
    assert!(text.contains("scale 10,"), "{text}");
    let first = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(
        first,
        "       4096    6.80  241.40    6.90  106.29    7.70    8.50"
    );
}

#[test]
fn mib_changes_the_unit_line_and_the_figures() {
    let text = render_diskperf(&report(4096, true), TextOptions { mib: true }, &labelled());
    assert!(text.contains("#  (bytes) (MiB/s) (MiB/s)"), "{text}");
    assert!(!text.contains("(MB/s)"));
    let first = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let fwd_rd: f64 = first.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((fwd_rd - 24.14e6 / 1048576.0).abs() < 0.01, "{first}");
}

#[test]
fn the_table_comes_from_the_streams_not_the_labels() {
    let mut r = report(4096, true);
    let want = diskperf_rows(&r);
    for p in &mut r.points {
        p.label = "renamed".into();
    }
    assert_eq!(diskperf_rows(&r), want);
    assert_eq!(want.len(), 3);
    assert_eq!(want[2].req_size, 16384);
    let fwd_rd = want[0].rates[1].unwrap();
    assert!((fwd_rd - 24.14e6).abs() < 4096.0, "{fwd_rd}");
}

#[test]
fn csv_has_the_six_columns_in_mb_per_second_and_empty_writes() {
    let set = DiskperfSettings {
        scale: 2.0,
        ..Default::default()
    };
    let csv = render_diskperf_csv(&report(4096, false), &set);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "req_size,fwd_wt,fwd_rd,bwd_wt,bwd_rd,rnd_wt,rnd_rd"
    );
    assert_eq!(lines.len(), 4);
    let cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(cells[0], "4096");
    assert_eq!([cells[1], cells[3], cells[5]], [""; 3]);
    let fwd_rd: f64 = cells[2].parse().unwrap();
    assert!((fwd_rd - 48.28).abs() < 0.01, "scaled by 2: {fwd_rd}");
}

#[test]
fn a_failed_write_test_prints_nan_not_the_rate_of_what_it_moved_first() {
    let mut r = report(4096, true);
    // The 8192-byte forward write moved data, then failed with ENOSPC.
    let p = r
        .points
        .iter_mut()
        .find(|p| p.streams[0].bs == 8192 && p.streams[0].rw == Rw::Write)
        .unwrap();
    assert!(p.streams[0].write.ops > 0);
    let mut failed = ClassStats::new();
    failed.record(0, 8192, 100_000);
    failed.record_error(28);
    p.streams[0].write = ClassReport::new(&failed, ELAPSED);
    p.failure = Some(FailureReport {
        stream: 0,
        op: iosurvey_model::Op::Write,
        offset: 8192,
        errno: 28,
        error: errno_name(28),
        at_ns: 1000,
    });
    let text = render_diskperf(&r, mb(), &labelled());
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("8192"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "NaN", "{row}");
    assert!(cells[2].parse::<f64>().unwrap() > 0.0, "{row}");
    // A short transfer fails a test the same way.
    let p = &mut r.points[0];
    p.failure = None;
    let mut short = ClassStats::new();
    short.record(0, 4096, 100_000);
    short.record_error(iosurvey_stats::SHORT_TRANSFER);
    p.streams[0].write = ClassReport::new(&short, ELAPSED);
    assert_eq!(diskperf_rows(&r)[0].rates[0], None);
    insta::assert_snapshot!(text);
}
