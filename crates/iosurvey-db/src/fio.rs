//! fio's JSON (`--output-format=json` and `json+`) as the database's rows,
//! under the same figure names as iosurvey's: each job is a point, its
//! reads, writes and trims the directions, `lat_ns` the latency (submit to
//! completion, as iosurvey times it; the percentiles of `lat_ns` when fio
//! was asked for them, else of `clat_ns`), and `json+`'s latency bins kept
//! as the histogram.

use crate::hash::{hex128, hex64};
use crate::record::{
    FigureRow, HistogramRow, HostRow, LatencyFigures, PointHead, PointRecord, RunHead, RunRecord,
    Source, TargetRow, TOTAL,
};
use serde_json::{json, Map, Value};

/// Whether `v` looks like fio's JSON output.
pub fn is_fio(v: &Value) -> bool {
    v.get("fio version").is_some() && v.get("jobs").is_some_and(Value::is_array)
}

/// The JSON object in fio's output: fio may print notes before it (and,
/// with `--status-interval`, more objects after it: the first is read).
pub fn json_start(text: &str) -> Option<&str> {
    let at = text.find("\n{").map(|i| i + 1);
    match text.trim_start().starts_with('{') {
        true => Some(text.trim_start()),
        false => at.map(|i| &text[i..]),
    }
}

/// The first JSON value of `text`, and its text.
pub fn first_value(text: &str) -> Option<(Value, &str)> {
    let mut it = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let v = it.next()?.ok()?;
    Some((v, &text[..it.byte_offset()]))
}

/// The rows of fio's output `v` (its text `text`), run on `host`.
pub fn from_fio(
    v: &Value,
    text: &str,
    host: &str,
    label: Option<&str>,
) -> Result<RunRecord, String> {
    let version = v
        .get("fio version")
        .and_then(Value::as_str)
        .unwrap_or("fio-?");
    let secs = v.get("timestamp").and_then(Value::as_u64).unwrap_or(0);
    let started = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    let global = v
        .get("global options")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("fio's JSON has no jobs")?;
    let mut points = Vec::new();
    let mut plan = Vec::new();
    let mut files: Vec<(String, &str)> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let base = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
        // Jobs of one name (numjobs without group_reporting) are points
        // of their own: `rr`, `rr#1`, ...
        let seen = names.iter().filter(|n| **n == base).count();
        names.push(base);
        let name = match seen {
            0 => base.to_string(),
            k => format!("{base}#{k}"),
        };
        // The job's options over the global ones.
        let mut opts: Map<String, Value> = global.clone();
        if let Some(o) = job.get("job options").and_then(Value::as_object) {
            opts.extend(o.clone());
        }
        for (f, kind) in [("filename", "file"), ("directory", "directory")] {
            if let Some(list) = opts.get(f).and_then(Value::as_str) {
                for n in split_names(list) {
                    if !files.iter().any(|(x, _)| *x == n) {
                        files.push((n, kind));
                    }
                }
            }
        }
        let mut shape = opts.clone();
        for not_plan in [
            "filename",
            "directory",
            "output",
            "write_bw_log",
            "write_lat_log",
        ] {
            shape.remove(not_plan);
        }
        plan.push(json!([name, shape]));
        let name = name.as_str();
        let elapsed_ms = ["read", "write", "trim"]
            .iter()
            .filter_map(|d| {
                job.get(*d)
                    .and_then(|c| c.get("runtime"))
                    .and_then(Value::as_u64)
            })
            .max()
            .unwrap_or(0);
        let mut figures = Vec::new();
        let mut histograms = Vec::new();
        for dir in ["read", "write", "trim"] {
            let Some(c) = job.get(dir) else { continue };
            let ops = c.get("total_ios").and_then(Value::as_u64).unwrap_or(0);
            if ops == 0 {
                continue;
            }
            figures.push(FigureRow {
                stream: TOTAL.into(),
                direction: dir.into(),
                window: "total".into(),
                ops: ops as f64,
                bytes: c.get("io_bytes").and_then(Value::as_f64).unwrap_or(0.0),
                iops: c.get("iops").and_then(Value::as_f64).unwrap_or(0.0),
                bytes_per_sec: c.get("bw_bytes").and_then(Value::as_f64).unwrap_or(0.0),
                errors: 0,
                latency: latency(c),
            });
            // json+'s bins sit with the percentiles: under lat_ns when fio
            // was asked for them (lat_percentiles=1), else under clat_ns.
            let basis = latency_basis(c);
            if let Some(bins) = c
                .get(basis)
                .and_then(|l| l.get("bins"))
                .and_then(Value::as_object)
            {
                let mut counts: Vec<[u64; 2]> = bins
                    .iter()
                    .filter_map(|(ns, n)| Some([ns.parse().ok()?, n.as_u64()?]))
                    .collect();
                counts.sort_unstable();
                histograms.push(HistogramRow {
                    stream: TOTAL.into(),
                    direction: dir.into(),
                    data: json!({ "format": format!("fio {basis} bins"), "counts": counts }),
                });
            }
        }
        let error = job.get("error").and_then(Value::as_i64).unwrap_or(0);
        if error != 0 {
            if let Some(f) = figures.first_mut() {
                f.errors = 1;
            }
        }
        let cpu = |k: &str| job.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let total_ops: f64 = figures.iter().map(|f| f.ops).sum();
        let cpu_us = (total_ops > 0.0 && elapsed_ms > 0).then(|| {
            // usr_cpu and sys_cpu are percent of one CPU over the job.
            (cpu("usr_cpu") + cpu("sys_cpu")) / 100.0 * elapsed_ms as f64 * 1e3 / total_ops
        });
        points.push(PointRecord {
            head: PointHead {
                index: i as u32,
                repeat: 0,
                label: name.to_string(),
                params: Value::Object(opts),
                elapsed_ns: elapsed_ms * 1_000_000,
                interrupted: false,
                skipped: None,
                cpu_us_per_io: cpu_us,
                warnings: Vec::new(),
                verify_failures: None,
            },
            figures,
            histograms,
        });
    }
    let disks: Vec<String> = v
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|d| {
            d.iter()
                .filter_map(|x| x.get("name").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let targets = files
        .iter()
        .enumerate()
        .map(|(i, (f, kind))| TargetRow {
            index: i as u32,
            path: f.clone(),
            kind: match *kind {
                "file" if f.starts_with("/dev/") => "block",
                k => k,
            }
            .into(),
            device_name: match disks.len() {
                1 => disks.first().cloned(),
                _ => None,
            },
            ..TargetRow::default()
        })
        .collect();
    Ok(RunRecord {
        head: RunHead {
            run_key: hex128(text.as_bytes()),
            source: Source::Fio,
            started_at: humantime::format_rfc3339_seconds(started).to_string(),
            tool: "fio".into(),
            tool_version: version.trim_start_matches("fio-").to_string(),
            tool_commit: None,
            schema_version: None,
            mode: "fio".into(),
            command_line: Vec::new(),
            plan_hash: hex64(
                json!({ "mode": "fio", "jobs": plan })
                    .to_string()
                    .as_bytes(),
            ),
            label: label.map(String::from),
            repeats: 1,
            interrupted: false,
        },
        hosts: vec![HostRow {
            index: 0,
            hostname: host.to_string(),
            ..HostRow::default()
        }],
        targets,
        points,
        document: Some(text.to_string()),
    })
}

/// Where a direction's percentiles (and json+'s bins) are: `lat_ns`
/// (submit to completion, as iosurvey times) when fio was asked for them
/// (`lat_percentiles=1`), else `clat_ns` (fio's default).
fn latency_basis(c: &Value) -> &'static str {
    match c.get("lat_ns").and_then(|l| l.get("percentile")) {
        Some(_) => "lat_ns",
        None => "clat_ns",
    }
}

/// fio's list of names (`a:b`, a colon in a name escaped as `\:`).
fn split_names(list: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// `lat_ns`'s min, mean, deviation and max; the percentiles of
/// [`latency_basis`].
fn latency(c: &Value) -> Option<LatencyFigures> {
    let lat = c.get("lat_ns")?;
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let pct = c
        .get(latency_basis(c))
        .and_then(|l| l.get("percentile"))
        .and_then(Value::as_object);
    let mut percentiles: Vec<(f64, u64)> = pct
        .map(|p| {
            p.iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(LatencyFigures {
        min_ns: n(lat, "min") as u64,
        mean_ns: n(lat, "mean"),
        stdev_ns: n(lat, "stddev"),
        max_ns: n(lat, "max") as u64,
        percentiles,
    })
}
