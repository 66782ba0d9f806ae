//! Submission queue entries for reads and writes, built once per file and
//! operation with the io-uring crate's builders and patched per I/O: the
//! hot path copies 64 bytes and writes five fields instead of building an
//! entry field by field.

use crate::{Op, Request};
use io_uring::{opcode, squeue, types};
use std::os::fd::RawFd;

/// The kernel's `struct io_uring_sqe` as a read or a write uses it.
/// [`squeue::Entry`] is opaque; this mirror lets a template's per-I/O
/// fields be written.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    rw_flags: u32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    file_index: u32,
    addr3: u64,
    pad: u64,
}

impl Sqe {
    /// The bytes of `entry`.
    pub(crate) fn from_entry(entry: squeue::Entry) -> Sqe {
        // SAFETY: `squeue::Entry` is `repr(C)` around the kernel's 64-byte
        // `io_uring_sqe`, and `Sqe` is `repr(C)` with that layout and no
        // padding (`transmute` checks that the sizes match). Every field of
        // both is an integer or a union of integers, so any initialised
        // bytes are a valid value of either, and the builders start from
        // zeroed entries, so every byte is initialised.
        unsafe { std::mem::transmute::<squeue::Entry, Sqe>(entry) }
    }

    /// The entry with these bytes.
    #[cfg(test)]
    fn into_entry(self) -> squeue::Entry {
        // SAFETY: as in `from_entry`, the other way round; `Sqe` has no
        // padding, so all 64 bytes are initialised.
        unsafe { std::mem::transmute::<Sqe, squeue::Entry>(self) }
    }
}

/// The read and the write entry of every file, with zero in the fields
/// each I/O sets.
pub(crate) struct SqeTemplates {
    /// Per file, indexed by [`Op`]: the read, then the write.
    by_file: Vec<[Sqe; 2]>,
    /// `0xffff` with fixed buffers (the buffer index goes into the entry),
    /// 0 without (the field stays zero).
    buf_mask: u16,
}

impl SqeTemplates {
    /// Templates for the files `raw_fds` (by their index in the registered
    /// table when `registered_files`), reading into fixed buffers when
    /// `fixed_buffers`.
    pub(crate) fn new(raw_fds: &[RawFd], registered_files: bool, fixed_buffers: bool) -> Self {
        let by_file = raw_fds
            .iter()
            .enumerate()
            .map(|(i, &fd)| {
                [Op::Read, Op::Write].map(|op| {
                    let file = match registered_files {
                        true => File::Fixed(i as u32),
                        false => File::Fd(fd),
                    };
                    Sqe::from_entry(build(
                        file,
                        fixed_buffers,
                        op,
                        std::ptr::null_mut(),
                        0,
                        0,
                        0,
                    ))
                })
            })
            .collect();
        SqeTemplates {
            by_file,
            buf_mask: if fixed_buffers { u16::MAX } else { 0 },
        }
    }

    /// Writes the entry of `req` in `sqe`: its template, with the request's
    /// offset, length and buffer (`ptr` is the start of the buffer), and the
    /// buffer's index as its user data.
    ///
    /// # Panics
    /// When `req.file` is not a file of the table.
    #[cfg(test)]
    pub(crate) fn write(&self, sqe: &mut Sqe, ptr: *mut u8, req: &Request) {
        *sqe = self.by_file[req.file as usize][req.op as usize];
        self.patch(sqe, ptr, req);
    }

    /// The key of `req`'s template: one per file and op, never
    /// [`super::sq::NO_TEMPLATE`].
    #[inline(always)]
    pub(crate) fn key(req: &Request) -> u64 {
        (u64::from(req.file) << 1 | req.op as u64) + 1
    }

    /// Writes the entry of `req` in `sqe`, which holds the template of key
    /// `held` whole: the template first unless it is `req`'s. Returns the
    /// key of the template `sqe` then holds.
    #[inline(always)]
    pub(crate) fn write_over(&self, sqe: &mut Sqe, held: u64, ptr: *mut u8, req: &Request) -> u64 {
        let key = Self::key(req);
        if held != key {
            *sqe = self.by_file[req.file as usize][req.op as usize];
        }
        self.patch(sqe, ptr, req);
        key
    }

    /// The fields of `req`'s entry that its template does not hold.
    #[inline(always)]
    fn patch(&self, sqe: &mut Sqe, ptr: *mut u8, req: &Request) {
        sqe.off = req.offset;
        sqe.addr = ptr as u64;
        sqe.len = req.len;
        // Buffer indices fit: the engine registers at most 16,384 buffers.
        sqe.buf_index = req.buf as u16 & self.buf_mask;
        sqe.user_data = u64::from(req.buf);
    }

    /// The entry [`Self::write`] writes.
    #[cfg(test)]
    fn entry(&self, ptr: *mut u8, req: &Request) -> squeue::Entry {
        let mut sqe = Sqe::from_entry(opcode::Nop::new().build());
        self.write(&mut sqe, ptr, req);
        sqe.into_entry()
    }
}

/// A file as an entry names it.
#[derive(Clone, Copy)]
enum File {
    /// Index in the registered table.
    Fixed(u32),
    Fd(RawFd),
}

/// The entry of one read or write, from the io-uring crate's builders.
fn build(
    file: File,
    fixed_buffer: bool,
    op: Op,
    ptr: *mut u8,
    len: u32,
    offset: u64,
    buf: u16,
) -> squeue::Entry {
    macro_rules! rw {
        ($f:expr) => {
            match (fixed_buffer, op) {
                (true, Op::Read) => opcode::ReadFixed::new($f, ptr, len, buf)
                    .offset(offset)
                    .build(),
                (true, Op::Write) => opcode::WriteFixed::new($f, ptr, len, buf)
                    .offset(offset)
                    .build(),
                (false, Op::Read) => opcode::Read::new($f, ptr, len).offset(offset).build(),
                (false, Op::Write) => opcode::Write::new($f, ptr, len).offset(offset).build(),
                // A discard has no template: the engine does it itself.
                (_, Op::Trim) => opcode::Nop::new().build(),
            }
        };
    }
    match file {
        File::Fixed(i) => rw!(types::Fixed(i)),
        File::Fd(fd) => rw!(types::Fd(fd)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64 bytes the kernel reads.
    fn bytes(e: squeue::Entry) -> [u8; 64] {
        // SAFETY: every byte of an entry is initialised (see
        // `Sqe::from_entry`), and `transmute` checks the size.
        unsafe { std::mem::transmute::<squeue::Entry, [u8; 64]>(e) }
    }

    #[test]
    fn a_patched_template_is_the_entry_the_builders_make() {
        let fds = [7, 9, 11];
        let buf = vec![0u8; 8192];
        for registered in [true, false] {
            for fixed in [true, false] {
                let t = SqeTemplates::new(&fds, registered, fixed);
                for (i, &fd) in fds.iter().enumerate() {
                    for op in [Op::Read, Op::Write] {
                        let req = Request {
                            file: i as u32,
                            op,
                            offset: 0x1234_5678_9000 + i as u64,
                            len: 4096 + 512 * i as u32,
                            buf: 3 + i as u32,
                        };
                        let ptr = buf.as_ptr().wrapping_add(512 * i) as *mut u8;
                        let file = match registered {
                            true => File::Fixed(i as u32),
                            false => File::Fd(fd),
                        };
                        let want = build(file, fixed, op, ptr, req.len, req.offset, req.buf as u16)
                            .user_data(u64::from(req.buf));
                        let (got, want) = (bytes(t.entry(ptr, &req)), bytes(want));
                        assert_eq!(got, want, "registered {registered}, fixed {fixed}, {op:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn an_entry_written_over_another_is_the_entry_the_builders_make() {
        use super::super::sq::NO_TEMPLATE;
        let fds = [7, 9, 11];
        let buf = vec![0u8; 8192];
        let ptr = buf.as_ptr() as *mut u8;
        for registered in [true, false] {
            for fixed in [true, false] {
                let t = SqeTemplates::new(&fds, registered, fixed);
                // One ring entry, written again and again as the ring goes
                // round: by requests of the same or another file and op,
                // and by something else (a file operation, a cancel).
                let mut sqe = Sqe::from_entry(opcode::Nop::new().build());
                let mut held = NO_TEMPLATE;
                for k in 0..40u32 {
                    if k % 7 == 6 {
                        sqe = Sqe::from_entry(opcode::Fsync::new(types::Fd(3)).build());
                        held = NO_TEMPLATE;
                        continue;
                    }
                    let i = (k * k / 3 % 3) as usize;
                    let op = if k % 5 < 2 { Op::Write } else { Op::Read };
                    let req = Request {
                        file: i as u32,
                        op,
                        offset: 4096 * u64::from(k),
                        len: 512 * (1 + k % 4),
                        buf: k % 5,
                    };
                    held = t.write_over(&mut sqe, held, ptr, &req);
                    let mut fresh = Sqe::from_entry(opcode::Nop::new().build());
                    t.write(&mut fresh, ptr, &req);
                    assert_eq!(sqe, fresh, "request {k}: {req:?}");
                    assert_eq!(held, SqeTemplates::key(&req));
                }
            }
        }
    }

    #[test]
    fn a_template_names_its_file_and_operation() {
        let t = SqeTemplates::new(&[5, 6], true, false);
        let [read, write] = t.by_file[1];
        assert_eq!(read.opcode, opcode::Read::CODE);
        assert_eq!(write.opcode, opcode::Write::CODE);
        assert_eq!(read.fd, 1, "a registered file is named by its index");
        let t = SqeTemplates::new(&[5, 6], false, true);
        let [read, write] = t.by_file[1];
        assert_eq!(
            (read.opcode, write.opcode),
            (opcode::ReadFixed::CODE, opcode::WriteFixed::CODE)
        );
        assert_eq!(read.fd, 6);
    }
}
