//! Presenters of `iosurvey profile` (being written).
