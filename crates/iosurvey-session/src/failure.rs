//! How a command ends: the outcomes of a run (each an exit code) and the
//! three kinds of failure, and a failure agreed over the ranks of a
//! cluster.

use crate::{Cluster, Verdict};
use std::process::ExitCode;

/// How a command ended when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything ran (exit 0).
    Ok,
    /// It ran, but I/O failed (exit 1).
    IoFailed,
    /// Stopped by SIGINT, SIGTERM or SIGHUP (exit 130).
    Interrupted,
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> ExitCode {
        ExitCode::from(match o {
            Outcome::Ok => 0,
            Outcome::IoFailed => 1,
            Outcome::Interrupted => 130,
        })
    }
}

/// Something of the run's own could not be removed (its test file, said on
/// stderr): the run then ends with exit 1, never 0.
static LEFT_BEHIND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that something of the run's own was left behind.
pub fn left_behind() {
    LEFT_BEHIND.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether something of the run's own was left behind.
pub fn anything_left_behind() -> bool {
    LEFT_BEHIND.load(std::sync::atomic::Ordering::Relaxed)
}

/// A command that did not run to the end.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or a refusal, before any I/O (exit 2).
    Usage(anyhow::Error),
    /// The run itself failed (exit 1).
    Run(anyhow::Error),
    /// Stopped by a signal before anything was measured (exit 130).
    Interrupted(anyhow::Error),
}

/// `Err(Failure::Usage(..))` from anything printable.
pub fn usage<T>(e: impl Into<anyhow::Error>) -> Result<T, Failure> {
    Err(Failure::Usage(e.into()))
}

/// A failure as it travels between ranks: its exit code and its line.
pub fn verdict(f: &Failure) -> Verdict {
    let (code, e) = match f {
        Failure::Usage(e) => (2, e),
        Failure::Run(e) => (1, e),
        Failure::Interrupted(e) => (130, e),
    };
    Verdict {
        code,
        text: format!("{e:#}"),
    }
}

impl From<Verdict> for Failure {
    fn from(v: Verdict) -> Failure {
        let e = anyhow::anyhow!(v.text);
        match v.code {
            2 => Failure::Usage(e),
            130 => Failure::Interrupted(e),
            _ => Failure::Run(e),
        }
    }
}

/// A check of this rank's own (a lock, a limit, a directory of its host)
/// agreed over the ranks when several run: one failure fails every rank
/// together, and rank 0 says each with its rank and host. Alone, the
/// step's own failure.
pub fn agree(cluster: &dyn Cluster, step: Result<(), Failure>) -> Result<(), Failure> {
    if !cluster.distributed() {
        return step;
    }
    Ok(cluster.agree(step.as_ref().err().map(verdict))?)
}

/// `planned` (what a step that every rank takes alike gave, such as a
/// mode's plan from the same command line) agreed over the ranks, so that
/// a refusal is said once, by rank 0, and not by each rank as it ends.
pub fn agree_on<T>(cluster: &dyn Cluster, planned: Result<T, Failure>) -> Result<T, Failure> {
    let (value, step) = match planned {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree(cluster, step)?;
    Ok(value.expect("agreed: every rank has it"))
}

/// A failure every rank reached together.
pub fn agreed(cluster: &dyn Cluster, f: Failure) -> Failure {
    cluster.mark_agreed();
    f
}
