//! The model: a Plan is an ordered list of Points, each Point one Job of
//! targets, stream classes and bounds. Plain data, kept in `iosurvey-model`.

pub use iosurvey_model::plan::*;
