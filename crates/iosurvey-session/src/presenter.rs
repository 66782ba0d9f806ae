//! How a mode presents its report ([`Presenter`], a pure function of the
//! report per form), and [`Presentation`], a presenter as the session loop
//! uses it: with `--repeat N`, each repeat's text one after the other, and
//! the CSV and mode's files of the first repeat.

use crate::failure::Failure;
use iosurvey_model::document::RunReport;
use iosurvey_report::{render_csv, TextOptions};
use std::borrow::Cow;
use std::path::PathBuf;

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
    fn file_bodies(&self, _report: &RunReport) -> Vec<FileBody> {
        Vec::new()
    }
    /// The mode's own files under names iosurvey makes up rather than
    /// paths the user gave (ORION's `<testname>_<minute>_*`): the sets of
    /// names the run may take, best first, each in `file_bodies`' order.
    /// The run takes the first set none of whose names is there (nobody
    /// offered what is), and claims it when it is planned (see
    /// `crate::made_up`), so that runs started together each take their
    /// own. Empty: the mode's files are `files`.
    fn made_up_files(&self, _report: &RunReport) -> Vec<Vec<(String, PathBuf)>> {
        Vec::new()
    }
    /// Told that the run's files are set `k` of `made_up_files`, for the
    /// mode to say so when it is not the first.
    fn took_files(&self, _report: &RunReport, _k: usize) {}
    /// The start of `text` that later points cannot change, printed on
    /// stdout as the run goes (so a reader sees lines early, and a closed
    /// stdout is found early); `None` prints the text only at the end.
    fn text_so_far(&self, _report: &RunReport, _opts: TextOptions) -> Option<String> {
        None
    }
}

/// What one of a mode's own files holds.
pub enum FileBody {
    /// This text.
    Text(String),
    /// The JSON report itself (`to_json` of the report the bodies were
    /// asked of): saved as `--json` is, each new point appended.
    Report,
}

/// A presenter made of a text function, with the generic CSV.
pub struct TextOnly(pub fn(&RunReport, TextOptions) -> String);

impl Presenter for TextOnly {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        (self.0)(report, opts)
    }
}

/// A mode's presenter over a run of `repeats` repeats (`--repeat`): the
/// text of each repeat, one after the other, each under a line that names
/// it; the CSV and the mode's own files of the first repeat (the JSON and
/// the HTML keep them all). One repeat is the presenter itself.
#[derive(Clone, Copy)]
pub struct Presentation<'a> {
    pub presenter: &'a dyn Presenter,
    pub repeats: u32,
}

impl Presentation<'_> {
    pub fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        if self.repeats <= 1 {
            return self.presenter.text(report, opts);
        }
        let mut out = String::new();
        for k in 0..report.repeats {
            let one = report.repeat(k);
            if one.points.is_empty() {
                break;
            }
            out.push_str(&format!("# repeat {} of {}\n", k + 1, report.repeats));
            out.push_str(&self.presenter.text(&one, opts));
        }
        out
    }
    /// The CSV of [`Presentation::files_report`].
    pub fn csv(&self, shown: &RunReport) -> String {
        self.presenter.csv(shown)
    }
    /// What the mode says as a point ends, of the repeat it is in.
    pub fn after_point(&self, report: &RunReport) -> Result<(), Failure> {
        if self.repeats <= 1 {
            return self.presenter.after_point(report);
        }
        let k = report.points.last().map_or(0, |p| p.repeat);
        self.presenter.after_point(&report.repeat(k))
    }
    pub fn files(&self, report: &RunReport) -> Vec<(String, PathBuf)> {
        self.presenter.files(report)
    }
    /// The report the mode's own files and the CSV show: the first
    /// repeat's over several.
    pub fn files_report<'r>(&self, report: &'r RunReport) -> Cow<'r, RunReport> {
        match self.repeats {
            0 | 1 => Cow::Borrowed(report),
            _ => Cow::Owned(report.repeat(0)),
        }
    }
    /// The bodies of the mode's own files, of [`Presentation::files_report`]
    /// (which a [`FileBody::Report`] is).
    pub fn file_bodies(&self, shown: &RunReport) -> Vec<FileBody> {
        self.presenter.file_bodies(shown)
    }
    pub fn made_up_files(&self, report: &RunReport) -> Vec<Vec<(String, PathBuf)>> {
        self.presenter.made_up_files(report)
    }
    pub fn took_files(&self, report: &RunReport, k: usize) {
        self.presenter.took_files(report, k)
    }
    /// The settled start of the text; none over several repeats (each
    /// repeat's text is whole only at its end).
    pub fn text_so_far(&self, report: &RunReport, opts: TextOptions) -> Option<String> {
        match self.repeats {
            0 | 1 => self.presenter.text_so_far(report, opts),
            _ => None,
        }
    }
}
