//! Output paths (`--json`, `--csv`, `--live`, a mode's own files) judged
//! before any I/O: what each names, how it will be written, and whether it
//! collides with stdout, another output or a target of the run.

use crate::output::judged::{AtName, Judged};
use crate::target::test_file_in;
use iosurvey_workload::frames_dir;
use rustix::fs::{Access, AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An output refused before any I/O; the message names the path and what
/// to do instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OutputError(String);

impl OutputError {
    /// A refusal in so many words.
    pub fn new(why: String) -> Self {
        OutputError(why)
    }
}

/// An [`OutputError`] from a format string.
macro_rules! refused {
    ($($arg:tt)*) => {
        OutputError(format!($($arg)*))
    };
}

/// What identifies a file: two paths with the same identity name the same
/// thing, whatever links or aliases lead there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ident {
    /// An existing file, FIFO or directory.
    Inode { dev: u64, ino: u64 },
    /// A device node: its device number, whatever node names it.
    Device { block: bool, rdev: u64 },
    /// Not there yet: the identity of its directory and its name, so that
    /// a bind mount or a symlinked directory leading to the same place
    /// meets it.
    New {
        dir_dev: u64,
        dir_ino: u64,
        name: std::ffi::OsString,
    },
    /// Standard output.
    Stdout,
}

/// The directory of an output file, held open (`O_PATH`) from the moment
/// it was judged: every later create, rename and unlink of the output is
/// made relative to it, so a directory swapped for a symlink during the
/// run leads nowhere else.
#[derive(Clone, Debug)]
pub struct HeldDir(Arc<OwnedFd>);

impl HeldDir {
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl PartialEq for HeldDir {
    fn eq(&self, other: &HeldDir) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HeldDir {}

/// How an output is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Standard output: `-`, or a path that is what stdout already is.
    Stdout,
    /// A regular file, there or not: replaced whole through a temporary file
    /// in its directory and a rename. `real` is the path replaced, symlinks
    /// resolved (a symlink given stays and names the new file); written as
    /// `name` in `dir`, the directory held; `at` is what may be replaced
    /// there.
    File {
        real: PathBuf,
        dir: HeldDir,
        name: std::ffi::OsString,
        at: AtName,
    },
    /// Something else that exists (a character device, a FIFO): opened and
    /// written in place, never created, truncated or replaced.
    InPlace,
    /// A regular file that is a mount point of its own (a file bind-mounted
    /// there, as containers do), which no rename may replace (`EBUSY`):
    /// opened for writing when judged, and rewritten through that
    /// descriptor (truncated, then written), always the file judged.
    Mounted(HeldFile),
}

/// A regular file held open for writing since it was judged.
#[derive(Clone, Debug)]
pub struct HeldFile(Arc<std::fs::File>);

impl HeldFile {
    pub fn file(&self) -> &std::fs::File {
        &self.0
    }
}

impl PartialEq for HeldFile {
    fn eq(&self, other: &HeldFile) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for HeldFile {}

/// One output, judged.
#[derive(Clone, Debug)]
pub struct OutPath {
    /// The flag that named it, e.g. `--json`.
    pub flag: String,
    /// The path as given.
    pub given: PathBuf,
    pub sink: Sink,
    pub ident: Ident,
}

impl OutPath {
    /// `--json out.json`, for messages.
    pub fn shown(&self) -> String {
        format!("{} {}", self.flag, self.given.display())
    }
}

fn ident_of(st: &Stat) -> Ident {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::BlockDevice => Ident::Device {
            block: true,
            rdev: st.st_rdev,
        },
        FileType::CharacterDevice => Ident::Device {
            block: false,
            rdev: st.st_rdev,
        },
        _ => Ident::Inode {
            dev: st.st_dev,
            ino: st.st_ino,
        },
    }
}

/// What stdout is, if it is open.
pub fn stdout_ident() -> Option<Ident> {
    rustix::fs::fstat(std::io::stdout().as_fd())
        .ok()
        .map(|st| ident_of(&st))
}

/// The identity of what an open descriptor is.
pub fn fd_ident(fd: impl AsFd) -> Result<Ident, Errno> {
    rustix::fs::fstat(fd).map(|st| ident_of(&st))
}

/// Creates and removes a file in `dir`, the way a report is later written
/// there, so an unwritable place is found before the run, not after it.
/// The trash that removes its temporary files and the file it replaces is
/// made now too, while there is room (see `guard::trash::reserve`): on a
/// filesystem filled during the run, a temporary report was left behind.
fn probe_dir(dir: BorrowedFd<'_>) -> std::io::Result<()> {
    crate::guard::trash::reserve(dir)?;
    let (tmp, fd) = crate::output::file::create_temp_at(dir, 0o600)?;
    crate::output::file::remove_temp(dir, &tmp, &fd)
}

/// Opens the directory `dir` (`O_PATH`) to hold it, and checks that it is
/// the directory `expect` was judged in (`st_dev`, `st_ino`).
fn hold_dir(dir: &Path, expect: Option<&Stat>) -> std::io::Result<HeldDir> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::empty())?;
    if let Some(e) = expect {
        let st = rustix::fs::fstat(&fd)?;
        if (st.st_dev, st.st_ino) != (e.st_dev, e.st_ino) {
            return Err(std::io::Error::other("changed while it was checked"));
        }
    }
    Ok(HeldDir(Arc::new(fd)))
}

/// Whether standard output is a block device: no report is ever written
/// onto one, however it is reached.
pub fn stdout_is_block() -> bool {
    rustix::fs::fstat(std::io::stdout().as_fd())
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice)
}

/// Refuses a regular file that is storage in use: one that backs a loop
/// device (by its identity, whatever name the loop device was given it
/// by), or an active swap file. Writing it writes that storage.
fn check_not_storage_in_use(shown: &str, st: &Stat) -> Result<(), OutputError> {
    let uses = crate::guard::family::FileUses::now();
    if let Some(l) = uses.loops_on(st.st_dev, st.st_ino).0.first() {
        return Err(refused!(
            "{shown}: backs the loop device {}; writing it would write that device, so give the output another path",
            crate::guard::family::dev_name(*l)
        ));
    }
    match uses.swap(st.st_dev, st.st_ino) {
        None => Ok(()),
        Some(name) => Err(refused!(
            "{shown}: is the active swap file {name}; give the output another path"
        )),
    }
}

/// Judges standard output as any other output, since every command writes
/// to it (the text summary at least), before anything is opened: never a
/// block device; when a regular file, never storage in use (a loop
/// device's backing file, a swap file), a target of the run or an input
/// being read (`report`, `compare`). A terminal, a pipe, a FIFO or
/// `/dev/null` is fine, and so is a regular file that is none of these.
pub fn check_stdout(targets: &[PathBuf], inputs: &[Ident]) -> Result<(), OutputError> {
    let Ok(st) = rustix::fs::fstat(std::io::stdout().as_fd()) else {
        return Ok(());
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::BlockDevice => Err(refused!(
            "stdout is a block device; reports are never written onto a device (send stdout to a file or a terminal)"
        )),
        FileType::RegularFile => {
            check_not_storage_in_use("stdout", &st)?;
            let ident = ident_of(&st);
            if let Some(t) = targets.iter().find(|t| target_idents(t).contains(&ident)) {
                return Err(refused!(
                    "stdout: is the target {} of this run; send stdout elsewhere",
                    t.display()
                ));
            }
            if inputs.contains(&ident) {
                return Err(refused!(
                    "stdout: is a report being read; send stdout elsewhere"
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Judges `given` as the output of `flag`, without writing anything but a
/// probe file (created and removed at once) in a regular file's directory.
pub fn judge(flag: &str, given: &Path) -> Result<OutPath, OutputError> {
    let out = |sink, ident| {
        Ok(OutPath {
            flag: flag.to_string(),
            given: given.to_path_buf(),
            sink,
            ident,
        })
    };
    let shown = format!("{flag} {}", given.display());
    // `out.json/` is a directory's name, whatever is there or not.
    if given.as_os_str().len() > 1 && given.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(refused!(
            "{shown}: names a directory (it ends with /); give a file name for the output"
        ));
    }
    if given.as_os_str() != "-" {
        crate::output::symlinks::check_protected_symlinks(given)
            .map_err(|e| refused!("{shown}: {e}"))?;
    }
    if given.as_os_str() == "-" {
        if stdout_is_block() {
            return Err(refused!(
                "{shown}: stdout is a block device; reports are never written onto a device (give a file)"
            ));
        }
        return out(Sink::Stdout, Ident::Stdout);
    }
    let st = match rustix::fs::stat(given) {
        Ok(st) => st,
        Err(Errno::NOENT) => return judge_missing(&shown, given).and_then(|(s, i)| out(s, i)),
        Err(e) => return Err(refused!("{shown}: {e}; give a path iosurvey can write")),
    };
    match FileType::from_raw_mode(st.st_mode) {
        // Before stdout: a block device on stdout is refused as well.
        FileType::BlockDevice => Err(refused!(
            "{shown}: is a block device; reports are never written onto a device (give a file, or - for stdout)"
        )),
        _ if Some(ident_of(&st)) == stdout_ident() => out(Sink::Stdout, Ident::Stdout),
        FileType::Directory => Err(refused!(
            "{shown}: is a directory; give a file name for the output"
        )),
        FileType::Socket => Err(refused!(
            "{shown}: is a socket; give a file, a FIFO, a character device or - for stdout"
        )),
        FileType::RegularFile => {
            check_not_storage_in_use(&shown, &st)?;
            out(judge_regular(&shown, given, &st)?, ident_of(&st))
        }
        _ => {
            rustix::fs::access(given, Access::WRITE_OK)
                .map_err(|e| refused!("{shown}: cannot write it: {e}"))?;
            out(Sink::InPlace, ident_of(&st))
        }
    }
}

/// Judges `given`, a name iosurvey made up rather than a path the user
/// gave, as a new file: `None` when anything is at it already (a file,
/// a symlink, even one to nothing), since nobody offered that to be
/// replaced.
pub fn judge_new(flag: &str, given: &Path) -> Result<Option<OutPath>, OutputError> {
    if given.symlink_metadata().is_ok() {
        return Ok(None);
    }
    let out = judge(flag, given)?;
    // Something put there since the look is judged as there: taken too.
    match &out.sink {
        Sink::File { at, .. } if at.get().is_none() => Ok(Some(out)),
        _ => Ok(None),
    }
}

/// An existing regular file `st` at `given`: its directory held (symlinks
/// resolved now, once), the file checked to be there under its name.
fn judge_regular(shown: &str, given: &Path, st: &Stat) -> Result<Sink, OutputError> {
    let real = std::fs::canonicalize(given)
        .map_err(|e| refused!("{shown}: {e}; give a path iosurvey can write"))?;
    let parent = real.parent().unwrap_or(Path::new("/"));
    let name = real.file_name().unwrap_or_default().to_os_string();
    let dir = hold_dir(parent, None).map_err(|e| refused!("{shown}: {e}"))?;
    let here = rustix::fs::statat(dir.fd(), &name, AtFlags::SYMLINK_NOFOLLOW);
    if !here.is_ok_and(|h| (h.st_dev, h.st_ino) == (st.st_dev, st.st_ino)) {
        return Err(refused!(
            "{shown}: changed while it was checked; give it again"
        ));
    }
    match how_replaceable(dir.fd(), &name) {
        Replaceable::Yes => {}
        Replaceable::Immutable => {
            return Err(refused!(
                "{shown}: is immutable or append-only (chattr +i or +a), so the report cannot replace it; give another path, or chattr -i/-a it"
            ))
        }
        Replaceable::MountPoint => return held_in_place(shown, dir.fd(), &name, st),
    }
    probe_dir(dir.fd()).map_err(|e| {
        refused!(
            "{shown}: cannot write in {}: {e}; the file is replaced through a new file there, so give a writable place",
            parent.display()
        )
    })?;
    let at = AtName::new(Some(Judged::of(st)));
    Ok(Sink::File {
        real,
        dir,
        name,
        at,
    })
}

/// Whether the regular file `name` in `dir` can be replaced by a rename.
enum Replaceable {
    Yes,
    /// `chattr +i` or `+a`: no rename may take its name (`EPERM`).
    Immutable,
    /// A mount point of its own (a file bind-mounted there): no rename
    /// may take its name (`EBUSY`), it is written in place.
    MountPoint,
}

/// Looks, before the run, at what would make the final rename fail after
/// the measurement: the file's attributes and whether its mount differs
/// from its directory's (`statx`'s `STATX_MNT_ID`).
fn how_replaceable(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> Replaceable {
    use rustix::fs::{statx, StatxAttributes, StatxFlags};
    let flags = StatxFlags::MNT_ID | StatxFlags::BASIC_STATS;
    let Ok(f) = statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, flags) else {
        return Replaceable::Yes;
    };
    let fixed = StatxAttributes::IMMUTABLE | StatxAttributes::APPEND;
    let attrs = f.stx_attributes & f.stx_attributes_mask;
    if attrs.intersects(fixed) {
        return Replaceable::Immutable;
    }
    let d = statx(dir, "", AtFlags::EMPTY_PATH, flags);
    let has_mnt = |x: &rustix::fs::Statx| x.stx_mask & StatxFlags::MNT_ID.bits() != 0;
    match d {
        Ok(d) if has_mnt(&f) && has_mnt(&d) && d.stx_mnt_id != f.stx_mnt_id => {
            Replaceable::MountPoint
        }
        _ => Replaceable::Yes,
    }
}

/// A regular file mounted at `name` in `dir`: opened for writing now
/// (never created, never through a symlink) and checked to be the file
/// judged (`st`).
fn held_in_place(
    shown: &str,
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    st: &Stat,
) -> Result<Sink, OutputError> {
    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())
        .map_err(|e| refused!("{shown}: cannot open it for writing: {e}"))?;
    let now = rustix::fs::fstat(&fd).map_err(|e| refused!("{shown}: {e}"))?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return Err(refused!(
            "{shown}: changed while it was checked; give it again"
        ));
    }
    Ok(Sink::Mounted(HeldFile(Arc::new(std::fs::File::from(fd)))))
}

/// A path where nothing is yet: a new regular file in an existing,
/// writable directory, never through a dangling symlink.
fn judge_missing(shown: &str, given: &Path) -> Result<(Sink, Ident), OutputError> {
    if std::fs::symlink_metadata(given).is_ok() {
        return Err(refused!(
            "{shown}: is a symlink to nothing; iosurvey creates no file through a symlink (give the file's own path)"
        ));
    }
    let Some(name) = given.file_name() else {
        return Err(refused!("{shown}: give a file name for the output"));
    };
    let parent = match given.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(refused!(
                "{shown}: {} is not a directory; give a file in an existing directory",
                parent.display()
            ))
        }
        Err(_) => {
            return Err(refused!(
                "{shown}: no such directory {}; create it first",
                parent.display()
            ))
        }
    }
    let real_dir = std::fs::canonicalize(parent).map_err(|e| refused!("{shown}: {e}"))?;
    let judged = rustix::fs::stat(parent).map_err(|e| refused!("{shown}: {e}"))?;
    let dir = hold_dir(parent, Some(&judged)).map_err(|e| refused!("{shown}: {e}"))?;
    probe_dir(dir.fd()).map_err(|e| {
        refused!(
            "{shown}: cannot create a file in {}: {e}; give a writable place",
            real_dir.display()
        )
    })?;
    let ident = Ident::New {
        dir_dev: judged.st_dev,
        dir_ino: judged.st_ino,
        name: name.to_os_string(),
    };
    let sink = Sink::File {
        real: real_dir.join(name),
        dir,
        name: name.to_os_string(),
        at: AtName::new(None),
    };
    Ok((sink, ident))
}

/// The identities a target path stands for: what is there, or where it will
/// be created; for a directory also the test file iosurvey makes inside.
pub fn target_idents(path: &Path) -> Vec<Ident> {
    match rustix::fs::stat(path) {
        Ok(st) => {
            let mut ids = vec![ident_of(&st)];
            if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                let test_file = test_file_in(path);
                if let Some(name) = test_file.file_name() {
                    ids.extend(new_ident(path, name));
                }
            }
            ids
        }
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            path.file_name()
                .and_then(|name| new_ident(parent, name))
                .into_iter()
                .collect()
        }
    }
}

/// The identity of a file not there yet: its directory's and its name.
fn new_ident(dir: &Path, name: &std::ffi::OsStr) -> Option<Ident> {
    let st = rustix::fs::stat(dir).ok()?;
    Some(Ident::New {
        dir_dev: st.st_dev,
        dir_ino: st.st_ino,
        name: name.to_os_string(),
    })
}

/// Whether `out` falls inside the frames directory of a directory target,
/// by path or, through a bind mount or a symlink, by the identity of a
/// directory above it.
fn in_frames_dir(out: &OutPath, target: &Path) -> bool {
    let Sink::File { real, .. } = &out.sink else {
        return false;
    };
    let frames = frames_dir(target);
    if std::fs::canonicalize(target).is_ok_and(|t| real.starts_with(frames_dir(&t))) {
        return true;
    }
    let Ok(f) = rustix::fs::stat(&frames) else {
        return false;
    };
    real.ancestors()
        .skip(1)
        .any(|d| rustix::fs::stat(d).is_ok_and(|st| st.st_dev == f.st_dev && st.st_ino == f.st_ino))
}

/// Refuses outputs that are one and the same, more than one thing on
/// stdout, and an output that is a target of the run. `stdout_taken` names
/// what stdout already carries (`--output json`), if it cannot be given up.
pub fn check_all(
    outs: &[OutPath],
    targets: &[PathBuf],
    stdout_taken: Option<&str>,
) -> Result<(), OutputError> {
    for (i, a) in outs.iter().enumerate() {
        for b in &outs[i + 1..] {
            if a.ident == b.ident {
                let what = match a.ident {
                    Ident::Stdout => "both go to stdout",
                    _ => "are the same file",
                };
                return Err(refused!(
                    "{} and {} {what}; give each output its own place",
                    a.shown(),
                    b.shown()
                ));
            }
        }
        if let (Ident::Stdout, Some(taken)) = (&a.ident, stdout_taken) {
            return Err(refused!(
                "{}: stdout already carries {taken}; give a file, or drop --output",
                a.shown()
            ));
        }
    }
    for t in targets {
        let ids = target_idents(t);
        for o in outs {
            let what = if ids.contains(&o.ident) {
                "is the target"
            } else if in_frames_dir(o, t) {
                "is in the frames directory of the target"
            } else {
                continue;
            };
            return Err(refused!(
                "{}: {what} {} of this run; give the output another path",
                o.shown(),
                t.display()
            ));
        }
    }
    Ok(())
}
