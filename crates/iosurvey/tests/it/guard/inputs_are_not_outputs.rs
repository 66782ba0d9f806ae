//! What a run reads to know what to do is an input, never an output: a
//! fio job file (`run --fio JOB.fio`) and ORION's `<testname>.lun` were
//! replaced by `--json`, `--html`, `--csv`, `--live`, `--stream-file` or
//! `--metrics-file` given the same path (exit 0, the user's file gone),
//! while `--db` on the job file and `report`/`compare` inputs are refused.
//!
//! Files only: no root needed.

use crate::common::*;

const OUTPUTS: [&str; 6] = [
    "--json",
    "--html",
    "--csv",
    "--live",
    "--stream-file",
    "--metrics-file",
];

#[test]
fn a_fio_job_file_is_never_an_output_of_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    let text = "[j]\nfilename=t.dat\nsize=1m\nrw=read\n";
    for flag in OUTPUTS {
        std::fs::write(&job, text).unwrap();
        let out = iosurvey_cmd(&["run", "--fio", "j.fio", flag, "j.fio", "--quiet"])
            .current_dir(dir.path())
            .output();
        assert_eq!(
            std::fs::read_to_string(&job).unwrap(),
            text,
            "{flag} j.fio replaced the job file the run reads: {}",
            describe(&out)
        );
        assert_refused(&out, &["j.fio"]);
        assert_eq!(stderr_of(&out).lines().count(), 1, "{}", stderr_of(&out));
        assert!(!dir.path().join("t.dat").exists(), "the test file is left");
    }
}

#[test]
fn orions_lun_file_is_never_an_output_of_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![7u8; 8 << 20]).unwrap();
    let lun = dir.path().join("zr.lun");
    let text = format!("{}\n", target.display());
    for flag in ["--json", "--html", "--live"] {
        std::fs::write(&lun, &text).unwrap();
        let out = iosurvey_cmd(&[
            "matrix",
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
            "-num_disks",
            "1",
            "-testname",
            "zr",
            flag,
            "zr.lun",
            "--quiet",
        ])
        .current_dir(dir.path())
        .output();
        assert_eq!(
            std::fs::read_to_string(&lun).unwrap(),
            text,
            "{flag} zr.lun replaced the .lun file the run reads: {}",
            describe(&out)
        );
        assert_refused(&out, &["zr.lun"]);
    }
}
