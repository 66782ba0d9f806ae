//! `iosurvey matrix` as scripts run it (issue 32): several runs in one
//! minute each keep their own files under ORION's names and replace none,
//! `_summary.txt`'s `Commandline:` holds ORION's options alone, and the
//! plausibility warnings follow the text.

use super::matrix::{file_ending, matrix, two_files};
use crate::common::*;
use serde_json::Value;
use std::fs;

/// ORION's file names are made up by iosurvey (test name and minute), so
/// whatever already has such a name, a user's file or a symlink to one,
/// was never offered: it is kept as it is, and the run's files take the
/// next minute that is free (issue 32: a script looping over run levels
/// ran into its own earlier files).
#[test]
fn a_file_or_symlink_at_an_orion_file_name_is_kept_and_the_run_takes_the_next_free_minute() {
    let dir = two_files();
    let user = dir.path().join("notes.txt");
    fs::write(&user, b"the user's notes").unwrap();
    // This minute and the next, in case the run starts after the turn.
    let mut planted = Vec::new();
    for when in ["now", "+1 min"] {
        let stamp = must("date", &["-u", "-d", when, "+%Y%m%d_%H%M"]);
        let hist = dir.path().join(format!("orion_{}_hist.txt", stamp.trim()));
        fs::write(&hist, b"an older result").unwrap();
        let summary = dir
            .path()
            .join(format!("orion_{}_summary.txt", stamp.trim()));
        std::os::unix::fs::symlink(&user, &summary).unwrap();
        planted.push((hist, summary));
    }
    let out = matrix(
        dir.path(),
        &["a.dat", "--num-disks", "1", "--duration", "100ms"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already in") && err.contains("the next free minute"),
        "{err}"
    );
    assert_eq!(fs::read(&user).unwrap(), b"the user's notes");
    for (hist, summary) in &planted {
        assert_eq!(fs::read(hist).unwrap(), b"an older result");
        assert!(summary.symlink_metadata().unwrap().file_type().is_symlink());
    }
    // The run's own six files, under one later stamp none of them had.
    let planted_names: Vec<_> = planted
        .iter()
        .flat_map(|(h, s)| [h.clone(), s.clone()])
        .collect();
    let made: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("orion_")
        })
        .filter(|p| !planted_names.contains(p))
        .collect();
    assert_eq!(made.len(), 6, "{made:?}");
    let summary = made
        .iter()
        .find(|p| p.to_string_lossy().ends_with("_summary.txt"))
        .unwrap();
    assert!(fs::read_to_string(summary)
        .unwrap()
        .contains("Maximum Small IOPS="));
}

/// Issue 32: microsoft/lis-test's ORION script runs its run levels one
/// after the other without a pause; every run runs and keeps its own
/// files, each set named as ORION names them.
#[test]
fn run_levels_back_to_back_in_one_minute_all_run_and_keep_their_files() {
    let dir = two_files();
    for run in ["oltp", "dss", "simple"] {
        let out = matrix(
            dir.path(),
            &[
                "-run",
                run,
                "-num_disks",
                "1",
                "a.dat",
                "--time",
                "100ms",
                "-q",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{run}: {}", describe(&out));
    }
    let mut summaries: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_summary.txt"))
        .collect();
    summaries.sort();
    assert_eq!(summaries.len(), 3, "{summaries:?}");
    for name in &summaries {
        let stamp = name
            .strip_prefix("orion_")
            .and_then(|n| n.strip_suffix("_summary.txt"))
            .unwrap();
        let (day, minute) = stamp.split_once('_').unwrap();
        assert!(
            day.len() == 8
                && minute.len() == 4
                && stamp.bytes().all(|b| b == b'_' || b.is_ascii_digit()),
            "ORION's yyyymmdd_hhmm: {name}"
        );
    }
    // In the order they ran: oltp's IOPS, dss's MB/s, simple's both.
    let text = |i: usize| fs::read_to_string(dir.path().join(&summaries[i])).unwrap();
    assert!(text(0).contains("-run oltp") && text(0).contains("Maximum Small IOPS="));
    assert!(text(1).contains("-run dss") && text(1).contains("Maximum Large MBPS="));
    assert!(text(2).contains("-run simple") && text(2).contains("Maximum Large MBPS="));
}

/// Issue 32: `_summary.txt`'s `Commandline:` is ORION's command line as
/// ORION prints it: its own options (iosurvey's spelling of one given back
/// in ORION's, in its units), never iosurvey's flags nor the targets.
#[test]
fn the_summary_commandline_holds_orions_options_alone() {
    let dir = two_files();
    fs::create_dir(dir.path().join("res")).unwrap();
    let out = matrix(
        dir.path(),
        &[
            "-run",
            "advanced",
            "-num_disks",
            "1",
            "--size-small",
            "4k",
            "-matrix",
            "point",
            "-num_small",
            "1",
            "-num_large",
            "0",
            "--time",
            "100ms",
            "--out",
            "res",
            "--json",
            "r.json",
            "--allow-destroy",
            "a.dat",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let summary = file_ending(&dir.path().join("res"), "_summary.txt");
    let line = summary
        .split_once("Commandline:\n")
        .and_then(|(_, rest)| rest.lines().next())
        .unwrap();
    assert_eq!(
        line,
        "-run advanced -num_disks 1 -size_small 4 -matrix point -num_small 1 -num_large 0 -duration 0.1"
    );
    // The report keeps the line as typed.
    let r: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_valid(&r);
    assert_eq!(r["command_line"][1], "matrix");
    assert!(r["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--json"));
}

/// Issue 32: the plausibility warnings are printed with matrix's text, as
/// the other modes print theirs (a target in memory, here tmpfs).
#[test]
fn warnings_are_printed_with_the_matrix_text() {
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    fs::write(shm.path().join("m.dat"), random_bytes(16 << 20, 7)).unwrap();
    let out = matrix(
        shm.path(),
        &[
            "m.dat",
            "--num-disks",
            "1",
            "--time",
            "100ms",
            "--buffered",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report: Value = serde_json::from_str(&file_ending(shm.path(), "_report.json")).unwrap();
    let codes: Vec<&str> = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["warnings"].as_array().unwrap().iter())
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(codes.contains(&"memory_backed"), "{codes:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let warned: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert!(!warned.is_empty(), "no warning in the text:\n{text}");
    assert!(
        warned.iter().any(|l| l.to_lowercase().contains("memory")),
        "{warned:?}"
    );
}

/// ORION's files of one run: `orion_<stamp>_` and each of them.
const ORION_FILES: [&str; 6] = [
    "summary.txt",
    "mbps.csv",
    "iops.csv",
    "lat.csv",
    "hist.txt",
    "report.json",
];

/// Starts `iosurvey matrix` on `target` in `dir`: one small random point
/// held for a second, so that every run started together is planned
/// while the others measure, long before any writes its files.
fn start_one_point(dir: &std::path::Path, target: &str) -> std::process::Child {
    std::process::Command::new(BIN)
        .args(["matrix", target, "--num-disks", "1", "--matrix", "point"])
        .args(["--num-small", "1", "--num-large", "0", "--time", "1s", "-q"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting iosurvey")
}

/// Runs started at the same moment in one directory with one test name
/// (a script starting ORION's run levels in parallel) each claim a minute
/// of their own when they are planned: every run exits 0 with its own
/// six files under its own stamp. Before, they all took the same stamp
/// and all but the first lost their results (exit 1). A run refused after
/// its claim (its target missing) leaves nothing, its claim included.
#[test]
fn runs_started_together_in_one_directory_each_keep_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let targets = ["a.dat", "b.dat", "c.dat", "d.dat"];
    for (i, t) in targets.iter().enumerate() {
        fs::write(dir.path().join(t), random_bytes(4 << 20, i as u64)).unwrap();
    }
    let runs: Vec<_> = targets
        .iter()
        .map(|t| start_one_point(dir.path(), t))
        .collect();
    let refused = start_one_point(dir.path(), "missing.dat");
    for (t, run) in targets.iter().zip(runs) {
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{t}: {}", describe(&out));
    }
    let out = refused.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.dat"), "{err}");
    // Every name in the directory: the targets and ORION's files alone
    // (no claim, temporary file or trash left by any run).
    let mut stamps = std::collections::BTreeMap::<String, Vec<String>>::new();
    for e in fs::read_dir(dir.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if targets.contains(&name.as_str()) {
            continue;
        }
        let kind = ORION_FILES
            .iter()
            .find(|k| name.ends_with(&format!("_{k}")));
        let stamp = kind.and_then(|k| name.strip_prefix("orion_")?.strip_suffix(&format!("_{k}")));
        let (Some(stamp), Some(kind)) = (stamp, kind) else {
            panic!("{name}: left in the directory");
        };
        stamps
            .entry(stamp.to_string())
            .or_default()
            .push(kind.to_string());
    }
    assert_eq!(stamps.len(), targets.len(), "{stamps:?}");
    for (stamp, kinds) in &mut stamps {
        kinds.sort();
        let mut all = ORION_FILES.map(String::from).to_vec();
        all.sort();
        assert_eq!(*kinds, all, "{stamp}");
    }
    // Each run's files are its own: each target in one summary, measured.
    let summaries: Vec<String> = stamps
        .keys()
        .map(|s| fs::read_to_string(dir.path().join(format!("orion_{s}_summary.txt"))).unwrap())
        .collect();
    for t in targets {
        let own: Vec<_> = summaries
            .iter()
            .filter(|s| s.contains(&format!("Name: {t}\t")))
            .collect();
        assert_eq!(own.len(), 1, "{t}: {summaries:?}");
        assert!(own[0].contains("Maximum Small IOPS="), "{}", own[0]);
    }
}
