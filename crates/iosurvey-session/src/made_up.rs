//! A mode's files under names iosurvey makes up (ORION's
//! `<testname>_<minute>_*`): the first set of names nothing is at, judged
//! as new files, then claimed once every other check of the outputs has
//! passed, by creating its first file exclusively
//! (`iosurvey_target::output::claim`). Runs started at the same moment in
//! one directory all find the same set free by looking; only one creates
//! its first file, and the others take a later set while nothing is
//! measured yet, instead of losing their results at their first write.

use crate::failure::Failure;
use iosurvey_target::output::path::{judge_new, OutPath};
use std::path::PathBuf;

/// One set of made-up names, as (flag, path), in `file_bodies`' order.
pub(crate) type Set = Vec<(String, PathBuf)>;

/// The first set of `sets` from `from` on that nothing is at, judged as
/// new files: its index and its outputs. Refused (exit 2) when every one
/// is taken.
pub(crate) fn judge_free(sets: &[Set], from: usize) -> Result<(usize, Vec<OutPath>), Failure> {
    for (k, set) in sets.iter().enumerate().skip(from) {
        // A look first: a taken set costs no probe of its directory.
        if set.iter().any(|(_, p)| p.symlink_metadata().is_ok()) {
            continue;
        }
        if let Some(outs) = judge_set(set)? {
            return Ok((k, outs));
        }
    }
    Err(all_taken(sets))
}

/// Every name of `set` judged as a new file; `None` when one was taken
/// since the look.
fn judge_set(set: &Set) -> Result<Option<Vec<OutPath>>, Failure> {
    let mut outs = Vec::with_capacity(set.len());
    for (flag, p) in set {
        match judge_new(flag, p).map_err(|e| Failure::Usage(e.into()))? {
            Some(o) => outs.push(o),
            None => return Ok(None),
        }
    }
    Ok(Some(outs))
}

/// The refusal when every set is taken, naming a file of the first.
fn all_taken(sets: &[Set]) -> Failure {
    let first = sets.first().into_iter().flatten();
    let there = first
        .clone()
        .find(|(_, p)| p.symlink_metadata().is_ok())
        .or(first.clone().next());
    let shown = there.map_or(String::new(), |(_, p)| p.display().to_string());
    Failure::Usage(anyhow::anyhow!(
        "{shown}: already exists (an earlier run, or a file of yours), and so does a file under every later name this run could take; \
         iosurvey names these files itself and never replaces what it did not offer to write: \
         move them, or give another output directory"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(dir: &std::path::Path) -> Vec<Set> {
        (0..3)
            .map(|k| {
                ["summary.txt", "iops.csv"]
                    .iter()
                    .map(|s| (format!("--out ({s})"), dir.join(format!("t_{k}_{s}"))))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_first_set_with_nothing_at_any_name_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let sets = sets(dir.path());
        assert_eq!(judge_free(&sets, 0).unwrap().0, 0);
        std::fs::write(dir.path().join("t_0_iops.csv"), b"x").unwrap();
        std::os::unix::fs::symlink("nowhere", dir.path().join("t_1_summary.txt")).unwrap();
        let (k, outs) = judge_free(&sets, 0).unwrap();
        assert_eq!(k, 2);
        assert_eq!(outs.len(), 2);
        assert_eq!(outs[1].given, dir.path().join("t_2_iops.csv"));
        // From a later set on, as after a lost claim.
        assert!(judge_free(&sets, 3).is_err());
    }

    #[test]
    fn every_set_taken_is_refused_naming_a_file_there() {
        let dir = tempfile::tempdir().unwrap();
        let sets = sets(dir.path());
        for k in 0..3 {
            std::fs::write(dir.path().join(format!("t_{k}_iops.csv")), b"x").unwrap();
        }
        let Err(Failure::Usage(e)) = judge_free(&sets, 0) else {
            panic!("not refused");
        };
        assert!(
            e.to_string().contains("t_0_iops.csv: already exists"),
            "{e}"
        );
    }
}
