//! The target of a files-per-frame video workload: the `iosurvey-frames`
//! directory inside the directory the user gave, one file per frame.
//!
//! Writes go only to frame files iosurvey created (marked with its xattr)
//! or to new ones, unless `--allow-destroy`. Reads refuse frames that were
//! never written (missing, short or sparse), unless `--prepare` writes them
//! first, unmeasured.

use crate::guard::Refusal;
use crate::target::{
    check_free_space, create_marked, created_by_iosurvey, dir_dio_alignment, fill, io_err,
    Geometry, OpenOptions, OpenTarget, TargetError, TargetKind,
};
use iosurvey_engine::Op;
use iosurvey_workload::{frames_dir, FrameJob, TargetSpec};
use rustix::fs::{FileType, Mode, OFlags, SeekFrom};
use rustix::io::Errno;
use std::path::{Path, PathBuf};

/// What the frames directory holds now, against what the job needs.
struct Survey {
    root: PathBuf,
    /// Reading: the frames that are missing, short or have holes, in frame
    /// order.
    unwritten: Vec<u64>,
    alignment: u64,
}

/// Whether `path` holds a whole written frame of `bytes`: false when it
/// is missing, not a regular file, short or sparse.
fn frame_is_written(path: &Path, bytes: u64) -> Result<bool, TargetError> {
    let fd = match rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(io_err(path, "open", e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "stat", e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || (st.st_size as u64) < bytes {
        return Ok(false);
    }
    Ok(!matches!(rustix::fs::seek(&fd, SeekFrom::Hole(0)), Ok(h) if h < bytes))
}

/// Checks the target directory and the frames in it against `fj` and the
/// write policy, without creating or writing anything.
fn survey(spec: &TargetSpec, fj: &FrameJob, opts: &OpenOptions<'_>) -> Result<Survey, TargetError> {
    let dir = spec.path.as_path();
    let st = match rustix::fs::stat(dir) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Err(TargetError::NoFramesDir(dir.to_path_buf())),
        Err(e) => return Err(io_err(dir, "stat", e)),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(TargetError::FramesNeedDir(dir.to_path_buf()));
    }
    let root = frames_dir(dir);
    let writes = fj.op == Op::Write || fj.prepare;
    if writes && opts.policy.readonly {
        return Err(Refusal::ReadOnly(root).into());
    }
    let mut unwritten = Vec::new();
    let mut existing_bytes = 0;
    for f in 0..fj.frames {
        let path = fj.frame_path(&root, f);
        match fj.op {
            Op::Read => {
                if !frame_is_written(&path, fj.frame_bytes)? {
                    unwritten.push(f);
                }
            }
            Op::Write => match rustix::fs::stat(&path) {
                Ok(st) => {
                    existing_bytes += st.st_size as u64;
                    if !opts.policy.allow_destroy && !created_by_iosurvey(&path) {
                        return Err(Refusal::ForeignFile(path).into());
                    }
                }
                Err(Errno::NOENT) => {}
                Err(e) => return Err(io_err(&path, "stat", e)),
            },
        }
    }
    if fj.op == Op::Read && !fj.prepare {
        if let Some(&first) = unwritten.first() {
            return Err(TargetError::FramesMissing {
                dir: root.clone(),
                missing: unwritten.len() as u64,
                frames: fj.frames,
                first: fj.frame_path(&root, first),
            });
        }
    }
    let need = match fj.op {
        Op::Write => (fj.frames * fj.frame_bytes).saturating_sub(existing_bytes),
        Op::Read => unwritten.len() as u64 * fj.frame_bytes,
    };
    if need > 0 {
        check_free_space(&root, dir, need)?;
    }
    Ok(Survey {
        root,
        unwritten,
        alignment: dir_dio_alignment(dir, st.st_dev),
    })
}

/// The geometry of the frames directory, found without writing anything.
pub fn plan_frame_dir(
    spec: &TargetSpec,
    fj: &FrameJob,
    opts: OpenOptions<'_>,
) -> Result<Geometry, TargetError> {
    let s = survey(spec, fj, &opts)?;
    Ok(Geometry {
        path: s.root,
        size: fj.frames * fj.frame_bytes,
        logical_block_size: s.alignment,
        direct: opts.direct,
    })
}

/// Creates `dir` and the frame subdirectories the job needs.
fn make_dirs(root: &Path, fj: &FrameJob) -> Result<(), TargetError> {
    let mut last: Option<PathBuf> = None;
    for f in 0..fj.frames {
        let parent = fj.frame_path(root, f).parent().map(Path::to_path_buf);
        if parent != last {
            if let Some(p) = &parent {
                std::fs::create_dir_all(p).map_err(|err| TargetError::Io {
                    path: p.clone(),
                    op: "create directory",
                    err,
                })?;
            }
            last = parent;
        }
    }
    Ok(())
}

/// Opens the frames directory of `spec` for `fj`: creates it for writes,
/// writes the missing frames for `--prepare`, and evicts the frames from
/// the page cache before buffered reads.
pub fn open_frame_dir(
    spec: &TargetSpec,
    fj: &FrameJob,
    opts: OpenOptions<'_>,
) -> Result<OpenTarget, TargetError> {
    let s = survey(spec, fj, &opts)?;
    let root = s.root.clone();
    let root_existed = root.exists();
    let mut frame_files = Vec::new();
    let created = fj.op == Op::Write || !s.unwritten.is_empty();
    if created {
        make_dirs(&root, fj)?;
    }
    match fj.op {
        // Every frame is (re)written by the run, and removed after it.
        Op::Write => frame_files = (0..fj.frames).map(|f| fj.frame_path(&root, f)).collect(),
        Op::Read => {
            for &f in &s.unwritten {
                let path = fj.frame_path(&root, f);
                frame_files.push(path.clone());
                if let Err(e) = create_marked(&path, OFlags::TRUNC)
                    .and_then(|fd| fill(&path, &fd, fj.frame_bytes, opts.stop))
                {
                    let _ = remove_frames(&root, &frame_files);
                    if !root_existed {
                        let _ = std::fs::remove_dir(&root);
                    }
                    return Err(e);
                }
            }
            if !opts.direct {
                for f in 0..fj.frames {
                    if let Ok(fd) = rustix::fs::open(
                        fj.frame_path(&root, f),
                        OFlags::RDONLY | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) {
                        let _ = rustix::fs::fadvise(&fd, 0, None, rustix::fs::Advice::DontNeed);
                    }
                }
            }
        }
    }
    let fd = rustix::fs::open(
        &root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err(&root, "open", e))?;
    Ok(OpenTarget {
        path: root,
        kind: TargetKind::Directory,
        size: fj.frames * fj.frame_bytes,
        logical_block_size: s.alignment,
        physical_block_size: s.alignment.max(4096),
        rotational: None,
        direct: opts.direct,
        writable: fj.op == Op::Write,
        created,
        frame_files,
        fd,
    })
}

/// Removes `files` (those already gone are fine), then the directories
/// under `root` and `root` itself if that leaves them empty.
pub fn remove_frames(root: &Path, files: &[PathBuf]) -> std::io::Result<()> {
    let mut first_err = None;
    let mut dirs: Vec<&Path> = Vec::new();
    for f in files {
        match std::fs::remove_file(f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        if let Some(p) = f.parent() {
            if p != root && dirs.last() != Some(&p) {
                dirs.push(p);
            }
        }
    }
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
    let _ = std::fs::remove_dir(root);
    first_err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
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
        (j.targets[0].clone(), j.frames.unwrap())
    }

    fn opts(policy: WritePolicy) -> OpenOptions<'static> {
        OpenOptions {
            write: true,
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
        assert!(t.created);
        assert_eq!(t.frame_files.len(), 5);
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

    #[test]
    fn removal_takes_only_the_listed_frames_and_empty_directories() {
        let d = tempfile::tempdir().unwrap();
        let (spec, fj) = job(d.path(), Op::Write, 4, 2, false);
        let t = open_frame_dir(&spec, &fj, opts(WritePolicy::default())).unwrap();
        for f in &t.frame_files {
            std::fs::write(f, b"frame").unwrap();
        }
        let stranger = frames_dir(d.path()).join("d00001/keep.txt");
        std::fs::write(&stranger, b"user").unwrap();
        t.remove_if_created().unwrap();
        assert!(t.frame_files.iter().all(|f| !f.exists()));
        assert!(stranger.exists());
        assert!(!frames_dir(d.path()).join("d00000").exists());
    }
}
