//! Small text files a run reads to know what to do (a fio job file,
//! ORION's `<testname>.lun`): read only when they are regular files, and
//! no more than [`SMALL_TEXT_LIMIT`] of them, so that a name given by
//! mistake (`/dev/zero`, a disk) is refused at once instead of read whole
//! into memory.

use rustix::fs::OFlags;
use std::io::{Error, ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most a job file or a LUN list may hold: far more than any has.
pub const SMALL_TEXT_LIMIT: u64 = 1 << 20;

/// The text of `path`, or why it is not a small text file.
pub fn read_small_text(path: &Path) -> std::io::Result<String> {
    // Without blocking and without taking a terminal: a FIFO's open would
    // wait for a writer, and a device's open may act (a tape rewinds);
    // what is not a regular file is refused once it is open.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file; give a text file",
        ));
    }
    let mut bytes = Vec::new();
    f.take(SMALL_TEXT_LIMIT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > SMALL_TEXT_LIMIT {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {SMALL_TEXT_LIMIT} bytes; it is text of a few lines"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text; give a text file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_and_a_huge_file_are_refused_a_small_file_read() {
        let e = read_small_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.fio");
        std::fs::write(&big, vec![b'#'; SMALL_TEXT_LIMIT as usize + 1]).unwrap();
        let e = read_small_text(&big).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_small_text(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let ok = dir.path().join("j.fio");
        std::fs::write(&ok, "[j]\nrw=read\n").unwrap();
        assert_eq!(read_small_text(&ok).unwrap(), "[j]\nrw=read\n");
    }
}
