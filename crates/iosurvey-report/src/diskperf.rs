//! Presenters of `iosurvey diskperf` (being written).
