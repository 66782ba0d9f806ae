//! `iosurvey diskperf`: expand (being written).
