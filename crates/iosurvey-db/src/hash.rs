//! The two identities of the database: a plan's (which runs are the same
//! test, and so one history) and a run's (which import is a run already
//! there).

use iosurvey_model::document::RunReport;
use serde_json::json;
use twox_hash::{XxHash3_128, XxHash3_64};

/// 16 hex digits of xxh3-64 of `bytes`.
pub fn hex64(bytes: &[u8]) -> String {
    format!("{:016x}", XxHash3_64::oneshot(bytes))
}

/// The plan of an iosurvey report, hashed: its mode and, for each point of
/// its first repeat, the label (which the typed parameters are written
/// in: they are left out, so that a report older than them has the same
/// plan), what each stream does (direction, mix, pattern, block size,
/// depth, span, regions, which target), the settings that shape the load
/// (engine, workers, direct, the bounds, ramp, warm-up, data, and the
/// engine's options: polling, pinning, registered files and buffers), and
/// the size of each test file the run made (a small one stays in a cache a
/// large one does not). Not in it: the targets' paths, a device's size,
/// the host, the time, the seed, the label, `--repeat`: the same test run
/// on another host, another day or another device has the same plan, and
/// each history is kept apart by host and device (see
/// [`crate::history`]).
pub fn plan_hash(r: &RunReport) -> String {
    let points: Vec<_> = r
        .points
        .iter()
        .filter(|p| p.repeat == 0)
        .map(|p| {
            let s = &p.settings;
            json!({
                "label": p.label,
                "engine": s.engine,
                "sqpoll": [s.sqpoll, s.sqpoll_cpu],
                "hipri": s.hipri,
                "cpus": s.cpus,
                "registered": [s.registered_files, s.fixed_buffers],
                "made": p.targets.iter().map(|t| t.created.then_some(t.size_bytes)).collect::<Vec<_>>(),
                "workers": s.workers,
                "direct": s.direct,
                "time_ns": s.time_ns,
                "bytes": s.bytes,
                "ramp_ns": s.ramp_ns,
                "warm_bytes": s.warm_bytes,
                "loop": s.wrap,
                "compressible_pct": s.compressible_pct,
                "streams": p.streams.iter().map(|t| json!([
                    t.label, t.target, t.rw, t.read_pct, t.pattern, t.bs,
                    t.outstanding, t.offset, t.span, t.regions,
                    t.array.as_ref().map(|a| json!([a.layout, a.members])),
                ])).collect::<Vec<_>>(),
            })
        })
        .collect();
    let plan = json!({ "mode": r.mode, "points": points });
    hex64(plan.to_string().as_bytes())
}

/// What identifies an iosurvey run: when it started, where, the command
/// line, and the nonce its data was drawn from (each run draws its own).
pub fn run_key(r: &RunReport) -> String {
    let nonce = r.points.first().and_then(|p| p.settings.data_nonce.clone());
    let id = json!([r.started_at, r.host.hostname, r.command_line, nonce]);
    hex128(id.to_string().as_bytes())
}

/// 32 hex digits of xxh3-128 of `bytes`.
pub fn hex128(bytes: &[u8]) -> String {
    format!("{:032x}", XxHash3_128::oneshot(bytes))
}
