//! The HTML report: one self-contained page per run, with the settings,
//! the host, the targets, the warnings, the mode's plots (inline SVG) and
//! tables, and the run's JSON report embedded, so that the page alone can
//! be rendered again or compared. No script runs and nothing is loaded
//! from elsewhere: it opens from an e-mail or on an air-gapped host.
//!
//! Like every presenter, a pure function of the report.

mod chart;
mod chart_marks;
mod diskperf;
mod drawn;
mod heatmap;
pub mod history;
mod matrix;
mod modes;
mod parallel;
mod profile;
mod quick_card;
mod run;
mod run_sweep;
mod survey;
pub(crate) mod table;
mod text_size;
mod video;

pub use chart::{svg, Axis, Band, Chart, Scale, Series, Style};
pub use text_size::{text_width, MIN_FONT_PX};

use crate::{format_ns, to_json};
pub(crate) use chart::escape;
use iosurvey_model::document::{ClassReport, PointReport, RunReport};
use iosurvey_stats::significance::median;
use std::fmt::Write as _;
use table::table;

/// The `id` of the element that holds the embedded JSON report.
pub const JSON_ID: &str = "iosurvey-report";

/// The run as a self-contained HTML page.
pub fn render_html(report: &RunReport) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("iosurvey {}", report.mode);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{} — {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&report.started_at),
        escape(&title)
    );
    settings(&mut h, report);
    host(&mut h, report);
    targets(&mut h, report);
    warnings(&mut h, report);
    // The mode's plots and tables show one run of the plan: the first
    // repeat of several (the others are in the tables below).
    // (Borrowed when there is one: a copy would double the memory a large
    // report takes to present.)
    let first = match report.repeats {
        0 | 1 => std::borrow::Cow::Borrowed(report),
        _ => std::borrow::Cow::Owned(report.repeat(0)),
    };
    let figures = modes::figures(&first);
    if !figures.is_empty() {
        h.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n");
        // Each figure dropped once it is on the page.
        for f in figures {
            let _ = writeln!(h, "<figure class=\"plot\">{f}</figure>");
        }
        h.push_str("</section>\n");
    }
    h.push_str("<section id=\"tables\">\n<h2>Tables</h2>\n");
    for t in modes::tables(&first) {
        h.push_str(&t);
    }
    if report.repeats > 1 {
        repeats_table(&mut h, report);
    }
    points_table(&mut h, report);
    h.push_str("</section>\n");
    embed(&mut h, report);
    h.push_str("</body>\n</html>\n");
    h
}

/// The report embedded in a page by [`render_html`], as JSON; `None` when
/// the page has none.
pub fn embedded_json(html: &str) -> Option<String> {
    let open = format!("<script type=\"application/json\" id=\"{JSON_ID}\">");
    let start = html.find(&open)? + open.len();
    let len = html[start..].find("</script>")?;
    Some(html[start..start + len].to_string())
}

pub(crate) const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#111;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.88em}\
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f2f2f2}\
figure.plot{margin:1em 0}figure.plot svg{max-width:100%;height:auto;border:1px solid #eee}\
.warning{border-left:4px solid #d55e00;background:#fff4ec;padding:.4em .8em;margin:.5em 0}\
code{font-size:.95em}caption{text-align:left;font-weight:bold;padding:.3em 0}";

/// Name/value rows.
fn pairs(h: &mut String, id: &str, title: &str, rows: Vec<(&str, String)>) {
    let _ = writeln!(h, "<section id=\"{id}\">\n<h2>{}</h2>", escape(title));
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(k, v)| vec![k.to_string(), v])
        .collect();
    h.push_str(&table("", &["", ""], &rows));
    h.push_str("</section>\n");
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// The command line as typed, after the variables it took from the
/// environment (`size=8192 scsidevs="/dev/sdb /dev/sdc" iosurvey survey`).
fn command_line(r: &RunReport) -> String {
    let vars = r.environment.iter().map(|nv| match nv.split_once('=') {
        Some((n, v)) if v.contains(char::is_whitespace) => format!("{n}=\"{v}\""),
        _ => nv.clone(),
    });
    vars.chain(r.command_line.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn settings(h: &mut String, r: &RunReport) {
    let mut rows = vec![
        ("command line", command_line(r)),
        ("mode", r.mode.clone()),
        ("started", r.started_at.clone()),
        ("tool", format!("{} {}", r.tool.name, r.tool.version)),
        ("schema_version", r.schema_version.to_string()),
        ("points", r.points.len().to_string()),
    ];
    if r.shared {
        rows.push(("shared", "yes: other load may be in the figures".into()));
    }
    if !r.ranks.is_empty() {
        rows.push(("MPI ranks", r.ranks.len().to_string()));
    }
    if let Some(p) = r.points.first() {
        let s = &p.settings;
        rows.extend([
            ("engine", s.engine.to_string()),
            ("workers", s.workers.to_string()),
            ("direct", s.direct.to_string()),
            (
                "time per point",
                opt(s.time_ns.map(|t| format_ns(t as f64))),
            ),
            ("bytes per point", opt(s.bytes)),
            ("ramp", format_ns(s.ramp_ns as f64)),
            ("interval", format_ns(s.interval_ns as f64)),
            ("seed", s.seed.to_string()),
            (
                "registered files / fixed buffers",
                format!("{} / {}", s.registered_files, s.fixed_buffers),
            ),
            ("unique blocks", s.unique_blocks.to_string()),
            ("unique sectors", s.unique_sectors.to_string()),
            ("data nonce", opt(s.data_nonce.clone())),
        ]);
    }
    pairs(h, "settings", "Settings", rows);
}

fn host(h: &mut String, r: &RunReport) {
    let x = &r.host;
    pairs(
        h,
        "host",
        "Host",
        vec![
            ("hostname", x.hostname.clone()),
            ("kernel", x.kernel.clone()),
            ("os", x.os.clone()),
            ("arch", x.arch.clone()),
            ("cpu", format!("{} ({} CPUs)", x.cpu_model, x.cpus)),
            (
                "memory",
                format!("{:.1} GiB", x.memory_bytes as f64 / (1u64 << 30) as f64),
            ),
        ],
    );
}

fn targets(h: &mut String, r: &RunReport) {
    let Some(p) = r.points.iter().find(|p| !p.targets.is_empty()) else {
        return;
    };
    let rows: Vec<Vec<String>> = p
        .targets
        .iter()
        .map(|t| {
            vec![
                t.path.clone(),
                format!("{:?}", t.kind).to_lowercase(),
                t.size_bytes.to_string(),
                format!("{} / {}", t.logical_block_size, t.physical_block_size),
                opt(t.rotational),
                t.direct.to_string(),
                t.created.to_string(),
                t.memory_backed.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    h.push_str("<section id=\"targets\">\n<h2>Targets</h2>\n");
    h.push_str(&table(
        "",
        &[
            "path",
            "kind",
            "bytes",
            "logical / physical block",
            "rotational",
            "direct",
            "created",
            "memory-backed",
        ],
        &rows,
    ));
    h.push_str("</section>\n");
}

fn warnings(h: &mut String, r: &RunReport) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut body = String::new();
    for p in &r.points {
        for w in &p.warnings {
            if seen.contains(&(w.code(), w.message.as_str())) {
                continue;
            }
            seen.push((w.code(), &w.message));
            let _ = writeln!(
                body,
                "<div class=\"warning\"><b>{}</b> (point {}: {}): {} <small>{}</small></div>",
                escape(w.code()),
                p.index,
                escape(&p.label),
                escape(&w.message),
                escape(&w.threshold)
            );
        }
        if p.interrupted {
            let _ = writeln!(
                body,
                "<div class=\"warning\"><b>interrupted</b> (point {}: {}): stopped before its end; the figures are of what it measured until then</div>",
                p.index,
                escape(&p.label)
            );
        }
        if let Some(f) = &p.failure {
            let _ = writeln!(
                body,
                "<div class=\"warning\"><b>failure</b> (point {}: {}): {} at offset {}</div>",
                p.index,
                escape(&p.label),
                escape(&f.error),
                f.offset
            );
        }
    }
    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    if body.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str(&body);
    }
    h.push_str("</section>\n");
}

/// The classes of a point worth a row: those that did something.
pub(crate) fn classes(p: &PointReport) -> impl Iterator<Item = (&'static str, &ClassReport)> {
    let t = &p.total;
    [("read", &t.read), ("write", &t.write), ("trim", &t.trim)]
        .into_iter()
        .filter(|(_, c)| !c.is_empty())
}

/// Per point and class, the spread of the repeats (`--repeat`).
fn repeats_table(h: &mut String, r: &RunReport) {
    let mut rows = Vec::new();
    for p in r.points.iter().filter(|p| p.repeat == 0) {
        for (k, (dir, _)) in p.total.classes().into_iter().enumerate() {
            let same: Vec<&ClassReport> = r
                .points
                .iter()
                .filter(|q| q.index == p.index && q.skipped.is_none())
                .map(|q| q.total.classes()[k].1)
                .filter(|c| !c.is_empty())
                .collect();
            if same.is_empty() {
                continue;
            }
            let mbs: Vec<f64> = same.iter().map(|c| c.bytes_per_sec / 1e6).collect();
            let iops: Vec<f64> = same.iter().map(|c| c.iops).collect();
            let (lo, hi) = mbs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            rows.push(vec![
                p.index.to_string(),
                p.label.clone(),
                dir.into(),
                same.len().to_string(),
                format!("{:.2}", median(&mbs)),
                format!("{lo:.2}"),
                format!("{hi:.2}"),
                format!("{:.0}", median(&iops)),
            ]);
        }
    }
    h.push_str(&table(
        &format!(
            "Repeats ({} runs of the plan; iosurvey compare tells whether a difference is real)",
            r.repeats
        ),
        &[
            "#",
            "point",
            "class",
            "repeats",
            "median MB/s",
            "min MB/s",
            "max MB/s",
            "median IOPS",
        ],
        &rows,
    ));
}

/// One row per point and class, for every mode.
fn points_table(h: &mut String, r: &RunReport) {
    let mut rows = Vec::new();
    let repeated = r.repeats > 1;
    for p in &r.points {
        let mut index = p.index.to_string();
        if repeated {
            index = format!("{index} (repeat {})", p.repeat + 1);
        }
        if let Some(why) = &p.skipped {
            let mut row = vec![index, p.label.clone(), format!("skipped: {why}")];
            row.resize(13, String::new());
            rows.push(row);
            continue;
        }
        for (name, c) in classes(p) {
            let l = &c.latency;
            let errors: u64 = c.errors.iter().map(|e| e.count).sum();
            rows.push(vec![
                index.clone(),
                p.label.clone(),
                name.into(),
                c.ops.to_string(),
                format!("{:.2}", c.bytes_per_sec / 1e6),
                format!("{:.0}", c.iops),
                format_ns(l.mean_ns),
                opt(l.at(50.0).map(|v| format_ns(v as f64))),
                opt(l.at(99.0).map(|v| format_ns(v as f64))),
                opt(l.at(99.9).map(|v| format_ns(v as f64))),
                format_ns(l.max_ns as f64),
                errors.to_string(),
                format!("{:.3}", p.elapsed_ns as f64 / 1e9),
            ]);
        }
    }
    h.push_str(&table(
        "Every point",
        &[
            "#", "point", "class", "ops", "MB/s", "IOPS", "mean", "p50", "p99", "p99.9", "max",
            "errors", "seconds",
        ],
        &rows,
    ));
}

fn embed(h: &mut String, r: &RunReport) {
    // Inside a script element only "</script" (or "<!--") could end it
    // early; a '<' can only be in a JSON string, where \u003c means it.
    let json = to_json(r).replace('<', "\\u003c");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"{JSON_ID}\">{json}</script>"
    );
}
