//! The engine flags every mode takes (`--sqpoll`, `--hipri`, `--cpus`,
//! `--compressible`): part of each mode's spec, written into every job of
//! its plan by its `expand`, so that a plan is whole as expanded (what
//! `--dry-run` prints is what runs, on every rank).

use crate::{Job, Plan};
use iosurvey_model::{DataFill, SqPoll};

/// How the engine runs every job of a plan. The default is what a plan
/// without the flags runs with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineFlags {
    /// io_uring's kernel thread polls the submission queue (`--sqpoll`).
    pub sqpoll: Option<SqPoll>,
    /// io_uring polls for completions (`--hipri`).
    pub iopoll: bool,
    /// CPUs the worker threads are pinned to, round-robin (`--cpus`).
    pub cpus: Vec<u32>,
    /// What the writes hold (`--compressible`).
    pub fill: DataFill,
}

impl EngineFlags {
    /// Writes the flags into `job`.
    pub fn write(&self, job: &mut Job) {
        job.sqpoll = self.sqpoll;
        job.iopoll = self.iopoll;
        job.cpus.clone_from(&self.cpus);
        job.fill = self.fill;
    }

    /// `plan` with the flags written into every job.
    pub fn written(&self, mut plan: Plan) -> Plan {
        for p in &mut plan.points {
            self.write(&mut p.job);
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::run::{expand, RunSpec};

    #[test]
    fn expand_writes_the_flags_into_every_job() {
        let mut spec = RunSpec::new(vec!["/dev/null".into()]);
        let plain = expand(&spec).unwrap();
        assert!(plain.points.iter().all(|p| p.job.cpus.is_empty()
            && !p.job.iopoll
            && p.job.sqpoll.is_none()
            && p.job.fill == DataFill::default()));
        spec.engine_flags = EngineFlags {
            sqpoll: Some(SqPoll {
                cpu: Some(1),
                idle_ms: 1000,
            }),
            iopoll: true,
            cpus: vec![0, 1],
            fill: DataFill {
                compressible_pct: 40,
            },
        };
        let plan = expand(&spec).unwrap();
        for p in &plan.points {
            assert_eq!(p.job.cpus, [0, 1]);
            assert!(p.job.iopoll);
            assert_eq!(p.job.sqpoll.map(|s| s.cpu), Some(Some(1)));
            assert_eq!(p.job.fill.compressible_pct, 40);
        }
    }
}
