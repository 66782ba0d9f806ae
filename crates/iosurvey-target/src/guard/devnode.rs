//! Opening a block device by its number, whatever /dev holds: its node
//! `/dev/NAME` when that node is the device, else a node of iosurvey's
//! own, made with `mknodat` in a private directory (mode 0700) it creates
//! and removes again at once. A device whose node was moved away, removed
//! or never made (another mount namespace's /dev) is judged all the same:
//! a claim on it (`O_EXCL`) and what a loop device sits on
//! (`LOOP_GET_STATUS64`) are asked of the kernel through the device
//! itself, never taken to be unknowable.

use super::devno::{dev_name, Devno};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Opens the block device `d` with `flags` (`O_RDONLY`, `O_EXCL`, ...).
/// Its /dev node is used only if it is that device; else a private node.
pub(crate) fn open_device(d: Devno, flags: OFlags) -> Result<OwnedFd, Errno> {
    match open_own_node(d, flags) {
        Some(r) => r,
        None => open_private_node(d, flags),
    }
}

/// `/dev/NAME` of `d`, opened with `flags` if it is a node of `d` (judged
/// through an `O_PATH` descriptor, then reopened from it, so the node
/// judged is the one opened); `None` when there is no such node.
fn open_own_node(d: Devno, flags: OFlags) -> Option<Result<OwnedFd, Errno>> {
    let name = dev_name(d);
    let path =
        rustix::fs::open(name.as_str(), OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let st = rustix::fs::fstat(&path).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::BlockDevice || st.st_rdev != d {
        return None;
    }
    let again = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&path));
    Some(rustix::fs::open(
        again.as_str(),
        flags | OFlags::CLOEXEC,
        Mode::empty(),
    ))
}

/// Where a private node may be made: /dev first (devtmpfs, never
/// `nodev`), then /run and the temporary directory.
fn node_parents() -> Vec<std::path::PathBuf> {
    vec!["/dev".into(), "/run".into(), std::env::temp_dir()]
}

/// Opens `d` through a node of its own, made in a private directory that
/// is removed again (with the node) before this returns.
fn open_private_node(d: Devno, flags: OFlags) -> Result<OwnedFd, Errno> {
    let mut last = Errno::NODEV;
    for parent in node_parents() {
        match open_in(&parent, d, flags) {
            Ok(fd) => return Ok(fd),
            // BUSY and the like are the device's answer, not the place's.
            Err(e @ (Errno::ACCESS | Errno::PERM | Errno::ROFS | Errno::NOENT | Errno::EXIST)) => {
                last = e
            }
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// [`open_private_node`] in one parent directory.
fn open_in(parent: &std::path::Path, d: Devno, flags: OFlags) -> Result<OwnedFd, Errno> {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        ".iosurvey-node-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let dirflags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let parent_fd = rustix::fs::open(parent, dirflags | OFlags::NOFOLLOW, Mode::empty())?;
    rustix::fs::mkdirat(&parent_fd, name.as_str(), Mode::from_raw_mode(0o700))?;
    let opened = rustix::fs::openat(
        &parent_fd,
        name.as_str(),
        dirflags | OFlags::NOFOLLOW,
        Mode::empty(),
    )
    .and_then(|dir| node_in(dir.as_fd(), d, flags));
    let _ = rustix::fs::unlinkat(&parent_fd, name.as_str(), AtFlags::REMOVEDIR);
    opened
}

/// Makes the node `dev` of `d` in the private directory `dir`, opens it
/// and removes it (the descriptor stays valid).
fn node_in(dir: std::os::fd::BorrowedFd<'_>, d: Devno, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::mknodat(
        dir,
        "dev",
        FileType::BlockDevice,
        Mode::from_raw_mode(0o600),
        d,
    )?;
    let fd = rustix::fs::openat(
        dir,
        "dev",
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    );
    let _ = rustix::fs::unlinkat(dir, "dev", AtFlags::empty());
    fd
}
