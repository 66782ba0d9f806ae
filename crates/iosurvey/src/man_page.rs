//! `iosurvey man [COMMAND]`: the manual page (roff) of iosurvey or of one
//! of its commands, from the flags themselves; a command that runs a
//! classic tool adds that tool's options, ENVIRONMENT, FILES, EXAMPLES and
//! SEE ALSO.

use crate::classic::page::ToolDoc;
use crate::shell_cmd::{emit, ManArgs};
use anyhow::anyhow;
use clap_mangen::roff::{bold, italic, roman, Roff};
use clap_mangen::Man;
use iosurvey_session::{usage, Failure, Outcome};

/// The manual page of `cmd`, iosurvey's whole command line, or of one of
/// its commands.
pub fn man(a: ManArgs, mut cmd: clap::Command) -> Result<Outcome, Failure> {
    cmd.build();
    // A command's page carries iosurvey's version (a one-shot command: the
    // leak is its lifetime).
    let version: &'static str = Box::leak(cmd.get_version().unwrap_or_default().into());
    let Some(name) = &a.command else {
        return render(Man::new(cmd), None);
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let Some(sub) = cmd.find_subcommand(name).cloned() else {
        return usage(anyhow!(
            "no command '{name}': give one of {}",
            names.join(", ")
        ));
    };
    let doc = crate::classic::doc_of(sub.get_name());
    // The page of `iosurvey run` is iosurvey-run(1), as git's are.
    let full: &'static str = Box::leak(format!("iosurvey-{}", sub.get_name()).into());
    render(Man::new(sub.name(full).version(version)), doc.as_ref())
}

/// The page on stdout: clap's sections, and a classic tool's after the
/// options.
fn render(man: Man, doc: Option<&ToolDoc>) -> Result<Outcome, Failure> {
    let Some(doc) = doc else {
        let mut out = Vec::new();
        man.render(&mut out).map_err(failed)?;
        return emit(&out);
    };
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(failed)?;
    man.render_name_section(&mut out).map_err(failed)?;
    man.render_synopsis_section(&mut out).map_err(failed)?;
    man.render_description_section(&mut out).map_err(failed)?;
    man.render_options_section(&mut out).map_err(failed)?;
    classic_sections(doc).to_writer(&mut out).map_err(failed)?;
    man.render_version_section(&mut out).map_err(failed)?;
    emit(&out)
}

fn failed(e: std::io::Error) -> Failure {
    Failure::Run(anyhow!("writing the manual page: {e}"))
}

/// The tool's options, ENVIRONMENT, FILES, EXAMPLES, EXIT STATUS and SEE
/// ALSO, as roff.
pub fn classic_sections(doc: &ToolDoc) -> Roff {
    let mut r = Roff::new();
    let tagged = |r: &mut Roff, tag: String, text: &str| {
        r.control("TP", []);
        r.text([bold(tag)]);
        r.text([roman(text)]);
    };
    if !doc.options.is_empty() {
        let title = format!("{} OPTIONS", doc.title.to_uppercase());
        r.control("SH", [title.as_str()]);
        r.text([roman(doc.options_heading())]);
        for s in &doc.options {
            tagged(&mut r, s.written(), &s.meaning);
        }
    }
    r.control("PP", []);
    r.text([roman(doc.link_text())]);
    if !doc.environment.is_empty() {
        r.control("SH", ["ENVIRONMENT"]);
        for s in &doc.environment {
            tagged(&mut r, s.written(), &s.meaning);
        }
    }
    if !doc.files.is_empty() {
        r.control("SH", ["FILES"]);
        for (file, what) in &doc.files {
            tagged(&mut r, (*file).to_string(), what);
        }
    }
    r.control("SH", ["EXAMPLES"]);
    for e in &doc.examples {
        r.control("PP", []);
        r.text([roman(e.what)]);
        r.control("RS", []);
        r.control("nf", []);
        r.text([roman(format!("$ {}", e.line))]);
        r.control("fi", []);
        r.control("RE", []);
    }
    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(crate::flags::cli::EXIT_CODES)]);
    r.control("SH", ["SEE ALSO"]);
    r.text([italic(doc.see_also.join(", "))]);
    r
}
