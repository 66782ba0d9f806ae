//! A small, fast, seeded generator (wyrand) for offsets and op mixes; kept
//! in `iosurvey-model`, which shuffles frame orders with it.

pub use iosurvey_model::rng::*;
