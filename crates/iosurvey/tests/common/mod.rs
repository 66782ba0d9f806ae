//! What the iosurvey binary's tests share beyond the test kit
//! (`iosurvey-testkit`, re-exported here with its `skip!` and `require!`):
//! the binary under test, runs of it and their reports, and the schema a
//! report must match.
#![allow(dead_code)]

pub use iosurvey_testkit::*;
use serde_json::Value;
use std::fs;
use std::process::Output;

pub const BIN: &str = env!("CARGO_BIN_EXE_iosurvey");

/// The test kit's `require!` under the name these tests call it by: unwraps a setup result, or skips the test
/// with the reason.
macro_rules! need {
    ($e:expr) => {
        iosurvey_testkit::require!($e)
    };
}

/// iosurvey run under a blkio cgroup.
pub trait CgroupRun {
    /// Runs iosurvey with `args` as a member of this group.
    fn run_iosurvey(&self, args: &[&str]) -> Output;
    /// Starts iosurvey with `args` as a member of this group, its stdout
    /// and stderr piped.
    fn spawn_iosurvey(&self, args: &[&str]) -> std::process::Child;
}

impl CgroupRun for Cgroup {
    fn run_iosurvey(&self, args: &[&str]) -> Output {
        self.run(BIN, args)
    }

    fn spawn_iosurvey(&self, args: &[&str]) -> std::process::Child {
        self.spawn(BIN, args)
    }
}

/// iosurvey with `args`, ready to run: sgpdd-survey's variables, if the
/// shell running the tests has them, would give `survey` its devices.
pub fn iosurvey_cmd(args: &[&str]) -> Run {
    Run::new(BIN)
        .args(args)
        .env_remove("scsidevs")
        .env_remove("rawdevs")
}

pub fn iosurvey(args: &[&str]) -> Output {
    iosurvey_cmd(args).output()
}

/// Runs `iosurvey run ARGS --output json --quiet` and returns its first point.
pub fn run_point(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json", "--quiet"]);
    let out = iosurvey(&all);
    let report = report_of(&out);
    let point = report["points"][0].clone();
    assert!(point.is_object(), "no point in the report: {report}");
    assert!(
        point["failure"].is_null(),
        "the run reported a failure: {}",
        point["failure"]
    );
    point
}

/// Asserts that a report matches the checked-in JSON schema.
pub fn assert_valid(report: &Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/run-report.schema.json"
    );
    let schema: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
