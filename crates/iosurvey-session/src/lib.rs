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

pub mod assign;
mod cluster;
#[cfg(feature = "mpi")]
mod comm;
mod host;
mod launch;
pub mod localize;
pub mod merge;
mod options;
pub mod ranks;

pub use cluster::{probe_each, same_everywhere, Cluster, Local, Verdict, SILENT};
pub use host::host_name;
#[cfg(feature = "mpi")]
pub use launch::Mpi;
pub use launch::{launched_rank, launched_size, start};
pub use localize::Localized;
pub use options::{OutputFormat, OutputOptions, TargetOptions};
