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
/// its first repeat, the label, the typed parameters, what each stream
/// does (direction, mix, pattern, block size, depth, span, regions, which
/// target) and the settings that shape the load (engine, workers, direct,
/// the bounds, ramp, warm-up, data). Not in it: the targets' paths and
/// sizes, the host, the time, the seed, the label, `--repeat`: the same
/// test run on another host, another day or another device has the same
/// plan, and the history's filters tell those apart.
pub fn plan_hash(r: &RunReport) -> String {
    let points: Vec<_> = r
        .points
        .iter()
        .filter(|p| p.repeat == 0)
        .map(|p| {
            let s = &p.settings;
            json!({
                "label": p.label,
                "params": p.params,
                "engine": s.engine,
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
