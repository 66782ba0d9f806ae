//! The verify states of a verified job's targets: read before its I/O,
//! merged with what its writes left and saved after its job (the file
//! itself: [`crate::verify_state`]).

use crate::runner::RunError;
use crate::verify_state::{
    capacity, forget, ident, load_id, save, saved_here, state_path, StateFileError,
};
use iosurvey_engine::verify::{GenMap, WriteVerify};
use iosurvey_engine::verify_state::TargetState;
use iosurvey_model::TargetKind;
use iosurvey_target::target::{Created, OpenTarget};
use iosurvey_workload::Job;
use std::os::fd::AsFd;
use std::path::PathBuf;

/// A target's verify state, as a verified job found it: where it lives,
/// what it records (empty when nothing usable is there), and why it
/// records nothing when it does not.
pub(crate) struct Loaded {
    pub path: PathBuf,
    pub state: TargetState,
    pub missing: Option<String>,
    /// The device and inode of the state file read, the only file its save
    /// may replace; `None`: nothing was there.
    pub file: Option<(u64, u64)>,
}

/// Reads the verify state of every target `job` verifies (`None` for the
/// others). A state recorded for another target (another size, device or
/// inode: a file replaced since) is set aside: a write starts a new one,
/// a read-only check finds nothing to check there.
pub(crate) fn load_states(
    job: &Job,
    targets: &[OpenTarget],
) -> Result<Vec<Option<Loaded>>, RunError> {
    let verr = |e: StateFileError| RunError::Verify(e.to_string());
    let mut out = Vec::with_capacity(targets.len());
    for (ti, t) in targets.iter().enumerate() {
        if !job.verify || !job.streams.iter().any(|s| s.target == ti) {
            out.push(None);
            continue;
        }
        let path = state_path(&t.path, job.verify_state.as_deref()).map_err(verr)?;
        let id = ident(t.fd.as_fd());
        let fresh = TargetState::of(t.size, id);
        let found = load_id(&path, capacity(&t.path, t.size)).map_err(verr)?;
        let file = found.as_ref().map(|(_, id)| *id);
        let loaded = match found.map(|(s, _)| s) {
            None => Loaded {
                file,
                missing: Some(format!(
                    "no verify state at {}: no verified run has written {} (or its state is kept elsewhere: --verify-state)",
                    path.display(),
                    t.path.display()
                )),
                state: fresh,
                path,
            },
            Some(s)
                if s.ident != id
                    || (s.size != t.size && t.kind != TargetKind::Directory)
                    || (matches!(t.created, Created::File) && !saved_here(&path)) =>
            {
                Loaded {
                    file,
                    missing: Some(format!(
                        "the verify state at {} was recorded for another target than {} (replaced or resized since)",
                        path.display(),
                        t.path.display()
                    )),
                    state: fresh,
                    path,
                }
            }
            Some(s) => Loaded {
                file,
                missing: None,
                state: s,
                path,
            },
        };
        out.push(Some(loaded));
    }
    Ok(out)
}

/// A job that writes a file target without `--verify` makes the state
/// beside it (iosurvey's own, if there is one) untrue: it is removed, so
/// that a later read-only check says it has nothing to check instead of
/// reporting those writes as lost.
pub(crate) fn forget_unverified(job: &Job, targets: &[OpenTarget]) {
    if job.verify {
        return;
    }
    for (ti, t) in targets.iter().enumerate() {
        if matches!(t.kind, TargetKind::File | TargetKind::Directory) && job.writes_target(ti) {
            if let Ok(p) = state_path(&t.path, None) {
                let _ = forget(&p, capacity(&t.path, t.size));
            }
        }
    }
}

/// Saves `state_of(target index, target, its loaded state)` as the state
/// of each target `job` writes that has one, each in turn.
fn save_written(
    job: &Job,
    targets: &[OpenTarget],
    states: &mut [Option<Loaded>],
    mut state_of: impl FnMut(usize, &OpenTarget, &mut Loaded) -> TargetState,
) -> Result<(), RunError> {
    for (ti, t) in targets.iter().enumerate() {
        let Some(Some(l)) = states.get_mut(ti) else {
            continue;
        };
        if !job.writes_target(ti) {
            continue;
        }
        let state = state_of(ti, t, l);
        l.file = Some(save(&l.path, &state, l.file).map_err(|e| RunError::Verify(e.to_string()))?);
    }
    Ok(())
}

/// Records what the writes of `written` left on each target they wrote in
/// its state, and saves it: after the target's data is synced, so that
/// the state never runs ahead of the device.
pub(crate) fn save_states(
    job: &Job,
    targets: &[OpenTarget],
    written: &WriteVerify,
    states: &mut [Option<Loaded>],
) -> Result<(), RunError> {
    save_written(job, targets, states, |ti, t, l| {
        let _ = rustix::fs::fdatasync(t.fd.as_fd());
        written.maps[ti].settle();
        l.state
            .record(&written.maps[ti], written.run_id, written.seed);
        l.missing = None;
        l.state.clone()
    })
}

/// Before a verified job writes: saves the state of each target it writes
/// with every block of its write areas marked unknown (last written by
/// this run, content unknown), so that a run killed, or a save that fails
/// after the job, leaves no expectation the device cannot meet (those
/// blocks are then checked for integrity only), and a place where the
/// state cannot be saved (full, read-only) is found before any I/O. The
/// save after the job records what completed into the state as it was
/// read, so the blocks the job did not write keep what they had.
pub(crate) fn presave_states(
    job: &Job,
    targets: &[OpenTarget],
    written: &WriteVerify,
    states: &mut [Option<Loaded>],
) -> Result<(), RunError> {
    save_written(job, targets, states, |ti, t, l| {
        let map = GenMap::new(crate::verify::written_end(job, ti, t.size));
        for s in job
            .streams
            .iter()
            .filter(|s| s.target == ti && s.mix.writes())
        {
            let Some((start, end)) = crate::verify::verified_area(s, t.size) else {
                continue;
            };
            let mut off = start;
            while off < end {
                let len = (end - off).min(1 << 30);
                map.commit(off, len as u32, false);
                off += len;
            }
        }
        let mut pending = l.state.clone();
        pending.record(&map, written.run_id, written.seed);
        pending
    })
}
