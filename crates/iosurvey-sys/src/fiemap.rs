//! How a file's data is stored: its extents from the `FS_IOC_FIEMAP` ioctl,
//! and how many of their bytes the filesystem encoded (compressed, as
//! btrfs does with `compress` or `compress-force`). The ground truth of
//! `--check-compression` on a file: rates only suggest compression, the
//! extents show it.

use std::os::fd::BorrowedFd;

/// `FS_IOC_FIEMAP` from `<linux/fs.h>`: `_IOWR('f', 11, struct fiemap)`.
/// The type of an opcode is the C library's (`c_ulong` in glibc, `c_int` in
/// musl): the bits are the same.
const FS_IOC_FIEMAP: rustix::ioctl::Opcode = 0xC020_660Bu32 as rustix::ioctl::Opcode;
/// Flags of `<linux/fiemap.h>`.
const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;
const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
const FIEMAP_EXTENT_ENCODED: u32 = 0x0000_0008;
/// Extents asked for per call.
const BATCH: usize = 128;

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Extent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `struct fiemap` followed by room for [`BATCH`] extents.
#[repr(C)]
struct Fiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [Extent; BATCH],
}

/// Bytes of a file's extents, and of those the filesystem encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    pub mapped: u64,
    pub encoded: u64,
}

/// The extents of the file open at `fd` in `[start, start + len)`, written
/// back first (`FIEMAP_FLAG_SYNC`, so that buffered writes have their
/// extents). Fails (`EOPNOTSUPP`, `ENOTTY`) where the filesystem or the
/// file has no extent map (tmpfs, a block device).
pub fn stored(fd: BorrowedFd<'_>, start: u64, len: u64) -> std::io::Result<Stored> {
    let end = start.saturating_add(len);
    let mut at = start;
    let mut out = Stored::default();
    while at < end {
        let mut map = Fiemap {
            fm_start: at,
            fm_length: end - at,
            fm_flags: FIEMAP_FLAG_SYNC,
            fm_mapped_extents: 0,
            fm_extent_count: BATCH as u32,
            fm_reserved: 0,
            fm_extents: [Extent::default(); BATCH],
        };
        // SAFETY: `FS_IOC_FIEMAP` reads the header of a `struct fiemap` and
        // writes at most `fm_extent_count` (`BATCH`) `struct fiemap_extent`
        // after it, which `Fiemap` holds, laid out `#[repr(C)]` with the
        // kernel's field types (all integers: any bit pattern is valid).
        // The kernel rejects the opcode on other files without writing.
        unsafe {
            rustix::ioctl::ioctl(
                fd,
                rustix::ioctl::Updater::<FS_IOC_FIEMAP, Fiemap>::new(&mut map),
            )
        }
        .map_err(std::io::Error::from)?;
        let n = (map.fm_mapped_extents as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &map.fm_extents[..n] {
            // Only the part inside the range asked for.
            let from = e.fe_logical.max(start);
            let to = e.fe_logical.saturating_add(e.fe_length).min(end);
            let bytes = to.saturating_sub(from);
            out.mapped += bytes;
            if e.fe_flags & FIEMAP_EXTENT_ENCODED != 0 {
                out.encoded += bytes;
            }
            last |= e.fe_flags & FIEMAP_EXTENT_LAST != 0;
        }
        let e = &map.fm_extents[n - 1];
        let next = e.fe_logical.saturating_add(e.fe_length);
        if last || next <= at {
            break;
        }
        at = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn a_written_file_on_disk_is_mapped_and_not_encoded() {
        let Ok(mut f) = tempfile::tempfile_in("/var/tmp") else {
            iosurvey_testkit::skip!("no /var/tmp to write a file on disk in");
        };
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        match stored(f.as_fd(), 0, 1 << 20) {
            // ext4 and xfs map it all, unencoded.
            Ok(s) => {
                assert_eq!(s.mapped, 1 << 20);
                assert_eq!(s.encoded, 0);
            }
            Err(e) => iosurvey_testkit::not_running(&format!("no extent map here ({e})")),
        }
    }
}
