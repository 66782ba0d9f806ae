//! Which frames a run made, by number, so that its clean-up removes those
//! and no others.

use iosurvey_workload::FrameJob;
use std::path::{Path, PathBuf};

/// The frames a run creates or rewrites in its frames directory, by
/// number: every frame of a write, or the frames `--prepare` writes, less
/// those the user offered with `--allow-destroy` (which stay theirs). Its
/// size does not grow with `--frames` for a write.
#[derive(Clone, Debug, Default)]
pub struct CreatedFrames {
    /// The job, for the frames' paths; `None`: no frames.
    pub(crate) job: Option<FrameJob>,
    /// The frames `--prepare` writes; `None`: every frame of the job.
    pub(crate) listed: Option<Vec<u64>>,
    /// Offered frames, sorted: never removed.
    pub(crate) kept: Vec<u64>,
}

impl CreatedFrames {
    /// The frame numbers, in frame order.
    pub fn numbers(&self) -> Vec<u64> {
        let Some(fj) = &self.job else {
            return Vec::new();
        };
        let ours = |f: &u64| self.kept.binary_search(f).is_err();
        match &self.listed {
            Some(list) => list.iter().copied().filter(ours).collect(),
            None => (0..fj.frames).filter(ours).collect(),
        }
    }

    /// The frames' paths under `root`, in frame order (so those of one
    /// subdirectory follow one another).
    pub fn paths(&self, root: &Path) -> Vec<PathBuf> {
        match &self.job {
            None => Vec::new(),
            Some(fj) => self
                .numbers()
                .into_iter()
                .map(|f| fj.frame_path(root, f))
                .collect(),
        }
    }
}
