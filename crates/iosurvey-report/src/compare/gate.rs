//! compare's gate (`--fail-if-slower PCT`): which figures it judges (by
//! default each point's headline rate), Holm's correction over all of them
//! at once, and which slowdowns fail it. Figures not gated are shown but
//! never fail a run.

use super::{CompareReport, CompareRow, Figure, ALPHA};
use iosurvey_stats::significance::{holm, smallest_p};
use serde::{Deserialize, Serialize};

/// A figure the gate can judge, as `--gate` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateFigure {
    /// Each point's headline rate: IOPS where its mean I/O is under
    /// [`super::HEADLINE_IOPS_BELOW`] bytes in A and B, MB/s otherwise.
    /// The default.
    Rate,
    Mbps,
    Iops,
    Mean,
    P50,
    P99,
}

impl GateFigure {
    /// The name `--gate` takes.
    pub fn name(self) -> &'static str {
        match self {
            GateFigure::Rate => "rate",
            GateFigure::Mbps => "mbps",
            GateFigure::Iops => "iops",
            GateFigure::Mean => "mean",
            GateFigure::P50 => "p50",
            GateFigure::P99 => "p99",
        }
    }

    fn covers(self, r: &CompareRow) -> bool {
        match self {
            GateFigure::Rate => r.headline,
            GateFigure::Mbps => r.metric == Figure::Mbps,
            GateFigure::Iops => r.metric == Figure::Iops,
            GateFigure::Mean => r.metric == Figure::MeanLatency,
            GateFigure::P50 => r.metric == Figure::P50Latency,
            GateFigure::P99 => r.metric == Figure::P99Latency,
        }
    }
}

/// What the gate judged and found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateReport {
    /// The figures judged, as `--gate` names them.
    pub figures: Vec<String>,
    /// A slowdown fails the gate when it is larger than this percentage
    /// (lower MB/s or IOPS, higher latency) and significant after the
    /// correction.
    pub pct: f64,
    /// The family-wise significance level.
    pub alpha: f64,
    /// How the p-values were corrected for testing several at once:
    /// `holm`.
    pub correction: String,
    /// Hypotheses tested: the gated rows with a p-value.
    pub tests: usize,
    /// Gated rows without one (fewer repeats a side than a verdict needs).
    pub untested: usize,
    /// Whether any gated figure could be significant after the
    /// correction with the repeats there are: false when the smallest
    /// p-value the test can give, times the number of tests, is not below
    /// alpha (with four repeats a side, 0.029: two tests are already too
    /// many).
    pub reachable: bool,
    /// The rows (indices into `rows`) that fail the gate.
    pub failed: Vec<usize>,
}

impl GateReport {
    /// One line: how many tests, the correction and its level.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "gate: {} test{} ({}), Holm-corrected at alpha {}; a slowdown of more than {}% significant after the correction fails",
            self.tests,
            if self.tests == 1 { "" } else { "s" },
            self.figures.join(","),
            self.alpha,
            self.pct
        );
        if self.tests > 0 && !self.reachable {
            s.push_str("; with so few repeats it cannot fail: run more (--repeat)");
        }
        if self.untested > 0 {
            s.push_str(&format!(
                "; {} gated figure{} untested (too few repeats)",
                self.untested,
                if self.untested == 1 { "" } else { "s" }
            ));
        }
        s
    }
}

/// Judges the rows of `c` that `figures` name: marks them gated, sets
/// their Holm-corrected p-values (over every gated row with a p-value, of
/// every run compared), and records in `c.gate` which fail: a slowdown of
/// more than `pct` percent whose corrected p-value is below [`ALPHA`].
pub fn gate(c: &mut CompareReport, figures: &[GateFigure], pct: f64) {
    let mut tested = Vec::new();
    let mut untested = 0;
    for (i, r) in c.rows.iter_mut().enumerate() {
        r.gated = figures.iter().any(|f| f.covers(r));
        r.p_holm = None;
        match (r.gated, r.p_value) {
            (true, Some(_)) => tested.push(i),
            (true, None) => untested += 1,
            _ => {}
        }
    }
    let p: Vec<f64> = tested
        .iter()
        .map(|&i| c.rows[i].p_value.unwrap_or(1.0))
        .collect();
    let floor = tested
        .iter()
        .map(|&i| smallest_p(c.rows[i].a.values.len(), c.rows[i].b.values.len()))
        .fold(1.0, f64::min);
    let mut failed = Vec::new();
    for (&i, adjusted) in tested.iter().zip(holm(&p)) {
        let r = &mut c.rows[i];
        r.p_holm = Some(adjusted);
        if adjusted < ALPHA && r.worse_pct() > pct {
            failed.push(i);
        }
    }
    let mut names: Vec<String> = Vec::new();
    for f in figures {
        if !names.iter().any(|n| n == f.name()) {
            names.push(f.name().into());
        }
    }
    c.gate = Some(GateReport {
        figures: names,
        pct,
        alpha: ALPHA,
        correction: "holm".into(),
        tests: tested.len(),
        untested,
        reachable: floor * (tested.len() as f64) < ALPHA,
        failed,
    });
}
