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
use std::path::{Path, PathBuf};

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
    let (report, input_ident) = load(&a.input)?;
    let out = judge("--html", &a.html).map_err(Failure::Usage)?;
    if input_ident.is_some() && input_ident.as_ref() == Some(&out.ident) {
        return usage(anyhow!(
            "{}: is the report being read ({}); give another file for the page",
            out.shown(),
            a.input.display()
        ));
    }
    write_out(&out, &render_html(&report), true, None)?;
    Ok(Outcome::Ok)
}

/// A saved report at `input` (JSON, an HTML page's embedded JSON, or
/// stdin for `-`), and what the file is (so that no output is written
/// over it).
pub fn load(input: &Path) -> Result<(RunReport, Option<Ident>), Failure> {
    let shown = input.display().to_string();
    let (text, ident) = read_input(input)?;
    let json = if text.trim_start().starts_with('<') {
        embedded_json(&text).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "{shown}: an HTML file with no iosurvey report in it"
            ))
        })?
    } else {
        text
    };
    let report = serde_json::from_str(&json)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: not an iosurvey report: {e}")))?;
    Ok((report, ident))
}

/// The input's text, and what it is.
fn read_input(input: &Path) -> Result<(String, Option<Ident>), Failure> {
    let shown = input.display();
    let mut text = String::new();
    if input.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::Usage(anyhow!("reading the report from stdin: {e}")))?;
        return Ok((text, None));
    }
    let mut f = std::fs::File::open(input).map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
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
