//! Laying out test files: every byte written with non-zero, incompressible
//! data, every 512-byte sector unique, and flushed; and what the filesystem of
//! a new file will offer (free space, O_DIRECT alignment).

use super::{io_err, TargetError};
use iosurvey_engine::data::{DataFill, Stamper};
use iosurvey_engine::BufferPool;
use rustix::fs::StatxFlags;
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Lays out `size` bytes of data in `fd` (the file at `path`).
pub(crate) fn fill(
    path: &Path,
    fd: &OwnedFd,
    size: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), TargetError> {
    lay_out(fd, size, stop).map_err(|e| match e {
        Errno::INTR => TargetError::Interrupted(path.to_path_buf()),
        e => io_err(path, "lay out", e),
    })
}

fn lay_out(fd: &OwnedFd, size: u64, stop: Option<&AtomicBool>) -> Result<(), Errno> {
    const CHUNK: usize = 4 << 20;
    let mut pool = BufferPool::new(1, CHUNK, 4096, 0x1057_5eed, None).map_err(|_| Errno::NOMEM)?;
    // Every sector of the file unique, across files and runs too.
    let mut stamper = Stamper::new(DataFill::default());
    let mut off = 0u64;
    while off < size {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(Errno::INTR);
        }
        let n = (size - off).min(CHUNK as u64) as usize;
        let buf = &mut pool.get_mut(0)[..n];
        stamper.stamp(buf, off);
        let written = rustix::io::pwrite(fd, buf, off)?;
        if written == 0 {
            return Err(Errno::NOSPC);
        }
        off += written as u64;
    }
    rustix::fs::fsync(fd)?;
    // Drop what the layout left in the page cache.
    let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
    Ok(())
}

/// O_DIRECT alignment new files in `dir` will have: what the filesystem
/// reports for the directory, else the logical block size of the device it
/// lives on, else 512.
pub(crate) fn dir_dio_alignment(dir: &Path, dev: u64) -> u64 {
    if let Ok(s) = rustix::fs::statx(
        rustix::fs::CWD,
        dir,
        rustix::fs::AtFlags::empty(),
        StatxFlags::DIOALIGN,
    ) {
        if s.stx_dio_offset_align > 0 {
            return u64::from(s.stx_dio_offset_align);
        }
    }
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(v) = std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/{rel}")) {
            if let Ok(n) = v.trim().parse::<u64>() {
                return n;
            }
        }
    }
    512
}

pub(crate) fn check_free_space(path: &Path, dir: &Path, size: u64) -> Result<(), TargetError> {
    match rustix::fs::statvfs(dir) {
        Ok(vfs) => enough_space(path, &vfs, size),
        Err(_) => Ok(()),
    }
}

/// [`check_free_space`] of the filesystem holding the open `dir`.
pub(crate) fn check_free_space_fd(
    path: &Path,
    dir: impl AsFd,
    size: u64,
) -> Result<(), TargetError> {
    match rustix::fs::fstatvfs(dir) {
        Ok(vfs) => enough_space(path, &vfs, size),
        Err(_) => Ok(()),
    }
}

fn enough_space(path: &Path, vfs: &rustix::fs::StatVfs, size: u64) -> Result<(), TargetError> {
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    if free < size {
        return Err(TargetError::NoSpace {
            path: path.to_path_buf(),
            want: size,
            free,
        });
    }
    Ok(())
}
