//! What `db import` reads besides an iosurvey report (which the caller
//! reads as any saved report): fio's JSON (`json` or `json+`, notes fio
//! printed before it allowed) or lines `db export` wrote; told apart by
//! their content, not their name.

use crate::record::RunRecord;

/// A file that is not an iosurvey report.
pub enum Input {
    /// fio's output.
    Fio(Box<RunRecord>),
    /// Exported lines: every run they hold.
    Export(Vec<RunRecord>),
}

/// `text` as fio's output or exported lines; `Ok(None)` when it is
/// neither. `host` names the host of a fio run (its JSON does not);
/// `label` is given to a run that has none.
pub fn read_other(text: &str, host: &str, label: Option<&str>) -> Result<Option<Input>, String> {
    if crate::export::is_export(text) {
        let mut runs = crate::export::read_lines(text)?;
        for r in &mut runs {
            if r.head.label.is_none() {
                r.head.label = label.map(String::from);
            }
        }
        return Ok(Some(Input::Export(runs)));
    }
    // The first object: fio's `--status-interval` prints more after it.
    let Some((v, json)) = crate::fio::json_start(text).and_then(crate::fio::first_value) else {
        return Ok(None);
    };
    match crate::fio::is_fio(&v) {
        true => crate::fio::from_fio(&v, json, host, label).map(|r| Some(Input::Fio(Box::new(r)))),
        false => Ok(None),
    }
}
