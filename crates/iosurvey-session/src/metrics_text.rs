//! Live metrics in Prometheus' text exposition format (version 0.0.4, which
//! node_exporter's textfile collector and the Pushgateway read): per target
//! and direction, I/Os, bytes and errors as counters and latency as a
//! histogram in seconds, each series labelled with the host, target, model,
//! firmware, plan hash and point.

use iosurvey_engine::Op;
use iosurvey_run::{LiveSnapshot, LIVE_BOUNDS_NS};
use std::fmt::Write;

/// What labels every series of a run.
#[derive(Clone, Debug, Default)]
pub struct RunLabels {
    pub host: String,
    /// The plan's hash, as the history database keeps it.
    pub plan: String,
    pub mode: String,
    /// `--label`, or empty.
    pub label: String,
    pub version: String,
}

/// A target's labels.
#[derive(Clone, Debug, Default)]
pub struct TargetLabels {
    pub path: String,
    pub model: String,
    pub firmware: String,
}

/// The point running: its label and, per stream, its target (an index
/// into the targets' labels).
#[derive(Clone, Debug, Default)]
pub struct PointLabels {
    pub label: String,
    /// Which run of the point this is (`--repeat`), from 0: each its own
    /// series, so that a counter never goes down.
    pub repeat: u32,
    pub stream_target: Vec<usize>,
}

/// One target and direction, added up over its streams.
#[derive(Clone, Debug, Default)]
struct Sums {
    ops: u64,
    bytes: u64,
    errors: u64,
    lat_sum_ns: u64,
    at_most: Vec<u64>,
}

/// A counter family: its name, its help and its value in the sums.
type Counter = (&'static str, &'static str, fn(&Sums) -> u64);

/// `snap` as a whole exposition: the run's info, then each metric family
/// with every target and direction the point did anything on.
pub fn render(
    run: &RunLabels,
    targets: &[TargetLabels],
    point: &PointLabels,
    snap: &LiveSnapshot,
) -> String {
    let mut sums: Vec<((usize, Op), Sums)> = Vec::new();
    for c in &snap.classes {
        let t = point.stream_target.get(c.stream).copied().unwrap_or(0);
        let i = match sums.iter().position(|(k, _)| *k == (t, c.op)) {
            Some(i) => i,
            None => {
                let zero = Sums {
                    at_most: vec![0; LIVE_BOUNDS_NS.len()],
                    ..Sums::default()
                };
                sums.push(((t, c.op), zero));
                sums.len() - 1
            }
        };
        let s = &mut sums[i].1;
        s.ops += c.ops;
        s.bytes += c.bytes;
        s.errors += c.errors;
        s.lat_sum_ns += c.lat_sum_ns;
        for (a, b) in s.at_most.iter_mut().zip(&c.at_most) {
            *a += b;
        }
    }
    sums.sort_by_key(|((t, op), _)| (*t, *op as u8));
    let labels = |(t, op): (usize, Op)| {
        let tl = targets.get(t).cloned().unwrap_or_default();
        format!(
            "host=\"{}\",target=\"{}\",model=\"{}\",firmware=\"{}\",plan=\"{}\",point=\"{}\",repeat=\"{}\",direction=\"{}\"",
            esc(&run.host),
            esc(&tl.path),
            esc(&tl.model),
            esc(&tl.firmware),
            esc(&run.plan),
            esc(&point.label),
            point.repeat,
            op.name()
        )
    };
    let mut out = String::new();
    family(
        &mut out,
        "iosurvey_run_info",
        "gauge",
        "The run being measured (always 1).",
    );
    let _ = writeln!(
        out,
        "iosurvey_run_info{{host=\"{}\",plan=\"{}\",mode=\"{}\",label=\"{}\",version=\"{}\",point=\"{}\",repeat=\"{}\"}} 1",
        esc(&run.host),
        esc(&run.plan),
        esc(&run.mode),
        esc(&run.label),
        esc(&run.version),
        esc(&point.label),
        point.repeat
    );
    let counters: [Counter; 3] = [
        (
            "iosurvey_io_ops_total",
            "I/Os completed in the point's measured phase.",
            |s| s.ops,
        ),
        (
            "iosurvey_io_bytes_total",
            "Bytes moved by the I/Os completed in the point's measured phase.",
            |s| s.bytes,
        ),
        (
            "iosurvey_io_errors_total",
            "I/Os failed in the point's measured phase.",
            |s| s.errors,
        ),
    ];
    for (name, help, value) in counters {
        family(&mut out, name, "counter", help);
        for (k, s) in &sums {
            let _ = writeln!(out, "{name}{{{}}} {}", labels(*k), value(s));
        }
    }
    let name = "iosurvey_io_latency_seconds";
    family(
        &mut out,
        name,
        "histogram",
        "Latency of the I/Os completed in the point's measured phase, from submission to completion.",
    );
    for (k, s) in &sums {
        let l = labels(*k);
        for (b, n) in LIVE_BOUNDS_NS.iter().zip(&s.at_most) {
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"{}\"}} {n}", seconds(*b));
        }
        let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", s.ops);
        let _ = writeln!(out, "{name}_sum{{{l}}} {}", seconds(s.lat_sum_ns));
        let _ = writeln!(out, "{name}_count{{{l}}} {}", s.ops);
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Nanoseconds as seconds, in the shortest form that reads back exactly.
fn seconds(ns: u64) -> String {
    format!("{:?}", ns as f64 / 1e9)
}

/// A label's value escaped: backslash, double quote and line feed.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_run::LiveClass;

    fn class(stream: usize, op: Op, ops: u64, at_most_last: u64) -> LiveClass {
        let mut at_most = vec![0; LIVE_BOUNDS_NS.len()];
        for (i, a) in at_most.iter_mut().enumerate() {
            *a = if i >= 5 { at_most_last } else { 0 };
        }
        LiveClass {
            stream,
            op,
            ops,
            bytes: ops * 4096,
            errors: 1,
            lat_sum_ns: ops * 60_000,
            at_most,
        }
    }

    #[test]
    fn streams_of_a_target_add_up_and_labels_are_escaped() {
        let run = RunLabels {
            host: "h\"1".into(),
            plan: "abc".into(),
            mode: "run".into(),
            label: "fw\\2".into(),
            version: "0.1".into(),
        };
        let targets = vec![TargetLabels {
            path: "/dev/x\ny".into(),
            model: "M".into(),
            firmware: "F".into(),
        }];
        let point = PointLabels {
            label: "p".into(),
            repeat: 1,
            stream_target: vec![0, 0],
        };
        let snap = LiveSnapshot {
            intervals: 3,
            classes: vec![class(0, Op::Read, 10, 10), class(1, Op::Read, 5, 4)],
        };
        let t = render(&run, &targets, &point, &snap);
        let l = "host=\"h\\\"1\",target=\"/dev/x\\ny\",model=\"M\",firmware=\"F\",plan=\"abc\",point=\"p\",repeat=\"1\",direction=\"read\"";
        assert!(
            t.contains(&format!("iosurvey_io_ops_total{{{l}}} 15\n")),
            "{t}"
        );
        assert!(t.contains(&format!("iosurvey_io_bytes_total{{{l}}} 61440\n")));
        assert!(t.contains(&format!("iosurvey_io_errors_total{{{l}}} 2\n")));
        assert!(
            t.contains(&format!(
                "iosurvey_io_latency_seconds_bucket{{{l},le=\"5e-5\"}} 14\n"
            )),
            "{t}"
        );
        assert!(t.contains(&format!(
            "iosurvey_io_latency_seconds_bucket{{{l},le=\"+Inf\"}} 15\n"
        )));
        assert!(
            t.contains(&format!("iosurvey_io_latency_seconds_sum{{{l}}} 0.0009\n")),
            "{t}"
        );
        assert!(t.contains("label=\"fw\\\\2\""));
        assert_eq!(t.matches("# TYPE").count(), 5);
        assert!(!t.contains("direction=\"write\""));
    }
}
