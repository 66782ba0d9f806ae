//! Where reports go: the JSON file (rewritten after every point, so a later
//! failure loses nothing) and stdout.

use crate::cli::{OutputArg, OutputFlags};
use crate::execute::Presenter;
use crate::exit::Failure;
use anyhow::Context;
use iosurvey_report::{to_json, RunReport, TextOptions};
use std::io::Write;
use std::path::Path;

/// Writes `body` to `path` through a temporary name and a rename, so the
/// file is always whole.
pub fn write_whole(path: &Path, body: &str) -> Result<(), Failure> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    std::fs::write(&tmp, body)
        .and_then(|_| std::fs::rename(&tmp, path))
        .with_context(|| format!("writing {}", path.display()))
        .map_err(Failure::Run)
}

/// Saves what was asked for after a point: `--json FILE`, `--csv FILE` and
/// the mode's own files.
pub fn save(
    report: &RunReport,
    flags: &OutputFlags,
    presenter: &dyn Presenter,
) -> Result<(), Failure> {
    if let Some(path) = &flags.json {
        write_whole(path, &to_json(report))?;
    }
    if let Some(path) = &flags.csv {
        write_whole(path, &presenter.csv(report))?;
    }
    presenter.after_point(report)
}

/// Prints the report on stdout in the requested form, text through the
/// mode's own presenter.
/// A reader that closed the pipe early (`| head`) is not an error.
pub fn print(report: &RunReport, flags: &OutputFlags, presenter: &dyn Presenter) {
    print_text(&match flags.output {
        OutputArg::Json => to_json(report),
        OutputArg::Text => presenter.text(report, TextOptions { mib: flags.mib }),
    });
}

/// Writes `body` to stdout; a closed pipe is not an error.
pub fn print_text(body: &str) {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(body.as_bytes()).and_then(|_| out.flush());
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("iosurvey: writing to stdout: {e}");
        }
    }
}
