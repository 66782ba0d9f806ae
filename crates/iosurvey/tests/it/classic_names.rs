//! iosurvey run through a link named after a classic tool (`orion`,
//! `diskperf`, `frametest`, `sgpdd-survey`): that tool's command with its
//! spellings, the line recorded as typed; with nothing to run, its usage
//! and nothing done.

use crate::common::*;
use std::path::{Path, PathBuf};

/// A directory holding links to the binary under test, named after the
/// tools: symbolic ones, and `frametest` a hard link (or, across
/// filesystems, a copy: argv[0] is all that counts).
fn links() -> (tempfile::TempDir, impl Fn(&str) -> PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["orion", "diskperf", "sgpdd-survey"] {
        std::os::unix::fs::symlink(BIN, dir.path().join(name)).unwrap();
    }
    let hard = dir.path().join("frametest");
    if std::fs::hard_link(BIN, &hard).is_err() {
        std::fs::copy(BIN, &hard).unwrap();
    }
    let at = dir.path().to_path_buf();
    (dir, move |name: &str| at.join(name))
}

/// The tool `link` run in `cwd` with `args`, without sgpdd-survey's
/// variables from the shell running the tests.
fn tool(link: &Path, cwd: &Path, args: &[&str]) -> Run {
    Run::new(link)
        .args(args)
        .current_dir(cwd)
        .env_remove("scsidevs")
        .env_remove("rawdevs")
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn a_link_with_nothing_to_run_prints_its_tools_usage_and_does_nothing() {
    let (_keep, link) = links();
    let cwd = tempfile::tempdir().unwrap();
    for (name, words) in [
        ("orion", "-run LEVEL"),
        ("diskperf", "[-W]"),
        ("frametest", "[-w SIZE]"),
        ("sgpdd-survey", "[size=MB]"),
    ] {
        let out = tool(&link(name), cwd.path(), &[]).output();
        assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
        let err = stderr_of(&out);
        assert!(err.starts_with("usage: "), "{name}: {err}");
        assert!(err.contains(name) && err.contains(words), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}");
        // Not the quick card's test file in the current directory.
        assert!(empty(cwd.path()), "{name} left files behind");
    }
}

#[test]
fn diskperf_through_a_link_runs_irix_spellings_and_records_the_line_as_typed() {
    let (_keep, link) = links();
    let cwd = tempfile::tempdir().unwrap();
    let target = cwd.path().join("dp.dat");
    let json = cwd.path().join("dp.json");
    let args = [
        "-W",
        "-r4k",
        "-m8k",
        "-t0.05",
        "-c1m",
        "-n",
        "through a link",
        path_str(&target),
        "--json",
        path_str(&json),
    ];
    let out = tool(&link("diskperf"), cwd.path(), &args).output();
    let text = stdout_ok(&out);
    assert!(
        text.starts_with("# iosurvey diskperf: through a link"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 2, "4k and 8k: {text}");
    let r = json_file(&json);
    assert_eq!(r["mode"], "diskperf");
    let line: Vec<&str> = r["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(line[0].ends_with("/diskperf"), "{line:?}");
    assert_eq!(line[1..], args, "the line as typed");
    // A refusal is the tool's, in one line.
    let out = tool(&link("diskperf"), cwd.path(), &["-R", path_str(&target)]).output();
    assert_refused(&out, &["IRIX diskperf's -R"]);
    assert_eq!(stderr_of(&out).lines().count(), 1);
}

#[test]
fn orion_through_a_link_runs_the_matrix_and_its_summary_keeps_orions_words() {
    let (_keep, link) = links();
    let cwd = tempfile::tempdir().unwrap();
    let target = cwd.path().join("lun.dat");
    let out = tool(
        &link("orion"),
        cwd.path(),
        &[
            "-run",
            "advanced",
            "-matrix",
            "point",
            "-num_small",
            "1",
            "-num_large",
            "0",
            "-duration",
            "1",
            "-testname",
            "lk",
            "--size",
            "4m",
            path_str(&target),
        ],
    )
    .output();
    let text = stdout_ok(&out);
    assert!(text.contains("Maximum Small IOPS="), "{text}");
    let summary = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_summary.txt"))
        .expect("lk_<stamp>_summary.txt");
    let summary = std::fs::read_to_string(summary).unwrap();
    let after = summary.split("Commandline:\n").nth(1).unwrap();
    assert!(
        after.starts_with("-run advanced -matrix point -num_small 1"),
        "{summary}"
    );
    // ORION's own -help, through the link and without it.
    for out in [
        tool(&link("orion"), cwd.path(), &["-help"]).output(),
        iosurvey(&["matrix", "-help"]),
    ] {
        let help = stdout_ok(&out);
        assert!(help.contains("ORION's own options"), "{help}");
    }
}

#[test]
fn frametest_through_a_hard_link_moves_its_frames() {
    let (_keep, link) = links();
    let cwd = tempfile::tempdir().unwrap();
    let args = ["-w", "1", "-z", "64", "-n", "4", path_str(cwd.path())];
    let out = tool(&link("frametest"), cwd.path(), &args).output();
    let text = stdout_ok(&out);
    assert!(text.contains("Frames transferred: 4"), "{text}");
    assert!(
        text.contains("write 4 custom frames of 65536 bytes"),
        "{text}"
    );
}

#[test]
fn sgpdd_survey_through_a_link_reads_its_variables() {
    let (_keep, link) = links();
    let cwd = tempfile::tempdir().unwrap();
    let dev = cwd.path().join("lun.dat");
    let out = tool(&link("sgpdd-survey"), cwd.path(), &[])
        .env("scsidevs", &dev)
        .env("size", "1")
        .env("rszlo", "64")
        .env("rszhi", "64")
        .env("crghi", "1")
        .env("thrhi", "1")
        .env("actions", "read")
        .output();
    let text = stdout_ok(&out);
    assert!(
        text.contains(&format!("sgpdd-survey on {}", dev.display())),
        "{text}"
    );
    let points: Vec<&str> = text.lines().filter(|l| l.starts_with("dev ")).collect();
    assert_eq!(points.len(), 1, "{text}");
    assert!(
        points[0].contains("rsz   64K") && points[0].contains(" read "),
        "{text}"
    );
    assert!(stderr_of(&out).contains("sgpdd-survey's variables taken: scsidevs="));
}
