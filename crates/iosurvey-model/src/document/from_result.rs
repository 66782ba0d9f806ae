//! Builds a point's document from what ran: its plan point, the targets as
//! opened and the job's result; its warnings are judged here too.

use crate::document::class::{ArrayReport, ClassReport, Rw, StreamReport, StreamTotals};
use crate::document::errno::errno_name;
use crate::document::frames::{FramesLayout, FramesReport, FramesSummary};
use crate::document::judge::{warnings, PointTotals};
use crate::document::point::{
    CompressionReport, FailureReport, PointReport, Settings, StreamDetail, TargetReport,
};
use crate::result::StreamSummary;
use crate::Op;
use crate::{FrameLayout, JobResult, Mix, Point, StreamClass, StreamResult};

/// The point's totals over every stream of `r`. A point of one stream
/// that lasted the whole point has that stream's figures as its totals
/// (the merge of one is itself, to the bit): they are copied, not summed
/// and summarised again, which saves a walk of each histogram's buckets.
/// Summarised streams' totals are their merge, written whole.
fn totals(streams: &[StreamReport], r: &JobResult) -> StreamTotals {
    if let Some(s) = &r.summarised {
        return StreamTotals {
            whole: true,
            trim: ClassReport::new(&s.total.trim, r.elapsed_ns),
            ..StreamTotals::new(
                ClassReport::new(&s.total.read, r.elapsed_ns),
                ClassReport::new(&s.total.write, r.elapsed_ns),
            )
        };
    }
    match (streams, &r.streams[..]) {
        ([s], [one]) if one.elapsed_ns == r.elapsed_ns => StreamTotals {
            trim: s.trim.clone(),
            ..StreamTotals::new(s.read.clone(), s.write.clone())
        },
        _ => StreamTotals {
            trim: ClassReport::new(&r.total(Op::Trim), r.elapsed_ns),
            ..StreamTotals::new(
                ClassReport::new(&r.total(Op::Read), r.elapsed_ns),
                ClassReport::new(&r.total(Op::Write), r.elapsed_ns),
            )
        },
    }
}

impl StreamReport {
    /// The report of stream class `s`, which ran for `elapsed_ns` and
    /// gave these reads, writes, discards and traced access times.
    fn of(
        s: &StreamClass,
        elapsed_ns: u64,
        [read, write, trim]: [ClassReport; 3],
        samples: Vec<[u64; 2]>,
        sizes: &[u64],
    ) -> StreamReport {
        let (rw, read_pct) = match s.mix {
            Mix::Read => (Rw::Read, 100),
            Mix::Write => (Rw::Write, 0),
            Mix::Mixed { read_pct } => (Rw::Mixed, read_pct),
            Mix::Trims { trim_pct: 100, .. } => (Rw::Trim, 0),
            Mix::Trims { read_pct: 100, .. } => (Rw::Read, 100),
            Mix::Trims { read_pct: 0, .. } => (Rw::Write, 0),
            Mix::Trims { read_pct, .. } => (Rw::Mixed, read_pct),
        };
        StreamReport {
            label: s.label.clone(),
            target: s.target,
            rw,
            read_pct,
            pattern: s.pattern,
            dist: s.dist,
            bs: s.bs,
            outstanding: s.outstanding,
            offset: s.offset,
            span: s.span,
            regions: s.regions,
            array: s.array.as_ref().map(|a| ArrayReport {
                layout: a.layout,
                members: a.members.clone(),
            }),
            elapsed_ns,
            read,
            write,
            trim,
            trim_pct: s.mix.trim_pct(),
            samples,
            bs_split: s.split.as_ref().map_or_else(Vec::new, |split| {
                split
                    .shares
                    .iter()
                    .enumerate()
                    .map(|(i, sh)| crate::SizeReport {
                        bs: sh.bs,
                        pct: sh.pct,
                        ops: sizes.get(i).copied().unwrap_or(0),
                    })
                    .collect()
            }),
        }
    }

    /// The whole report of class `s` from its result `x`: histograms,
    /// series and access times.
    pub fn whole(s: &StreamClass, x: &StreamResult) -> StreamReport {
        let e = x.elapsed_ns;
        let classes = [&x.read, &x.write, &x.trim].map(|c| ClassReport::new(c, e));
        StreamReport::of(s, e, classes, x.samples.clone(), &x.sizes)
    }

    /// The report of class `s` from its summary `x`: its figures, no
    /// histogram, series or access times.
    pub fn summary(s: &StreamClass, x: &StreamSummary) -> StreamReport {
        let e = x.elapsed_ns;
        let classes = [&x.read, &x.write, &x.trim].map(|c| ClassReport::from_summary(c, e));
        StreamReport::of(s, e, classes, Vec::new(), &x.sizes)
    }
}

impl PointReport {
    /// Builds the report of `point`, which ran on `targets` and gave `r`,
    /// on a host of `ram_bytes` of memory (buffered reads of less are
    /// warned of).
    pub fn new(point: &Point, targets: &[TargetReport], r: &JobResult, ram_bytes: u64) -> Self {
        let job = &point.job;
        // In the job's order, from the streams' results or their summaries.
        let streams: Vec<StreamReport> = match &r.summarised {
            Some(sum) => (job.streams.iter().zip(&sum.streams))
                .map(|(s, x)| StreamReport::summary(s, x))
                .collect(),
            None => (job.streams.iter().zip(&r.streams))
                .map(|(s, x)| StreamReport::whole(s, x))
                .collect(),
        };
        let total = totals(&streams, r);
        let mut report = PointReport {
            index: point.index,
            label: point.label.clone(),
            params: point.params.clone(),
            repeat: 0,
            settings: Settings {
                engine: job.engine,
                workers: job.workers,
                direct: job.direct,
                seed: job.seed,
                time_ns: job.bounds.time.map(|t| t.as_nanos() as u64),
                bytes: job.bounds.bytes,
                ramp_ns: job.bounds.ramp.as_nanos() as u64,
                warm_bytes: job.warm_bytes,
                rate: job.rate,
                interval_ns: job.interval.as_nanos() as u64,
                continue_on_error: job.continue_on_error,
                registered_files: r.engine.registered_files,
                fixed_buffers: r.engine.fixed_buffers,
                reap_window_us: r.engine.reap_window_us,
                empty_wakeups: r.engine.empty_wakeups,
                wrap: (job.bounds.time.is_some() || job.bounds.bytes.is_some())
                    && job.streams.iter().any(|s| s.wrap),
                sqpoll: r.engine.sqpoll,
                sqpoll_cpu: job.sqpoll.and_then(|s| s.cpu),
                hipri: r.engine.iopoll,
                cpus: job.cpus.clone(),
                unique_blocks: true,
                unique_sectors: true,
                data_nonce: (r.data_nonce != 0).then(|| format!("{:016x}", r.data_nonce)),
                compressible_pct: job.fill.compressible_pct,
                stream_detail: match r.summarised {
                    Some(_) => StreamDetail::Summary,
                    None => StreamDetail::Full,
                },
            },
            targets: targets.to_vec(),
            elapsed_ns: r.elapsed_ns,
            first_done_ns: r.first_done_ns,
            interrupted: r.interrupted,
            skipped: point.skip.clone(),
            cpu_user_ns: r.cpu.user_ns,
            cpu_system_ns: r.cpu.system_ns,
            cpu_workers_ns: r.cpu.workers_ns,
            cpu_us_per_io: None,
            failure: r.first_failure.map(|f| FailureReport {
                stream: f.stream,
                op: f.op,
                offset: f.offset,
                errno: f.errno,
                error: errno_name(f.errno),
                at_ns: f.at_ns,
            }),
            warnings: Vec::new(),
            verify: r.verify.clone(),
            compression_check: r.compression_check.map(|c| CompressionReport {
                compressible_bytes_per_sec: c.compressible_bytes_per_sec,
                incompressible_bytes_per_sec: c.incompressible_bytes_per_sec,
                probe_ns: c.probe_ns,
                compressible_written_bytes: c.compressible_written_bytes,
                encoded_bytes: c.encoded_bytes,
            }),
            streams,
            total,
            ranks: Vec::new(),
            windows: None,
            frames: job.frames().map(|f| FramesReport {
                layout: match f.layout {
                    FrameLayout::Files { .. } => FramesLayout::Files,
                    FrameLayout::Stream => FramesLayout::Stream,
                },
                op: f.op,
                format: f.format.clone(),
                frame_bytes: f.frame_bytes,
                header_bytes: f.header_bytes,
                frames: f.frames,
                loops: f.loops,
                threads: job.workers,
                depth: f.depth,
                fps: f.fps,
                queue: f.queue,
                order: f.order,
                files_per_dir: match f.layout {
                    FrameLayout::Files { files_per_dir } => files_per_dir,
                    FrameLayout::Stream => 0,
                },
                records: r.frames.clone(),
                summary: Some(FramesSummary::new(&r.frame_tally, r.elapsed_ns)),
            }),
        };
        report.set_last_intervals();
        report.cpu_us_per_io = report.cpu_per_io_us();
        let totals = PointTotals {
            read: &report.total.read,
            write: &report.total.write,
            trim: &report.total.trim,
            interval_ns: report.settings.interval_ns,
        };
        report.warnings = warnings(point, targets, r, ram_bytes, &report.streams, &totals);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bounds, Job, Pattern, PointParams, StreamClass, TargetKind, TargetSpec};

    /// A read point of `streams` streams on one target, and a result whose
    /// streams recorded a spread of latencies, a few errors and several
    /// intervals; the first stream lasts `first_ns` of the point's 3 s.
    fn point_and_result(streams: usize, first_ns: u64) -> (Point, JobResult) {
        let class = |i| StreamClass::new("s", 0, Mix::Read, Pattern::Random, 4096, 8 + i);
        let job = Job::new(
            vec![TargetSpec {
                path: "/dev/x".into(),
                create_size: None,
            }],
            (0..streams as u32).map(class).collect(),
            Bounds {
                time: None,
                bytes: None,
                ramp: std::time::Duration::ZERO,
            },
        );
        let point = Point {
            index: 0,
            label: String::new(),
            params: PointParams::RUN,
            job,
            skip: None,
        };
        let mut r = JobResult {
            streams: vec![Default::default(); streams],
            elapsed_ns: 3_000_000_000,
            first_done_ns: 3_000_000_000,
            ..Default::default()
        };
        for (k, s) in r.streams.iter_mut().enumerate() {
            s.elapsed_ns = if k == 0 { first_ns } else { 3_000_000_000 };
            for i in 0..20_000u64 {
                let lat = 1_000 + (i * 7919 + k as u64) % 5_000_000;
                s.read.record((i % 3) as usize, 4096, lat);
            }
            s.read.record_error(5);
        }
        (point, r)
    }

    fn target() -> TargetReport {
        TargetReport {
            path: "/dev/x".into(),
            kind: TargetKind::Block,
            size_bytes: 1 << 30,
            logical_block_size: 512,
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

    #[test]
    fn the_totals_of_one_stream_are_its_figures_as_a_merge_gives_them() {
        let target = target();
        for (streams, first_ns) in [(1, 3_000_000_000), (1, 2_000_000_000), (2, 3_000_000_000)] {
            let (point, r) = point_and_result(streams, first_ns);
            let report = PointReport::new(&point, std::slice::from_ref(&target), &r, 1 << 40);
            // The totals as the merge of every stream gives them.
            let mut merged = StreamTotals::new(
                ClassReport::new(&r.total(Op::Read), r.elapsed_ns),
                ClassReport::new(&r.total(Op::Write), r.elapsed_ns),
            );
            for c in [&mut merged.read, &mut merged.write] {
                c.set_last_interval(report.settings.interval_ns, r.elapsed_ns);
            }
            assert_eq!(
                report.total.read, merged.read,
                "{streams} streams, {first_ns} ns"
            );
            assert_eq!(report.total.write, merged.write);
            assert_eq!(report.total.read.ops, 20_000 * streams as u64);
        }
    }

    #[test]
    fn summarised_streams_keep_their_figures_and_the_totals_their_histograms() {
        let (point, r) = point_and_result(3, 2_000_000_000);
        let full = PointReport::new(&point, &[target()], &r, 1 << 40);
        let mut s = r.clone();
        s.summarise();
        assert!(s.streams.is_empty());
        let sum = PointReport::new(&point, &[target()], &s, 1 << 40);
        assert_eq!(sum.settings.stream_detail, StreamDetail::Summary);
        assert_eq!(full.settings.stream_detail, StreamDetail::Full);
        assert_eq!(sum.streams.len(), 3);
        for (a, b) in full.streams.iter().zip(&sum.streams) {
            for (x, y) in [(&a.read, &b.read), (&a.write, &b.write)] {
                assert_eq!((x.ops, x.bytes, x.iops), (y.ops, y.bytes, y.iops));
                assert_eq!(x.latency, y.latency);
                assert_eq!(x.errors, y.errors);
                assert!(y.histogram.counts.is_empty() && y.series.is_empty());
            }
            assert!(!a.read.histogram.counts.is_empty());
            assert_eq!(a.elapsed_ns, b.elapsed_ns);
        }
        assert_eq!(sum.total.read, full.total.read);
        assert_eq!(sum.total.write, full.total.write);
        assert_eq!(sum.warnings, full.warnings);
        // Written whole and read back as written; a full point's totals
        // are made again from its streams.
        for p in [&sum, &full] {
            let json = serde_json::to_value(p).unwrap();
            let has = !json["total"]["read"]["histogram"].is_null();
            assert_eq!(has, p == &sum, "{}", json["settings"]);
            let back: PointReport = serde_json::from_value(json).unwrap();
            assert_eq!(&back, p);
        }
    }
}
