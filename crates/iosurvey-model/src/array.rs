//! Virtual arrays as plain data: which targets, put together how (concat
//! or raid0). The mapping of offsets is the workload crate's `ArrayMap`.

use serde::{Deserialize, Serialize};

/// How the members of an array are put together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "layout")]
pub enum Layout {
    /// One after another.
    Concat,
    /// Round-robin stripes of `stripe` bytes.
    Raid0 { stripe: u64 },
}

/// An array over the job's targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    /// Indices into the job's targets, in array order.
    pub members: Vec<usize>,
    pub layout: Layout,
}
