//! Plausibility warnings: reasons to doubt a figure, each with a stable
//! code, the figures that raised it and the threshold they crossed, so that
//! a script can act on them and a reader can judge them.

mod pace;
mod series;
mod stored;
mod window;

use crate::document::class::{ClassReport, StreamReport};
use crate::document::evidence::*;
use crate::document::point::TargetReport;
use crate::document::warning::Warning;
use crate::Op;
use crate::{FrameLayout, JobResult, Point};
use series::{collapse, rate_checks};
use stored::{compressed, unwritten};
use window::short_window;

/// A random read's median latency below which a rotational device cannot
/// be: a seek and half a turn of the fastest disks take more.
const ROTATIONAL_FLOOR_NS: u64 = 1_000_000;
/// The most a rotational device moves per second: the fastest disks'
/// outer tracks (dual-actuator drives) give about 550 MB/s.
const ROTATIONAL_MAX_BYTES_PER_SEC: f64 = 600e6;
/// How far above its link's ceiling a rate may be before it is doubted
/// (the ceiling is computed from nominal figures).
const LINK_TOLERANCE: f64 = 1.02;
/// Share of a file's pages read that, resident when a buffered job starts
/// (after the caches were dropped), makes it memory.
const RESIDENT_SHARE: f64 = 0.99;

/// The warnings of a point that ran `point` on `targets` and gave `r`, on
/// a host of `ram` bytes of memory; `streams` and `total` are its report's.
pub(crate) fn warnings(
    point: &Point,
    targets: &[TargetReport],
    r: &JobResult,
    ram: u64,
    streams: &[StreamReport],
    total: &PointTotals<'_>,
) -> Vec<Warning> {
    let job = &point.job;
    let mut out = Vec::new();
    // A file per frame is opened and closed per frame: it is not
    // registered, by design, so only fixed buffers are expected.
    let per_frame_files = job
        .frames()
        .is_some_and(|f| matches!(f.layout, FrameLayout::Files { .. }));
    if job.engine == crate::EngineKind::Uring
        && !((r.engine.registered_files || per_frame_files) && r.engine.fixed_buffers)
    {
        out.push(Warning::new(
            Evidence::IoUringUnregistered(IoUringUnregistered {
                registered_files: r.engine.registered_files,
                fixed_buffers: r.engine.fixed_buffers,
            }),
            "io_uring ran without registered files or fixed buffers (the kernel refused them), which costs CPU per I/O; lower --qd or check RLIMIT_MEMLOCK".into(),
            "both expected",
        ));
    }
    if !job.direct {
        for s in job.streams.iter().filter(|s| s.mix.reads()) {
            let t = &targets[s.target];
            let area = s.span.unwrap_or(t.size_bytes.saturating_sub(s.offset));
            if area < ram {
                out.push(Warning::new(
                    Evidence::BufferedFitsInRam(BufferedFitsInRam {
                        target: t.path.clone(),
                        area_bytes: area,
                        ram_bytes: ram,
                    }),
                    format!(
                        "buffered reads of {} cover {area} bytes, less than the {ram} bytes of RAM: after the first pass they come from the page cache, not the device; drop --buffered or use an area larger than RAM",
                        t.path
                    ),
                    "an area at least the size of RAM",
                ));
            }
        }
    }
    for t in targets {
        if let Some(kind) = &t.memory_backed {
            out.push(Warning::new(
                Evidence::MemoryBacked(MemoryBacked {
                    target: t.path.clone(),
                    backing: kind.clone(),
                    ..Default::default()
                }),
                format!(
                    "{} is backed by memory ({kind}), not storage: its figures are the speed of RAM and of the kernel",
                    t.path
                ),
                "a target on a storage device",
            ));
        }
    }
    for c in &r.cached_at_start {
        let Some(t) = targets.get(c.target) else {
            continue;
        };
        if c.pages > 0 && c.resident as f64 >= RESIDENT_SHARE * c.pages as f64 {
            out.push(Warning::new(
                Evidence::MemoryBacked(MemoryBacked {
                    target: t.path.clone(),
                    backing: "page cache".into(),
                    pages: Some(c.pages),
                    resident_pages: Some(c.resident),
                }),
                format!(
                    "{}: {} of the {} pages read were in the page cache when the job started, even after iosurvey asked the kernel to drop them (pinned by mlock, mapped by another process, or kept by the file system): the buffered reads were reads of RAM; drop --buffered",
                    t.path, c.resident, c.pages
                ),
                "99% of the pages read resident at the start",
            ));
        }
    }
    // Each target's read and write rates, its streams' added up (one
    // walk of the streams, however many targets).
    let mut rates = vec![[0.0f64; 2]; targets.len()];
    for (s, sr) in job.streams.iter().zip(streams) {
        if let Some(r) = rates.get_mut(s.target) {
            r[0] += sr.read.bytes_per_sec;
            r[1] += sr.write.bytes_per_sec;
        }
    }
    for (t, [read, write]) in targets.iter().zip(rates) {
        out.extend(rate_ceilings(t, Op::Read, read));
        out.extend(rate_ceilings(t, Op::Write, write));
    }
    if let Some(w) = r.read_sample.as_ref().and_then(unwritten) {
        out.push(w);
    }
    for (s, sr) in job.streams.iter().zip(streams) {
        let t = &targets[s.target];
        let p50 = sr.read.latency.at(50.0);
        // Memory that answers (a loop device's page cache, which also
        // copies the rotational flag of its file's disk) is named by
        // `memory_backed`; no floor of a disk applies to it.
        let rotational = t.rotational == Some(true) && t.memory_backed.is_none();
        if rotational && !s.pattern.is_sequential() && sr.read.ops > 0 {
            if let Some(p50) = p50.filter(|&ns| ns < ROTATIONAL_FLOOR_NS) {
                out.push(Warning::new(
                    Evidence::LatencyBelowFloor(LatencyBelowFloor {
                        target: t.path.clone(),
                        read_p50_ns: p50,
                    }),
                    format!(
                        "random reads of {} took {} ns at the median, faster than a rotational disk can seek: they were served by a cache (the disk's, a controller's or the page cache), or the device is not rotational",
                        t.path, p50
                    ),
                    "a random-read p50 of at least 1 ms on a rotational device",
                ));
            }
        }
    }
    if let Some(w) = r.compression_check.as_ref().and_then(compressed) {
        out.push(w);
    }
    if matches!(point.params, crate::PointParams::Parallel { .. }) {
        out.extend(short_window(streams, job.bounds.time));
    }
    if matches!(point.params, crate::PointParams::Run { .. }) {
        for (op, c) in [(Op::Read, total.read), (Op::Write, total.write)] {
            if let Some(w) = rate_checks(op, c, total.interval_ns) {
                out.push(w);
            }
        }
        if let Some(w) = collapse(total.write, total.interval_ns) {
            out.push(w);
        }
    }
    if let Some(w) = job.rate.as_ref().and_then(|cap| {
        pace::rate_not_reached(cap, job.workers, &[total.read, total.write, total.trim])
    }) {
        out.push(w);
    }
    out
}

/// `rate_above_link` and `rate_above_class` for `op`s of target `t` at
/// `rate` bytes per second.
fn rate_ceilings(t: &TargetReport, op: Op, rate: f64) -> Vec<Warning> {
    let mut out = Vec::new();
    if let Some(ceiling) = t
        .link_bytes_per_sec
        .filter(|&c| rate > c as f64 * LINK_TOLERANCE)
    {
        out.push(Warning::new(
            Evidence::RateAboveLink(RateAboveLink {
                target: t.path.clone(),
                op,
                bytes_per_sec: rate.round(),
                link_bytes_per_sec: ceiling,
            }),
            format!(
                "{op}s of {} ran at {:.0} MB/s, more than its interface carries ({:.0} MB/s, {}): the data came from a cache, not over the link",
                t.path,
                rate / 1e6,
                ceiling as f64 / 1e6,
                t.link.as_deref().unwrap_or("its link")
            ),
            "the interface's ceiling (plus 2%)",
        ));
    }
    // Memory that answers is named by `memory_backed` (a loop device
    // copies its file's disk's rotational flag).
    let rotational = t.rotational == Some(true) && t.memory_backed.is_none();
    if rotational && rate > ROTATIONAL_MAX_BYTES_PER_SEC {
        out.push(Warning::new(
            Evidence::RateAboveClass(RateAboveClass {
                target: t.path.clone(),
                op,
                bytes_per_sec: rate.round(),
                class: "rotational".into(),
                class_bytes_per_sec: ROTATIONAL_MAX_BYTES_PER_SEC,
            }),
            format!(
                "{op}s of {} ran at {:.0} MB/s, more than a rotational disk's platters give (the fastest give about {:.0} MB/s): a cache answered (the disk's, a controller's, a host's), or the device is not rotational",
                t.path,
                rate / 1e6,
                ROTATIONAL_MAX_BYTES_PER_SEC / 1e6
            ),
            "at most 600 MB/s on a rotational device",
        ));
    }
    out
}

/// A point's totals, for the checks on its interval series.
pub(crate) struct PointTotals<'a> {
    pub read: &'a ClassReport,
    pub write: &'a ClassReport,
    pub trim: &'a ClassReport,
    pub interval_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warnings of a one-stream read point on one block device with a
    /// link of `link` bytes/s, which read `bytes` in one second.
    fn warned(link: Option<u64>, bytes: u64) -> Vec<Warning> {
        use crate::{Bounds, Job, Mix, Pattern, PointParams, StreamClass, TargetSpec};
        let job = Job::new(
            vec![TargetSpec {
                path: "/dev/x".into(),
                create_size: None,
            }],
            vec![StreamClass::new(
                "s",
                0,
                Mix::Read,
                Pattern::Forward,
                1 << 20,
                1,
            )],
            Bounds {
                time: None,
                bytes: None,
                ramp: std::time::Duration::ZERO,
            },
        );
        let point = crate::Point {
            index: 0,
            label: String::new(),
            params: PointParams::RUN,
            job,
            skip: None,
        };
        let mut r = JobResult {
            streams: vec![Default::default()],
            elapsed_ns: 1_000_000_000,
            first_done_ns: 1_000_000_000,
            ..Default::default()
        };
        r.engine.registered_files = true;
        r.engine.fixed_buffers = true;
        r.streams[0].elapsed_ns = 1_000_000_000;
        for _ in 0..bytes >> 20 {
            r.streams[0].read.record(0, 1 << 20, 1000);
        }
        let target = TargetReport {
            path: "/dev/x".into(),
            kind: crate::TargetKind::Block,
            size_bytes: 1 << 40,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: Some(false),
            direct: true,
            created: false,
            memory_backed: None,
            link_bytes_per_sec: link,
            link: link.map(|_| "SATA link ata1 at 6.0 Gbps".into()),
            device: None,
        };
        crate::document::PointReport::new(&point, &[target], &r, 1 << 30).warnings
    }

    #[test]
    fn a_rate_above_the_link_is_doubted_and_one_below_it_is_not() {
        let has = |w: &[Warning]| w.iter().any(|w| w.code() == "rate_above_link");
        let over = warned(Some(600_000_000), 900 << 20);
        assert!(has(&over), "{over:?}");
        let w = over.iter().find(|w| w.code() == "rate_above_link").unwrap();
        let Evidence::RateAboveLink(e) = &w.evidence else {
            panic!("{w:?}")
        };
        assert_eq!(e.link_bytes_per_sec, 600_000_000);
        assert!(w.message.contains("SATA link ata1"), "{w}");
        assert!(!has(&warned(Some(600_000_000), 500 << 20)));
        assert!(!has(&warned(None, 900 << 20)), "no link known, no doubt");
    }
}
