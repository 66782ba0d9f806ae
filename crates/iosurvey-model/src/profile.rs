//! The stream-class labels of `profile` points.

/// Stream labels the presenter finds the points by.
pub const ZONE: &str = "zone";
pub const ACCESS: &str = "access";
pub const BURST: &str = "burst";
