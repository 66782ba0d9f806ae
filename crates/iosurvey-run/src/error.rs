//! Why a job could not run: the one error of the runner, the verify pass
//! and the compression check, shared by them all.

use iosurvey_engine::EngineError;
use iosurvey_workload::pattern::AreaError;
use iosurvey_workload::MAX_OUTSTANDING;
use std::path::PathBuf;

/// Why a job could not run. Messages say what to change.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: I/Os of {bs} bytes are not a multiple of the logical block size {lbs}, {need}; give a --bs that is a multiple of {lbs}{}", need.remedy())]
    BsAlignment {
        path: PathBuf,
        bs: u64,
        lbs: u64,
        need: Aligned,
    },
    #[error("{path}: --bs {split}: {sizes} {} not a multiple of the logical block size {lbs}, {need}; give sizes that are multiples of {lbs}{}", if sizes.contains(',') { "are" } else { "is" }, need.remedy())]
    SplitAlignment {
        path: PathBuf,
        /// The split as the user wrote it.
        split: String,
        /// Its sizes that are not a multiple of `lbs`, as written.
        sizes: String,
        lbs: u64,
        need: Aligned,
    },
    #[error("{path}: --offset {offset} is not a multiple of the logical block size {lbs}, {need}")]
    OffsetAlignment {
        path: PathBuf,
        offset: u64,
        lbs: u64,
        need: Aligned,
    },
    #[error("{path}: --size {limit} is more than the {} holds ({size} bytes); an existing target is never grown: give --size {size} or less, or leave --size out to use all of it", if *array { "array" } else { "target" })]
    Limit {
        path: PathBuf,
        limit: u64,
        size: u64,
        array: bool,
    },
    // The reasons are in the messages, and so not error sources too: a
    // chain printed whole would say them twice.
    #[error("{path}: {reason}")]
    Area { path: PathBuf, reason: AreaError },
    #[error("{path}: the array cannot be built: {reason}")]
    Array {
        path: PathBuf,
        reason: iosurvey_workload::array::ArrayError,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("duplicating the descriptor of {path}: {err}")]
    Dup { path: PathBuf, err: std::io::Error },
    #[error(
        "{workers} workers over {targets} targets need {need} file descriptors, more than this process may have (RLIMIT_NOFILE {hard}, ulimit -n); give fewer --workers or targets, or raise the limit"
    )]
    TooManyFiles {
        workers: usize,
        targets: usize,
        need: u64,
        hard: u64,
    },
    #[error(
        "pinning worker {worker} to CPU {cpu} (--cpus): {err}; give CPUs this process may run on"
    )]
    Affinity {
        worker: usize,
        cpu: u32,
        err: std::io::Error,
    },
    #[error("a stream is pinned to worker {pin} of a job with {workers} workers")]
    Pin { pin: u32, workers: u32 },
    #[error("{path}: frames and their I/Os of {bytes} bytes are not a multiple of the logical block size {lbs}, which O_DIRECT needs; add --buffered")]
    FrameAlignment { path: PathBuf, bytes: u64, lbs: u64 },
    #[error(
        "{path}: {frames} frames of {bytes} bytes do not fit in its {size} bytes; lower --frames"
    )]
    FramesDoNotFit {
        path: PathBuf,
        frames: u64,
        bytes: u64,
        size: u64,
    },
    #[error("the array cuts an I/O into up to {pieces} pieces, one per stripe or member it touches: {requests} requests in flight on one worker, more than {MAX_OUTSTANDING}; raise --stripe, or lower the I/O size or the depth")]
    Pieces { pieces: u32, requests: usize },
    #[error("a job has at most one frame stream")]
    FrameStreams,
    #[error("a frame is cut into {pieces} I/Os, more than its depth of {depth}; raise the I/O size or --depth")]
    FramePieces { pieces: u64, depth: u32 },
    #[error("a worker failed: {0}")]
    Worker(std::io::Error),
    #[error("{0}")]
    Verify(String),
}

/// Why I/Os must be aligned to a target's logical blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aligned {
    /// O_DIRECT reads and writes.
    Direct,
    /// Discards (`BLKDISCARD`), buffered or not.
    Discard,
}

impl Aligned {
    /// What else the user may do: drop O_DIRECT, which discards do not
    /// use.
    pub(crate) fn remedy(self) -> &'static str {
        match self {
            Aligned::Direct => ", or --buffered",
            Aligned::Discard => "",
        }
    }
}

impl std::fmt::Display for Aligned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Aligned::Direct => "which O_DIRECT needs",
            Aligned::Discard => {
                "the granularity of its discards (the kernel refuses others with EINVAL, buffered or not)"
            }
        })
    }
}
