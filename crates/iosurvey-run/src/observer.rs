//! Hooks the runner calls while a plan runs: progress bars, live interval
//! streams and saving each point as it finishes implement them.

use crate::{IntervalRow, JobResult, LiveSnapshot};
use iosurvey_workload::Point;

/// Running totals of the measured phase so far, over all workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub ops: u64,
    pub bytes: u64,
    /// Nanoseconds since the job's workers started (ramp included).
    pub elapsed_ns: u64,
}

/// Every hook has a no-op default.
pub trait Observer {
    /// A point is about to run.
    fn point_started(&mut self, _point: &Point) {}
    /// Called about ten times a second while a point runs.
    fn tick(&mut self, _point: &Point, _progress: Progress) {}
    /// A point has finished (or was cut short).
    fn point_finished(&mut self, _point: &Point, _result: &JobResult) {}
    /// Whether [`Observer::live`] is wanted: the workers then publish
    /// their classes once per interval of the measured phase.
    fn wants_live(&self) -> bool {
        false
    }
    /// The point's classes so far, added up over its workers, at each
    /// tick when wanted.
    fn live(&mut self, _point: &Point, _snapshot: &LiveSnapshot) {}
    /// Intervals every worker is past, each stream's reads and writes
    /// with their latency percentiles, in order of interval. Once the
    /// workers are done, called with `last` and the rest, whose latest
    /// interval is the point's last (cut by its end), before
    /// [`Observer::point_finished`].
    fn intervals(&mut self, _point: &Point, _rows: &[IntervalRow], _last: bool) {}
}

/// Observes nothing.
pub struct NoObserver;
impl Observer for NoObserver {}
