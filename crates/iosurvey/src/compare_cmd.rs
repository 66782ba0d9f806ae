//! `iosurvey compare A.json B.json ...`: saved runs compared point by
//! point with the first (see `iosurvey_report::compare`). Exit 0; 1 when
//! a run has no point in common with the first, or with `--fail-if-slower
//! PCT` when a gated figure is worse by more than PCT and significant
//! after Holm's correction.

use crate::flags::common::OutputArg;
use crate::out_path::{check_all, check_stdout, judge};
use crate::report_cmd::{load, InputBudget};
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosurvey_report::compare::{
    compare, compare_json, gate, render_compare_html, render_compare_text, GateFigure, ALPHA,
};
use iosurvey_session::output::write_out;
use iosurvey_session::{usage, Failure, Outcome};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Saved reports (--json, or --html pages): the first is the baseline A, each other is compared with it.
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// The memory this may use (e.g. 2g), instead of the memory cgroup's limit or the memory available: reports larger together than a tenth of it are refused before they are read.
    #[arg(long, value_name = "SIZE", value_parser = crate::flags::common::size)]
    pub memory_limit: Option<u64>,
    #[command(flatten)]
    pub out: CompareOutput,
}

/// What a comparison writes and how it gates (`compare`, `db compare`).
#[derive(Args, Debug)]
pub struct CompareOutput {
    /// What goes to stdout: the text table or the JSON comparison [default: text].
    #[arg(long, value_enum)]
    pub output: Option<OutputArg>,
    /// Write the comparison as JSON to FILE (- is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the comparison as a self-contained HTML page to FILE (- is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when a gated figure (see --gate) is worse by more than PCT percent (lower MB/s or IOPS, higher latency) and the difference is significant at 0.05 after Holm's correction over every figure gated (points x classes x figures x runs): the output says how many tests and shows each one's corrected p ("p Holm"). Figures not gated are shown but never fail the run. With 4 repeats a side the smallest p is 0.029, so the gate can fail on one test only; 5 repeats (0.0079) allow 6 tests, 8 (0.00016) over 300.
    #[arg(long, value_name = "PCT", value_parser = pct)]
    pub fail_if_slower: Option<f64>,
    /// The figures --fail-if-slower judges, as a comma list or repeated [default: rate].
    #[arg(
        long,
        value_enum,
        value_name = "FIGURE",
        value_delimiter = ',',
        requires = "fail_if_slower"
    )]
    pub gate: Vec<GateArg>,
}

/// A figure `--gate` names (the text's `figure` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GateArg {
    /// Each point's headline rate: IOPS where its mean I/O is under 64 KiB in both runs, MB/s otherwise.
    Rate,
    /// MB/s.
    Mbps,
    /// IOPS.
    Iops,
    /// Mean latency.
    Mean,
    /// p50 latency.
    P50,
    /// p99 latency.
    P99,
}

impl From<GateArg> for GateFigure {
    fn from(g: GateArg) -> GateFigure {
        match g {
            GateArg::Rate => GateFigure::Rate,
            GateArg::Mbps => GateFigure::Mbps,
            GateArg::Iops => GateFigure::Iops,
            GateArg::Mean => GateFigure::Mean,
            GateArg::P50 => GateFigure::P50,
            GateArg::P99 => GateFigure::P99,
        }
    }
}

/// A percentage flag's value (`5`, `5%`): a number of 0 or more.
pub fn pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a percentage (a number of 0 or more)")),
    }
}

pub fn compare_runs(a: CompareArgs) -> Result<Outcome, Failure> {
    let mut reports = Vec::new();
    let mut idents = Vec::new();
    // Every input's size taken from one budget, before it is read.
    let mut budget = InputBudget::new(a.memory_limit);
    for input in &a.inputs {
        let (r, ident) = load(input, &mut budget)?;
        reports.push(r);
        idents.extend(ident);
    }
    let names: Vec<String> = a.inputs.iter().map(|p| p.display().to_string()).collect();
    present(&names, &reports, &idents, &a.out)
}

/// Compares `reports` (named `names`; the files they were read from are
/// `idents`, which no output may replace) and writes the comparison as
/// `a` asks.
pub fn present(
    names: &[String],
    reports: &[iosurvey_model::document::RunReport],
    idents: &[crate::out_path::Ident],
    a: &CompareOutput,
) -> Result<Outcome, Failure> {
    if let Some(k) = reports.iter().position(|r| r.mode != reports[0].mode) {
        return usage(anyhow!(
            "{} is a {} report and {} a {} one: compare runs of one mode",
            names[0],
            reports[0].mode,
            names[k],
            reports[k].mode
        ));
    }
    let outs: Vec<_> = [("--json", &a.json), ("--html", &a.html)]
        .into_iter()
        .filter_map(|(flag, p)| p.as_deref().map(|p| judge(flag, p)))
        .collect::<Result<_, _>>()
        .map_err(|e| Failure::Usage(e.into()))?;
    check_all(&outs, &[], None).map_err(|e| Failure::Usage(e.into()))?;
    check_stdout(&[], idents).map_err(|e| Failure::Usage(e.into()))?;
    if let Some(o) = outs.iter().find(|o| idents.contains(&o.ident)) {
        return usage(anyhow!(
            "{}: is one of the reports being compared; give another file",
            o.shown()
        ));
    }
    // Nothing in common is a failed comparison, not a pass (exit 1).
    let mut c = compare(names, reports).map_err(|e| Failure::Run(e.into()))?;
    if let Some(p) = a.fail_if_slower {
        let figures: Vec<GateFigure> = if a.gate.is_empty() {
            vec![GateFigure::Rate]
        } else {
            a.gate.iter().map(|&g| g.into()).collect()
        };
        gate(&mut c, &figures, p);
    }
    for o in &outs {
        let body = if o.flag == "--json" {
            compare_json(&c)
        } else {
            render_compare_html(&c)
        };
        write_out(o, &body, true, None)?;
    }
    if !outs.iter().any(|o| o.sink == crate::out_path::Sink::Stdout) {
        let body = match a.output.unwrap_or(OutputArg::Text) {
            // Whatever a report held, no control character reaches a
            // terminal.
            OutputArg::Text => {
                iosurvey_report::terminal_text(&render_compare_text(&c)).into_owned()
            }
            OutputArg::Json => compare_json(&c),
        };
        iosurvey_session::output::print_text(&body);
    }
    let Some(g) = &c.gate else {
        return Ok(Outcome::Ok);
    };
    if let Some(&first) = g.failed.first() {
        let r = &c.rows[first];
        eprintln!(
            "iosurvey: {} gated figure{} significantly slower by more than {}% after Holm's correction over {} test{} at alpha {ALPHA} (first: {} {} {}: B/A {:.3}, p Holm {:.3})",
            g.failed.len(),
            if g.failed.len() == 1 { " is" } else { "s are" },
            g.pct,
            g.tests,
            if g.tests == 1 { "" } else { "s" },
            iosurvey_report::visible(&r.point),
            iosurvey_report::visible(&r.class),
            r.metric,
            r.ratio,
            r.p_holm.unwrap_or(f64::NAN)
        );
        return Ok(Outcome::IoFailed);
    }
    Ok(Outcome::Ok)
}
