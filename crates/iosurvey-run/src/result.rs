//! What a job measured: per stream and class, merged exactly over workers.
//! Plain data, kept in `iosurvey-model`.

pub use iosurvey_model::result::*;
