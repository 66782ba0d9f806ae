//! File operations as slot work items, for work that opens a file per unit
//! (video frames): open a file beneath a directory of the table, read or
//! write it through a slot's buffer, sync it and close it, each completing
//! on its slot like any I/O.
//!
//! An engine holds at most one such file at a time, as a plain descriptor
//! (never in the registered table, which would keep the kernel's own
//! reference past the close). [`FileState`] checks every step against the
//! file's state and panics on misuse, as [`crate::SlotTable`] does for
//! buffers: no I/O on a file that is not open, no close while an I/O on it
//! is in flight, no second open while one is held.

use crate::{Op, SlotTable};
use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// One file operation, plain data. Its slot's buffer is held from push to
/// reap (for [`FileOp::Io`] it carries the data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Opens `path` (relative, plain names) beneath directory `dir` of the
    /// engine's table, never through a symlink and never outside it:
    /// `O_NOFOLLOW|O_CLOEXEC` are added to `flags`, and the resolution is
    /// `RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH`. The completion's result is
    /// the descriptor (kept by the engine as its open file) or `-errno`.
    ///
    /// `base` is where the file's bytes sit in the sequence of files it is
    /// part of (frame `k` of frames of `n` bytes: `k * n`): with `--verify`,
    /// the headers of its writes name `base + offset` as their offset, in
    /// the generation map of directory `dir`'s target.
    Open {
        dir: u32,
        path: CString,
        flags: OFlags,
        mode: Mode,
        base: u64,
    },
    /// Reads or writes `len` bytes at `offset` of the open file through the
    /// slot's buffer; past [`crate::MAX_OFFSET`] it fails with `-EINVAL`,
    /// as a [`crate::Request`] does.
    Io { op: Op, offset: u64, len: u32 },
    /// `fsync`, or `fdatasync` when `data_only`, of the open file.
    Sync { data_only: bool },
    /// Closes the open file; the engine gives its descriptor up, so this is
    /// the file's last reference of this process.
    Close,
}

/// The flags every open gets, whatever the caller asked.
pub(crate) fn open_flags(flags: OFlags) -> OFlags {
    flags | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The mode an open passes: none without `O_CREAT` (openat2 refuses one).
pub(crate) fn open_mode(flags: OFlags, mode: Mode) -> Mode {
    if flags.contains(OFlags::CREATE) {
        mode
    } else {
        Mode::empty()
    }
}

/// The resolution every open gets.
pub(crate) const RESOLVE: ResolveFlags = ResolveFlags::NO_SYMLINKS.union(ResolveFlags::BENEATH);

/// What a slot's file operation is, from push to reap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    None,
    Open,
    /// An I/O or sync on the open file.
    OnFile,
    Close,
}

/// The engine's open file and the file operations in flight.
#[derive(Debug)]
pub(crate) struct FileState {
    fd: Option<OwnedFd>,
    /// The directory and the base of the last open (see [`FileOp::Open`]).
    dir: u32,
    base: u64,
    opening: bool,
    closing: bool,
    /// I/Os and syncs on the open file in flight.
    on_file: usize,
    kinds: Vec<Kind>,
}

impl FileState {
    pub fn new(slots: usize) -> Self {
        FileState {
            fd: None,
            dir: 0,
            base: 0,
            opening: false,
            closing: false,
            on_file: 0,
            kinds: vec![Kind::None; slots],
        }
    }

    /// Checks `op` on `slot` (whose buffer was just claimed) and marks it
    /// in flight. For a close, hands over the descriptor to close.
    ///
    /// # Panics
    /// On an open while a file is open or opening, on an I/O, sync or close
    /// with no file open, and on a close with an I/O on the file in flight.
    pub fn start(&mut self, slot: u32, op: &FileOp) -> Option<OwnedFd> {
        let kind = self.check(op);
        self.kinds[slot as usize] = kind;
        if let FileOp::Open { dir, base, .. } = *op {
            (self.dir, self.base) = (dir, base);
        }
        match kind {
            Kind::Open => self.opening = true,
            Kind::OnFile => self.on_file += 1,
            Kind::Close => self.closing = true,
            Kind::None => {}
        }
        if kind == Kind::Close {
            self.fd.take()
        } else {
            None
        }
    }

    /// Claims `slot` for `op`, as both engines' `push_file` do: the
    /// directory of an open checked against a table of `files` entries and
    /// `op` against the file's state before anything is claimed (so that a
    /// refusal leaves no slot claimed without an entry), then the slot's
    /// buffer for an I/O's length, then `op` marked in flight. Returns
    /// [`FileState::start`]'s descriptor.
    ///
    /// # Panics
    /// As [`FileState::start`] and [`SlotTable::claim_buffer`] do, and on an
    /// open of a directory not in the table.
    pub fn claim(
        &mut self,
        slots: &mut SlotTable,
        files: usize,
        slot: u32,
        op: &FileOp,
    ) -> Option<OwnedFd> {
        let len = match *op {
            FileOp::Io { len, .. } => len,
            _ => 0,
        };
        if let FileOp::Open { dir, .. } = *op {
            assert!(
                (dir as usize) < files,
                "file operation refused: no directory {dir} in the table"
            );
        }
        self.check(op);
        slots.claim_buffer(slot, len);
        self.start(slot, op)
    }

    /// The kind of `op`, checked against the file's state (see
    /// [`FileState::start`]); changes nothing.
    pub fn check(&self, op: &FileOp) -> Kind {
        let idle = !self.opening && !self.closing;
        let (kind, ok) = match op {
            FileOp::Open { .. } => (Kind::Open, idle && self.fd.is_none()),
            FileOp::Io { .. } | FileOp::Sync { .. } => (Kind::OnFile, idle && self.fd.is_some()),
            FileOp::Close => (Kind::Close, idle && self.fd.is_some() && self.on_file == 0),
        };
        if !ok {
            panic!(
                "file operation refused: {op:?} (open: {}, opening: {}, closing: {}, in flight on it: {})",
                self.fd.is_some(),
                self.opening,
                self.closing,
                self.on_file
            );
        }
        kind
    }

    /// Settles `slot`'s file operation, which completed with `result`: an
    /// open's descriptor becomes the open file.
    pub fn finish(&mut self, slot: u32, result: i32) {
        match std::mem::replace(&mut self.kinds[slot as usize], Kind::None) {
            Kind::Open => {
                self.opening = false;
                if result >= 0 {
                    // SAFETY: the kernel (or the synchronous fallback) just
                    // returned this descriptor from an open; nothing else
                    // owns it.
                    self.fd = Some(unsafe { OwnedFd::from_raw_fd(result) });
                }
            }
            Kind::OnFile => self.on_file -= 1,
            Kind::Close => self.closing = false,
            Kind::None => panic!("file completion for slot {slot}, which has none in flight"),
        }
    }

    /// The target and the offset in it that the verify headers of a write
    /// at `offset` of the open file name (see [`FileOp::Open`]).
    pub fn stamp_place(&self, offset: u64) -> (u32, u64) {
        (self.dir, self.base + offset)
    }

    /// The open file's raw descriptor, for a request on it.
    pub fn raw(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, std::os::fd::AsRawFd::as_raw_fd)
    }

    /// The open file, for synchronous checks between operations.
    pub fn file(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(|f| f.as_fd())
    }
}

/// Opens `path` beneath `dir` as [`FileOp::Open`] describes, synchronously,
/// and returns the descriptor as a completion result.
pub(crate) fn open_sync(dir: BorrowedFd<'_>, path: &CString, flags: OFlags, mode: Mode) -> i32 {
    let rel = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
    match open_beneath(dir, rel, flags, mode) {
        Ok(fd) => fd.into_raw_fd(),
        Err(e) => -e.raw_os_error(),
    }
}

/// Opens `rel` (a relative path of plain names) beneath `root` without
/// following any symlink on the way, with `O_NOFOLLOW|O_CLOEXEC` added:
/// `openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH)`, or one `openat` per
/// component on kernels without it. The one synchronous open of the engine
/// and of the frame target's own checks.
pub fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let mode = open_mode(flags, mode);
    let flags = open_flags(flags);
    match rustix::fs::openat2(root, rel, flags, mode, RESOLVE) {
        Err(Errno::NOSYS) => open_per_component(root, rel, flags, mode),
        r => r,
    }
}

fn open_per_component(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(Errno::XDEV),
        })
        .collect::<Result<_, _>>()?;
    let (last, dirs) = names.split_last().ok_or(Errno::INVAL)?;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut held: Option<OwnedFd> = None;
    for d in dirs {
        let at = held.as_ref().map_or(root, |f| f.as_fd());
        held = Some(rustix::fs::openat(at, *d, dir_flags, Mode::empty())?);
    }
    let at = held.as_ref().map_or(root, |f| f.as_fd());
    rustix::fs::openat(at, *last, flags, mode)
}

/// Syncs `fd` synchronously, as a completion result.
pub(crate) fn sync_sync(fd: BorrowedFd<'_>, data_only: bool) -> i32 {
    let r = if data_only {
        rustix::fs::fdatasync(fd)
    } else {
        rustix::fs::fsync(fd)
    };
    r.map_or_else(|e| -e.raw_os_error(), |()| 0)
}

/// Closes `fd` synchronously, as a completion result (the descriptor is
/// gone whatever the result).
pub(crate) fn close_sync(fd: OwnedFd) -> i32 {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came out of an owned descriptor and is closed once.
    let r = unsafe { libc::close(raw) };
    if r == 0 {
        0
    } else {
        -std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    }
}

#[cfg(test)]
mod tests;
