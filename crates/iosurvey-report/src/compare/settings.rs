//! Which settings differ between the baseline (A) and a run compared with
//! it: the workload (rw, bs, qd, pattern, workers, engine, ...), the
//! targets, the host (hostname, kernel, CPU) and the tool's version, each
//! written as the reports give it. A faster B means little when B ran
//! another workload, or on another kernel: the page says which.

use iosurvey_model::document::{PointReport, RunReport};
use serde::{Deserialize, Serialize};

/// One setting that differs between A and a run compared with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SettingDiff {
    /// Which run (index into `runs`, from 1) differs from the first.
    pub run: usize,
    /// The setting, as the run's page names it (`bs`, `qd`, `kernel`).
    pub setting: String,
    /// A's value and B's, as text.
    pub a: String,
    pub b: String,
}

/// The distinct values of `f` over the streams of `p`, in order, joined.
fn streams(
    p: &PointReport,
    f: impl Fn(&iosurvey_model::document::StreamReport) -> String,
) -> String {
    let mut seen: Vec<String> = Vec::new();
    for s in &p.streams {
        let v = f(s);
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(",")
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// A run's settings, named, from its first point that ran (its first
/// point, when none did) and its host and tool.
pub(crate) fn settings_of(r: &RunReport) -> Vec<(&'static str, String)> {
    let mut out = vec![("mode", r.mode.clone())];
    let first = r
        .points
        .iter()
        .find(|p| p.skipped.is_none())
        .or(r.points.first());
    if let Some(p) = first {
        let s = &p.settings;
        out.extend([
            ("rw", streams(p, |s| s.rw.to_string())),
            ("read %", streams(p, |s| s.read_pct.to_string())),
            ("pattern", streams(p, |s| s.pattern.to_string())),
            ("bs", streams(p, |s| s.bs.to_string())),
            ("qd", streams(p, |s| s.outstanding.to_string())),
            ("streams", p.streams.len().to_string()),
            ("engine", s.engine.to_string()),
            ("workers", s.workers.to_string()),
            ("direct", s.direct.to_string()),
            (
                "time per point",
                opt(s.time_ns.map(|t| crate::format_ns(t as f64))),
            ),
            ("bytes per point", opt(s.bytes)),
            ("ramp", crate::format_ns(s.ramp_ns as f64)),
            ("sqpoll", s.sqpoll.to_string()),
            ("hipri", s.hipri.to_string()),
            (
                "registered files / fixed buffers",
                format!("{} / {}", s.registered_files, s.fixed_buffers),
            ),
            ("compressible %", s.compressible_pct.to_string()),
            ("loop", s.wrap.to_string()),
            (
                "target",
                p.targets
                    .iter()
                    .map(|t| t.path.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            (
                "target kind",
                p.targets
                    .iter()
                    .map(|t| format!("{:?}", t.kind).to_lowercase())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        ]);
    }
    out.push((
        "points",
        r.points
            .iter()
            .filter(|p| p.repeat == 0)
            .count()
            .to_string(),
    ));
    let h = &r.host;
    out.extend([
        ("host", h.hostname.clone()),
        ("kernel", h.kernel.clone()),
        ("os", h.os.clone()),
        ("cpu", format!("{} ({} CPUs)", h.cpu_model, h.cpus)),
        ("memory", h.memory_bytes.to_string()),
        ("version", format!("{} {}", r.tool.name, r.tool.version)),
    ]);
    out
}

/// The settings of `b` (run `run`) that differ from `a`'s, in the order
/// [`settings_of`] lists them.
pub(crate) fn differences(a: &RunReport, b: &RunReport, run: usize) -> Vec<SettingDiff> {
    let theirs = settings_of(b);
    settings_of(a)
        .into_iter()
        .filter_map(|(name, va)| {
            let vb = theirs.iter().find(|(n, _)| *n == name).map(|(_, v)| v)?;
            (*vb != va).then(|| SettingDiff {
                run,
                setting: name.into(),
                a: va,
                b: vb.clone(),
            })
        })
        .collect()
}
