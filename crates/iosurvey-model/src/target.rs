//! What kind of thing a target is, as plain data.

/// What kind of thing a target is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
    /// The directory of a files-per-frame video workload.
    Directory,
}
