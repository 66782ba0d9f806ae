//! Which points of two saved runs are the same point: matched by their
//! typed parameters (by their label in modes whose points have none), and
//! when none is, why not ([`NoMatch`]).

use iosurvey_model::document::{PointReport, RunReport};
use iosurvey_model::PointParams;

/// Why a run compared with the baseline gave nothing to compare.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoMatch {
    #[error("{run} has no measured point (each was skipped or interrupted): nothing to compare; give a run that measured")]
    Empty { run: String },
    #[error("no point of {b} matched one of {a}: {why}; compare runs of one plan (the same parameters), or two runs of one point each")]
    Points { a: String, b: String, why: String },
    #[error("no point of {b} matched one of {a} in a class of I/O: the points match, but one side only reads and the other only writes")]
    Classes { a: String, b: String },
}

/// The key points are matched by: their typed parameters, or their label
/// where the mode's points carry none that tell them apart.
fn key(p: &PointReport) -> String {
    match &p.params {
        PointParams::None | PointParams::Run { .. } | PointParams::Video => p.label.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| p.label.clone()),
    }
}

/// Each distinct point of `r` (in the order first run), with its repeats.
pub(super) fn points_of(r: &RunReport) -> Vec<(String, Vec<&PointReport>)> {
    let mut out: Vec<(String, Vec<&PointReport>)> = Vec::new();
    for p in r
        .points
        .iter()
        .filter(|p| p.skipped.is_none() && !p.interrupted)
    {
        let k = key(p);
        match out.iter_mut().find(|(q, _)| *q == k) {
            Some((_, v)) => v.push(p),
            None => out.push((k, vec![p])),
        }
    }
    out
}

/// Why no point of `b` (named `b_name`) is one of `a`'s, both non-empty:
/// how many points each has, the first of each, and the parameters in
/// which those two differ.
pub(super) fn no_point_matched(
    a_name: &str,
    a: &[(String, Vec<&PointReport>)],
    b_name: &str,
    b: &[(String, Vec<&PointReport>)],
) -> NoMatch {
    let (pa, pb) = (a[0].1[0], b[0].1[0]);
    let count = |n: usize| format!("{n} point{}", if n == 1 { "" } else { "s" });
    let mut why = format!(
        "{a_name} has {} (the first `{}`), {b_name} {} (the first `{}`)",
        count(a.len()),
        pa.label,
        count(b.len()),
        pb.label
    );
    let differ = differing(&pa.params, &pb.params);
    if !differ.is_empty() {
        why.push_str(&format!(", which differ in {}", differ.join(", ")));
    }
    NoMatch::Points {
        a: a_name.into(),
        b: b_name.into(),
        why,
    }
}

/// The parameters in which `a` and `b` differ (`label` where the mode's
/// points carry none, `parameters` where only one side records them).
fn differing(a: &PointParams, b: &PointParams) -> Vec<String> {
    let plain = |p: &PointParams| {
        matches!(
            p,
            PointParams::None | PointParams::Run { .. } | PointParams::Video
        )
    };
    if plain(a) && plain(b) {
        return vec!["label".into()];
    }
    if plain(a) != plain(b) {
        return vec!["parameters (one report records none)".into()];
    }
    let (Ok(serde_json::Value::Object(x)), Ok(serde_json::Value::Object(y))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return Vec::new();
    };
    let mut names: Vec<String> = x
        .iter()
        .filter(|(k, v)| y.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    names.extend(y.keys().filter(|k| !x.contains_key(*k)).cloned());
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_model::{Op, Pattern};

    #[test]
    fn the_parameters_that_differ_are_named() {
        let d = |size, op| PointParams::Diskperf {
            size,
            pattern: Pattern::Forward,
            op,
        };
        assert_eq!(differing(&d(4096, Op::Read), &d(8192, Op::Read)), ["size"]);
        assert_eq!(
            differing(&d(4096, Op::Read), &d(8192, Op::Write)),
            ["op", "size"]
        );
        assert_eq!(differing(&PointParams::RUN, &PointParams::RUN), ["label"]);
        assert_eq!(
            differing(&PointParams::None, &d(4096, Op::Read)),
            ["parameters (one report records none)"]
        );
    }
}
