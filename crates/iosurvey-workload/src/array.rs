//! Virtual arrays: several targets put together as one, either end to end
//! (concat) or striped (raid0), which is how ORION's `-simulate` and a
//! multi-device profile are modelled. Mapping is pure arithmetic.

pub use iosurvey_model::{ArraySpec, Layout};

/// Why an array cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("an array needs at least one member")]
    Empty,
    #[error("--stripe must be greater than zero")]
    ZeroStripe,
    #[error(
        "--stripe {stripe} is not a multiple of the block size {bs}: an I/O would cross a stripe"
    )]
    StripeNotMultiple { stripe: u64, bs: u64 },
    #[error("a member of {size} bytes is smaller than one {unit}-byte unit of the array")]
    MemberTooSmall { size: u64, unit: u64 },
}

/// An array resolved against its members' sizes: where each byte lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayMap {
    layout: Layout,
    /// File index of each member in the engine's file table.
    files: Vec<u32>,
    /// Concat: where each member starts in the array.
    starts: Vec<u64>,
    /// Raid0: usable bytes per member (whole stripes).
    per_member: u64,
    size: u64,
}

impl ArrayMap {
    /// Resolves `spec` over members of `sizes` bytes, for I/Os of `unit`
    /// bytes (the largest block size on it) that must never straddle two
    /// members: concat members are cut to whole units, raid0 members to
    /// whole stripes of the smallest member, and a stripe must hold whole
    /// units.
    pub fn new(spec: &ArraySpec, sizes: &[u64], unit: u64) -> Result<ArrayMap, ArrayError> {
        if spec.members.is_empty() {
            return Err(ArrayError::Empty);
        }
        let files: Vec<u32> = spec.members.iter().map(|&m| m as u32).collect();
        let member_sizes: Vec<u64> = spec.members.iter().map(|&m| sizes[m]).collect();
        match spec.layout {
            Layout::Concat => {
                let mut starts = Vec::with_capacity(files.len());
                let mut size = 0u64;
                for &s in &member_sizes {
                    let usable = s / unit * unit;
                    if usable == 0 {
                        return Err(ArrayError::MemberTooSmall { size: s, unit });
                    }
                    starts.push(size);
                    size += usable;
                }
                Ok(ArrayMap {
                    layout: spec.layout,
                    files,
                    starts,
                    per_member: 0,
                    size,
                })
            }
            Layout::Raid0 { stripe } => {
                if stripe == 0 {
                    return Err(ArrayError::ZeroStripe);
                }
                if stripe % unit != 0 {
                    return Err(ArrayError::StripeNotMultiple { stripe, bs: unit });
                }
                let smallest = member_sizes.iter().copied().min().unwrap_or(0);
                let per_member = smallest / stripe * stripe;
                if per_member == 0 {
                    return Err(ArrayError::MemberTooSmall {
                        size: smallest,
                        unit: stripe,
                    });
                }
                Ok(ArrayMap {
                    layout: spec.layout,
                    size: per_member * files.len() as u64,
                    files,
                    starts: Vec::new(),
                    per_member,
                })
            }
        }
    }

    /// Usable bytes of the array.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The member file and offset that hold array byte `off`.
    #[inline]
    pub fn locate(&self, off: u64) -> (u32, u64) {
        match self.layout {
            Layout::Concat => {
                let i = self.starts.partition_point(|&s| s <= off) - 1;
                (self.files[i], off - self.starts[i])
            }
            Layout::Raid0 { stripe } => {
                let n = self.files.len() as u64;
                let unit = off / stripe;
                (
                    self.files[(unit % n) as usize],
                    (unit / n) * stripe + off % stripe,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(layout: Layout, n: usize) -> ArraySpec {
        ArraySpec {
            members: (0..n).collect(),
            layout,
        }
    }

    #[test]
    fn concat_puts_members_end_to_end_in_whole_units() {
        let m = ArrayMap::new(&spec(Layout::Concat, 2), &[10_000, 8192], 4096).unwrap();
        assert_eq!(m.size(), 8192 + 8192);
        assert_eq!(m.locate(0), (0, 0));
        assert_eq!(m.locate(4096), (0, 4096));
        assert_eq!(m.locate(8192), (1, 0));
        assert_eq!(m.locate(12288), (1, 4096));
    }

    #[test]
    fn raid0_stripes_round_robin_over_the_smallest_member() {
        let m = ArrayMap::new(
            &spec(Layout::Raid0 { stripe: 1 << 20 }, 3),
            &[5 << 20, 4 << 20, 9 << 20],
            4096,
        )
        .unwrap();
        assert_eq!(m.size(), 12 << 20);
        assert_eq!(m.locate(0), (0, 0));
        assert_eq!(m.locate(1 << 20), (1, 0));
        assert_eq!(m.locate((2 << 20) + 4096), (2, 4096));
        assert_eq!(m.locate(3 << 20), (0, 1 << 20));
    }

    #[test]
    fn bad_arrays_are_refused() {
        let r =
            |layout, sizes: &[u64], unit| ArrayMap::new(&spec(layout, sizes.len()), sizes, unit);
        assert_eq!(
            r(Layout::Raid0 { stripe: 0 }, &[1 << 20], 4096),
            Err(ArrayError::ZeroStripe)
        );
        assert!(matches!(
            r(Layout::Raid0 { stripe: 6144 }, &[1 << 20], 4096),
            Err(ArrayError::StripeNotMultiple { .. })
        ));
        assert!(matches!(
            r(Layout::Concat, &[1 << 20, 100], 4096),
            Err(ArrayError::MemberTooSmall { .. })
        ));
        assert_eq!(
            ArrayMap::new(
                &ArraySpec {
                    members: vec![],
                    layout: Layout::Concat
                },
                &[],
                4096
            ),
            Err(ArrayError::Empty)
        );
    }

    proptest! {
        /// Every unit of the array lands on exactly one unit of one member,
        /// inside that member's usable part, and no two units collide.
        #[test]
        fn the_mapping_is_a_bijection_onto_whole_units(
            sizes in proptest::collection::vec(1u64..40, 1..5),
            stripe_units in 1u64..4, raid in any::<bool>(),
        ) {
            let unit = 4096u64;
            let sizes: Vec<u64> = sizes.iter().map(|s| s * unit + 100).collect();
            let layout = if raid { Layout::Raid0 { stripe: stripe_units * unit } } else { Layout::Concat };
            let Ok(m) = ArrayMap::new(&spec(layout, sizes.len()), &sizes, unit) else {
                return Ok(());
            };
            let mut seen = std::collections::HashSet::new();
            for k in 0..m.size() / unit {
                let (f, off) = m.locate(k * unit);
                prop_assert_eq!(off % unit, 0);
                prop_assert!(off + unit <= sizes[f as usize]);
                prop_assert!(seen.insert((f, off)));
            }
        }
    }
}
