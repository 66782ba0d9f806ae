//! File operations on both engines, on a temp directory: a frame's whole
//! cycle, the resolution rules every open gets, and the checks that keep
//! the descriptor's use sound.

use super::*;
use crate::{Completion, Engine, EngineConfig, SyncEngine, UringEngine};
use iosurvey_testkit::{not_running, skip};
use std::time::Duration;

fn cfg(dir: &tempfile::TempDir) -> EngineConfig<'static> {
    let fd = rustix::fs::open(
        dir.path(),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    EngineConfig {
        files: vec![fd],
        buffers: 4,
        buffer_size: 4096,
        alignment: 4096,
        sqpoll: None,
        iopoll: false,
        fill: Default::default(),
        verify: None,
        stop: None,
    }
}

/// One engine, running one file operation at a time.
type Run = Box<dyn FnMut(FileOp) -> i32>;

/// Every engine under test: sync, io_uring, and io_uring doing opens and
/// closes synchronously (as on a kernel without OPENAT2).
fn engines(dir: &tempfile::TempDir) -> Vec<(&'static str, Run)> {
    let mut out: Vec<(&'static str, Run)> = Vec::new();
    let mut sync = SyncEngine::new(cfg(dir), 1).unwrap();
    out.push(("sync", Box::new(move |op| one(&mut sync, op))));
    match UringEngine::new(cfg(dir), 4, 1) {
        Ok(mut uring) => {
            out.push(("uring", Box::new(move |op| one(&mut uring, op))));
            let mut fallback = UringEngine::new(cfg(dir), 4, 1).unwrap().without_file_ops();
            out.push(("uring-fallback", Box::new(move |op| one(&mut fallback, op))));
        }
        Err(err) => {
            not_running(&format!("io_uring unavailable here: {err}"));
        }
    }
    out
}

/// Runs `op` on slot 0 (after writing 0xab into its buffer) and returns
/// its result.
fn one<E: Engine>(e: &mut E, op: FileOp) -> i32 {
    e.buffer_mut(0).unwrap().fill(0xab);
    e.push_file(0, op);
    let mut got: Vec<Completion> = Vec::new();
    while e.in_flight() > 0 {
        e.submit_and_wait(1, Duration::from_secs(5)).unwrap();
        e.reap(|c| {
            got.push(c);
            None
        });
    }
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].buf, 0);
    got[0].result
}

fn open(path: &str, flags: OFlags) -> FileOp {
    FileOp::Open {
        dir: 0,
        path: CString::new(path).unwrap(),
        flags,
        mode: Mode::from_raw_mode(0o644),
        base: 0,
    }
}

const CREATE: OFlags = OFlags::WRONLY.union(OFlags::CREATE).union(OFlags::EXCL);

#[test]
fn a_frame_is_created_written_synced_and_closed_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    for (name, mut run) in engines(&dir) {
        let file = format!("frame-{name}");
        assert!(run(open(&file, CREATE)) >= 0, "{name}");
        let write = FileOp::Io {
            op: Op::Write,
            offset: 4096,
            len: 4096,
        };
        assert_eq!(run(write), 4096, "{name}");
        assert_eq!(run(FileOp::Sync { data_only: false }), 0, "{name}");
        assert_eq!(run(FileOp::Sync { data_only: true }), 0, "{name}");
        assert_eq!(run(FileOp::Close), 0, "{name}");
        let data = std::fs::read(dir.path().join(&file)).unwrap();
        assert_eq!(data.len(), 8192, "{name}");
        assert!(data[..4096].iter().all(|&b| b == 0), "{name}");
        // Generated as it was written (crate::data), not the buffer's
        // bytes: eight sectors, none like another.
        let sectors: std::collections::HashSet<&[u8]> = data[4096..].chunks(512).collect();
        assert_eq!(sectors.len(), 8, "{name}");
        assert!(
            data[4096..].iter().filter(|&&b| b == 0xab).count() < 64,
            "{name}: the buffer's fill was written"
        );
        // O_EXCL: the frame is not created twice.
        assert_eq!(run(open(&file, CREATE)), -libc::EEXIST, "{name}");
        // Read back through a second open.
        assert!(run(open(&file, OFlags::RDONLY)) >= 0, "{name}");
        let read = FileOp::Io {
            op: Op::Read,
            offset: 0,
            len: 4096,
        };
        assert_eq!(run(read), 4096, "{name}");
        assert_eq!(run(FileOp::Close), 0, "{name}");
    }
}

#[test]
fn an_io_past_the_largest_offset_fails_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    for (name, mut run) in engines(&dir) {
        let file = format!("far-{name}");
        assert!(
            run(open(&file, OFlags::RDWR | OFlags::CREATE)) >= 0,
            "{name}"
        );
        for (op, offset) in [
            (Op::Write, u64::MAX),
            (Op::Read, u64::MAX),
            (Op::Write, crate::MAX_OFFSET + 1),
        ] {
            let io = FileOp::Io {
                op,
                offset,
                len: 4096,
            };
            assert_eq!(run(io), -libc::EINVAL, "{name} {op:?} at {offset:#x}");
        }
        assert_eq!(run(FileOp::Close), 0, "{name}");
        // io_uring would have written at the file position, 0.
        assert_eq!(std::fs::metadata(dir.path().join(&file)).unwrap().len(), 0);
    }
}

/// Whether a write lease can be taken on `path`: only when no descriptor
/// anywhere (the kernel's included) still has it open for writing.
fn nobody_writes(path: &std::path::Path) -> bool {
    let f = std::fs::File::open(path).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    // SAFETY: plain fcntl calls on a descriptor this test owns.
    let taken = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) } == 0;
    if taken {
        // SAFETY: as above.
        unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
    }
    taken
}

#[test]
fn after_the_close_completes_no_reference_to_the_frame_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let Ok(mut e) = UringEngine::new(cfg(&dir), 4, 1) else {
        skip!("io_uring unavailable");
    };
    let registered = e.features().registered_files;
    let path = dir.path().join("f");
    assert!(one(&mut e, open("f", CREATE)) >= 0);
    let write = FileOp::Io {
        op: Op::Write,
        offset: 0,
        len: 4096,
    };
    assert_eq!(one(&mut e, write), 4096);
    assert!(!nobody_writes(&path), "the frame is open for writing");
    assert_eq!(one(&mut e, FileOp::Close), 0);
    assert!(nobody_writes(&path), "a reference outlived the close");
    // The table of the engine's own files stays registered.
    assert_eq!(e.features().registered_files, registered);
}

#[test]
fn no_open_follows_a_symlink_or_leaves_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim"), b"keep").unwrap();
    std::os::unix::fs::symlink(outside.path().join("victim"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
    for (name, mut run) in engines(&dir) {
        let write = OFlags::WRONLY | OFlags::TRUNC;
        assert_eq!(run(open("link", write)), -libc::ELOOP, "{name}");
        let through = run(open("sub/victim", write));
        assert!(
            through == -libc::ELOOP || through == -libc::EXDEV,
            "{name}: {through}"
        );
        let up = run(open("../victim", write));
        assert!(up == -libc::EXDEV || up == -libc::ENOENT, "{name}: {up}");
        let abs = outside.path().join("victim");
        let abs = run(open(abs.to_str().unwrap(), write));
        assert_eq!(abs, -libc::EXDEV, "{name}");
    }
    assert_eq!(
        std::fs::read(outside.path().join("victim")).unwrap(),
        b"keep"
    );
}

#[test]
fn a_failed_open_leaves_no_file_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = SyncEngine::new(cfg(&dir), 1).unwrap();
    assert_eq!(one(&mut e, open("missing", OFlags::RDONLY)), -libc::ENOENT);
    assert!(e.open_file().is_none());
    assert!(one(&mut e, open("made", CREATE)) >= 0);
    assert!(e.open_file().is_some());
    assert_eq!(one(&mut e, FileOp::Close), 0);
    assert!(e.open_file().is_none());
}

fn refuses<E: Engine>(mut e: E, steps: Vec<FileOp>) {
    for (i, op) in steps.into_iter().enumerate() {
        e.push_file(i as u32, op);
    }
}

#[test]
#[should_panic(expected = "file operation refused")]
fn io_without_an_open_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let io = FileOp::Io {
        op: Op::Write,
        offset: 0,
        len: 4096,
    };
    refuses(SyncEngine::new(cfg(&dir), 1).unwrap(), vec![io]);
}

#[test]
#[should_panic(expected = "file operation refused")]
fn a_close_with_io_in_flight_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Ok(mut e) = UringEngine::new(cfg(&dir), 4, 1) else {
        // Outside CI the expected panic stands for the skip; under CI the
        // skip's own panic does not match it, and the test fails.
        not_running("no io_uring");
        panic!("file operation refused (skipped: no io_uring)");
    };
    assert!(one(&mut e, open("f", CREATE)) >= 0);
    let io = FileOp::Io {
        op: Op::Write,
        offset: 0,
        len: 4096,
    };
    e.push_file(1, io);
    e.push_file(2, FileOp::Close);
}

#[test]
#[should_panic(expected = "file operation refused")]
fn a_second_open_while_one_is_open_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = SyncEngine::new(cfg(&dir), 1).unwrap();
    assert!(one(&mut e, open("f", CREATE)) >= 0);
    e.push_file(1, open("g", CREATE));
}

#[test]
#[should_panic(expected = "request refused")]
fn a_file_io_longer_than_its_buffer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = SyncEngine::new(cfg(&dir), 1).unwrap();
    assert!(one(&mut e, open("f", CREATE)) >= 0);
    let io = FileOp::Io {
        op: Op::Write,
        offset: 0,
        len: 8192,
    };
    e.push_file(1, io);
}

#[test]
fn a_polled_ring_opens_syncs_and_closes_synchronously() {
    let dir = tempfile::tempdir().unwrap();
    let polled = EngineConfig {
        iopoll: true,
        fill: Default::default(),
        verify: None,
        stop: None,
        ..cfg(&dir)
    };
    let Ok(mut e) = UringEngine::new(polled, 4, 1) else {
        skip!("the kernel refused a polled ring");
    };
    // IOPOLL rings refuse OPENAT2, FSYNC and CLOSE (EINVAL) in the ring.
    assert!(one(&mut e, open("f", CREATE)) >= 0);
    assert_eq!(one(&mut e, FileOp::Sync { data_only: false }), 0);
    assert_eq!(one(&mut e, FileOp::Close), 0);
    assert!(dir.path().join("f").exists());
}
