//! The order in which a stream walks its area: a leaf, named by the plan's
//! stream classes and by points' typed parameters alike.

/// The order in which a stream walks its area.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Sequential, upwards, block by block.
    Forward,
    /// Sequential, downwards, block by block; wraps to the top after block 0.
    Backward,
    /// Uniform over the area's blocks, seeded.
    Random,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Forward => "forward",
            Pattern::Backward => "backward",
            Pattern::Random => "random",
        }
    }

    /// Whether the pattern is sequential (and so splits into regions).
    pub fn is_sequential(self) -> bool {
        !matches!(self, Pattern::Random)
    }
}

/// `forward`, `backward` or `random`, as reports print it.
impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
