//! `iosurvey report RUN.json --html FILE`: a saved report presented again.
//! The input is only read: a JSON report of any schema version, or an HTML
//! report, whose embedded JSON is taken. The page is a pure function of
//! the report, so the same report always gives the same page.

use crate::exit::{usage, Failure, Outcome};
use crate::out_path::{fd_ident, judge, Ident};
use crate::output::write_out;
use anyhow::anyhow;
use clap::Args;
use iosurvey_report::{embedded_json, render_html, RunReport};
use std::io::Read;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A saved report: the JSON of --json, or a page of --html (its embedded JSON); - reads stdin.
    #[arg(value_name = "RUN")]
    pub input: PathBuf,
    /// Write the self-contained HTML report with plots to FILE (- is stdout).
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
}

pub fn report(a: ReportArgs) -> Result<Outcome, Failure> {
    let shown = a.input.display().to_string();
    let (text, input_ident) = read_input(&a)?;
    let out = judge("--html", &a.html).map_err(Failure::Usage)?;
    if input_ident.is_some() && input_ident.as_ref() == Some(&out.ident) {
        return usage(anyhow!(
            "{}: is the report being read ({shown}); give another file for the page",
            out.shown()
        ));
    }
    let json = if text.trim_start().starts_with('<') {
        embedded_json(&text).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "{shown}: an HTML file with no iosurvey report in it"
            ))
        })?
    } else {
        text
    };
    let report: RunReport = serde_json::from_str(&json)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: not an iosurvey report: {e}")))?;
    write_out(&out, &render_html(&report), true, None)?;
    Ok(Outcome::Ok)
}

/// The input's text, and what it is (so that the page is never written
/// over it).
fn read_input(a: &ReportArgs) -> Result<(String, Option<Ident>), Failure> {
    let shown = a.input.display();
    let mut text = String::new();
    if a.input.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::Usage(anyhow!("reading the report from stdin: {e}")))?;
        return Ok((text, None));
    }
    let mut f =
        std::fs::File::open(&a.input).map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    let meta = f
        .metadata()
        .map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    if meta.is_dir() {
        return usage(anyhow!("{shown}: is a directory; give a saved report"));
    }
    if !meta.is_file() {
        return usage(anyhow!(
            "{shown}: not a regular file; give a saved report (or - for stdin)"
        ));
    }
    let ident = fd_ident(&f).ok();
    f.read_to_string(&mut text).map_err(|e| {
        Failure::Usage(match e.kind() {
            std::io::ErrorKind::InvalidData => {
                anyhow!("{shown}: not an iosurvey report (not text)")
            }
            _ => anyhow!("{shown}: {e}"),
        })
    })?;
    Ok((text, ident))
}
