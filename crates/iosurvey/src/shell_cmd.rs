//! `iosurvey completions SHELL` and `iosurvey man [COMMAND]`: what a shell
//! and `man` expect, generated from the flags themselves, on stdout.

use anyhow::anyhow;
use clap::Args;
use iosurvey_session::{usage, Failure, Outcome};
use std::io::Write;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: source the script, or put it where the shell looks (bash:
    /// /etc/bash_completion.d/iosurvey; zsh: a directory of $fpath as
    /// _iosurvey; fish: ~/.config/fish/completions/iosurvey.fish).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// A command's own page (run, quick, diskperf, ...); without it, the
    /// page of iosurvey itself. Read it with `iosurvey man run | man -l -`.
    pub command: Option<String>,
}

/// The completion script of `cmd`, iosurvey's whole command line.
pub fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> Result<Outcome, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "iosurvey", &mut out);
    emit(&out)
}

/// The manual page of `cmd`, iosurvey's whole command line, or of one of
/// its commands.
pub fn man(a: ManArgs, mut cmd: clap::Command) -> Result<Outcome, Failure> {
    cmd.build();
    // A command's page carries iosurvey's version (a one-shot command: the
    // leak is its lifetime).
    let version: &'static str = Box::leak(cmd.get_version().unwrap_or_default().into());
    let page = match &a.command {
        None => cmd,
        Some(name) => {
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
            // The page of `iosurvey run` is iosurvey-run(1), as git's are.
            let full: &'static str = Box::leak(format!("iosurvey-{}", sub.get_name()).into());
            sub.name(full).version(version)
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| Failure::Run(anyhow!("writing the manual page: {e}")))?;
    emit(&out)
}

/// Writes `bytes` to stdout; a reader that closed the pipe is not an error.
fn emit(bytes: &[u8]) -> Result<Outcome, Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(anyhow!("writing to stdout: {e}")))
        }
        _ => Ok(Outcome::Ok),
    }
}
