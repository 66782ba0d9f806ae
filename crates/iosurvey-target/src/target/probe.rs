//! Planning a target: its geometry and identity, found without creating or
//! writing anything, so bad settings are refused before any I/O.

use super::{open, Claim, Geometry, Identity, OpenOptions, OpenTarget, TargetError};
use iosurvey_workload::TargetSpec;

/// What planning found of a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub geometry: Geometry,
    pub identity: Identity,
}

/// The geometry `spec` will have once opened, found without creating or
/// writing anything: the write guard runs, an existing target is opened
/// read-only and probed, and a test file still to be created is checked
/// against its directory (free space, O_DIRECT alignment of the filesystem).
/// Takes no lock: see [`plan_target`] for what a run will hold.
pub fn plan_geometry(spec: &TargetSpec, opts: OpenOptions<'_>) -> Result<Geometry, TargetError> {
    let lenient = Claim {
        shared: true,
        expect: None,
    };
    plan_target(spec, opts, &lenient).map(|p| p.geometry)
}

/// [`plan_geometry`] and the target's identity; unless `claim.shared`, also
/// refused when another run holds the target (its lock, or for a block
/// device the run writes, an exclusive open).
pub fn plan_target(
    spec: &TargetSpec,
    opts: OpenOptions<'_>,
    claim: &Claim,
) -> Result<Planned, TargetError> {
    let found = open::find(spec)?;
    if opts.trim {
        super::discard::check_discard(&found)?;
    }
    let identity = found.identity();
    let geometry = match &found {
        open::Found::Existing { path, kind, .. } => {
            let (fd, _hold) = open::open_existing(&found, &opts, claim, false)?;
            open::describe(path, *kind, fd, false, false, opts.direct, spec.create_size)?.geometry()
        }
        open::Found::ToCreate { .. } => {
            open::check_create(&found, &opts)?;
            open::planned_new(&found, opts.direct)
        }
    };
    Ok(Planned { geometry, identity })
}

impl OpenTarget {
    /// What validation needs to know of this target.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            path: self.path.clone(),
            size: self.size,
            logical_block_size: self.logical_block_size,
            direct: self.direct,
        }
    }
}
