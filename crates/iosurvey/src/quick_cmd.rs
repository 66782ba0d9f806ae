//! `iosurvey quick` and `iosurvey` alone: characterise the storage under a
//! directory in about a minute and print a CrystalDiskMark-style card.

use crate::cli::QuickArgs;
use crate::execute::{execute, TextOnly, WithBanner};
use crate::exit::{usage, Failure, Outcome};
use anyhow::anyhow;
use iosurvey_workload::modes::quick::{expand, QuickSpec};
use iosurvey_workload::units::format_size;

/// Smallest test file worth measuring.
const MIN_SIZE: u64 = 64 << 20;

/// The test file size: as asked, or half the free space (whole MiB) when
/// that is short, saying so.
fn fit_size(a: &QuickArgs) -> Result<u64, Failure> {
    if !a.dir.is_dir() {
        return Ok(a.size);
    }
    let Ok(vfs) = rustix::fs::statvfs(&a.dir) else {
        return Ok(a.size);
    };
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    if free >= a.size.saturating_add(MIN_SIZE) {
        return Ok(a.size);
    }
    let size = (free / 2) & !((1 << 20) - 1);
    if size < MIN_SIZE {
        return usage(anyhow!(
            "{}: only {} bytes free; quick needs at least {} for its test file",
            a.dir.display(),
            free,
            format_size(MIN_SIZE * 2)
        ));
    }
    if !a.out.quiet {
        eprintln!(
            "iosurvey: only {} bytes free under {}: using a {} test file instead of {}",
            free,
            a.dir.display(),
            format_size(size),
            format_size(a.size)
        );
    }
    Ok(size)
}

pub fn quick(a: QuickArgs, argv: &[String]) -> Result<Outcome, Failure> {
    if a.time.is_zero() {
        return usage(anyhow!("--time must be greater than zero"));
    }
    if a.size == 0 {
        return usage(anyhow!("--size must be greater than zero"));
    }
    let mut spec = QuickSpec::new(a.dir.clone());
    spec.size = fit_size(&a)?;
    spec.time = a.time;
    spec.ramp = a.ramp;
    spec.seed = a.seed;
    spec.direct = !a.target.buffered;
    spec.engine = a.target.engine_or_uring();
    let plan = expand(&spec);
    let per = (a.time + a.ramp).as_secs_f64();
    let banner = format!(
        "iosurvey: {} tests of {} s each on {}: about {:.0} s plus laying out the test file",
        plan.points.len(),
        per,
        a.dir.display(),
        per * plan.points.len() as f64
    );
    let card = TextOnly(iosurvey_report::render_card);
    execute(&plan, argv, &a.target, &a.out, &WithBanner(&card, banner))
}
