//! Running a Plan: judge every output, open its targets once, run each
//! point, save the report after every point, and print it in the requested
//! form. Shared by every mode. A closed stdout stops the run as Ctrl-C does.

use crate::exit::{agree, agreed, Failure, Outcome};
use crate::flags::common::{OutputArg, OutputFlags, TargetFlags};
use crate::output::{stdout_body, write_stdout, Outputs};
use crate::presenter::{Presentation, Presenter};
use crate::{out_path, output, progress, targets};
use anyhow::anyhow;
use iosurvey_report::{
    PointReport, PointWindows, RankPoint, RankReport, RunReport, TargetReport, TextOptions,
    ToolInfo, SCHEMA_VERSION,
};
use iosurvey_run::{now_ns, run_point, HostInfo, HostProbe, JobResult, Observer, OpenTarget};
use iosurvey_session::assign::Assigned;
use iosurvey_session::localize::maps_of;
use iosurvey_session::merge::{Maps, RankPart};
use iosurvey_session::ranks::{gather_point, gather_targets, host_targets, LiveRanks, PointMerged};
use iosurvey_session::{Cluster, Localized, SILENT};
use iosurvey_workload::modes::describe::describe;
use iosurvey_workload::{Plan, Point};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets a flag on SIGINT, SIGTERM or SIGHUP (a terminal or ssh session
/// that goes away: its default action killed the run, leaving its test
/// file and saving nothing), or when stderr's reader goes; a second
/// signal exits at once (130).
pub fn stop_flag() -> Arc<AtomicBool> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop));
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    // A closed stderr stops the run too.
    crate::say::stop_on_close(&stop);
    stop
}

/// Sets `stop` and `closed` once stdout is a pipe or socket whose reader
/// has gone (`| head`), found by a thread waiting in poll(2) for POLLERR or
/// POLLHUP, whether or not anything was written yet.
pub(crate) fn watch_stdout(stop: &Arc<AtomicBool>, closed: &Arc<AtomicBool>) {
    use rustix::event::{poll, PollFd, PollFlags};
    use rustix::fs::FileType;
    use std::os::fd::AsFd;
    let Ok(st) = rustix::fs::fstat(std::io::stdout().as_fd()) else {
        return;
    };
    if !matches!(
        FileType::from_raw_mode(st.st_mode),
        FileType::Fifo | FileType::Socket
    ) {
        return;
    }
    let (stop, closed) = (Arc::clone(stop), Arc::clone(closed));
    let _ = std::thread::Builder::new()
        .name("iosurvey-stdout".into())
        .spawn(move || loop {
            let out = std::io::stdout();
            let mut fds = [PollFd::new(&out, PollFlags::empty())];
            match poll(&mut fds, None) {
                Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => {
                    closed.store(true, Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                Ok(_) if fds[0].revents().contains(PollFlags::NVAL) => return,
                Ok(_) | Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return,
            }
        });
}

/// Every target path of the plan, once each.
fn target_paths(plan: &Plan) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for t in plan.points.iter().flat_map(|p| &p.job.targets) {
        if !paths.contains(&t.path) {
            paths.push(t.path.clone());
        }
    }
    paths
}

/// Judges every output before any target is opened: refused (exit 2) if
/// one cannot be written, is a target, or is another output.
pub(crate) fn judge_outputs(
    plan: &Plan,
    report: &RunReport,
    oflags: &OutputFlags,
    presenter: &Presentation<'_>,
) -> Result<Outputs, Failure> {
    let files = presenter.files(report);
    if presenter.files_are_made_up() {
        if let Some((_, p)) = files.iter().find(|(_, p)| p.symlink_metadata().is_ok()) {
            return Err(Failure::Usage(anyhow::anyhow!(
                "{}: already exists (an earlier run in the same minute, or a file of yours); \
                 iosurvey names this file itself and never replaces what it did not offer to write: \
                 move it, or give another output directory",
                p.display()
            )));
        }
    }
    let targets = target_paths(plan);
    let outs = Outputs::judge(oflags, &files, &targets)?;
    let taken = oflags.output.map(|o| match o {
        OutputArg::Json => "the JSON report (--output json)",
        OutputArg::Text => "the text summary (--output text)",
    });
    out_path::check_all(&outs.all(), &targets, taken).map_err(Failure::Usage)?;
    Ok(outs)
}

/// What goes to stdout as the run goes, and what already went.
pub(crate) struct Stdout {
    /// Text is streamed (no output flag is `-`, no --output json).
    pub streams: bool,
    pub shown: String,
    pub opts: TextOptions,
}

impl Stdout {
    /// Prints the part of the text that the points so far have settled.
    pub(crate) fn advance(
        &mut self,
        report: &RunReport,
        presenter: &Presentation<'_>,
        closed: &AtomicBool,
    ) {
        if !self.streams || closed.load(Ordering::Relaxed) {
            return;
        }
        let Some(now) = presenter.text_so_far(report, self.opts) else {
            return;
        };
        if now.len() > self.shown.len() && now.starts_with(&self.shown) {
            let fresh = iosurvey_report::terminal_text(&now[self.shown.len()..]);
            if let Err(e) = write_stdout(&fresh) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    closed.store(true, Ordering::Relaxed);
                } else {
                    eprintln!("iosurvey: writing to stdout: {e}");
                }
            }
            self.shown = now;
        }
    }

    /// The rest of the report on stdout, unless an output flag took stdout.
    fn finish(
        &self,
        report: &RunReport,
        oflags: &OutputFlags,
        outs: &Outputs,
        presenter: &Presentation<'_>,
    ) -> Result<(), Failure> {
        if outs.takes_stdout() {
            return Ok(());
        }
        let body = stdout_body(report, oflags, presenter);
        let rest = match self.streams {
            true => body.strip_prefix(self.shown.as_str()).unwrap_or(&body),
            false => &body,
        };
        // Text echoes what the run was given (paths, labels, a .lun
        // file's lines): no control character in it reaches a terminal.
        // JSON escapes its own.
        let rest = match oflags.output() {
            OutputArg::Text => iosurvey_report::terminal_text(rest),
            OutputArg::Json => rest.into(),
        };
        match write_stdout(&rest) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure::Run(anyhow!("writing the report to stdout: {e}")))
            }
            _ => Ok(()),
        }
    }
}

/// The end of a run, whole or not: the report on stdout, then every output
/// again (stdout and in-place ones get it only now). Both are tried; the
/// first failure is returned.
pub(crate) fn wrap_up(
    report: &RunReport,
    oflags: &OutputFlags,
    outs: &Outputs,
    presenter: &Presentation<'_>,
    stdout: &Stdout,
) -> Result<(), Failure> {
    let printed = stdout.finish(report, oflags, outs, presenter);
    let saved = outs.save(report, presenter, true);
    printed.and(saved)
}

/// The report of a run of `plan` started now, with no point yet.
pub(crate) fn new_report(plan: &Plan, argv: &[String], tflags: &TargetFlags) -> RunReport {
    RunReport {
        repeats: 1,
        diskperf: None,
        matrix: None,
        environment: Vec::new(),
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::default(),
        command_line: argv.to_vec(),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        host: HostInfo::current(),
        mode: plan.mode.clone(),
        points: Vec::new(),
        shared: tflags.shared,
        ranks: Vec::new(),
        windows: Vec::new(),
    }
}

/// What a run is given besides its plan and its presenter.
pub struct Session<'a> {
    /// The command line as typed, for the report.
    pub argv: &'a [String],
    pub tflags: &'a TargetFlags,
    /// The output flags, `--repeat` among them: each repeat runs the whole
    /// plan, in its order.
    pub oflags: &'a OutputFlags,
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
pub fn execute(
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
        crate::budget::check(plan, oflags.repeat, tflags.memory_limit),
    )?;
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
    // Each repeat's text and mode files apart (see [`Presentation`]).
    let presenter = &Presentation {
        presenter,
        repeats: oflags.repeat,
    };

    // 1. Checks.
    let outs = check_before_io(
        cluster, &local, has_work, tflags, oflags, &report, presenter,
    )?;
    if oflags.dry_run {
        if root {
            output::print_text(&describe(plan));
        }
        return Ok(Outcome::Ok);
    }

    // 2. Open and lay out, every rank; then a barrier.
    let stop = stop_flag();
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
    agree(cluster, step)?;
    let mut display = display.expect("agreed: every rank has its display");
    let all_targets = opened_targets(cluster, &assigned, &local, opened.as_deref());
    let mut stdout = outs.as_ref().map(|o| Stdout {
        streams: !o.takes_stdout() && oflags.output() == OutputArg::Text,
        shown: String::new(),
        opts: TextOptions { mib: oflags.mib },
    });
    cluster.barrier();
    // Every rank's numbering, for rank 0's merges.
    let rank_maps: Vec<Vec<Maps>> = match root && cluster.distributed() {
        true => (0..cluster.ranks().len())
            .map(|r| maps_of(plan, &assigned, r))
            .collect(),
        false => Vec::new(),
    };

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
        cluster.barrier();
        let t0 = now_ns();
        // A skipped point is reported with nothing measured, and so is a
        // rank's point with no stream of its own.
        let runs_here =
            point.skip.is_none() && (!cluster.distributed() || !lp.job.streams.is_empty());
        let result = match (&opened, runs_here) {
            (Some(o), true) if cluster.distributed() => {
                run_point(lp, o, &stop, &mut LiveRanks::new(&mut display, cluster))
            }
            (Some(o), true) => run_point(lp, o, &stop, &mut display),
            _ => Ok(JobResult {
                streams: vec![Default::default(); lp.job.streams.len()],
                ..Default::default()
            }),
        };
        let mut interrupted = result.as_ref().is_ok_and(|r| r.interrupted);
        let merged = if cluster.distributed() {
            let part = RankPart {
                start_ns: match &result {
                    Ok(r) if r.measure_start_ns > 0 => r.measure_start_ns.saturating_sub(t0),
                    _ => 0,
                },
                result: result.map_err(|e| format!("{e:#}")),
            };
            let mine_failed = part.result.is_err();
            let merged = gather_point(cluster, point, &part, |r| rank_maps[r][pi].clone());
            if let Some(m) = &merged {
                // The live lines and the bar end with the whole job's figures.
                display.point_finished(point, &m.result);
            }
            (merged, mine_failed)
        } else {
            match result {
                Ok(r) => (Some(PointMerged::alone(r)), false),
                Err(e) => {
                    failed = Some(Failure::Run(e.into()));
                    break;
                }
            }
        };
        let (merged, mine_failed) = merged;
        let mut errors = Vec::new();
        if let Some(m) = merged {
            interrupted |= m.result.interrupted;
            errors = m.errors;
            if errors.is_empty() {
                let saved = add_point(
                    &mut report,
                    (repeat, point),
                    &all_targets,
                    m.result.clone(),
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
    if display.live_failed && outcome == Outcome::Ok {
        outcome = Outcome::IoFailed;
    }
    worst_over_ranks(cluster, outcome, failed, last_save)
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

/// Step 1 of [`execute`]: the checks before anything is opened. Alone:
/// the engine flags, then (with --dry-run) the targets, then the outputs;
/// a run judges its targets as it opens them. Over ranks: the flags and
/// targets of every rank, those of each host together (two ranks given
/// aliases of one device), then rank 0's outputs, agreed. Rank 0's
/// judged outputs.
fn check_before_io(
    cluster: &dyn Cluster,
    local: &Localized,
    has_work: bool,
    tflags: &TargetFlags,
    oflags: &OutputFlags,
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
            points: Vec::new(),
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
    result: JobResult,
    (windows, per_rank): (PointWindows, Vec<RankPoint>),
    cluster: &dyn Cluster,
) -> Added {
    if cluster.distributed() {
        for (rr, p) in report.ranks.iter_mut().zip(per_rank) {
            rr.points.push(p);
        }
        report.windows.push(windows);
    }
    let ram = report.host.memory_bytes;
    report.points.push(PointReport {
        repeat,
        ..PointReport::new(point, targets, &result, ram)
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

/// What the report says of a target as it was opened.
pub(crate) fn target_report(t: &OpenTarget) -> TargetReport {
    TargetReport {
        path: t.path.display().to_string(),
        kind: t.kind,
        size_bytes: t.size,
        logical_block_size: t.logical_block_size,
        physical_block_size: t.physical_block_size,
        rotational: t.rotational,
        direct: t.direct,
        created: t.created.any(),
        memory_backed: t.memory_backed.clone(),
        link_bytes_per_sec: t.link.as_ref().map(|l| l.bytes_per_sec),
        link: t.link.as_ref().map(|l| l.how.clone()),
    }
}
