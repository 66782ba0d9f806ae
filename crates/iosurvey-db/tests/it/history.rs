//! Series over runs, and where they changed with what changed there.

use crate::backend::Backend;
use crate::run;
use iosurvey_db::history::{regressions, series, Figure};
use iosurvey_db::{Db, Filter};
use iosurvey_stats::changepoint::Options;

/// A value of mean `mu` and deviation `sd` (Box-Muller over a small
/// seeded generator).
fn normal(state: &mut u64, mu: f64, sd: f64) -> f64 {
    let mut u = || {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let (a, b) = (u(), u());
    mu + sd * (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// 40 runs of 3% noise; from run 25 on (when `step`) 10% fewer IOPS and
/// a new firmware.
fn fill(db: &mut Db, seed: u64, step: bool) {
    let mut s = seed;
    for i in 0..40 {
        let new = step && i >= 25;
        let iops = normal(&mut s, if new { 90_000.0 } else { 100_000.0 }, 3_000.0);
        let fw = if new { "2.0" } else { "1.0" };
        let at = format!("2026-01-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24);
        db.insert(&run(&format!("{seed}-{i}"), &at, None, iops, fw))
            .unwrap();
    }
}

#[test]
fn a_step_at_run_25_is_found_there_with_the_firmware_that_changed() {
    let mut seen = Vec::new();
    for b in Backend::all("a_step_at_run_25_is_found_there_with_the_firmware_that_changed") {
        seen.push(step_found(&b.at()));
    }
    // The same series from each backend.
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

fn step_found(p: &std::path::Path) -> String {
    let mut db = Db::open(p, "x").unwrap();
    fill(&mut db, 7, true);
    let (all, runs) = series(&db, &Filter::default(), Figure::Rate, None).unwrap();
    assert_eq!(all.len(), 1, "one point, one direction, one host");
    let s = &all[0];
    assert_eq!(s.figure, Figure::Iops, "4 KiB I/Os: the rate is IOPS");
    assert_eq!(s.entries.len(), 40);
    let found = regressions(s, &runs, &Options::default());
    let c = found
        .iter()
        .find(|c| c.at.abs_diff(25) <= 1)
        .unwrap_or_else(|| panic!("no change near 25: {found:?}"));
    assert!(c.worse && (-13.0..-7.0).contains(&c.pct), "{c:?}");
    // The runs either side of the change found, whatever its index:
    // the firmware changed between them only at 25.
    match c.at {
        25 => assert_eq!(c.differs, ["target 0 firmware: 1.0 -> 2.0"]),
        _ => assert!(c.differs.is_empty(), "{:?}", c.differs),
    }
    // Latency rises with nothing here: only the rate series moved.
    let (lat, _) = series(&db, &Filter::default(), Figure::P99, None).unwrap();
    assert!(regressions(&lat[0], &runs, &Options::default()).is_empty());
    format!("{all:?} {found:?}")
}

#[test]
fn stationary_histories_raise_few_alarms() {
    let mut alarms = 0;
    for seed in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open(&dir.path().join("h.db"), "x").unwrap();
        fill(&mut db, 1000 + seed, false);
        let (all, runs) = series(&db, &Filter::default(), Figure::Iops, None).unwrap();
        if !regressions(&all[0], &runs, &Options::default()).is_empty() {
            alarms += 1;
        }
    }
    assert!(alarms <= 2, "{alarms} of 20 stationary histories flagged");
}
