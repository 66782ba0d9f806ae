//! Runs one Job: checks it against the opened targets, shares its streams
//! out to workers, starts them at one barrier, and merges what they measured.

use crate::host::CpuSample;
use crate::intervals::{IntervalCollector, IntervalSlot};
use crate::live::{LiveSlot, LiveSnapshot};
use crate::observer::{Observer, Progress};
use crate::result::JobResult;
use crate::worker::{
    now_ns, run_worker, BacklogSpec, FrameShared, FrameWork, LiveCounters, Pace, SizeDraw, WarmUp,
    WorkerBounds, WorkerStream, UNBOUNDED,
};
use iosurvey_engine::verify::{GenMap, WriteVerify};
use iosurvey_engine::{Engine, EngineConfig, EngineError, EngineKind, SyncEngine, UringEngine};
use iosurvey_model::BsSplit;
use iosurvey_target::target::{drop_cache, Geometry, OpenTarget};
use iosurvey_workload::array::ArrayError;
use iosurvey_workload::pattern::{resolve_area, worker_regions, AreaError, OffsetGen, Region};
use iosurvey_workload::{ArrayMap, FrameJob, FrameLayout, Job, Layout, Point, MAX_OUTSTANDING};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Barrier;
use std::time::Duration;

use crate::alignment::check_alignment;
pub use crate::error::RunError;

/// Checks that `job` fits targets of these shapes (alignment, areas)
/// without doing I/O.
pub fn validate(job: &Job, targets: &[Geometry]) -> Result<(), RunError> {
    shares(job, targets).map(drop)
}

/// Checks `job` against targets of these shapes and shares its block
/// streams out: each worker's list, in worker order.
fn shares(job: &Job, targets: &[Geometry]) -> Result<Vec<Vec<WorkerStream>>, RunError> {
    crate::verify::check_job(job, targets)?;
    if job.streams.iter().filter(|s| s.frames.is_some()).count() > 1 {
        return Err(RunError::FrameStreams);
    }
    for s in &job.streams {
        if let Some(fj) = &s.frames {
            validate_frames(s.bs, fj, &targets[s.target])?;
        }
    }
    let shares: Vec<Vec<WorkerStream>> = (0..job.workers)
        .map(|w| build_streams(job, targets, w))
        .collect::<Result<_, _>>()?;
    // An array that cuts its I/Os puts a request per piece in flight, each
    // in a buffer of its own: one worker's ring holds at most
    // MAX_OUTSTANDING.
    for streams in &shares {
        let requests: usize = streams.iter().map(WorkerStream::buffers).sum();
        let pieces = streams.iter().map(|s| s.pieces).max().unwrap_or(1);
        if pieces > 1 && requests as u64 > MAX_OUTSTANDING {
            return Err(RunError::Pieces { pieces, requests });
        }
    }
    Ok(shares)
}

/// Checks a frame stream (I/Os of `piece` bytes) against its target:
/// frames and pieces aligned for O_DIRECT, and room for every frame in a
/// stream.
fn validate_frames(piece: u64, fj: &FrameJob, t: &Geometry) -> Result<(), RunError> {
    let pieces = fj.frame_bytes.div_ceil(piece.max(1));
    if pieces > u64::from(fj.depth.max(1)) {
        return Err(RunError::FramePieces {
            pieces,
            depth: fj.depth,
        });
    }
    if t.direct {
        for bytes in [fj.frame_bytes, piece] {
            if bytes % t.logical_block_size != 0 {
                return Err(RunError::FrameAlignment {
                    path: t.path.clone(),
                    bytes,
                    lbs: t.logical_block_size,
                });
            }
        }
    }
    let need = u128::from(fj.frames) * u128::from(fj.frame_bytes);
    if fj.layout == FrameLayout::Stream && need > u128::from(t.size) {
        return Err(RunError::FramesDoNotFit {
            path: t.path.clone(),
            frames: fj.frames,
            bytes: fj.frame_bytes,
            size: t.size,
        });
    }
    Ok(())
}

/// Per-worker shares of every block stream of `job`, for worker `w`, each
/// with its index in the job. A frame stream is not shared out: each
/// worker takes its frames as it goes.
fn build_streams(job: &Job, targets: &[Geometry], w: u32) -> Result<Vec<WorkerStream>, RunError> {
    let mut out = Vec::with_capacity(job.streams.len());
    for (si, s) in job.streams.iter().enumerate() {
        if s.frames.is_some() {
            continue;
        }
        // A pinned stream is worker `pin`'s alone: one share of one.
        let (w, workers) = match s.pin {
            Some(p) if p >= job.workers => {
                return Err(RunError::Pin {
                    pin: p,
                    workers: job.workers,
                })
            }
            None => (w, job.workers),
            Some(p) if p == w => (0, 1),
            Some(_) => continue,
        };
        // The stream's members: its target, or every member of its array.
        let members: Vec<usize> = match &s.array {
            Some(a) => a.members.clone(),
            None => vec![s.target],
        };
        // A raid0 array cuts its I/Os at each stripe: O_DIRECT needs the
        // stripe aligned as it needs the block size.
        let stripe = match s.array.as_ref().map(|a| a.layout) {
            Some(Layout::Raid0 { stripe }) => Some(stripe),
            _ => None,
        };
        for &m in &members {
            let t = &targets[m];
            if let Some(stripe) = stripe.filter(|st| t.direct && st % t.logical_block_size != 0) {
                return Err(RunError::Array {
                    path: t.path.clone(),
                    reason: ArrayError::StripeAlignment {
                        stripe,
                        lbs: t.logical_block_size,
                    },
                });
            }
            check_alignment(s, t)?;
        }
        let path = targets[s.target].path.clone();
        let map = match &s.array {
            Some(a) => {
                let sizes: Vec<u64> = targets.iter().map(|t| t.size).collect();
                Some(
                    ArrayMap::new(a, &sizes, job.max_bs()).map_err(|reason| RunError::Array {
                        path: path.clone(),
                        reason,
                    })?,
                )
            }
            None => None,
        };
        let size = map.as_ref().map_or(targets[s.target].size, ArrayMap::size);
        let size = match s.limit {
            Some(limit) if limit > size => {
                return Err(RunError::Limit {
                    path,
                    limit,
                    size,
                    array: map.is_some(),
                })
            }
            Some(limit) => limit,
            None => size,
        };
        let area = resolve_area(size, s.offset, s.span, s.bs).map_err(|reason| RunError::Area {
            path: path.clone(),
            reason,
        })?;
        // Offsets step by the block size, or by a split's unit; a split's
        // budget is in bytes (its I/Os' sizes vary), a whole number of
        // units.
        let unit = s.split.as_ref().map_or(s.bs, BsSplit::align);
        let (regions, pass_ops) = if s.pattern.is_sequential() {
            let n = if s.regions == 0 { workers } else { s.regions };
            let mine = worker_regions(area, unit, n, w, workers)
                .and_then(|mine| fit_largest(mine, s.bs, unit, n, area.len))
                .map_err(|reason| RunError::Area {
                    path: path.clone(),
                    reason,
                })?;
            let mine_ops: u64 = mine.iter().map(|r| r.blocks).sum();
            (mine, mine_ops)
        } else {
            // One pass of random offsets: as many ops as whole blocks,
            // shared out exactly.
            (Vec::new(), share(area.len / unit, w, workers))
        };
        let pass_ops = match s.split {
            Some(_) => pass_ops * unit,
            None => pass_ops,
        };
        // `--verify` never has two writes of a block in flight: a write
        // waits for a free offset, which must come soon.
        let roomy = if s.pattern.is_sequential() {
            regions.iter().all(|r| r.blocks > u64::from(s.outstanding))
        } else {
            area.len / s.bs >= 4 * u64::from(s.outstanding) * u64::from(workers)
        };
        if job.verify && s.mix.writes() && !roomy {
            return Err(RunError::Verify(format!(
                "{}: its area holds too few blocks of {} bytes for --verify with {} writes in flight per worker and {workers} workers (no two writes of a block may be in flight together); lower --qd or --workers, or give a larger area",
                path.display(),
                s.bs,
                s.outstanding
            )));
        }
        let budget = match (job.bounds.bytes, job.bounds.time) {
            (Some(bytes), _) => Some(match s.split {
                Some(_) => share(bytes.div_ceil(unit), w, workers) * unit,
                None => share(bytes.div_ceil(s.bs), w, workers),
            }),
            (None, Some(_)) => None,
            (None, None) => Some(pass_ops),
        };
        // A stream that does not wrap ends at the end of its area, like dd,
        // whatever time is left.
        let budget = match budget {
            _ if s.wrap => budget,
            Some(b) => Some(b.min(pass_ops)),
            None => Some(pass_ops),
        }
        .unwrap_or(UNBOUNDED);
        let seed = job.seed
            ^ (si as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (u64::from(w) + 1).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        let pieces = map.as_ref().map_or(1, |m| m.max_pieces(s.bs, area.start));
        // A skewed stream's hot blocks are the same on every worker: placed
        // by the job's seed and the stream, not the worker.
        let hot_seed = job.seed ^ (si as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        out.push(WorkerStream {
            index: si,
            pieces: pieces as u32,
            file: s.target as u32,
            mix: s.mix,
            bs: s.bs as u32,
            slots: s.outstanding,
            gen: match &s.split {
                Some(split) => OffsetGen::sized(s.pattern, split, area, regions, seed),
                None => OffsetGen::new(s.pattern, s.bs, area, regions, seed),
            }
            .with_dist(s.dist, hot_seed),
            sizes: s.split.as_ref().map(|sp| Box::new(SizeDraw::new(sp))),
            budget,
            ramp_spends: !s.wrap,
            map,
            trace: s.trace,
        });
    }
    Ok(out)
}

/// `regions` (of `unit`-byte blocks), checked to hold an I/O of the
/// largest size `max` each (a split's regions are counted in its unit).
fn fit_largest(
    regions: Vec<Region>,
    max: u64,
    unit: u64,
    n: u32,
    len: u64,
) -> Result<Vec<Region>, AreaError> {
    if regions.iter().any(|r| r.blocks * unit < max) {
        return Err(AreaError::TooManyRegions {
            regions: n,
            bs: max,
            len,
        });
    }
    Ok(regions)
}

/// Worker `w`'s share of `ops` over `workers`: equal shares, the first
/// `ops mod workers` workers one more, so that the shares add up to `ops`.
fn share(ops: u64, w: u32, workers: u32) -> u64 {
    let n = u64::from(workers.max(1));
    ops / n + u64::from(u64::from(w) < ops % n)
}

/// Pins the calling worker thread `w` to its CPU of `cpus`, round-robin;
/// nothing when `cpus` is empty.
fn pin_worker(cpus: &[u32], w: usize) -> Result<(), RunError> {
    if cpus.is_empty() {
        return Ok(());
    }
    let cpu = cpus[w % cpus.len()];
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu as usize);
    rustix::thread::sched_setaffinity(None, &set).map_err(|e| RunError::Affinity {
        worker: w,
        cpu,
        err: e.into(),
    })
}

/// Waits at the barrier whether or not the engine came up (so no worker is
/// left waiting), then runs the worker loop on it.
fn start<E: Engine>(
    engine: Result<E, RunError>,
    barrier: &Barrier,
    streams: Vec<WorkerStream>,
    frames: Option<FrameWork<'_>>,
    bounds: &WorkerBounds<'_>,
) -> Result<JobResult, RunError> {
    barrier.wait();
    // A stop asked during the set-up of the buffers ends it: the worker
    // was stopped, it did not fail (and run_worker, given a stop, submits
    // nothing either).
    let mut engine = match engine {
        Err(RunError::Engine(EngineError::Stopped)) => {
            return Ok(JobResult {
                interrupted: true,
                ..Default::default()
            })
        }
        engine => engine?,
    };
    run_worker(&mut engine, streams, frames, bounds, now_ns()).map_err(RunError::Worker)
}

/// Runs `point` on `targets` (opened for its job), stopping early when
/// `stop` is set.
pub fn run_point(
    point: &Point,
    targets: &[OpenTarget],
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<JobResult, RunError> {
    let check = match point.job.check_compression && point.job.writes() {
        true => Some(crate::compression::check_compression(
            point,
            targets,
            |p| run_job(p, targets, stop, &mut crate::NoObserver),
        )?),
        false => None,
    };
    let mut result = run_job(point, targets, stop, observer)?;
    result.compression_check = check;
    Ok(result)
}

/// Descriptors a run holds besides its workers' and its targets':
/// standard streams, report files, the frame directory, the library's own.
const FD_MARGIN: u64 = 64;

/// Runs the job of `point` itself.
pub(crate) fn run_job(
    point: &Point,
    targets: &[OpenTarget],
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<JobResult, RunError> {
    let job = &point.job;
    let workers = job.workers as usize;
    let geometry: Vec<Geometry> = targets.iter().map(OpenTarget::geometry).collect();
    let shares = shares(job, &geometry)?;
    // Each worker's share of a rate cap: the whole job's divided equally.
    let job_pace = job.rate.map(|cap| {
        let (num, den) = cap.per_worker_fraction(job.workers);
        Pace {
            num,
            den,
            bytes: cap.unit == iosurvey_model::RateUnit::Bytes,
        }
    });
    // Each worker holds a descriptor of every target and a ring; the
    // process its own, the targets' and a margin for the rest.
    let need = FD_MARGIN + (targets.len() as u64 + 1) * (workers as u64 + 1);
    iosurvey_target::fd_limit::make_room(need).map_err(|hard| RunError::TooManyFiles {
        workers,
        targets: targets.len(),
        need,
        hard,
    })?;
    let mut files_per_worker = Vec::with_capacity(workers);
    for _ in 0..workers {
        let mut files = Vec::with_capacity(targets.len());
        for t in targets {
            files.push(t.fd.try_clone().map_err(|err| RunError::Dup {
                path: t.path.clone(),
                err,
            })?);
        }
        files_per_worker.push(files);
    }
    let mut cached_at_start = Vec::new();
    if !job.direct && job.streams.iter().any(|s| s.mix.reads()) {
        targets.iter().for_each(drop_cache);
        cached_at_start = crate::verify::cached_read_areas(job, targets);
    }

    let frame_shared = job.streams.iter().enumerate().find_map(|(si, s)| {
        let fj = s.frames.as_ref()?;
        Some(FrameShared {
            job: fj,
            stream: si,
            file: s.target as u32,
            sequence: fj.sequence(job.seed),
            next: AtomicU64::new(0),
            t0: AtomicU64::new(0),
            piece: s.bs,
            direct: job.direct,
            target_fd: &targets[s.target].fd,
        })
    });
    let frame_shared = frame_shared.as_ref();

    // `--verify` with writes: the run's id and a generation map per
    // target, shared by every worker (which reserve blocks in them) and
    // every engine (which writes the headers).
    // What the verified runs before wrote to each target, read before any
    // I/O; a verified write merges its map in once its job is done.
    let mut states = crate::verify::load_states(job, targets)?;
    crate::verify::forget_unverified(job, targets);
    let verify = (job.verify && job.writes()).then(|| {
        Arc::new(WriteVerify {
            run_id: crate::verify::new_run_id(),
            seed: job.seed,
            maps: targets
                .iter()
                .enumerate()
                .map(|(ti, t)| GenMap::new(crate::verify::written_end(job, ti, t.size)))
                .collect(),
        })
    });
    if let Some(w) = &verify {
        crate::verify::presave_states(job, targets, w, &mut states)?;
    }

    observer.point_started(point);
    let warm = (job.warm_bytes > 0).then(|| WarmUp::new(job.warm_bytes));
    let warm = warm.as_ref();
    let live: Vec<LiveCounters> = (0..workers).map(|_| LiveCounters::default()).collect();
    let wants_live = observer.wants_live();
    let slots: Vec<LiveSlot> = match wants_live {
        true => (0..workers).map(|_| LiveSlot::default()).collect(),
        false => Vec::new(),
    };
    let cut_slots: Vec<IntervalSlot> = (0..workers).map(|_| IntervalSlot::default()).collect();
    let mut collector = IntervalCollector::default();
    let barrier = Barrier::new(workers + 1);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let buffer_size = job.max_bs() as usize;
    let alignment = iosurvey_target::target::io_alignment(targets);

    let outcomes: (Vec<Result<JobResult, RunError>>, _, _) = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .zip(files_per_worker)
            .enumerate()
            .map(|(w, (streams, files))| {
                let (barrier, live) = (&barrier, &live[w]);
                let detail = slots.get(w);
                let cuts = &cut_slots[w];
                let done = done_tx.clone();
                let verify = verify.clone();
                let seed = job.seed.wrapping_add(w as u64);
                std::thread::Builder::new()
                    .name(format!("iosurvey-w{w}"))
                    .spawn_scoped(scope, move || {
                        let frames = frame_shared.map(|shared| FrameWork {
                            shared,
                            thread: w as u32,
                        });
                        let slots = streams.iter().map(WorkerStream::buffers).sum::<usize>()
                            + frames.map_or(0, |f| FrameWork::buffers(&f) as usize);
                        // Buffers as long as the longest transfer: a block
                        // size, a frame's piece, or a stripe where a striped
                        // array cuts the I/Os.
                        let buffer_size = match frames {
                            Some(_) => buffer_size,
                            None => streams
                                .iter()
                                .map(|s| s.buffer_len() as usize)
                                .max()
                                .unwrap_or(buffer_size),
                        };
                        let pinned = pin_worker(&job.cpus, w);
                        let cfg = EngineConfig {
                            files,
                            buffers: slots,
                            buffer_size,
                            alignment,
                            sqpoll: job.sqpoll,
                            iopoll: job.iopoll,
                            fill: job.fill,
                            verify: verify.clone(),
                            stop: Some(stop),
                        };
                        let uring =
                            |cfg| UringEngine::new(cfg, slots as u32, seed).map_err(RunError::from);
                        let sync = |cfg| SyncEngine::new(cfg, seed).map_err(RunError::from);
                        let bounds = WorkerBounds {
                            ramp: job.bounds.ramp,
                            time: job.bounds.time,
                            interval: job.interval,
                            continue_on_error: job.continue_on_error,
                            stop,
                            live,
                            detail,
                            intervals: Some(cuts),
                            verify: verify.as_deref(),
                            backlog: job
                                .verify_backlog
                                .map(|every| BacklogSpec { every, targets }),
                            warm,
                            pace: job_pace,
                        };
                        let out = match job.engine {
                            EngineKind::Uring => {
                                let engine = pinned.and_then(|()| uring(cfg));
                                start(engine, barrier, streams, frames, &bounds)
                            }
                            EngineKind::Sync => {
                                let engine = pinned.and_then(|()| sync(cfg));
                                start(engine, barrier, streams, frames, &bounds)
                            }
                        };
                        let _ = done.send(());
                        out
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        barrier.wait();
        // CPU over the run itself: engines and buffers are set up before
        // the barrier.
        let cpu0 = CpuSample::now();
        let t0 = now_ns();
        let mut finished = 0;
        let mut cpu1 = None;
        while finished < workers {
            match done_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => {
                    finished += 1;
                    if finished == workers {
                        // The last worker is done: CPU up to here, not up
                        // to the next tick.
                        cpu1 = Some(CpuSample::now());
                    }
                    continue;
                }
                Err(_) if handles.iter().all(|h| h.is_finished()) => break,
                Err(_) => {}
            }
            let mut p = Progress {
                elapsed_ns: now_ns() - t0,
                ..Default::default()
            };
            for l in &live {
                p.ops += l.ops.load(Ordering::Relaxed);
                p.bytes += l.bytes.load(Ordering::Relaxed);
            }
            observer.tick(point, p);
            if wants_live {
                let mut all = LiveSnapshot::default();
                for s in slots.iter().filter_map(LiveSlot::read) {
                    all.add(&s);
                }
                observer.live(point, &all);
            }
            let rows = collector.collect(&cut_slots, false);
            if !rows.is_empty() {
                observer.intervals(point, &rows, false);
            }
        }
        let cpu1 = cpu1.unwrap_or_else(CpuSample::now);
        let outcomes: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("worker thread panicked"))
            .collect();
        (outcomes, cpu0, cpu1)
    });
    let (outcomes, cpu0, cpu1) = outcomes;
    let (user_ns, system_ns) = cpu1.since(&cpu0);
    if let Some(w) = &verify {
        // Also when the job was stopped, or a worker failed: what
        // completed is recorded.
        crate::verify::save_states(job, targets, w, &mut states)?;
    }
    let mut merged: Option<JobResult> = None;
    for o in outcomes {
        let r = o?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => m.merge(&r),
        }
    }
    let mut result = merged.unwrap_or_default();
    result.streams.resize(job.streams.len(), Default::default());
    observer.intervals(point, &collector.collect(&cut_slots, true), true);
    collector.fill(&mut result);
    result.cpu.user_ns = user_ns;
    result.cpu.system_ns = system_ns;
    result.interrupted |= stop.load(Ordering::Relaxed);
    result.cached_at_start = cached_at_start;
    result.data_nonce = iosurvey_engine::data::run_nonce();
    if !result.interrupted {
        result.read_sample = crate::sample::sample_reads(job, targets);
    }
    if job.verify {
        // A job that was stopped reads nothing back: the pass counts the
        // blocks it skips.
        let pass = crate::verify::verify_point(job, targets, verify.as_deref(), &states, stop)?;
        result
            .verify
            .get_or_insert_with(Default::default)
            .merge(&pass);
        // A pass cut short by Ctrl-C checked only part of the targets.
        result.interrupted |= stop.load(Ordering::Relaxed);
    }
    observer.point_finished(point, &result);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_workload::{Bounds, Mix, Pattern, StreamClass, TargetSpec};

    /// Ops every worker of `job` will issue, summed, on a target of `size`.
    fn ops(job: &Job, size: u64) -> u64 {
        let g = Geometry {
            path: "/t".into(),
            size,
            logical_block_size: 512,
            direct: true,
        };
        (0..job.workers)
            .flat_map(|w| build_streams(job, std::slice::from_ref(&g), w).unwrap())
            .map(|s| {
                assert_ne!(s.budget, UNBOUNDED);
                s.budget
            })
            .sum()
    }

    fn job(pattern: Pattern, workers: u32, bounds: Bounds, wrap: bool) -> Job {
        let stream = StreamClass {
            wrap,
            ..StreamClass::new("s", 0, Mix::Read, pattern, 4096, 1)
        };
        Job {
            workers,
            ..Job::new(
                vec![TargetSpec {
                    path: "/t".into(),
                    create_size: None,
                }],
                vec![stream],
                bounds,
            )
        }
    }

    const PASS: Bounds = Bounds {
        time: None,
        bytes: None,
        ramp: Duration::ZERO,
    };

    #[test]
    fn one_pass_over_any_number_of_workers_issues_every_block_once() {
        // 100 blocks: not a multiple of 3 or 7.
        for workers in [1, 2, 3, 7] {
            for pattern in [Pattern::Forward, Pattern::Backward, Pattern::Random] {
                let j = job(pattern, workers, PASS, true);
                assert_eq!(ops(&j, 100 * 4096), 100, "{pattern:?} x {workers}");
            }
        }
    }

    #[test]
    fn a_stream_that_does_not_wrap_ends_at_the_end_of_its_area() {
        let timed = Bounds {
            time: Some(Duration::from_secs(60)),
            ..PASS
        };
        let j = job(Pattern::Forward, 3, timed, false);
        assert_eq!(ops(&j, 100 * 4096), 100);
        let more = Bounds {
            bytes: Some(400 * 4096),
            ..PASS
        };
        assert_eq!(ops(&job(Pattern::Forward, 3, more, false), 100 * 4096), 100);
        assert_eq!(ops(&job(Pattern::Forward, 3, more, true), 100 * 4096), 400);
    }
}
