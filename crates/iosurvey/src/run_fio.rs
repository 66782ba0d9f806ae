//! `run --fio JOB.fio`, after clap: the job file in the report, its
//! sections above the text, and the jobs after a `stonewall` as the run's
//! later points, one after another over the same targets.

use iosurvey_model::document::{FioJobFile, RunReport};
use iosurvey_report::TextOptions;
use iosurvey_session::presenter::Presenter;
use iosurvey_workload::Plan;

/// A run made from a fio job file: what its report keeps, how many
/// targets its `filename=` options gave, its sections point by point, and
/// the lines of the points after the first.
pub struct FromJobFile {
    pub job: FioJobFile,
    pub targets: usize,
    pub points: Vec<Vec<String>>,
    pub later: Vec<Vec<String>>,
}

/// `[a] [b]`: a point's sections.
fn named(sections: &[String]) -> String {
    sections
        .iter()
        .map(|s| format!("[{s}]"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The run's points, each after the one before, its label led by its
/// sections when there are several points.
pub fn one_after_another(first: Plan, later: Vec<Plan>, points: &[Vec<String>]) -> Plan {
    let mut plan = Plan {
        mode: first.mode.clone(),
        points: Vec::new(),
    };
    for p in std::iter::once(first).chain(later).flat_map(|p| p.points) {
        plan.points.push(p);
    }
    if plan.points.len() > 1 {
        for (i, (p, sections)) in plan.points.iter_mut().zip(points).enumerate() {
            p.index = i;
            p.label = format!("{} {}", named(sections), p.label);
        }
    }
    plan
}

/// `run`'s text, and with `--fio` the job file's sections that ran (and
/// what ran otherwise than written) above it, and the job file in the
/// report.
pub struct RunPresenter {
    pub job: Option<FioJobFile>,
    /// The sections of each point.
    pub points: Vec<Vec<String>>,
}

impl Presenter for RunPresenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        let text = iosurvey_report::render_text(report, opts);
        let Some(job) = &self.job else {
            return text;
        };
        let order: Vec<String> = self.points.iter().map(|p| named(p)).collect();
        let mut head = format!("fio job file {}: ran {}\n", job.file, order.join(", then "));
        for n in &job.notes {
            head.push_str(&format!("  note: {n}\n"));
        }
        head + &text
    }

    fn annotate(&self, report: &mut RunReport) {
        report.fio_job = self.job.clone();
    }
}
