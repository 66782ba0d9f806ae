//! `iosurvey report RUN.json --html FILE`: a saved report presented again.
//! The input is only read: a JSON report of any schema version, or an HTML
//! report, whose embedded JSON is taken. The page is a pure function of
//! the report, so the same report always gives the same page.

use crate::out_path::{check_stdout, fd_ident, judge, Ident};
use anyhow::anyhow;
use clap::Args;
use iosurvey_model::document::RunReport;
use iosurvey_report::{embedded_json, render_html, FIRST_SCHEMA_VERSION, MODES, SCHEMA_VERSION};
use iosurvey_session::output::write_out;
use iosurvey_session::{usage, Failure, Outcome};
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
    /// The memory this may use (e.g. 2g), instead of the memory cgroup's limit or the memory available: a report larger than a tenth of it is refused before it is read.
    #[arg(long, value_name = "SIZE", value_parser = crate::flags::common::size)]
    pub memory_limit: Option<u64>,
}

pub fn report(a: ReportArgs) -> Result<Outcome, Failure> {
    let mut budget = InputBudget::new(a.memory_limit);
    let (report, input_ident) = load(&a.input, &mut budget)?;
    let inputs: Vec<Ident> = input_ident.iter().cloned().collect();
    check_stdout(&[], &inputs).map_err(|e| Failure::Usage(e.into()))?;
    let out = judge("--html", &a.html).map_err(|e| Failure::Usage(e.into()))?;
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
pub fn load(input: &Path, budget: &mut InputBudget) -> Result<(RunReport, Option<Ident>), Failure> {
    let shown = input.display().to_string();
    let (text, ident) = read_input(input, budget)?;
    Ok((parse_report(text, &shown)?, ident))
}

/// A saved report's text (its JSON, or an HTML page with it embedded) read
/// as a report, refused when it is none iosurvey wrote.
pub fn parse_report(text: String, shown: &str) -> Result<RunReport, Failure> {
    let json = if text.trim_start().starts_with('<') {
        embedded_json(&text).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "{shown}: an HTML file with no iosurvey report in it"
            ))
        })?
    } else {
        text
    };
    let report: RunReport = iosurvey_report::from_json(&json)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: not an iosurvey report: {e}")))?;
    check_document(&report, shown)?;
    Ok(report)
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
pub fn read_input(
    input: &Path,
    budget: &mut InputBudget,
) -> Result<(String, Option<Ident>), Failure> {
    let shown = input.display().to_string();
    if input.as_os_str() == "-" {
        let stdin = std::io::stdin();
        // Stdin redirected from a file: that file is the input, and no
        // output may replace it.
        let ident = fd_ident(stdin.as_fd()).ok();
        let text = read_bounded(stdin.lock(), "stdin", budget)?;
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
    // Refused by its size before a byte is read.
    budget.take(meta.len(), &shown)?;
    let f = std::fs::File::open(input).map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    let ident = fd_ident(&f).ok();
    budget.give_back(meta.len());
    let text = read_bounded(f, &shown, budget)?;
    Ok((text, ident))
}

/// Largest report read whatever the memory: far above what a run writes
/// (a report holds histograms and series, not per-I/O data).
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// Memory per byte of input that presenting a report may take: its HTML
/// page took 5.4 times the JSON's size (494 MB for 92.3 MB of JSON, a
/// 152 MB page; 8.7 times when the page copied the report), `compare` 1.1
/// times the inputs' (198 MB for two of 88.7 MB); so the inputs may be a
/// tenth of the memory, which leaves room for a debug build's more.
pub const MEMORY_PER_INPUT_BYTE: u64 = 10;

/// What is left of the bytes the inputs may take together: a tenth of the
/// memory the process may use (at most 1 GiB).
pub struct InputBudget {
    left: u64,
    total: u64,
    source: String,
}

impl InputBudget {
    /// The budget of `--memory-limit`, or of the cgroup or available memory.
    pub fn new(memory_limit: Option<u64>) -> Self {
        let limit = crate::budget::limit(memory_limit);
        let total = (limit.bytes / MEMORY_PER_INPUT_BYTE).min(MAX_REPORT_BYTES);
        InputBudget {
            left: total,
            total,
            source: limit.source,
        }
    }

    /// Takes `bytes` for input `shown`, or refuses it, naming the figures.
    fn take(&mut self, bytes: u64, shown: &str) -> Result<(), Failure> {
        if bytes > self.left {
            let taken = self.total - self.left;
            let before = match taken {
                0 => String::new(),
                t => format!(
                    " after {} of the reports before it",
                    crate::budget::approx(t)
                ),
            };
            return usage(anyhow!(
                "{shown}: a report of {}{before} is over the {} the inputs may take (a tenth of the memory this process may use, by {}, at most 1 GiB); set --memory-limit, or give a smaller report",
                // What was read of a stream stops one byte past the budget.
                match bytes == self.left + 1 {
                    true => format!("more than {}", crate::budget::approx(self.left)),
                    false => crate::budget::approx(bytes),
                },
                crate::budget::approx(self.total),
                self.source
            ));
        }
        self.left -= bytes;
        Ok(())
    }

    /// Gives back bytes taken for an input that is then read through
    /// [`read_bounded`] (which takes what it reads).
    fn give_back(&mut self, bytes: u64) {
        self.left += bytes;
    }
}

/// All of `r` as text, refused past what is left of the budget (stdin
/// included: no more than that is read).
fn read_bounded(r: impl Read, shown: &str, budget: &mut InputBudget) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    r.take(budget.left.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(anyhow!("{shown}: {e}")))?;
    budget.take(bytes.len() as u64, shown)?;
    String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(anyhow!("{shown}: not an iosurvey report (not text)")))
}
