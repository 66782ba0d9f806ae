//! An iosurvey report as the database's rows.

use crate::hash::{plan_hash, run_key};
use crate::record::{
    FigureRow, HistogramRow, HostRow, LatencyFigures, PointHead, PointRecord, RunHead, RunRecord,
    Source, TargetRow, TOTAL,
};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamReport, Window};
use iosurvey_stats::Histogram;

/// The rows of `r`; `document` is its JSON as saved, kept beside them.
pub fn from_report(r: &RunReport, document: Option<String>) -> RunRecord {
    let hosts = hosts(r);
    let targets = targets(r, &hosts);
    RunRecord {
        head: RunHead {
            run_key: run_key(r),
            source: Source::Iosurvey,
            started_at: r.started_at.clone(),
            tool: r.tool.name.clone(),
            tool_version: r.tool.version.clone(),
            tool_commit: r.tool.commit.clone(),
            schema_version: Some(r.schema_version),
            mode: r.mode.clone(),
            command_line: r.command_line.clone(),
            plan_hash: plan_hash(r),
            label: r.label.clone(),
            repeats: r.repeats,
            interrupted: r.points.iter().any(|p| p.interrupted),
        },
        hosts,
        targets,
        points: r.points.iter().map(point).collect(),
        document,
    }
}

/// Rank 0's host with its details, then every other host the ranks ran
/// on, by name.
fn hosts(r: &RunReport) -> Vec<HostRow> {
    let h = &r.host;
    let mut rows = vec![HostRow {
        index: 0,
        hostname: h.hostname.clone(),
        kernel: Some(h.kernel.clone()),
        os: Some(h.os.clone()),
        arch: Some(h.arch.clone()),
        cpu_model: Some(h.cpu_model.clone()),
        cpus: Some(h.cpus),
        memory_bytes: Some(h.memory_bytes),
    }];
    for rank in &r.ranks {
        if !rows.iter().any(|x| x.hostname == rank.host) {
            rows.push(HostRow {
                index: rows.len() as u32,
                hostname: rank.host.clone(),
                ..HostRow::default()
            });
        }
    }
    rows
}

/// The first point's targets (every point has the run's), each with its
/// host and the array it was a member of.
fn targets(r: &RunReport, hosts: &[HostRow]) -> Vec<TargetRow> {
    let Some(p) = r.points.first() else {
        return Vec::new();
    };
    let host_of = |i: usize| {
        r.ranks
            .iter()
            .find(|k| k.targets.contains(&i))
            .and_then(|k| hosts.iter().find(|h| h.hostname == k.host))
            .map_or(0, |h| h.index)
    };
    p.targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let d = t.device.clone().unwrap_or_default();
            let in_array = p
                .streams
                .iter()
                .filter_map(|s| s.array.as_ref())
                .find(|a| a.members.contains(&i))
                .map(|a| {
                    let members: Vec<String> = a.members.iter().map(|m| m.to_string()).collect();
                    let layout = serde_json::to_value(a.layout)
                        .map(|v| v.to_string())
                        .unwrap_or_default();
                    format!("{layout} of {}", members.join(","))
                });
            TargetRow {
                index: i as u32,
                host: host_of(i),
                path: t.path.clone(),
                kind: serde_json::to_value(t.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                size_bytes: t.size_bytes,
                logical_block_size: t.logical_block_size,
                physical_block_size: t.physical_block_size,
                rotational: t.rotational,
                direct: t.direct,
                memory_backed: t.memory_backed.clone(),
                link: t.link.clone(),
                link_bytes_per_sec: t.link_bytes_per_sec,
                device_name: d.name,
                model: d.model,
                serial_hash: d.serial_hash,
                firmware: d.firmware,
                transport: d.transport,
                scheduler: d.scheduler,
                filesystem: d.filesystem,
                mount_options: d.mount_options,
                array_layout: in_array.or(d.array),
            }
        })
        .collect()
}

fn point(p: &PointReport) -> PointRecord {
    let warnings = p
        .warnings
        .iter()
        .filter_map(|w| {
            serde_json::to_value(&w.evidence)
                .ok()
                .and_then(|v| v.get("code").and_then(|c| c.as_str().map(String::from)))
        })
        .collect();
    let mut figures = Vec::new();
    let mut histograms = Vec::new();
    for (dir, c) in p.total.classes() {
        if c.is_empty() {
            continue;
        }
        figures.push(class_figures(TOTAL, dir, c));
        if !c.histogram.counts.is_empty() {
            histograms.push(HistogramRow {
                stream: TOTAL.into(),
                direction: dir.into(),
                data: serde_json::to_value(&c.histogram).unwrap_or_default(),
            });
        }
    }
    // Each class of stream (matrix's small and large, ...) apart when the
    // point has more than one.
    let mut labels: Vec<&str> = p.streams.iter().map(|s| s.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    if labels.len() > 1 {
        for l in labels {
            let of: Vec<&StreamReport> = p.streams.iter().filter(|s| s.label == l).collect();
            for dir in ["read", "write", "trim"] {
                if let Some((f, h)) = label_figures(l, dir, &of, p.elapsed_ns) {
                    figures.push(f);
                    histograms.extend(h);
                }
            }
        }
    }
    if let Some(w) = &p.windows {
        for (name, w) in [
            ("common", &w.common),
            ("first_done", &w.first_done),
            ("last_done", &w.last_done),
        ] {
            figures.push(window_figures(name, w));
        }
    }
    PointRecord {
        head: PointHead {
            index: p.index as u32,
            repeat: p.repeat,
            label: p.label.clone(),
            params: serde_json::to_value(&p.params).unwrap_or_default(),
            elapsed_ns: p.elapsed_ns,
            interrupted: p.interrupted,
            skipped: p.skipped.clone(),
            cpu_us_per_io: p.cpu_per_io_us(),
            warnings,
            verify_failures: p.verify.as_ref().map(|v| v.counts.total()),
        },
        figures,
        histograms,
    }
}

fn class_figures(stream: &str, dir: &str, c: &ClassReport) -> FigureRow {
    FigureRow {
        stream: stream.into(),
        direction: dir.into(),
        window: "total".into(),
        ops: c.ops as f64,
        bytes: c.bytes as f64,
        iops: c.iops,
        bytes_per_sec: c.bytes_per_sec,
        errors: c.errors.iter().map(|e| e.count).sum(),
        latency: (c.ops > 0).then(|| LatencyFigures {
            min_ns: c.latency.min_ns,
            mean_ns: c.latency.mean_ns,
            stdev_ns: c.latency.stdev_ns,
            max_ns: c.latency.max_ns,
            percentiles: c
                .latency
                .percentiles
                .iter()
                .map(|q| (q.percentile, q.ns))
                .collect(),
        }),
    }
}

/// The streams of one label together, in one direction: counts added,
/// rates over the point, latency from their merged histograms (none when
/// the report kept only summaries of the streams).
fn label_figures(
    label: &str,
    dir: &str,
    streams: &[&StreamReport],
    elapsed_ns: u64,
) -> Option<(FigureRow, Option<HistogramRow>)> {
    let class = |s: &StreamReport| match dir {
        "read" => s.read.clone(),
        "trim" => s.trim.clone(),
        _ => s.write.clone(),
    };
    let classes: Vec<ClassReport> = streams.iter().map(|s| class(s)).collect();
    if classes.iter().all(ClassReport::is_empty) {
        return None;
    }
    let mut h = Histogram::new();
    for c in &classes {
        h.merge(&Histogram::from_data(&c.histogram));
    }
    let (ops, bytes) = classes
        .iter()
        .fold((0, 0), |(o, b), c| (o + c.ops, b + c.bytes));
    let secs = elapsed_ns as f64 / 1e9;
    let rate = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    let whole = h.count() == ops && ops > 0;
    let latency = whole.then(|| {
        let s = h.summary();
        LatencyFigures {
            min_ns: s.min_ns,
            mean_ns: s.mean_ns,
            stdev_ns: s.stdev_ns,
            max_ns: s.max_ns,
            percentiles: s.percentiles_ns.clone(),
        }
    });
    let figures = FigureRow {
        stream: label.into(),
        direction: dir.into(),
        window: "total".into(),
        ops: ops as f64,
        bytes: bytes as f64,
        iops: rate(ops),
        bytes_per_sec: rate(bytes),
        errors: classes
            .iter()
            .flat_map(|c| c.errors.iter().map(|e| e.count))
            .sum(),
        latency,
    };
    let hist = whole.then(|| HistogramRow {
        stream: label.into(),
        direction: dir.into(),
        data: serde_json::to_value(h.to_data()).unwrap_or_default(),
    });
    Some((figures, hist))
}

/// A window's rates under MPI (reads and writes together).
fn window_figures(name: &str, w: &Window) -> FigureRow {
    FigureRow {
        stream: TOTAL.into(),
        direction: "all".into(),
        window: name.into(),
        ops: w.ops,
        bytes: w.bytes,
        iops: w.iops,
        bytes_per_sec: w.bytes_per_sec,
        errors: 0,
        latency: None,
    }
}
