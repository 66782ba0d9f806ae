//! Report files saved after every point by writing only what changed at
//! their end: the CSV and the mode's own files (a survey's summary, a
//! table a row longer). The body is rendered whole each time, but when the
//! file already holds its start (the body saved last, known by its length
//! and a 128-bit hash, so that it need not be kept), only the rest is
//! written, at the end of the file this run put there. A body whose start
//! changed (a diskperf row filling in) is written whole through the
//! guard's `replace_at`, as is everything when the name no longer holds
//! the run's file. The JSON report, whose end changes (`]}`), has its own
//! module on the same ground (`json_file`).

use iosurvey_target::output::file::{replace_at, rewrite_held, write_into_placed};
use iosurvey_target::output::path::{OutPath, Sink};
use std::os::unix::fs::FileExt;
use twox_hash::xxhash3_128::Hasher;

/// The file a whole write left at `out`'s name: the one this run put
/// there (`None` for a mounted file, whose held file is written instead).
pub(crate) type Placed = Option<std::fs::File>;

/// Writes `body` whole to the file `out` names ([`Sink::File`] through
/// `replace_at`, [`Sink::Mounted`] into the held file); `Ok(None)` for any
/// other sink (nothing written: they get the report once, at the end).
pub(crate) fn write_whole(out: &OutPath, body: &[u8]) -> std::io::Result<Option<Placed>> {
    match &out.sink {
        Sink::File { dir, name, at, .. } => Ok(Some(Some(replace_at(dir.fd(), name, at, body)?))),
        Sink::Mounted(held) => {
            rewrite_held(held.file(), body)?;
            Ok(Some(None))
        }
        _ => Ok(None),
    }
}

/// Writes `bytes` at `offset` into the run's own file at `out` (`placed`,
/// or the held file of a mounted output) while `out`'s name still holds
/// it and it is still `len` bytes long, as the run left it: `Ok(false)`,
/// with nothing written, when it is not (moved, replaced, or cut or grown
/// by someone else: the caller then writes the whole). Empty `bytes` only
/// checks. A write that fails part way calls `undo` with the file before
/// the error is returned, to put back what it overwrote.
pub(crate) fn write_placed(
    out: &OutPath,
    placed: &Placed,
    len: u64,
    offset: u64,
    bytes: &[u8],
    undo: impl FnOnce(&std::fs::File),
) -> std::io::Result<bool> {
    let file = match (&out.sink, placed) {
        (Sink::File { .. }, Some(f)) => f,
        (Sink::Mounted(held), _) => held.file(),
        _ => return Ok(false),
    };
    if file.metadata()?.len() != len {
        return Ok(false);
    }
    let wrote = match &out.sink {
        Sink::File { dir, name, at, .. } => {
            write_into_placed(dir.fd(), name, at, file, offset, bytes)
        }
        _ => file.write_all_at(bytes, offset).map(|()| true),
    };
    wrote.inspect_err(|_| undo(file))
}

/// A file saved by [`write`]: where it is, and the body it holds.
pub(crate) struct Grown {
    placed: Placed,
    len: usize,
    hash: u128,
}

/// Saves `body` to the file `out` names (nothing for a sink that is not a
/// file), `saved` being what the last save left there: only the bytes
/// past the saved body when `body` starts with it, nothing when it is
/// that body, else the whole.
pub(crate) fn write(out: &OutPath, body: &str, saved: &mut Option<Grown>) -> std::io::Result<()> {
    let body = body.as_bytes();
    if let Some(g) = saved.as_mut() {
        if let Some(start) = body.get(..g.len) {
            let mut h = Hasher::new();
            h.write(start);
            if h.finish_128() == g.hash {
                h.write(&body[g.len..]);
                let (old, hash) = (g.len as u64, h.finish_128());
                let undo = |f: &std::fs::File| drop(f.set_len(old));
                // An unchanged body writes nothing, but is still written
                // whole if the run's file is no longer at the name.
                let rest = &body[g.len..];
                if write_placed(out, &g.placed, old, old, rest, undo)? {
                    g.len = body.len();
                    g.hash = hash;
                    return Ok(());
                }
            }
        }
    }
    *saved = None;
    if let Some(placed) = write_whole(out, body)? {
        *saved = Some(Grown {
            placed,
            len: body.len(),
            hash: Hasher::oneshot(body),
        });
    }
    Ok(())
}

/// What the tests of the files saved as a run goes share.
#[cfg(test)]
pub(crate) mod test_files {
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    /// The inode at `p`: the same file, or a new one put there.
    pub(crate) fn ino(p: &Path) -> u64 {
        std::fs::symlink_metadata(p).unwrap().ino()
    }

    /// Fills the filesystem of directory `dir` with a file (whose path
    /// comes back, to remove before unmounting).
    pub(crate) fn fill(dir: &Path) -> PathBuf {
        let filler = dir.join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![1u8; 512];
        while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
        filler
    }
}

#[cfg(test)]
mod tests {
    use super::test_files::{fill, ino};
    use super::*;
    use iosurvey_target::output::path::judge;

    #[test]
    fn a_body_that_grew_is_written_past_its_old_end_into_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let out = judge("--csv", &path).unwrap();
        let mut saved = None;
        write(&out, "head\n1\n", &mut saved).unwrap();
        let first = ino(&path);
        // A mark in its first byte, made through another handle without
        // changing its length: a save that wrote only the end keeps it.
        let marked = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        marked.write_all_at(b"H", 0).unwrap();
        for body in ["head\n1\n2\n", "head\n1\n2\n", "head\n1\n2\n3\n"] {
            write(&out, body, &mut saved).unwrap();
            let want = format!("H{}", &body[1..]);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
            assert_eq!(ino(&path), first, "appended to, not replaced: {body:?}");
        }
        // Cut by someone else: not the length the run left, written whole.
        marked.set_len(3).unwrap();
        write(&out, "head\n1\n2\n3\n4\n", &mut saved).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "head\n1\n2\n3\n4\n"
        );
        // Its start changed (a row filled in): written whole, a new file.
        write(&out, "head\n1\n2 more\n3\n", &mut saved).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "head\n1\n2 more\n3\n"
        );
        assert_ne!(ino(&path), first);
        // Shorter: whole again, nothing of the longer one left.
        write(&out, "head\n", &mut saved).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "head\n");
    }

    #[test]
    fn a_file_put_at_the_name_during_the_run_is_never_written_into() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let out = judge("--csv", &path).unwrap();
        let mut saved = None;
        write(&out, "head\n1\n", &mut saved).unwrap();
        let moved = dir.path().join("moved.csv");
        std::fs::rename(&path, &moved).unwrap();
        std::fs::write(&path, b"precious").unwrap();
        let e = write(&out, "head\n1\n2\n", &mut saved).unwrap_err();
        assert!(e.to_string().contains("not replaced"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        assert_eq!(std::fs::read_to_string(&moved).unwrap(), "head\n1\n");
        // Removed: the name was the run's; written whole again, even by a
        // save that adds nothing.
        std::fs::remove_file(&path).unwrap();
        let mut saved = None;
        write(&out, "head\n1\n", &mut saved).unwrap();
        std::fs::remove_file(&path).unwrap();
        write(&out, "head\n1\n", &mut saved).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "head\n1\n");
    }

    #[test]
    fn a_write_that_fills_the_filesystem_leaves_the_file_as_it_was() {
        use iosurvey_testkit::{require, Mount};
        let m = require!(Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=64k"]));
        let path = m.path().join("r.csv");
        let out = judge("--csv", &path).unwrap();
        let mut saved = None;
        write(&out, "head\n1\n", &mut saved).unwrap();
        let first = ino(&path);
        let filler = fill(m.path());
        let more = format!("head\n1\n{}\n", "2".repeat(64 << 10));
        let e = write(&out, &more, &mut saved).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOSPC.raw_os_error())
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "head\n1\n");
        assert_eq!(ino(&path), first, "the failed write was the append");
        std::fs::remove_file(&filler).unwrap();
        drop(out);
    }
}
