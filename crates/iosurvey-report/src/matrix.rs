//! Presenters of `iosurvey matrix` (being written).
