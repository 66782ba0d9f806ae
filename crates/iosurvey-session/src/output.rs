//! Where reports go: files saved after every point (so a later failure
//! loses nothing): the JSON report by appending the new point to the file
//! this run wrote, the CSV and the mode's own files by writing what grew
//! at their end (whole when their start changed), the HTML page rewritten
//! whole; anything else (stdout, a FIFO, a character device) written once
//! at the end, in place. Every path is judged before the run (see
//! `out_path`).

use crate::failure::Failure;
use crate::grown_file::{self, Grown};
use crate::json_file;
use crate::presenter::{FileBody, Presentation};
use crate::{OutputFormat, OutputOptions};
use anyhow::anyhow;
use iosurvey_model::document::RunReport;
use iosurvey_report::{render_html, to_json, TextOptions};
use iosurvey_target::output::claim::{claim, Claim};
use iosurvey_target::output::file::replace_at;
use iosurvey_target::output::path::{fd_ident, judge, OutPath, Sink};
use rustix::fs::{Mode, OFlags};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The wait for a FIFO's reader ended by a stop (Ctrl-C, SIGTERM, a
/// closed stdout): the run ends as interrupted (exit 130).
#[derive(Debug)]
pub struct StoppedWaiting(String);

impl std::fmt::Display for StoppedWaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: stopped before the FIFO had a reader; nothing written",
            self.0
        )
    }
}

impl std::error::Error for StoppedWaiting {}

/// How often the wait for a FIFO's reader looks at the stop flag.
const READER_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Opens `path` for writing without ever blocking: `O_NONBLOCK`, retried
/// every 50 ms while it is a FIFO with no reader (`ENXIO`; said once on
/// stderr), until a reader comes or `stop` is set. `O_NONBLOCK` is cleared
/// once it is open, so that writes wait for the reader.
fn open_for_writing(
    path: &Path,
    shown: &str,
    stop: Option<&AtomicBool>,
) -> Result<OwnedFd, anyhow::Error> {
    let flags = OFlags::WRONLY | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let opening = |e| anyhow!("{shown}: opening: {e}");
    let mut said = false;
    loop {
        match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => {
                let now = rustix::fs::fcntl_getfl(&fd).map_err(opening)?;
                rustix::fs::fcntl_setfl(&fd, now - OFlags::NONBLOCK).map_err(opening)?;
                return Ok(fd);
            }
            Err(rustix::io::Errno::NXIO) => {
                if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    return Err(StoppedWaiting(shown.to_string()).into());
                }
                if !said {
                    eprintln!("iosurvey: {shown}: waiting for a reader on the FIFO");
                    said = true;
                }
                std::thread::sleep(READER_POLL);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(opening(e)),
        }
    }
}

/// Opens an output that is written in place (a character device, a FIFO)
/// for writing, without creating or truncating it, and checks that what
/// was opened is what was judged. A FIFO with no reader is waited for
/// until `stop` is set (then [`StoppedWaiting`]).
pub fn open_in_place(
    out: &OutPath,
    stop: Option<&AtomicBool>,
) -> Result<std::fs::File, anyhow::Error> {
    let fd = open_for_writing(&out.given, &out.shown(), stop)?;
    if fd_ident(&fd).ok().as_ref() != Some(&out.ident) {
        return Err(anyhow!(
            "{}: changed since it was checked; not written",
            out.shown()
        ));
    }
    Ok(std::fs::File::from(fd))
}

/// The failure an output that could not be opened makes: interrupted
/// (exit 130) when a stop ended the wait for a FIFO's reader, else `other`.
pub fn open_failure(e: anyhow::Error, other: fn(anyhow::Error) -> Failure) -> Failure {
    if e.is::<StoppedWaiting>() {
        Failure::Interrupted(e)
    } else {
        other(e)
    }
}

/// Writes `body` to stdout. `Err` on a failed write, a closed pipe included.
pub fn write_stdout(body: &str) -> std::io::Result<()> {
    write_stdout_bytes(body.as_bytes())
}

/// [`write_stdout`] of bytes.
pub fn write_stdout_bytes(body: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(body).and_then(|_| out.flush())
}

/// Opens an output written to as the run goes (`--live`,
/// `--stream-file`): a regular file is replaced at once by a new empty
/// file (created with `O_EXCL|O_NOFOLLOW` beside it, then renamed over
/// it); a mounted file is truncated; anything else is written in place.
/// `None` for stdout.
pub fn open_appended(out: &OutPath, stop: &AtomicBool) -> anyhow::Result<Option<std::fs::File>> {
    match &out.sink {
        Sink::Stdout => Ok(None),
        Sink::InPlace => Ok(Some(open_in_place(out, Some(stop))?)),
        Sink::Mounted(held) => {
            let f = held.file();
            f.set_len(0)
                .and_then(|_| f.try_clone())
                .map(Some)
                .map_err(|e| anyhow!("{}: {e}", out.shown()))
        }
        Sink::File { dir, name, at, .. } => {
            iosurvey_target::output::file::place_new(dir.fd(), name, at)
                .map(Some)
                .map_err(|e| anyhow!("{}: {e}", out.shown()))
        }
    }
}

/// Writes `body` to stdout; a closed pipe is not an error (the reader has
/// what it wanted), any other failure is reported on stderr.
pub fn print_text(body: &str) {
    if let Err(e) = write_stdout(body) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("iosurvey: writing to stdout: {e}");
        }
    }
}

/// Writes one output. Files are rewritten whole (the ones saved after
/// every point grow in place instead: [`Outputs::save`]); stdout and
/// in-place outputs get the report once, when `last`.
pub fn write_out(
    out: &OutPath,
    body: &str,
    last: bool,
    stop: Option<&AtomicBool>,
) -> Result<(), Failure> {
    let failed = |e: &dyn std::fmt::Display| write_failed(out, e);
    match &out.sink {
        Sink::File { dir, name, at, .. } => replace_at(dir.fd(), name, at, body.as_bytes())
            .map(drop)
            .map_err(|e| failed(&e)),
        Sink::Mounted(held) => {
            iosurvey_target::output::file::rewrite_held(held.file(), body.as_bytes())
                .map_err(|e| failed(&e))
        }
        Sink::InPlace if last => {
            let mut f = open_in_place(out, stop).map_err(|e| open_failure(e, Failure::Run))?;
            f.write_all(body.as_bytes())
                .and_then(|_| f.flush())
                .map_err(|e| failed(&e))
        }
        Sink::Stdout if last => match write_stdout(body) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(failed(&e)),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `--metrics-file` as judged, if it can be replaced whole at every
/// interval: a file (or a file mounted over), not stdout, a FIFO or a
/// device, which are written once at the end.
fn replaced_whole(out: OutPath) -> Result<OutPath, Failure> {
    match out.sink {
        Sink::File { .. } | Sink::Mounted(_) => Ok(out),
        _ => Err(Failure::Usage(anyhow!(
            "{}: not a regular file; the metrics are replaced whole at every interval, \
             so give a file (node_exporter's textfile collector reads DIR/NAME.prom)",
            out.shown()
        ))),
    }
}

/// Every output of a run, judged before it.
pub struct Outputs {
    pub json: Option<OutPath>,
    pub csv: Option<OutPath>,
    pub html: Option<OutPath>,
    pub live: Option<OutPath>,
    /// `--stream-file`.
    pub streams: Option<OutPath>,
    /// The mode's own files, in the presenter's order.
    pub mode: Vec<OutPath>,
    /// `--db`: the history database, a regular file (there or not).
    pub db: Option<OutPath>,
    /// The files SQLite writes beside it, judged as outputs too.
    pub db_sidecars: Vec<OutPath>,
    /// `--metrics-file`: a regular file, replaced whole at each interval.
    pub metrics: Option<OutPath>,
    /// `--metrics-push`: the Pushgateway, once it has answered.
    pub gateway: Option<crate::metrics_push::Gateway>,
    /// `--db postgres://...`: a PostgreSQL database, no file to judge.
    pub db_url: Option<PathBuf>,
    /// Ends the wait for a FIFO's reader (see [`open_in_place`]).
    pub stop: Option<Arc<AtomicBool>>,
    /// When the HTML page was last written: it is drawn again at most
    /// every [`HTML_EVERY`] (and at the end), not after every one of
    /// thousands of short points.
    pub html_written: std::cell::Cell<Option<std::time::Instant>>,
    /// The outputs that failed (`--json out.json`): said once, not tried
    /// again.
    pub failed: std::cell::RefCell<Vec<String>>,
    /// The JSON report as last saved to its file, which the next point is
    /// appended to.
    json_saved: std::cell::RefCell<Option<json_file::Appending>>,
    /// The CSV and the mode's files (in `mode`'s order: a text, or a JSON
    /// report) as last saved.
    csv_saved: std::cell::RefCell<Option<Grown>>,
    mode_saved: std::cell::RefCell<Vec<ModeSaved>>,
    /// The first of the mode's made-up files, claimed when the run was
    /// planned: removed when the outputs are dropped if no report
    /// replaced it (see `iosurvey_target::output::claim`).
    claim: Option<Claim>,
}

/// A mode's file as last saved: as a text, or as a JSON report.
type ModeSaved = (Option<Grown>, Option<json_file::Appending>);

/// Shortest time between two rewrites of the HTML page during a run.
const HTML_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl Outputs {
    /// Judges every output path: the flags' and the mode's own files.
    /// Standard output is judged too, whatever goes there (the text
    /// summary at least): see [`iosurvey_target::output::path::check_stdout`].
    pub fn judge(
        flags: &OutputOptions,
        mode: &[(String, PathBuf)],
        targets: &[PathBuf],
    ) -> Result<Outputs, Failure> {
        iosurvey_target::output::path::check_stdout(targets, &[])
            .map_err(|e| Failure::Usage(e.into()))?;
        let one = |flag: &str, p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| judge(flag, p))
                .transpose()
                .map_err(|e| Failure::Usage(e.into()))
        };
        let db_url = flags.db.clone().filter(|p| iosurvey_db::is_postgres(p));
        let db_files = flags
            .db
            .as_deref()
            .filter(|p| !iosurvey_db::is_postgres(p))
            .map(iosurvey_target::output::database::judge_database)
            .transpose()
            .map_err(|e| Failure::Usage(e.into()))?
            .unwrap_or_default();
        Ok(Outputs {
            json: one("--json", &flags.json)?,
            csv: one("--csv", &flags.csv)?,
            html: one("--html", &flags.html)?,
            live: one("--live", &flags.live)?,
            streams: one("--stream-file", &flags.stream_file)?,
            db: db_files.first().cloned(),
            db_sidecars: db_files.iter().skip(1).cloned().collect(),
            metrics: one("--metrics-file", &flags.metrics_file)?
                .map(replaced_whole)
                .transpose()?,
            gateway: None,
            db_url,
            mode: mode
                .iter()
                .map(|(flag, p)| judge(flag, p))
                .collect::<Result<_, _>>()
                .map_err(|e| Failure::Usage(e.into()))?,
            stop: None,
            html_written: std::cell::Cell::new(None),
            failed: Default::default(),
            json_saved: Default::default(),
            csv_saved: Default::default(),
            mode_saved: std::cell::RefCell::new((0..mode.len()).map(|_| (None, None)).collect()),
            claim: None,
        })
    }

    /// Makes `mode`, judged as new files under names iosurvey made up
    /// (see `crate::made_up`), the mode's own files, in place of any
    /// judged before.
    pub(crate) fn set_made_up(&mut self, mode: Vec<OutPath>) {
        self.mode_saved = std::cell::RefCell::new(mode.iter().map(|_| (None, None)).collect());
        self.mode = mode;
        self.claim = None;
    }

    /// Claims the first of the mode's made-up files, kept until the
    /// outputs are dropped; `false` when a run started at the same moment
    /// took it since it was judged.
    pub(crate) fn claim_made_up(&mut self) -> Result<bool, Failure> {
        let Some(first) = self.mode.first() else {
            return Ok(true);
        };
        match claim(first).map_err(|e| Failure::Usage(e.into()))? {
            Some(c) => {
                self.claim = Some(c);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// All of them, for the checks between them.
    pub fn all(&self) -> Vec<OutPath> {
        [
            &self.json,
            &self.csv,
            &self.html,
            &self.live,
            &self.streams,
            &self.db,
            &self.metrics,
        ]
        .into_iter()
        .flatten()
        .chain(&self.mode)
        .chain(&self.db_sidecars)
        .cloned()
        .collect()
    }

    /// Whether one of them is stdout, which then carries it instead of the
    /// text summary.
    pub fn takes_stdout(&self) -> bool {
        self.all().iter().any(|o| o.sink == Sink::Stdout)
    }

    /// Checks the history database before any I/O (see
    /// [`crate::history_db::check`]).
    pub fn check_db(&self) -> Result<(), Failure> {
        if let Some(url) = &self.db_url {
            return crate::history_db::check_url(url);
        }
        self.db.as_ref().map_or(Ok(()), crate::history_db::check)
    }

    /// Checks `--metrics-push` before any I/O: an `http://` address whose
    /// Pushgateway answers, kept for the run.
    pub fn check_gateway(
        &mut self,
        url: Option<&str>,
        host: &str,
        targets: &[PathBuf],
    ) -> Result<(), Failure> {
        let Some(url) = url else { return Ok(()) };
        let paths: Vec<String> = targets.iter().map(|t| t.display().to_string()).collect();
        let gw = crate::metrics_push::Gateway::parse(url, host, &paths.join("\n"))
            .and_then(|g| g.check().map(|()| g))
            .map_err(|e| Failure::Usage(e.into()))?;
        self.gateway = Some(gw);
        Ok(())
    }

    /// Records the run in the history database, after its report files
    /// are saved (so a failure here loses nothing).
    pub fn record(&self, report: &RunReport) -> Result<(), Failure> {
        // The files `db import` reads the run back from.
        let saved: Vec<String> = [&self.json, &self.html]
            .into_iter()
            .flatten()
            .filter(|o| matches!(o.sink, Sink::File { .. } | Sink::Mounted(_)))
            .filter(|o| !self.failed.borrow().contains(&o.shown()))
            .map(|o| o.given.display().to_string())
            .collect();
        if let Some(url) = &self.db_url {
            return crate::history_db::record_url(url, report, &saved);
        }
        self.db
            .as_ref()
            .map_or(Ok(()), |db| crate::history_db::record(db, report, &saved))
    }

    /// Saves what was asked for: `--json`, `--csv`, `--html` and the mode's own files
    /// after every point; stdout and in-place outputs only when `last`.
    /// One that fails does not keep the others from being written: each
    /// failure is said once on stderr (the first one by the caller, as the
    /// error returned) and that output is not tried again.
    pub fn save(
        &self,
        report: &RunReport,
        presenter: &Presentation<'_>,
        last: bool,
    ) -> Result<(), Failure> {
        let mut first = None;
        if let Some(o) = &self.json {
            let saved = &mut self.json_saved.borrow_mut();
            self.save_report(o, report, saved, last, &mut first);
        }
        // The report the CSV and the mode's files show (the first
        // repeat's), made once.
        let shown =
            (self.csv.is_some() || !self.mode.is_empty()).then(|| presenter.files_report(report));
        if let (Some(o), Some(shown)) = (&self.csv, &shown) {
            let saved = &mut self.csv_saved.borrow_mut();
            self.save_grown(o, || presenter.csv(shown), saved, last, &mut first);
        }
        if let Some(o) = &self.html {
            let due = self
                .html_written
                .get()
                .is_none_or(|t| t.elapsed() >= HTML_EVERY);
            if last || due {
                self.save_one(o, || render_html(report), last, &mut first);
                self.html_written.set(Some(std::time::Instant::now()));
            }
        }
        if let Some(shown) = shown.as_ref().filter(|_| !self.mode.is_empty()) {
            let bodies = presenter.file_bodies(shown);
            let mut saved = self.mode_saved.borrow_mut();
            for ((o, body), s) in self.mode.iter().zip(bodies).zip(saved.iter_mut()) {
                match body {
                    FileBody::Text(t) => self.save_grown(o, || t, &mut s.0, last, &mut first),
                    FileBody::Report => self.save_report(o, shown, &mut s.1, last, &mut first),
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Saves the JSON report: to a file, the new point alone when the
    /// file holds every point before it and the rest of the report is
    /// unchanged (`,{point}]}` over its tail), otherwise the whole report
    /// (see `json_file`); any other sink as [`Outputs::save_one`].
    fn save_report(
        &self,
        out: &OutPath,
        report: &RunReport,
        saved: &mut Option<json_file::Appending>,
        last: bool,
        first: &mut Option<Failure>,
    ) {
        match out.sink {
            Sink::File { .. } | Sink::Mounted(_) => self.save_with(out, first, || {
                json_file::write(out, report, saved).map_err(|e| write_failed(out, &e))
            }),
            _ => self.save_one(out, || to_json(report), last, first),
        }
    }

    /// Saves a file that grows at its end (the CSV, a mode's file): what
    /// it gained since `saved` when its start is unchanged (see
    /// `grown_file`); any other sink as [`Outputs::save_one`].
    fn save_grown(
        &self,
        out: &OutPath,
        body: impl FnOnce() -> String,
        saved: &mut Option<Grown>,
        last: bool,
        first: &mut Option<Failure>,
    ) {
        match out.sink {
            Sink::File { .. } | Sink::Mounted(_) => self.save_with(out, first, || {
                grown_file::write(out, &body(), saved).map_err(|e| write_failed(out, &e))
            }),
            _ => self.save_one(out, body, last, first),
        }
    }

    /// Writes one output unless it failed before; a failure is kept in
    /// `first` if it is the first one, else said on stderr at once.
    fn save_one(
        &self,
        out: &OutPath,
        body: impl FnOnce() -> String,
        last: bool,
        first: &mut Option<Failure>,
    ) {
        let stop = self.stop.as_deref();
        self.save_with(out, first, || write_out(out, &body(), last, stop));
    }

    /// Runs `write` for `out` unless it failed before; a failure marks it
    /// failed and is kept in `first` if it is the first one, else said on
    /// stderr at once.
    fn save_with(
        &self,
        out: &OutPath,
        first: &mut Option<Failure>,
        write: impl FnOnce() -> Result<(), Failure>,
    ) {
        let shown = out.shown();
        if self.failed.borrow().contains(&shown) {
            return;
        }
        if let Err(e) = write() {
            self.failed.borrow_mut().push(shown);
            match first {
                None => *first = Some(e),
                Some(_) => eprintln!("iosurvey: {}", failure_text(&e)),
            }
        }
    }
}

/// The failure of a write to `out`.
fn write_failed(out: &OutPath, e: &dyn std::fmt::Display) -> Failure {
    Failure::Run(anyhow!("{}: writing failed: {e}", out.shown()))
}

/// The one line a failure is said in.
pub(crate) fn failure_text(f: &Failure) -> String {
    match f {
        Failure::Usage(e) | Failure::Run(e) | Failure::Interrupted(e) => format!("{e:#}"),
    }
}

/// The report on stdout in the requested form, text through the mode's own
/// presenter.
pub fn stdout_body(
    report: &RunReport,
    flags: &OutputOptions,
    presenter: &Presentation<'_>,
) -> String {
    match flags.output() {
        OutputFormat::Json => to_json(report),
        OutputFormat::Text => {
            let opts = TextOptions { mib: flags.mib };
            // Under MPI, the ranks and the three windows after the mode's
            // own text (nothing on one host).
            let mut t = presenter.text(report, opts);
            t.push_str(&iosurvey_report::render_ranks(report, opts));
            t
        }
    }
}
