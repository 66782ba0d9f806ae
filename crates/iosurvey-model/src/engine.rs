//! What the engine layer is asked for and reports, as plain data: the
//! direction of an I/O, which engine a job runs on, and the fast paths it
//! really used.

/// Direction of one I/O.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// A discard (`BLKDISCARD`) of the range: it destroys data like a
    /// write and moves none.
    Trim,
}

impl Op {
    /// `read`, `write` or `trim`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        }
    }
}

/// Which engine a job runs on.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// io_uring with registered files and fixed buffers, batched.
    Uring,
    /// `pread`/`pwrite`, one I/O at a time.
    Sync,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Uring => "uring",
            EngineKind::Sync => "sync",
        }
    }
}

/// What an engine really uses, for the record: a fast path that the kernel
/// refused must not pass unnoticed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineFeatures {
    /// Files registered with the ring.
    pub registered_files: bool,
    /// Buffers registered with the ring (fixed buffers).
    pub fixed_buffers: bool,
    /// Longest a batched wait aims to hold a completion, in microseconds:
    /// a wait is for several only when the last reap's rate brings them in
    /// this time (a device that stalls just then can hold one longer);
    /// `None` when every wait returns at the first completion.
    pub reap_window_us: Option<u32>,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// Completions are polled (IORING_SETUP_IOPOLL).
    pub iopoll: bool,
    /// Waits that returned with no completion ready: a timeout that
    /// expired, or a wake-up for nothing. Each costs a trip into the
    /// kernel and a context switch that did no work.
    pub empty_wakeups: u64,
}

impl EngineFeatures {
    /// What two engines (two workers) both used; their empty wake-ups add
    /// up.
    pub fn common(self, other: EngineFeatures) -> EngineFeatures {
        EngineFeatures {
            registered_files: self.registered_files && other.registered_files,
            fixed_buffers: self.fixed_buffers && other.fixed_buffers,
            reap_window_us: self.reap_window_us.max(other.reap_window_us),
            sqpoll: self.sqpoll && other.sqpoll,
            iopoll: self.iopoll && other.iopoll,
            empty_wakeups: self.empty_wakeups + other.empty_wakeups,
        }
    }
}

/// The kernel's submission-queue polling thread (`--sqpoll`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqPoll {
    pub cpu: Option<u32>,
    pub idle_ms: u32,
}

/// `read`, `write` or `trim`, as reports print it.
impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `uring` or `sync`, as reports print it.
impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
