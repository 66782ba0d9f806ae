//! `--bs 4k:70,64k:30`: a block-size split within one point (fio's
//! `bssplit`), read and checked: each item a size and a percent, the
//! percents adding up to 100, none zero, no size twice.

use super::sweep::{items, twice};
use super::RunSpecError;
use crate::units::parse_size;
use iosurvey_model::{BsSplit, SizeShare};

/// What `--bs` asks for: sizes (one, or several to sweep), or a split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BsArg {
    Sizes(Vec<u64>),
    Split(BsSplit),
}

/// Reads `--bs`: a split when an item has a colon (`size:percent`), else
/// a size or a list of sizes to sweep.
pub fn parse_bs(s: &str) -> Result<BsArg, RunSpecError> {
    if !s.contains(':') {
        return super::sweep::parse_bs_list(s).map(BsArg::Sizes);
    }
    let bad = |why: String| RunSpecError::List {
        flag: "bs",
        list: s.to_string(),
        why,
    };
    let mut shares: Vec<SizeShare> = Vec::new();
    for item in items("bs", s)? {
        let Some((size, pct)) = item.split_once(':') else {
            return Err(bad(format!(
                "'{item}' has no percent: a split gives every size one (4k:70,64k:30); a list of sizes to sweep has none"
            )));
        };
        let bs = parse_size(size).map_err(|e| bad(e.to_string()))?;
        if bs == 0 {
            return Err(RunSpecError::Zero("bs"));
        }
        let pct: u8 = match pct.trim().parse::<u32>() {
            Ok(p @ 1..=100) => p as u8,
            Ok(0) => {
                return Err(bad(format!(
                    "'{item}': a size of the split needs a percent above 0"
                )))
            }
            _ => {
                return Err(bad(format!(
                    "'{item}': the percent must be a whole number from 1 to 100"
                )))
            }
        };
        if shares.iter().any(|sh| sh.bs == bs) {
            return Err(twice("bs", s, size.trim()));
        }
        shares.push(SizeShare {
            bs,
            pct,
            written: size.trim().to_string(),
        });
    }
    let sum: u32 = shares.iter().map(|sh| u32::from(sh.pct)).sum();
    if sum != 100 {
        return Err(bad(format!("the percents add up to {sum}, not 100")));
    }
    Ok(BsArg::Split(BsSplit { shares }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(s: &str) -> String {
        parse_bs(s).unwrap_err().to_string()
    }

    #[test]
    fn a_split_reads_as_sizes_and_percents_in_order() {
        let BsArg::Split(sp) = parse_bs("4k:70, 64k:30").unwrap() else {
            panic!("not a split");
        };
        assert_eq!(
            sp.shares,
            [
                SizeShare {
                    bs: 4096,
                    pct: 70,
                    written: "4k".into()
                },
                SizeShare {
                    bs: 65536,
                    pct: 30,
                    written: "64k".into()
                }
            ]
        );
        assert_eq!(parse_bs("4k,8k").unwrap(), BsArg::Sizes(vec![4096, 8192]));
        assert!(matches!(parse_bs("1m:100").unwrap(), BsArg::Split(_)));
    }

    #[test]
    fn a_bad_split_is_refused_with_the_reason() {
        assert!(why("4k:70,64k:20").contains("the percents add up to 90, not 100"));
        assert!(why("4k:70,64k:40").contains("add up to 110"));
        assert!(why("4k:0,64k:100").contains("a percent above 0"));
        assert!(why("4k:50,4096:50").contains("4096 is given twice"));
        assert!(why("4k:70,64k").contains("'64k' has no percent"));
        assert!(why("4k:x,64k:30").contains("whole number from 1 to 100"));
        assert!(why("4k:170").contains("whole number from 1 to 100"));
        assert!(why("4q:50,4k:50").contains("invalid size '4q'"));
        assert!(why("4k:50,,8k:50").contains("an empty item"));
        assert_eq!(parse_bs("0:50,4k:50"), Err(RunSpecError::Zero("bs")));
    }
}
