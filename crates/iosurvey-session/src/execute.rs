//! What the session loop does around a plan's points: judge every output
//! before a target is opened, stop on a signal or a closed stdout or
//! stderr, stream the settled text to stdout, and wrap up (the report on
//! stdout, every output saved again). A closed stdout stops the run as
//! Ctrl-C does.

use crate::failure::Failure;
use crate::made_up;
use crate::output::{stdout_body, write_stdout, Outputs};
use crate::presenter::Presentation;
use crate::{OutputFormat, OutputOptions, TargetOptions};
use anyhow::anyhow;
use iosurvey_model::document::{RunReport, TargetReport, ToolInfo};
use iosurvey_report::{TextOptions, SCHEMA_VERSION};
use iosurvey_run::{HostInfo, HostProbe};
use iosurvey_target::output::path as out_path;
use iosurvey_target::target::OpenTarget;
use iosurvey_workload::Plan;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The process's stop flag (see [`crate::stop`]), set on SIGINT, SIGTERM
/// or SIGHUP (a terminal or ssh session that goes away: its default action
/// killed the run, leaving its test file and saving nothing), and from now
/// on when stderr's reader goes; a second signal exits at once (130).
pub fn stop_flag() -> Arc<AtomicBool> {
    let stop = crate::stop::install();
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

/// Refuses an output at the verify state of a target of `plan` (beside a
/// file target, or in `--verify-state DIR`): a verifying run reads and
/// writes it, and any run that writes updates it (what it overwrote is no
/// longer what a verified run wrote), so a report there would destroy the
/// record of what the verified runs wrote.
fn check_verify_states(plan: &Plan, outs: &[out_path::OutPath]) -> Result<(), Failure> {
    for job in plan.points.iter().map(|p| &p.job) {
        for t in &job.targets {
            let mut files = vec![t.path.clone()];
            if t.path.is_dir() {
                files.push(iosurvey_target::target::test_file_in(&t.path));
            }
            for f in files {
                let Ok(state) =
                    iosurvey_run::verify_state::state_path(&f, job.verify_state.as_deref())
                else {
                    continue;
                };
                let ids = out_path::target_idents(&state);
                if let Some(o) = outs.iter().find(|o| ids.contains(&o.ident)) {
                    return Err(Failure::Usage(anyhow::anyhow!(
                        "{}: is the verify state of the target {} ({}), the record of what the verified runs wrote; give the output another path",
                        o.shown(),
                        t.path.display(),
                        state.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Judges every output before any target is opened: refused (exit 2) if
/// one cannot be written, is a target, or is another output. A mode's
/// files under made-up names take the first set nothing is at, claimed
/// last, once every check has passed (see [`crate::made_up`]); not with
/// `--dry-run`, which writes nothing.
pub(crate) fn judge_outputs(
    plan: &Plan,
    report: &RunReport,
    oflags: &OutputOptions,
    presenter: &Presentation<'_>,
) -> Result<Outputs, Failure> {
    let targets = target_paths(plan);
    let sets = presenter.made_up_files(report);
    let mut outs = Outputs::judge(oflags, &presenter.files(report), &targets)?;
    let mut taken = None;
    if !sets.is_empty() {
        let (k, mode) = made_up::judge_free(&sets, 0)?;
        outs.set_made_up(mode);
        taken = Some(k);
    }
    check_between(plan, oflags, &outs, &targets)?;
    outs.check_db()?;
    outs.check_gateway(
        oflags.metrics_push.as_deref(),
        &report.host.hostname,
        &targets,
    )?;
    if let Some(mut k) = taken {
        while !oflags.dry_run && !outs.claim_made_up()? {
            // A run started at the same moment claimed set `k` since it
            // was judged: the next free one, judged against the rest again.
            let (next, mode) = made_up::judge_free(&sets, k + 1)?;
            outs.set_made_up(mode);
            check_between(plan, oflags, &outs, &targets)?;
            k = next;
        }
        presenter.took_files(report, k);
    }
    Ok(outs)
}

/// The checks between the outputs and of each against what the run
/// touches: no two the same, none a target, an input or a verify state.
fn check_between(
    plan: &Plan,
    oflags: &OutputOptions,
    outs: &Outputs,
    targets: &[PathBuf],
) -> Result<(), Failure> {
    let taken = oflags.output.map(|o| match o {
        OutputFormat::Json => "the JSON report (--output json)",
        OutputFormat::Text => "the text summary (--output text)",
    });
    out_path::check_all(&outs.all(), targets, taken).map_err(|e| Failure::Usage(e.into()))?;
    check_inputs(&oflags.inputs, &outs.all())?;
    check_verify_states(plan, &outs.all())
}

/// Refuses an output that is a file the run reads to know what to do (a
/// fio job file, ORION's `.lun`): writing it would replace the user's own.
fn check_inputs(inputs: &[std::path::PathBuf], outs: &[out_path::OutPath]) -> Result<(), Failure> {
    for input in inputs {
        let ids = out_path::target_idents(input);
        if let Some(o) = outs.iter().find(|o| ids.contains(&o.ident)) {
            return Err(Failure::Usage(anyhow::anyhow!(
                "{}: is {}, which this run reads; give the output another path",
                o.shown(),
                input.display()
            )));
        }
    }
    Ok(())
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
        oflags: &OutputOptions,
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
            OutputFormat::Text => iosurvey_report::terminal_text(rest),
            OutputFormat::Json => rest.into(),
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
    oflags: &OutputOptions,
    outs: &Outputs,
    presenter: &Presentation<'_>,
    stdout: &Stdout,
) -> Result<(), Failure> {
    let printed = stdout.finish(report, oflags, outs, presenter);
    let saved = outs.save(report, presenter, true);
    // After the files: a database that fails loses nothing.
    let recorded = outs.record(report);
    match (printed.and(saved), recorded) {
        (Err(first), Err(Failure::Usage(e) | Failure::Run(e) | Failure::Interrupted(e))) => {
            eprintln!("iosurvey: {e:#}");
            Err(first)
        }
        (done, recorded) => done.and(recorded),
    }
}

/// The report of a run of `plan` started now, with no point yet.
pub(crate) fn new_report(plan: &Plan, argv: &[String], tflags: &TargetOptions) -> RunReport {
    RunReport {
        repeats: 1,
        diskperf: None,
        matrix: None,
        quick: None,
        environment: Vec::new(),
        fio_job: None,
        label: None,
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::default(),
        // A PostgreSQL URL's password is not kept (`--db postgres://u:***@h/db`).
        command_line: iosurvey_db::redact_args(argv),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        host: HostInfo::current(),
        mode: plan.mode.clone(),
        points: Vec::new(),
        shared: tflags.shared,
        ranks: Vec::new(),
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
        device: t.device.clone(),
    }
}
