//! The human summary of a report, whatever its mode's own layout: a
//! `run` sweep's table ([`crate::run_sweep`]), or a block per point
//! ([`crate::text`]).

use crate::text::TextOptions;
use iosurvey_model::document::RunReport;

/// Renders a report as the human summary.
pub fn render_text(report: &RunReport, opts: TextOptions) -> String {
    if crate::run_sweep::is_run_sweep(report) {
        crate::run_sweep::render_sweep_text(report, opts)
    } else {
        crate::text::render_points(report, opts)
    }
}
