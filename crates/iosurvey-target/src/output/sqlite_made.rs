//! Whether a file beside a database is one SQLite made: SQLite truncates,
//! rewrites and removes whatever it finds at `FILE-wal`, `FILE-shm` and
//! `FILE-journal` (it treats a header it does not know as an empty log),
//! so a file of the user's that only has such a name is refused, never
//! overwritten. Judged by the file's first bytes: the write-ahead log's
//! magic, the wal-index's version and size, the rollback journal's magic.
//! An empty file holds nothing to lose and is accepted.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// The first four bytes of a write-ahead log (big-endian; the last bit
/// says the byte order of its checksums).
const WAL_MAGIC: [u32; 2] = [0x377f_0682, 0x377f_0683];
/// The first eight bytes of a rollback journal.
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
/// The version at the start of a wal-index (`-shm`), in the host's byte
/// order.
const WAL_INDEX_VERSION: u32 = 3_007_000;
/// A wal-index's first region: whole before its header is written.
const FIRST_REGION: u64 = 32_768;
/// The smallest memory page, by which a wal-index grows (its regions are
/// 32 KiB, each mapped a page at a time as it is made).
const MEMORY_PAGE: u64 = 4096;
/// The wal-index's two header copies and its checkpoint information.
const WAL_INDEX_HEADER: usize = 136;

/// Why the file at `p`, a regular file beside a database named with
/// `suffix` (`-wal`, `-shm`, `-journal`), is not one SQLite made; `None`
/// when it is (or is empty, or is no longer there). Read through a
/// descriptor opened without following a symlink and without waiting on a
/// FIFO, which must still be a regular file. One look: for a file no
/// other process can be writing (the database's lock held).
pub fn not_sqlite_made(p: &Path, suffix: &str) -> Option<String> {
    match look(p) {
        Look::Fine => None,
        Look::Not(why) => Some(why),
        Look::Head(size, head) => judge(suffix, size, &head),
    }
}

/// How long a file that looks not SQLite's is looked at again before it
/// is said to be so, when another process may be writing it.
const SETTLE: Duration = Duration::from_secs(1);
/// How often it is looked at in that time.
const RELOOK: Duration = Duration::from_millis(20);

/// [`not_sqlite_made`] of a file another process's SQLite may be writing
/// at this moment (runs ending together, one recording while the others
/// judge its files): SQLite passes through states no finished file is in
/// (a wal-index cut to 3 bytes and grown again a page at a time, its
/// header's second copy written before its first, a journal's header
/// before its magic), each for microseconds unless its process is put
/// off the CPU. A look that finds the file SQLite's, or gone, settles
/// it; a file is said not to be SQLite's only when every look for
/// [`SETTLE`] says so (a user's file does not change; one of SQLite's
/// does, within that).
pub fn not_sqlite_made_settled(p: &Path, suffix: &str) -> Option<String> {
    let until = Instant::now() + SETTLE;
    loop {
        let why = match look(p) {
            Look::Fine => return None,
            Look::Not(why) => return Some(why),
            Look::Head(size, head) => judge(suffix, size, &head)?,
        };
        if Instant::now() >= until {
            return Some(why);
        }
        std::thread::sleep(RELOOK);
    }
}

/// What one look at a file beside a database found.
enum Look {
    /// Nothing to judge: gone, or empty.
    Fine,
    /// Not SQLite's whatever it holds (unreadable, not a regular file).
    Not(String),
    /// Its size and first [`WAL_INDEX_HEADER`] bytes (fewer when the file
    /// is shorter, or was cut between the two).
    Head(u64, Vec<u8>),
}

fn look(p: &Path) -> Look {
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags())
        .open(p)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Look::Fine,
        Err(e) => return Look::Not(format!("it cannot be read: {e}")),
    };
    let m = match f.metadata() {
        Ok(m) => m,
        Err(e) => return Look::Not(format!("it cannot be read: {e}")),
    };
    if !m.file_type().is_file() {
        return Look::Not("it is not a regular file".into());
    }
    if m.size() == 0 {
        return Look::Fine;
    }
    let mut head = Vec::with_capacity(WAL_INDEX_HEADER);
    if let Err(e) = (&mut f)
        .take(WAL_INDEX_HEADER as u64)
        .read_to_end(&mut head)
    {
        return Look::Not(format!("it cannot be read: {e}"));
    }
    Look::Head(m.size(), head)
}

/// `O_NOFOLLOW | O_NONBLOCK`, through rustix's constants.
fn libc_flags() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32
}

/// The verdict on a non-empty file of `size` bytes beginning with `head`
/// (its first [`WAL_INDEX_HEADER`] bytes, or all of it).
fn judge(suffix: &str, size: u64, head: &[u8]) -> Option<String> {
    match suffix {
        "-wal" => {
            let magic = head
                .get(..4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            match magic {
                Some(m) if WAL_MAGIC.contains(&m) => None,
                _ => Some("it does not begin with a write-ahead log's magic number".into()),
            }
        }
        "-shm" => {
            let version = WAL_INDEX_VERSION.to_ne_bytes();
            // SQLite cuts a wal-index it takes over to 3 bytes, grows it a
            // memory page at a time to whole regions, then writes its
            // header: one being made (by another process now, or by one
            // that stopped) is 3 bytes, or pages whose header is zero but
            // for those 3 bytes.
            let being_made = head.len() >= 3
                && (head[..3] == [0, 0, 0] || head[..3] == version[..3])
                && head[3..].iter().all(|&b| b == 0);
            if size == 3 || size.is_multiple_of(MEMORY_PAGE) && being_made {
                return (!being_made).then(|| "it is 3 bytes that are not a wal-index's".into());
            }
            // A wal-index past its first region grows the next one a
            // memory page at a time too.
            if !size.is_multiple_of(MEMORY_PAGE) || size < FIRST_REGION {
                return Some(format!(
                    "its size is not a wal-index's ({FIRST_REGION} bytes or more, in pages of {MEMORY_PAGE})"
                ));
            }
            (head.get(..4) != Some(&version[..]))
                .then(|| "it does not begin with a wal-index header".into())
        }
        "-journal" => (!head.starts_with(&JOURNAL_MAGIC) && !journal_being_written(head))
            .then(|| "it does not begin with a rollback journal's magic number".into()),
        _ => None,
    }
}

/// Whether `head` is the header of a rollback journal another process is
/// writing now: SQLite writes it with its magic and record count zeroed
/// and puts them in once the journal is synced, so until then it is 12
/// zero bytes, a salt, the database's size, and the sector and page
/// sizes (powers of two, from 32 and 512 to 65536).
fn journal_being_written(head: &[u8]) -> bool {
    let at = |i: usize| {
        head.get(i..i + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let power = |v: Option<u32>, least: u32| {
        v.is_some_and(|v| v.is_power_of_two() && (least..=65_536).contains(&v))
    };
    head.len() >= 28
        && head[..12].iter().all(|&b| b == 0)
        && power(at(20), 32)
        && power(at(24), 512)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlites_headers_are_known_and_other_bytes_are_not() {
        let mut wal = vec![0x37, 0x7f, 0x06, 0x82];
        wal.extend([0; 28]);
        assert_eq!(judge("-wal", 32, &wal), None);
        wal[3] = 0x83;
        assert_eq!(judge("-wal", 32, &wal), None);
        assert!(judge("-wal", 6, b"notes\n").is_some());
        assert!(judge("-wal", 2, &[0x37, 0x7f]).is_some());

        let mut shm = WAL_INDEX_VERSION.to_ne_bytes().to_vec();
        shm.extend([7; WAL_INDEX_HEADER - 4]);
        assert_eq!(judge("-shm", 32_768, &shm), None);
        assert!(judge("-shm", 32_769, &shm).is_some(), "size");
        // A second region being mapped page by page.
        assert!(judge("-shm", 32_768 + 4096, &shm).is_none(), "growing");
        assert_eq!(judge("-shm", 65_536, &[0; WAL_INDEX_HEADER]), None);
        assert!(judge("-shm", 32_768, &[1; WAL_INDEX_HEADER]).is_some());
        assert_eq!(judge("-shm", 3, &shm[..3]), None);
        assert_eq!(judge("-shm", 3, &[0, 0, 0]), None);
        assert_eq!(
            judge("-shm", 8192, &[0; WAL_INDEX_HEADER]),
            None,
            "being made"
        );
        assert!(judge("-shm", 8192, &shm).is_some());
        assert!(judge("-shm", 3, b"hi\n").is_some());
        assert!(judge("-shm", 1, b"x").is_some());

        let mut journal = JOURNAL_MAGIC.to_vec();
        journal.extend([0; 20]);
        assert_eq!(judge("-journal", 28, &journal), None);
        assert!(judge("-journal", 28, &[0; 28]).is_some());
        // Being written by another process: magic and count still zero.
        let mut writing = vec![0; 12];
        writing.extend([0xab, 0xcd, 0xef, 0x01, 0, 0, 0, 9, 0, 0, 2, 0, 0, 0, 16, 0]);
        assert_eq!(judge("-journal", 28, &writing), None);
        writing[26] = 3;
        assert!(judge("-journal", 28, &writing).is_some(), "not a page size");
        assert!(judge("-journal", 5, b"todo\n").is_some());
    }

    #[test]
    fn an_empty_or_missing_file_is_sqlites_and_a_text_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.db-wal");
        assert_eq!(not_sqlite_made(&p, "-wal"), None);
        std::fs::write(&p, b"").unwrap();
        assert_eq!(not_sqlite_made(&p, "-wal"), None);
        std::fs::write(&p, b"my notes\n").unwrap();
        let why = not_sqlite_made(&p, "-wal").unwrap();
        assert!(why.contains("magic"), "{why}");
    }

    #[test]
    fn a_wal_index_that_settles_into_one_is_sqlites_and_one_that_stays_half_written_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.db-shm");
        // Its header's second copy written, the first not yet.
        let mut shm = vec![0; 32_768];
        shm[48..52].copy_from_slice(&WAL_INDEX_VERSION.to_ne_bytes());
        std::fs::write(&p, &shm).unwrap();
        assert!(not_sqlite_made(&p, "-shm").is_some(), "one look");
        let writer = {
            let (p, mut shm) = (p.clone(), shm.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                shm[..4].copy_from_slice(&WAL_INDEX_VERSION.to_ne_bytes());
                std::fs::write(&p, &shm).unwrap();
            })
        };
        assert_eq!(not_sqlite_made_settled(&p, "-shm"), None);
        writer.join().unwrap();
        std::fs::write(&p, &shm).unwrap();
        let t0 = Instant::now();
        let why = not_sqlite_made_settled(&p, "-shm").unwrap();
        assert!(why.contains("wal-index header"), "{why}");
        assert!(t0.elapsed() >= SETTLE);
        // A file that is not a regular one is said at once.
        let fifo = dir.path().join("f.db-wal");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let t0 = Instant::now();
        assert!(not_sqlite_made_settled(&fifo, "-wal").is_some());
        assert!(t0.elapsed() < SETTLE);
    }
}
