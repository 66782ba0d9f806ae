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
    #[error("--stripe {stripe} is not a multiple of a member's logical block size ({lbs} bytes), which direct I/O needs, since an I/O is cut at each stripe")]
    StripeAlignment { stripe: u64, lbs: u64 },
    #[error("a member of {size} bytes is smaller than one {unit}-byte unit of the array")]
    MemberTooSmall { size: u64, unit: u64 },
    #[error("a member of {size} bytes is smaller than one stripe ({stripe} bytes)")]
    SmallerThanStripe { size: u64, stripe: u64 },
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
    /// Concat: the unit members are cut to (their sizes are multiples).
    unit: u64,
    size: u64,
}

impl ArrayMap {
    /// Resolves `spec` over members of `sizes` bytes, for I/Os of at most
    /// `unit` bytes (the largest block size on it): concat members are cut
    /// to whole units, and raid0 members to whole stripes of the smallest
    /// member. An I/O that crosses a stripe of a raid0 array, or the end of
    /// a concat member (an I/O smaller than the unit and not dividing it),
    /// is cut into pieces, one per stripe or member, as a real array cuts
    /// it (see [`ArrayMap::pieces`]).
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
                    unit,
                    size,
                })
            }
            Layout::Raid0 { stripe } => {
                if stripe == 0 {
                    return Err(ArrayError::ZeroStripe);
                }
                let smallest = member_sizes.iter().copied().min().unwrap_or(0);
                let per_member = smallest / stripe * stripe;
                if per_member == 0 {
                    return Err(ArrayError::SmallerThanStripe {
                        size: smallest,
                        stripe,
                    });
                }
                Ok(ArrayMap {
                    layout: spec.layout,
                    size: per_member * files.len() as u64,
                    files,
                    starts: Vec::new(),
                    per_member,
                    unit,
                })
            }
        }
    }

    /// Usable bytes of the array.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The stripe of a raid0 array; `None` for a concat, which never cuts
    /// an I/O.
    pub fn stripe(&self) -> Option<u64> {
        match self.layout {
            Layout::Concat => None,
            Layout::Raid0 { stripe } => Some(stripe),
        }
    }

    /// The most pieces an I/O of `bs` bytes at an array offset of the form
    /// `start + k * bs` is cut into: 1 when no such I/O crosses a stripe
    /// or a member's end.
    pub fn max_pieces(&self, bs: u64, start: u64) -> u64 {
        match self.layout {
            // Members hold whole units, and an I/O is at most one unit: it
            // ends in the member it starts in, or in the next.
            Layout::Concat if self.unit.is_multiple_of(bs) && start.is_multiple_of(bs) => 1,
            Layout::Concat => 2,
            Layout::Raid0 { stripe } if stripe.is_multiple_of(bs) && start.is_multiple_of(bs) => 1,
            Layout::Raid0 { stripe }
                if bs.is_multiple_of(stripe) && start.is_multiple_of(stripe) =>
            {
                bs / stripe
            }
            Layout::Raid0 { stripe } => bs.div_ceil(stripe) + 1,
        }
    }

    /// Calls `piece(file, member_offset, len)` for each piece of the I/O of
    /// `len` bytes at array byte `off`, in order: one per stripe (raid0) or
    /// member (concat) it touches, each on the member that holds it.
    #[inline]
    pub fn pieces(&self, mut off: u64, len: u64, mut piece: impl FnMut(u32, u64, u64)) {
        let end = off + len;
        while off < end {
            // Where the piece is, and how far its stripe or member goes.
            let (file, at, left) = match self.layout {
                Layout::Concat => {
                    let i = self.member_at(off);
                    let member_end = self.starts.get(i + 1).copied().unwrap_or(self.size);
                    (self.files[i], off - self.starts[i], member_end - off)
                }
                Layout::Raid0 { stripe } => {
                    let (file, at) = self.locate(off);
                    (file, at, stripe - off % stripe)
                }
            };
            let n = left.min(end - off);
            piece(file, at, n);
            off += n;
        }
    }

    /// The concat member that holds array byte `off`.
    #[inline]
    fn member_at(&self, off: u64) -> usize {
        self.starts.partition_point(|&s| s <= off) - 1
    }

    /// The member file and offset that hold array byte `off`.
    #[inline]
    pub fn locate(&self, off: u64) -> (u32, u64) {
        match self.layout {
            Layout::Concat => {
                let i = self.member_at(off);
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

    #[test]
    fn a_raid0_io_larger_than_a_stripe_is_cut_at_each_stripe() {
        let m = ArrayMap::new(
            &spec(Layout::Raid0 { stripe: 64 << 10 }, 3),
            &[1 << 20; 3],
            1 << 20,
        )
        .unwrap();
        let cut = |off: u64, len: u64| {
            let mut v = Vec::new();
            m.pieces(off, len, |f, at, n| v.push((f, at, n)));
            v
        };
        // 256 KiB from 0: four stripes, round robin, the fourth on member 0
        // again one stripe further in.
        assert_eq!(
            cut(0, 256 << 10),
            [
                (0, 0, 64 << 10),
                (1, 0, 64 << 10),
                (2, 0, 64 << 10),
                (0, 64 << 10, 64 << 10)
            ]
        );
        // Not on a stripe boundary: a short first and last piece.
        assert_eq!(
            cut(60 << 10, 72 << 10),
            [(0, 60 << 10, 4 << 10), (1, 0, 64 << 10), (2, 0, 4 << 10)]
        );
        // Inside one stripe: one piece.
        assert_eq!(cut(8192, 4096), [(0, 8192, 4096)]);
        assert_eq!(m.max_pieces(4096, 0), 1);
        assert_eq!(m.max_pieces(256 << 10, 0), 4);
        assert_eq!(m.max_pieces(256 << 10, 4096), 5);
        assert_eq!(m.max_pieces(24 << 10, 0), 2);
        assert_eq!(m.max_pieces(100 << 10, 0), 3);
    }

    #[test]
    fn a_concat_io_across_a_members_end_is_cut_there() {
        // Members cut to whole 1 MiB units; 12 KiB I/Os do not divide it.
        let m = ArrayMap::new(&spec(Layout::Concat, 2), &[1 << 20, 1 << 20], 1 << 20).unwrap();
        let mut v = Vec::new();
        m.pieces((1 << 20) - 4096, 12288, |f, at, n| v.push((f, at, n)));
        assert_eq!(v, [(0, (1 << 20) - 4096, 4096), (1, 0, 8192)]);
        assert_eq!(m.max_pieces(12288, 0), 2);
        assert_eq!(m.max_pieces(8192, 0), 1);
        assert_eq!(m.max_pieces(8192, 4096), 2);
    }

    proptest! {
        /// Every I/O's pieces tile it: their lengths add up to it, none
        /// crosses a stripe, each lies inside its member's usable part, and
        /// there are no more of them than `max_pieces` says.
        #[test]
        fn pieces_tile_the_io_within_max_pieces(
            stripe_k in 1u64..64, bs_k in 1u64..300, start_k in 0u64..64, k in 0u64..50,
        ) {
            let (stripe, bs, start) = (stripe_k * 1024, bs_k * 1024, start_k * 1024);
            let m = ArrayMap::new(&spec(Layout::Raid0 { stripe }, 3), &[64 << 20; 3], bs).unwrap();
            let c = ArrayMap::new(&spec(Layout::Concat, 3), &[(1 << 20) + 5; 3], 256 << 10).unwrap();
            if bs <= 256 << 10 && start + (k + 1) * bs <= c.size() {
                let (mut total, mut n) = (0, 0);
                c.pieces(start + k * bs, bs, |_, at, len| {
                    assert!(len > 0 && at + len <= 1 << 20);
                    total += len;
                    n += 1;
                });
                prop_assert_eq!(total, bs);
                prop_assert!(n <= c.max_pieces(bs, start));
            }
            let off = start + k * bs;
            let (mut total, mut n) = (0, 0);
            m.pieces(off, bs, |f, at, len| {
                assert!(len > 0 && at % stripe + len <= stripe);
                assert!(at + len <= 64 << 20 && f < 3);
                total += len;
                n += 1;
            });
            prop_assert_eq!(total, bs);
            prop_assert!(n <= m.max_pieces(bs, start), "{} pieces, at most {}", n, m.max_pieces(bs, start));
        }
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
