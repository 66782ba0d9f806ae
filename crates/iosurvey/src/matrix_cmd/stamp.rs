//! ORION's file names: `<testname>_<yyyymmdd_hhmm>_<kind>`, and the
//! minutes a run's files may take when an earlier run's (or a user's), or
//! those of a run started at the same moment, already have its own.

use iosurvey_report::matrix::stamp_of;
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

/// The prefixes ORION's files may take, `<testname>_<yyyymmdd_hhmm>`, best
/// first: the minute of the run that started at `started_at` (RFC 3339),
/// then each later one up to an hour on, so that a run whose own minute is
/// taken (an earlier run in it, as a script looping over run levels makes,
/// one started at the same moment, or a file of the user's) keeps ORION's
/// names and replaces nothing. Only its own minute when `started_at` is
/// not a time.
pub(super) fn prefixes(testname: &str, started_at: &str) -> Vec<String> {
    let Ok(start) = humantime::parse_rfc3339_weak(started_at) else {
        return vec![format!("{testname}_{}", stamp_of(started_at))];
    };
    (0..=LATER_MINUTES)
        .map(|k| {
            let t = humantime::format_rfc3339_seconds(start + Duration::from_secs(60 * k));
            format!("{testname}_{}", stamp_of(&t.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minutes_run_on_from_the_start_across_the_hour_and_day() {
        let all = prefixes("t", "2026-12-31T23:59:30Z");
        assert_eq!(all.len(), 61);
        assert_eq!(all[0], "t_20261231_2359");
        assert_eq!(all[1], "t_20270101_0000");
        assert_eq!(all[60], "t_20270101_0059");
        // Each minute once.
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), 61);
    }
}
