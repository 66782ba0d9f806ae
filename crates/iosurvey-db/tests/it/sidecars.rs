//! The files SQLite keeps beside the database: a file of the user's that
//! only has such a name is refused and kept, the log and wal-index a
//! writer left are recovered, and a corrupt file is refused in one line.

use crate::run;
use iosurvey_db::{Db, DbError, Filter};
use std::path::{Path, PathBuf};

fn refused<T>(e: Result<T, DbError>) -> String {
    match e {
        Err(DbError::Refused(m)) => m,
        Err(other) => panic!("failed, not refused: {other:?}"),
        Ok(_) => panic!("not refused"),
    }
}

fn beside(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

/// Files named like SQLite's that SQLite did not make, each with why.
fn strangers() -> Vec<(&'static str, Vec<u8>)> {
    let mut shm_header = vec![0x55; 32_768];
    shm_header[..4].copy_from_slice(&3_007_001u32.to_ne_bytes());
    vec![
        ("-wal", b"my notes, kept beside the database\n".to_vec()),
        ("-wal", [0x37, 0x7f, 0x06, 0x84].repeat(64)),
        ("-shm", b"not a wal-index\n".to_vec()),
        ("-shm", shm_header),
        ("-journal", b"journal of my trip\n".to_vec()),
        ("-journal", vec![0; 512]),
    ]
}

#[test]
fn a_users_file_named_like_sqlites_is_refused_and_kept_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    let mut db = Db::open(&old, "x").unwrap();
    db.insert(&run("k1", "2025-01-01T00:00:00Z", None, 100.0, "1"))
        .unwrap();
    drop(db);
    let new = dir.path().join("new.db");
    for (suffix, bytes) in strangers() {
        for p in [&old, &new] {
            let side = beside(p, suffix);
            std::fs::write(&side, &bytes).unwrap();
            let before = std::fs::read(p).ok();
            let ms = [
                refused(Db::check(p, "--db h.db")),
                refused(Db::open(p, "--db h.db")),
                refused(Db::open_read(p, "--db h.db")),
            ];
            for m in ms {
                // Said before anything: a missing database is not "no
                // such file" first when its log is in the way.
                if p == &new && m.contains("no such file") {
                    continue;
                }
                assert!(
                    m.contains(&format!("{} is not a file SQLite made", side.display())),
                    "{suffix}: {m}"
                );
                assert!(!m.contains('\n'), "{m}");
            }
            assert!(std::fs::read(&side).unwrap() == bytes, "{suffix} changed");
            assert_eq!(std::fs::read(p).ok(), before, "the database changed");
            std::fs::remove_file(&side).unwrap();
            for other in ["-wal", "-shm", "-journal"].map(|s| beside(p, s)) {
                assert!(!other.exists(), "{} left behind", other.display());
            }
        }
    }
    // Empty files hold nothing to lose: accepted (and SQLite's again).
    for suffix in ["-wal", "-shm", "-journal"] {
        std::fs::write(beside(&old, suffix), b"").unwrap();
    }
    Db::check(&old, "x").unwrap();
    assert_eq!(
        Db::open_read(&old, "x")
            .unwrap()
            .runs(&Filter::default())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_log_of_a_writer_still_running_is_recovered_from_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    let mut db = Db::open(&p, "x").unwrap();
    db.insert(&run("k1", "2025-01-01T00:00:00Z", None, 100.0, "1"))
        .unwrap();
    db.insert(&run("k2", "2025-01-02T00:00:00Z", None, 110.0, "1"))
        .unwrap();
    // A copy of the three files while the writer holds them open, as a
    // crash would leave them: the runs are in the log only.
    let copy = tempfile::tempdir().unwrap();
    let q = copy.path().join("h.db");
    for suffix in ["", "-wal", "-shm"] {
        std::fs::copy(beside(&p, suffix), beside(&q, suffix)).unwrap();
    }
    drop(db);
    assert!(std::fs::metadata(beside(&q, "-wal")).unwrap().len() > 32);
    Db::check(&q, "x").unwrap();
    let read = Db::open_read(&q, "x").unwrap();
    assert_eq!(read.runs(&Filter::default()).unwrap().len(), 2);
    drop(read);
    let mut db = Db::open(&q, "x").unwrap();
    db.insert(&run("k3", "2025-01-03T00:00:00Z", None, 120.0, "1"))
        .unwrap();
    assert_eq!(db.runs(&Filter::default()).unwrap().len(), 3);
}

#[test]
fn a_database_corrupt_in_many_places_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    drop(Db::open(&p, "x").unwrap());
    // Rows that break their table's declared rule: five problems, which
    // `PRAGMA quick_check` says on several lines under a heading.
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(
        "CREATE TABLE junk(x);
         INSERT INTO junk VALUES (NULL), (NULL), (NULL), (NULL), (NULL);
         PRAGMA writable_schema = ON;
         UPDATE sqlite_master SET sql = 'CREATE TABLE junk(x NOT NULL)' WHERE name = 'junk';
         PRAGMA writable_schema = OFF;",
    )
    .unwrap();
    drop(c);
    let before = std::fs::read(&p).unwrap();
    let m = refused(Db::check(&p, "--db h.db"));
    assert!(m.contains("is corrupt (NULL value in junk.x"), "{m}");
    assert!(m.contains("and 4 other problems"), "{m}");
    assert!(!m.contains('\n'), "more than one line: {m}");
    assert!(std::fs::read(&p).unwrap() == before, "the file changed");
}

/// A wal-index caught between its header's second copy and its first,
/// as SQLite writes them (the second, at byte 48, first): no finished
/// wal-index is like it, and a process put off the CPU there leaves it so
/// for as long as it is off.
fn wal_index_half_written() -> Vec<u8> {
    let mut shm = vec![0; 32_768];
    shm[48..52].copy_from_slice(&3_007_000u32.to_ne_bytes());
    shm[60..64].copy_from_slice(&4096u32.to_ne_bytes());
    shm
}

#[test]
fn a_wal_index_half_written_under_another_writers_lock_is_judged_again_when_it_is_let_go() {
    // Runs ending together: one records, holding the database's lock,
    // while the others judge its files; they lost runs to a wal-index
    // looked at half written (`is not a file SQLite made`, exit 1).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("h.db");
    let mut db = Db::open(&p, "x").unwrap();
    db.insert(&run("k1", "2025-01-01T00:00:00Z", None, 100.0, "1"))
        .unwrap();
    drop(db);
    let shm = beside(&p, "-shm");
    for open in [Db::check, |p: &Path, s: &str| Db::open(p, s).map(drop)] {
        std::fs::write(&shm, wal_index_half_written()).unwrap();
        let held = std::fs::File::open(&p).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let writer = {
            let shm = shm.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                // Its connection closed: the wal-index removed, the lock
                // let go.
                std::fs::remove_file(&shm).unwrap();
                drop(held);
            })
        };
        let t0 = std::time::Instant::now();
        let done = open(&p, "--db h.db");
        writer.join().unwrap();
        assert!(done.is_ok(), "{done:?}");
        assert!(t0.elapsed() >= std::time::Duration::from_millis(300));
    }
    let mut db = Db::open(&p, "x").unwrap();
    db.insert(&run("k2", "2025-01-02T00:00:00Z", None, 100.0, "1"))
        .unwrap();
    assert_eq!(db.runs(&Filter::default()).unwrap().len(), 2);
    drop(db);
    // The same file with no writer's lock on it is a stranger's: refused,
    // and kept.
    std::fs::write(&shm, wal_index_half_written()).unwrap();
    let m = refused(Db::open(&p, "--db h.db"));
    assert!(m.contains("-shm is not a file SQLite made"), "{m}");
    assert!(std::fs::read(&shm).unwrap() == wal_index_half_written());
}
