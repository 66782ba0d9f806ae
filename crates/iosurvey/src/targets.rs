//! Opening a job's targets behind the write guard, and removing the test
//! files iosurvey created when the targets go out of scope (after success,
//! an error, or Ctrl-C).

use crate::cli::TargetFlags;
use crate::exit::{usage, Failure};
use anyhow::anyhow;
use iosurvey_run::{open_target, OpenTarget, TargetError};
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

/// Opens every target of `job`, refusing writes the user did not allow.
pub fn open_all(job: &Job, flags: &TargetFlags, quiet: bool) -> Result<Targets, Failure> {
    let mut out = Targets {
        list: Vec::with_capacity(job.targets.len()),
        keep: flags.keep,
    };
    for (i, spec) in job.targets.iter().enumerate() {
        let write = job.writes_target(i);
        let path = &spec.path;
        if write && flags.readonly {
            return usage(anyhow!(
                "{}: --readonly refuses write workloads",
                path.display()
            ));
        }
        if write && !flags.allow_destroy {
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
        if !quiet && spec.create_size.is_some() && !path.exists() {
            eprintln!(
                "iosurvey: laying out {} bytes of test data in {}",
                spec.create_size.unwrap_or(0),
                path.display()
            );
        }
        match open_target(spec, write, job.direct) {
            Ok(t) => out.list.push(t),
            Err(e @ TargetError::Io { .. }) => return Err(Failure::Run(e.into())),
            Err(e) => return usage(e),
        }
    }
    Ok(out)
}
