//! Tests of the frames directory on real files: what is refused, what is
//! prepared, and what the clean-up removes.

use super::*;
use crate::guard::WritePolicy;
use iosurvey_workload::modes::video::{expand, FrameSize, VideoSpec};
use iosurvey_workload::FrameLayout;

fn job(dir: &Path, op: Op, frames: u64, per_dir: u32, prepare: bool) -> (TargetSpec, FrameJob) {
    let mut s = VideoSpec::new(dir.to_path_buf());
    s.op = op;
    s.size = FrameSize::Custom(8192);
    s.frames = frames;
    s.layout = FrameLayout::Files {
        files_per_dir: per_dir,
    };
    s.prepare = prepare;
    let j = expand(&s).unwrap().points.remove(0).job;
    (j.targets[0].clone(), j.frames().cloned().unwrap())
}

fn opts(policy: WritePolicy) -> OpenOptions<'static> {
    OpenOptions {
        write: true,
        trim: false,
        direct: false,
        policy,
        stop: None,
    }
}

#[test]
fn reading_frames_never_written_is_refused_and_prepare_writes_them() {
    let d = tempfile::tempdir().unwrap();
    let (spec, fj) = job(d.path(), Op::Read, 5, 2, false);
    let err = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("5 of 5 frames were never written"), "{msg}");
    assert!(msg.contains("--prepare"), "{msg}");
    assert!(
        !frames_dir(d.path()).exists(),
        "a refusal leaves nothing behind"
    );

    let (spec, fj) = job(d.path(), Op::Read, 5, 2, true);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    assert_eq!(t.kind, TargetKind::Directory);
    assert_eq!(t.size, 5 * 8192);
    assert!(matches!(t.created, Created::Frames(_)));
    assert_eq!(t.frame_files().len(), 5);
    let f4 = frames_dir(d.path()).join("d00002/f0000004.frm");
    assert_eq!(std::fs::metadata(&f4).unwrap().len(), 8192);
    // A short (sparse) frame is refused as never written too.
    let f0 = frames_dir(d.path()).join("d00000/f0000000.frm");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f0)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let (spec, fj) = job(d.path(), Op::Read, 5, 2, false);
    let msg = open_frame_dir(&spec, &fj, opts(WritePolicy::default()))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("1 of 5 frames"), "{msg}");
    assert!(msg.contains("f0000000.frm"), "{msg}");
    t.remove_if_created().unwrap();
    assert!(!frames_dir(d.path()).exists());
}

#[test]
fn writes_refuse_foreign_frames_and_files_as_targets() {
    let d = tempfile::tempdir().unwrap();
    let root = frames_dir(d.path());
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("f0000001.frm"), b"mine").unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 3, 0, false);
    let err = plan_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap_err();
    assert!(err.to_string().contains("did not create"), "{err}");
    let ro = WritePolicy {
        readonly: true,
        ..WritePolicy::default()
    };
    assert!(matches!(
        plan_frame_dir(&spec, &fj, opts(ro)),
        Err(TargetError::Refused(Refusal::ReadOnly(_)))
    ));
    let file = d.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let (spec, fj) = job(&file, Op::Write, 3, 0, false);
    assert!(matches!(
        plan_frame_dir(&spec, &fj, opts(WritePolicy::default())),
        Err(TargetError::FramesNeedDir(_))
    ));
    assert_eq!(std::fs::read(root.join("f0000001.frm")).unwrap(), b"mine");
}

/// Marks `path` as iosurvey's, as a run does through its descriptor.
fn mark(path: &Path) {
    let fd = std::fs::File::open(path).unwrap();
    crate::guard::mark_created(&fd);
}

fn marked(path: &Path) -> bool {
    crate::guard::fd_is_marked(std::fs::File::open(path).unwrap())
}

#[test]
fn removal_takes_only_marked_frames_and_marked_empty_directories() {
    let d = tempfile::tempdir().unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 4, 2, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    let root = frames_dir(d.path());
    assert!(
        marked(&root),
        "the frames directory iosurvey made is marked"
    );
    assert!(marked(&root.join("d00000")));
    for f in &t.frame_files() {
        std::fs::write(f, b"frame").unwrap();
        mark(f);
    }
    // A frame replaced by the user's own file (same name, no mark).
    let files = t.frame_files();
    let theirs = &files[2];
    std::fs::remove_file(theirs).unwrap();
    std::fs::write(theirs, b"user").unwrap();
    let stranger = root.join("d00000/keep.txt");
    std::fs::write(&stranger, b"user").unwrap();
    t.remove_if_created().unwrap();
    assert_eq!(std::fs::read(theirs).unwrap(), b"user");
    assert_eq!(std::fs::read(&stranger).unwrap(), b"user");
    for (i, f) in t.frame_files().iter().enumerate() {
        assert_eq!(f.exists(), i == 2, "{}", f.display());
    }
    assert!(root.join("d00000").exists() && root.join("d00001").exists());
    std::fs::remove_file(&stranger).unwrap();
    std::fs::remove_file(theirs).unwrap();
    t.remove_if_created().unwrap();
    assert!(!root.exists(), "marked and empty: removed");
}

#[test]
fn a_frames_directory_moved_during_the_run_is_said_not_silently_left() {
    let d = tempfile::tempdir().unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 3, 0, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    for f in &t.frame_files() {
        std::fs::write(f, b"frame").unwrap();
        mark(f);
    }
    let moved = d.path().join("moved");
    std::fs::rename(frames_dir(d.path()), &moved).unwrap();
    let err = t.remove_if_created().unwrap_err().to_string();
    assert!(err.contains("no longer there"), "{err}");
    // Nothing was removed where the frames went.
    assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 3);
}

#[test]
fn a_frames_directory_the_user_made_is_used_but_never_removed() {
    let d = tempfile::tempdir().unwrap();
    let root = frames_dir(d.path());
    std::fs::create_dir(&root).unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 3, 0, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    assert!(!marked(&root));
    t.remove_if_created().unwrap();
    assert!(root.exists());
}

#[test]
fn prepare_refuses_a_users_file_at_a_frame_path_and_leaves_it() {
    let d = tempfile::tempdir().unwrap();
    let root = frames_dir(d.path());
    std::fs::create_dir(&root).unwrap();
    let theirs = root.join("f0000000.frm");
    std::fs::write(&theirs, b"precious").unwrap();
    let (spec, fj) = job(d.path(), Op::Read, 3, 0, true);
    let err = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap_err();
    assert!(
        matches!(err, TargetError::Refused(Refusal::ForeignFile(ref p)) if *p == theirs),
        "{err}"
    );
    assert_eq!(std::fs::read(&theirs).unwrap(), b"precious");
    assert_eq!(
        std::fs::read_dir(&root).unwrap().count(),
        1,
        "nothing created"
    );
}

#[test]
fn symlinks_and_other_files_at_frame_paths_are_refused_even_with_allow_destroy() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = frames_dir(d.path());
    let destroy = WritePolicy {
        allow_destroy: true,
        ..WritePolicy::default()
    };
    // A symlinked frames directory.
    std::os::unix::fs::symlink(outside.path(), &root).unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 3, 0, false);
    let err = open_frame_dir(&spec, &fj, opts(destroy)).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    std::fs::remove_file(&root).unwrap();
    // A dangling symlink, a directory and a FIFO at frame paths.
    std::fs::create_dir(&root).unwrap();
    let target = outside.path().join("created-through-a-link");
    std::os::unix::fs::symlink(&target, root.join("f0000001.frm")).unwrap();
    let err = open_frame_dir(&spec, &fj, opts(destroy)).unwrap_err();
    assert!(err.to_string().contains("f0000001.frm"), "{err}");
    assert!(!target.exists());
    std::fs::remove_file(root.join("f0000001.frm")).unwrap();
    std::fs::create_dir(root.join("f0000002.frm")).unwrap();
    let err = open_frame_dir(&spec, &fj, opts(destroy)).unwrap_err();
    assert!(err.to_string().contains("a directory"), "{err}");
    std::fs::remove_dir(root.join("f0000002.frm")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("f0000000.frm"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let err = open_frame_dir(&spec, &fj, opts(destroy)).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    // A symlinked subdirectory.
    std::fs::remove_file(root.join("f0000000.frm")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("d00000")).unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 3, 2, false);
    let err = open_frame_dir(&spec, &fj, opts(destroy)).unwrap_err();
    assert!(err.to_string().contains("d00000"), "{err}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn the_worker_never_creates_through_a_symlink_swapped_in_after_the_survey() {
    let d = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 2, 2, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    let root = frames_dir(d.path());
    // Swapped in after the survey: a dangling link at a frame path and a
    // subdirectory replaced by a link elsewhere.
    let target = outside.path().join("victim");
    std::os::unix::fs::symlink(&target, root.join("d00000/f0000000.frm")).unwrap();
    let rel = |f| fj.frame_path(Path::new(""), f);
    let e = fsops::open_frame(t.fd.as_fd(), &rel(0), Op::Write, false).unwrap_err();
    assert!(matches!(e, Errno::LOOP | Errno::EXIST), "{e:?}");
    std::fs::remove_file(root.join("d00000/f0000000.frm")).unwrap();
    std::fs::remove_dir(root.join("d00000")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("d00000")).unwrap();
    assert!(fsops::open_frame(t.fd.as_fd(), &rel(1), Op::Write, false).is_err());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // An unmarked file where a frame goes is not truncated.
    std::fs::remove_file(root.join("d00000")).unwrap();
    std::fs::create_dir(root.join("d00000")).unwrap();
    std::fs::write(root.join("d00000/f0000000.frm"), b"user").unwrap();
    let e = fsops::open_frame(t.fd.as_fd(), &rel(0), Op::Write, false).unwrap_err();
    assert_eq!(e, Errno::EXIST);
    assert_eq!(
        std::fs::read(root.join("d00000/f0000000.frm")).unwrap(),
        b"user"
    );
}

#[test]
fn leftovers_of_a_killed_run_are_found_and_removed() {
    let d = tempfile::tempdir().unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 5, 2, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    let root = frames_dir(d.path());
    for f in &t.frame_files() {
        std::fs::write(f, b"frame").unwrap();
        mark(f);
    }
    let stranger = root.join("d00001/keep.txt");
    std::fs::write(&stranger, b"user").unwrap();
    // This run is alive: nothing is a leftover.
    assert_eq!(remove_leftovers(d.path()).unwrap(), None);
    // A run that died: its pid is no longer running.
    rustix::fs::setxattr(
        &root,
        PENDING_XATTR,
        b"999999999",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    let l = remove_leftovers(d.path()).unwrap().unwrap();
    assert_eq!(
        l,
        Leftovers {
            pid: 999999999,
            frames: 5
        }
    );
    assert!(t.frame_files().iter().all(|f| !f.exists()));
    assert!(stranger.exists());
    assert!(!root.join("d00000").exists());
    assert_eq!(remove_leftovers(d.path()).unwrap(), None, "once");
    // Kept frames (the pending mark cleared) are not leftovers.
    std::fs::remove_file(&stranger).unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 2, 0, false);
    let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
    for f in &t.frame_files() {
        std::fs::write(f, b"frame").unwrap();
        mark(f);
    }
    finish_frames(d.path());
    assert_eq!(
        fsops::pending_pid(std::fs::File::open(&root).unwrap()),
        None
    );
    assert_eq!(remove_leftovers(d.path()).unwrap(), None);
    assert!(t.frame_files().iter().all(|f| f.exists()));
}

#[test]
fn a_stop_ends_the_survey() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(frames_dir(d.path())).unwrap();
    let (spec, fj) = job(d.path(), Op::Write, 1_000_000, 0, false);
    let stop = AtomicBool::new(true);
    let o = OpenOptions {
        stop: Some(&stop),
        ..opts(WritePolicy::default())
    };
    let t0 = std::time::Instant::now();
    assert!(matches!(
        open_frame_dir(&spec, &fj, o),
        Err(TargetError::Interrupted(_))
    ));
    assert!(t0.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn the_frames_a_write_creates_are_a_range_less_the_offered_ones() {
    let (_, fj) = job(Path::new("/t"), Op::Write, 1_000_000, 100, false);
    let c = CreatedFrames {
        job: Some(fj.clone()),
        listed: None,
        kept: vec![2, 999_999],
    };
    // Nothing grows with --frames but the offered frames.
    assert!(c.listed.is_none() && c.kept.len() == 2);
    let n = c.numbers();
    assert_eq!(n.len(), 999_998);
    assert_eq!(&n[..3], &[0, 1, 3]);
    assert_eq!(n.last(), Some(&999_998));
    let paths = c.paths(Path::new("/t/iosurvey-frames"));
    assert_eq!(paths[2], fj.frame_path(Path::new("/t/iosurvey-frames"), 3));
    let prepared = CreatedFrames {
        listed: Some(vec![4, 7, 9]),
        kept: vec![7],
        ..c
    };
    assert_eq!(prepared.numbers(), [4, 9]);
    assert!(CreatedFrames::default().paths(Path::new("/t")).is_empty());
}

/// The directory `p` and the last part of `f`, for the racer.
fn dir_and_name(f: &Path) -> (std::os::fd::OwnedFd, std::ffi::OsString) {
    let flags = rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY;
    let dir = rustix::fs::open(f.parent().unwrap(), flags, rustix::fs::Mode::empty()).unwrap();
    (dir, f.file_name().unwrap().to_os_string())
}

/// How many files under `dir` (recursively) hold `body`.
fn holding(dir: &Path, body: &[u8]) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => holding(&e.path(), body),
            _ => usize::from(std::fs::read(e.path()).is_ok_and(|b| b == body)),
        })
        .sum()
}

#[test]
fn a_users_file_swapped_with_a_frame_by_rename_exchange_is_never_removed() {
    // Before: the clean-up checked a frame's inode, then unlinked its name;
    // a user's file from outside the frames directory swapped in between
    // (renameat2 RENAME_EXCHANGE) was deleted.
    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("users-file");
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    for round in 0..60 {
        // A fresh user's file: the last round may have left a frame there.
        let _ = std::fs::remove_file(&outside);
        std::fs::write(&outside, b"user data").unwrap();
        let (spec, fj) = job(d.path(), Op::Write, 16, 4, false);
        let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
        let frames = t.frame_files();
        for f in &frames {
            std::fs::write(f, b"frame").unwrap();
            mark(f);
        }
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        let victim = &frames[round % frames.len()];
        let racer = crate::guard::trash::exchanger(
            dir_and_name(victim),
            dir_and_name(&outside),
            stop.clone(),
        );
        let _ = t.remove_if_created();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        racer.join().unwrap();
        assert_eq!(
            holding(d.path(), b"user data"),
            1,
            "round {round}: the user's file was lost"
        );
        drop(t);
        let _ = std::fs::remove_dir_all(frames_dir(d.path()));
    }
}
