//! ORION's file names: `<testname>_<yyyymmdd_hhmm>_<kind>`, and the
//! minute a run's files take when an earlier run's (or a user's) are
//! already there.

use iosurvey_report::matrix::stamp_of;
use std::path::Path;
use std::time::Duration;

/// ORION's files, in the order of `file_bodies`.
pub(super) const FILES: [&str; 6] = [
    "summary.txt",
    "mbps.csv",
    "iops.csv",
    "lat.csv",
    "hist.txt",
    "report.json",
];

/// How many minutes past the run's start a free stamp is looked for.
const LATER_MINUTES: u64 = 60;

/// ORION's files' prefix, `<testname>_<yyyymmdd_hhmm>`, of the run that
/// started at `started_at` (RFC 3339): its own minute's, or, when a file
/// of that name is already in `dir` (an earlier run in the same minute, as
/// a script looping over run levels makes, or a file of the user's), the
/// next minute's that is free, so that no file is replaced and ORION's
/// readers still find `<testname>_<stamp>_summary.txt`. The minute and how
/// many later it is; the run's own when none in the hour is free (the
/// judge then refuses it).
pub(super) fn free_prefix(testname: &str, started_at: &str, dir: &Path) -> (String, u64) {
    let start = humantime::parse_rfc3339_weak(started_at).ok();
    let prefix_at = |k: u64| {
        let t = start.map_or(started_at.to_string(), |t| {
            humantime::format_rfc3339_seconds(t + Duration::from_secs(60 * k)).to_string()
        });
        format!("{testname}_{}", stamp_of(&t))
    };
    let taken = |prefix: &str| {
        FILES.iter().any(|suffix| {
            dir.join(format!("{prefix}_{suffix}"))
                .symlink_metadata()
                .is_ok()
        })
    };
    let last = if start.is_some() { LATER_MINUTES } else { 0 };
    (0..=last)
        .map(|k| (prefix_at(k), k))
        .find(|(p, _)| !taken(p))
        .unwrap_or_else(|| (prefix_at(0), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_minute_gives_the_next_free_one_across_the_hour_and_day() {
        let dir = tempfile::tempdir().unwrap();
        let at = "2026-12-31T23:59:30Z";
        assert_eq!(
            free_prefix("t", at, dir.path()),
            ("t_20261231_2359".into(), 0)
        );
        std::fs::write(dir.path().join("t_20261231_2359_hist.txt"), b"x").unwrap();
        std::os::unix::fs::symlink("nowhere", dir.path().join("t_20270101_0000_report.json"))
            .unwrap();
        assert_eq!(
            free_prefix("t", at, dir.path()),
            ("t_20270101_0001".into(), 2)
        );
        // Another test's files take nothing from this one.
        assert_eq!(free_prefix("u", at, dir.path()).1, 0);
    }
}
