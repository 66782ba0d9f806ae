//! Whether a stream's I/Os start and end on its target's logical blocks
//! where they must: under O_DIRECT, and for discards, buffered or not.

use crate::error::{Aligned, RunError};
use iosurvey_target::target::Geometry;
use iosurvey_workload::StreamClass;

/// Checks that the I/Os of `s` on `t` start and end on its logical
/// blocks where they must: under O_DIRECT, and for discards, buffered or
/// not (the kernel refuses a discard off them with EINVAL). With a split,
/// each size must be a multiple of the block (the offsets, multiples of
/// the sizes' greatest common divisor from `--offset`, then are too), and
/// the sizes that are not are named as the user wrote them.
pub(crate) fn check_alignment(s: &StreamClass, t: &Geometry) -> Result<(), RunError> {
    let need = match (s.mix.trims(), t.direct) {
        (true, _) => Aligned::Discard,
        (false, true) => Aligned::Direct,
        (false, false) => return Ok(()),
    };
    let (path, lbs) = (t.path.clone(), t.logical_block_size.max(1));
    match &s.split {
        Some(split) => {
            let sizes = split.not_multiples_of(lbs);
            if !sizes.is_empty() {
                let split = split.written();
                return Err(RunError::SplitAlignment {
                    path,
                    split,
                    sizes,
                    lbs,
                    need,
                });
            }
        }
        None if !s.bs.is_multiple_of(lbs) => {
            let bs = s.bs;
            return Err(RunError::BsAlignment {
                path,
                bs,
                lbs,
                need,
            });
        }
        None => {}
    }
    if !s.offset.is_multiple_of(lbs) {
        let offset = s.offset;
        return Err(RunError::OffsetAlignment {
            path,
            offset,
            lbs,
            need,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_model::BsSplit;
    use iosurvey_workload::{Mix, Pattern};

    /// Why a stream of `mix` and `bs` (or `split`) at `offset` is refused
    /// on a target of 4 KiB logical blocks, `direct` or not; empty if not.
    fn refusal(mix: Mix, bs: u64, split: &[(&str, u64)], offset: u64, direct: bool) -> String {
        let split = (!split.is_empty()).then(|| BsSplit {
            shares: split
                .iter()
                .map(|&(w, bs)| iosurvey_model::SizeShare {
                    written: w.into(),
                    ..iosurvey_model::SizeShare::new(bs, (100 / split.len()) as u8)
                })
                .collect(),
        });
        let s = StreamClass {
            offset,
            split,
            ..StreamClass::new("s", 0, mix, Pattern::Forward, bs, 1)
        };
        let t = Geometry {
            path: "/dev/zram9".into(),
            size: 1 << 30,
            logical_block_size: 4096,
            direct,
        };
        check_alignment(&s, &t)
            .err()
            .map_or(String::new(), |e| e.to_string())
    }

    #[test]
    fn a_split_refused_for_o_direct_names_its_sizes_as_written() {
        let why = refusal(Mix::Read, 6144, &[("4k", 4096), ("6k", 6144)], 0, true);
        assert_eq!(
            why,
            "/dev/zram9: --bs 4k:50,6k:50: 6k is not a multiple of the logical block size 4096, which O_DIRECT needs; give sizes that are multiples of 4096, or --buffered"
        );
        assert!(!why.contains("2048"), "{why}");
        let why = refusal(Mix::Write, 10240, &[("6k", 6144), ("10k", 10240)], 0, true);
        assert!(why.contains(": 6k, 10k are not a multiple"), "{why}");
        // Multiples of the block pass; buffered reads and writes need none.
        assert_eq!(
            refusal(Mix::Read, 8192, &[("4k", 4096), ("8k", 8192)], 0, true),
            ""
        );
        assert_eq!(
            refusal(Mix::Read, 6144, &[("4k", 4096), ("6k", 6144)], 0, false),
            ""
        );
    }

    #[test]
    fn discards_off_the_logical_blocks_are_refused_buffered_or_not() {
        for direct in [false, true] {
            let why = refusal(Mix::TRIM, 6144, &[], 0, direct);
            assert!(
                why.starts_with("/dev/zram9: I/Os of 6144 bytes are not a multiple of the logical block size 4096, the granularity of its discards"),
                "{why}"
            );
            assert!(!why.contains("--buffered"), "{why}");
            let why = refusal(Mix::TRIM, 6144, &[("4k", 4096), ("6k", 6144)], 0, direct);
            assert!(why.contains("--bs 4k:50,6k:50: 6k is not a multiple of the logical block size 4096, the granularity of its discards"), "{why}");
            let why = refusal(Mix::TRIM, 4096, &[], 2048, direct);
            assert!(why.contains("--offset 2048 is not a multiple"), "{why}");
        }
        // A trim share in a mix is a discard too.
        let mixed = Mix::Trims {
            trim_pct: 10,
            read_pct: 70,
        };
        assert!(refusal(mixed, 6144, &[], 0, false).contains("granularity of its discards"));
        assert_eq!(refusal(Mix::TRIM, 8192, &[], 4096, false), "");
    }
}
