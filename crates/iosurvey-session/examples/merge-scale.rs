//! Rank 0's side of a distributed point, without MPI: decode and merge
//! `R` ranks' parts of `S` streams each (each stream a survey region's:
//! a few writes and reads, their histograms and series), the parts made
//! and encoded first (each rank's own work, before the barrier). Prints,
//! per rank count, the median of `RUNS` timings of rank 0's decode and
//! merge, the encoded bytes per stream and the merged result's streams.
//! What this leaves out: the transfers (MPI; at 10 GB/s, 0.1 ms per MB)
//! and the waiting for ranks to be scheduled (on an oversubscribed host).
//!
//! DETAIL is `full` (each stream whole) or `summary` (each stream's
//! summary and each rank's merge; `--stream-detail`'s default above 1,024
//! streams under MPI), and the figure includes the point's report
//! (`PointReport::new`) when REPORT is `report`: rank 0's work per point
//! but the writing of files.
//!
//! Usage: cargo run --release -p iosurvey-session --example merge-scale --
//!        [RANKS (default 2,4,8,16,32,64,128,256,512,1024)] [S (256)]
//!        [RUNS (3)] [DETAIL (full)] [REPORT (merge)]

use iosurvey_model::document::{PointReport, StreamDetail, TargetReport};
use iosurvey_model::{
    Bounds, Job, Mix, Pattern, Point, PointParams, StreamClass, TargetKind, TargetSpec,
};
use iosurvey_run::{JobResult, StreamResult};
use iosurvey_session::merge::{Instants, Maps, Merger, RankPart};
use std::time::Instant;

/// A survey region's stream: `ops` writes then `ops` reads of 4 KiB over
/// two 1 s intervals, latencies spread from 20 us to about 2 ms.
fn region(seed: u64, ops: u64) -> StreamResult {
    let mut s = StreamResult::default();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for k in 0..ops {
        for c in [&mut s.write, &mut s.read] {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lat = 20_000 + (x >> 33) % 2_000_000;
            c.record((k * 2 / ops) as usize, 4096, lat);
        }
    }
    s.elapsed_ns = 1_500_000_000;
    s
}

/// Rank `r`'s encoded part: its `s` streams are the job's `r*s..(r+1)*s`.
fn part(r: usize, s: usize, at: &Instants, detail: StreamDetail) -> Vec<u8> {
    let result = JobResult {
        streams: (0..s).map(|i| region((r * s + i) as u64, 8)).collect(),
        elapsed_ns: 1_500_000_000,
        ..Default::default()
    };
    let maps = Maps {
        streams: (r * s..(r + 1) * s).collect(),
        targets: vec![r],
    };
    let mut p = RankPart::new(0, Ok(result), 1_000_000 + r as u64, &maps);
    let mut bytes = p.encode(detail, |_| false);
    p.count_done(at, 1_000_000_000);
    p.append_done(&mut bytes);
    bytes
}

/// The one target of [`survey_point`].
fn target() -> TargetReport {
    TargetReport {
        path: "/dev/x".into(),
        kind: TargetKind::Block,
        size_bytes: 1 << 40,
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

/// A point of `n` streams of 4 KiB random I/O on one target, for its
/// report.
fn survey_point(n: usize) -> Point {
    let class = |_| StreamClass::new("r", 0, Mix::Read, Pattern::Random, 4096, 1);
    let targets = vec![TargetSpec {
        path: "/dev/x".into(),
        create_size: None,
    }];
    let bounds = Bounds {
        time: None,
        bytes: None,
        ramp: std::time::Duration::ZERO,
    };
    Point {
        index: 0,
        label: String::new(),
        params: PointParams::RUN,
        job: Job::new(targets, (0..n).map(class).collect(), bounds),
        skip: None,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let ranks: Vec<usize> = args
        .next()
        .unwrap_or_else(|| "2,4,8,16,32,64,128,256,512,1024".into())
        .split(',')
        .map(|x| x.parse().expect("RANKS: numbers, comma-separated"))
        .collect();
    let s: usize = args.next().map_or(256, |x| x.parse().expect("S: a number"));
    let runs: usize = args
        .next()
        .map_or(3, |x| x.parse().expect("RUNS: a number"));
    let detail = match args.next().as_deref() {
        None | Some("full") => StreamDetail::Full,
        Some("summary") => StreamDetail::Summary,
        Some(x) => panic!("DETAIL: full or summary, not {x}"),
    };
    let report = match args.next().as_deref() {
        None | Some("merge") => false,
        Some("report") => true,
        Some(x) => panic!("REPORT: merge or report, not {x}"),
    };
    let at = Instants([1_000_000, 1_400_000_000, 1_000_000, 1_600_000_000]);
    println!("ranks\tstreams\tmerge_ms\tbytes_per_stream\tmerged_streams");
    for &n in &ranks {
        let parts: Vec<Vec<u8>> = (0..n).map(|r| part(r, s, &at, detail)).collect();
        let point = report.then(|| survey_point(n * s));
        let bytes: usize = parts.iter().map(Vec::len).sum();
        let mut times = Vec::new();
        let mut merged = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let mut m = Merger::new(0, n * s, detail);
            for b in &parts {
                let (p, body) = RankPart::decode(b).expect("a part decodes");
                m.add(p, body).expect("its summaries decode");
            }
            let (res, _, _) = m.finish(&at);
            let doc = point
                .as_ref()
                .map(|p| PointReport::new(p, &[target()], &res, 1 << 40));
            times.push(t.elapsed().as_secs_f64() * 1e3);
            merged = match &res.summarised {
                Some(x) => x.streams.iter().filter(|x| x.read.ops > 0).count(),
                None => res.streams.iter().filter(|x| x.read.ops > 0).count(),
            };
            drop((res, doc));
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{n}\t{}\t{:.2}\t{}\t{merged}",
            n * s,
            times[times.len() / 2],
            bytes / (n * s)
        );
    }
}
