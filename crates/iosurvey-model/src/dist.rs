//! How a random stream spreads its I/Os over the blocks of its area:
//! uniformly, or skewed as fio's `random_distribution` (zipf, pareto).
//! Plain data, named by the plan's stream classes and the report alike.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// The access distribution of a random stream (`--dist`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Dist {
    /// Every block of the area equally likely.
    #[default]
    Uniform,
    /// The block of rank k (1-based, hottest first) drawn with probability
    /// proportional to 1/k^theta; theta > 0.
    Zipf { theta: f64 },
    /// fio's pareto: rank floor((n - 1) * u^(ln h / ln(1 - h))) for u
    /// uniform in [0, 1); h in (0, 1): the hottest share h of the blocks
    /// takes 1 - h of the I/Os.
    Pareto { h: f64 },
}

/// Parameters are checked finite when parsed ([`Dist::from_str`]), so
/// equality is an equivalence: plans compare whole.
impl Eq for Dist {}

impl Dist {
    /// Whether it is the default, uniform distribution.
    pub fn is_uniform(&self) -> bool {
        *self == Dist::Uniform
    }

    /// The share of the I/Os the hottest `share` (0..=1) of an area's
    /// blocks take when drawn over `blocks` blocks: the sums of the
    /// distribution's own formula (zipf's sums over every block), for
    /// tests to hold a run's histogram against.
    pub fn hottest_share(&self, share: f64, blocks: u64) -> f64 {
        let hot = ((blocks as f64 * share).floor() as u64).min(blocks);
        match *self {
            Dist::Uniform => hot as f64 / blocks as f64,
            Dist::Zipf { theta } => {
                let w = |k: u64| (k as f64).powf(-theta);
                let top: f64 = (1..=hot).map(w).sum();
                let all: f64 = (1..=blocks).map(w).sum();
                top / all
            }
            // Ranks below `hot`: u^p < hot / (n - 1), that is
            // u < (hot / (n - 1))^(1 / p).
            Dist::Pareto { h } => {
                let p = h.ln() / (1.0 - h).ln();
                let x = hot as f64 / (blocks - 1).max(1) as f64;
                x.min(1.0).powf(1.0 / p)
            }
        }
    }
}

/// Why a `--dist` value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    #[error("unknown --dist '{0}': use uniform, zipf:THETA (e.g. zipf:1.2) or pareto:H (e.g. pareto:0.2)")]
    Unknown(String),
    #[error("--dist zipf:{0}: THETA must be a number greater than 0 (e.g. zipf:1.2)")]
    Theta(String),
    #[error(
        "--dist pareto:{0}: H must be a number between 0 and 1, both excluded (e.g. pareto:0.2)"
    )]
    H(String),
}

impl FromStr for Dist {
    type Err = DistError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        let num = |a: Option<&str>| a.and_then(|a| a.trim().parse::<f64>().ok());
        match (kind, arg) {
            ("uniform", None) => Ok(Dist::Uniform),
            ("zipf", a) => match num(a) {
                Some(theta) if theta.is_finite() && theta > 0.0 => Ok(Dist::Zipf { theta }),
                _ => Err(DistError::Theta(a.unwrap_or("").to_string())),
            },
            ("pareto", a) => match num(a) {
                Some(h) if h > 0.0 && h < 1.0 => Ok(Dist::Pareto { h }),
                _ => Err(DistError::H(a.unwrap_or("").to_string())),
            },
            _ => Err(DistError::Unknown(s.to_string())),
        }
    }
}

/// `uniform`, `zipf:1.2`, `pareto:0.2`: as `--dist` takes it.
impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dist::Uniform => f.write_str("uniform"),
            Dist::Zipf { theta } => write!(f, "zipf:{theta}"),
            Dist::Pareto { h } => write!(f, "pareto:{h}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_back() {
        for s in ["uniform", "zipf:1.2", "zipf:0.8", "zipf:1", "pareto:0.2"] {
            assert_eq!(s.parse::<Dist>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        assert_eq!("zipf:0".parse::<Dist>(), Err(DistError::Theta("0".into())));
        assert_eq!("zipf".parse::<Dist>(), Err(DistError::Theta("".into())));
        assert_eq!(
            "zipf:-2".parse::<Dist>(),
            Err(DistError::Theta("-2".into()))
        );
        assert_eq!(
            "zipf:nan".parse::<Dist>(),
            Err(DistError::Theta("nan".into()))
        );
        assert_eq!("pareto:1".parse::<Dist>(), Err(DistError::H("1".into())));
        assert_eq!("pareto:0".parse::<Dist>(), Err(DistError::H("0".into())));
        assert!(matches!(
            "gauss:2".parse::<Dist>(),
            Err(DistError::Unknown(_))
        ));
        assert!(matches!(
            "uniform:3".parse::<Dist>(),
            Err(DistError::Unknown(_))
        ));
    }

    #[test]
    fn pareto_h_gives_its_hottest_share_one_less_h() {
        // fio's 80/20 rule: pareto:0.2, the hottest 20% take 80%.
        let d = Dist::Pareto { h: 0.2 };
        assert!((d.hottest_share(0.2, 1_000_001) - 0.8).abs() < 1e-3);
        let u = Dist::Uniform;
        assert!((u.hottest_share(0.1, 1000) - 0.1).abs() < 1e-12);
        let z = Dist::Zipf { theta: 1.2 };
        let top = z.hottest_share(0.1, 1000);
        assert!(top > 0.5 && top < 1.0, "{top}");
    }

    #[test]
    fn json_names_the_kind_and_its_parameter() {
        let j = serde_json::to_string(&Dist::Zipf { theta: 1.2 }).unwrap();
        assert_eq!(j, r#"{"kind":"zipf","theta":1.2}"#);
        assert_eq!(
            serde_json::from_str::<Dist>(&j).unwrap(),
            Dist::Zipf { theta: 1.2 }
        );
    }
}
