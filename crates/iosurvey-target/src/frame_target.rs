//! The target of a files-per-frame video workload: the `iosurvey-frames`
//! directory inside the directory the user gave, one file per frame.
//!
//! Every frame and directory is reached by `openat` from a directory held
//! open, never through a symlink, and judged by the descriptor opened.
//! Writes go only to frames that carry iosurvey's mark (xattr) or to new
//! ones created with `O_CREAT|O_EXCL|O_NOFOLLOW`; an unmarked regular
//! frame is written only with `--allow-destroy` (and stays the user's:
//! never marked, never removed); anything else at a frame path is
//! refused, naming it. Reads refuse frames that were never
//! written (missing, short or sparse), unless `--prepare` writes them
//! first, unmeasured. The clean-up removes only marked frames and marked,
//! empty directories.

mod cleanup;
mod created;
pub(crate) mod fsops;

pub use cleanup::{finish_frames, remove_frames, remove_leftovers, Leftovers};
pub use created::CreatedFrames;
pub use fsops::{frame_is_ours, is_offered, mark_frame, PENDING_XATTR};

use crate::guard::family::FileUses;
use crate::guard::{check_file_use_in, fd_is_marked, Refusal};
use crate::target::{
    check_free_space, dir_dio_alignment, fill, io_err, Created, Geometry, OpenOptions, OpenTarget,
    TargetError, TargetKind,
};
use fsops::{frames_name, inspect, is_written, make_dir, open_beneath, open_dir, what_is, Entry};
use iosurvey_engine::Op;
use iosurvey_workload::{frames_dir, FrameJob, FrameLayout, TargetSpec};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Frames surveyed between two looks at the stop flag.
const STOP_EVERY: u64 = 256;

/// The frames a read finds unwritten: counted, and listed only when
/// `--prepare` is to write them (a refusal needs only the count and the
/// first).
#[derive(Default)]
struct Unwritten {
    count: u64,
    first: Option<u64>,
    list: Vec<u64>,
    listed: bool,
}

impl Unwritten {
    fn push(&mut self, f: u64) {
        self.count += 1;
        self.first.get_or_insert(f);
        if self.listed {
            self.list.push(f);
        }
    }
}

impl OpenTarget {
    /// The paths of the frames this run creates or rewrites (see
    /// [`CreatedFrames`]).
    pub fn frame_files(&self) -> Vec<PathBuf> {
        match &self.created {
            Created::Frames(frames) => frames.paths(&self.path),
            Created::Nothing | Created::File => Vec::new(),
        }
    }
}

/// What the frames directory holds now, against what the job needs.
struct Survey {
    /// The directory the user gave, held open.
    dir_fd: OwnedFd,
    /// `iosurvey-frames`, when it exists.
    root_fd: Option<OwnedFd>,
    root: PathBuf,
    /// Reading: the frames that are missing, short or have holes, in frame
    /// order.
    unwritten: Unwritten,
    /// With `--allow-destroy`: unmarked regular frames the user offered to
    /// `--write` or `--prepare`; they are rewritten but never marked, and
    /// never removed.
    offered: Vec<u64>,
    alignment: u64,
}

/// A frame's path relative to the frames directory, split into its
/// subdirectory (if any) and its file name.
fn rel_parts(fj: &FrameJob, f: u64) -> (PathBuf, Option<PathBuf>, PathBuf) {
    let rel = fj.frame_path(Path::new(""), f);
    let name = PathBuf::from(rel.file_name().expect("frame paths end in a name"));
    let sub = rel
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf);
    (rel, sub, name)
}

/// Refuses what is at `path` when it is not a frame iosurvey may use.
fn not_a_frame(path: PathBuf, what: &'static str) -> TargetError {
    TargetError::Unsupported { path, what }
}

fn stopped(stop: Option<&AtomicBool>) -> bool {
    stop.is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Refuses a job that can never fit: more frame bytes than the whole
/// filesystem holds. Checked before any frame path is looked at.
fn check_capacity(at: BorrowedFd<'_>, root: &Path, fj: &FrameJob) -> Result<(), TargetError> {
    let want = fj.frames.saturating_mul(fj.frame_bytes);
    if let Ok(vfs) = rustix::fs::fstatvfs(at) {
        let size = vfs.f_blocks.saturating_mul(vfs.f_frsize);
        if size > 0 && want > size {
            return Err(TargetError::Smaller {
                path: root.to_path_buf(),
                size,
                want,
            });
        }
    }
    Ok(())
}

/// Checks the target directory and the frames in it against `fj` and the
/// write policy, without creating or writing anything.
fn survey(spec: &TargetSpec, fj: &FrameJob, opts: &OpenOptions<'_>) -> Result<Survey, TargetError> {
    let dir = spec.path.as_path();
    // The directory the run's checks judged and locked, when they hold it.
    let held = crate::frame_dir::held(dir).map(Ok);
    let dir_fd = match held.unwrap_or_else(|| {
        rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
    }) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(TargetError::NoFramesDir(dir.to_path_buf())),
        Err(Errno::NOTDIR) => return Err(TargetError::FramesNeedDir(dir.to_path_buf())),
        Err(e) => return Err(io_err(dir, "open", e)),
    };
    let st = rustix::fs::fstat(&dir_fd).map_err(|e| io_err(dir, "stat", e))?;
    if let Some(fs) = crate::target::kernel_fs(&dir_fd) {
        let path = dir.to_path_buf();
        return Err(TargetError::KernelFs { path, fs });
    }
    let root = frames_dir(dir);
    let writes = fj.op == Op::Write || fj.prepare;
    if writes && opts.policy.readonly {
        return Err(Refusal::ReadOnly(root).into());
    }
    let root_fd = match open_dir(dir_fd.as_fd(), &frames_name()) {
        Ok(fd) => fd,
        Err(Errno::LOOP | Errno::NOTDIR) => {
            return Err(not_a_frame(root, what_is(dir_fd.as_fd(), &frames_name())))
        }
        Err(e) => return Err(io_err(&root, "open", e)),
    };
    check_capacity(
        root_fd.as_ref().map_or(dir_fd.as_fd(), |f| f.as_fd()),
        &root,
        fj,
    )?;
    let mut s = Survey {
        alignment: dir_dio_alignment(dir, st.st_dev),
        dir_fd,
        root_fd,
        root,
        unwritten: Unwritten {
            listed: fj.prepare,
            ..Unwritten::default()
        },
        offered: Vec::new(),
    };
    let mut existing_bytes = 0;
    match s.root_fd.as_ref() {
        // Nothing is there yet: every frame is missing.
        None if fj.op == Op::Read => {
            s.unwritten.count = fj.frames;
            s.unwritten.first = Some(0);
            if fj.prepare {
                s.unwritten.list = (0..fj.frames).collect();
            }
        }
        None => {}
        Some(root_fd) => {
            existing_bytes =
                survey_frames(&mut s.unwritten, &mut s.offered, root_fd, &s.root, fj, opts)?;
        }
    }
    if fj.op == Op::Read && !fj.prepare {
        if let Some(first) = s.unwritten.first {
            return Err(TargetError::FramesMissing {
                dir: s.root.clone(),
                missing: s.unwritten.count,
                frames: fj.frames,
                first: fj.frame_path(&s.root, first),
            });
        }
    }
    let need = match fj.op {
        // Frames are read or written; a discard (never asked of frames)
        // counts as a write.
        Op::Write | Op::Trim => (fj.frames * fj.frame_bytes).saturating_sub(existing_bytes),
        Op::Read => s.unwritten.count * fj.frame_bytes,
    };
    if need > 0 {
        let at = s.root_fd.as_ref().map_or(dir, |_| s.root.as_path());
        check_free_space(&s.root, at, need)?;
    }
    Ok(s)
}

/// Looks at every frame path under `root_fd`: for reads, which frames are
/// unwritten; for writes and `--prepare`, that each frame to write is
/// missing or a marked regular file (or, with `--allow-destroy`, an
/// unmarked one, collected in `offered`).
/// Returns the bytes the existing frames hold.
fn survey_frames(
    unwritten: &mut Unwritten,
    offered: &mut Vec<u64>,
    root_fd: &OwnedFd,
    root: &Path,
    fj: &FrameJob,
    opts: &OpenOptions<'_>,
) -> Result<u64, TargetError> {
    let mut existing_bytes = 0;
    let mut sub: Option<(PathBuf, Option<OwnedFd>)> = None;
    // A frame is a file target: one that backs a loop device or is a
    // swap file is never written (read once for every frame).
    let uses = (fj.op == Op::Write || fj.prepare).then(FileUses::now);
    for f in 0..fj.frames {
        if f % STOP_EVERY == 0 && stopped(opts.stop) {
            return Err(TargetError::Interrupted(root.to_path_buf()));
        }
        let (rel, subdir, name) = rel_parts(fj, f);
        let path = root.join(&rel);
        let dir = match &subdir {
            None => Some(root_fd.as_fd()),
            Some(d) => {
                if sub.as_ref().is_none_or(|(n, _)| n != d) {
                    let fd = match open_dir(root_fd.as_fd(), d) {
                        Ok(fd) => fd,
                        Err(Errno::LOOP | Errno::NOTDIR) => {
                            return Err(not_a_frame(root.join(d), what_is(root_fd.as_fd(), d)))
                        }
                        Err(e) => return Err(io_err(&root.join(d), "open", e)),
                    };
                    sub = Some((d.clone(), fd));
                }
                sub.as_ref()
                    .and_then(|(_, fd)| fd.as_ref().map(|f| f.as_fd()))
            }
        };
        let entry = match dir {
            None => Entry::Missing,
            Some(d) => inspect(d, &name).map_err(|e| io_err(&path, "open", e))?,
        };
        match entry {
            Entry::Missing => {
                if fj.op == Op::Read {
                    unwritten.push(f);
                }
            }
            Entry::Other(what) => return Err(not_a_frame(path, what)),
            Entry::Regular { fd, size, marked } => match fj.op {
                Op::Read => {
                    if !is_written(&fd, size, fj.frame_bytes) {
                        if fj.prepare {
                            check_frame_use(uses.as_ref(), &path, &fd)?;
                        }
                        if fj.prepare && !marked {
                            // --prepare would have to overwrite it.
                            if !opts.policy.allow_destroy {
                                return Err(Refusal::ForeignFile(path).into());
                            }
                            offered.push(f);
                        }
                        unwritten.push(f);
                    }
                }
                Op::Write | Op::Trim => {
                    check_frame_use(uses.as_ref(), &path, &fd)?;
                    existing_bytes += size;
                    if !marked {
                        if !opts.policy.allow_destroy {
                            return Err(Refusal::ForeignFile(path).into());
                        }
                        offered.push(f);
                    }
                }
            },
        }
    }
    Ok(existing_bytes)
}

/// Refuses a frame to be written that is in use as a whole file (it backs
/// a loop device, or is a swap file), judged on the descriptor held.
fn check_frame_use(uses: Option<&FileUses>, path: &Path, fd: &OwnedFd) -> Result<(), TargetError> {
    let Some(uses) = uses else { return Ok(()) };
    let st = rustix::fs::fstat(fd).map_err(|e| io_err(path, "stat", e))?;
    Ok(check_file_use_in(uses, path, &st)?)
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

/// The frames directory and its subdirectories the job writes in: made
/// (and marked) where missing, opened where they are.
struct Tree {
    root_fd: OwnedFd,
    /// Subdirectories by name, in frame order.
    subs: Vec<(PathBuf, OwnedFd)>,
}

impl Tree {
    fn dir_of(&self, sub: &Option<PathBuf>) -> BorrowedFd<'_> {
        match sub {
            None => self.root_fd.as_fd(),
            Some(d) => self
                .subs
                .iter()
                .rev()
                .find(|(n, _)| n == d)
                .map_or(self.root_fd.as_fd(), |(_, fd)| fd.as_fd()),
        }
    }
}

/// Makes the frames directory (marked) if it is missing, and the
/// subdirectories of `frames`.
fn make_tree(
    s: &mut Survey,
    fj: &FrameJob,
    frames: impl Iterator<Item = u64>,
    opts: &OpenOptions<'_>,
) -> Result<Tree, TargetError> {
    let root_fd = match s.root_fd.take() {
        Some(fd) => fd,
        None => {
            make_dir(s.dir_fd.as_fd(), &frames_name())
                .map_err(|e| io_err(&s.root, "create directory", e))?
                .0
        }
    };
    let mut tree = Tree {
        root_fd,
        subs: Vec::new(),
    };
    let per_dir = match fj.layout {
        FrameLayout::Files { files_per_dir } if files_per_dir > 0 => u64::from(files_per_dir),
        _ => return Ok(tree),
    };
    let mut last_dir = None;
    for f in frames {
        if f % STOP_EVERY == 0 && stopped(opts.stop) {
            return Err(TargetError::Interrupted(s.root.clone()));
        }
        if last_dir == Some(f / per_dir) {
            continue;
        }
        last_dir = Some(f / per_dir);
        let (_, sub, _) = rel_parts(fj, f);
        if let Some(d) = sub {
            if tree.subs.last().is_none_or(|(n, _)| *n != d) {
                let (fd, _) = make_dir(tree.root_fd.as_fd(), &d)
                    .map_err(|e| io_err(&s.root.join(&d), "create directory", e))?;
                tree.subs.push((d, fd));
            }
        }
    }
    Ok(tree)
}

/// Writes frame `f` for `--prepare`: a new, marked frame, or a short one
/// of ours (its mark checked again on the descriptor opened) or offered
/// with `--allow-destroy` (left unmarked) rewritten.
fn prepare_frame(
    tree: &Tree,
    root: &Path,
    fj: &FrameJob,
    f: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), TargetError> {
    let (rel, sub, name) = rel_parts(fj, f);
    let path = root.join(&rel);
    let dir = tree.dir_of(&sub);
    let fd = match open_beneath(
        dir,
        &name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        Mode::from_raw_mode(0o644),
    ) {
        Ok(fd) => {
            fsops::mark_frame(&fd);
            fd
        }
        Err(Errno::EXIST) => {
            // Ours (checked on the descriptor), or refused.
            fsops::open_frame(dir, &name, Op::Write, false)
                .map_err(|_| Refusal::ForeignFile(path.clone()))?
        }
        Err(Errno::LOOP) => {
            return Err(not_a_frame(
                path,
                "a symbolic link, which iosurvey never follows",
            ))
        }
        Err(e) => return Err(io_err(&path, "create", e)),
    };
    fill(&path, &fd, fj.frame_bytes, stop)
}

/// Opens the frames directory of `spec` for `fj`: creates it for writes,
/// writes the missing frames for `--prepare`, and evicts the frames from
/// the page cache before buffered reads.
pub fn open_frame_dir(
    spec: &TargetSpec,
    fj: &FrameJob,
    opts: OpenOptions<'_>,
) -> Result<OpenTarget, TargetError> {
    let mut s = survey(spec, fj, &opts)?;
    let root = s.root.clone();
    let mut created_frames = CreatedFrames::default();
    let created = fj.op == Op::Write || s.unwritten.count > 0;
    let root_fd = if created {
        let made = match fj.op {
            Op::Write | Op::Trim => make_tree(&mut s, fj, 0..fj.frames, &opts),
            Op::Read => {
                let unwritten = std::mem::take(&mut s.unwritten.list);
                let tree = make_tree(&mut s, fj, unwritten.iter().copied(), &opts);
                s.unwritten.list = unwritten;
                tree
            }
        };
        let tree = made.inspect_err(|_| cleanup::remove_empty_dirs(&root))?;
        if fd_is_marked(&tree.root_fd) {
            fsops::set_pending(&tree.root_fd);
        }
        // The unmarked frames offered with --allow-destroy may be rewritten
        // (still regular files, reached without a symlink), but stay the
        // user's: never marked, never removed.
        let mut kept = Vec::new();
        for f in s.offered.drain(..) {
            let (rel, _, _) = rel_parts(fj, f);
            if let Ok(fd) = open_beneath(
                tree.root_fd.as_fd(),
                &rel,
                OFlags::RDONLY | OFlags::NONBLOCK,
                Mode::empty(),
            ) {
                if rustix::fs::fstat(&fd).is_ok_and(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::RegularFile
                }) {
                    fsops::offer(&fd);
                }
            }
            kept.push(f);
        }
        kept.sort_unstable();
        created_frames = CreatedFrames {
            job: Some(fj.clone()),
            listed: (fj.op == Op::Read).then(|| s.unwritten.list.clone()),
            kept,
        };
        if fj.op == Op::Read {
            for &f in &s.unwritten.list {
                if let Err(e) = prepare_frame(&tree, &root, fj, f, opts.stop) {
                    let paths = created_frames.paths(&root);
                    let _ = remove_frames(&root, &paths, tree.root_fd.as_fd());
                    return Err(e);
                }
            }
        }
        tree.root_fd
    } else {
        s.root_fd
            .take()
            .expect("read frames are in a frames directory")
    };
    if fj.op == Op::Read && !opts.direct {
        for f in 0..fj.frames {
            if f % STOP_EVERY == 0 && stopped(opts.stop) {
                let paths = created_frames.paths(&root);
                let _ = remove_frames(&root, &paths, root_fd.as_fd());
                return Err(TargetError::Interrupted(root));
            }
            let (rel, _, _) = rel_parts(fj, f);
            if let Ok(fd) = open_beneath(
                root_fd.as_fd(),
                &rel,
                OFlags::RDONLY | OFlags::NONBLOCK,
                Mode::empty(),
            ) {
                let _ = rustix::fs::fadvise(&fd, 0, None, rustix::fs::Advice::DontNeed);
            }
        }
    }
    Ok(OpenTarget {
        path: root,
        kind: TargetKind::Directory,
        size: fj.frames * fj.frame_bytes,
        logical_block_size: s.alignment,
        physical_block_size: s.alignment.max(4096),
        rotational: None,
        memory_backed: crate::target::memory_backing(&root_fd, TargetKind::Directory),
        link: None,
        device: crate::target::device::describe(&root_fd, TargetKind::Directory),
        direct: opts.direct,
        writable: fj.op == Op::Write,
        created: if created {
            Created::Frames(created_frames)
        } else {
            Created::Nothing
        },
        fd: root_fd,
        hold: Default::default(),
    })
}

#[cfg(test)]
mod tests;
