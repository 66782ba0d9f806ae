//! What `--verify` found: the blocks it checked, and every failure by its
//! class (issue 12).

use serde::{Deserialize, Serialize};

/// Most failures a report lists one by one; the counts cover them all.
pub const MAX_LISTED_FAILURES: usize = 100;

/// What a failed block tells about the storage. Each class means one
/// thing, whatever the block held before (schema version 3; the names of
/// version 2 still read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// A valid block of a verified run, written for another offset (or
    /// target) than the one it is at.
    MisdirectedWrite,
    /// An older generation, or data of another kind, where a known newer
    /// block belongs: the write was lost, or the read served a stale copy.
    #[serde(alias = "lost_write_or_stale_read")]
    LostOrStaleWrite,
    /// Reports of schema version 2 only: part of a write older than the
    /// rest (now a lost or stale write of that block).
    TornWrite,
    /// The block's header is right (this block's offset, run and
    /// generation) but its content does not match its checksum.
    Corruption,
    /// Zeros where data belongs.
    #[serde(alias = "lost_allocation")]
    Unwritten,
    /// The block could not be read (EIO and the like: the failure's
    /// `errno`).
    ReadError,
}

impl FailureClass {
    /// The name the text output gives it.
    pub fn describe(self) -> &'static str {
        match self {
            FailureClass::MisdirectedWrite => "misdirected write",
            FailureClass::LostOrStaleWrite => "lost or stale write",
            FailureClass::TornWrite => "torn write",
            FailureClass::Corruption => "corruption",
            FailureClass::Unwritten => "unwritten",
            FailureClass::ReadError => "read error",
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
    /// A read error: the errno the read returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
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
    #[serde(alias = "lost_write_or_stale_read")]
    pub lost_or_stale_write: u64,
    /// Reports of schema version 2 only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub torn_write: u64,
    pub corruption: u64,
    #[serde(alias = "lost_allocation")]
    pub unwritten: u64,
    #[serde(default)]
    pub read_error: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl FailureCounts {
    /// Counts one failure of `class`.
    pub fn add(&mut self, class: FailureClass) {
        *match class {
            FailureClass::MisdirectedWrite => &mut self.misdirected_write,
            FailureClass::LostOrStaleWrite => &mut self.lost_or_stale_write,
            FailureClass::TornWrite => &mut self.torn_write,
            FailureClass::Corruption => &mut self.corruption,
            FailureClass::Unwritten => &mut self.unwritten,
            FailureClass::ReadError => &mut self.read_error,
        } += 1;
    }

    /// Each class with its count, in the order the JSON lists them.
    pub fn by_class(&self) -> [(FailureClass, u64); 6] {
        [
            (FailureClass::MisdirectedWrite, self.misdirected_write),
            (FailureClass::LostOrStaleWrite, self.lost_or_stale_write),
            (FailureClass::TornWrite, self.torn_write),
            (FailureClass::Corruption, self.corruption),
            (FailureClass::Unwritten, self.unwritten),
            (FailureClass::ReadError, self.read_error),
        ]
    }

    /// Every failure.
    pub fn total(&self) -> u64 {
        self.by_class().iter().map(|(_, n)| n).sum()
    }

    /// Adds `other` in.
    pub fn merge(&mut self, other: &FailureCounts) {
        self.misdirected_write += other.misdirected_write;
        self.lost_or_stale_write += other.lost_or_stale_write;
        self.torn_write += other.torn_write;
        self.corruption += other.corruption;
        self.unwritten += other.unwritten;
        self.read_error += other.read_error;
    }
}

/// The outcome of a verify pass over a point's targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifySummary {
    /// `write`: the run's own writes, read back after the job against its
    /// generation map; `read`: the blocks the verified runs before wrote,
    /// checked against the target's verify state.
    pub mode: String,
    /// The run whose blocks were checked (the writing run's random 64-bit
    /// id, in hex, as the headers and the text output show it) and its
    /// seed; in `read` mode, the newest run the verify state records.
    pub run_id: Option<String>,
    pub run_seed: Option<u64>,
    /// 4 KiB blocks checked.
    pub blocks_checked: u64,
    /// Blocks whose content is not known (never written by a verified
    /// run, or by this run in `write` mode, or last written by a write
    /// that failed): not checked.
    pub blocks_unwritten: u64,
    /// The check was stopped (Ctrl-C, SIGTERM, or a job stopped before
    /// it): `blocks_checked` were checked, `blocks_skipped` that it would
    /// have checked were not read.
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default)]
    pub blocks_skipped: u64,
    /// Bytes the checks read, and how long they took.
    pub bytes_read: u64,
    pub elapsed_ns: u64,
    /// `--verify-backlog N`: the checks made during the job, each of the
    /// last N writes of a worker (their figures are in the totals above).
    #[serde(default)]
    pub backlog_checks: u64,
    /// Why no block could be checked, when none was: a verify that
    /// checked nothing fails (exit 1) and says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing_checked: Option<String>,
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
        // Nothing checked only while no part checked anything.
        self.nothing_checked = match (self.blocks_checked, &self.nothing_checked) {
            (0, None) => other.nothing_checked.clone(),
            (0, mine) => mine.clone(),
            _ => None,
        };
        self.blocks_unwritten += other.blocks_unwritten;
        self.interrupted |= other.interrupted;
        self.blocks_skipped += other.blocks_skipped;
        self.bytes_read += other.bytes_read;
        self.elapsed_ns += other.elapsed_ns;
        self.backlog_checks += other.backlog_checks;
        self.counts.merge(&other.counts);
        let room = MAX_LISTED_FAILURES.saturating_sub(self.failures.len());
        self.failures
            .extend(other.failures.iter().take(room).cloned());
    }

    /// The check failed: a block failed, or no block could be checked.
    pub fn failed(&self) -> bool {
        self.counts.total() > 0 || self.nothing_checked.is_some()
    }

    /// Records a failure: counted, and listed while there is room.
    pub fn fail(&mut self, f: VerifyFailure) {
        self.counts.add(f.class);
        if self.failures.len() < MAX_LISTED_FAILURES {
            self.failures.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_version_2_verify_object_still_reads() {
        let v2 = r#"{
            "mode": "read", "run_id": "00000000000000ab", "run_seed": 0,
            "blocks_checked": 4, "blocks_unwritten": 0, "bytes_read": 16384,
            "elapsed_ns": 1,
            "counts": {"misdirected_write": 0, "lost_write_or_stale_read": 1,
                       "torn_write": 1, "corruption": 0, "lost_allocation": 2},
            "failures": [{"target": 0, "offset": 4096, "class": "lost_allocation",
                          "expected": "x", "found": "zeros"},
                         {"target": 0, "offset": 8192, "class": "lost_write_or_stale_read",
                          "expected": "x", "found": "y"}]
        }"#;
        let s: VerifySummary = serde_json::from_str(v2).unwrap();
        assert_eq!(s.counts.lost_or_stale_write, 1);
        assert_eq!(s.counts.unwritten, 2);
        assert_eq!(s.counts.torn_write, 1);
        assert_eq!(s.counts.read_error, 0);
        assert_eq!(s.failures[0].class, FailureClass::Unwritten);
        assert_eq!(s.failures[1].class, FailureClass::LostOrStaleWrite);
    }
}
