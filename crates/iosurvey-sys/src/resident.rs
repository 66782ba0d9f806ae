//! How much of a file is in the page cache: `mincore(2)` over a read-only
//! shared mapping of it, which shows the file's cached pages without
//! faulting any in. A buffered read of pages that stay resident after
//! iosurvey asked the kernel to drop them (pinned by `mlock`, mapped by
//! another process, kept by the file system) is a read of RAM.

use std::os::fd::{AsRawFd, BorrowedFd};

/// The size of a page of memory.
fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Most bytes mapped at once (a residency vector of 256 KiB).
const WINDOW: u64 = 1 << 30;

/// The pages of `fd` in `[start, start + len)` (to whole pages), and how
/// many of them are in the page cache; `None` when the file cannot be
/// mapped.
pub fn resident_pages(fd: BorrowedFd<'_>, start: u64, len: u64) -> Option<(u64, u64)> {
    let page = page_size();
    let first = start / page * page;
    let end = start.checked_add(len)?.div_ceil(page) * page;
    let (mut pages, mut resident) = (0u64, 0u64);
    let mut vec = Vec::new();
    let mut at = first;
    while at < end {
        let n = (end - at).min(WINDOW);
        let n_pages = n.div_ceil(page) as usize;
        vec.clear();
        vec.resize(n_pages, 0u8);
        // SAFETY: a fresh read-only shared mapping of `n` bytes of a file
        // we hold open; nothing reads through it (only `mincore` looks at
        // it), and it is unmapped before the next window.
        unsafe {
            let addr = libc::mmap(
                std::ptr::null_mut(),
                n as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                at as libc::off_t,
            );
            if addr == libc::MAP_FAILED {
                return None;
            }
            let r = libc::mincore(addr, n as usize, vec.as_mut_ptr());
            libc::munmap(addr, n as usize);
            if r != 0 {
                return None;
            }
        }
        pages += n_pages as u64;
        resident += vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
        at += n;
    }
    Some((pages, resident))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn pages_read_through_a_mapping_are_counted_resident() {
        let page = page_size() as usize;
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 8 * page]).unwrap();
        f.sync_all().unwrap();
        let (pages, _) = resident_pages(f.as_fd(), 0, 8 * page as u64).unwrap();
        assert_eq!(pages, 8);
        // Part of a page at each end counts as the whole page.
        let (pages, _) = resident_pages(f.as_fd(), 1, 2 * page as u64).unwrap();
        assert_eq!(pages, 3);
        // Read back: the pages are in the cache (just written, or read in).
        let mut buf = vec![0u8; 8 * page];
        rustix::io::pread(&f, &mut buf, 0).unwrap();
        let (pages, resident) = resident_pages(f.as_fd(), 0, 8 * page as u64).unwrap();
        assert_eq!((pages, resident), (8, 8));
    }
}
