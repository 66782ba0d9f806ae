//! Where a run of several points is: "point 17 of 95, about 3 min left".
//! The time left is the planned length of the points still to run (each
//! one's time and ramp), scaled by how long the points so far took against
//! their plan (laying out files, setting up and draining take time too); a
//! point bounded by bytes alone is counted at the mean length of those of
//! its kind done so far, and until one is done the time left is not said.

use iosurvey_workload::{Plan, Point};
use std::time::Duration;

/// A run of a plan of several points (repeats included), and how long
/// the points done took.
pub(crate) struct PlanProgress {
    /// Each run of a point in order: its planned length, when known.
    planned: Vec<Option<Duration>>,
    /// The run under way.
    at: usize,
    /// Taken by the runs done with a planned length, and their plan.
    known: (Duration, Duration),
    /// Taken by the runs done without one, and how many.
    unknown: (Duration, u32),
}

/// The planned length of `point`: its time and ramp, or a paced video
/// point's frames over its rate; none for one bounded by bytes alone. A
/// point the mode skips takes none.
pub(crate) fn planned(point: &Point) -> Option<Duration> {
    if point.skip.is_some() {
        return Some(Duration::ZERO);
    }
    let b = &point.job.bounds;
    let paced = point
        .job
        .frames()
        .and_then(|f| f.fps.map(|r| r.duration_of(f.transfers())));
    b.time.map(|t| t + b.ramp).or(paced)
}

impl PlanProgress {
    /// For `plan` run `repeats` times; `None` for a single point, which
    /// its own bar says enough about.
    pub(crate) fn of(plan: &Plan, repeats: u32) -> Option<Self> {
        let planned: Vec<Option<Duration>> = (0..repeats.max(1))
            .flat_map(|_| plan.points.iter().map(planned))
            .collect();
        (planned.len() > 1).then_some(PlanProgress {
            planned,
            at: 0,
            known: (Duration::ZERO, Duration::ZERO),
            unknown: (Duration::ZERO, 0),
        })
    }

    /// Run `at` starts; the one before took `took` (from its start to
    /// this one's).
    pub(crate) fn start(&mut self, at: usize, took: Option<Duration>) {
        if let (Some(took), Some(prev)) = (took, self.planned.get(self.at)) {
            match prev {
                Some(p) => {
                    self.known.0 += took;
                    self.known.1 += *p;
                }
                None => {
                    self.unknown.0 += took;
                    self.unknown.1 += 1;
                }
            }
        }
        self.at = at;
    }

    /// What is left of the plan, `into` the run under way; `None` when a
    /// point still to run has no planned length and none like it is done.
    pub(crate) fn left(&self, into: Duration) -> Option<Duration> {
        // Real over planned, once a planned point is done.
        let scale = match self.known.1.is_zero() {
            true => 1.0,
            false => self.known.0.as_secs_f64() / self.known.1.as_secs_f64(),
        };
        let unknown_each = match self.unknown.1 {
            0 => None,
            n => Some(self.unknown.0.as_secs_f64() / f64::from(n)),
        };
        let mut secs = 0.0;
        for p in self.planned.get(self.at..).unwrap_or_default() {
            secs += match p {
                Some(d) => d.as_secs_f64() * scale,
                None => unknown_each?,
            };
        }
        Some(Duration::from_secs_f64(
            (secs - into.as_secs_f64()).max(0.0),
        ))
    }

    /// "point 17 of 95, about 3 min left", `into` the run under way.
    pub(crate) fn text(&self, into: Duration) -> String {
        let mut s = format!("point {} of {}", self.at + 1, self.planned.len());
        if let Some(left) = self.left(into) {
            s.push_str(&format!(", about {} left", approx(left)));
        }
        s
    }
}

/// A time left as people say it: "40 s", "3 min", "1 h 20 min".
fn approx(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(planned: &[Option<u64>]) -> PlanProgress {
        PlanProgress {
            planned: planned.iter().map(|p| p.map(Duration::from_secs)).collect(),
            at: 0,
            known: (Duration::ZERO, Duration::ZERO),
            unknown: (Duration::ZERO, 0),
        }
    }

    #[test]
    fn the_time_left_is_the_plan_scaled_by_what_the_points_took() {
        let mut p = progress(&[Some(10), Some(10), Some(10), Some(10)]);
        assert_eq!(p.text(Duration::ZERO), "point 1 of 4, about 40 s left");
        assert_eq!(
            p.left(Duration::from_secs(4)),
            Some(Duration::from_secs(36))
        );
        // The first took 15 s, not 10: the rest will take half as long again.
        p.start(1, Some(Duration::from_secs(15)));
        assert_eq!(p.left(Duration::ZERO), Some(Duration::from_secs(45)));
        assert_eq!(p.text(Duration::ZERO), "point 2 of 4, about 45 s left");
        p.start(3, Some(Duration::from_secs(15)));
        assert_eq!(
            p.text(Duration::from_secs(20)),
            "point 4 of 4, about 0 s left"
        );
    }

    #[test]
    fn a_point_of_unknown_length_is_counted_once_one_like_it_is_done() {
        let mut p = progress(&[None, None, Some(60)]);
        assert_eq!(p.text(Duration::ZERO), "point 1 of 3");
        p.start(1, Some(Duration::from_secs(30)));
        assert_eq!(p.left(Duration::ZERO), Some(Duration::from_secs(90)));
        assert_eq!(approx(Duration::from_secs(4800)), "1 h 20 min");
    }
}
