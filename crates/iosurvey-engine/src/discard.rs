//! A discard of a block device's range (`BLKDISCARD`), done synchronously
//! when its turn comes, as fio does its trims: its result is a
//! completion's (the range's length, or a negative errno).

use std::os::fd::{AsRawFd, BorrowedFd};

/// `_IO(0x12, 119)` from `linux/fs.h`.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discards `len` bytes at `offset` of the block device `fd`; `len` on
/// success, else the negative errno (`-ENOTTY` on a regular file,
/// `-EOPNOTSUPP` on a device without discard, `-EINVAL` for a range not
/// aligned to its logical block size).
pub(crate) fn discard(fd: BorrowedFd<'_>, offset: u64, len: u32) -> i32 {
    let range: [u64; 2] = [offset, u64::from(len)];
    // SAFETY: BLKDISCARD reads two u64s (start, length) from the pointer,
    // which points at `range`, alive on this stack for the call; `fd` is
    // open for the call's length.
    let n = unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) };
    if n < 0 {
        -std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        len as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_regular_file_takes_no_discard() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(1 << 16).unwrap();
        assert_eq!(discard(f.as_fd(), 0, 4096), -libc::ENOTTY);
    }
}
