//! `iosurvey completions SHELL` and the arguments of `iosurvey man
//! [COMMAND]` (its page is [`crate::man_page`]'s): what a shell and `man`
//! expect, generated from the flags themselves, on stdout.

use anyhow::anyhow;
use clap::Args;
use iosurvey_session::{Failure, Outcome};
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

/// Writes `bytes` to stdout; a reader that closed the pipe is not an error.
pub fn emit(bytes: &[u8]) -> Result<Outcome, Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(anyhow!("writing to stdout: {e}")))
        }
        _ => Ok(Outcome::Ok),
    }
}
