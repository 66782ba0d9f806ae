//! The safety policy of iosurvey: every rule about what a run may open,
//! write and remove, for the targets it measures and the files it reports
//! to alike.
//!
//! It works by descriptor: it opens once and judges what it holds (device
//! numbers, inodes, loop backings, partitions, holders, swap, mounts in
//! every namespace), creates beneath a held parent directory with
//! `O_EXCL|O_NOFOLLOW`, marks what it created, and removes only what it
//! marked, through its trash.
//!
//! - [`target`]: opening a Job's targets ([`open_target`]) for reading or
//!   writing, with their geometry.
//! - [`frame_dir`]: a video run's directory opened once, its lock, room
//!   and descriptor checks.
//! - [`frame_target`]: a video run's frame directory, its files and its
//!   clean-up.
//! - [`guard`]: the judgements themselves ([`WritePolicy`], [`Refusal`]),
//!   and the trash through which a run removes what it made.
//! - [`output`]: the report files a run writes, judged before any I/O.
//! - [`memory_limit`] and [`budget`]: the memory a run may take, and the
//!   refusal of a plan that needs more.
//! - [`fd_limit`]: room for the descriptors a run's workers hold.
#![deny(unsafe_code)]

pub mod budget;
pub mod fd_limit;
pub mod frame_dir;
pub mod frame_target;
pub mod guard;
pub mod memory_limit;
pub mod output;
pub mod target;

pub use frame_target::{open_frame_dir, plan_frame_dir};
pub use guard::{Refusal, WritePolicy};
pub use memory_limit::{cgroup_limit, process_limit, MemoryLimit};
pub use target::{
    open_target, open_target_claimed, plan_geometry, plan_target, test_file_in, Claim, Created,
    Geometry, Identity, OpenOptions, OpenTarget, Planned, TargetError, TargetKind,
};
