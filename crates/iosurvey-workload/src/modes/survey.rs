//! `iosurvey survey`: expand (being written).
