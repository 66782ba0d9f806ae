//! Opening a plan's targets through the target layer's write guard, and
//! removing the test files iosurvey created when the targets go out of scope
//! (after success, an error, or Ctrl-C).

use crate::failure::Failure;
use crate::TargetOptions;
use iosurvey_run::validate;
use iosurvey_run::verify_state::{capacity, forget, state_path};
use iosurvey_target::frame_target::{open_frame_dir, plan_frame_dir};
use iosurvey_target::guard::leftovers::remove_leftovers;
use iosurvey_target::guard::{Refusal, WritePolicy};
use iosurvey_target::target::{
    open_target_claimed, overlap, plan_target, Claim, Geometry, Identity, OpenOptions, OpenTarget,
    TargetError, TargetKind,
};
use iosurvey_workload::{FrameJob, FrameLayout, Job, Plan};
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The opened targets of a plan; created test files are removed on drop
/// unless `--keep` was given.
pub struct Targets {
    list: Vec<OpenTarget>,
    keep: bool,
    /// `--verify`, and its `--verify-state DIR`: a verify state beside a
    /// test file this run created goes with the file.
    verify: Option<Option<PathBuf>>,
}

impl Deref for Targets {
    type Target = [OpenTarget];
    fn deref(&self) -> &[OpenTarget] {
        &self.list
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        for t in &self.list {
            t.release();
        }
        if self.keep {
            for t in &self.list {
                t.keep_created();
            }
            return;
        }
        for t in &self.list {
            if let (Some(dir), true) = (&self.verify, t.created.any()) {
                if let Ok(p) = state_path(&t.path, dir.as_deref()) {
                    if let Err(e) = forget(&p, capacity(&t.path, t.size)) {
                        eprintln!(
                            "iosurvey: could not remove the verify state {}: {e}",
                            p.display()
                        );
                    }
                }
            }
            if let Err(e) = t.remove_if_created() {
                let what = match t.kind {
                    TargetKind::Directory => "the frames in",
                    _ => "test file",
                };
                eprintln!(
                    "iosurvey: could not remove {what} {}: {e}",
                    t.path.display()
                );
                crate::failure::left_behind();
            }
        }
    }
}

fn target_error(e: TargetError) -> Failure {
    match e {
        e @ TargetError::Io { .. } => Failure::Run(e.into()),
        e @ TargetError::Interrupted(_) => Failure::Interrupted(e.into()),
        e => Failure::Usage(e.into()),
    }
}

fn options<'a>(
    plan: &Plan,
    t: usize,
    flags: &TargetOptions,
    stop: &'a AtomicBool,
) -> OpenOptions<'a> {
    OpenOptions {
        write: plan.points.iter().any(|p| p.job.writes_target(t)),
        trim: plan.points.iter().any(|p| p.job.trims_target(t)),
        direct: !flags.buffered,
        policy: WritePolicy {
            allow_destroy: flags.allow_destroy,
            force: flags.force,
            readonly: flags.readonly,
        },
        stop: Some(stop),
    }
}

fn check(job: &Job, geometry: &[Geometry]) -> Result<(), Failure> {
    validate(job, geometry).map_err(|e| Failure::Usage(e.into()))
}

/// A files-per-frame video job's target is a directory of frames.
fn frame_dir(plan: &Plan) -> Option<&FrameJob> {
    plan.points
        .first()?
        .job
        .frames()
        .filter(|f| matches!(f.layout, FrameLayout::Files { .. }))
}

/// How this run holds its targets: locked, unless `--shared`.
fn claim(flags: &TargetOptions, expect: Option<Identity>) -> Claim {
    Claim {
        shared: flags.shared,
        expect,
    }
}

/// What planning found: the geometry of every target of the plan, and its
/// identity (none for a frames directory).
type Planned = (Vec<Geometry>, Vec<Option<Identity>>);

/// The geometry of every target of `plan` (the first point's), found
/// through the write guard without creating or writing anything, with
/// every point checked against it. The same target named twice (by a
/// symlink, an alias, a hard link) is refused.
fn plan_all(plan: &Plan, flags: &TargetOptions, stop: &AtomicBool) -> Result<Planned, Failure> {
    let Some(first) = plan.points.first() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let specs = &first.job.targets;
    let mut geometry = Vec::with_capacity(specs.len());
    let mut identity: Vec<Option<Identity>> = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let opts = options(plan, i, flags, stop);
        let (g, id) = match frame_dir(plan) {
            Some(fj) => (plan_frame_dir(spec, fj, opts).map_err(target_error)?, None),
            None => {
                let p = plan_target(spec, opts, &claim(flags, None)).map_err(target_error)?;
                (p.geometry, Some(p.identity))
            }
        };
        if let Some(j) = identity.iter().position(|o| id.is_some() && *o == id) {
            return Err(target_error(
                Refusal::SameTarget {
                    first: specs[j].path.clone(),
                    second: spec.path.clone(),
                }
                .into(),
            ));
        }
        geometry.push(g);
        identity.push(id);
    }
    overlap::check_overlap(specs, &identity).map_err(|r| target_error(r.into()))?;
    for p in &plan.points {
        check(&p.job, &geometry)?;
    }
    Ok((geometry, identity))
}

/// Checks the targets of `plan` as a run would (the write guard, their
/// geometry against every point), creating and writing nothing: what
/// `--dry-run` does before it prints the plan.
pub fn check_all(plan: &Plan, flags: &TargetOptions) -> Result<(), Failure> {
    identities(plan, flags).map(|_| ())
}

/// [`check_all`], giving what each target is (by identity, not by name).
pub fn identities(plan: &Plan, flags: &TargetOptions) -> Result<Vec<Option<Identity>>, Failure> {
    plan_all(plan, flags, &AtomicBool::new(false)).map(|(_, id)| id)
}

/// Refuses, among targets of one host that several processes (MPI ranks)
/// were given, one target named twice (an alias, a hard link) and devices
/// that overlap, as [`check_all`] does for the targets of one process.
pub fn check_together(names: &[PathBuf], identity: &[Option<Identity>]) -> Result<(), Failure> {
    overlap::check_together(names, identity).map_err(|r| target_error(r.into()))
}

/// Removes the test files that runs killed before their clean-up left in
/// the directory target `dir`, one line on stderr each.
fn clean_leftovers(dir: &std::path::Path) {
    for l in remove_leftovers(dir) {
        match l.removed {
            Ok(()) => eprintln!(
                "iosurvey: removed {}, a test file left behind by run {} that ended without cleaning up",
                l.path.display(),
                l.pid
            ),
            Err(e) => eprintln!(
                "iosurvey: could not remove {}, a test file left behind by run {}: {e}",
                l.path.display(),
                l.pid
            ),
        }
    }
}

/// Opens the targets every point of `plan` shares (the first point's), once
/// for the whole plan. The guard and every point's settings are checked
/// before any test file is laid out, and again against what was opened.
pub fn open_all(
    plan: &Plan,
    flags: &TargetOptions,
    quiet: bool,
    banner: Option<&str>,
    stop: &AtomicBool,
) -> Result<Targets, Failure> {
    let Some(first) = plan.points.first() else {
        return Ok(Targets {
            list: Vec::new(),
            keep: flags.keep,
            verify: None,
        });
    };
    let specs = &first.job.targets;
    let (planned, identities) = plan_all(plan, flags, stop)?;
    if let Some(line) = banner {
        eprintln!("{line}");
    }
    let mut out = Targets {
        list: Vec::with_capacity(specs.len()),
        keep: flags.keep,
        verify: plan
            .points
            .iter()
            .find(|p| p.job.verify)
            .map(|p| p.job.verify_state.clone()),
    };
    for (i, ((spec, g), id)) in specs.iter().zip(&planned).zip(identities).enumerate() {
        if let Some(fj) = frame_dir(plan) {
            out.list.push(
                open_frame_dir(spec, fj, options(plan, i, flags, stop)).map_err(target_error)?,
            );
            continue;
        }
        if !quiet && !g.path.exists() {
            eprintln!(
                "iosurvey: laying out {} bytes of test data in {}",
                g.size,
                g.path.display()
            );
        }
        if matches!(id, Some(Identity::New { .. })) && spec.path.is_dir() {
            clean_leftovers(&spec.path);
        }
        let opts = options(plan, i, flags, stop);
        out.list
            .push(open_target_claimed(spec, opts, &claim(flags, id)).map_err(target_error)?);
    }
    let opened: Vec<_> = out.list.iter().map(|t| t.geometry()).collect();
    for p in &plan.points {
        check(&p.job, &opened)?;
    }
    Ok(out)
}
