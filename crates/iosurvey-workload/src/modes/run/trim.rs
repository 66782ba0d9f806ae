//! Discards in a run: `--rw trim` and `randtrim`, and a `--trim PCT`
//! share of a read or write workload; and what cannot go with them.

use crate::model::Mix;

/// What a run asks that bears on its discards.
pub(super) struct Asked {
    /// The mix `--rw` and `--mix` give.
    pub mix: Mix,
    /// `--trim PCT`.
    pub trim: Option<u8>,
    /// `--rw`'s name when it is all discards (`trim`, `randtrim`).
    pub all_trims: Option<&'static str>,
    pub verify: bool,
    pub check_compression: bool,
    pub simulate: bool,
}

/// A run whose discards cannot be done as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrimError {
    #[error("--trim {0} is out of range: give the percentage of I/Os that are discards, 1 to 100")]
    Range(u32),
    #[error("--trim goes with a read or write workload; --rw {0} is all discards already")]
    AllTrims(&'static str),
    #[error("--{0} does not take discards (--rw trim, randtrim or --trim): {1}")]
    With(&'static str, &'static str),
}

/// The mix asked for with its discards: a `--trim` share taken from every
/// I/O, the rest split as `--rw` and `--mix` say. A mix with discards is
/// refused with `--verify` (a discarded block holds nothing to prove),
/// `--check-compression` (it probes writes) and `--simulate` (whose
/// pieces are checked as reads and writes).
pub(super) fn with_trims(a: &Asked) -> Result<Mix, TrimError> {
    let mix = match (a.trim, a.all_trims) {
        (None, _) => a.mix,
        (Some(p), _) if p == 0 || p > 100 => return Err(TrimError::Range(p.into())),
        (Some(_), Some(rw)) => return Err(TrimError::AllTrims(rw)),
        (Some(trim_pct), None) => Mix::Trims {
            trim_pct,
            read_pct: match a.mix {
                Mix::Read => 100,
                Mix::Mixed { read_pct } | Mix::Trims { read_pct, .. } => read_pct,
                Mix::Write => 0,
            },
        },
    };
    if !mix.trims() {
        return Ok(mix);
    }
    let refusals = [
        (
            a.verify,
            "verify",
            "a discarded block holds no data to prove; verify a read or write run",
        ),
        (
            a.check_compression,
            "check-compression",
            "it measures writes; check a write run",
        ),
        (a.simulate, "simulate", "discard each device on its own"),
    ];
    match refusals.into_iter().find(|r| r.0) {
        Some((_, flag, why)) => Err(TrimError::With(flag, why)),
        None => Ok(mix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(mix: Mix, trim: Option<u8>) -> Asked {
        Asked {
            mix,
            trim,
            all_trims: None,
            verify: false,
            check_compression: false,
            simulate: false,
        }
    }

    #[test]
    fn a_trim_share_takes_the_rest_from_rw_and_mix() {
        let m = with_trims(&asked(Mix::Mixed { read_pct: 70 }, Some(10)));
        assert_eq!(
            m,
            Ok(Mix::Trims {
                trim_pct: 10,
                read_pct: 70
            })
        );
        let m = with_trims(&asked(Mix::Read, Some(5)));
        assert_eq!(
            m,
            Ok(Mix::Trims {
                trim_pct: 5,
                read_pct: 100
            })
        );
        let m = with_trims(&asked(Mix::Write, Some(100)));
        assert_eq!(
            m,
            Ok(Mix::Trims {
                trim_pct: 100,
                read_pct: 0
            })
        );
        assert_eq!(with_trims(&asked(Mix::Write, None)), Ok(Mix::Write));
    }

    #[test]
    fn a_share_out_of_range_or_on_a_trim_workload_is_refused() {
        for p in [0, 101, 255] {
            let m = with_trims(&asked(Mix::Write, Some(p)));
            assert_eq!(m, Err(TrimError::Range(p.into())));
        }
        let a = Asked {
            all_trims: Some("randtrim"),
            ..asked(Mix::TRIM, Some(10))
        };
        assert_eq!(with_trims(&a), Err(TrimError::AllTrims("randtrim")));
    }

    #[test]
    fn verify_compression_checks_and_arrays_refuse_discards_by_name() {
        let a = Asked {
            verify: true,
            ..asked(Mix::TRIM, None)
        };
        let e = with_trims(&a).unwrap_err().to_string();
        assert!(e.starts_with("--verify does not take discards"), "{e}");
        let a = Asked {
            check_compression: true,
            ..asked(Mix::Read, Some(1))
        };
        assert!(matches!(
            with_trims(&a),
            Err(TrimError::With("check-compression", _))
        ));
        let a = Asked {
            simulate: true,
            ..asked(Mix::TRIM, None)
        };
        assert!(matches!(
            with_trims(&a),
            Err(TrimError::With("simulate", _))
        ));
        // Without discards, each still runs.
        let a = Asked {
            verify: true,
            check_compression: true,
            simulate: true,
            ..asked(Mix::Write, None)
        };
        assert_eq!(with_trims(&a), Ok(Mix::Write));
    }
}
