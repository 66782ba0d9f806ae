//! Snapshot tests of `iosurvey survey`'s presenters (both summary layouts,
//! the detail and the CSV) from a fixed report of two devices, with a point
//! the memory check skipped, a point with failed regions and an interrupted
//! one.

use iosurvey_model::document::Rw;
use iosurvey_model::document::*;
use iosurvey_model::{Op, PointParams};
use iosurvey_report::survey::{figures, lines, render_detail, render_summary, render_survey_csv};
use iosurvey_report::survey::{Layout, CSV_COLUMNS};

use crate::fixtures;
use iosurvey_model::TargetKind;
use iosurvey_stats::ClassStats;

const MIB: u64 = 1 << 20;
const SIZE: u64 = 64 * MIB;

fn settings() -> Settings {
    Settings {
        engine: iosurvey_model::EngineKind::Uring,
        workers: 1,
        direct: true,
        seed: 0,
        time_ns: None,
        bytes: None,
        ramp_ns: 0,
        warm_bytes: 0,
        rate: None,
        interval_ns: 1_000_000_000,
        continue_on_error: true,
        registered_files: true,
        fixed_buffers: true,
        reap_window_us: Some(10),
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
    }
}

fn target(path: &str) -> TargetReport {
    TargetReport {
        path: path.into(),
        kind: TargetKind::Block,
        size_bytes: 256 * MIB,
        logical_block_size: 4096,
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

/// One region of a point: `ops` records of 1 MiB done in `ns`, and `errors`
/// failed ones.
fn region(
    dev: usize,
    j: u64,
    crg: u64,
    write: bool,
    ops: u64,
    ns: u64,
    errors: u64,
) -> StreamReport {
    let span = SIZE / crg;
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, MIB, 1_000_000 + i * 1000);
    }
    for _ in 0..errors {
        c.record_error(5);
    }
    let (r, w) = if write {
        (ClassStats::new(), c)
    } else {
        (c, ClassStats::new())
    };
    StreamReport {
        samples: Vec::new(),
        bs_split: Vec::new(),
        trim: ClassReport::idle(),
        trim_pct: 0,
        label: format!("dev{dev} r{j}"),
        target: dev,
        rw: if write { Rw::Write } else { Rw::Read },
        read_pct: if write { 0 } else { 100 },
        pattern: iosurvey_model::Pattern::Forward,
        dist: Default::default(),
        bs: MIB,
        outstanding: 1,
        offset: 1024 * 4096 + j * span,
        span: Some(span),
        regions: 1,
        array: None,
        elapsed_ns: ns,
        read: ClassReport::new(&r, ns),
        write: ClassReport::new(&w, ns),
    }
}

/// A point of `crg` regions per device; region k of all takes `ns(k)`.
fn point(index: usize, crg: u64, thr: u64, write: bool, ns: impl Fn(u64) -> u64) -> PointReport {
    let action = if write { "write" } else { "read" };
    let mut streams = Vec::new();
    for dev in 0..2 {
        for j in 0..crg {
            let k = dev as u64 * crg + j;
            streams.push(region(dev, j, crg, write, SIZE / crg / MIB, ns(k), 0));
        }
    }
    let elapsed = streams.iter().map(|s| s.elapsed_ns).max().unwrap_or(0);
    let mut total_r = ClassStats::new();
    let mut total_w = ClassStats::new();
    for _ in 0..(2 * SIZE / MIB) {
        (if write { &mut total_w } else { &mut total_r }).record(0, MIB, 1_000_000);
    }
    PointReport {
        index,
        label: format!("rsz=1MiB crg={crg} thr={thr} {action}"),
        params: PointParams::Survey {
            rsz: MIB,
            crg: crg as u32,
            thr: thr as u32,
            action: if write { Op::Write } else { Op::Read },
        },
        settings: settings(),
        targets: vec![target("/dev/zram1"), target("/dev/zram2")],
        elapsed_ns: elapsed,
        streams,
        total: StreamTotals {
            read: ClassReport::new(&total_r, elapsed),
            write: ClassReport::new(&total_w, elapsed),
            whole: false,
            trim: ClassReport::idle(),
        },
        ..fixtures::blank_point(elapsed)
    }
}

fn report() -> RunReport {
    let ms = 1_000_000;
    let mut points = vec![
        point(0, 1, 1, true, |k| 100 * ms + k * 7 * ms),
        point(1, 1, 1, false, |k| 50 * ms + k * 3 * ms),
        point(2, 1, 2, true, |k| 90 * ms + k * 5 * ms),
        point(3, 1, 2, false, |k| 45 * ms + k * ms),
        point(4, 2, 2, true, |k| 80 * ms + k * 11 * ms),
        point(5, 2, 2, false, |k| 40 * ms + k * 2 * ms),
        point(6, 2, 4, true, |k| 80 * ms + k * ms),
        point(7, 2, 4, false, |k| 40 * ms + k * ms),
        point(8, 4, 4, true, |_| 0),
        point(9, 4, 4, false, |_| 0),
        point(10, 4, 8, true, |k| 60 * ms + k * ms),
        point(11, 4, 8, false, |k| 30 * ms + k * ms),
    ];
    // Two regions of point 6 fail part-way: sgpdd-survey's "2 failed".
    for k in [1, 3] {
        let s = &mut points[6].streams[k];
        *s = region(s.target, k as u64 % 2, 2, true, 10, 30 * ms, 1);
    }
    // The memory check skipped crg 4 thr 4.
    for p in &mut points[8..10] {
        p.skipped = Some("ENOMEM".into());
        p.streams
            .iter_mut()
            .for_each(|s| *s = region(s.target, 0, 4, true, 0, 0, 0));
    }
    // Ctrl-C during the last point: one region had not finished.
    points[11].interrupted = true;
    points[11].streams[7] = region(1, 3, 4, false, 5, 10 * ms, 0);
    fixtures::run_report("survey", points)
}

#[test]
fn current_layout() {
    insta::assert_snapshot!(render_summary(&report(), Layout::Current));
}

#[test]
fn legacy_layout() {
    insta::assert_snapshot!(render_summary(&report(), Layout::Legacy));
}

#[test]
fn detail_has_one_line_per_region_of_every_point_that_ran() {
    let d = render_detail(&report());
    let rows = d.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(rows, 2 * (1 + 1 + 1 + 1 + 2 + 2 + 2 + 2 + 4 + 4));
    assert!(d.ends_with("# point 11 rsz=1MiB crg=4 thr=8 read: interrupted\n"));
    insta::assert_snapshot!(d);
}

#[test]
fn csv_has_one_row_per_point_and_action() {
    let csv = render_survey_csv(&report());
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), CSV_COLUMNS);
    assert_eq!(r.records().count(), 12);
    insta::assert_snapshot!(csv);
}

#[test]
fn summary_lines_combine_the_actions_of_each_point() {
    let r = report();
    let text = render_summary(&r, Layout::Current);
    let body: Vec<&str> = text.lines().collect();
    assert_eq!(
        body[0],
        "Mon Nov 30 00:00:00 UTC 2026 sgpdd-survey on /dev/zram1 /dev/zram2 from h"
    );
    assert_eq!(body.len(), 1 + 6);
    assert!(body[6].ends_with(" read interrupted "), "{}", body[6]);
    assert!(body[5].ends_with("thr     8 ENOMEM"), "{}", body[5]);
    assert!(
        body[4].contains("write 2 failed read 2976.74"),
        "{}",
        body[4]
    );
    assert_eq!(lines(&r).len(), 6);
    // Every number keeps its meaning: the aggregate is all bytes over the
    // last region's end, so it lies between the slowest region and the sum.
    for p in &r.points[..6] {
        let f = figures(p).unwrap();
        assert_eq!(f.bytes, 2 * SIZE);
        assert!(f.min <= f.aggregate && f.aggregate <= f.sum, "{f:?}");
        assert!(f.min <= f.max);
    }
}
