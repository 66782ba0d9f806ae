//! What `--verify` found: the blocks it checked, and every failure by its
//! class (issue 12).

use serde::{Deserialize, Serialize};

/// Most failures a report lists one by one; the counts cover them all.
pub const MAX_LISTED_FAILURES: usize = 100;

/// What a failed block tells about the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The block holds another offset's data.
    MisdirectedWrite,
    /// The block holds an older write than the last one that completed
    /// (or a block of another run): the write was lost, or the read was
    /// served from a stale copy.
    LostWriteOrStaleRead,
    /// The block is older (or newer) than the rest of the write that
    /// covered it: one I/O landed in part.
    TornWrite,
    /// The block's checksum does not match its content.
    Corruption,
    /// Zeros where data was written.
    LostAllocation,
}

impl FailureClass {
    /// The name the text output gives it.
    pub fn describe(self) -> &'static str {
        match self {
            FailureClass::MisdirectedWrite => "misdirected write",
            FailureClass::LostWriteOrStaleRead => "lost write or stale read",
            FailureClass::TornWrite => "torn write",
            FailureClass::Corruption => "corruption",
            FailureClass::LostAllocation => "lost allocation",
        }
    }
}

/// One block that failed its check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyFailure {
    /// Index of the target in the report's targets.
    pub target: usize,
    /// Byte offset of the 4 KiB block in the target (in `file` when set).
    pub offset: u64,
    /// Video frames in files of their own: the frame's file, relative to
    /// the target directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub class: FailureClass,
    /// What the block should hold.
    pub expected: String,
    /// What it holds.
    pub found: String,
}

/// Failures counted by class.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FailureCounts {
    pub misdirected_write: u64,
    pub lost_write_or_stale_read: u64,
    pub torn_write: u64,
    pub corruption: u64,
    pub lost_allocation: u64,
}

impl FailureCounts {
    /// Counts one failure of `class`.
    pub fn add(&mut self, class: FailureClass) {
        *match class {
            FailureClass::MisdirectedWrite => &mut self.misdirected_write,
            FailureClass::LostWriteOrStaleRead => &mut self.lost_write_or_stale_read,
            FailureClass::TornWrite => &mut self.torn_write,
            FailureClass::Corruption => &mut self.corruption,
            FailureClass::LostAllocation => &mut self.lost_allocation,
        } += 1;
    }

    /// Each class with its count, in the order the JSON lists them.
    pub fn by_class(&self) -> [(FailureClass, u64); 5] {
        [
            (FailureClass::MisdirectedWrite, self.misdirected_write),
            (
                FailureClass::LostWriteOrStaleRead,
                self.lost_write_or_stale_read,
            ),
            (FailureClass::TornWrite, self.torn_write),
            (FailureClass::Corruption, self.corruption),
            (FailureClass::LostAllocation, self.lost_allocation),
        ]
    }

    /// Every failure.
    pub fn total(&self) -> u64 {
        self.by_class().iter().map(|(_, n)| n).sum()
    }

    /// Adds `other` in.
    pub fn merge(&mut self, other: &FailureCounts) {
        self.misdirected_write += other.misdirected_write;
        self.lost_write_or_stale_read += other.lost_write_or_stale_read;
        self.torn_write += other.torn_write;
        self.corruption += other.corruption;
        self.lost_allocation += other.lost_allocation;
    }
}

/// The outcome of a verify pass over a point's targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifySummary {
    /// `write`: the run's own writes, read back after the job against its
    /// generation map; `read`: the blocks a previous kept run wrote,
    /// checked against their own headers.
    pub mode: String,
    /// The run whose blocks were checked (the writing run's random 64-bit
    /// id, in hex, as the headers and the text output show it) and its
    /// seed; in `read` mode, as the first header read records them.
    pub run_id: Option<String>,
    pub run_seed: Option<u64>,
    /// 4 KiB blocks checked.
    pub blocks_checked: u64,
    /// Blocks read that no write of the checked run covers (never written
    /// by it): not checked.
    pub blocks_unwritten: u64,
    /// Bytes the checks read, and how long they took.
    pub bytes_read: u64,
    pub elapsed_ns: u64,
    /// `--verify-backlog N`: the checks made during the job, each of the
    /// last N writes of a worker (their figures are in the totals above).
    #[serde(default)]
    pub backlog_checks: u64,
    /// Failures by class.
    pub counts: FailureCounts,
    /// The first [`MAX_LISTED_FAILURES`] failures, in order of offset per
    /// target.
    pub failures: Vec<VerifyFailure>,
}

impl VerifySummary {
    /// Adds `other` in: the counts, and its listed failures while there is
    /// room. The mode, run and seed are `self`'s unless it has none.
    pub fn merge(&mut self, other: &VerifySummary) {
        if self.mode.is_empty() {
            self.mode = other.mode.clone();
        }
        if self.run_id.is_none() {
            self.run_id = other.run_id.clone();
            self.run_seed = other.run_seed;
        }
        self.blocks_checked += other.blocks_checked;
        self.blocks_unwritten += other.blocks_unwritten;
        self.bytes_read += other.bytes_read;
        self.elapsed_ns += other.elapsed_ns;
        self.backlog_checks += other.backlog_checks;
        self.counts.merge(&other.counts);
        let room = MAX_LISTED_FAILURES.saturating_sub(self.failures.len());
        self.failures
            .extend(other.failures.iter().take(room).cloned());
    }

    /// Records a failure: counted, and listed while there is room.
    pub fn fail(&mut self, f: VerifyFailure) {
        self.counts.add(f.class);
        if self.failures.len() < MAX_LISTED_FAILURES {
            self.failures.push(f);
        }
    }
}
