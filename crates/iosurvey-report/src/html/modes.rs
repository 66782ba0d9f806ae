//! Which plots and tables each mode gets.

use super::chart::Chart;
use iosurvey_model::document::RunReport;

/// The mode's plots, in the order shown.
fn charts(r: &RunReport) -> Vec<Chart> {
    let charts = match r.mode.as_str() {
        "diskperf" => super::diskperf::charts(r),
        "parallel" => super::parallel::charts(r),
        "survey" => super::survey::charts(r),
        "matrix" => super::matrix::charts(r),
        "profile" => super::profile::charts(r),
        "video" => super::video::charts(r),
        // A run sweep: its plots against depth or size, then the
        // points' own.
        "run" if crate::run_sweep::is_run_sweep(r) => {
            let mut c = super::run_sweep::charts(r);
            c.extend(super::run::charts(r));
            c
        }
        // `run`, `quick`, and a mode this version does not know.
        _ => super::run::charts(r),
    };
    charts.into_iter().filter(Chart::has_data).collect()
}

/// The mode's figures as SVG, in the order shown: its plots, led by the
/// quick card's bars and followed by the matrix's heatmaps.
pub(super) fn figures(r: &RunReport) -> Vec<String> {
    let mut out = Vec::new();
    if r.mode == "quick" {
        out.extend(super::quick_card::card(r));
    }
    out.extend(charts(r).iter().map(super::chart::svg));
    if r.mode == "matrix" {
        out.extend(super::matrix::heatmaps(r));
    }
    out
}

/// The mode's own tables (HTML), before the table of every point.
pub(super) fn tables(r: &RunReport) -> Vec<String> {
    match r.mode.as_str() {
        "diskperf" => super::diskperf::tables(r),
        "parallel" => super::parallel::tables(r),
        "survey" => super::survey::tables(r),
        "matrix" => super::matrix::tables(r),
        "profile" => super::profile::tables(r),
        "video" => super::video::tables(r),
        "run" if crate::run_sweep::is_run_sweep(r) => super::run_sweep::tables(r),
        _ => Vec::new(),
    }
}
