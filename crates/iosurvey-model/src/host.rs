//! The machine a run happened on, for the record: plain data (the run
//! crate probes it).

use serde::{Deserialize, Serialize};

/// Host, kernel and CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub os: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
}
