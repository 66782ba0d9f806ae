//! Live metrics (`--metrics-file`, `--metrics-push`): what the workers
//! publish at each interval boundary, written out for Prometheus at the
//! first tick after it, and each point's whole figures at its end. The
//! file is replaced whole (a new file renamed over it, through the output
//! guard), so a reader never sees half of one. A failed write or push is
//! said once; the run goes on and exits 1.

use crate::metrics_push::{Gateway, Pusher};
use crate::metrics_text::{render, PointLabels, RunLabels, TargetLabels};
use crate::output::write_out;
use iosurvey_model::document::{PointReport, RunReport, TargetReport};
use iosurvey_model::{EngineFeatures, EngineKind};
use iosurvey_run::{JobResult, LiveSnapshot};
use iosurvey_target::output::path::OutPath;
use iosurvey_workload::{Plan, Point};

/// The exporter of one run.
pub struct Metrics {
    file: Option<OutPath>,
    push: Option<Pusher>,
    run: RunLabels,
    /// Every target of the run, with its device's labels.
    known: Vec<TargetLabels>,
    /// The running point's targets (indexes into its job's) and streams.
    targets: Vec<TargetLabels>,
    point: PointLabels,
    /// Intervals of the running point exported so far.
    exported: u64,
    /// How many times each point has started.
    starts: Vec<u32>,
    /// The first failure said, when one was.
    pub failed: Option<String>,
    shape: PlanShape,
}

impl Metrics {
    /// An exporter for the run `report` heads, on `targets` as opened,
    /// writing `file` and pushing to `gateway` (both checked already).
    pub fn new(
        file: Option<OutPath>,
        gateway: Option<Gateway>,
        (report, plan, targets): (&RunReport, &Plan, &[TargetReport]),
    ) -> Metrics {
        let shape = PlanShape::new(report, plan, targets);
        Metrics {
            file,
            push: gateway.map(Pusher::start),
            run: RunLabels {
                host: report.host.hostname.clone(),
                plan: shape.hash(),
                mode: report.mode.clone(),
                label: report.label.clone().unwrap_or_default(),
                version: report.tool.version.clone(),
            },
            known: targets
                .iter()
                .map(|t| {
                    let d = t.device.as_ref();
                    let field =
                        |f: fn(&iosurvey_model::document::DeviceReport) -> &Option<String>| {
                            d.and_then(|d| f(d).clone()).unwrap_or_default()
                        };
                    TargetLabels {
                        path: t.path.clone(),
                        model: field(|d| &d.model),
                        firmware: field(|d| &d.firmware),
                    }
                })
                .collect(),
            targets: Vec::new(),
            point: PointLabels::default(),
            exported: 0,
            starts: vec![0; plan.points.len()],
            failed: None,
            shape,
        }
    }

    /// A point starts: its labels, and an exposition with nothing counted
    /// yet (the run's info).
    pub fn point_started(&mut self, point: &Point) {
        self.targets = point
            .job
            .targets
            .iter()
            .map(|t| {
                let path = t.path.display().to_string();
                // A directory given is reported by the file (or the
                // frames directory) iosurvey made in it.
                let inside = format!("{}/", path.trim_end_matches('/'));
                self.known
                    .iter()
                    .find(|k| k.path == path)
                    .or_else(|| self.known.iter().find(|k| k.path.starts_with(&inside)))
                    .cloned()
                    .unwrap_or(TargetLabels {
                        path,
                        ..TargetLabels::default()
                    })
            })
            .collect();
        self.point = PointLabels {
            label: point.label.clone(),
            repeat: self.started(point.index),
            stream_target: point.job.streams.iter().map(|s| s.target).collect(),
        };
        self.exported = 0;
        self.export(&LiveSnapshot::default());
    }

    /// Counts a start of point `index`: which run of it this is, from 0.
    fn started(&mut self, index: usize) -> u32 {
        match self.starts.get_mut(index) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => 0,
        }
    }

    /// The workers' classes at a tick: exported when an interval ended
    /// since the last export.
    pub fn live(&mut self, snapshot: &LiveSnapshot) {
        if snapshot.intervals > self.exported {
            self.exported = snapshot.intervals;
            self.export(snapshot);
        }
    }

    /// The point's whole figures.
    pub fn point_finished(&mut self, point: &Point, result: &JobResult) {
        // The plan as its report will say it, with what the engine
        // managed: its final figures carry the hash the database keeps.
        if let Some(plan) = self.shape.ran(point.index, result) {
            self.run.plan = plan;
        }
        self.export(&LiveSnapshot::of(result, u64::MAX));
    }

    /// The run is over: the last push waited for. The failure, if any
    /// write or push failed.
    pub fn finish(&mut self) -> Option<String> {
        if let Some(p) = &mut self.push {
            if let Some(why) = p.finish() {
                self.fail(why);
            }
        }
        self.failed.clone()
    }

    fn export(&mut self, snapshot: &LiveSnapshot) {
        let body = render(&self.run, &self.targets, &self.point, snapshot);
        if let Some(out) = &self.file {
            if let Err(e) = write_out(out, &body, false, None) {
                self.fail(crate::output::failure_text(&e));
            }
        }
        if let Some(p) = &mut self.push {
            p.push(body);
            if let Some(why) = p.new_failure() {
                self.fail(why);
            }
        }
    }

    /// Says a failure on stderr, the first of each kind once.
    fn fail(&mut self, why: String) {
        if self.failed.as_ref().is_some_and(|f| *f == why) {
            return;
        }
        eprintln!("iosurvey: {why}; the run goes on and will exit 1");
        self.failed.get_or_insert(why);
    }
}

/// The plan as its report will say it, to hash as the history database
/// will: each point made from a result with nothing measured, until it
/// has run. What the engine managed (registered files and buffers, the
/// polling asked for) is known only once a point has run: the points still
/// to run are taken to get what the last one got, and at first what they
/// ask for (an io_uring engine registers both when the kernel allows). The
/// hash is made again only when a point got otherwise.
struct PlanShape {
    report: RunReport,
    plan: Plan,
    targets: Vec<TargetReport>,
    /// What each point's report was made with, and whether it has run.
    used: Vec<(Managed, bool)>,
    /// What the points still to run are taken to get.
    guess: Option<Managed>,
}

/// What an engine managed that the plan's hash holds: registered files,
/// fixed buffers, submission polling, completion polling.
type Managed = (bool, bool, bool, bool);

fn managed(e: &EngineFeatures) -> Managed {
    (e.registered_files, e.fixed_buffers, e.sqpoll, e.iopoll)
}

impl PlanShape {
    fn new(report: &RunReport, plan: &Plan, targets: &[TargetReport]) -> PlanShape {
        let mut shape = PlanShape {
            report: report.clone(),
            plan: plan.clone(),
            targets: targets.to_vec(),
            used: Vec::with_capacity(plan.points.len()),
            guess: None,
        };
        let ram = shape.report.host.memory_bytes;
        shape.report.points = plan
            .points
            .iter()
            .map(|p| {
                let uring = p.job.engine == EngineKind::Uring;
                let engine = EngineFeatures {
                    registered_files: uring,
                    fixed_buffers: uring,
                    sqpoll: uring && p.job.sqpoll.is_some(),
                    iopoll: uring && p.job.iopoll,
                    ..Default::default()
                };
                shape.used.push((managed(&engine), false));
                PointReport::new(p, targets, &unmeasured(p, engine), ram)
            })
            .collect();
        shape
    }

    /// Point `index` ran with `result`: the new hash, when it changed.
    fn ran(&mut self, index: usize, result: &JobResult) -> Option<String> {
        let ram = self.report.host.memory_bytes;
        let got = managed(&result.engine);
        let mut changed = false;
        if let (Some(p), Some(u)) = (self.plan.points.get(index), self.used.get_mut(index)) {
            if u.0 != got {
                self.report.points[index] = PointReport::new(p, &self.targets, result, ram);
                changed = true;
            }
            *u = (got, true);
        }
        if self.guess != Some(got) {
            self.guess = Some(got);
            for (i, p) in self.plan.points.iter().enumerate() {
                let (made_with, has_run) = self.used[i];
                if !has_run && made_with != got {
                    let r = unmeasured(p, result.engine);
                    self.report.points[i] = PointReport::new(p, &self.targets, &r, ram);
                    self.used[i].0 = got;
                    changed = true;
                }
            }
        }
        changed.then(|| self.hash())
    }

    fn hash(&self) -> String {
        iosurvey_db::hash::plan_hash(&self.report)
    }
}

/// A result of `p` with nothing measured, from an engine with `engine`.
fn unmeasured(p: &Point, engine: EngineFeatures) -> JobResult {
    JobResult {
        streams: vec![Default::default(); p.job.streams.len()],
        engine,
        ..Default::default()
    }
}
