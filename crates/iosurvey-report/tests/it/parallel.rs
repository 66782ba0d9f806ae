//! The parallel presenters from fixed results (no I/O): the dd-style lines
//! over the common window, the scaling table with its knee, and the CSV.

use iosurvey_model::document::*;
use iosurvey_report::parallel::*;
use iosurvey_report::*;

use crate::fixtures;
use iosurvey_model::TargetKind;
use iosurvey_stats::ClassStats;

const INTERVAL: u64 = 10_000_000;

/// A device that moved `mb_per_s` in 1 MiB reads for `ms` milliseconds,
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

fn point(index: usize, rates: &[(f64, u64)]) -> PointReport {
    let streams: Vec<StreamReport> = rates
        .iter()
        .enumerate()
        .map(|(t, &(mb, ms))| StreamReport {
            samples: Vec::new(),
            bs_split: Vec::new(),
            trim: ClassReport::idle(),
            trim_pct: 0,
            label: format!("dev{t}"),
            target: t,
            rw: iosurvey_model::document::Rw::Read,
            read_pct: 100,
            pattern: iosurvey_model::Pattern::Forward,
            dist: Default::default(),
            bs: 1 << 20,
            outstanding: 1,
            offset: 0,
            span: None,
            regions: 1,
            array: None,
            elapsed_ns: ms * 1_000_000,
            read: ClassReport::new(&device(mb, ms), ms * 1_000_000),
            write: ClassReport::new(&ClassStats::new(), 1),
        })
        .collect();
    let last = rates.iter().map(|r| r.1).max().unwrap() * 1_000_000;
    PointReport {
        index,
        label: format!("{} devices", rates.len()),
        settings: Settings {
            engine: iosurvey_model::EngineKind::Uring,
            workers: 1,
            direct: true,
            seed: 0,
            time_ns: Some(2_000_000_000),
            bytes: None,
            ramp_ns: 0,
            warm_bytes: 0,
            rate: None,
            interval_ns: INTERVAL,
            continue_on_error: false,
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
        },
        targets: (0..4)
            .map(|i| TargetReport {
                path: format!("/dev/sd{}", (b'b' + i) as char),
                kind: TargetKind::Block,
                size_bytes: 1 << 40,
                logical_block_size: 512,
                physical_block_size: 4096,
                rotational: Some(true),
                direct: true,
                created: false,
                memory_backed: None,
                link_bytes_per_sec: None,
                link: None,
                device: None,
            })
            .collect(),
        elapsed_ns: last,
        first_done_ns: rates.iter().map(|r| r.1).min().unwrap() * 1_000_000,
        total: StreamTotals {
            read: ClassReport::new(&ClassStats::new(), 1),
            write: ClassReport::new(&ClassStats::new(), 1),
            whole: false,
            trim: ClassReport::idle(),
        },
        streams,
        ..fixtures::blank_point(last)
    }
}

/// Seed 001's SiI 3132 numbers in spirit: 80 MB/s alone, the controller
/// caps the sum near 300 MB/s. The last device of each step ends 100 ms
/// late, which the common window leaves out.
fn report() -> RunReport {
    fixtures::run_report(
        "parallel",
        vec![
            point(0, &[(80.0, 2000)]),
            point(1, &[(78.0, 2000), (78.0, 2100)]),
            point(2, &[(76.0, 2000), (76.0, 2000), (75.0, 2100)]),
            point(3, &[(60.0, 2000), (60.0, 2000), (60.0, 2000), (60.0, 2100)]),
        ],
    )
}

#[test]
fn parallel_text_layout() {
    insta::assert_snapshot!(render_parallel(&report(), TextOptions::default()));
}

#[test]
fn the_common_window_ends_at_the_first_device_to_finish() {
    let r = report();
    let f = figures(&r.points[1]);
    assert_eq!(f.window_ns, 2_000_000_000);
    assert_eq!(f.last_done_ns, 2_100_000_000);
    // Inside the window each device ran at its own rate, within one 1 MiB
    // record of rounding.
    for d in &f.devices {
        assert!((d.window_rate / 1e6 - 78.0).abs() < 0.6, "{d:?}");
    }
    // The late device's tail is outside the window.
    assert!(f.devices[1].bytes as f64 > f.devices[1].window_bytes);
}

#[test]
fn the_knee_is_where_added_devices_stop_adding() {
    let rows = scaling(&report());
    let knees: Vec<usize> = rows.iter().filter(|r| r.knee).map(|r| r.devices).collect();
    assert_eq!(knees, [4], "{rows:?}");
    assert!((rows[0].efficiency - 1.0).abs() < 1e-9);
    assert!(rows[3].efficiency < 0.8);
}

#[test]
fn csv_has_a_row_per_device_of_every_step() {
    let csv = render_parallel_csv(&report());
    assert_eq!(csv.lines().count(), 1 + 1 + 2 + 3 + 4);
    assert!(csv.starts_with("devices,device,window_s,"));
}

#[test]
fn a_looped_run_says_so_and_a_plain_one_does_not() {
    let mut r = report();
    let plain = render_parallel(&r, TextOptions::default());
    assert!(!plain.contains("looped"), "{plain}");
    r.points[0].settings.wrap = true;
    let looped = render_parallel(&r, TextOptions::default());
    let first = looped.lines().next().unwrap();
    assert!(first.contains("looped (--loop)"), "{first}");
    let json = serde_json::to_value(&r.points[0].settings).unwrap();
    assert_eq!(json["loop"], true);
}

#[test]
fn a_tail_shorter_than_one_block_is_named_and_a_whole_device_is_not() {
    let mut r = report();
    let whole = render_parallel(&r, TextOptions::default());
    assert!(!whole.contains("are not read"), "{whole}");
    // 10,000,000 bytes at 1 MiB: 9 whole blocks and 562,816 bytes over.
    r.points[0].targets[0].size_bytes = 10_000_000;
    let text = render_parallel(&r, TextOptions::default());
    assert!(
        text.contains(
            "# /dev/sdb: the last 562816 bytes, less than one 1048576-byte block, are not read"
        ),
        "{text}"
    );
    assert_eq!(text.matches("are not read").count(), 1, "{text}");
}
