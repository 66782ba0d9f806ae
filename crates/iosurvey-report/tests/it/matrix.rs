//! Snapshot tests of `iosurvey matrix`'s presenters (ORION's summary, the
//! MB/s, IOPS and latency matrices, the histogram file and the terminal
//! text) from a fixed report of a 2 x 2 detailed matrix over two devices
//! in raid0, with 25% writes.

use iosurvey_model::document::*;
use iosurvey_model::Layout;
use iosurvey_model::TargetKind;
use iosurvey_report::matrix::*;
use iosurvey_stats::ClassStats;

use crate::fixtures;

const SEC: u64 = 1_000_000_000;

fn settings() -> Settings {
    Settings {
        engine: iosurvey_model::EngineKind::Uring,
        workers: 1,
        direct: true,
        seed: 0,
        time_ns: Some(15 * SEC),
        bytes: None,
        ramp_ns: 2 * SEC,
        warm_bytes: 0,
        rate: None,
        interval_ns: SEC,
        continue_on_error: false,
        registered_files: true,
        fixed_buffers: true,
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
    }
}

fn target(path: &str) -> TargetReport {
    TargetReport {
        path: path.into(),
        kind: TargetKind::Block,
        size_bytes: 72834822144,
        logical_block_size: 512,
        physical_block_size: 512,
        rotational: Some(true),
        direct: true,
        created: false,
        memory_backed: None,
        link_bytes_per_sec: None,
        link: None,
        device: None,
    }
}

/// A class of `ops` I/Os of `bs` bytes in 15 s, latencies from `lat_us` up.
fn class(ops: u64, bs: u64, lat_us: u64) -> ClassReport {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, bs, lat_us * 1000 + (i % 100) * 1000);
    }
    ClassReport::new(&c, 15 * SEC)
}

/// A stream of `n` outstanding I/Os: three reads to one write.
fn stream(label: &str, bs: u64, n: u32, ops: u64, lat_us: u64) -> StreamReport {
    StreamReport {
        samples: Vec::new(),
        bs_split: Vec::new(),
        trim: ClassReport::idle(),
        trim_pct: 0,
        label: label.into(),
        target: 0,
        rw: iosurvey_model::document::Rw::Mixed,
        read_pct: 75,
        pattern: iosurvey_model::Pattern::Random,
        dist: Default::default(),
        bs,
        outstanding: n,
        offset: 0,
        span: None,
        regions: 0,
        array: Some(ArrayReport {
            layout: Layout::Raid0 { stripe: 1 << 20 },
            members: vec![0, 1],
        }),
        elapsed_ns: 15 * SEC,
        read: class(ops * 3 / 4, bs, lat_us),
        write: class(ops / 4, bs, lat_us * 2),
    }
}

fn point(index: usize, small: u32, large: u32) -> PointReport {
    let mut streams = Vec::new();
    if small > 0 {
        // More small load, more IOPS; large I/O takes some away.
        let ops = u64::from(small) * 3000 / (1 + u64::from(large));
        streams.push(stream(
            "small",
            4096,
            small,
            ops,
            3000 + 500 * u64::from(large),
        ));
    }
    if large > 0 {
        // The large MB/s levels off at 155 MB/s: the controller's cap.
        let ops = (u64::from(large) * 1100).min(2217) / (1 + u64::from(small) / 4);
        streams.push(stream("large", 1 << 20, large, ops, 20000));
    }
    let empty = class(0, 4096, 0);
    PointReport {
        index,
        label: format!("small={small} large={large}"),
        params: iosurvey_model::PointParams::Matrix { small, large },
        settings: settings(),
        targets: vec![target("/dev/sda1"), target("/dev/sdb1")],
        elapsed_ns: 15 * SEC,
        streams,
        total: StreamTotals {
            read: empty.clone(),
            write: empty,
            whole: false,
            trim: ClassReport::idle(),
        },
        ..fixtures::blank_point(15 * SEC)
    }
}

fn report() -> RunReport {
    let mut points = Vec::new();
    for large in [0, 1, 2] {
        for small in [0, 1, 2] {
            if (small, large) != (0, 0) {
                points.push(point(points.len(), small, large));
            }
        }
    }
    let mut r = fixtures::run_report("matrix", points);
    r.command_line = "iosurvey matrix --run advanced --matrix detailed --num-disks 1 --simulate raid0 --write 25 /dev/sda1 /dev/sdb1"
        .split(' ')
        .map(String::from)
        .collect();
    r
}

#[test]
fn summary_layout() {
    // ORION counts its whole grid, the (0, 0) cell it never runs included.
    let text = render_summary(&report(), "r10-7");
    assert!(text.contains("Total Data Points: 9"), "{text}");
    assert!(
        text.contains("Maximum Large MBPS=153.79 @ Small=0 and Large=2"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn the_summary_is_orions_for_its_run_level_and_its_classes() {
    // -run simple on one LUN: ORION prints the one small column 0, and 8
    // data points for its 5 small and 2 large ones.
    let mut points = Vec::new();
    for small in 1..=5 {
        points.push(point(points.len(), small, 0));
    }
    for large in 1..=2 {
        points.push(point(points.len(), 0, large));
    }
    let mut r = fixtures::run_report("matrix", points);
    r.matrix = Some(MatrixSettings {
        run: "simple".into(),
        cache: None,
        orion_command_line: Some(vec!["-run".into(), "simple".into()]),
    });
    let text = render_summary(&r, "orion");
    // ORION's options alone, as ORION prints its command line.
    assert!(text.contains("\nCommandline:\n-run simple\n\n"), "{text}");
    assert!(text.contains("Small Columns:,      0\n"), "{text}");
    assert!(
        text.contains("Large Columns:,      0,      1,      2\n"),
        "{text}"
    );
    assert!(text.contains("Total Data Points: 8\n"), "{text}");
    // A detailed 26 by 16 grid: 416, as in the seed's ORION summary.
    let mut points = Vec::new();
    for large in 0..16 {
        for small in 0..26 {
            if (small, large) != (0, 0) {
                points.push(point(points.len(), small, large));
            }
        }
    }
    let r = fixtures::run_report("matrix", points);
    assert!(render_summary(&r, "x").contains("Total Data Points: 416\n"));
    // Small I/O alone (oltp): no large size is named.
    let points = (1..=3).map(|s| point(s as usize - 1, s, 0)).collect();
    let mut r = fixtures::run_report("matrix", points);
    r.matrix = Some(MatrixSettings {
        run: "oltp".into(),
        cache: None,
        orion_command_line: None,
    });
    let text = render_summary(&r, "x");
    assert!(
        text.contains("Small IO size: 4 KB") && !text.contains("Large IO size"),
        "{text}"
    );
    // A row at a fixed large load holds no (0, 0) cell: its points alone.
    let points = (1..=3).map(|s| point(s as usize - 1, s, 2)).collect();
    let r = fixtures::run_report("matrix", points);
    assert!(render_summary(&r, "x").contains("Total Data Points: 3\n"));
}

#[test]
fn mbps_matrix_has_rows_from_large_1_and_columns_from_small_0() {
    let csv = render_matrix_csv(&report(), Metric::Mbps);
    assert!(
        csv.starts_with("Large/Small,      0,      1,      2\n"),
        "{csv}"
    );
    insta::assert_snapshot!(csv);
}

#[test]
fn iops_matrix_has_rows_from_large_0_and_columns_from_small_1() {
    let csv = render_matrix_csv(&report(), Metric::Iops);
    assert!(
        csv.starts_with("Large/Small,      1,      2\n          0,"),
        "{csv}"
    );
    insta::assert_snapshot!(csv);
}

#[test]
fn latency_matrix_is_the_mean_of_reads_and_writes_in_usecs() {
    insta::assert_snapshot!(render_matrix_csv(&report(), Metric::Lat));
}

#[test]
fn histogram_file_and_terminal_text() {
    let r = report();
    let hist = render_hist(&r);
    assert_eq!(hist.matches("Small Read Latency").count(), 6, "{hist}");
    assert_eq!(hist.matches("Large Write Latency").count(), 6, "{hist}");
    insta::assert_snapshot!("hist", hist);
    insta::assert_snapshot!("text", render_matrix_text(&r, "r10-7"));
}

#[test]
fn cells_come_back_from_labels_and_the_stamp_from_the_start_time() {
    let r = report();
    let c = cells(&r);
    assert_eq!(c.len(), 8);
    assert_eq!((c[0].small, c[0].large), (1, 0));
    assert!(c[0].mbps.is_none() && c[2].iops.is_none());
    // Small IOPS counts reads and writes: 3000 ops in 15 s.
    assert_eq!(c[0].iops, Some(200.0));
    assert_eq!(stamp(&r), "20261130_0000");
}
