//! A name iosurvey made up for an output (ORION's
//! `<testname>_<minute>_summary.txt`), claimed when the run is planned: the
//! file is created there, empty, with `O_CREAT|O_EXCL|O_NOFOLLOW`, so that
//! of the runs started together in one directory exactly one gets the
//! name, and the others look further while nothing is measured yet. The
//! report then replaces exactly that file (by identity, through the
//! output's `AtName`), never anything put there since; a claim no report
//! replaced is removed when it is dropped (a run refused or failed before
//! it wrote), if it is still the empty file this run created.

use crate::guard::trash::remove_same;
use crate::output::judged::{AtName, Judged};
use crate::output::path::{HeldDir, OutPath, OutputError, Sink};
use rustix::fs::{Mode, OFlags, Stat};
use rustix::io::Errno;
use std::ffi::OsString;
use std::os::fd::OwnedFd;

/// A made-up output's name, held by the empty file this run created there
/// until the report replaces it.
pub struct Claim {
    dir: HeldDir,
    name: OsString,
    /// The file created, held open for as long as the claim: its inode
    /// cannot be freed and given to a later report (a rewrite's new file),
    /// which would then look like the claim and be removed with it.
    _held: OwnedFd,
    /// The file created, as `fstat` of its descriptor saw it.
    made: Stat,
    /// What the output's name holds as far as the run knows: the claim
    /// until a report replaced it.
    at: AtName,
}

/// Claims `out`, judged as a new file (see
/// [`crate::output::path::judge_new`]): creates it, empty, in the
/// directory held since it was judged, and makes it the file the report
/// replaces. `None` when something took the name since it was judged (a
/// run started at the same moment): the caller looks further.
pub fn claim(out: &OutPath) -> Result<Option<Claim>, OutputError> {
    let Sink::File { dir, name, at, .. } = &out.sink else {
        return Err(not_new(out));
    };
    if at.get().is_some() {
        return Err(not_new(out));
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir.fd(), name, flags, Mode::from_raw_mode(0o644)) {
        Ok(fd) => fd,
        Err(Errno::EXIST) => return Ok(None),
        Err(e) => {
            return Err(OutputError::new(format!(
                "{}: cannot create it: {e}; give a writable place",
                out.shown()
            )))
        }
    };
    let made =
        rustix::fs::fstat(&fd).map_err(|e| OutputError::new(format!("{}: {e}", out.shown())))?;
    let claim = Claim {
        dir: dir.clone(),
        name: name.clone(),
        _held: fd,
        made,
        at: at.clone(),
    };
    // From here on the report replaces this file and nothing else; should
    // this fail, dropping the claim removes the file again.
    at.set(Judged::of(&made));
    Ok(Some(claim))
}

/// The refusal of a claim of an output that is not a new file: a
/// mistake of the caller's, said rather than replacing what is there.
fn not_new(out: &OutPath) -> OutputError {
    OutputError::new(format!(
        "{}: is not a new file, so it cannot be claimed; give another output directory",
        out.shown()
    ))
}

impl Claim {
    /// Whether a report replaced the claim (the name holds the run's
    /// report, which stays).
    fn replaced(&self) -> bool {
        self.at.get() != Some(Judged::of(&self.made))
    }
}

impl Drop for Claim {
    /// Removes the claim when no report replaced it, and only if the name
    /// still holds the file this run created (by identity, through the
    /// trash, so a file swapped in meanwhile stays).
    fn drop(&mut self) {
        if !self.replaced() {
            let _ = remove_same(self.dir.fd(), &self.name, &self.made);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::file::replace_at;
    use crate::output::path::judge_new;
    use std::path::Path;

    fn judged(p: &Path) -> OutPath {
        judge_new("--out (summary.txt)", p).unwrap().unwrap()
    }

    fn sink(out: &OutPath) -> (&HeldDir, &OsString, &AtName) {
        match &out.sink {
            Sink::File { dir, name, at, .. } => (dir, name, at),
            other => panic!("not a file: {other:?}"),
        }
    }

    #[test]
    fn of_two_claims_of_one_name_only_the_first_gets_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t_20261204_1440_summary.txt");
        let (a, b) = (judged(&p), judged(&p));
        let mine = claim(&a).unwrap().expect("the name is free");
        assert!(p.symlink_metadata().unwrap().is_file());
        assert!(claim(&b).unwrap().is_none(), "claimed twice");
        // Nothing is there to judge as new now.
        assert!(judge_new("--out", &p).unwrap().is_none());
        drop(mine);
    }

    #[test]
    fn a_claim_no_report_replaced_is_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.txt");
        let out = judged(&p);
        drop(claim(&out).unwrap().unwrap());
        assert!(p.symlink_metadata().is_err(), "the claim was left");
        // Only the trash made ahead when the directory was judged (kept
        // until the run ends, see `trash::reserve`) is left.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(".iosurvey-trash-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn the_report_replaces_the_claim_and_stays_when_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.txt");
        let out = judged(&p);
        let mine = claim(&out).unwrap().unwrap();
        let (held, name, at) = sink(&out);
        replace_at(held.fd(), name, at, b"Maximum Small IOPS=1\n").unwrap();
        // Rewritten whole again, as a summary is after a later point: a
        // new file, which must not take the claim's freed inode and look
        // like the claim (it did, and was removed at the end of the run).
        // Others' files come and go beside it, as ORION's other files do.
        let other = judged(&dir.path().join("o.csv"));
        let (o_dir, o_name, o_at) = sink(&other);
        for k in 2..30 {
            let body = format!("Maximum Small IOPS={k}\n");
            replace_at(held.fd(), name, at, body.as_bytes()).unwrap();
            replace_at(o_dir.fd(), o_name, o_at, body.as_bytes()).unwrap();
        }
        drop(mine);
        assert_eq!(std::fs::read(&p).unwrap(), b"Maximum Small IOPS=29\n");
    }

    #[test]
    fn a_file_put_in_place_of_the_claim_is_neither_replaced_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.txt");
        let out = judged(&p);
        let mine = claim(&out).unwrap().unwrap();
        // The user's file moved over the claim during the run.
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, b"the user's").unwrap();
        std::fs::rename(&theirs, &p).unwrap();
        let (held, name, at) = sink(&out);
        assert!(replace_at(held.fd(), name, at, b"report").is_err());
        drop(mine);
        assert_eq!(std::fs::read(&p).unwrap(), b"the user's");
    }
}
