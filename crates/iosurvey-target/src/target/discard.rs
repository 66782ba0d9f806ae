//! Whether a target takes discards (`run --rw trim`, `--trim PCT`): only a
//! block device whose queue discards (`discard_max_bytes` above 0; a
//! partition has its disk's queue). Judged on the descriptor found, before
//! the write guard and before anything is created, so that a refused
//! target is left as it was.

use super::open::Found;
use super::TargetError;
use iosurvey_model::TargetKind;
use rustix::fs::Dev as Devno;

/// Refuses `found` for a job that discards on it, naming why.
pub(super) fn check_discard(found: &Found) -> Result<(), TargetError> {
    let refuse = |why: String| TargetError::NoDiscard {
        path: found.path().to_path_buf(),
        why,
    };
    match found {
        Found::Existing {
            kind: TargetKind::Block,
            st,
            ..
        } => match discard_max_bytes(st.st_rdev) {
            Some(n) if n > 0 => Ok(()),
            Some(_) => Err(refuse(
                "the device does not support discard (its queue's discard_max_bytes is 0)".into(),
            )),
            None => Err(refuse(
                "the device's discard support cannot be read from /sys/dev/block".into(),
            )),
        },
        Found::Existing { kind, .. } => Err(refuse(format!(
            "a {} takes no discards; give a block device that supports discard",
            match kind {
                TargetKind::Directory => "directory",
                _ => "regular file",
            }
        ))),
        Found::ToCreate { .. } => Err(refuse(
            "a test file takes no discards; give a block device that supports discard".into(),
        )),
    }
}

/// `queue/discard_max_bytes` of the block device `rdev`, or of the disk it
/// is a partition of.
fn discard_max_bytes(rdev: Devno) -> Option<u64> {
    let dir = format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(rdev),
        rustix::fs::minor(rdev)
    );
    ["queue/discard_max_bytes", "../queue/discard_max_bytes"]
        .iter()
        .find_map(|rel| std::fs::read_to_string(format!("{dir}/{rel}")).ok())
        .and_then(|s| s.trim().parse().ok())
}
