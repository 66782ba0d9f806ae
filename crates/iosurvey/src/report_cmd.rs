//! `iosurvey report RUN.json --html FILE`: a saved report presented again.
//! The input is only read: a JSON report of any schema version, or an HTML
//! report, whose embedded JSON is taken. The page is a pure function of
//! the report, so the same report always gives the same page.

use crate::exit::{usage, Failure, Outcome};
use crate::out_path::{fd_ident, judge, Ident};
use crate::output::write_out;
use anyhow::anyhow;
use clap::Args;
use iosurvey_report::{
    embedded_json, render_html, RunReport, FIRST_SCHEMA_VERSION, MODES, SCHEMA_VERSION,
};
use std::io::Read;
use std::os::fd::AsFd;
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
    let report: RunReport = serde_json::from_str(&json)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: not an iosurvey report: {e}")))?;
    check_document(&report, &shown)?;
    Ok((report, ident))
}

/// Refuses a document that parses but is no report iosurvey wrote: a
/// schema version before the first (0), or a mode no version had; a newer
/// layout may hold what this version would drop unseen.
fn check_document(report: &RunReport, shown: &str) -> Result<(), Failure> {
    let v = report.schema_version;
    if v > SCHEMA_VERSION {
        return usage(anyhow!(
            "{shown}: schema_version {v} is newer than this iosurvey's ({SCHEMA_VERSION}); present it with a newer iosurvey"
        ));
    }
    if v < FIRST_SCHEMA_VERSION {
        return usage(anyhow!(
            "{shown}: schema_version {v} was never written (versions run from {FIRST_SCHEMA_VERSION} to {SCHEMA_VERSION}): not an iosurvey report"
        ));
    }
    if !MODES.contains(&report.mode.as_str()) {
        return usage(anyhow!(
            "{shown}: mode \"{}\" is none of iosurvey's ({}): not an iosurvey report",
            iosurvey_report::visible(&report.mode),
            MODES.join(", ")
        ));
    }
    Ok(())
}

/// The input's text, and what it is.
fn read_input(input: &Path) -> Result<(String, Option<Ident>), Failure> {
    let shown = input.display().to_string();
    if input.as_os_str() == "-" {
        let stdin = std::io::stdin();
        // Stdin redirected from a file: that file is the input, and no
        // output may replace it.
        let ident = fd_ident(stdin.as_fd()).ok();
        let text = read_bounded(stdin.lock(), "stdin")?;
        return Ok((text, ident));
    }
    // Looked at before it is opened: opening a FIFO would wait for a
    // writer.
    let meta = std::fs::metadata(input).map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    if meta.is_dir() {
        return usage(anyhow!("{shown}: is a directory; give a saved report"));
    }
    if !meta.is_file() {
        return usage(anyhow!(
            "{shown}: not a regular file; give a saved report (or - for stdin)"
        ));
    }
    let f = std::fs::File::open(input).map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    let ident = fd_ident(&f).ok();
    let text = read_bounded(f, &shown)?;
    Ok((text, ident))
}

/// Largest report read: far above what a run writes (a report holds
/// histograms and series, not per-I/O data), far below the memory it
/// would take to hold something endless.
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// All of `r` as text, refused past [`MAX_REPORT_BYTES`].
fn read_bounded(r: impl Read, shown: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    r.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return usage(anyhow!(
            "{shown}: larger than {} GiB: not an iosurvey report",
            MAX_REPORT_BYTES >> 30
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(anyhow!("{shown}: not an iosurvey report (not text)")))
}
