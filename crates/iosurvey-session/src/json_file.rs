//! The JSON report saved to a file as the run goes: written whole once,
//! then each new point appended over the report's tail (`,{point}]}`), so
//! that saving after a point costs that point, not the whole run. The file
//! appended to is only ever the one this run put there, while its name
//! still holds it (`write_into_placed`); anything else there, or a head
//! that changed, is a whole write through the guard's `replace_at`.
//!
//! An append that fails (a full filesystem) writes the old tail back, so
//! the report keeps every point before it. During the write itself the
//! file is not a whole document: a reader at that instant, or a process
//! killed in it, sees it cut (the price of not rewriting it).

use crate::grown_file::{write_placed, write_whole, Placed};
use iosurvey_model::document::RunReport;
use iosurvey_report::{json_head, json_point, to_json, JSON_TAIL};
use iosurvey_target::output::path::OutPath;
use std::os::unix::fs::FileExt;

/// A JSON report saved to a file, to append points to: its head (all but
/// the points), how many points it holds, and where its tail starts.
pub(crate) struct Appending {
    /// The file this run put there (`None` for a mounted file: the one
    /// held since it was judged).
    file: Placed,
    head: String,
    points: usize,
    tail_at: u64,
}

/// Saves `report` to the file `out` (a file or a mounted file; nothing
/// for any other sink), `saved` being what the last save left there: the
/// new point alone when the file holds every point before it under the
/// same head, nothing when it holds them all, else (or when the file the
/// run wrote is no longer at the name, or not as long as it left it) the
/// whole report.
pub(crate) fn write(
    out: &OutPath,
    report: &RunReport,
    saved: &mut Option<Appending>,
) -> std::io::Result<()> {
    let head = json_head(report);
    let n = report.points.len();
    if let Some(a) = saved.as_mut().filter(|a| a.head == head) {
        // Every point there already: nothing written, unless the run's
        // file is no longer at the name (then the whole report again).
        let len = a.tail_at + JSON_TAIL.len() as u64;
        if a.points == n && write_placed(out, &a.file, len, a.tail_at, &[], |_| ())? {
            return Ok(());
        }
        if a.points + 1 == n && append(out, a, report)? {
            return Ok(());
        }
    }
    *saved = None;
    // `json_head`, the points, `JSON_TAIL`: the same bytes.
    let body = to_json(report);
    if let Some(file) = write_whole(out, body.as_bytes())? {
        *saved = Some(Appending {
            file,
            head,
            points: n,
            tail_at: (body.len() - JSON_TAIL.len()) as u64,
        });
    }
    Ok(())
}

/// Writes the report's last point over the tail of the file `a` knows;
/// `false` when that file is no longer at its name (nothing written).
fn append(out: &OutPath, a: &mut Appending, report: &RunReport) -> std::io::Result<bool> {
    let n = report.points.len();
    let mut add = String::from(if a.points > 0 { "," } else { "" });
    add.push_str(&json_point(&report.points[n - 1]));
    add.push_str(JSON_TAIL);
    let tail_at = a.tail_at;
    let len = tail_at + JSON_TAIL.len() as u64;
    let wrote = write_placed(out, &a.file, len, tail_at, add.as_bytes(), |f| {
        restore_tail(f, tail_at)
    })?;
    if wrote {
        a.tail_at += (add.len() - JSON_TAIL.len()) as u64;
        a.points = n;
    }
    Ok(wrote)
}

/// After an append that failed part way (a full filesystem, a quota):
/// the report as it was, its tail written back over what the failed
/// write left and the file cut after it, through the run's own file. A
/// failure here too leaves it cut.
fn restore_tail(file: &std::fs::File, tail_at: u64) {
    let _ = file
        .write_all_at(JSON_TAIL.as_bytes(), tail_at)
        .and_then(|()| file.set_len(tail_at + JSON_TAIL.len() as u64));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grown_file::test_files::{fill, ino};
    use iosurvey_model::document::{PointReport, TargetReport};
    use iosurvey_run::JobResult;
    use iosurvey_target::output::path::judge;
    use iosurvey_workload::{
        Bounds, Job, Mix, Pattern, Plan, Point, PointParams, StreamClass, TargetSpec,
    };

    fn plan(points: usize) -> Plan {
        let job = Job::new(
            vec![TargetSpec {
                path: "/dev/null".into(),
                create_size: None,
            }],
            vec![StreamClass::new(
                "main",
                0,
                Mix::Read,
                Pattern::Random,
                4096,
                4,
            )],
            Bounds {
                time: None,
                bytes: None,
                ramp: std::time::Duration::ZERO,
            },
        );
        Plan {
            mode: "run".into(),
            points: (0..points)
                .map(|i| Point {
                    index: i,
                    label: format!("point {i}"),
                    params: PointParams::default(),
                    job: job.clone(),
                    skip: None,
                })
                .collect(),
        }
    }

    /// The report of a run of three points after its first `n`.
    fn report(n: usize) -> RunReport {
        let plan = plan(3);
        let mut r = crate::execute::new_report(&plan, &["iosurvey".into()], &Default::default());
        r.started_at = "2026-12-03T00:00:00Z".into();
        let target = TargetReport {
            path: "/dev/null".into(),
            kind: iosurvey_model::TargetKind::File,
            size_bytes: 1 << 20,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: None,
            direct: true,
            created: false,
            memory_backed: None,
            link_bytes_per_sec: None,
            link: None,
            device: None,
        };
        for p in &plan.points[..n] {
            let res = JobResult {
                streams: vec![Default::default()],
                elapsed_ns: 1_000_000 * (p.index as u64 + 1),
                ..Default::default()
            };
            r.points.push(PointReport::new(
                p,
                std::slice::from_ref(&target),
                &res,
                1 << 30,
            ));
        }
        r
    }

    #[test]
    fn each_point_is_appended_to_the_file_the_run_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let out = judge("--json", &path).unwrap();
        let mut saved = None;
        write(&out, &report(1), &mut saved).unwrap();
        let first = ino(&path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), to_json(&report(1)));
        for n in [2, 3, 3] {
            write(&out, &report(n), &mut saved).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), to_json(&report(n)));
            // The same file, appended to: not a new one renamed there.
            assert_eq!(ino(&path), first, "after {n} points");
        }
        // A head that changed (not a run's): the whole report again.
        let mut other = report(3);
        other.command_line.push("again".into());
        write(&out, &other, &mut saved).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), to_json(&other));
        assert_ne!(ino(&path), first);
        // No temporary file is left (the directory's reserved trash is
        // released at the end of a run).
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(".iosurvey-trash-"))
            .collect();
        assert_eq!(names, ["r.json"]);
    }

    #[test]
    fn a_file_put_at_the_name_during_the_run_is_never_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let out = judge("--json", &path).unwrap();
        let mut saved = None;
        write(&out, &report(1), &mut saved).unwrap();
        // The report moved away and someone's file put in its place.
        let moved = dir.path().join("moved.json");
        std::fs::rename(&path, &moved).unwrap();
        std::fs::write(&path, b"precious").unwrap();
        let e = write(&out, &report(2), &mut saved).unwrap_err();
        assert!(e.to_string().contains("not replaced"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        // The report moved away was not written to either.
        assert_eq!(
            std::fs::read_to_string(&moved).unwrap(),
            to_json(&report(1))
        );
        // Removed instead: the name was the run's; the whole report again.
        std::fs::remove_file(&path).unwrap();
        let mut saved = None;
        write(&out, &report(1), &mut saved).unwrap();
        std::fs::remove_file(&path).unwrap();
        write(&out, &report(2), &mut saved).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), to_json(&report(2)));
    }

    #[test]
    fn an_append_that_fills_the_filesystem_leaves_the_report_as_it_was() {
        use iosurvey_testkit::{require, Mount};
        // A small tmpfs, its own: the report, then a file that fills it.
        let m = require!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64k"]));
        let path = m.path().join("r.json");
        let out = judge("--json", &path).unwrap();
        let mut saved = None;
        write(&out, &report(1), &mut saved).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        let first = ino(&path);
        let filler = fill(m.path());
        // The next point does not fit: it fails, part written.
        let e = write(&out, &report(2), &mut saved).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc_enospc()), "{e}");
        // Every point before it is still there, whole, in the same file
        // (the failed write was the append).
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        assert_eq!(ino(&path), first);
        std::fs::remove_file(&filler).unwrap();
        drop(out);
    }

    fn libc_enospc() -> i32 {
        rustix::io::Errno::NOSPC.raw_os_error()
    }
}
