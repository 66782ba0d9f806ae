//! Discards in a run: `--rw trim` and `randtrim`, and a `--trim PCT`
//! share of a read or write workload; and what cannot go with them.

use super::{RunSpec, RunSpecError, Rw};
use crate::model::Mix;

/// The mix of `spec`, whose `--rw` and `--mix` give `mix`, with its
/// discards: a `--trim` share taken from every I/O, the rest split as
/// `mix` says. A mix with discards is refused with `--verify` (a
/// discarded block holds nothing to prove), `--check-compression` (it
/// probes writes) and `--simulate` (whose pieces are checked as reads
/// and writes).
pub(super) fn with_trims(spec: &RunSpec, mix: Mix) -> Result<Mix, RunSpecError> {
    let mix = match spec.trim {
        None => mix,
        Some(p) if p == 0 || p > 100 => return Err(RunSpecError::TrimRange(p.into())),
        Some(_) if matches!(spec.rw, Rw::Trim | Rw::RandTrim) => {
            return Err(RunSpecError::TrimWithTrimRw(spec.rw.name()))
        }
        Some(trim_pct) => Mix::Trims {
            trim_pct,
            read_pct: match mix {
                Mix::Read => 100,
                Mix::Mixed { read_pct } | Mix::Trims { read_pct, .. } => read_pct,
                Mix::Write => 0,
            },
        },
    };
    if !mix.trims() {
        return Ok(mix);
    }
    if spec.verify {
        return Err(RunSpecError::TrimWith(
            "verify",
            "a discarded block holds no data to prove; verify a read or write run",
        ));
    }
    if spec.check_compression {
        return Err(RunSpecError::TrimWith(
            "check-compression",
            "it measures writes; check a write run",
        ));
    }
    if spec.simulate.is_some() {
        return Err(RunSpecError::TrimWith(
            "simulate",
            "discard each device on its own",
        ));
    }
    Ok(mix)
}

#[cfg(test)]
mod tests {
    use super::super::expand;
    use super::*;
    use crate::model::Pattern;

    fn spec(rw: &str) -> RunSpec {
        RunSpec {
            rw: rw.parse().unwrap(),
            ..RunSpec::new(vec!["/dev/zram0".into()])
        }
    }

    fn mix_of(s: &RunSpec) -> Result<(Mix, Pattern), RunSpecError> {
        let p = expand(s)?;
        let st = &p.points[0].job.streams[0];
        Ok((st.mix, st.pattern))
    }

    #[test]
    fn trim_and_randtrim_are_all_discards_in_order_or_at_random() {
        assert_eq!(mix_of(&spec("trim")), Ok((Mix::TRIM, Pattern::Forward)));
        assert_eq!(mix_of(&spec("randtrim")), Ok((Mix::TRIM, Pattern::Random)));
        let p = expand(&spec("randtrim")).unwrap();
        assert!(
            p.points[0].job.writes(),
            "a discard goes through the write guard"
        );
        assert!(p.points[0].label.starts_with("randtrim "));
    }

    #[test]
    fn a_trim_share_takes_the_rest_from_rw_and_mix() {
        let mut s = spec("randrw");
        s.mix = Some(70);
        s.trim = Some(10);
        let want = Mix::Trims {
            trim_pct: 10,
            read_pct: 70,
        };
        assert_eq!(mix_of(&s), Ok((want, Pattern::Random)));
        let mut s = spec("read");
        s.trim = Some(5);
        let (m, _) = mix_of(&s).unwrap();
        assert_eq!(
            m,
            Mix::Trims {
                trim_pct: 5,
                read_pct: 100
            }
        );
        let mut s = spec("randwrite");
        s.trim = Some(100);
        let (m, _) = mix_of(&s).unwrap();
        assert_eq!(
            m,
            Mix::Trims {
                trim_pct: 100,
                read_pct: 0
            }
        );
    }

    #[test]
    fn a_share_out_of_range_or_on_a_trim_workload_is_refused() {
        for p in [0, 101, 255] {
            let mut s = spec("randrw");
            s.trim = Some(p);
            assert_eq!(mix_of(&s), Err(RunSpecError::TrimRange(p.into())));
        }
        let mut s = spec("randtrim");
        s.trim = Some(10);
        assert_eq!(mix_of(&s), Err(RunSpecError::TrimWithTrimRw("randtrim")));
    }

    #[test]
    fn verify_compression_checks_and_arrays_refuse_discards_by_name() {
        let mut s = spec("trim");
        s.verify = true;
        let e = mix_of(&s).unwrap_err().to_string();
        assert!(e.starts_with("--verify does not take discards"), "{e}");
        let mut s = spec("randrw");
        s.trim = Some(1);
        s.check_compression = true;
        assert!(matches!(
            mix_of(&s),
            Err(RunSpecError::TrimWith("check-compression", _))
        ));
        let mut s = spec("randtrim");
        s.simulate = Some(crate::array::Layout::Concat);
        assert!(matches!(
            mix_of(&s),
            Err(RunSpecError::TrimWith("simulate", _))
        ));
        // Without discards, each still runs.
        let mut s = spec("randwrite");
        s.verify = true;
        assert!(mix_of(&s).is_ok());
    }
}
