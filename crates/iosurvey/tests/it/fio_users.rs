//! fio users halfway: fio's option names on `iosurvey run` (aliases where
//! the meaning is the same, one line saying what to type where not) and
//! fio job files run with `--fio`, on temp files; what cannot be expressed
//! refused with one line, exit 2, before anything is made.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// fio itself reads `job` (so the job files here are fio's), or the test
/// is skipped when fio is not installed.
fn fio_parses(job: &Path) -> Result<(), String> {
    let out = std::process::Command::new("fio")
        .arg("--parse-only")
        .arg(job)
        .output()
        .map_err(|e| format!("fio is not installed: {e}"))?;
    assert!(
        out.status.success(),
        "fio does not read {}: {}",
        job.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// Refused with one line on stderr, nothing on stdout, and nothing left in
/// `dir` but the job file.
fn refused_in(dir: &Path, args: &[&str], needle: &str) {
    let out = iosurvey_cmd(args).current_dir(dir).output();
    assert_refused(&out, &[needle]);
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".fio"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn stream(report: &Value, i: usize) -> &Value {
    &report["points"][0]["streams"][i]
}

#[test]
fn fios_names_with_their_values_run_a_job_and_the_line_is_kept_as_typed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let filename = format!("--filename={}", s(&f));
    let args = [
        "run",
        &filename,
        "--size=1m",
        "--iodepth=4",
        "--bs=4k",
        "--rw=randrw",
        "--rwmixread=70",
        "--runtime=1",
        "--time_based",
        "--ioengine=io_uring",
        "--direct=1",
        "--randseed=9",
        "--output",
        "json",
        "--quiet",
    ];
    let r = report_of(&iosurvey(&args));
    assert_valid(&r);
    let line: Vec<&str> = r["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(line, args, "the report keeps the line as typed");
    let st = stream(&r, 0);
    assert_eq!(st["outstanding"], 4);
    assert_eq!(st["bs"], 4096);
    assert_eq!(st["read_pct"], 70);
    assert_eq!(st["pattern"], "random");
    let set = &r["points"][0]["settings"];
    assert_eq!(set["engine"], "uring");
    assert_eq!(set["direct"], true);
    assert_eq!(set["seed"], 9);
    assert_eq!(set["time_ns"], 1_000_000_000u64);
    assert_eq!(r["points"][0]["targets"][0]["path"], s(&f));
    assert!(!f.exists(), "the test file iosurvey made is removed");
}

#[test]
fn direct_0_is_buffered_and_numjobs_is_workers_for_random_io() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.dat");
    let r = run_point(&[
        s(&f),
        "--size",
        "1m",
        "--rw",
        "randread",
        "--numjobs=2",
        "--direct=0",
        "--ioengine=psync",
        "--time",
        "1s",
    ]);
    assert_eq!(r["settings"]["direct"], false);
    assert_eq!(r["settings"]["workers"], 2);
    assert_eq!(r["settings"]["engine"], "sync");
}

#[test]
fn fios_names_that_mean_something_else_say_what_to_type() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--bs", "4kb"],
        "--bs 4kb: 4KB is 4000 bytes; 4k is 4096",
    );
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--bs=64KB"],
        "64KB is 64000 bytes; 64k is 65536",
    );
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--numjobs", "4"],
        "type --workers 4",
    );
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--runtime=10"],
        "type --time 10",
    );
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--ioengine=libaio"],
        "type --engine uring",
    );
    refused_in(
        d,
        &["run", "t.dat", "--size", "1m", "--rw=rw"],
        "sequential mix",
    );
}

const TWO_FILES: &str = "\
; two files, one workload: one run over both
[global]
ioengine=io_uring
direct=1
rw=randread
bs=4KB
iodepth=4
size=1m
runtime=1
time_based
group_reporting

[first]
filename=a.dat

[second]
filename=b.dat
";

#[test]
fn a_job_file_of_one_workload_on_two_files_is_one_run_over_them() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("two.fio");
    std::fs::write(&job, TWO_FILES).unwrap();
    need!(fio_parses(&job));
    let out = iosurvey_cmd(&["run", "--fio", "two.fio", "--json", "r.json"])
        .current_dir(dir.path())
        .output();
    let text = stdout_ok(&out);
    assert!(
        text.starts_with("fio job file two.fio: ran [first] [second]\n"),
        "{text}"
    );
    let r = json_file(&dir.path().join("r.json"));
    assert_valid(&r);
    assert_eq!(r["fio_job"]["file"], "two.fio");
    assert_eq!(
        r["fio_job"]["sections"],
        serde_json::json!(["first", "second"])
    );
    assert_eq!(r["fio_job"]["text"], TWO_FILES);
    let p = &r["points"][0];
    let paths: Vec<&str> = p["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.dat", "b.dat"]);
    // fio's units in a job file: 4KB is 4096.
    assert_eq!(stream(&r, 1)["bs"], 4096);
    assert_eq!(stream(&r, 1)["outstanding"], 4);
    assert_eq!(p["settings"]["direct"], true);
    assert_eq!(
        p["settings"]["workers"], 2,
        "a worker per job, as fio's threads"
    );
    assert!(!dir.path().join("a.dat").exists());
}

const STONEWALLED: &str = "\
[global]
filename=t.dat
size=1m

[write]
rw=write
bs=64k

[read]
stonewall
rw=read
bs=64k
";

#[test]
fn a_section_runs_alone_with_fios_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("seq.fio");
    std::fs::write(&job, STONEWALLED).unwrap();
    need!(fio_parses(&job));
    let out = iosurvey_cmd(&[
        "run",
        "--fio",
        "seq.fio",
        "--section",
        "write",
        "--output",
        "json",
        "--quiet",
    ])
    .current_dir(dir.path())
    .output();
    let r = report_of(&out);
    assert_valid(&r);
    assert_eq!(r["fio_job"]["sections"], serde_json::json!(["write"]));
    let p = &r["points"][0];
    // fio's defaults: psync, buffered; one pass of size.
    assert_eq!(p["settings"]["engine"], "sync");
    assert_eq!(p["settings"]["direct"], false);
    assert_eq!(p["settings"]["bytes"], 1 << 20);
    assert_eq!(stream(&r, 0)["rw"], "write");
    assert_eq!(p["total"]["write"]["bytes"], 1 << 20);
}

#[test]
fn jobs_after_a_stonewall_are_the_next_point_on_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("seq.fio");
    std::fs::write(&job, STONEWALLED).unwrap();
    need!(fio_parses(&job));
    let out = iosurvey_cmd(&["run", "--fio", "seq.fio", "--json", "r.json"])
        .current_dir(dir.path())
        .output();
    let text = stdout_ok(&out);
    assert!(
        text.starts_with(
            "fio job file seq.fio: ran [write], then [read]\nrun: [write] write bs=64KiB"
        ),
        "{text}"
    );
    assert!(text.contains("\nrun: [read] read bs=64KiB"), "{text}");
    let r = json_file(&dir.path().join("r.json"));
    assert_valid(&r);
    assert_eq!(
        r["fio_job"]["sections"],
        serde_json::json!(["write", "read"])
    );
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["total"]["write"]["bytes"], 1 << 20);
    assert_eq!(points[1]["total"]["read"]["bytes"], 1 << 20);
    assert_eq!(points[1]["streams"][0]["rw"], "read");
    assert!(!dir.path().join("t.dat").exists());
    // fio runs the same file to the same bytes, job by job.
    let fio = std::process::Command::new("fio")
        .args(["--output-format=json", "seq.fio"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let f: Value = serde_json::from_slice(&fio.stdout).unwrap();
    assert_eq!(
        f["jobs"][0]["write"]["io_bytes"],
        points[0]["total"]["write"]["bytes"]
    );
    assert_eq!(
        f["jobs"][1]["read"]["io_bytes"],
        points[1]["total"]["read"]["bytes"]
    );
}

#[test]
fn what_one_run_cannot_express_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let write = |name: &str, text: &str| std::fs::write(d.join(name), text).unwrap();
    write("seq.fio", STONEWALLED);
    write(
        "apart.fio",
        "[global]\nsize=1m\n[w]\nfilename=a.dat\nrw=write\n[r]\nstonewall\nfilename=b.dat\nrw=read\n",
    );
    refused_in(
        d,
        &["run", "--fio", "apart.fio"],
        "apart.fio: [r] waits for [w] (stonewall) with other files, which the points of one iosurvey run share",
    );
    write(
        "mixed.fio",
        "[global]\nsize=1m\n[r]\nfilename=a.dat\nrw=randread\n[w]\nfilename=b.dat\nrw=randwrite\n",
    );
    refused_in(
        d,
        &["run", "--fio", "mixed.fio"],
        "mixed.fio: [r] and [w] run at the same time with different workloads (--rw randread against --rw randwrite)",
    );
    write("loops.fio", "[j]\nfilename=a.dat\nsize=1m\nloops=2\n");
    refused_in(
        d,
        &["run", "--fio", "loops.fio"],
        "loops.fio: [j] loops: an option iosurvey has no equivalent for",
    );
    write("inc.fio", "[j]\ninclude other.fio\n");
    refused_in(d, &["run", "--fio", "inc.fio"], "inc.fio: line 2: include");
    write("rw.fio", "[j]\nfilename=a.dat\nsize=1m\nrw=readwrite\n");
    refused_in(
        d,
        &["run", "--fio", "rw.fio"],
        "[j] rw=readwrite: fio's sequential mix",
    );
    refused_in(
        d,
        &["run", "--fio", "seq.fio", "--section", "trim"],
        "--section trim: seq.fio has no job [trim] (its jobs: [write] [read])",
    );
    refused_in(
        d,
        &[
            "run",
            "--fio",
            "seq.fio",
            "--section",
            "write",
            "--bs",
            "4k",
        ],
        "--bs is given on the command line and by seq.fio",
    );
    refused_in(d, &["run", "--fio", "none.fio"], "--fio none.fio: ");
    refused_in(
        d,
        &["run", "--fio", "seq.fio", "--section", "write", "c.dat"],
        "c.dat is a target on the command line, and seq.fio names the targets (filename=)",
    );
    write("many.fio", "[j]\nfilename=a.dat\nsize=1m\nnumjobs=4\n");
    refused_in(
        d,
        &["run", "--fio", "many.fio"],
        "[j] numjobs=4: fio's 4 jobs each read the whole file from its start",
    );
    // A workload iosurvey has but that run refuses: run's own check.
    write(
        "sync.fio",
        "[j]\nfilename=a.dat\nsize=1m\nrw=randread\niodepth=8\n",
    );
    refused_in(
        d,
        &["run", "--fio", "sync.fio"],
        "psync (fio's default engine) has one I/O in flight",
    );
}
