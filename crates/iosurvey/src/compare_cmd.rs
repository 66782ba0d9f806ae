//! `iosurvey compare A.json B.json ...`: saved runs compared point by
//! point with the first (see `iosurvey_report::compare`). Exit 0, or 1
//! with `--fail-if-slower PCT` when a significant slowdown exceeds PCT.

use crate::cli::OutputArg;
use crate::exit::{usage, Failure, Outcome};
use crate::out_path::{check_all, judge};
use crate::output::write_out;
use crate::report_cmd::load;
use anyhow::anyhow;
use clap::Args;
use iosurvey_report::compare::{compare, compare_json, render_compare_html, render_compare_text};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Saved reports (--json, or --html pages): the first is the baseline A, each other is compared with it.
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// What goes to stdout: the text table or the JSON comparison [default: text].
    #[arg(long, value_enum)]
    pub output: Option<OutputArg>,
    /// Write the comparison as JSON to FILE (- is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the comparison as a self-contained HTML page to FILE (- is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when a figure is significantly worse by more than PCT percent (lower MB/s or IOPS, higher latency).
    #[arg(long, value_name = "PCT", value_parser = pct)]
    pub fail_if_slower: Option<f64>,
}

fn pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a percentage (a number of 0 or more)")),
    }
}

pub fn compare_runs(a: CompareArgs) -> Result<Outcome, Failure> {
    let mut reports = Vec::new();
    let mut idents = Vec::new();
    for input in &a.inputs {
        let (r, ident) = load(input)?;
        reports.push(r);
        idents.extend(ident);
    }
    if let Some(k) = reports.iter().position(|r| r.mode != reports[0].mode) {
        return usage(anyhow!(
            "{} is a {} report and {} a {} one: compare runs of one mode",
            a.inputs[0].display(),
            reports[0].mode,
            a.inputs[k].display(),
            reports[k].mode
        ));
    }
    let outs: Vec<_> = [("--json", &a.json), ("--html", &a.html)]
        .into_iter()
        .filter_map(|(flag, p)| p.as_deref().map(|p| judge(flag, p)))
        .collect::<Result<_, _>>()
        .map_err(Failure::Usage)?;
    check_all(&outs, &[], None).map_err(Failure::Usage)?;
    if let Some(o) = outs.iter().find(|o| idents.contains(&o.ident)) {
        return usage(anyhow!(
            "{}: is one of the reports being compared; give another file",
            o.shown()
        ));
    }
    let names: Vec<String> = a.inputs.iter().map(|p| p.display().to_string()).collect();
    let c = compare(&names, &reports);
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
            OutputArg::Text => render_compare_text(&c),
            OutputArg::Json => compare_json(&c),
        };
        crate::output::print_text(&body);
    }
    let slower: Vec<_> = match a.fail_if_slower {
        Some(p) => c.rows.iter().filter(|r| r.slower_by_more_than(p)).collect(),
        None => Vec::new(),
    };
    if let (Some(p), Some(first)) = (a.fail_if_slower, slower.first()) {
        eprintln!(
            "iosurvey: {} figure{} significantly slower by more than {p}% (first: {} {} {}: B/A {:.3})",
            slower.len(),
            if slower.len() == 1 { " is" } else { "s are" },
            first.point,
            first.class,
            first.metric,
            first.ratio
        );
        return Ok(Outcome::IoFailed);
    }
    Ok(Outcome::Ok)
}
