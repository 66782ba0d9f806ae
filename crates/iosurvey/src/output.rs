//! Where reports go: the JSON file (rewritten after every point, so a later
//! failure loses nothing) and stdout.

use crate::cli::{OutputArg, OutputFlags};
use crate::exit::Failure;
use anyhow::Context;
use iosurvey_report::{to_json, RunReport, TextOptions};
use std::io::Write;

/// Saves the report to `--json FILE` if asked. Written to a temporary name
/// and renamed, so the file is always a whole document.
pub fn save(report: &RunReport, flags: &OutputFlags) -> Result<(), Failure> {
    let Some(path) = &flags.json else {
        return Ok(());
    };
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, to_json(report))
        .and_then(|_| std::fs::rename(&tmp, path))
        .with_context(|| format!("writing {}", path.display()))
        .map_err(Failure::Run)
}

/// Prints the report on stdout in the requested form, text through the
/// mode's own presenter.
/// A reader that closed the pipe early (`| head`) is not an error.
pub fn print(report: &RunReport, flags: &OutputFlags, text: fn(&RunReport, TextOptions) -> String) {
    let body = match flags.output {
        OutputArg::Json => to_json(report),
        OutputArg::Text => text(report, TextOptions { mib: flags.mib }),
    };
    let mut out = std::io::stdout().lock();
    let written = out.write_all(body.as_bytes()).and_then(|_| out.flush());
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("iosurvey: writing to stdout: {e}");
        }
    }
}
