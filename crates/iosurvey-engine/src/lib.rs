//! I/O engines for iosurvey: one queue-shaped [`Engine`] per worker, with a
//! synchronous (`pread`/`pwrite`) and an io_uring implementation.
//!
//! An engine owns its aligned buffer pool and its file descriptors for as
//! long as it lives, and drains every in-flight I/O before it frees them.
//! That ownership is what makes the `unsafe` below sound; this crate is the
//! only place in iosurvey where `unsafe` is allowed.
//!
//! Describing an I/O ([`Request`]) is plain data. The worker pushes requests,
//! calls [`Engine::submit_and_wait`], then drains completions with
//! [`Engine::reap`]. Per I/O there is no allocation and no lock.

mod buffers;
pub mod loopdev;
mod sync;
pub mod uring;

pub use buffers::BufferPool;
pub use sync::SyncEngine;
pub use uring::UringEngine;

pub use iosurvey_model::{EngineFeatures, EngineKind, Op, SqPoll};

use std::os::fd::OwnedFd;

/// One I/O to issue: plain data, safe to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Index of the file in the engine's file table.
    pub file: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// Index of the buffer in the engine's pool; one buffer per slot.
    pub buf: u32,
    /// Returned unchanged in the completion.
    pub tag: u64,
}

/// One finished I/O: bytes transferred, or a negative errno. Fewer bytes
/// than the request's length (0 past the end of a file) is a short
/// transfer: engines pass it through as it is, and the caller counts it as
/// a failure, not as a completed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub tag: u64,
    pub result: i32,
}

/// What an engine is built from.
pub struct EngineConfig {
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
}

/// Errors from setting an engine up. Errors on single I/Os are not errors
/// here: they come back as negative results in [`Completion`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot allocate {bytes} bytes of aligned I/O buffers; lower --qd or --bs")]
    Alloc { bytes: usize },
    #[error("io_uring setup failed ({0}); try --engine sync")]
    UringSetup(std::io::Error),
    #[error("io_uring setup with {asked} failed ({source}); run without {flag}")]
    UringAsked {
        asked: &'static str,
        flag: &'static str,
        source: std::io::Error,
    },
    #[error("engine failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A per-worker I/O queue.
pub trait Engine {
    /// Whether the engine completes each request inside `submit_and_wait`,
    /// one after another. The worker then submits one request per call, so
    /// each latency covers that request alone.
    const ONE_AT_A_TIME: bool = false;
    /// Queues one request. The caller keeps no more requests in flight than
    /// there are buffers.
    fn push(&mut self, req: Request);
    /// Submits everything queued and waits until at least `min_complete`
    /// completions are ready (fewer if fewer are in flight). An engine may
    /// return earlier with at least one ready: io_uring does once
    /// [`uring::REAP_WINDOW_US`] have passed, so batching never holds a
    /// finished I/O longer than that.
    fn submit_and_wait(&mut self, min_complete: usize) -> std::io::Result<()>;
    /// Hands every ready completion to `f`.
    fn reap(&mut self, f: impl FnMut(Completion));
    /// Buffer `idx`, for filling write data before the run.
    fn buffer_mut(&mut self, idx: u32) -> &mut [u8];
    /// I/Os submitted or queued and not yet reaped.
    fn in_flight(&self) -> usize;
    /// Puts `fd` in file slot `idx` and hands back the file that was there,
    /// for work that opens a new file per unit (video frames). Nothing may
    /// be in flight. The returned descriptor is the file's last reference,
    /// so closing it is the close the caller times.
    fn replace_file(&mut self, idx: u32, fd: OwnedFd) -> std::io::Result<OwnedFd>;
    /// The fast paths this engine really uses.
    fn features(&self) -> EngineFeatures {
        EngineFeatures::default()
    }
}
