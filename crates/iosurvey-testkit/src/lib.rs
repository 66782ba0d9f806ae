//! What iosurvey's tests share (a dev-dependency only): the one rule for a
//! test that cannot run (`skip!`, `require!`), the devices, mounts and
//! cgroups a root test makes and removes again on drop, and a builder that
//! runs a program and reads what it printed.
//!
//! The rule: a test that cannot run here (not root, a tool missing, no
//! io_uring) prints why and returns; under CI (`CI` set to anything but
//! empty, `0` or `false`), where `.ci/run` installs everything the tests
//! need, it fails instead, so a test never passes by not running.
#![deny(unsafe_code)]

pub mod devices;
pub mod run;
mod skip;
pub mod sys;

pub use devices::*;
pub use run::*;
pub use skip::*;
pub use sys::*;
