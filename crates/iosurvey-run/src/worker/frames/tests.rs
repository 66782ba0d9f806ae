//! Tests of the frame worker: real frames on a temporary directory, and a
//! fake engine for order, pacing, drops and failures.

use super::super::clock::{Clock, FakeClock};
use super::*;
use crate::fake_engine::FakeEngine;
use crate::observer::NoObserver;
use crate::runner::run_point;
use iosurvey_target::frame_target::open_frame_dir;
use iosurvey_target::guard::WritePolicy;
use iosurvey_target::target::{created_by_iosurvey, OpenOptions};
use iosurvey_workload::modes::video::{expand, FrameSize, VideoSpec};
use iosurvey_workload::{Fps, FrameOrder, Point};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn devnull() -> OwnedFd {
    std::fs::File::open("/dev/null").unwrap().into()
}

/// A stream-layout job of `frames` frames of 16 KiB in 4 pieces.
fn stream_job(frames: u64, order: FrameOrder, fps: Option<Fps>, queue: u32) -> FrameJob {
    let mut s = VideoSpec::new("unused".into());
    s.layout = FrameLayout::Stream;
    s.size = FrameSize::Custom(16384);
    s.frames = frames;
    s.depth = 4;
    s.order = order;
    s.fps = fps;
    s.queue = queue;
    expand(&s).unwrap().points[0].job.frames().cloned().unwrap()
}

fn shared<'a>(fj: &'a FrameJob, fd: &'a OwnedFd, _stop: &AtomicBool) -> FrameShared<'a> {
    FrameShared {
        job: fj,
        stream: 0,
        file: 0,
        sequence: fj.sequence(1),
        next: AtomicU64::new(0),
        t0: AtomicU64::new(0),
        piece: fj.piece_bytes(4096),
        direct: false,
        target_fd: fd,
    }
}

/// Runs the frame stream of `sh` alone on worker 0 of `engine`.
fn run_frames<E: Engine>(engine: &mut E, sh: &FrameShared<'_>, stop: &AtomicBool) -> JobResult {
    let (r, live_ops) = run_with_blocks(engine, Vec::new(), sh, stop);
    let done = r.frames.iter().filter(|f| f.bytes > 0).count() as u64;
    assert!(live_ops >= done, "the live totals count whole frames");
    r
}

/// A worker's bounds with no time, ramp or verify: it runs until its
/// streams end or `stop` is set, publishing to `live`.
fn unbounded<'a>(
    stop: &'a AtomicBool,
    live: &'a crate::worker::LiveCounters,
) -> crate::worker::WorkerBounds<'a> {
    crate::worker::WorkerBounds {
        ramp: Duration::ZERO,
        time: None,
        interval: Duration::from_secs(1),
        continue_on_error: false,
        stop,
        live,
        detail: None,
        intervals: None,
        verify: None,
        backlog: None,
        warm: None,
        pace: None,
    }
}

/// Runs the block streams `blocks` and the frame stream of `sh` on worker
/// 0 of `engine`; gives the result and the live ops it published.
fn run_with_blocks<E: Engine>(
    engine: &mut E,
    blocks: Vec<crate::worker::WorkerStream>,
    sh: &FrameShared<'_>,
    stop: &AtomicBool,
) -> (JobResult, u64) {
    let live = crate::worker::LiveCounters::default();
    let bounds = unbounded(stop, &live);
    let work = crate::worker::FrameWork {
        shared: sh,
        thread: 0,
    };
    let now = super::super::now_ns();
    let r = crate::worker::run_worker(engine, blocks, Some(work), &bounds, now).unwrap();
    (r, live.ops.load(Ordering::Relaxed))
}

/// An engine configuration of 4 buffers of `buffer_size` on the one file
/// `fd` (duplicated).
fn cfg_on(fd: &OwnedFd, buffer_size: usize) -> iosurvey_engine::EngineConfig<'static> {
    iosurvey_engine::EngineConfig {
        files: vec![fd.try_clone().unwrap()],
        buffers: 4,
        buffer_size,
        alignment: 4096,
        sqpoll: None,
        iopoll: false,
        fill: Default::default(),
        verify: None,
        stop: None,
    }
}

/// A sync engine on `fd` (see [`cfg_on`]).
fn sync_on(fd: &OwnedFd, buffer_size: usize) -> iosurvey_engine::SyncEngine {
    iosurvey_engine::SyncEngine::new(cfg_on(fd, buffer_size), 9).unwrap()
}

#[test]
fn a_stream_frame_is_cut_into_pieces_in_frame_order() {
    let fj = stream_job(3, FrameOrder::Reverse, None, 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    let r = run_frames(&mut e, &sh, &stop);
    let offsets: Vec<u64> = e.issued.iter().map(|q| q.offset).collect();
    let want: Vec<u64> = [2u64, 1, 0]
        .iter()
        .flat_map(|f| (0..4).map(move |p| f * 16384 + p * 4096))
        .collect();
    assert_eq!(offsets, want);
    assert!(e.issued.iter().all(|q| q.len == 4096 && q.op == Op::Read));
    assert_eq!(r.frames.len(), 3);
    assert!(r.frames.iter().all(|f| f.status == FrameStatus::Done));
    assert!(r.frames.iter().all(|f| f.bytes == 16384 && f.open_ns == 0));
    assert_eq!(r.streams[0].read.ops, 12);
    assert_eq!(r.streams[0].read.bytes, 3 * 16384);
}

#[test]
fn a_failed_piece_fails_its_frame_and_stops_the_run() {
    let fj = stream_job(5, FrameOrder::Forward, None, 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    // Piece 6 is the third piece of frame 1.
    let mut e = FakeEngine::failing(6, false, 5);
    let r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.frames[0].status, FrameStatus::Done);
    assert_eq!(r.frames[1].status, FrameStatus::Failed);
    assert_eq!(r.frames[1].errno, Some(5));
    assert_eq!(r.frames[1].bytes, 0);
    let f = r.first_failure.unwrap();
    assert_eq!((f.errno, f.offset), (5, 16384 + 2 * 4096));
    assert_eq!(r.streams[0].read.error_count(), 1);
    assert_eq!(
        e.issued.len(),
        8,
        "the whole failed frame drains, then nothing more"
    );
}

#[test]
fn a_short_read_is_a_short_transfer_not_an_invented_errno() {
    let fj = stream_job(5, FrameOrder::Forward, None, 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    // From piece 6 (the third of frame 1) on, 100 bytes instead of 4096.
    let mut e = FakeEngine::short(6, 100);
    let r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.frames[1].status, FrameStatus::Failed);
    assert_eq!(r.frames[1].errno, Some(SHORT_TRANSFER));
    let f = r.first_failure.unwrap();
    assert_eq!(
        (f.errno, f.offset),
        (SHORT_TRANSFER, 16384 + 2 * 4096 + 100)
    );
    let errors = &r.streams[0].read.errors;
    assert_eq!(errors.get(&SHORT_TRANSFER), Some(&2), "{errors:?}");
    assert!(!errors.contains_key(&5), "no EIO was invented: {errors:?}");
}

/// Runs the frame stream of `sh` alone on worker 0 of `engine`, on a fake
/// clock that starts at 1 s and that only the engine's submissions (by its
/// delay) and the worker's waits move: every time in the records is exact.
fn run_frames_on_fake_clock(
    engine: &mut FakeEngine,
    sh: &FrameShared<'_>,
    stop: &AtomicBool,
) -> JobResult {
    let clock = FakeClock::at(1_000_000_000);
    engine.clock = Some(clock.0.clone());
    let live = crate::worker::LiveCounters::default();
    let bounds = unbounded(stop, &live);
    let work = crate::worker::FrameWork {
        shared: sh,
        thread: 0,
    };
    let start = clock.now();
    crate::worker::run_worker_on(engine, Vec::new(), Some(work), &bounds, start, &clock).unwrap()
}

/// What the pacing rules make of `frames` frames released every
/// `period_ns`, each due `queue` periods after its release, on a device
/// that moves a frame in `io_ns` once it is started: per frame, its start
/// and status. A model of the rules on exact time, written apart from the
/// driver: a frame starts at its release or when the one before is done;
/// one not started by its deadline is skipped, one done after it is late.
fn paced(frames: u64, period_ns: u64, queue: u64, io_ns: u64) -> Vec<(u64, FrameStatus)> {
    let mut now = 0;
    (0..frames)
        .map(|k| {
            let deadline = (k + queue) * period_ns;
            now = now.max(k * period_ns);
            if now > deadline {
                return (now, FrameStatus::Skipped);
            }
            let start = now;
            now += io_ns;
            let status = if now > deadline {
                FrameStatus::Late
            } else {
                FrameStatus::Done
            };
            (start, status)
        })
        .collect()
}

#[test]
fn a_device_slower_than_the_pace_drops_frames() {
    // Frames every 2 ms, each taking 3 ms (its four pieces go out in one
    // submission), two frame times of queue: the first are done, the
    // backlog then makes frames late, then skipped.
    let fj = stream_job(30, FrameOrder::Forward, Some(Fps { num: 500, den: 1 }), 2);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(3);
    let r = run_frames_on_fake_clock(&mut e, &sh, &stop);
    let want = paced(30, 2_000_000, 2, 3_000_000);
    let got: Vec<_> = r.frames.iter().map(|f| (f.start_ns, f.status)).collect();
    assert_eq!(got, want);
    let count = |s| want.iter().filter(|(_, st)| *st == s).count();
    assert!(
        count(FrameStatus::Done) > 0 && count(FrameStatus::Late) > 0,
        "the case has frames of each kind"
    );
    assert!(count(FrameStatus::Skipped) > 0);
    for f in &r.frames {
        match f.status {
            FrameStatus::Skipped => {
                assert_eq!((f.bytes, f.io_ns, f.end_ns), (0, 0, f.start_ns));
            }
            _ => {
                assert_eq!(f.io_ns, 3_000_000, "{f:?}");
                assert_eq!(f.end_ns, f.start_ns + 3_000_000, "{f:?}");
            }
        }
    }
    // Only transferred frames did I/O: four pieces each.
    let moved = want.len() - count(FrameStatus::Skipped);
    assert_eq!(e.issued.len(), 4 * moved);
    // Late frames are counted as dropped, not as done.
    assert_eq!(r.frame_tally.late, count(FrameStatus::Late) as u64);
}

#[test]
fn paced_frames_start_exactly_at_their_release() {
    // 200 fps (5 ms), each frame moved in 1 ms: the worker sleeps until
    // each release, and starts the frame then, not before nor after.
    let fj = stream_job(6, FrameOrder::Forward, Some(Fps { num: 200, den: 1 }), 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(1);
    let r = run_frames_on_fake_clock(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), 6);
    for (k, f) in r.frames.iter().enumerate() {
        let release = k as u64 * 5_000_000;
        assert_eq!(
            (f.start_ns, f.end_ns),
            (release, release + 1_000_000),
            "frame {k}"
        );
        assert_eq!(f.status, FrameStatus::Done);
    }
    // The last frame is done 1 ms after the sixth release.
    assert_eq!(r.elapsed_ns, 5 * 5_000_000 + 1_000_000);
}

#[test]
fn a_frame_rate_in_thirds_of_a_nanosecond_keeps_its_schedule() {
    // 30000/1001 fps (NTSC): releases at k * 1001/30000 s, rounded the
    // way the driver's schedule rounds them, with no drift over the run.
    let fps = Fps {
        num: 30000,
        den: 1001,
    };
    let fj = stream_job(10, FrameOrder::Forward, Some(fps), 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    e.delay = Duration::from_micros(100);
    let r = run_frames_on_fake_clock(&mut e, &sh, &stop);
    let starts: Vec<u64> = r.frames.iter().map(|f| f.start_ns).collect();
    let want: Vec<u64> = (0..10)
        .map(|k| fps.duration_of(k).as_nanos() as u64)
        .collect();
    assert_eq!(starts, want);
    // Frame 9 at 9 * 1001 / 30000 s exactly: the schedule does not add up
    // a rounded interval (which would start it 6 ns early).
    assert_eq!(starts[9], 300_300_000);
    assert_ne!(starts[9], 9 * fps.interval_ns());
    assert!(r.frames.iter().all(|f| f.status == FrameStatus::Done));
}

#[test]
fn a_stop_ends_a_paced_run_between_frames() {
    let fj = stream_job(1000, FrameOrder::Forward, Some(Fps { num: 1, den: 1 }), 4);
    let (fd, stop) = (devnull(), AtomicBool::new(true));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    let r = run_frames(&mut e, &sh, &stop);
    assert!(r.interrupted);
    assert!(r.frames.is_empty());
}

/// A files-layout point on `dir`, for `op`.
fn files_point(dir: &std::path::Path, op: Op, engine: iosurvey_engine::EngineKind) -> Point {
    let mut s = VideoSpec::new(dir.to_path_buf());
    s.op = op;
    s.size = FrameSize::Custom(3 * 4096 + 100);
    s.frames = 7;
    s.threads = 2;
    s.depth = 2;
    s.layout = FrameLayout::Files { files_per_dir: 3 };
    s.engine = engine;
    s.direct = false;
    expand(&s).unwrap().points.remove(0)
}

fn open(point: &Point) -> iosurvey_target::target::OpenTarget {
    let opts = OpenOptions {
        write: point.job.writes(),
        trim: false,
        direct: false,
        policy: WritePolicy::default(),
        stop: None,
    };
    open_frame_dir(&point.job.targets[0], point.job.frames().unwrap(), opts).unwrap()
}

#[test]
fn files_are_written_whole_then_read_back_on_both_engines() {
    for engine in [
        iosurvey_engine::EngineKind::Sync,
        iosurvey_engine::EngineKind::Uring,
    ] {
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let wp = files_point(d.path(), Op::Write, engine);
        let wt = open(&wp);
        let w = match run_point(&wp, std::slice::from_ref(&wt), &stop, &mut NoObserver) {
            Ok(r) => r,
            Err(e) if engine == iosurvey_engine::EngineKind::Uring => {
                iosurvey_testkit::not_running(&format!("io_uring: {e}"));
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!(w.frames.len(), 7, "{engine:?}");
        if engine == iosurvey_engine::EngineKind::Uring {
            // Frames are plain descriptors: the table is never unregistered.
            assert!(w.engine.registered_files, "the table stays registered");
        }
        let fj = wp.job.frames().unwrap();
        // Whether this filesystem keeps user xattrs (the marks).
        let probe = d.path().join("probe");
        std::fs::write(&probe, b"x").unwrap();
        let marks = rustix::fs::setxattr(
            &probe,
            iosurvey_target::guard::CREATED_XATTR,
            b"1",
            rustix::fs::XattrFlags::empty(),
        )
        .is_ok();
        for f in &w.frames {
            assert_eq!(f.status, FrameStatus::Done);
            assert_eq!(f.bytes, 16384);
            assert!(f.end_ns >= f.start_ns + f.open_ns + f.io_ns + f.close_ns);
        }
        let mut seen: Vec<u64> = w.frames.iter().map(|f| f.frame).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        assert!(w.frames.iter().all(|f| f.thread < 2));
        assert_eq!(w.streams[0].write.bytes, 7 * 16384);
        assert_eq!(w.streams[0].write.ops, 14, "two pieces per frame");
        for f in 0..7 {
            let p = fj.frame_path(&wt.path, f);
            assert_eq!(
                std::fs::metadata(&p).unwrap().len(),
                16384,
                "{}",
                p.display()
            );
            if marks {
                assert!(created_by_iosurvey(&p), "{} is marked as ours", p.display());
            }
        }
        assert!(wt.path.join("d00002/f0000006.frm").exists());

        let rp = files_point(d.path(), Op::Read, engine);
        let rt = open(&rp);
        assert!(
            !rt.created.any(),
            "the frames were there: nothing to prepare or remove"
        );
        let r = run_point(&rp, std::slice::from_ref(&rt), &stop, &mut NoObserver).unwrap();
        assert_eq!(r.frames.len(), 7);
        assert!(r.frames.iter().all(|f| f.status == FrameStatus::Done));
        assert_eq!(r.streams[0].read.bytes, 7 * 16384);
        assert!(r.first_failure.is_none());
        wt.remove_if_created().unwrap();
        assert!(!wt.path.exists());
    }
}

#[test]
fn every_written_block_of_every_frame_is_unique() {
    let mut fj = stream_job(3, FrameOrder::Reverse, None, 4);
    fj.op = Op::Write;
    let file = tempfile::NamedTempFile::new().unwrap();
    let fd: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(file.path())
        .unwrap()
        .into();
    let stop = AtomicBool::new(false);
    let sh = shared(&fj, &fd, &stop);
    let mut e = sync_on(&fd, sh.piece as usize);
    let r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.streams[0].write.bytes, 3 * 16384);
    let data = std::fs::read(file.path()).unwrap();
    assert_eq!(data.len(), 3 * 16384);
    let mut seen = std::collections::HashSet::new();
    for (i, block) in data.chunks(4096).enumerate() {
        assert!(seen.insert(block.to_vec()), "block {i} repeats another");
    }
}

#[test]
fn a_frame_file_that_cannot_be_created_fails_with_its_errno() {
    let mut s = VideoSpec::new("unused".into());
    s.op = Op::Write;
    s.size = FrameSize::Custom(8192);
    s.frames = 4;
    let fj = expand(&s).unwrap().points[0].job.frames().cloned().unwrap();
    // The frames directory held open is removed under the run.
    let d = tempfile::tempdir().unwrap();
    let gone = d.path().join("iosurvey-frames");
    std::fs::create_dir(&gone).unwrap();
    let fd: OwnedFd = std::fs::File::open(&gone).unwrap().into();
    std::fs::remove_dir(&gone).unwrap();
    let stop = AtomicBool::new(false);
    let sh = shared(&fj, &fd, &stop);
    let mut e = sync_on(&fd, 8192);
    let r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), 1, "the first failure stops the run");
    assert_eq!(r.frames[0].status, FrameStatus::Failed);
    assert_eq!(r.frames[0].errno, Some(2), "ENOENT");
    assert!(r.frames[0].open_ns > 0, "the failed open was timed");
    assert_eq!(r.first_failure.unwrap().errno, 2);
    assert_eq!(r.streams[0].write.ops, 0, "no I/O without a file");
    assert!(e.open_file().is_none(), "nothing is left open");
}

/// Runs a write of 4 frames of 8 KiB on `dir` (held open as the engine's
/// file 0) through the sync engine and the io_uring engine (when there is
/// one); returns each run's first frame record.
fn write_frames_in(dir: &std::path::Path) -> Vec<FrameRecord> {
    let mut s = VideoSpec::new("unused".into());
    s.op = Op::Write;
    s.size = FrameSize::Custom(8192);
    s.frames = 4;
    let fj = expand(&s).unwrap().points[0].job.frames().cloned().unwrap();
    let fd: OwnedFd = std::fs::File::open(dir).unwrap().into();
    let stop = AtomicBool::new(false);
    let sh = shared(&fj, &fd, &stop);
    let mut out = Vec::new();
    let mut e = sync_on(&fd, 8192);
    out.push(run_frames(&mut e, &sh, &stop).frames[0]);
    assert!(e.open_file().is_none(), "nothing is left open");
    if let Ok(mut e) = iosurvey_engine::UringEngine::new(cfg_on(&fd, 8192), 4, 9) {
        sh.next.store(0, Ordering::Relaxed);
        out.push(run_frames(&mut e, &sh, &stop).frames[0]);
        assert!(e.open_file().is_none(), "nothing is left open");
    }
    out
}

#[test]
fn a_file_planted_at_a_frame_path_during_the_run_is_never_written() {
    let d = tempfile::tempdir().unwrap();
    let fj_path = {
        let mut s = VideoSpec::new("unused".into());
        s.size = FrameSize::Custom(8192);
        s.frames = 4;
        let fj = expand(&s).unwrap().points[0].job.frames().cloned().unwrap();
        fj.frame_path(d.path(), 0)
    };
    std::fs::create_dir_all(fj_path.parent().unwrap()).unwrap();
    // An unmarked file of the user's, where the first frame goes.
    std::fs::write(&fj_path, b"the user's").unwrap();
    for rec in write_frames_in(d.path()) {
        assert_eq!(rec.status, FrameStatus::Failed);
        assert_eq!(rec.errno, Some(Errno::EXIST.raw_os_error()));
    }
    assert_eq!(std::fs::read(&fj_path).unwrap(), b"the user's");
    // A symlink there is not followed.
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), b"outside").unwrap();
    std::fs::remove_file(&fj_path).unwrap();
    std::os::unix::fs::symlink(outside.path(), &fj_path).unwrap();
    for rec in write_frames_in(d.path()) {
        assert_eq!(rec.status, FrameStatus::Failed);
        assert_eq!(rec.errno, Some(Errno::LOOP.raw_os_error()));
    }
    assert_eq!(std::fs::read(outside.path()).unwrap(), b"outside");
}

#[test]
fn loops_move_every_frame_once_per_pass_in_order() {
    let mut fj = stream_job(4, FrameOrder::Reverse, None, 4);
    fj.loops = 3;
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    let r = run_frames(&mut e, &sh, &stop);
    let order: Vec<u64> = r.frames.iter().map(|f| f.frame).collect();
    assert_eq!(order, [3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0]);
    assert_eq!(r.streams[0].read.bytes, 12 * 16384);
}

#[test]
fn validation_names_frames_that_do_not_fit_or_align() {
    let mut s = VideoSpec::new("/dev/x".into());
    s.layout = FrameLayout::Stream;
    s.size = FrameSize::Custom(1 << 20);
    s.frames = 4;
    let job = expand(&s).unwrap().points.remove(0).job;
    let geometry = |size, lbs| iosurvey_target::target::Geometry {
        path: "/dev/x".into(),
        size,
        logical_block_size: lbs,
        direct: true,
    };
    assert!(crate::runner::validate(&job, &[geometry(4 << 20, 512)]).is_ok());
    let err = crate::runner::validate(&job, &[geometry(3 << 20, 512)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("4 frames of 1048576 bytes do not fit in its 3145728 bytes"),
        "{err}"
    );
    let err = crate::runner::validate(&job, &[geometry(4 << 20, 3 << 20)]).unwrap_err();
    assert!(err.to_string().contains("--buffered"), "{err}");
}

#[test]
fn paced_totals_add_up_once_each() {
    // Frames every 2 ms, each taking 3 ms on one thread, a queue of two
    // frame times: some done, some late, some never started.
    let fj = stream_job(40, FrameOrder::Forward, Some(Fps { num: 500, den: 1 }), 2);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    e.delay = Duration::from_millis(3);
    let r = run_frames_on_fake_clock(&mut e, &sh, &stop);
    let t = &r.frame_tally;
    assert_eq!(t.recorded(), 40, "every frame counted once");
    let want = paced(40, 2_000_000, 2, 3_000_000);
    let count = |s| want.iter().filter(|(_, st)| *st == s).count() as u64;
    let counts = (t.done, t.late, t.skipped, t.failed);
    let expected = (
        count(FrameStatus::Done),
        count(FrameStatus::Late),
        count(FrameStatus::Skipped),
        0,
    );
    assert_eq!(counts, expected);
    assert!(t.late > 0 && t.skipped > 0, "{t:?}");
    assert_eq!(t.sums.frames, t.done + t.late, "transferred = done + late");
    assert_eq!(t.sums.bytes, (t.done + t.late) * 16384);
    assert_eq!(t.histogram.iter().sum::<u64>(), t.done + t.late);
    // The records agree with the tally.
    assert_eq!(crate::result::FrameTally::from_records(&r.frames), *t);
    assert_eq!(e.issued.len() as u64, 4 * (t.done + t.late));
}

#[test]
fn a_long_run_keeps_a_bounded_window_of_records_and_tallies_all() {
    let mut fj = stream_job(1000, FrameOrder::Forward, None, 4);
    fj.loops = 10;
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = shared(&fj, &fd, &stop);
    let mut e = FakeEngine::new();
    let mut r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), crate::result::MAX_FRAME_RECORDS);
    assert_eq!(r.frame_tally.done, 10_000);
    assert_eq!(r.frame_tally.sums.bytes, 10_000 * 16384);
    // The first records by start are the ones kept, merged or not.
    let other = r.clone();
    r.merge(&other);
    assert_eq!(r.frames.len(), crate::result::MAX_FRAME_RECORDS);
    assert_eq!(r.frame_tally.done, 20_000);
    assert!(r.frames.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
}

#[test]
fn block_and_frame_streams_share_one_loop_and_one_tally() {
    let fj = stream_job(3, FrameOrder::Forward, None, 4);
    let (fd, stop) = (devnull(), AtomicBool::new(false));
    let sh = FrameShared {
        stream: 1,
        ..shared(&fj, &fd, &stop)
    };
    let blocks = crate::worker::WorkerStream {
        index: 0,
        file: 0,
        mix: iosurvey_workload::Mix::Write,
        bs: 4096,
        slots: 2,
        gen: iosurvey_workload::pattern::OffsetGen::new(
            iosurvey_workload::Pattern::Forward,
            4096,
            iosurvey_workload::pattern::Area {
                start: 0,
                len: 1 << 20,
            },
            vec![iosurvey_workload::pattern::Region {
                base: 0,
                blocks: 256,
            }],
            1,
        ),
        budget: 50,
        ramp_spends: false,
        map: None,
        pieces: 1,
        trace: 0,
        sizes: None,
    };
    let mut e = FakeEngine::new();
    let (r, live_ops) = run_with_blocks(&mut e, vec![blocks], &sh, &stop);
    assert_eq!(r.streams[0].write.ops, 50, "the block stream's own budget");
    assert_eq!(r.streams[0].read.ops, 0);
    assert_eq!(r.streams[1].read.ops, 12, "three frames of four pieces");
    assert_eq!(r.streams[1].write.ops, 0);
    assert_eq!(r.frames.len(), 3);
    assert!(r.frames.iter().all(|f| f.status == FrameStatus::Done));
    // Live: 50 block I/Os and 3 whole frames.
    assert_eq!(live_ops, 53);
    assert_eq!(e.issued.len(), 62);
}

#[test]
fn a_one_at_a_time_engine_moves_no_piece_after_a_failed_one() {
    // Frame 1's third piece starts at the end of the file: a short read.
    let fj = stream_job(3, FrameOrder::Forward, None, 4);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), vec![7u8; 16384 + 2 * 4096]).unwrap();
    let fd: OwnedFd = std::fs::File::open(file.path()).unwrap().into();
    let stop = AtomicBool::new(false);
    let sh = shared(&fj, &fd, &stop);
    let mut e = sync_on(&fd, 4096);
    let r = run_frames(&mut e, &sh, &stop);
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.frames[1].status, FrameStatus::Failed);
    assert_eq!(
        r.streams[0].read.ops,
        4 + 2,
        "frame 0 whole, then two pieces"
    );
    let errors = &r.streams[0].read.errors;
    assert_eq!(
        errors.get(&SHORT_TRANSFER),
        Some(&1),
        "the piece after the short one was never read: {errors:?}"
    );
}
