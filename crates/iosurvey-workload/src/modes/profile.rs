//! `iosurvey profile`: expand (being written).
