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
    mod diskperf_frames;
    mod matrix;
    mod matrix_runs;
    mod parallel;
    mod profile;
    mod quick;
    mod survey;
    mod video;
    mod video_presets;
}

/// What may be opened, written and removed: targets refused, races lost by
/// the attacker, runs stopped, memory budgeted.
mod guard {
    mod cleanup_races;
    mod consent_on_the_line;
    /// SIGTERM before a run has opened anything.
    mod early_signals;
    mod hostile_setups;
    mod inputs_are_not_outputs;
    mod loop_backing;
    mod memory_budget;
    mod not_storage;
    mod one_run_per_target;
    mod same_storage_any_path;
    mod shared_flag;
    mod signatures_and_mounts;
    /// Job files and .lun lists that are not regular files: refused, not waited on.
    mod small_inputs_never_waited_on;
    mod stop_signals;
    /// Discards through the write guard.
    mod trims;
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

/// The classic tools' own command lines in --help and the manual pages,
/// and completions' values.
mod classic_help;
/// Links named after the classic tools.
mod classic_names;
/// fio's option names on `run`, and fio job files (`--fio`).
mod fio_users;
mod history_db;
/// `--db postgres://...`, beside SQLite.
mod history_db_pg;
mod history_db_sidecars;
mod html_in_browser;
/// `--live` lines, interval percentiles, progress over a plan.
mod live_data;
mod metrics;
/// `run --rate-iops`, `--rate` and `--dist`.
mod pacing;
mod polling;
/// `run --bs 4k:70,64k:30`: a block-size split within a point.
mod run_bs_split;
mod run_on_devices;
mod run_on_files;
/// `run --qd 1,2,4`, `--bs 4k,64k`: sweeps of one run.
mod run_sweeps;
/// `run --rw trim|randtrim`, `--trim PCT`: discards on devices that take them.
mod run_trim;
mod verify;
mod warnings;
