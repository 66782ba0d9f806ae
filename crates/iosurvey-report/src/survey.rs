//! Presenters of `iosurvey survey` (being written).
