//! Opening a job's targets behind the write guard, and removing the test
//! files iosurvey created when the targets go out of scope (after success,
//! an error, or Ctrl-C).

use crate::cli::TargetFlags;
use crate::exit::{usage, Failure};
use anyhow::anyhow;
use iosurvey_run::{open_target, plan_geometry, validate, OpenTarget, TargetError};
use iosurvey_workload::Job;
use std::ops::Deref;

/// The opened targets of one job; created test files are removed on drop
/// unless `--keep` was given.
pub struct Targets {
    list: Vec<OpenTarget>,
    keep: bool,
}

impl Deref for Targets {
    type Target = [OpenTarget];
    fn deref(&self) -> &[OpenTarget] {
        &self.list
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for t in &self.list {
            if let Err(e) = t.remove_if_created() {
                eprintln!(
                    "iosurvey: could not remove test file {}: {e}",
                    t.path.display()
                );
            }
        }
    }
}

fn target_error(e: TargetError) -> Failure {
    match e {
        e @ TargetError::Io { .. } => Failure::Run(e.into()),
        e => Failure::Usage(e.into()),
    }
}

/// Refuses writes the user did not allow, before anything is opened.
fn guard_writes(job: &Job, flags: &TargetFlags) -> Result<(), Failure> {
    for (i, spec) in job.targets.iter().enumerate() {
        if !job.writes_target(i) {
            continue;
        }
        let path = &spec.path;
        if flags.readonly {
            return usage(anyhow!(
                "{}: --readonly refuses write workloads",
                path.display()
            ));
        }
        if flags.allow_destroy {
            continue;
        }
        if let Ok(meta) = std::fs::metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            if meta.file_type().is_block_device() {
                return usage(anyhow!(
                    "{}: refusing to write to a block device without --allow-destroy; it would destroy its data",
                    path.display()
                ));
            }
            if meta.is_file() {
                return usage(anyhow!(
                    "{}: refusing to overwrite an existing file iosurvey did not create; add --allow-destroy, or name a new file with --size",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Opens every target of `job`, refusing writes the user did not allow and
/// settings that do not fit, all before any test file is laid out.
pub fn open_all(job: &Job, flags: &TargetFlags, quiet: bool) -> Result<Targets, Failure> {
    guard_writes(job, flags)?;
    let planned = job
        .targets
        .iter()
        .map(|spec| plan_geometry(spec, job.direct))
        .collect::<Result<Vec<_>, _>>()
        .map_err(target_error)?;
    if let Err(e) = validate(job, &planned) {
        return usage(e);
    }
    let mut out = Targets {
        list: Vec::with_capacity(job.targets.len()),
        keep: flags.keep,
    };
    for (i, spec) in job.targets.iter().enumerate() {
        if !quiet && spec.create_size.is_some() && !spec.path.exists() {
            eprintln!(
                "iosurvey: laying out {} bytes of test data in {}",
                spec.create_size.unwrap_or(0),
                spec.path.display()
            );
        }
        out.list
            .push(open_target(spec, job.writes_target(i), job.direct).map_err(target_error)?);
    }
    let opened: Vec<_> = out.list.iter().map(|t| t.geometry()).collect();
    if let Err(e) = validate(job, &opened) {
        return usage(e);
    }
    Ok(out)
}
