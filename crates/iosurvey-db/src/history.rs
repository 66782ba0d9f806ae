//! Series over time: one figure of one point of one plan on one host, run
//! after run; and where such a series changed (`db regress`), with what
//! changed in the environment at that run.

use crate::read::{Filter, StoredRun};
use crate::record::{FigureRow, PointRecord, TOTAL};
use crate::store::{Db, DbError};
use iosurvey_stats::changepoint::{changes, Change, Options};
use iosurvey_stats::significance::median;

/// A figure a series follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// IOPS where the point's mean I/O is under 64 KiB, MB/s otherwise.
    Rate,
    Iops,
    /// MB/s (10^6 bytes per second).
    Mbps,
    /// Mean latency, in microseconds.
    Mean,
    /// p50 latency, in microseconds.
    P50,
    /// p99 latency, in microseconds.
    P99,
}

impl Figure {
    /// The figure a series of `f` shows, [`Figure::Rate`] resolved.
    fn resolve(self, f: &FigureRow) -> Figure {
        match self {
            Figure::Rate if f.ops > 0.0 && f.bytes / f.ops < 65536.0 => Figure::Iops,
            Figure::Rate => Figure::Mbps,
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Figure::Rate => "rate",
            Figure::Iops => "IOPS",
            Figure::Mbps => "MB/s",
            Figure::Mean => "mean latency us",
            Figure::P50 => "p50 latency us",
            Figure::P99 => "p99 latency us",
        }
    }

    /// Larger is better (rates), or smaller (latencies).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Rate | Figure::Iops | Figure::Mbps)
    }

    fn value(self, f: &FigureRow) -> Option<f64> {
        let lat = |p: f64| {
            f.latency
                .as_ref()
                .and_then(|l| l.at(p))
                .map(|ns| ns as f64 / 1e3)
        };
        match self.resolve(f) {
            Figure::Iops => Some(f.iops),
            Figure::Mbps => Some(f.bytes_per_sec / 1e6),
            Figure::Mean => f.latency.as_ref().map(|l| l.mean_ns / 1e3),
            Figure::P50 => lat(50.0),
            Figure::P99 => lat(99.0),
            Figure::Rate => None,
        }
    }
}

/// One run's value in a series.
#[derive(Clone, Debug)]
pub struct Entry {
    pub run_id: i64,
    pub started_at: String,
    pub label: Option<String>,
    /// The median over the run's repeats of the point.
    pub value: f64,
    /// Repeats the value is the median of.
    pub repeats: usize,
}

/// One figure of one point of one plan on one host and its devices, over
/// the runs.
#[derive(Clone, Debug)]
pub struct Series {
    pub plan_hash: String,
    pub host: String,
    /// The targets the runs measured: each block device by its serial
    /// (hashed) or name, each file by its path; two drives of one host
    /// are two histories.
    pub targets: String,
    pub point_index: u32,
    pub point: String,
    pub direction: String,
    pub figure: Figure,
    pub entries: Vec<Entry>,
}

impl Series {
    /// What the series is, in one line.
    pub fn title(&self) -> String {
        format!(
            "{} {} {} on {} {} (plan {})",
            self.point,
            self.direction,
            self.figure.name(),
            self.host,
            self.targets,
            self.plan_hash
        )
    }
}

/// The plan a history follows: the one asked for, else the newest run's
/// among those `f` selects.
pub fn plan_of(db: &Db, f: &Filter) -> Result<Option<String>, DbError> {
    if f.plan_hash.is_some() {
        return Ok(f.plan_hash.clone());
    }
    Ok(db.runs(f)?.last().map(|r| r.record.head.plan_hash.clone()))
}

/// The series of `figure` over the runs `f` selects (which should name a
/// plan: see [`plan_of`]), one per host, point and direction, and only
/// for the points `point` names (a label) when given. Also the runs.
pub fn series(
    db: &Db,
    f: &Filter,
    figure: Figure,
    point: Option<&str>,
) -> Result<(Vec<Series>, Vec<StoredRun>), DbError> {
    let runs = db.runs(f)?;
    let mut out: Vec<Series> = Vec::new();
    for run in &runs {
        let host = run
            .record
            .hosts
            .first()
            .map_or_else(String::new, |h| h.hostname.clone());
        let targets = targets_key(&run.record.targets);
        let points = db.points(run.id)?;
        // Each point of the plan (by index), its repeats together.
        let mut indices: Vec<u32> = points.iter().map(|p| p.head.index).collect();
        indices.sort_unstable();
        indices.dedup();
        for i in indices {
            // A repeat stopped, skipped or failed is no measure of the
            // storage: left out.
            let of: Vec<&PointRecord> = points
                .iter()
                .filter(|p| p.head.index == i && !p.head.interrupted && p.head.skipped.is_none())
                .filter(|p| p.figures.iter().all(|f| f.errors == 0))
                .collect();
            if of.is_empty() {
                continue;
            }
            let label = of[0].head.label.clone();
            if point.is_some_and(|want| want != label) {
                continue;
            }
            for dir in ["read", "write", "trim"] {
                let figs: Vec<&FigureRow> = of
                    .iter()
                    .filter_map(|p| {
                        p.figures.iter().find(|x| {
                            x.stream == TOTAL && x.window == "total" && x.direction == dir
                        })
                    })
                    .collect();
                let Some(first) = figs.first() else { continue };
                let key = |s: &Series| {
                    s.plan_hash == run.record.head.plan_hash
                        && s.host == host
                        && s.targets == targets
                        && s.point_index == i
                        && s.point == label
                        && s.direction == dir
                };
                // A series keeps the figure its first run resolved to
                // (IOPS or MB/s), whatever a later run's I/O size.
                let resolved = out
                    .iter()
                    .find(|s| key(s))
                    .map_or_else(|| figure.resolve(first), |s| s.figure);
                let values: Vec<f64> = figs.iter().filter_map(|x| resolved.value(x)).collect();
                if values.is_empty() {
                    continue;
                }
                let entry = Entry {
                    run_id: run.id,
                    started_at: run.record.head.started_at.clone(),
                    label: run.record.head.label.clone(),
                    value: median(&values),
                    repeats: values.len(),
                };
                match out.iter_mut().find(|s| key(s)) {
                    Some(s) => s.entries.push(entry),
                    None => out.push(Series {
                        plan_hash: run.record.head.plan_hash.clone(),
                        host: host.clone(),
                        targets: targets.clone(),
                        point_index: i,
                        point: label.clone(),
                        direction: dir.into(),
                        figure: resolved,
                        entries: vec![entry],
                    }),
                }
            }
        }
    }
    Ok((out, runs))
}

/// What tells a run's targets apart: a block device by its serial
/// (hashed), else its name, else its path; a file by its path.
fn targets_key(targets: &[crate::record::TargetRow]) -> String {
    let one = |t: &crate::record::TargetRow| match t.kind.as_str() {
        "block" => t
            .serial_hash
            .as_ref()
            .map(|s| format!("serial {s}"))
            .or_else(|| t.device_name.clone())
            .unwrap_or_else(|| t.path.clone()),
        _ => t.path.clone(),
    };
    targets.iter().map(one).collect::<Vec<_>>().join(",")
}

/// A change found in a series.
#[derive(Clone, Debug)]
pub struct Found {
    /// The series' index of the first run after the change.
    pub at: usize,
    pub change: Change,
    /// The means of the segments before and after it.
    pub before: f64,
    pub after: f64,
    /// After over before, minus one, in percent.
    pub pct: f64,
    /// Worse: a lower rate, or a higher latency.
    pub worse: bool,
    /// What differed between the run before and the run at the change.
    pub differs: Vec<String>,
}

/// Every change in `s`, with what changed in the runs' environment.
pub fn regressions(s: &Series, runs: &[StoredRun], opts: &Options) -> Vec<Found> {
    let x: Vec<f64> = s.entries.iter().map(|e| e.value).collect();
    let found = changes(&x, opts);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|c| c.index));
    bounds.push(x.len());
    let mean = |a: usize, b: usize| x[a..b].iter().sum::<f64>() / (b - a).max(1) as f64;
    found
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let (before, after) = (
                mean(bounds[k], bounds[k + 1]),
                mean(bounds[k + 1], bounds[k + 2]),
            );
            let pct = (after / before - 1.0) * 100.0;
            let run = |i: usize| runs.iter().find(|r| r.id == s.entries[i].run_id);
            let differs = match (run(c.index - 1), run(c.index)) {
                (Some(a), Some(b)) => environment_changes(a, b),
                _ => Vec::new(),
            };
            Found {
                at: c.index,
                change: *c,
                before,
                after,
                pct,
                worse: (pct < 0.0) == s.figure.higher_is_better(),
                differs,
            }
        })
        .collect()
}

/// What differs between runs `a` and `b`: the tool, the label, rank 0's
/// host, and each target's device.
pub fn environment_changes(a: &StoredRun, b: &StoredRun) -> Vec<String> {
    let mut out = Vec::new();
    let mut cmp = |what: String, x: Option<&str>, y: Option<&str>| {
        if x != y {
            out.push(format!(
                "{what}: {} -> {}",
                x.unwrap_or("(none)"),
                y.unwrap_or("(none)")
            ));
        }
    };
    let (ha, hb) = (&a.record.head, &b.record.head);
    cmp(
        "tool version".into(),
        Some(&ha.tool_version),
        Some(&hb.tool_version),
    );
    cmp(
        "commit".into(),
        ha.tool_commit.as_deref(),
        hb.tool_commit.as_deref(),
    );
    cmp("label".into(), ha.label.as_deref(), hb.label.as_deref());
    let (xa, xb) = (a.record.hosts.first(), b.record.hosts.first());
    cmp(
        "host".into(),
        xa.map(|h| h.hostname.as_str()),
        xb.map(|h| h.hostname.as_str()),
    );
    cmp(
        "kernel".into(),
        xa.and_then(|h| h.kernel.as_deref()),
        xb.and_then(|h| h.kernel.as_deref()),
    );
    cmp(
        "os".into(),
        xa.and_then(|h| h.os.as_deref()),
        xb.and_then(|h| h.os.as_deref()),
    );
    cmp(
        "cpu".into(),
        xa.and_then(|h| h.cpu_model.as_deref()),
        xb.and_then(|h| h.cpu_model.as_deref()),
    );
    let (ma, mb) = (
        xa.and_then(|h| h.memory_bytes).map(|m| m.to_string()),
        xb.and_then(|h| h.memory_bytes).map(|m| m.to_string()),
    );
    cmp("memory bytes".into(), ma.as_deref(), mb.as_deref());
    for (ta, tb) in a.record.targets.iter().zip(&b.record.targets) {
        let t = format!("target {}", ta.index);
        cmp(format!("{t} path"), Some(&ta.path), Some(&tb.path));
        let (sa, sb) = (ta.size_bytes.to_string(), tb.size_bytes.to_string());
        cmp(format!("{t} size"), Some(&sa), Some(&sb));
        let direct = |d: bool| if d { "O_DIRECT" } else { "buffered" };
        cmp(
            format!("{t} I/O"),
            Some(direct(ta.direct)),
            Some(direct(tb.direct)),
        );
        let fields = [
            ("device", &ta.device_name, &tb.device_name),
            ("model", &ta.model, &tb.model),
            ("serial", &ta.serial_hash, &tb.serial_hash),
            ("firmware", &ta.firmware, &tb.firmware),
            ("transport", &ta.transport, &tb.transport),
            ("scheduler", &ta.scheduler, &tb.scheduler),
            ("filesystem", &ta.filesystem, &tb.filesystem),
            ("mount options", &ta.mount_options, &tb.mount_options),
            ("link", &ta.link, &tb.link),
            ("array", &ta.array_layout, &tb.array_layout),
        ];
        for (name, x, y) in fields {
            cmp(format!("{t} {name}"), x.as_deref(), y.as_deref());
        }
    }
    if a.record.targets.len() != b.record.targets.len() {
        out.push(format!(
            "targets: {} -> {}",
            a.record.targets.len(),
            b.record.targets.len()
        ));
    }
    out
}
