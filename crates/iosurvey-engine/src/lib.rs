//! I/O engines for iosurvey: one queue-shaped [`Engine`] per worker, with a
//! synchronous (`pread`/`pwrite`) and an io_uring implementation.
//!
//! An engine owns its aligned buffer pool and its file descriptors for as
//! long as it lives, and frees its buffers only once no I/O is in flight:
//! its drop waits for them (io_uring's for a bounded time, cancelling what
//! does not finish) and leaks the buffers of any I/O still in the kernel.
//! That ownership is what makes the `unsafe` below sound; this crate is the
//! only place in iosurvey where `unsafe` is allowed beside `iosurvey-sys`
//! (the few non-I/O system calls).
//!
//! Describing an I/O ([`Request`]) is plain data. The worker pushes requests,
//! calls [`Engine::submit_and_wait`], then drains completions with
//! [`Engine::reap`], whose callback may hand back the next request for the
//! buffer that just came free. Per I/O there is no allocation and no lock.
//!
//! No sequence of safe calls can make the kernel write outside a buffer or
//! into one that is handed out: the buffer index is the I/O's slot, a
//! [`SlotTable`] refuses (with a panic) a request longer than its buffer or
//! on a buffer still in flight, and [`Engine::buffer_mut`] hands out only
//! idle buffers.

#![warn(clippy::undocumented_unsafe_blocks)]

mod buffers;
pub mod data;
mod discard;
mod fileops;
mod gen_map;
mod slots;
mod sync;
pub mod uring;
pub mod verify;
pub mod verify_state;

pub use buffers::BufferPool;
pub use fileops::{open_beneath, FileOp};
pub use slots::SlotTable;
pub use sync::SyncEngine;
pub use uring::UringEngine;

pub use iosurvey_model::{EngineFeatures, EngineKind, Op, SqPoll};
use std::time::Duration;

use std::os::fd::{BorrowedFd, OwnedFd};

/// One I/O to issue: plain data, safe to build. Its buffer is its slot:
/// the completion names it, and nothing else may use it meanwhile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Index of the file in the engine's file table.
    pub file: u32,
    pub op: Op,
    /// Byte offset in the file. Past [`MAX_OFFSET`] it is no position a
    /// file has, and the I/O completes with `-EINVAL` on every engine (as
    /// `pread` fails it) without moving data.
    pub offset: u64,
    /// Bytes to move; at most the engine's buffer size.
    pub len: u32,
    /// Index of the buffer in the engine's pool, which the I/O holds until
    /// its completion is reaped.
    pub buf: u32,
}

/// The largest offset an I/O may name. The kernel's offsets are signed,
/// and io_uring takes -1 (`u64::MAX`) to mean "the file's current
/// position".
pub const MAX_OFFSET: u64 = i64::MAX as u64;

/// One finished I/O: bytes transferred, or a negative errno. Fewer bytes
/// than the request's length (0 past the end of a file) is a short
/// transfer: engines pass it through as it is, and the caller counts it as
/// a failure, not as a completed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The request's buffer, free again from this completion on.
    pub buf: u32,
    pub result: i32,
}

/// What an engine is built from.
pub struct EngineConfig<'a> {
    /// Files in table order; the engine takes ownership.
    pub files: Vec<OwnedFd>,
    /// Number of buffers (one per outstanding slot).
    pub buffers: usize,
    /// Size of each buffer in bytes (the largest block size).
    pub buffer_size: usize,
    /// Alignment of each buffer (at least the logical block size).
    pub alignment: usize,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL), pinned to `cpu` when set.
    pub sqpoll: Option<SqPoll>,
    /// Completions are polled (IORING_SETUP_IOPOLL, `--hipri`).
    pub iopoll: bool,
    /// `--compressible`: how much of each generated sector is zeros.
    pub fill: data::DataFill,
    /// `--verify`: writes carry verify headers over their generated data,
    /// for blocks the worker reserved in the generation maps.
    pub verify: Option<std::sync::Arc<verify::WriteVerify>>,
    /// The run's stop flag (Ctrl-C, SIGTERM): the set-up of the buffers
    /// looks at it as it fills them, and ends with [`EngineError::Stopped`].
    pub stop: Option<&'a std::sync::atomic::AtomicBool>,
}

/// Errors from setting an engine up. Errors on single I/Os are not errors
/// here: they come back as negative results in [`Completion`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot allocate {bytes} bytes of aligned I/O buffers; lower --qd or --bs")]
    Alloc { bytes: usize },
    #[error("io_uring setup failed ({0}); try --engine sync")]
    UringSetup(std::io::Error),
    /// The kernel refused a polling mode the user asked for; there is no
    /// silent fallback.
    #[error("the kernel refused io_uring {mode} ({err}); drop {flag} or run as root on a kernel and device that support it")]
    UringMode {
        mode: &'static str,
        flag: &'static str,
        err: std::io::Error,
    },
    /// Its text is in the message, so it is not an error source too (a
    /// chain printed whole would say it twice).
    #[error("engine failed: {0}")]
    Io(std::io::Error),
    /// A stop was asked while the engine was being set up: it submitted
    /// nothing.
    #[error("stopped while setting up the I/O buffers")]
    Stopped,
}

impl From<std::io::Error> for EngineError {
    fn from(e: std::io::Error) -> Self {
        EngineError::Io(e)
    }
}

/// A per-worker I/O queue.
///
/// Every method is safe to call in any order: a request that does not fit
/// its buffer, or that names a buffer still in flight, panics in
/// [`Engine::push`] before the kernel sees it.
pub trait Engine {
    /// Whether the engine completes one request per
    /// [`Engine::submit_and_wait`], oldest first, inside the call. Each
    /// latency then covers that request alone.
    const ONE_AT_A_TIME: bool = false;
    /// Queues one request on its buffer (for io_uring, straight into the
    /// submission queue).
    ///
    /// An offset past [`MAX_OFFSET`] is no misuse but a failed I/O: it
    /// completes with `-EINVAL`.
    ///
    /// # Panics
    /// When the buffer or the file index is out of range, when `len` is
    /// larger than a buffer, or when the buffer is in flight.
    fn push(&mut self, req: Request);
    /// One-at-a-time engines: the buffer of the request (or file
    /// operation) the next [`Engine::submit_and_wait`] runs, so that the
    /// caller starts its latency then; `None` when nothing is queued, and
    /// always for engines that submit in batches.
    #[inline]
    fn next_up(&self) -> Option<u32> {
        None
    }
    /// Submits everything queued, then waits until at least `min_complete`
    /// completions are ready (fewer if fewer are in flight), or `timeout`
    /// has passed. It does not wait at all while completions are ready. An
    /// engine may return earlier with at least one ready: io_uring does
    /// once [`uring::REAP_WINDOW_US`] have passed, so batching never holds
    /// a finished I/O longer than that. A `timeout` of [`Duration::MAX`]
    /// is no time bound: io_uring then waits without a timer, and without
    /// that window (a wait for several holds the first until the last).
    fn submit_and_wait(&mut self, min_complete: usize, timeout: Duration) -> std::io::Result<()>;
    /// Hands ready completions to `f`, in one pass: every one, or (io_uring)
    /// as many as the submission queue has room to re-arm, the others left
    /// ready for the next reap (which [`Engine::submit_and_wait`] then does
    /// not wait for). No I/O holds the completion's buffer when `f` runs,
    /// nor can anything else take it: a request `f` returns for it keeps
    /// it, any other outcome frees it. A request `f` returns is pushed at
    /// once (as by [`Engine::push`]) and submitted by the next
    /// [`Engine::submit_and_wait`].
    fn reap(&mut self, f: impl FnMut(Completion) -> Option<Request>);
    /// Buffer `idx`, for filling write data; `None` while an I/O holds it
    /// or when there is no such buffer.
    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]>;
    /// I/Os pushed and not yet reaped.
    fn in_flight(&self) -> usize;
    /// Queues a file operation on slot `slot` (its buffer is held until the
    /// completion is reaped, which [`Engine::reap`] hands over like any
    /// other; the callback's next request, if any, must not be pushed on a
    /// file that a completed operation changed before the caller saw it).
    ///
    /// # Panics
    /// As [`Engine::push`] for the buffer, and as [`FileOp`] says for the
    /// file: no I/O, sync or close without an open file, no close with an
    /// I/O on it in flight, no open while a file is open.
    fn push_file(&mut self, slot: u32, op: FileOp);
    /// The file a [`FileOp::Open`] opened, while it is open: for checks
    /// the caller makes on the descriptor between operations.
    fn open_file(&self) -> Option<BorrowedFd<'_>>;
    /// The fast paths this engine really uses, and its empty wake-ups.
    fn features(&self) -> EngineFeatures {
        EngineFeatures::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_workers_share_only_the_fast_paths_both_used_and_add_their_empty_wakeups() {
        let a = EngineFeatures {
            registered_files: true,
            fixed_buffers: true,
            reap_window_us: Some(10),
            sqpoll: true,
            iopoll: false,
            empty_wakeups: 2,
        };
        let b = EngineFeatures {
            fixed_buffers: false,
            iopoll: true,
            empty_wakeups: 3,
            ..a
        };
        let c = a.common(b);
        assert!(c.registered_files && c.sqpoll);
        assert!(!c.fixed_buffers && !c.iopoll);
        assert_eq!(c.empty_wakeups, 5);
    }
}
