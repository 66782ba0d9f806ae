//! The memory budget: a plan whose memory (buffers, rings, histograms,
//! series, frame records, the plan and its report) is over what the
//! process may use is refused before anything is opened, `--dry-run`
//! included, with one line naming the figure and the flag to lower.

use crate::memory_limit::{process_limit, MemoryLimit};
use iosurvey_workload::memory::{plan_memory, MemoryNeed};
use iosurvey_workload::Plan;

/// What the process may use: `--memory-limit` when given, else the cgroup's
/// limit or the available memory.
pub fn limit(given: Option<u64>) -> MemoryLimit {
    match given {
        Some(bytes) => MemoryLimit {
            bytes,
            source: "--memory-limit".into(),
        },
        None => process_limit(),
    }
}

/// A plan refused for needing more memory than the process may use; the
/// message names the figures and the flags to lower.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OverBudget(String);

/// Refuses `plan` (run `repeats` times) when it needs more than the limit.
pub fn check(plan: &Plan, repeats: u32, given: Option<u64>) -> Result<(), OverBudget> {
    check_need(&plan_memory(plan, repeats), &plan.mode, given)
}

/// Refuses a plan of `mode` that needs `need`, when that is more than the
/// limit.
pub fn check_need(need: &MemoryNeed, mode: &str, given: Option<u64>) -> Result<(), OverBudget> {
    let limit = limit(given);
    if need.total() <= limit.bytes {
        return Ok(());
    }
    let (bytes, part, flags) = need.largest();
    let flags = match part {
        "I/O buffers" => buffer_flags(mode),
        _ => flags,
    };
    Err(OverBudget(format!(
        "the plan needs {} of memory ({} of it {part}), more than the {} this process may use ({}); lower {flags}, or set --memory-limit",
        approx(need.total()),
        approx(bytes),
        approx(limit.bytes),
        limit.source
    )))
}

/// The flags of `mode` that set how many buffers of what size its jobs
/// take.
fn buffer_flags(mode: &str) -> &'static str {
    match mode {
        "matrix" => "-num_large, -num_small or -size_large",
        "video" => "--threads or --depth, or pick a smaller --format",
        "survey" => "--rszhi, --thrhi or --crghi",
        "diskperf" => "the block sizes",
        _ => "--bs, --qd or --workers",
    }
}

/// Bytes for a person: "17.6 GiB", "512.0 MiB", "900 KiB".
pub fn approx(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(approx(17_600_000_000), "16.4 GiB");
        assert_eq!(approx(512 << 20), "512.0 MiB");
        assert_eq!(approx(1000), "1 KiB");
    }
}
