//! iosurvey under MPI (`cargo test -p iosurvey --features mpi --test mpi`,
//! as root, with Open MPI's mpirun, or with Slurm's srun when
//! `IOSURVEY_MPI_LAUNCHER=srun`): every rank on a loop device of its own,
//! made and removed here. Several hosts are played on one machine by
//! giving each rank a UTS namespace with a host name of its own.
#![cfg(feature = "mpi")]

#[macro_use]
mod common;
#[path = "mpi/launcher.rs"]
mod launcher;

use common::*;
use launcher::Launcher;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The launcher of these runs (mpirun, or srun: `IOSURVEY_MPI_LAUNCHER`).
fn launcher() -> Launcher {
    Launcher::from_env().unwrap_or_else(|e| panic!("{e}"))
}

fn require_mpi() -> Result<(), String> {
    launcher().require()
}

/// The launcher's command that starts iosurvey with `args` on `n` ranks;
/// with `per_host`, rank `r` runs on host `node{r / per_host}`.
fn launch_cmd(n: usize, per_host: Option<usize>, args: &[&str]) -> Command {
    launcher().command(n, per_host, None, args)
}

fn launch(n: usize, per_host: Option<usize>, args: &[&str]) -> Output {
    launch_cmd(n, per_host, args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", launcher().program()))
}

/// Whether the launcher's `stderr` says a rank exited with `code`.
fn said_exit(stderr: &str, code: i32) -> bool {
    launcher().said_exit(stderr, code)
}

/// `devs` as `host:path` targets, `per_host` devices on each of node0,
/// node1, ...
fn host_targets(devs: &[LoopDev], per_host: usize) -> Vec<String> {
    devs.iter()
        .enumerate()
        .map(|(i, d)| format!("node{}:{}", i / per_host, path_str(d.path())))
        .collect()
}

/// `mode` and `targets`, for more arguments to follow.
fn with_targets<'a>(mode: &'a str, targets: &'a [String]) -> Vec<&'a str> {
    let mut v = vec![mode];
    v.extend(targets.iter().map(String::as_str));
    v
}

/// Blank loop devices over files on the disk.
fn loops(n: usize) -> Result<Vec<LoopDev>, String> {
    (0..n)
        .map(|i| LoopDev::create(32 * MIB, Fill::Random(i as u64 + 1), &["--direct-io=on"]))
        .collect()
}

#[test]
fn four_ranks_each_throttled_add_up_over_the_common_window() {
    let _lock = serial();
    need!(require_mpi());
    need!(require_blkio());
    let devs = need!(loops(4));
    let cg = need!(Cgroup::new());
    let limits = [300u64, 600, 900, 1200];
    for (d, l) in devs.iter().zip(limits) {
        cg.set(
            "blkio.throttle.read_iops_device",
            &format!("{} {l}", maj_min(d.path())),
        );
    }
    let targets = host_targets(&devs, 2);
    let mut args = with_targets("run", &targets);
    args.extend([
        "--rw", "randread", "--bs", "4k", "--qd", "4", "--ramp", "1s", "--time", "4s", "--output",
        "json", "--quiet",
    ]);
    // Each rank joins the group itself: srun's ranks are children of
    // slurmd, not of srun.
    let out = launcher()
        .command(4, Some(2), Some(&cg.procs()), &args)
        .output()
        .expect("running the launcher");
    let report = report_of(&out);
    assert_valid(&report);
    let ranks = report["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    let hosts: Vec<&str> = ranks.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["node0", "node0", "node1", "node1"]);
    let common = &report["points"][0]["windows"]["common"];
    let sum: u64 = limits.iter().sum();
    let iops = f(&common["iops"]);
    assert!(
        (iops - sum as f64).abs() <= 0.05 * sum as f64,
        "common window {iops:.0} IOPS, limits add up to {sum}: {common}"
    );
    // Each rank's own rate is its own device's limit.
    for (k, &l) in limits.iter().enumerate() {
        let p = &report["points"][0]["ranks"][k];
        let secs = (u(&p["end_ns"]) - u(&p["start_ns"])) as f64 / 1e9;
        let own = u(&p["read_ops"]) as f64 / secs;
        assert!(
            (own - l as f64).abs() <= 0.05 * l as f64,
            "rank {k}: {own:.0} IOPS, limit {l}"
        );
    }
    // The merged histogram counts every rank's I/Os.
    let point = &report["points"][0];
    let per_rank: u64 = point["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| u(&r["read_ops"]))
        .sum();
    assert_eq!(u(&point["total"]["read"]["ops"]), per_rank);
    let in_histograms: u64 = point["streams"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["read"]["histogram"]["counts"].as_array().unwrap())
        .map(|c| u(&c[1]))
        .sum();
    assert_eq!(in_histograms, per_rank);
}

#[test]
fn one_rank_refusing_stops_every_rank_before_any_io() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(3));
    must("mkfs.ext4", &["-q", "-F", path_str(devs[2].path())]);
    let before: Vec<u64> = devs.iter().map(|d| checksum(d.path(), None)).collect();
    let targets = host_targets(&devs, devs.len());
    let mut args = with_targets("run", &targets);
    args.extend([
        "--rw",
        "write",
        "--bs",
        "1m",
        "--time",
        "1s",
        "--allow-destroy",
    ]);
    let out = launch(3, Some(3), &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    // Every rank exits 2: mpirun names the first one that did, srun each.
    assert!(said_exit(&err, 2), "{err}");
    assert!(
        err.contains(&format!("rank 2 on node0: {}", path_str(devs[2].path()))),
        "{err}"
    );
    assert!(err.contains("ext4"), "{err}");
    let after: Vec<u64> = devs.iter().map(|d| checksum(d.path(), None)).collect();
    assert_eq!(before, after, "a device was written");
}

#[test]
fn sigint_stops_every_rank_and_keeps_the_partial_point() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(2));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let targets = host_targets(&devs, devs.len());
    let mut args = with_targets("run", &targets);
    args.extend([
        "--rw",
        "randread",
        "--time",
        "60s",
        "--json",
        path_str(&json),
    ]);
    let child = launch_cmd(2, Some(2), &args).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let t0 = std::time::Instant::now();
    // Ctrl-C as srun forwards it, to every rank (mpirun turns its own
    // SIGINT into a SIGTERM to each, which iosurvey takes the same way).
    let ranks = ranks_writing(&json);
    assert_eq!(ranks.len(), 2, "rank processes: {ranks:?}");
    for pid in ranks {
        must("kill", &["-INT", &pid.to_string()]);
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(t0.elapsed() < Duration::from_secs(20), "{err}");
    assert!(said_exit(&err, 130), "{err}");
    let report = json_file(&json);
    let p = &report["points"][0];
    assert_eq!(p["interrupted"], true, "{p}");
    assert!(u(&p["total"]["read"]["ops"]) > 0);
    assert_eq!(report["ranks"].as_array().unwrap().len(), 2);
}

/// The iosurvey processes (not the launcher) whose command line names `json`.
fn ranks_writing(json: &std::path::Path) -> Vec<u32> {
    let bin = std::fs::canonicalize(BIN).unwrap();
    let needle = json.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            exe.as_deref() == Some(bin.as_path()) && cmd.windows(needle.len()).any(|w| w == needle)
        })
        .collect()
}

/// A survey of `targets` (4 MiB each, 64 KiB records) with up to
/// `regions` regions and threads.
fn host_survey<'a>(targets: &'a [String], regions: &'a str) -> Vec<&'a str> {
    let mut args = with_targets("survey", targets);
    args.extend(["--size", "4m", "--crghi", regions, "--thrhi", regions]);
    args.extend(["--rszlo", "65536", "--rszhi", "65536", "--allow-destroy"]);
    args
}

#[test]
fn survey_of_host_devices_counts_every_host_s_devices() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(4));
    let targets = host_targets(&devs, 2);
    let args = host_survey(&targets, "2");
    let out = launch(4, Some(2), &args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // sgpdd-survey's lines: `dev` counts the devices of every host.
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("dev ")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for l in &lines {
        assert!(l.starts_with("dev  4 sz    16384K rsz   64K"), "{l}");
        assert!(l.contains("write") && l.contains("read"), "{l}");
    }
    assert!(text.contains("MPI: 4 ranks on 2 hosts"), "{text}");
    assert!(text.contains("rank   3 on node1: node1:"), "{text}");
}

#[test]
fn summarised_regions_keep_their_figures_and_the_totals_every_histogram() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(4));
    let targets = host_targets(&devs, 2);
    let mut args = host_survey(&targets, "4");
    args.extend(["--stream-detail", "summary", "--output", "json", "--quiet"]);
    let out = launch(4, Some(2), &args);
    let report = report_of(&out);
    assert_valid(&report);
    let points = report["points"].as_array().unwrap();
    assert!(!points.is_empty());
    for p in points {
        assert_eq!(
            p["settings"]["stream_detail"], "summary",
            "{}",
            p["settings"]
        );
        let streams = p["streams"].as_array().unwrap();
        // Every region of every device of every rank.
        assert_eq!(
            streams.len() as u64,
            4 * u(&p["params"]["crg"]),
            "{}",
            p["params"]
        );
        let mut ops = 0;
        for s in streams {
            // A class that did nothing is left out (schema 6).
            for c in [&s["read"], &s["write"]]
                .into_iter()
                .filter(|c| !c.is_null())
            {
                // Neither is written (schema 6: left out when empty).
                assert!(c.get("histogram").is_none(), "{c}");
                assert!(c.get("series").is_none(), "{c}");
                assert!(u(&c["ops"]) > 0, "{c}");
                ops += u(&c["ops"]);
                assert!(u(&c["latency"]["max_ns"]) > 0, "{c}");
            }
        }
        let t = &p["total"];
        assert_eq!(u(&t["read"]["ops"]) + u(&t["write"]["ops"]), ops);
        // The totals' histograms count every I/O of every rank (one of a
        // class that did nothing is left out, as any empty one).
        for c in [&t["read"], &t["write"]] {
            let counted = histogram_count(c);
            assert_eq!(counted, u(&c["ops"]), "{c}");
        }
        assert!(ops > 0, "{t}");
    }
}

#[test]
fn the_stream_file_holds_every_rank_s_regions_whole_beside_a_summarised_report() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(4));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("streams.jsonl");
    let targets = host_targets(&devs, 2);
    let mut args = host_survey(&targets, "2");
    args.extend([
        "--stream-detail",
        "summary",
        "--stream-file",
        path_str(&file),
    ]);
    args.extend(["--output", "json", "--quiet"]);
    let out = launch(4, Some(2), &args);
    let report = report_of(&out);
    assert_valid(&report);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let points = report["points"].as_array().unwrap();
    let streams: usize = points
        .iter()
        .map(|p| p["streams"].as_array().unwrap().len())
        .sum();
    // A line for every stream of every point, from every rank.
    assert_eq!(lines.len(), streams, "{}", describe(&out));
    let ranks: std::collections::BTreeSet<u64> = lines.iter().map(|l| u(&l["rank"])).collect();
    assert_eq!(ranks.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    for l in &lines {
        let p = &points[u(&l["point"]) as usize];
        let s = &p["streams"][u(&l["stream"]) as usize];
        // The report holds the summary, the line the stream whole.
        assert_eq!(p["settings"]["stream_detail"], "summary");
        // A class that did nothing is left out of both (schema 6).
        for c in ["read", "write"] {
            assert_eq!(l[c].is_null(), s[c].is_null(), "{l}");
            if s[c].is_null() {
                continue;
            }
            assert_eq!(u(&l[c]["ops"]), u(&s[c]["ops"]), "{l}");
            assert_eq!(l[c]["latency"]["max_ns"], s[c]["latency"]["max_ns"]);
            let counted = histogram_count(&l[c]);
            assert_eq!(counted, u(&s[c]["ops"]), "{l}");
        }
    }
}

#[test]
fn what_cannot_run_across_ranks_is_refused_once() {
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    let plain = path_str(&f);
    let per_rank = format!("{}.{{rank}}", path_str(&f));
    for (args, needle) in [
        (
            vec!["run", plain, "--size", "1m"],
            "ranks would all run this same target",
        ),
        (vec!["run", "node7:/dev/null"], "no rank runs on host node7"),
        (vec!["diskperf", plain], "diskperf runs on one host only"),
        (vec!["quick", plain], "quick runs on one host only"),
        // A plan every rank refuses alike (its line): said once, by rank 0.
        (
            vec![
                "survey", &per_rank, "--size", "8m", "--crghi", "256", "--thrhi", "256", "--rszlo",
                "65536", "--rszhi", "65536",
            ],
            "leaves less than one 65536-byte record per region",
        ),
    ] {
        let out = launch(2, Some(1), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(said_exit(&err, 2), "{args:?}: {err}");
        assert_eq!(err.matches(needle).count(), 1, "{args:?}: {err}");
    }
    assert!(!f.exists());
}

#[test]
fn placeholders_give_each_rank_a_file_of_its_own() {
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    let pattern = format!("{}/f.{{host}}.{{local_rank}}", path_str(dir.path()));
    let live_dir = tempfile::tempdir().unwrap();
    let live = live_dir.path().join("live.jsonl");
    let db = live_dir.path().join("h.db");
    let out = launch(
        4,
        Some(2),
        &[
            "run",
            &pattern,
            "--size",
            "4m",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--bytes",
            "4m",
            "--output",
            "json",
            "--quiet",
            "--live",
            path_str(&live),
            "--db",
            path_str(&db),
        ],
    );
    let report = report_of(&out);
    let names: Vec<String> = report["points"][0]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap().to_string())
        .collect();
    let d = path_str(dir.path());
    assert_eq!(
        names,
        [
            format!("node0:{d}/f.node0.0"),
            format!("node0:{d}/f.node0.1"),
            format!("node1:{d}/f.node1.0"),
            format!("node1:{d}/f.node1.1"),
        ]
    );
    assert_eq!(u(&report["points"][0]["total"]["write"]["bytes"]), 16 * MIB);
    // Rank 0's live lines add up to every rank's I/O.
    let lines = std::fs::read_to_string(&live).unwrap();
    let live_bytes: u64 = lines
        .lines()
        .map(|l| u(&serde_json::from_str::<serde_json::Value>(l).unwrap()["bytes"]))
        .sum();
    assert_eq!(live_bytes, 16 * MIB, "{lines}");
    // Writes only, named as the report names the targets; the point ends
    // with a partial line for each of the four, every rank's.
    let parsed: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(parsed.iter().all(|l| l["dir"] == "write"), "{lines}");
    assert!(
        parsed
            .iter()
            .all(|l| names.iter().any(|n| l["target"] == n.as_str())),
        "{lines}"
    );
    let partial: Vec<&str> = parsed
        .iter()
        .filter(|l| l["partial"] == true)
        .map(|l| l["target"].as_str().unwrap())
        .collect();
    assert_eq!(partial, names, "{lines}");
    // Test files are removed, as on one host.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Rank 0 recorded the run once, with every rank's host and target.
    let export = Command::new(BIN)
        .args(["db", "export", "--db", path_str(&db)])
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let text = String::from_utf8_lossy(&export.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty(), "nothing recorded");
    let run = &lines[0]["run"];
    assert!(
        lines.iter().all(|l| l["run"]["run_key"] == run["run_key"]),
        "one run"
    );
    let hosts: Vec<&str> = run["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["hostname"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["node0", "node1"]);
    let target_hosts: Vec<u64> = run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["host"]))
        .collect();
    assert_eq!(target_hosts, [0, 0, 1, 1]);
    let written: f64 = lines
        .iter()
        .filter(|l| l["figure"]["window"] == "total" && l["figure"]["direction"] == "write")
        .map(|l| l["figure"]["bytes"].as_f64().unwrap())
        .sum();
    assert_eq!(written, (16 * MIB) as f64);
}

/// `--repeat` under MPI runs the whole plan again on every rank, as on one
/// host: each repeat's point holds every rank's I/O, and each rank has a
/// figure per repeat. (It was refused under MPI before the session loop
/// was one.)
#[test]
fn repeat_runs_the_plan_again_over_every_rank() {
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    let pattern = format!("{}/f.{{host}}.{{local_rank}}", path_str(dir.path()));
    let out = launch(
        2,
        Some(1),
        &[
            "run", &pattern, "--size", "4m", "--rw", "write", "--bs", "64k", "--bytes", "2m",
            "--repeat", "3", "--output", "json", "--quiet",
        ],
    );
    let report = report_of(&out);
    assert_eq!(u(&report["repeats"]), 3);
    let points = report["points"].as_array().unwrap();
    // `repeat` is left out when 0.
    let repeats: Vec<u64> = points
        .iter()
        .map(|p| p["repeat"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(repeats, [0, 1, 2]);
    for p in points {
        // Both ranks' bytes in every repeat.
        assert_eq!(u(&p["total"]["write"]["bytes"]), 4 * MIB, "{p}");
    }
    assert_eq!(report["ranks"].as_array().unwrap().len(), 2);
    for p in points {
        // Each rank's own figures in each repeat's point.
        let own: Vec<u64> = p["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r["write_bytes"]))
            .collect();
        assert_eq!(own, [2 * MIB; 2], "{p}");
        assert!(p["windows"]["common"].is_object(), "{p}");
    }
    assert_valid(&report);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn matrix_shares_each_point_s_load_out_over_the_ranks() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(2));
    let dir = tempfile::tempdir().unwrap();
    let targets = host_targets(&devs, 1);
    let mut args = with_targets("matrix", &targets);
    args.extend([
        "-run",
        "oltp",
        "-duration",
        "1",
        "--out",
        path_str(dir.path()),
    ]);
    args.extend(["--output", "json", "--quiet"]);
    let out = launch(2, Some(1), &args);
    let report = report_of(&out);
    let points = report["points"].as_array().unwrap();
    // ORION's OLTP run: small loads 1 to 5 per disk, over both hosts' LUNs.
    assert_eq!(points.len(), 10, "{}", describe(&out));
    for p in points {
        let w = &p["windows"];
        let load = u(&p["params"]["small"]);
        let per_rank: Vec<u64> = p["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r["read_ops"]))
            .collect();
        // Every rank ran its share (both when the load splits in two).
        if load >= 2 {
            assert!(per_rank.iter().all(|&n| n > 0), "{load}: {per_rank:?}");
        }
        assert_eq!(
            u(&p["total"]["read"]["ops"]),
            per_rank.iter().sum::<u64>(),
            "{load}"
        );
        assert!(f(&w["common"]["iops"]) > 0.0);
    }
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files.iter().any(|f| f.ends_with("_summary.txt")),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f.ends_with("_iops.csv")), "{files:?}");
}

#[test]
fn video_plays_the_frames_on_every_rank_s_own_target() {
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    for h in ["node0", "node1"] {
        std::fs::create_dir(dir.path().join(h)).unwrap();
    }
    let pattern = format!("{}/{{host}}", path_str(dir.path()));
    let out = launch(
        2,
        Some(1),
        &[
            "video",
            &pattern,
            "--write",
            "--frame-size",
            "256k",
            "--frames",
            "8",
            "--mode",
            "files",
            "--verify",
            "--output",
            "json",
            "--quiet",
        ],
    );
    let report = report_of(&out);
    let p = &report["points"][0];
    assert_eq!(p["targets"].as_array().unwrap().len(), 2);
    let f = &p["frames"]["summary"];
    assert_eq!(u(&f["done"]) + u(&f["late"]), 16, "{f}");
    // Each rank's frames read back and checked: 8 frames of 64 blocks each.
    assert_eq!(
        u(&p["verify"]["blocks_checked"]),
        2 * 8 * 64,
        "{}",
        p["verify"]
    );
    assert_eq!(u(&p["verify"]["counts"]["corruption"]), 0);
    // The frames are removed on each host, as on one.
    for h in ["node0", "node1"] {
        assert_eq!(
            std::fs::read_dir(dir.path().join(h)).unwrap().count(),
            0,
            "{h}"
        );
    }
    // One host:path target for two ranks of that host: one plays the
    // frames, the other only takes part.
    let one = format!("node0:{}/node0", path_str(dir.path()));
    let out = launch_within(
        2,
        Some(2),
        &[
            "video",
            &one,
            "--write",
            "--frame-size",
            "64k",
            "--frames",
            "4",
            "--mode",
            "files",
            "--output",
            "json",
            "--quiet",
        ],
    );
    let report = report_of(&out);
    let f = &report["points"][0]["frames"]["summary"];
    assert_eq!(u(&f["done"]) + u(&f["late"]), 4, "{f}");
}

/// The launcher's output, or a failure if the job is still running after 40 s
/// (a rank left waiting for another in a collective).
fn launch_within(n: usize, per_host: Option<usize>, args: &[&str]) -> Output {
    let mut child = launch_cmd(n, per_host, args).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(40) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{args:?}: still running after 40 s: {}", describe(&out));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_rank_failing_alone_ends_every_rank_and_says_why() {
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    let d = path_str(dir.path());
    // Rank 1's frames directory is locked by another run.
    for r in 0..2 {
        std::fs::create_dir(dir.path().join(format!("v.{r}"))).unwrap();
    }
    let holder = Command::new("flock")
        .args(["-x", &format!("{d}/v.1"), "sleep", "30"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pattern = format!("{d}/v.{{rank}}");
    let out = launch_within(
        2,
        Some(1),
        &[
            "video",
            &pattern,
            "--mode",
            "files",
            "--write",
            "--frames",
            "4",
            "--frame-size",
            "64k",
        ],
    );
    let mut holder = holder;
    let _ = holder.kill();
    let _ = holder.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(said_exit(&err, 2), "{err}");
    assert!(err.contains("rank 1 on node1"), "{err}");
    assert!(err.contains("another iosurvey video run"), "{err}");
    // Rank 0 alone cannot save its report at the end.
    let pattern = format!("{d}/f.{{rank}}");
    let out = launch_within(
        2,
        Some(1),
        &[
            "run",
            &pattern,
            "--size",
            "1m",
            "--bytes",
            "1m",
            "--json",
            "/dev/full",
            "--quiet",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    assert_ne!(out.status.code(), Some(0), "{err}");
}

#[test]
fn one_device_given_to_two_ranks_of_a_host_by_two_names_is_refused() {
    let _lock = serial();
    need!(require_mpi());
    let devs = need!(loops(1));
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(devs[0].path(), &alias).unwrap();
    let before = checksum(devs[0].path(), None);
    let (a, b) = (
        format!("node0:{}", path_str(devs[0].path())),
        format!("node0:{}", path_str(&alias)),
    );
    // Two ranks on node0: one takes the device, the other its alias.
    let out = launch_within(
        2,
        Some(2),
        &[
            "run",
            &a,
            &b,
            "--rw",
            "write",
            "--bs",
            "1m",
            "--time",
            "1s",
            "--allow-destroy",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(said_exit(&err, 2), "{err}");
    assert!(err.contains("the same target as"), "{err}");
    assert_eq!(
        checksum(devs[0].path(), None),
        before,
        "the device was written"
    );
}

/// Issue 28: two ranks of one host on two loop devices over one image read
/// one storage, not two: refused, naming both, before any I/O.
#[test]
fn ranks_on_two_loop_devices_over_one_image_are_refused() {
    let _lock = serial();
    need!(require_mpi());
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("one.img");
    std::fs::write(&img, random_bytes(32 * MIB as usize, 5)).unwrap();
    let a = need!(LoopDev::attach(&img, &["--direct-io=on"]));
    let b = need!(LoopDev::attach(&img, &["-o", "16M", "--direct-io=on"]));
    let targets = [
        format!("node0:{}", path_str(a.path())),
        format!("node0:{}", path_str(b.path())),
    ];
    let mut args = with_targets("run", &targets);
    args.extend(["--rw", "read", "--bs", "1m", "--time", "1s"]);
    let out = launch_within(2, Some(2), &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(said_exit(&err, 2), "{err}");
    assert!(err.contains("overlaps"), "{err}");
    assert!(
        err.contains(path_str(a.path())) && err.contains(path_str(b.path())),
        "{err}"
    );
}

/// srun with PMI-2 (or none) starts ranks Open MPI cannot join (it finds
/// them through PMIx only): every copy refuses before MPI starts, exit 2,
/// the first saying which flag to give, instead of a page of Open MPI's
/// text from each. Played by the environment srun gives each task; under
/// srun, by srun itself too.
#[test]
fn srun_without_pmix_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = format!("{}/f.{{rank}}", path_str(dir.path()));
    let args = ["run", &pattern, "--size", "1m", "--bytes", "1m"];
    for rank in ["0", "1"] {
        let out = Command::new(BIN)
            .args(args)
            .env_remove("PMIX_RANK")
            .env_remove("OMPI_COMM_WORLD_SIZE")
            .env_remove("OMPI_COMM_WORLD_RANK")
            .env("SLURM_STEP_ID", "0")
            .env("SLURM_STEP_NUM_TASKS", "2")
            .env("SLURM_PROCID", rank)
            .env("SLURM_MPI_TYPE", "pmi2")
            .env("PMI_SIZE", "2")
            .env("PMI_RANK", rank)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "rank {rank}: {err}");
        if rank == "0" {
            assert!(
                err.contains("srun started 2 ranks with --mpi=pmi2"),
                "{err}"
            );
            assert!(err.contains("run srun --mpi=pmix"), "{err}");
        } else {
            assert_eq!(err, "", "rank {rank}");
        }
    }
    if launcher() == Launcher::Srun {
        need!(require_mpi());
        for how in ["pmi2", "none"] {
            let out = Command::new("srun")
                .args(["--overcommit", &format!("--mpi={how}"), "-n", "2", BIN])
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(said_exit(&err, 2), "{how}: {err}");
            assert_eq!(
                err.matches(&format!("with --mpi={how}, and")).count(),
                1,
                "{err}"
            );
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
