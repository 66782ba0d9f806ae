//! `--check-compression`: the point's writes run before it with data that
//! compresses to almost nothing and with incompressible data, in turn; the
//! rates of each, and, on files, what the filesystem stored of the
//! compressible data (its extents, encoded or not), which the report
//! judges (`compression_suspected`).

use crate::error::RunError;
use crate::result::JobResult;
use iosurvey_model::{CompressionCheck, DataFill, Op, TargetKind};
use iosurvey_target::target::OpenTarget;
use iosurvey_workload::pattern::resolve_area;
use iosurvey_workload::{Bounds, Point};
use std::os::fd::AsFd;
use std::time::Duration;

/// How long each write of `--check-compression` runs, and how many of
/// each kind it runs.
const COMPRESSION_PROBE: Duration = Duration::from_secs(1);
const COMPRESSION_ROUNDS: usize = 3;

/// One write of the check: its rate and the bytes it wrote.
struct Probe {
    bytes_per_sec: f64,
    bytes: u64,
}

/// Runs the writes of `point` for [`COMPRESSION_PROBE`] at a time, with
/// data that compresses to almost nothing (every 512-byte sector zeros but
/// for its first 16 bytes, which keep it unique) and with incompressible
/// data, in turn, [`COMPRESSION_ROUNDS`] times each, after one write of
/// incompressible data that is not counted: the median rate of each kind,
/// and what the file targets' extents hold after the last compressible
/// write (before an incompressible one replaces it).
/// `run` runs one point's job on the targets (the runner's `run_job`; taken
/// as a parameter so that this check does not reach back into the runner).
pub(crate) fn check_compression(
    point: &Point,
    targets: &[OpenTarget],
    mut run: impl FnMut(&Point) -> Result<JobResult, RunError>,
) -> Result<CompressionCheck, RunError> {
    let mut probe = |compressible_pct: u8| -> Result<Probe, RunError> {
        let mut p = point.clone();
        p.job.verify = false;
        p.job.verify_backlog = None;
        p.job.check_compression = false;
        p.job.fill = DataFill { compressible_pct };
        p.job.bounds = Bounds {
            time: Some(COMPRESSION_PROBE),
            bytes: None,
            ramp: Duration::ZERO,
        };
        for s in &mut p.job.streams {
            s.wrap = true;
        }
        let r = run(&p)?;
        let w = r.total(Op::Write);
        let secs = r.elapsed_ns as f64 / 1e9;
        Ok(Probe {
            bytes_per_sec: if secs > 0.0 {
                w.bytes as f64 / secs
            } else {
                0.0
            },
            bytes: w.bytes,
        })
    };
    // A first write of incompressible data, not counted, so that neither
    // kind pays for allocating the area (a new file, a thin LUN); then the
    // two kinds in turn, and the median of each, so that one disturbed
    // second of a shared machine does not decide.
    probe(0)?;
    let (mut zeros, mut unique) = (Vec::new(), Vec::new());
    let mut stored = (0, None);
    for round in 0..COMPRESSION_ROUNDS {
        let z = probe(100)?;
        zeros.push(z.bytes_per_sec);
        if round + 1 == COMPRESSION_ROUNDS {
            stored = stored_after(point, targets, z.bytes);
        }
        unique.push(probe(0)?.bytes_per_sec);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok(CompressionCheck {
        compressible_bytes_per_sec: median(&mut zeros),
        incompressible_bytes_per_sec: median(&mut unique),
        probe_ns: COMPRESSION_PROBE.as_nanos() as u64,
        compressible_written_bytes: stored.0,
        encoded_bytes: stored.1,
    })
}

/// The bytes a write of `written` bytes left on the areas `point` writes
/// (up to their size), and the bytes of the file targets' areas in extents
/// the filesystem encoded (written back first); `None` for the second when
/// no written target has an extent map.
fn stored_after(point: &Point, targets: &[OpenTarget], written: u64) -> (u64, Option<u64>) {
    let mut area = 0u64;
    let mut encoded: Option<u64> = None;
    for s in point.job.streams.iter().filter(|s| s.mix.writes()) {
        let Some(t) = targets.get(s.target) else {
            continue;
        };
        let Ok(a) = resolve_area(t.size, s.offset, s.span, s.bs) else {
            continue;
        };
        area += a.len;
        if t.kind != TargetKind::File || s.array.is_some() || s.frames.is_some() {
            continue;
        }
        if let Ok(st) = iosurvey_sys::fiemap::stored(t.fd.as_fd(), a.start, a.len) {
            *encoded.get_or_insert(0) += st.encoded;
        }
    }
    (written.min(area), encoded)
}
