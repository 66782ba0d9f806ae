//! Running a Plan: judge every output, open its targets once, run each
//! point, save the report after every point, and print it in the requested
//! form. Shared by every mode. A closed stdout stops the run as Ctrl-C does.

use crate::cli::{OutputArg, OutputFlags, TargetFlags};
use crate::exit::{Failure, Outcome};
use crate::output::{stdout_body, write_stdout, Outputs};
use crate::{out_path, output, progress, targets};
use anyhow::anyhow;
use iosurvey_model::document::{PointReport, RunReport, TargetReport, ToolInfo};
use iosurvey_report::{render_csv, TextOptions, SCHEMA_VERSION};
use iosurvey_run::{run_point, HostInfo, HostProbe, JobResult, OpenTarget};
use iosurvey_workload::modes::describe::describe;
use iosurvey_workload::Plan;
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

/// How a mode presents its report. Every presenter is a pure function of the
/// report; `after_point` says what a mode wants said as each point ends.
pub trait Presenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String;
    /// Puts in a new report what the mode's presentation needs from the
    /// command line (diskperf's display choices), so that the saved report
    /// is presented again as the run was.
    fn annotate(&self, _report: &mut RunReport) {}
    fn csv(&self, report: &RunReport) -> String {
        render_csv(report)
    }
    fn after_point(&self, _report: &RunReport) -> Result<(), Failure> {
        Ok(())
    }
    /// The mode's own output files, as (flag, path): judged with `--json`
    /// and the others before the run, rewritten after every point. `report`
    /// holds no point yet when they are judged.
    fn files(&self, _report: &RunReport) -> Vec<(String, PathBuf)> {
        Vec::new()
    }
    /// The bodies of `files`, in the same order.
    fn file_bodies(&self, _report: &RunReport) -> Vec<String> {
        Vec::new()
    }
    /// Whether `files` are names iosurvey made up rather than paths the
    /// user gave: such a file must not exist yet (nor be a symlink), since
    /// nobody offered what is there.
    fn files_are_made_up(&self) -> bool {
        false
    }
    /// The start of `text` that later points cannot change, printed on
    /// stdout as the run goes (so a reader sees lines early, and a closed
    /// stdout is found early); `None` prints the text only at the end.
    fn text_so_far(&self, _report: &RunReport, _opts: TextOptions) -> Option<String> {
        None
    }
    /// A line for stderr once the targets have passed the guard and the
    /// checks, before any is opened or laid out (so a refusal is the only
    /// line printed); not with --quiet.
    fn banner(&self) -> Option<&str> {
        None
    }
}

/// A mode's presenter for a run of several repeats (`--repeat`): the text
/// of each repeat, one after the other, each under a line that names it;
/// the CSV and the mode's own files of the first repeat (the JSON and the
/// HTML keep them all).
pub struct Repeated<'a>(pub &'a dyn Presenter);

impl Presenter for Repeated<'_> {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        let mut out = String::new();
        for k in 0..report.repeats {
            let one = report.repeat(k);
            if one.points.is_empty() {
                break;
            }
            out.push_str(&format!("# repeat {} of {}\n", k + 1, report.repeats));
            out.push_str(&self.0.text(&one, opts));
        }
        out
    }
    fn csv(&self, report: &RunReport) -> String {
        self.0.csv(&report.repeat(0))
    }
    fn after_point(&self, report: &RunReport) -> Result<(), Failure> {
        let k = report.points.last().map_or(0, |p| p.repeat);
        self.0.after_point(&report.repeat(k))
    }
    fn files(&self, report: &RunReport) -> Vec<(String, PathBuf)> {
        self.0.files(report)
    }
    fn file_bodies(&self, report: &RunReport) -> Vec<String> {
        self.0.file_bodies(&report.repeat(0))
    }
    fn files_are_made_up(&self) -> bool {
        self.0.files_are_made_up()
    }
    fn banner(&self) -> Option<&str> {
        self.0.banner()
    }
}

/// A presenter made of a text function, with the generic CSV.
pub struct TextOnly(pub fn(&RunReport, TextOptions) -> String);

impl Presenter for TextOnly {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        (self.0)(report, opts)
    }
}

/// A presenter with a line for stderr said once the checks have passed
/// (before that, a refusal is the only line printed).
pub struct WithBanner<'a>(pub &'a dyn Presenter, pub String);

impl Presenter for WithBanner<'_> {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        self.0.text(report, opts)
    }
    fn annotate(&self, report: &mut RunReport) {
        self.0.annotate(report)
    }
    fn csv(&self, report: &RunReport) -> String {
        self.0.csv(report)
    }
    fn after_point(&self, report: &RunReport) -> Result<(), Failure> {
        self.0.after_point(report)
    }
    fn files(&self, report: &RunReport) -> Vec<(String, PathBuf)> {
        self.0.files(report)
    }
    fn file_bodies(&self, report: &RunReport) -> Vec<String> {
        self.0.file_bodies(report)
    }
    fn files_are_made_up(&self) -> bool {
        self.0.files_are_made_up()
    }
    fn text_so_far(&self, report: &RunReport, opts: TextOptions) -> Option<String> {
        self.0.text_so_far(report, opts)
    }
    fn banner(&self) -> Option<&str> {
        Some(&self.1)
    }
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
    presenter: &dyn Presenter,
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
        presenter: &dyn Presenter,
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
        presenter: &dyn Presenter,
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
    presenter: &dyn Presenter,
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

/// Runs `plan` and presents it (text or JSON on stdout, `--json`, `--csv`).
/// With `--dry-run`, prints the plan and its estimated duration instead.
pub fn execute(
    plan: &Plan,
    argv: &[String],
    tflags: &TargetFlags,
    oflags: &OutputFlags,
    presenter: &dyn Presenter,
) -> Result<Outcome, Failure> {
    // Before anything is opened, --dry-run and every MPI rank included: a
    // plan over the memory this process may use is refused, not OOM-killed.
    // Each rank judges its own host's memory; one refusal stops them all.
    crate::dist::agree_if_many(crate::budget::check(
        plan,
        oflags.repeat,
        tflags.memory_limit,
    ))?;
    if crate::dist::comm::active() {
        return crate::dist::run::execute(plan, argv, tflags, oflags, presenter);
    }
    let plan = &crate::tuning::apply(plan, tflags)?;
    let mut report = new_report(plan, argv, tflags);
    presenter.annotate(&mut report);
    report.repeats = oflags.repeat;
    let repeated = Repeated(presenter);
    let presenter: &dyn Presenter = if oflags.repeat > 1 {
        &repeated
    } else {
        presenter
    };
    if oflags.dry_run {
        // Everything a run would refuse, refused now; nothing is opened
        // for writing and nothing is left behind.
        targets::check_all(plan, tflags)?;
        judge_outputs(plan, &report, oflags, presenter)?;
        output::print_text(&describe(plan));
        return Ok(Outcome::Ok);
    }
    let stop = stop_flag();
    let mut outs = judge_outputs(plan, &report, oflags, presenter)?;
    outs.stop = Some(Arc::clone(&stop));
    let closed = Arc::new(AtomicBool::new(false));
    watch_stdout(&stop, &closed);
    let banner = presenter.banner().filter(|_| !oflags.quiet);
    let targets = targets::open_all(plan, tflags, oflags.quiet, banner, &stop)?;
    let mut display = progress::Display::new(
        oflags.quiet,
        oflags.mib,
        outs.live.as_ref(),
        Arc::clone(&stop),
        Arc::clone(&closed),
    )
    .map_err(|e| output::open_failure(e, Failure::Usage))?;
    let mut stdout = Stdout {
        streams: !outs.takes_stdout() && oflags.output() == OutputArg::Text,
        shown: String::new(),
        opts: TextOptions { mib: oflags.mib },
    };
    let mut outcome = Outcome::Ok;
    // Each repeat runs the whole plan, in its order.
    let runs = (0..oflags.repeat).flat_map(|k| plan.points.iter().map(move |p| (k, p)));
    for (repeat, point) in runs {
        if stop.load(Ordering::Relaxed) {
            outcome = Outcome::Interrupted;
            break;
        }
        // A skipped point is reported with nothing measured.
        let result = if point.skip.is_some() {
            JobResult {
                streams: vec![Default::default(); point.job.streams.len()],
                ..Default::default()
            }
        } else {
            match run_point(point, &targets, &stop, &mut display) {
                Ok(r) => r,
                Err(e) => {
                    wrap_up(&report, oflags, &outs, presenter, &stdout)?;
                    return Err(Failure::Run(e.into()));
                }
            }
        };
        let opened: Vec<TargetReport> = targets.iter().map(target_report).collect();
        let ram = report.host.memory_bytes;
        report.points.push(PointReport {
            repeat,
            ..PointReport::new(point, &opened, &result, ram)
        });
        iosurvey_report::judge_scaling(&mut report);
        if let Err(e) = outs.save(&report, presenter, false) {
            return wrap_up(&report, oflags, &outs, presenter, &stdout).and(Err(e));
        }
        presenter.after_point(&report)?;
        stdout.advance(&report, presenter, &closed);
        if let Some(why) = result
            .verify
            .as_ref()
            .and_then(|v| v.nothing_checked.as_ref())
        {
            eprintln!("iosurvey: --verify could check no block: {why}");
        }
        if result.interrupted {
            outcome = Outcome::Interrupted;
            break;
        }
        let verify_failed = result.verify.as_ref().is_some_and(|v| v.failed());
        if result.first_failure.is_some() || verify_failed {
            outcome = Outcome::IoFailed;
        }
    }
    wrap_up(&report, oflags, &outs, presenter, &stdout)?;
    if closed.load(Ordering::Relaxed) {
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
    Ok(outcome)
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
