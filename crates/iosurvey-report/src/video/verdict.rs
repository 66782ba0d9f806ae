//! The real-time verdict: whether a storage keeps up with a format at a
//! frame rate, for every preset and rate, with a margin.

use super::{FrameSummary, EPSILON, MARGIN};
use iosurvey_model::video::{FrameFormat, FORMATS, VERDICT_RATES};
use iosurvey_model::Fps;

/// Whether a storage keeps up with a format at a frame rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// At least [`MARGIN`] times the rate needed, and no window below it.
    Ok,
    /// At least the rate needed, but without the margin or not in every
    /// window.
    Low,
    /// Below the rate needed.
    No,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Low => "low",
            Verdict::No => "no",
        }
    }
}

/// The verdict for a need of `needed` bytes per second, from the overall
/// rate and the slowest window's (pass the overall rate again when there
/// was no window check).
pub fn verdict(overall: f64, slowest: f64, needed: f64) -> Verdict {
    let ratio = overall / needed;
    if ratio >= MARGIN - EPSILON && slowest >= needed * (1.0 - EPSILON) {
        Verdict::Ok
    } else if ratio >= 1.0 - EPSILON {
        Verdict::Low
    } else {
        Verdict::No
    }
}

/// A ratio as the verdict table prints it: `2.41x`, `12.3x`, `456x`.
pub fn ratio_text(ratio: f64) -> String {
    if ratio >= 9999.5 {
        ">9999x".into()
    } else if ratio >= 100.0 {
        format!("{ratio:.0}x")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}x")
    } else {
        format!("{ratio:.2}x")
    }
}

/// One cell of the verdict table.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictCell {
    /// The frame rate's usual name (`29.97`).
    pub rate: &'static str,
    /// Bytes per second the format needs at that rate.
    pub needed: f64,
    /// The overall rate over `needed`.
    pub ratio: f64,
    pub verdict: Verdict,
}

/// One row of the verdict table: a preset at every rate of
/// [`VERDICT_RATES`].
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictRow {
    pub format: &'static FrameFormat,
    pub cells: Vec<VerdictCell>,
}

/// Every preset of [`FORMATS`] at every rate of [`VERDICT_RATES`], judged
/// from the overall and slowest-window rates in bytes per second.
pub fn verdict_table(overall: f64, slowest: f64) -> Vec<VerdictRow> {
    FORMATS
        .iter()
        .map(|format| VerdictRow {
            format,
            cells: VERDICT_RATES
                .iter()
                .map(|&(rate, fps)| {
                    let needed = format.frame_bytes() as f64 * fps.value();
                    VerdictCell {
                        rate,
                        needed,
                        ratio: overall / needed,
                        verdict: verdict(overall, slowest, needed),
                    }
                })
                .collect(),
        })
        .collect()
}

/// Whether a paced run held real time: nothing dropped and nothing failed.
pub fn real_time_held(s: &FrameSummary) -> bool {
    s.dropped() == 0 && s.failed == 0
}

/// A frame rate by its usual name (`23.976`), or with up to 3 decimals.
pub fn fps_name(fps: Fps) -> String {
    if let Some((name, _)) = VERDICT_RATES.iter().find(|(_, r)| r.same_rate(fps)) {
        return (*name).into();
    }
    let s = format!("{:.3}", fps.value());
    s.trim_end_matches('0').trim_end_matches('.').into()
}
