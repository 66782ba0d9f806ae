//! `iosurvey matrix`: expand (being written).
