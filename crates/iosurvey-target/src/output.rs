//! Report files (`--json`, `--csv`, `--html`, `--live`, a mode's own
//! files): judged before any I/O ([`path`]), then written once, a regular
//! file replaced atomically beside itself and anything else written in
//! place ([`file`]).

pub mod claim;
pub mod database;
pub mod file;
pub mod judged;
pub mod path;
mod sqlite_made;
mod symlinks;
