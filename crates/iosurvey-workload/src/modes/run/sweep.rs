//! `run`'s sweeps: `--qd 1,2,4` and `--bs 4k,64k` read as lists, and the
//! points of a sweep in their order (each block size in turn, every queue
//! depth at each), each with the typed values it sweeps.

use super::{RunSpec, RunSpecError};
use crate::units::parse_size;
use iosurvey_model::PointParams;

/// Reads `--qd`: one depth, or a comma list of depths to sweep (each
/// greater than zero, none twice).
pub fn parse_qd_list(s: &str) -> Result<Vec<u32>, RunSpecError> {
    let mut out: Vec<u32> = Vec::new();
    for item in items("qd", s)? {
        let qd: u32 = item.parse().map_err(|_| RunSpecError::List {
            flag: "qd",
            list: s.to_string(),
            why: format!("'{item}' is not a whole number"),
        })?;
        if qd == 0 {
            return Err(RunSpecError::Zero("qd"));
        }
        if out.contains(&qd) {
            return Err(twice("qd", s, item));
        }
        out.push(qd);
    }
    Ok(out)
}

/// Reads a `--bs` of sizes: one size, or a comma list of sizes to sweep
/// (each greater than zero, none twice, `4k` and `4096` being the same).
pub fn parse_bs_list(s: &str) -> Result<Vec<u64>, RunSpecError> {
    let mut out: Vec<u64> = Vec::new();
    for item in items("bs", s)? {
        let bs = parse_size(item).map_err(|e| RunSpecError::List {
            flag: "bs",
            list: s.to_string(),
            why: e.to_string(),
        })?;
        if bs == 0 {
            return Err(RunSpecError::Zero("bs"));
        }
        if out.contains(&bs) {
            return Err(twice("bs", s, item));
        }
        out.push(bs);
    }
    Ok(out)
}

/// The comma-separated items of `s`, none empty.
pub(super) fn items<'a>(flag: &'static str, s: &'a str) -> Result<Vec<&'a str>, RunSpecError> {
    let items: Vec<&str> = s.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(RunSpecError::List {
            flag,
            list: s.to_string(),
            why: "an empty item (two commas, or one at an end)".into(),
        });
    }
    Ok(items)
}

pub(super) fn twice(flag: &'static str, list: &str, item: &str) -> RunSpecError {
    RunSpecError::List {
        flag,
        list: list.to_string(),
        why: format!("{item} is given twice; give each value once"),
    }
}

/// One point of a run: its depth, its block size, and the values it
/// sweeps (none for a run of one point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepValue {
    pub qd: u32,
    pub bs: u64,
    pub params: PointParams,
}

/// The points of `spec`, in order: each block size of `--bs` in turn, and
/// at each every depth of `--qd` (fio-plot's order: a line of depths per
/// block size). A flag given one value sweeps nothing: its value is left
/// out of the points' parameters, and a run with neither swept is one
/// point.
pub fn sweep_values(spec: &RunSpec) -> Vec<SweepValue> {
    let qds = match spec.qd_sweep.as_slice() {
        [] => vec![spec.qd],
        list => list.to_vec(),
    };
    let bss = match spec.bs_sweep.as_slice() {
        [] => vec![spec.bs],
        list => list.to_vec(),
    };
    let qd_swept = qds.len() > 1;
    let bs_swept = bss.len() > 1;
    bss.iter()
        .flat_map(|&bs| {
            qds.iter().map(move |&qd| SweepValue {
                qd,
                bs,
                params: PointParams::Run {
                    qd: qd_swept.then_some(qd),
                    bs: bs_swept.then_some(bs),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_in_order() {
        assert_eq!(
            parse_qd_list("1,2,4,8,16,32").unwrap(),
            [1, 2, 4, 8, 16, 32]
        );
        assert_eq!(parse_qd_list("8").unwrap(), [8]);
        assert_eq!(parse_bs_list("4k, 64k").unwrap(), [4096, 65536]);
        assert_eq!(parse_bs_list("1m").unwrap(), [1 << 20]);
    }

    #[test]
    fn bad_lists_are_refused_with_the_reason() {
        let refused = |r: Result<Vec<u64>, RunSpecError>| r.unwrap_err().to_string();
        assert!(refused(parse_bs_list("4k,,8k")).contains("an empty item"));
        assert!(refused(parse_bs_list("4k,")).contains("an empty item"));
        assert!(refused(parse_bs_list("4k,4096")).contains("4096 is given twice"));
        assert!(refused(parse_bs_list("4k,4x")).contains("invalid size '4x'"));
        assert_eq!(parse_bs_list("4k,0"), Err(RunSpecError::Zero("bs")));
        assert_eq!(parse_qd_list("1,0"), Err(RunSpecError::Zero("qd")));
        let e = parse_qd_list("1,2,2").unwrap_err().to_string();
        assert!(
            e.contains("--qd 1,2,2") && e.contains("2 is given twice"),
            "{e}"
        );
        let e = parse_qd_list("1,two").unwrap_err().to_string();
        assert!(e.contains("'two' is not a whole number"), "{e}");
    }

    #[test]
    fn both_lists_make_their_product_block_size_first() {
        let mut s = RunSpec::new(vec!["/a".into()]);
        s.qd_sweep = vec![1, 4];
        s.bs_sweep = vec![4096, 65536];
        let v = sweep_values(&s);
        let got: Vec<(u32, u64)> = v.iter().map(|p| (p.qd, p.bs)).collect();
        assert_eq!(got, [(1, 4096), (4, 4096), (1, 65536), (4, 65536)]);
        assert_eq!(
            v[1].params,
            PointParams::Run {
                qd: Some(4),
                bs: Some(4096)
            }
        );
    }

    #[test]
    fn only_swept_values_are_parameters() {
        let mut s = RunSpec::new(vec!["/a".into()]);
        s.qd_sweep = vec![2, 8];
        s.bs = 4096;
        let v = sweep_values(&s);
        assert_eq!(
            v[1].params,
            PointParams::Run {
                qd: Some(8),
                bs: None
            }
        );
        assert_eq!(v[1].bs, 4096);
        // A list of one value sweeps nothing: one plain point.
        s.qd_sweep = vec![8];
        let v = sweep_values(&s);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].qd, &v[0].params), (8, &PointParams::RUN));
    }

    #[test]
    fn a_sweep_expands_to_one_checked_point_per_value() {
        use crate::modes::run::expand;
        let mut s = RunSpec::new(vec!["/a".into()]);
        s.rw = crate::modes::run::Rw::RandRead;
        s.qd_sweep = vec![1, 2, 4];
        s.bs = 4096;
        let plan = expand(&s).unwrap();
        assert_eq!(plan.points.len(), 3);
        for (i, (p, qd)) in plan.points.iter().zip([1, 2, 4]).enumerate() {
            assert_eq!(p.index, i);
            assert_eq!(p.job.streams[0].outstanding, qd);
            assert_eq!(p.job.streams[0].bs, 4096);
            assert_eq!(p.label, format!("randread bs=4KiB qd={qd} workers=1"));
        }
        // Each point is checked as a run of its own: --bytes fits 4k
        // blocks, not 64k ones.
        s.bs_sweep = vec![4096, 65536];
        s.bytes = Some(8192);
        assert!(matches!(
            expand(&s),
            Err(RunSpecError::BytesNotWholeBlocks { bs: 65536, .. })
        ));
        s.bytes = None;
        assert_eq!(expand(&s).unwrap().points.len(), 6);
        s.verify = true;
        assert_eq!(expand(&s), Err(RunSpecError::VerifySweep));
        s.qd_sweep.clear();
        s.bs_sweep.clear();
        assert!(expand(&s).is_ok(), "--verify of one point stays allowed");
    }
}
