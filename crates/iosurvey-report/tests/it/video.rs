//! The video presenters from synthetic frame records (no I/O): snapshots of
//! the frametest-like text (unpaced files, paced, stream), the per-frame
//! CSV and the preset list, and the figures behind them checked by hand.

use iosurvey_model::document::*;
use iosurvey_report::video::*;
use iosurvey_report::*;

use crate::fixtures;
use iosurvey_model::{FrameRecord, FrameStatus, TargetKind};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;
/// hd-4444 and hd-422 frames, as the presets lay them out.
const HD4444: u64 = 8_294_400;
const HD422: u64 = 4_149_248;

fn mb() -> TextOptions {
    TextOptions { mib: false }
}

/// A transferred frame ending at `end_ns` after `open + io + close` ns.
fn done(frame: u64, end_ns: u64, open: u64, io: u64, close: u64, bytes: u64) -> FrameRecord {
    FrameRecord {
        frame,
        thread: (frame % 2) as u32,
        start_ns: end_ns - (open + io + close),
        end_ns,
        open_ns: open,
        io_ns: io,
        close_ns: close,
        bytes,
        status: FrameStatus::Done,
        errno: None,
    }
}

/// A frame that did no I/O because it was not started before `at_ns`.
fn skipped(frame: u64, at_ns: u64) -> FrameRecord {
    FrameRecord {
        start_ns: at_ns,
        end_ns: at_ns,
        io_ns: 0,
        open_ns: 0,
        close_ns: 0,
        bytes: 0,
        status: FrameStatus::Skipped,
        ..done(frame, at_ns, 0, 0, 0, 0)
    }
}

/// Frames settings around `records`: files layout, 100 per directory,
/// unpaced, forward.
fn frames(op: &str, format: &str, frame_bytes: u64, records: Vec<FrameRecord>) -> FramesReport {
    FramesReport {
        layout: iosurvey_model::document::FramesLayout::Files,
        op: if op == "write" {
            iosurvey_model::Op::Write
        } else {
            iosurvey_model::Op::Read
        },
        format: format.into(),
        frame_bytes,
        header_bytes: 0,
        frames: records.len() as u64,
        loops: 1,
        threads: 2,
        depth: 1,
        fps: None,
        queue: 4,
        order: iosurvey_model::FrameOrder::Forward,
        files_per_dir: 100,
        records,
        summary: None,
    }
}

/// The one point of a video run, measured for `elapsed_ns`.
fn point(f: FramesReport, elapsed_ns: u64) -> PointReport {
    PointReport {
        label: format!("{} {} x {}", f.op, f.frames, f.format),
        settings: Settings {
            engine: iosurvey_model::EngineKind::Uring,
            workers: f.threads,
            direct: true,
            seed: 0,
            time_ns: None,
            bytes: Some(f.frames * f.frame_bytes),
            ramp_ns: 0,
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
        },
        targets: vec![TargetReport {
            path: "/mnt/media".into(),
            kind: TargetKind::Directory,
            size_bytes: 0,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: Some(false),
            direct: true,
            created: false,
            memory_backed: None,
            link_bytes_per_sec: None,
            link: None,
            device: None,
        }],
        frames: Some(f),
        verify: None,
        compression_check: None,
        ranks: Vec::new(),
        windows: None,
        ..fixtures::blank_point(elapsed_ns)
    }
}

fn report(p: PointReport) -> RunReport {
    fixtures::run_report("video", vec![p])
}

/// Frame times of the unpaced run, by frame number modulo 10.
const TIMES_MS: [u64; 10] = [4, 5, 6, 8, 12, 15, 25, 40, 60, 90];

/// Unpaced writes of 120 hd-4444 frames over 12 s: ten frames end in each
/// second, at 90, 180 .. 900 ms into it, except that frames 34 to 39
/// stalled for a second more, so second 3 moved only four frames and
/// second 4 sixteen.
fn unpaced() -> PointReport {
    let records = (0..120u64)
        .map(|i| {
            let mut end = (i / 10) * SEC + (i % 10 + 1) * 90 * MS;
            let mut ms = TIMES_MS[(i % 10) as usize];
            if (34..40).contains(&i) {
                end += SEC;
                ms += 1000;
            }
            let open = 300_000 + (i % 3) * 100_000;
            let close = 200_000;
            done(i, end, open, ms * MS - open - close, close, HD4444)
        })
        .collect();
    point(frames("write", "hd-4444", HD4444, records), 12 * SEC)
}

/// Reads of 48 hd-422 frames paced at 24 fps over 2 s: each due every
/// 41.67 ms and taking 20 ms, except frames 10 to 12, skipped, and 20 and
/// 30, which took 200 ms and finished late.
fn paced() -> PointReport {
    let interval = SEC / 24;
    let records = (0..48u64)
        .map(|i| {
            let start = i * interval;
            match i {
                10..=12 => skipped(i, start + 4 * interval),
                20 | 30 => FrameRecord {
                    status: FrameStatus::Late,
                    ..done(i, start + 200 * MS, 500_000, 199 * MS, 500_000, HD422)
                },
                _ => done(i, start + 20 * MS, 500_000, 19 * MS, 500_000, HD422),
            }
        })
        .collect();
    let mut f = frames("read", "hd-422", HD422, records);
    f.fps = Some(iosurvey_model::Fps { num: 24, den: 1 });
    f.files_per_dir = 0;
    point(f, 2 * SEC)
}

/// A stream of custom 1003520-byte frames written at depth 4 in random
/// order, interrupted after 1.5 s and 30 of 100 frames, frame 17 failing
/// with EIO.
fn stream() -> PointReport {
    let bytes = 1_003_520;
    let records = (0..30u64)
        .map(|i| {
            let r = done(i, (i + 1) * 50 * MS, 0, 50 * MS, 0, bytes);
            if i == 17 {
                FrameRecord {
                    status: FrameStatus::Failed,
                    errno: Some(5),
                    bytes: 0,
                    ..r
                }
            } else {
                r
            }
        })
        .collect();
    let mut f = frames("write", "custom", bytes, records);
    f.layout = iosurvey_model::document::FramesLayout::Stream;
    f.files_per_dir = 0;
    f.frames = 100;
    f.threads = 1;
    f.depth = 4;
    f.order = iosurvey_model::FrameOrder::Random;
    let mut p = point(f, 1500 * MS);
    p.interrupted = true;
    p.failure = Some(FailureReport {
        stream: 0,
        op: iosurvey_model::Op::Write,
        offset: 17 * bytes + 262_144,
        errno: 5,
        error: "EIO".into(),
        at_ns: 875 * MS,
    });
    p.warnings.push(iosurvey_model::document::Warning {
        message:
            "io_uring ran without registered files or fixed buffers (the kernel refused them), \
         which costs CPU per I/O; lower --qd or check RLIMIT_MEMLOCK"
                .into(),
        evidence: iosurvey_model::document::Evidence::Text(Default::default()),
        threshold: String::new(),
    });
    p
}

fn assert_narrow(text: &str) {
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "{} chars: {l}", l.chars().count());
    }
}

#[test]
fn unpaced_files_layout() {
    let text = render_video(&report(unpaced()), mb());
    assert_narrow(&text);
    insta::assert_snapshot!(text);
}

#[test]
fn paced_with_skipped_and_late_frames() {
    let text = render_video(&report(paced()), mb());
    assert_narrow(&text);
    assert!(
        text.contains("Frames dropped:     5 (3 not started in time, 2 finished late)"),
        "{text}"
    );
    assert!(
        text.contains(
            "Real time at 24 fps: NOT held (5 of 48 frames dropped: 3 not started in time, \
             2 finished late)"
        ),
        "{text}"
    );
    assert!(!text.contains("Real-time verdict"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn stream_layout_interrupted_with_a_failed_frame() {
    let text = render_video(&report(stream()), mb());
    assert_narrow(&text);
    assert!(text.contains("Interrupted:        30 of 100 frames were started"));
    assert!(text.contains("Frames failed:      1 (first: frame 17, EIO)"));
    assert!(text.contains("run shorter than 2 s: no window check"));
    assert!(
        !text.contains("Last 1s"),
        "a 1.5 s run has no last-second row"
    );
    assert!(!text.contains("File times"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_short_transfer_is_named_as_such_not_as_an_errno() {
    let mut p = stream();
    if let Some(f) = p.frames.as_mut() {
        f.records[17].errno = Some(iosurvey_stats::SHORT_TRANSFER);
    }
    let fail = p.failure.as_mut().unwrap();
    fail.errno = iosurvey_stats::SHORT_TRANSFER;
    fail.error = "short".into();
    let text = render_video(&report(p), mb());
    assert!(text.contains("(first: frame 17, short)"), "{text}");
    assert!(
        text.contains("s: short transfer (fewer bytes than asked, no errno)"),
        "{text}"
    );
    assert!(!text.contains("errno 0"), "{text}");
}

#[test]
fn csv_has_one_row_per_frame_in_record_order() {
    let csv = render_video_csv(&report(paced()));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "frame,thread,status,errno,start_ns,end_ns,open_ns,io_ns,close_ns,frame_ns,bytes"
    );
    assert_eq!(lines.len(), 49);
    assert_eq!(lines[11], "10,0,skipped,,583333324,583333324,0,0,0,0,0");
    assert_eq!(
        lines[21],
        "20,0,late,,833333320,1033333320,500000,199000000,500000,200000000,4149248"
    );
    let failed = render_video_csv(&report(stream()));
    assert!(failed
        .lines()
        .any(|l| l.starts_with("17,1,failed,5,850000000,900000000,")));
    insta::assert_snapshot!(csv);
}

#[test]
fn format_list() {
    let text = render_format_list();
    assert_narrow(&text);
    assert_eq!(
        text.lines().count(),
        iosurvey_model::video::FORMATS.len() + 1
    );
    let hd = text.lines().find(|l| l.starts_with("hd-422 ")).unwrap();
    // 4149248 bytes at 24 and 60 fps.
    assert!(hd.contains(" 99.6 ") && hd.contains(" 249.0 "), "{hd}");
    assert!(hd.ends_with("(hd, hd1080-422)"), "{hd}");
    insta::assert_snapshot!(text);
}

#[test]
fn summary_counts_transferred_dropped_and_failed_frames() {
    let s = summarize(&paced()).unwrap();
    assert_eq!(s.recorded, 48);
    assert_eq!(s.transferred, 45);
    assert_eq!((s.dropped_skipped, s.dropped_late, s.dropped()), (3, 2, 5));
    assert_eq!(s.failed, 0);
    assert_eq!(s.bytes, 45 * HD422);
    assert_eq!(s.fastest.unwrap().frame, 0);
    assert_eq!(s.slowest.unwrap().frame, 20);
    assert!(!real_time_held(&s));

    let s = summarize(&stream()).unwrap();
    assert_eq!((s.transferred, s.failed, s.dropped()), (29, 1, 0));
    assert_eq!(s.first_failed.unwrap().frame, 17);
    assert_eq!(s.started(), 30);

    let mut p = paced();
    p.frames = None;
    assert_eq!(summarize(&p), None);
}

#[test]
fn last_windows_take_the_transferred_frames_that_ended_in_them() {
    let p = unpaced();
    let f = p.frames.as_ref().unwrap();
    let rows = window_rows(&frames_summary(f, p.elapsed_ns), p.elapsed_ns);
    let counts: Vec<(Option<u64>, u64)> = rows.iter().map(|r| (r.window_ns, r.frames)).collect();
    assert_eq!(
        counts,
        [(Some(SEC), 10), (Some(5 * SEC), 50), (None, 120)],
        "a 12 s run is too short for a last-10s row"
    );
    assert_eq!(
        window_row(&f.records, p.elapsed_ns, Some(10 * SEC)).frames,
        100
    );
    // The last second: frames 110 to 119, one of each time.
    let last = &rows[0];
    assert_eq!(last.bytes, 10 * HD4444);
    assert_eq!(last.bytes_per_sec, 10.0 * HD4444 as f64);
    assert_eq!(last.frames_per_sec, 10.0);
    let mean = TIMES_MS.iter().sum::<u64>() as f64 / 10.0 * MS as f64;
    assert!((last.frame_ns.unwrap() - mean).abs() < 1e-6);
    assert!((last.close_ns.unwrap() - 200_000.0).abs() < 1e-9);
    // Overall: 120 frames over 12 s.
    assert_eq!(rows[2].frames_per_sec, 10.0);

    // Paced, 2 s: the frames ending after 1 s are 24 to 47 plus the late
    // 20 (ends at 1033 ms); skipped ones never count.
    let p = paced();
    let f = p.frames.as_ref().unwrap();
    let rows = window_rows(&frames_summary(f, p.elapsed_ns), p.elapsed_ns);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].frames, 25);
    assert_eq!(rows[0].bytes, 25 * HD422);
    assert_eq!(rows[1].frames, 45);

    // A frame ending exactly at the window's start is outside it.
    let r = [
        done(0, 9 * SEC, 0, MS, 0, 1),
        done(1, 9 * SEC + 1, 0, MS, 0, 1),
    ];
    assert_eq!(window_row(&r, 10 * SEC, Some(SEC)).frames, 1);
}

#[test]
fn histogram_buckets_by_upper_edge() {
    let r = [
        done(0, SEC, 0, 150_000, 0, 1),
        done(1, 2 * SEC, 0, 1500 * MS, 0, 1),
        done(2, 3 * SEC, 0, 100_000, 0, 1),
        done(3, 4 * SEC, 0, 99_999, 0, 1),
        done(4, 5 * SEC, 0, 999 * MS, 0, 1),
        skipped(5, 6 * SEC),
    ];
    let b = histogram_buckets(&r);
    assert_eq!(b, [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    assert_eq!(HISTOGRAM_LABELS[1], "<0.2 ms");
    assert_eq!(HISTOGRAM_LABELS[13], ">=1 s");

    let p = unpaced();
    let b = histogram_buckets(&p.frames.as_ref().unwrap().records);
    assert_eq!(b.iter().sum::<u64>(), 120);
    assert_eq!(b[13], 6, "the six stalled frames took over a second");
}

#[test]
fn verdict_thresholds_are_inclusive() {
    assert_eq!(verdict(120.0, 100.0, 100.0), Verdict::Ok);
    assert_eq!(verdict(120.0, 99.9, 100.0), Verdict::Low);
    assert_eq!(verdict(119.9, 500.0, 100.0), Verdict::Low);
    assert_eq!(verdict(100.0, 100.0, 100.0), Verdict::Low);
    assert_eq!(verdict(99.9, 500.0, 100.0), Verdict::No);
}

/// hd-422 frames over 5 s, `per_second[k]` of them ending in second k.
fn five_seconds(per_second: [u64; 5]) -> PointReport {
    let mut records = Vec::new();
    for (k, &n) in per_second.iter().enumerate() {
        for j in 0..n {
            let end = k as u64 * SEC + (j + 1) * (SEC / (n + 1));
            records.push(done(records.len() as u64, end, 0, 10 * MS, 0, HD422));
        }
    }
    point(frames("read", "hd-422", HD422, records), 5 * SEC)
}

#[test]
fn the_verdict_needs_the_margin_and_every_window() {
    // 144 frames in 5 s: 28.8 fps, exactly 1.2 times 24 fps.
    let p = five_seconds([31, 30, 23, 30, 30]);
    let f = p.frames.as_ref().unwrap();
    let s = summarize(&p).unwrap();
    assert_eq!(s.bytes_per_sec(), 28.8 * HD422 as f64);
    let slowest = slowest_window(&f.records, p.elapsed_ns).unwrap();
    assert_eq!(slowest, 23.0 * HD422 as f64);
    let table = verdict_table(s.bytes_per_sec(), slowest);
    let hd = table.iter().find(|r| r.format.name == "hd-422").unwrap();
    let cell = |rate: &str| hd.cells.iter().find(|c| c.rate == rate).unwrap();
    assert_eq!(ratio_text(cell("24").ratio), "1.20x");
    assert_eq!(cell("24").verdict, Verdict::Low, "second 2 moved 23 frames");
    assert_eq!(cell("25").verdict, Verdict::Low);
    assert_eq!(cell("29.97").verdict, Verdict::No);
    let text = render_video(&report(p.clone()), mb());
    let row = text.lines().find(|l| l.starts_with("hd-422*")).unwrap();
    assert!(row.contains(" 1.20x low "), "{row}");

    // The same rate with 24 frames in the slowest second is ok.
    let p = five_seconds([30, 30, 24, 30, 30]);
    let text = render_video(&report(p), mb());
    let row = text.lines().find(|l| l.starts_with("hd-422*")).unwrap();
    assert!(row.contains(" 1.20x ok "), "{row}");
    assert!(text.contains("in the slowest 1 s window"), "{text}");
}

#[test]
fn slowest_window_needs_two_whole_seconds() {
    let r: Vec<FrameRecord> = (0..10)
        .map(|i| done(i, i * 190 * MS + MS, 0, MS, 0, 1))
        .collect();
    assert_eq!(slowest_window(&r, 1999 * MS), None);
    // Frames ending at 1 .. 1711 ms: six in [0, 1 s), four in [1 s, 2 s).
    assert_eq!(slowest_window(&r, 2 * SEC), Some(4.0));
}

#[test]
fn a_paced_run_that_kept_up_held_real_time() {
    let mut p = paced();
    let f = p.frames.as_mut().unwrap();
    f.fps = Some(iosurvey_model::Fps {
        num: 24000,
        den: 1001,
    });
    for r in &mut f.records {
        if r.status != FrameStatus::Done {
            *r = done(
                r.frame,
                r.start_ns + 20 * MS,
                500_000,
                19 * MS,
                500_000,
                HD422,
            );
        }
    }
    let text = render_video(&report(p), mb());
    assert!(
        text.contains("Real time at 23.976 fps: held (0 of 48 frames dropped)"),
        "{text}"
    );
    assert!(text.contains("paced at 23.976 fps, queue 4"), "{text}");
}

#[test]
fn mib_changes_the_units() {
    let text = render_video(&report(unpaced()), TextOptions { mib: true });
    assert_narrow(&text);
    assert!(
        text.contains("MiB/s") && text.contains("MiB/frame"),
        "{text}"
    );
    assert!(
        !text.contains("MB/s") && !text.contains("MB/frame"),
        "{text}"
    );
}

#[test]
fn points_without_frames_print_nothing() {
    let mut p = unpaced();
    p.frames = None;
    assert_eq!(render_video(&report(p.clone()), mb()), "");
    assert_eq!(
        render_video_csv(&report(p)),
        "frame,thread,status,errno,start_ns,end_ns,open_ns,io_ns,close_ns,frame_ns,bytes\n"
    );
}

#[test]
fn loops_are_planned_transfers_and_named_in_the_parameters() {
    // 120 records of 40 frames: three loops, all transferred.
    let mut p = unpaced();
    let f = p.frames.as_mut().unwrap();
    f.frames = 40;
    f.loops = 3;
    let s = summarize(&p).unwrap();
    assert_eq!((s.planned, s.recorded, s.transferred), (120, 120, 120));
    let text = render_video(&report(p.clone()), mb());
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with("frames of 8294400 bytes, 3 loops"),
        "{first}"
    );
    assert!(!text.contains("Interrupted"), "{text}");
    // Interrupted in the second loop: 50 of 120 started.
    p.frames.as_mut().unwrap().records.truncate(50);
    p.interrupted = true;
    let text = render_video(&report(p), mb());
    assert!(text.contains("50 of 120 frames were started"), "{text}");
}

#[test]
fn a_report_with_a_summary_counts_every_frame_not_only_the_records_kept() {
    // 100 s of unpaced frames, ten a second, of which the report keeps the
    // first 50 records; the summary holds all 1000.
    let all: Vec<FrameRecord> = (0..1000u64)
        .map(|i| done(i, (i + 1) * 100 * MS, 0, 20 * MS, 0, HD422))
        .collect();
    let mut f = frames("read", "hd-422", HD422, all[..50].to_vec());
    f.frames = 1000;
    f.summary = Some(FramesSummary::from_records(&all, 100 * SEC));
    let p = point(f, 100 * SEC);
    let s = summarize(&p).unwrap();
    assert_eq!((s.recorded, s.transferred, s.in_time), (1000, 1000, 1000));
    assert_eq!(s.bytes, 1000 * HD422);
    let text = render_video(&report(p.clone()), mb());
    assert!(text.contains("Frames tested:      1000"), "{text}");
    assert!(
        text.contains("Per-frame records:  the first 50 of 1000 are kept"),
        "{text}"
    );
    assert!(text.contains("Last 10s:"), "{text}");
    assert_eq!(render_video_csv(&report(p.clone())).lines().count(), 51);
    // The JSON carries the summary and reads back the same.
    let r = report(p);
    let back: RunReport = serde_json::from_str(&to_json(&r)).unwrap();
    assert_eq!(back, r);
    let d = back.points[0]
        .frames
        .as_ref()
        .unwrap()
        .summary
        .clone()
        .unwrap();
    assert_eq!(d.done, 1000);
    assert_eq!(d.histogram.iter().sum::<u64>(), 1000);
    let last10 = d
        .windows
        .iter()
        .find(|w| w.window_ns == Some(10 * SEC))
        .unwrap();
    assert_eq!(last10.sums.frames, 100);
    // Second 0 holds the ends at 100 to 900 ms: nine frames.
    assert_eq!(d.slowest_second_bytes, Some(9 * HD422));
}

#[test]
fn paced_lines_add_up_to_the_frames_tested() {
    let text = render_video(&report(paced()), mb());
    let num = |label: &str| -> u64 {
        let l = text.lines().find(|l| l.starts_with(label)).unwrap();
        l[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(num("Frames tested:"), 48);
    assert_eq!(num("Frames transferred:"), 43, "in time only");
    assert_eq!(num("Frames transferred:") + num("Frames dropped:"), 48);
}

#[test]
fn a_version_3_report_with_fps_as_a_float_is_read_and_presented_the_same() {
    let mut p = paced();
    let ntsc = iosurvey_model::Fps {
        num: 24000,
        den: 1001,
    };
    p.frames.as_mut().unwrap().fps = Some(ntsc);
    let now = report(p);
    // The same document as version 3 wrote it: the rate as a float.
    let mut old = serde_json::to_value(&now).unwrap();
    old["schema_version"] = 3.into();
    old["points"][0]["frames"]["fps"] = (24000.0 / 1001.0).into();
    let read: RunReport = serde_json::from_value(old).unwrap();
    assert_eq!(read.points[0].frames.as_ref().unwrap().fps, Some(ntsc));
    let text = render_video(&read, mb());
    assert!(text.contains("23.976 fps"), "{text}");
    assert_eq!(text, render_video(&now, mb()));
    assert_eq!(render_video_csv(&read), render_video_csv(&now));
}
