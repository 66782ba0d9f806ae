//! The iosurvey binary's integration tests, in one test binary (one link,
//! one process): each module is one concern, run against the built binary
//! on temporary files and on devices the tests make as root and remove.
//!
//! Without root or a tool a test needs, it prints "skipping: <reason>" and
//! passes; under `CI` it fails instead (the test kit's one rule). The MPI
//! tests are their own target (`tests/mpi.rs`, `--features mpi`).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

/// Every mode run end to end on files and devices, with its outputs.
mod modes {
    mod compare;
    mod diskperf;
    mod matrix;
    mod parallel;
    mod profile;
    mod survey;
    mod video;
}

/// What may be opened, written and removed: targets refused, races lost by
/// the attacker, runs stopped, memory budgeted.
mod guard {
    mod cleanup_races;
    mod hostile_setups;
    mod loop_backing;
    mod memory_budget;
    mod not_storage;
    mod one_run_per_target;
    mod same_storage_any_path;
    mod shared_flag;
    mod signatures_and_mounts;
    mod stop_signals;
    mod video_hostile;
}

/// Output files: special files written in place, races around the
/// replacement of a report.
mod outputs {
    mod raced;
    mod special_files;
}

/// Figures and data that must not lie: counts, written data.
mod truth {
    mod counts;
    mod written_data;
}

mod history_db;
/// `--db postgres://...`, beside SQLite.
mod history_db_pg;
mod history_db_sidecars;
mod html_in_browser;
mod metrics;
/// `run --rate-iops`, `--rate` and `--dist`.
mod pacing;
mod polling;
mod run_on_devices;
mod run_on_files;
mod verify;
mod warnings;
