//! The session: one [`run_plan`] runs every mode's plan (its targets
//! checked and opened, its outputs judged and written, the live display,
//! signals and stdout), with a [`Presenter`] for the mode's own text.
//!
//! Where a plan runs: on this process alone ([`Local`]) or over the ranks
//! of an MPI job ([`Mpi`], `--features mpi`). Both are a [`Cluster`], a
//! value the session loop and the modes are handed (never statics): it
//! assigns the targets a command line named to ranks, gives each rank its
//! part of a plan, agrees a step's outcome over the ranks, and gathers
//! each rank's results for rank 0's merge ([`merge`]).
//!
//! ```
//! use iosurvey_session::{Cluster, Local};
//! let one = Local::new();
//! assert_eq!(one.rank(), 0);
//! assert!(!one.distributed());
//! // One process agrees with itself.
//! assert!(one.agree(None).is_ok());
//! ```
#![deny(unsafe_code)]

// Every line for stderr in this crate goes through `say`, which never
// panics on a closed stderr (std's macros do); defined before the modules
// so that theirs are these.
macro_rules! eprintln {
    () => {
        $crate::say::text(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::say::text(format_args!("{}\n", format_args!($($arg)*)))
    };
}
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::say::text(format_args!($($arg)*))
    };
}

pub mod assign;
mod cluster;
#[cfg(feature = "mpi")]
mod comm;
mod execute;
pub mod failure;
mod grown_file;
pub mod history_db;
mod host;
mod json_file;
mod launch;
mod live_lines;
pub mod localize;
mod made_up;
pub mod merge;
mod metrics;
mod metrics_push;
mod metrics_text;
mod options;
pub mod output;
mod plan_progress;
pub mod presenter;
mod progress;
pub mod ranks;
pub mod say;
mod session;
pub mod stop;
mod stream_file;
mod targets;
mod tuning;

pub use cluster::{probe_each, same_everywhere, Cluster, Local, Verdict, SILENT};
pub use failure::{agree, agree_on, usage, Failure, Outcome};
pub use host::host_name;
#[cfg(feature = "mpi")]
pub use launch::Mpi;
pub use launch::{launched_rank, launched_size, start};
pub use localize::Localized;
pub use options::{OutputFormat, OutputOptions, TargetOptions};
pub use presenter::{FileBody, Presentation, Presenter, TextOnly};
pub use session::{run_plan, Session};
