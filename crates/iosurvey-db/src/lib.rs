//! The history database of iosurvey (`--db FILE`, `iosurvey db ...`): an
//! embedded SQLite file, no server, or (`--db postgres://...`) the same
//! tables in a schema of a PostgreSQL database, for fleets that outgrow a
//! file. Every run is written whole in one
//! transaction: the run, its hosts and targets with their devices, each
//! point with its typed parameters, each figure per stream, direction and
//! window, the lossless histograms, and the run's whole JSON beside them,
//! so the rows can always be made again. The tables are documented in
//! `docs/database.md`.
#![deny(unsafe_code)]

mod conn;
pub mod export;
mod file_lock;
pub mod fio;
mod from_report;
pub mod hash;
mod held;
pub mod history;
mod import;
mod pg;
mod place;
mod read;
pub mod record;
mod schema;
mod store;
mod url;
mod value;
mod write;

pub use from_report::from_report;
pub use import::{read_other, Input};
pub use read::{Filter, StoredRun};
pub use schema::{current as schema_version, APPLICATION_ID};
pub use store::{Db, DbError, Inserted};
pub use url::{is_postgres, redact, redact_args, DEFAULT_SCHEMA};
