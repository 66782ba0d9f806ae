//! The `video` plots and tables (being written: see issue 14).

use super::chart::Chart;
use crate::RunReport;

pub(super) fn charts(r: &RunReport) -> Vec<Chart> {
    super::run::charts(r)
}

pub(super) fn tables(_r: &RunReport) -> Vec<String> {
    Vec::new()
}
