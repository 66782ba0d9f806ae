//! Opening targets: probing files and block devices (size, logical and
//! physical block size, rotational flag, O_DIRECT), creating and laying out
//! test files with non-zero, incompressible data, and removing them. Each
//! target is opened once and judged by its descriptor (see `open`).

mod backing;
mod claim;
pub mod device;
mod discard;
mod hold;
mod kernel_fs;
mod layout;
pub mod link;
mod open;
mod opened;
pub mod overlap;
mod probe;

use crate::guard::Refusal;
use iosurvey_workload::TargetSpec;
use std::path::{Path, PathBuf};

pub(crate) use backing::memory_backing;
pub use claim::{created_by_iosurvey, Claim, Identity};
pub use iosurvey_model::TargetKind;
pub(crate) use kernel_fs::kernel_fs;
pub(crate) use layout::{check_free_space, dir_dio_alignment, fill};
pub use open::test_file_name;
pub(crate) use opened::io_err;
pub use opened::{Created, Geometry, OpenOptions, OpenTarget, TargetError};
pub use probe::{plan_geometry, plan_target, Planned};

/// The test file iosurvey creates inside a directory target.
pub fn test_file_in(dir: &Path) -> PathBuf {
    dir.join(test_file_name())
}

/// Opens (creating and laying out if needed) the target of `spec`, after
/// the write guard has allowed it, locked for this run.
pub fn open_target(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<OpenTarget, TargetError> {
    open_target_claimed(spec, opts, &Claim::default())
}

/// [`open_target`], held as `claim` says; refused when the target is not
/// the one planned (`claim.expect`).
pub fn open_target_claimed(
    spec: &TargetSpec,
    opts: OpenOptions<'_>,
    claim: &Claim,
) -> Result<OpenTarget, TargetError> {
    let found = open::find(spec)?;
    if opts.trim {
        discard::check_discard(&found)?;
    }
    if claim
        .expect
        .as_ref()
        .is_some_and(|e| *e != found.identity())
    {
        return Err(Refusal::Changed(found.path().to_path_buf()).into());
    }
    match &found {
        open::Found::Existing { path, kind, .. } => {
            let (fd, hold) = open::open_existing(&found, &opts, claim, opts.write)?;
            let mut t = open::describe(
                path,
                *kind,
                fd,
                false,
                opts.write,
                opts.direct,
                spec.create_size,
            )?;
            t.hold = hold;
            Ok(t)
        }
        open::Found::ToCreate { path, .. } => {
            let (fd, hold) = open::create(&found, &opts, claim)?;
            let held =
                rustix::io::fcntl_dupfd_cloexec(&fd, 0).map_err(|e| io_err(path, "dup", e))?;
            let t = open::describe(
                path,
                TargetKind::File,
                fd,
                true,
                opts.write,
                opts.direct,
                None,
            );
            match t {
                Ok(mut t) => {
                    t.hold = hold;
                    Ok(t)
                }
                Err(e) => {
                    let _ = open::remove_if_same(path, &held, &hold);
                    Err(e)
                }
            }
        }
    }
}

/// Writes back and evicts the target's pages from the page cache, so that
/// a buffered read phase starts cold.
pub fn drop_cache(t: &OpenTarget) {
    drop_pages(std::os::fd::AsFd::as_fd(&t.fd));
}

/// Syncs `fd` and drops its cached pages, so that the next reads come
/// from the device.
pub fn drop_pages(fd: std::os::fd::BorrowedFd<'_>) {
    let _ = rustix::fs::fsync(fd);
    let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
}

/// The alignment of buffers for I/O on every one of `targets`: the
/// largest logical block size, 4096 when there is none.
pub fn io_alignment(targets: &[OpenTarget]) -> usize {
    targets
        .iter()
        .map(|t| t.logical_block_size as usize)
        .max()
        .unwrap_or(4096)
}

impl OpenTarget {
    /// Removes the test file if it is still the one this run holds (a
    /// frames directory's frames are removed by `frame_target`, see
    /// [`OpenTarget::remove_if_created`]).
    pub(crate) fn remove_created_file(&self) -> std::io::Result<()> {
        open::remove_if_same(&self.path, &self.fd, &self.hold)
    }
}

#[cfg(test)]
mod tests;
