//! Exit codes: clap's verdict on the command line, and the end of a run
//! (the session's outcome or failure, said once, agreed over the ranks).

use iosurvey_session::failure::{anything_left_behind, verdict};
use iosurvey_session::{Cluster, Failure, Outcome};
use std::process::ExitCode;

/// Prints clap's verdict: help and version in full on stdout, errors as one
/// line on stderr with exit code 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            use std::io::Write;
            // A reader that closed the pipe (`| head`) is not an error.
            let _ = write!(std::io::stdout().lock(), "{e}");
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{e}");
            ExitCode::from(2)
        }
        _ => {
            let text = e.to_string();
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            // "the following required arguments were not provided:" names
            // them on the lines after it.
            let line = if first.ends_with(':') {
                let rest: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:")).collect();
                format!("{first} {}", rest.join(", "))
            } else {
                first.to_string()
            };
            let line = negative_value(&e).unwrap_or(line);
            eprintln!("iosurvey: {line}{}", hints(&e));
            ExitCode::from(2)
        }
    }
}

/// A negative number given to a flag whose values are counts or sizes:
/// said so, whatever the parser's own words for it.
fn negative_value(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation && e.kind() != ErrorKind::InvalidValue {
        return None;
    }
    // An enum flag's values are listed instead.
    if e.get(ContextKind::ValidValue).is_some() {
        return None;
    }
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return None;
    };
    crate::flags::common::negative(value)
        .then(|| format!("invalid value '{value}' for '{arg}': cannot be negative"))
}

/// What clap knows beside its first line, on that line: the valid values
/// of an enum flag, and the flag, value or command a misspelling is near.
fn hints(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let list = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let mut out = String::new();
    let suggested: Vec<String> = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
        ContextKind::SuggestedSubcommand,
    ]
    .into_iter()
    .flat_map(list)
    .collect();
    if !suggested.is_empty() {
        let quoted: Vec<String> = suggested.iter().map(|s| format!("'{s}'")).collect();
        out.push_str(&format!(": did you mean {}?", quoted.join(" or ")));
    }
    let valid = list(ContextKind::ValidValue);
    if !valid.is_empty() {
        out.push_str(&format!(" (valid: {})", valid.join(", ")));
    }
    out
}

/// Ends the run with its exit code. Under MPI, a failure of this rank
/// alone ends every rank (the others would wait for it in a collective),
/// and of a failure every rank reached together rank 0 says it (each
/// rank's own refusals among them) while the others end silently.
pub fn end_run(outcome: Result<Outcome, Failure>, c: &dyn Cluster) -> ExitCode {
    // The trash directories made ahead, empty by now, go; first, since
    // ending a rank alone does not come back.
    iosurvey_target::guard::trash::release_reserved();
    if let (Err(f), true) = (&outcome, c.distributed()) {
        if !c.was_agreed() {
            let v = verdict(f);
            c.end_alone(v.code, &v.text);
        }
    }
    let say = |e: &anyhow::Error| {
        let text = format!("{e:#}");
        if text != iosurvey_session::SILENT {
            eprintln!("iosurvey: {text}");
        }
    };
    match outcome {
        Ok(Outcome::Ok) if anything_left_behind() => ExitCode::from(1),
        Ok(code) => code.into(),
        Err(f) if !c.is_root() => ExitCode::from(verdict(&f).code),
        Err(Failure::Usage(e)) => {
            say(&e);
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            say(&e);
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(e)) => {
            say(&e);
            ExitCode::from(130)
        }
    }
}
