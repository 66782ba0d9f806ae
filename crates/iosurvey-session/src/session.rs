//! The session loop: one [`run_plan`] runs every mode's plan, on one
//! process or over the ranks of an MPI job (the [`Cluster`] it is given),
//! with the banner and `--repeat` as options of the [`Session`].

use crate::assign::Assigned;
use crate::execute::{
    judge_outputs, new_report, stop_flag, target_report, watch_stdout, wrap_up, Stdout,
};
use crate::failure::{agree, agreed, Failure, Outcome};
use crate::merge::Maps;
use crate::output::{self, Outputs};
use crate::presenter::{Presentation, Presenter};
use crate::ranks::{gather_point, gather_targets, host_targets, LiveRanks, PointMerged, ToFile};
use crate::stream_file::StreamFile;
use crate::{progress, targets};
use crate::{Cluster, Localized, SILENT};
use crate::{OutputFormat, OutputOptions, TargetOptions};
use anyhow::anyhow;
use iosurvey_model::document::{
    PointReport, PointWindows, RankPoint, RankReport, RunReport, StreamDetail, TargetReport,
};
use iosurvey_report::TextOptions;
use iosurvey_run::{now_ns, run_point, JobResult, Observer};
use iosurvey_target::target::OpenTarget;
use iosurvey_workload::modes::describe::describe;
use iosurvey_workload::{Plan, Point};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a run is given besides its plan and its presenter.
pub struct Session<'a> {
    /// The command line as typed, for the report.
    pub argv: &'a [String],
    pub tflags: &'a TargetOptions,
    /// The output flags, `--repeat` among them: each repeat runs the whole
    /// plan, in its order.
    pub oflags: &'a OutputOptions,
    pub cluster: &'a dyn Cluster,
    /// A line for stderr once the targets have passed the guard and the
    /// checks, before any is opened or laid out (so a refusal is the only
    /// line printed); said by rank 0, not with --quiet.
    pub banner: Option<String>,
}

/// Runs `plan` on `cluster` and presents it (text or JSON on stdout,
/// `--json`, `--csv`); with `--dry-run`, prints the plan and its estimated
/// duration instead. One loop for one process and for the ranks of an MPI
/// job, where:
/// 1. every rank checks its targets (probe, write guard) and rank 0 its
///    outputs; the outcome is all-reduced, so one refusal stops every rank
///    before any I/O, and rank 0 prints each refusal with its host;
/// 2. every rank opens and lays out its targets, then a barrier;
/// 3. every point starts at a barrier (after an all-reduce of Ctrl-C, so
///    that every rank stops at the same point); each rank times its point
///    from its own barrier exit; rank 0 gathers every rank's lossless
///    result, merges it, and writes the report after every point;
/// 4. the exit code is the worst over the ranks.
///
/// Alone, every collective is the identity.
pub fn run_plan(
    plan: &Plan,
    presenter: &dyn Presenter,
    session: &Session<'_>,
) -> Result<Outcome, Failure> {
    let Session {
        argv,
        tflags,
        oflags,
        cluster,
        ref banner,
    } = *session;
    // Before anything is opened, --dry-run and every MPI rank included: a
    // plan over the memory this process may use is refused, not OOM-killed.
    // Each rank judges its own host's memory; one refusal stops them all.
    agree(
        cluster,
        iosurvey_target::budget::check(plan, oflags.repeat, tflags.memory_limit)
            .or_else(crate::failure::usage),
    )?;
    // The same plan and flags on every rank: the same answer.
    let detail = oflags.stream_detail(plan, cluster.distributed());
    agree(
        cluster,
        detail
            .as_ref()
            .map(|_| ())
            .or_else(|e| crate::failure::usage(anyhow!("{e}"))),
    )?;
    let detail = detail.unwrap_or_default();
    let root = cluster.is_root();
    let assigned = cluster.assigned();
    // This rank's part of the plan (alone, the plan itself). A refusal
    // here is every rank's alike (the same plan): rank 0 says it.
    let local = cluster
        .localize(plan)
        .map_err(|e| agreed(cluster, Failure::Usage(anyhow!(cluster.said_by_root(e)))))?;
    let has_work = !local.targets.is_empty() || !cluster.distributed();
    let mut report = RunReport {
        ranks: rank_reports(cluster, &assigned),
        ..new_report(plan, argv, tflags)
    };
    presenter.annotate(&mut report);
    report.repeats = oflags.repeat;
    report.label = oflags.label.clone();
    // Each repeat's text and mode files apart (see [`Presentation`]).
    let presenter = &Presentation {
        presenter,
        repeats: oflags.repeat,
    };

    // 1. Checks.
    let outs = check_before_io(
        cluster, &local, has_work, tflags, oflags, &report, presenter,
    )?;
    // A signal since `main` began (its handler is the first thing `main`
    // installs) was only recorded: the run ends here, before anything is
    // opened, and `main` removes the trash the checks made.
    let stop = stop_flag();
    if cluster.any(stop.load(Ordering::Relaxed)) {
        return Err(agreed(
            cluster,
            Failure::Interrupted(anyhow!(STOPPED_BEFORE)),
        ));
    }
    if oflags.dry_run {
        if root {
            output::print_text(&describe(plan));
        }
        return Ok(Outcome::Ok);
    }

    // 2. Open and lay out, every rank; then a barrier.
    let closed = Arc::new(AtomicBool::new(false));
    let mut outs = outs;
    if let Some(o) = &mut outs {
        o.stop = Some(Arc::clone(&stop));
        watch_stdout(&stop, &closed);
    }
    let quiet = oflags.quiet || !root;
    let banner = banner.as_deref().filter(|_| !quiet);
    let opened = match has_work {
        true => targets::open_all(&local.plan, tflags, quiet, banner, &stop).map(Some),
        false => Ok(None),
    };
    let (opened, step) = split(opened);
    let opened = opened.flatten();
    // Rank 0's display opens `--live`: a failure there is agreed too.
    let display = step.and_then(|()| {
        progress::Display::new(
            quiet,
            oflags.mib,
            outs.as_ref().and_then(|o| o.live.as_ref()),
            Arc::clone(&stop),
            Arc::clone(&closed),
        )
        .map_err(|e| output::open_failure(e, Failure::Usage))
    });
    let (display, step) = split(display);
    // And rank 0's `--stream-file`.
    let wanted = outs.as_ref().and_then(|o| o.streams.as_ref());
    let file = step.and_then(|()| {
        wanted
            .map(|o| StreamFile::open(o, &stop))
            .transpose()
            .map_err(|e| output::open_failure(e, Failure::Usage))
    });
    let (file, step) = split(file);
    agree(cluster, step)?;
    let mut display = display.expect("agreed: every rank has its display");
    if cluster.is_root() {
        display.set_plan(plan, oflags.repeat);
    }
    let mut stream_file = file.flatten();
    let whole_on_wire = oflags.stream_file.is_some();
    let all_targets = opened_targets(cluster, &assigned, &local, opened.as_deref());
    display.metrics = outs
        .as_ref()
        .filter(|o| o.metrics.is_some() || o.gateway.is_some())
        .map(|o| {
            let sources = (&report, plan, all_targets.as_slice());
            crate::metrics::Metrics::new(o.metrics.clone(), o.gateway.clone(), sources)
        });
    let mut stdout = outs.as_ref().map(|o| Stdout {
        streams: !o.takes_stdout() && oflags.output() == OutputFormat::Text,
        shown: String::new(),
        opts: TextOptions { mib: oflags.mib },
    });
    cluster.barrier();
    // 3. The points; each repeat runs the whole plan, in its order.
    let mut outcome = Outcome::Ok;
    let mut failed: Option<Failure> = None;
    let runs = (0..oflags.repeat).flat_map(|k| (0..plan.points.len()).map(move |i| (k, i)));
    for (repeat, pi) in runs {
        if cluster.any(stop.load(Ordering::Relaxed)) {
            stop.store(true, Ordering::Relaxed);
            outcome = Outcome::Interrupted;
            break;
        }
        let point = &plan.points[pi];
        let lp = &local.plan.points[pi];
        display.at_run(repeat as usize * plan.points.len() + pi);
        if let Some(f) = &mut stream_file {
            f.at(pi, repeat);
        }
        let ran = run_here(
            cluster,
            (point, lp),
            opened.as_deref(),
            &stop,
            &mut display,
            local.maps.get(pi).cloned().unwrap_or_default(),
            (
                detail,
                ToFile {
                    whole: whole_on_wire,
                    file: stream_file.as_mut(),
                },
            ),
        );
        let Ran {
            merged,
            mine_failed,
            mut interrupted,
        } = match ran {
            Ok(ran) => ran,
            Err(e) => {
                failed = Some(Failure::Run(e.into()));
                break;
            }
        };
        let mut errors = Vec::new();
        if let Some(m) = merged {
            interrupted |= m.result.interrupted;
            errors = m.errors;
            if errors.is_empty() {
                let saved = add_point(
                    &mut report,
                    (repeat, point),
                    &all_targets,
                    &m.result,
                    (m.windows, m.per_rank),
                    cluster,
                );
                if saved.io_failed {
                    outcome = Outcome::IoFailed;
                }
                let outs = outs.as_ref().expect("rank 0 judged its outputs");
                let saved = outs
                    .save(&report, presenter, false)
                    .and_then(|()| presenter.after_point(&report));
                match saved {
                    Err(e) => failed = Some(e),
                    Ok(()) => {
                        if let Some(s) = &mut stdout {
                            s.advance(&report, presenter, &closed);
                        }
                    }
                }
                if let Some(why) = m
                    .result
                    .verify
                    .as_ref()
                    .and_then(|v| v.nothing_checked.as_ref())
                {
                    eprintln!("iosurvey: --verify could check no block: {why}");
                }
            }
        }
        if let Some(e) = stream_file.as_mut().and_then(|f| f.failed.take()) {
            // A failure already kept (a report's save) is said first.
            match failed {
                None => failed = Some(Failure::Run(anyhow!(e))),
                Some(_) => eprintln!("iosurvey: {e}"),
            }
        }
        // Every rank learns whether the job goes on.
        let stop_all = cluster.any(
            !errors.is_empty() || failed.is_some() || interrupted || stop.load(Ordering::Relaxed),
        );
        if !errors.is_empty() {
            failed = Some(Failure::Run(anyhow!(errors.join("\n"))));
        }
        if stop_all {
            // Collective on every rank alike: whether a rank failed.
            let any_failed = cluster.any(failed.is_some() || mine_failed);
            if any_failed && failed.is_none() {
                // Rank 0 says which rank failed and why.
                failed = Some(Failure::Run(anyhow!(SILENT)));
            }
            if !any_failed {
                outcome = Outcome::Interrupted;
            }
            break;
        }
    }
    // Progress messages still on their way are taken in before MPI ends.
    cluster.barrier();
    let _ = cluster.recv_live();

    // 4. The end: rank 0's last save can fail alone, an outcome like the
    // others, agreed below, never a return that leaves the ranks waiting.
    let mut last_save = Ok(());
    if let (Some(outs), Some(stdout)) = (&outs, &stdout) {
        last_save = wrap_up(&report, oflags, outs, presenter, stdout);
    }
    if closed.load(Ordering::Relaxed) && last_save.is_ok() && failed.is_none() {
        if !oflags.quiet {
            eprintln!(
                "iosurvey: stdout was closed by its reader; stopped as on Ctrl-C after {} of {} points",
                report.points.len(),
                plan.points.len() * oflags.repeat as usize
            );
        }
        outcome = Outcome::Interrupted;
    }
    // Its reader gone, stderr takes no line to say so.
    if crate::say::stderr_closed() {
        outcome = Outcome::Interrupted;
    }
    let metrics_failed = display.metrics.as_mut().and_then(|m| m.finish());
    if (display.live_failed || metrics_failed.is_some()) && outcome == Outcome::Ok {
        outcome = Outcome::IoFailed;
    }
    worst_over_ranks(cluster, outcome, failed, last_save)
}

/// What a run stopped before it began says: one line, exit 130.
const STOPPED_BEFORE: &str = "stopped by a signal before the run began; nothing was measured";

/// A point as this rank ran it, and the whole job's result on rank 0.
struct Ran {
    /// Merged over the ranks on rank 0 (alone: this process's own);
    /// `None` on the others.
    merged: Option<PointMerged>,
    /// This rank's own point failed (under MPI, its failure travels to
    /// rank 0, which says it).
    mine_failed: bool,
    /// This rank's run was stopped.
    interrupted: bool,
}

/// Runs this rank's part `lp` of `point` from a barrier, and gathers
/// every rank's on rank 0, merged (this rank's numbered by `maps`). A skipped point
/// is reported with nothing measured, and so is a rank's point with no
/// stream of its own. Alone, a failed point is the error. Each stream is
/// kept as `detail` says, and written whole to `--stream-file` if asked.
fn run_here(
    cluster: &dyn Cluster,
    (point, lp): (&Point, &Point),
    opened: Option<&[OpenTarget]>,
    stop: &AtomicBool,
    display: &mut progress::Display,
    maps: Maps,
    (detail, to_file): (StreamDetail, ToFile<'_>),
) -> Result<Ran, iosurvey_run::RunError> {
    cluster.barrier();
    let t0 = now_ns();
    let runs_here = point.skip.is_none() && (!cluster.distributed() || !lp.job.streams.is_empty());
    let result = match (opened, runs_here) {
        (Some(o), true) if cluster.distributed() => run_point(
            lp,
            o,
            stop,
            &mut LiveRanks::new(display, cluster, (point, &maps.streams)),
        ),
        (Some(o), true) => run_point(lp, o, stop, display),
        _ => Ok(JobResult {
            streams: vec![Default::default(); lp.job.streams.len()],
            ..Default::default()
        }),
    };
    let interrupted = result.as_ref().is_ok_and(|r| r.interrupted);
    if !cluster.distributed() {
        let mut result = result?;
        if let Some(f) = to_file.file {
            f.write(point, 0, result.streams.iter().enumerate());
        }
        if !detail.is_full() {
            result.summarise();
        }
        return Ok(Ran {
            merged: Some(PointMerged::alone(result)),
            mine_failed: false,
            interrupted,
        });
    }
    let start_ns = match &result {
        Ok(r) if r.measure_start_ns > 0 => r.measure_start_ns.saturating_sub(t0),
        _ => 0,
    };
    let mine_failed = result.is_err();
    let result = result.map_err(|e| format!("{e:#}"));
    let merged = gather_point(cluster, point, result, (start_ns, &maps), (detail, to_file));
    if let Some(m) = &merged {
        // The live lines and the bar end with the whole job's figures.
        display.point_finished(point, &m.result);
    }
    Ok(Ran {
        merged,
        mine_failed,
        interrupted,
    })
}

/// The worst outcome over the ranks; a failure is every rank's (agreed).
/// A failed save outranks the failure it was saving after.
fn worst_over_ranks(
    cluster: &dyn Cluster,
    outcome: Outcome,
    failed: Option<Failure>,
    last_save: Result<(), Failure>,
) -> Result<Outcome, Failure> {
    let code = |o: Outcome| match o {
        Outcome::Ok => 0,
        Outcome::IoFailed => 1,
        Outcome::Interrupted => 2,
    };
    let worst = cluster.max_u64(code(outcome) + 4 * u64::from(last_save.is_err()));
    last_save.map_err(|e| agreed(cluster, e))?;
    if let Some(f) = failed {
        return Err(agreed(cluster, f));
    }
    if worst >= 4 {
        // Rank 0 could not save the report: it says why.
        return Err(agreed(cluster, Failure::Run(anyhow!(SILENT))));
    }
    Ok(match worst {
        0 => Outcome::Ok,
        1 => Outcome::IoFailed,
        _ => Outcome::Interrupted,
    })
}

/// Step 1 of [`run_plan`]: the checks before anything is opened. Alone:
/// the engine flags, then (with --dry-run) the targets, then the outputs;
/// a run judges its targets as it opens them. Over ranks: the flags and
/// targets of every rank, those of each host together (two ranks given
/// aliases of one device), then rank 0's outputs, agreed. Rank 0's
/// judged outputs.
fn check_before_io(
    cluster: &dyn Cluster,
    local: &Localized,
    has_work: bool,
    tflags: &TargetOptions,
    oflags: &OutputOptions,
    report: &RunReport,
    presenter: &Presentation<'_>,
) -> Result<Option<Outputs>, Failure> {
    if !cluster.distributed() {
        crate::tuning::check(&local.plan, tflags)?;
        if oflags.dry_run {
            targets::check_all(&local.plan, tflags)?;
        }
        return judge_outputs(&local.plan, report, oflags, presenter).map(Some);
    }
    if oflags.metrics_file.is_some() || oflags.metrics_push.is_some() {
        // Every rank has the same flags: every rank stops here.
        return Err(Failure::Usage(anyhow!(
            "--metrics-file and --metrics-push are not available under MPI yet: \
             run without them, or on one host"
        )));
    }
    let ids = match has_work {
        true => crate::tuning::check(&local.plan, tflags)
            .and_then(|()| targets::identities(&local.plan, tflags)),
        false => Ok(Vec::new()),
    };
    let assigned = cluster.assigned();
    let (names, identity) = host_targets(cluster, &assigned, &local.targets, ids.as_deref().ok());
    let checked = ids.and_then(|_| targets::check_together(&names, &identity));
    let mut outs = None;
    let judged = checked.and_then(|()| {
        if cluster.is_root() {
            outs = Some(judge_outputs(&local.plan, report, oflags, presenter)?);
        }
        Ok(())
    });
    agree(cluster, judged)?;
    Ok(outs)
}

/// The ranks of the job, for the report (none for one process).
fn rank_reports(cluster: &dyn Cluster, assigned: &[Assigned]) -> Vec<RankReport> {
    if !cluster.distributed() {
        return Vec::new();
    }
    cluster
        .ranks()
        .iter()
        .map(|r| RankReport {
            rank: r.rank,
            host: r.host.clone(),
            targets: assigned
                .iter()
                .enumerate()
                .filter(|(_, a)| a.owner == r.rank)
                .map(|(i, _)| i)
                .collect(),
        })
        .collect()
}

/// Every rank's targets as opened, as the report names them, on rank 0.
fn opened_targets(
    cluster: &dyn Cluster,
    assigned: &[Assigned],
    local: &Localized,
    opened: Option<&[OpenTarget]>,
) -> Vec<TargetReport> {
    let Some(opened) = opened else {
        return gather_targets(cluster, &[], assigned.len());
    };
    if !cluster.distributed() {
        return opened.iter().map(target_report).collect();
    }
    let mine: Vec<(usize, TargetReport)> = local
        .targets
        .iter()
        .zip(opened)
        .map(|(&g, t)| {
            let mut r = target_report(t);
            r.path = assigned[g].name.display().to_string();
            (g, r)
        })
        .collect();
    gather_targets(cluster, &mine, assigned.len())
}

/// What a point added to the report says of the run.
struct Added {
    io_failed: bool,
}

/// Adds a point's (merged) result to the report, with its windows and
/// each rank's figures when several ran.
fn add_point(
    report: &mut RunReport,
    (repeat, point): (u32, &Point),
    targets: &[TargetReport],
    result: &JobResult,
    (windows, per_rank): (PointWindows, Vec<RankPoint>),
    cluster: &dyn Cluster,
) -> Added {
    let (ranks, windows) = match cluster.distributed() {
        true => (per_rank, Some(windows)),
        false => (Vec::new(), None),
    };
    let ram = report.host.memory_bytes;
    report.points.push(PointReport {
        repeat,
        ranks,
        windows,
        ..PointReport::new(point, targets, result, ram)
    });
    iosurvey_report::judge_scaling(report);
    let verify_failed = result.verify.as_ref().is_some_and(|v| v.failed());
    Added {
        io_failed: result.first_failure.is_some() || verify_failed,
    }
}

/// A result and its error apart: the result when there was one, and the
/// step's outcome.
fn split<T>(r: Result<T, Failure>) -> (Option<T>, Result<(), Failure>) {
    match r {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    }
}
