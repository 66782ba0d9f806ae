//! The io_uring engine: registered files, fixed buffers, requests written
//! straight into the submission queue, and waits that never enter the
//! kernel while a completion is ready.

use crate::data::Stamper;
use crate::fileops::{self, FileState};
use crate::{
    BufferPool, Completion, Engine, EngineConfig, EngineError, EngineFeatures, FileOp, Op, Request,
    SlotTable, MAX_OFFSET,
};
use cq::CqRing;
use io_uring::{opcode, squeue, types, IoUring};
use sq::{SqRing, NO_TEMPLATE};
use sqe::{Sqe, SqeTemplates};
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// How long a batched wait may hold a completion that is already there
/// before returning it, in microseconds. It bounds what batching adds to a
/// measured latency.
pub const REAP_WINDOW_US: u32 = 10;

/// Most buffers the kernel registers as fixed buffers; a larger pool runs
/// with plain reads and writes.
const MAX_FIXED_BUFFERS: usize = 16384;

/// The bit of a completion's user data that marks a file operation.
const FILE_OP: u64 = 1 << 32;

/// The user data of the cancel a drop submits for I/O that does not
/// finish: no slot's.
const CANCEL: u64 = 1 << 34;

/// The bit of a completion's user data that marks a request with an offset
/// past [`MAX_OFFSET`]: a NOP stands in for it, and its completion reports
/// `-EINVAL`.
const BAD_OFFSET: u64 = 1 << 33;

/// The bit of a completion's user data that marks a discard done at the
/// submit (see `trims.rs`): a NOP carries its result to the reap.
const TRIM_DONE: u64 = 1 << 35;

/// The longest timeout a wait hands the kernel, about 136 years: in effect
/// no limit. A [`Duration`] holds up to 2^64 s, which would turn negative
/// in the kernel's signed `tv_sec` and end the wait at once; the kernel
/// also adds the timeout to its clock in signed nanoseconds, which 2^32 s
/// leaves far from overflowing.
const LONGEST_WAIT: Duration = Duration::from_secs(LONGEST_WAIT_S);
const LONGEST_WAIT_S: u64 = 1 << 32;

/// io_uring with registered files and (when the kernel allows) fixed
/// buffers.
///
/// An engine may be built on one thread and used on another: its ring is
/// bound to the thread that first enters the kernel with it (single
/// issuer, kept for deferred task work), and works only there from then
/// on. On any other thread a wait fails with `EEXIST`, a push or a reap
/// that finds the queue full panics (before it takes anything), and a drop
/// with I/O in flight leaks the buffers, since it cannot wait.
///
/// Field order matters: the ring is dropped first, after [`Drop`] has
/// drained every in-flight I/O (or leaked what the kernel may still use,
/// see `teardown`), then the buffers and the files.
pub struct UringEngine {
    ring: IoUring,
    /// The ring's submission queue, written entry by entry in place.
    sq: SqRing,
    /// The ring's completion queue, read entry by entry in place.
    cq: CqRing,
    /// Per slot: the path and `open_how` of an open in flight, which the
    /// kernel reads from until it completes.
    open_args: Vec<Option<Box<(CString, types::OpenHow)>>>,
    /// Per slot: the result of a file operation done synchronously (the
    /// kernel has no OPENAT2 or CLOSE), which a NOP carries to the reap.
    sync_results: Vec<Option<i32>>,
    /// Discards pushed and not yet done (see `trims.rs`).
    trims: Vec<Request>,
    /// The file a [`FileOp::Open`] opened (closed in Drop if still open).
    file: FileState,
    /// The ring takes OPENAT2, FSYNC and CLOSE (the kernel has them and
    /// the ring is not polled); otherwise they are made synchronously.
    file_ops: bool,
    pool: BufferPool,
    files: Vec<OwnedFd>,
    raw_fds: Vec<RawFd>,
    slots: SlotTable,
    /// Makes each block of each write unique.
    stamper: Stamper,
    /// The read and write entry of every file, patched per I/O.
    sqes: SqeTemplates,
    registered_files: bool,
    fixed_buffers: bool,
    /// The kernel takes a timeout with a wait (5.11+).
    ext_arg: bool,
    /// A wait for several completions holds the first at most
    /// [`REAP_WINDOW_US`]: the kernel bounds a batched wait in time (6.12+),
    /// and the ring is not polled.
    batch_window: bool,
    /// Waits go straight to `io_uring_enter` once the ring is enabled: the
    /// kernel takes a timeout with them and no polling thread needs waking
    /// (`ext_arg && !sqpoll`).
    direct_wait: bool,
    /// The kernel cancels requests on demand (ASYNC_CANCEL), which a drop
    /// asks for when its I/O does not finish.
    cancel: bool,
    sqpoll: bool,
    iopoll: bool,
    /// The ring is single-issuer and still disabled (`R_DISABLED`): the
    /// first thread to enter the kernel with it enables it, and becomes
    /// its issuer.
    unbound: bool,
    empty_wakeups: u64,
}

/// What to try to register with the ring; tests turn registration off to
/// run the fallback paths.
#[derive(Clone, Copy)]
pub(crate) struct Registration {
    pub files: bool,
    pub buffers: bool,
}

impl UringEngine {
    /// Sets up a ring with room for `depth` I/Os in flight.
    pub fn new(cfg: EngineConfig<'_>, depth: u32, seed: u64) -> Result<Self, EngineError> {
        let all = Registration {
            files: true,
            buffers: true,
        };
        Self::with_registration(cfg, depth, seed, all)
    }

    pub(crate) fn with_registration(
        cfg: EngineConfig<'_>,
        depth: u32,
        seed: u64,
        reg: Registration,
    ) -> Result<Self, EngineError> {
        let pool = BufferPool::new(cfg.buffers, cfg.buffer_size, cfg.alignment, seed, cfg.stop)?;
        // Room in the submission queue for every buffer: a push finds the
        // queue full only past the largest ring.
        let entries = (depth.max(1) as usize)
            .max(pool.count())
            .next_power_of_two()
            .min(32768) as u32;
        let (ring, unbound) = build_ring(entries, &cfg)?;
        let sq = SqRing::new(&ring).map_err(EngineError::UringSetup)?;
        let cq = CqRing::new(&ring).map_err(EngineError::UringSetup)?;
        let raw_fds: Vec<RawFd> = cfg.files.iter().map(|f| f.as_raw_fd()).collect();
        let min_timeout = ring.params().is_feature_min_timeout();
        let ext_arg = ring.params().is_feature_ext_arg();
        let registered_files = reg.files && ring.submitter().register_files(&raw_fds).is_ok();
        let mut probe = io_uring::Probe::new();
        let probed = ring.submitter().register_probe(&mut probe).is_ok();
        let has = |code| probed && probe.is_supported(code);
        // A polled ring (IOPOLL) takes only reads and writes: its opens,
        // syncs and closes are made synchronously.
        let file_ops = !cfg.iopoll && has(opcode::OpenAt2::CODE) && has(opcode::Close::CODE);
        let cancel = has(opcode::AsyncCancel::CODE);
        let fixed_buffers = reg.buffers && pool.count() <= MAX_FIXED_BUFFERS && {
            let iovecs = pool.iovecs();
            // SAFETY: the iovecs describe the pool's buffers, which live as
            // long as the ring (the pool is dropped after the ring).
            unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok()
        };
        Ok(UringEngine {
            ring,
            sq,
            cq,
            open_args: (0..pool.count()).map(|_| None).collect(),
            sync_results: vec![None; pool.count()],
            trims: Vec::with_capacity(pool.count()),
            file: FileState::new(pool.count()),
            file_ops,
            slots: SlotTable::new(pool.count(), pool.size(), cfg.files.len()),
            stamper: Stamper::with_verify(cfg.fill, cfg.verify.clone()),
            pool,
            files: cfg.files,
            sqes: SqeTemplates::new(&raw_fds, registered_files, fixed_buffers),
            raw_fds,
            registered_files,
            fixed_buffers,
            ext_arg,
            batch_window: min_timeout && !cfg.iopoll,
            direct_wait: ext_arg && cfg.sqpoll.is_none(),
            cancel,
            sqpoll: cfg.sqpoll.is_some(),
            iopoll: cfg.iopoll,
            unbound,
            empty_wakeups: 0,
        })
    }

    /// The engine doing opens, syncs and closes synchronously, as on a
    /// kernel without OPENAT2 or CLOSE, or on a polled ring.
    #[cfg(test)]
    pub(crate) fn without_file_ops(mut self) -> Self {
        self.file_ops = false;
        self
    }

    /// A wait through the io-uring crate: on a polled submission queue
    /// (whose thread may need waking), on a kernel without timeouts on a
    /// wait (before 5.11), or the first, which enables the ring.
    fn crate_wait(
        &self,
        submitter: &io_uring::Submitter<'_>,
        want: usize,
        timeout: Duration,
    ) -> std::io::Result<usize> {
        if self.ext_arg {
            let ts = types::Timespec::from(timeout.min(LONGEST_WAIT));
            let mut args = types::SubmitArgs::new().timespec(&ts);
            if want > 1 {
                args = args.min_wait_usec(REAP_WINDOW_US);
            }
            submitter.submit_with_args(want, &args)
        } else {
            submitter.submit_and_wait(want)
        }
    }

    /// [`Engine::reap`]. `LIMIT`: the reap takes no more completions than
    /// the submission queue has room to re-arm, making room once first if
    /// need be; without it (a drop's reaps, which re-arm nothing, and must
    /// not make room, which can panic on another thread) it takes them all
    /// and makes room for each re-arm there may be.
    #[inline(always)]
    fn reap_with<const LIMIT: bool>(&mut self, mut f: impl FnMut(Completion) -> Option<Request>) {
        // No view of the crate's queues is alive here: the completions are
        // read, and the re-arms written, in place (see `CqRing`, `SqRing`).
        let (mut head, mut tail) = self.cq.bounds();
        // Each completion re-arms at most one entry: the reap takes no more
        // completions than the queue has room for, once, so that no re-arm
        // needs to make room (a polling thread only ever frees more). The
        // others stay in the completion queue for the next reap, which
        // finds them without waiting.
        let ready = tail.wrapping_sub(head);
        if LIMIT && self.sq.free() < ready {
            tail = head.wrapping_add(self.room_for(ready));
        }
        while head != tail {
            // SAFETY: `head` is the ring's head and short of the tail the
            // kernel posted: an entry is ready there.
            let cqe = unsafe { self.cq.take(head) };
            head = head.wrapping_add(1);
            let data = cqe.user_data;
            let buf = data as u32;
            let mut result = cqe.res;
            // The buffer stays held while the caller sees the completion:
            // re-armed for itself, it is never marked idle; any other way
            // out lets it go (a panic in `f` or a refused request too), so
            // the table stays true.
            // (Bound in one statement: a binding set in branches would
            // need a drop flag, kept on the stack at every completion.)
            // One compare for the common case: a plain I/O has no mark.
            let kept = if data > u64::from(u32::MAX) {
                if data == CANCEL {
                    continue;
                }
                let kept = self.slots.hold(buf);
                result = settle_marked(
                    &mut self.file,
                    &mut self.open_args,
                    &mut self.sync_results,
                    data,
                    result,
                );
                kept
            } else {
                self.slots.hold(buf)
            };
            let Some(req) = f(Completion { buf, result }) else {
                continue;
            };
            if !LIMIT {
                Self::reserve(
                    &self.ring.submitter(),
                    &self.sq,
                    self.sqpoll,
                    &mut self.unbound,
                );
            }
            kept.rearm(&req);
            // SAFETY: the re-arm checked that `req.buf` is a slot (the held
            // buffer, or one it claimed), and the slot table has one slot
            // per buffer of the pool.
            let ptr = unsafe { self.pool.ptr_unchecked(req.buf) };
            // SAFETY: the reap took no more completions than the queue had
            // room for (or made room for this one), and no view of the
            // crate's queue is alive; the re-arm claimed the request.
            unsafe { self.push_claimed(ptr, &req) };
        }
    }

    /// Makes room in the submission queue for re-arms (at least one), and
    /// returns for how many of `want` there is room.
    #[cold]
    #[inline(never)]
    fn room_for(&mut self, want: u32) -> u32 {
        Self::reserve(
            &self.ring.submitter(),
            &self.sq,
            self.sqpoll,
            &mut self.unbound,
        );
        self.sq.free().min(want)
    }

    /// Writes the entry of `req` into the submission queue, with `ptr`,
    /// its buffer, stamped first for a write.
    ///
    /// # Safety
    /// The queue has a free entry and no view of the crate's queue is
    /// alive; `req` was claimed (it fits its buffer, which no other I/O
    /// holds), and `ptr` is that buffer.
    #[inline(always)]
    unsafe fn push_claimed(&mut self, ptr: *mut u8, req: &Request) {
        match req.op {
            Op::Read => {}
            Op::Write => stamp_write(&mut self.stamper, ptr, req.len, req.file, req.offset),
            Op::Trim => {
                // Done at the next submit, whose NOP takes the entry
                // reserved for it now.
                self.trims.push(*req);
                return;
            }
        }
        let sqes = &self.sqes;
        // SAFETY: the caller's contract; the buffer belongs to this engine
        // and outlives the I/O (Drop waits for it, or leaks the buffers),
        // the file too (or the kernel's own reference to it, once the I/O
        // is issued), and the buffer is not handed out until the
        // completion is reaped.
        unsafe {
            self.sq
                .push_keyed(|sqe, held| write_entry(sqes, sqe, held, ptr, req))
        };
    }

    /// Makes sure the submission queue has a free entry, entering the
    /// kernel while it is full. Every push calls it before it claims a slot:
    /// when the kernel refuses the submission, [`Self::make_room`] panics
    /// with nothing claimed yet, so the slot table stays true.
    #[inline(always)]
    fn reserve(submitter: &io_uring::Submitter<'_>, sq: &SqRing, sqpoll: bool, unbound: &mut bool) {
        // A polling thread may take entries meanwhile: the head is read
        // anew each time.
        while sq.is_full() {
            Self::make_room(submitter, sqpoll, unbound);
        }
    }

    /// The entry of file operation `op` on `slot`, whose buffer and file
    /// state were claimed for it; `fd` is the descriptor a close gives up.
    #[cold]
    fn file_entry(&mut self, slot: u32, op: FileOp, fd: Option<OwnedFd>) -> squeue::Entry {
        let i = slot as usize;
        let nop = |res: i32, results: &mut Vec<Option<i32>>| {
            results[i] = Some(res);
            opcode::Nop::new().build()
        };
        let file = types::Fd(self.file.raw());
        let e = match op {
            FileOp::Open {
                dir,
                path,
                flags,
                mode,
                ..
            } => {
                let dir_fd = self.raw_fds[dir as usize];
                if self.file_ops {
                    let how = types::OpenHow::new()
                        .flags(u64::from(fileops::open_flags(flags).bits()))
                        .mode(u64::from(fileops::open_mode(flags, mode).bits()))
                        .resolve(fileops::RESOLVE.bits());
                    let args = self.open_args[i].insert(Box::new((path, how)));
                    opcode::OpenAt2::new(types::Fd(dir_fd), args.0.as_ptr(), &args.1).build()
                } else {
                    let dir = self.files[dir as usize].as_fd();
                    let res = fileops::open_sync(dir, &path, flags, mode);
                    nop(res, &mut self.sync_results)
                }
            }
            FileOp::Io { offset, .. } if offset > MAX_OFFSET => {
                nop(-libc::EINVAL, &mut self.sync_results)
            }
            FileOp::Io { op, offset, len } => {
                let ptr = self.pool.ptr(slot);
                if op == Op::Write {
                    // SAFETY: as in `stamp_write`: the buffer was just
                    // claimed for this write with room for `len` bytes.
                    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) };
                    let place = self.file.stamp_place(offset);
                    self.stamper.stamp_file_write(buf, offset, place);
                }
                match (self.fixed_buffers, op) {
                    (true, Op::Read) => opcode::ReadFixed::new(file, ptr, len, slot as u16)
                        .offset(offset)
                        .build(),
                    (true, Op::Write) => opcode::WriteFixed::new(file, ptr, len, slot as u16)
                        .offset(offset)
                        .build(),
                    (false, Op::Read) => opcode::Read::new(file, ptr, len).offset(offset).build(),
                    (false, Op::Write) => opcode::Write::new(file, ptr, len).offset(offset).build(),
                    // A frame's file takes no discards.
                    (_, Op::Trim) => nop(-libc::EOPNOTSUPP, &mut self.sync_results),
                }
            }
            FileOp::Sync { data_only } => {
                let flags = if data_only {
                    types::FsyncFlags::DATASYNC
                } else {
                    types::FsyncFlags::empty()
                };
                if self.file_ops {
                    opcode::Fsync::new(file).flags(flags).build()
                } else {
                    let res = self
                        .file
                        .file()
                        .map_or(-libc::EBADF, |f| fileops::sync_sync(f, data_only));
                    nop(res, &mut self.sync_results)
                }
            }
            FileOp::Close => {
                let fd = fd.expect("a close is given the open file");
                if self.file_ops {
                    opcode::Close::new(types::Fd(fd.into_raw_fd())).build()
                } else {
                    nop(fileops::close_sync(fd), &mut self.sync_results)
                }
            }
        };
        e.user_data(FILE_OP | u64::from(slot))
    }

    /// Hands the entries queued to the kernel, waiting for nothing. With
    /// SQPOLL this enters the kernel only to wake the polling thread.
    #[inline(always)]
    fn submit_queued(&mut self) -> std::io::Result<()> {
        if self.sq.queued() > 0 {
            let submitter = self.ring.submitter();
            bind(&submitter, &mut self.unbound)?;
            match submitter.submit() {
                Ok(_) => {}
                Err(e) if is_transient(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Hands the submission queue to the kernel so that it has room again.
    #[cold]
    fn make_room(submitter: &io_uring::Submitter<'_>, sqpoll: bool, unbound: &mut bool) {
        let res = bind(submitter, unbound).and_then(|()| {
            if sqpoll {
                // The polling thread takes the entries in its own time.
                submitter.submit().and_then(|_| submitter.squeue_wait())
            } else {
                submitter.submit()
            }
        });
        match res {
            Ok(_) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => panic!("io_uring refused a submission: {e}"),
        }
    }
}

/// Builds the ring: a single issuer with deferred task work when the kernel
/// has them, and the polling modes the job asks for, which are refused
/// aloud rather than dropped. Returns the ring, and whether it starts
/// disabled, waiting for [`bind`].
///
/// Deferred task work (`DEFER_TASKRUN`) runs completions in the waiting
/// thread, and only when it waits, instead of interrupting it for each
/// one; it requires `SINGLE_ISSUER`. No A/B run favoured dropping it: no
/// clear difference on zram, slower without it on a disk file and on tmpfs
/// frames (`bench/RESULTS.md`), and on a loop device over tmpfs (4 KiB
/// O_DIRECT random reads, medians of interleaved rounds on 2 shared vCPUs)
/// more IOPS with it at every depth: +23% and +70% at QD 1, +17% at QD 8,
/// +13% and +38% at QD 32. So the engine keeps both, though it is `Send`.
///
/// A single-issuer ring belongs to the thread that creates it, or, set up
/// with `R_DISABLED`, to the thread that enables it (io_uring_setup(2));
/// any other thread's submit or wait fails with `EEXIST`. The ring starts
/// disabled, and the first thread to enter the kernel with it enables it:
/// an engine may be built on one thread and moved to the one that uses it.
/// SQPOLL rings have neither flag (their polling thread is the issuer).
fn build_ring(entries: u32, cfg: &EngineConfig<'_>) -> Result<(IoUring, bool), EngineError> {
    let single = cfg.sqpoll.is_none();
    let base = |fast: bool| {
        let mut b = IoUring::builder();
        b.setup_cqsize(entries * 2);
        if fast {
            b.setup_single_issuer()
                .setup_defer_taskrun()
                .setup_r_disabled();
        }
        if let Some(sq) = cfg.sqpoll {
            b.setup_sqpoll(sq.idle_ms);
            if let Some(cpu) = sq.cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        if cfg.iopoll {
            b.setup_iopoll();
        }
        b.build(entries)
    };
    let built = match base(single) {
        Ok(ring) => Ok((ring, single)),
        Err(_) => base(false).map(|ring| (ring, false)),
    };
    built.map_err(|err| {
        let (mode, flag) = match (cfg.sqpoll.is_some(), cfg.iopoll) {
            (true, true) => ("SQPOLL with IOPOLL", "--sqpoll or --hipri"),
            (true, false) => ("SQPOLL", "--sqpoll"),
            (false, true) => ("IOPOLL", "--hipri"),
            (false, false) => return EngineError::UringSetup(err),
        };
        EngineError::UringMode { mode, flag, err }
    })
}

/// The result to report for a completion whose user data `data` carries a
/// mark above the slot: `-EINVAL` for a request with a bad offset; for a
/// file operation, its real result (a synchronous fallback's NOP carries
/// it), once its open arguments are freed and the open file updated.
#[cold]
fn settle_marked(
    file: &mut FileState,
    open_args: &mut [Option<Box<(CString, types::OpenHow)>>],
    sync_results: &mut [Option<i32>],
    data: u64,
    result: i32,
) -> i32 {
    if data & BAD_OFFSET != 0 {
        return -libc::EINVAL;
    }
    let slot = data as u32;
    let i = slot as usize;
    let result = sync_results[i].take().unwrap_or(result);
    if data & TRIM_DONE != 0 {
        return result;
    }
    open_args[i] = None;
    file.finish(slot, result);
    result
}

/// Enables the ring if it is still disabled, binding it to the calling
/// thread; every path that enters the kernel calls it first.
#[inline]
fn bind(submitter: &io_uring::Submitter<'_>, unbound: &mut bool) -> std::io::Result<()> {
    if *unbound {
        submitter.register_enable_rings()?;
        *unbound = false;
    }
    Ok(())
}

/// `io_uring_enter(2)` flags: wait for completions (and run deferred task
/// work), and the argument is an `io_uring_getevents_arg`.
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_EXT_ARG: u32 = 1 << 3;

/// The kernel's `__kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// The kernel's `io_uring_getevents_arg`: no signal mask, the batch window
/// and the timeout.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

const _: () = assert!(std::mem::size_of::<GeteventsArg>() == 24);
const _: () = assert!(std::mem::size_of::<KernelTimespec>() == 16);

/// Submits the `to_submit` entries queued on the ring of `submitter` (not
/// polled, already enabled) and waits for `want` completions (at least
/// one), for at most `timeout`; with more than one wanted, a completion is
/// held at most [`REAP_WINDOW_US`] for the others. One system call, with
/// the arguments built on the stack and passed to the crate's `enter`
/// (built with `direct-syscall`: the system call instruction itself, no
/// libc): the crate's `submit_with_args` adds some 60 instructions per
/// wait for the cases set aside here (a polling thread, an old kernel).
#[inline]
fn wait_with_timeout(
    submitter: &io_uring::Submitter<'_>,
    to_submit: u32,
    want: u32,
    timeout: Duration,
) -> std::io::Result<usize> {
    let ts = KernelTimespec {
        tv_sec: timeout.as_secs().min(LONGEST_WAIT_S) as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    let arg = GeteventsArg {
        sigmask: 0,
        sigmask_sz: 0,
        min_wait_usec: if want > 1 { REAP_WINDOW_US } else { 0 },
        ts: std::ptr::addr_of!(ts) as u64,
    };
    // SAFETY: io_uring_enter reads `arg` (and through it `ts`), both alive
    // on this stack for the call; `enter` passes the size of
    // `GeteventsArg`, the kernel's `io_uring_getevents_arg` (asserted
    // above). It also submits the entries queued, whose buffers, paths and
    // files every push vouched for (see `push` and `push_file`): they stay
    // valid until their completions are reaped.
    unsafe { submitter.enter(to_submit, want, ENTER_GETEVENTS | ENTER_EXT_ARG, Some(&arg)) }
}

/// Submits the `to_submit` entries queued on the ring of `submitter` (not
/// polled, already enabled) and waits for `want` completions with no time
/// bound and no batch window, as fio waits: the kernel arms no timer. A
/// timed wait (with its batch window) put a third of a worker's samples
/// at the interrupt-enabling unlock that ends the wait's timer set-up, on
/// these virtual machines (perf, 2 workers on zram; bench/RESULTS.md).
#[inline]
fn wait_untimed(
    submitter: &io_uring::Submitter<'_>,
    to_submit: u32,
    want: u32,
) -> std::io::Result<usize> {
    // SAFETY: no argument is passed; the entries queued are submitted,
    // whose buffers, paths and files every push vouched for (see `push`
    // and `push_file`): they stay valid until their completions are reaped.
    unsafe { submitter.enter::<libc::sigset_t>(to_submit, want, ENTER_GETEVENTS, None) }
}

/// An error a submission or a wait can simply be retried after.
fn is_transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ETIME | libc::EINTR | libc::EAGAIN | libc::EBUSY)
    )
}

/// Writes the entry of `req`, whose buffer was claimed for it, in `sqe`:
/// its file's and op's template patched, or a stand-in for an offset past
/// [`MAX_OFFSET`]. `held` is the key of the template `sqe` holds whole;
/// returns the key of the one it holds after (see [`SqRing::push_keyed`]).
#[inline(always)]
fn write_entry(sqes: &SqeTemplates, sqe: &mut Sqe, held: u64, ptr: *mut u8, req: &Request) -> u64 {
    if req.offset > MAX_OFFSET {
        *sqe = Sqe::from_entry(bad_offset(req.buf));
        return NO_TEMPLATE;
    }
    sqes.write_over(sqe, held, ptr, req)
}

/// Generates the data of a write of `len` bytes at `offset` of file `file`
/// in its buffer at `ptr` (each 512-byte sector unique, see [`crate::data`]).
#[inline(always)]
fn stamp_write(stamper: &mut Stamper, ptr: *mut u8, len: u32, file: u32, offset: u64) {
    // SAFETY: the buffer was just claimed for this write: no I/O holds it,
    // the kernel sees it only once the entry is pushed, and the claim
    // checked that `len` bytes fit it.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) };
    stamper.stamp_write(buf, file, offset);
}

/// The stand-in for a request on `buf` whose offset is past
/// [`MAX_OFFSET`]: a NOP, so that the kernel neither moves data nor reads
/// `u64::MAX` as the file position, and the completion comes in order.
#[cold]
fn bad_offset(buf: u32) -> squeue::Entry {
    opcode::Nop::new()
        .build()
        .user_data(BAD_OFFSET | u64::from(buf))
}

impl Engine for UringEngine {
    #[inline]
    fn push(&mut self, req: Request) {
        Self::reserve(
            &self.ring.submitter(),
            &self.sq,
            self.sqpoll,
            &mut self.unbound,
        );
        self.slots.claim(&req);
        let ptr = self.pool.ptr(req.buf);
        // SAFETY: the reserve left a free entry, and no view of the crate's
        // queue is alive; the claim checked that the request fits its
        // buffer and that no other I/O holds it; `ptr` is that buffer.
        unsafe { self.push_claimed(ptr, &req) };
    }

    #[inline(always)]
    fn submit_and_wait(&mut self, min_complete: usize, timeout: Duration) -> std::io::Result<()> {
        // Discards are done now, synchronously (as fio does them), each
        // handed to the reap by a NOP that completes at once.
        if !self.trims.is_empty() {
            self.run_trims();
        }
        if !self.cq.is_empty() || self.slots.in_flight() == 0 {
            // Completions are ready (or nothing can come): hand the queue
            // over, and wait for nothing.
            return self.submit_queued();
        }
        // Without a time bound on the batch a wait could hold early
        // completions for long; polling has no batch window at all.
        let want = if self.batch_window {
            min_complete.clamp(1, self.slots.in_flight())
        } else {
            1
        };
        let res = if timeout == Duration::MAX && self.direct_wait && !self.unbound {
            // No time bound (the caller's choice): a plain wait, which
            // arms no timer, and so no batch window either.
            wait_untimed(&self.ring.submitter(), self.sq.queued(), want as u32)
        } else if self.direct_wait && !self.unbound {
            // The common wait, entered directly: what the crate's
            // `submit_with_args` adds is for the cases set aside here (a
            // polling thread to wake, a ring to enable, an old kernel).
            wait_with_timeout(
                &self.ring.submitter(),
                self.sq.queued(),
                want as u32,
                timeout,
            )
        } else {
            let submitter = self.ring.submitter();
            bind(&submitter, &mut self.unbound)?;
            self.crate_wait(&submitter, want, timeout)
        };
        match res {
            Ok(_) => {}
            // The timeout or the batch window closed, or a signal came:
            // the caller reaps whatever is there and decides.
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e),
        }
        if self.cq.is_empty() {
            self.empty_wakeups += 1;
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, f: impl FnMut(Completion) -> Option<Request>) {
        self.reap_with::<true>(f);
    }

    fn buffer_mut(&mut self, idx: u32) -> Option<&mut [u8]> {
        if self.slots.is_idle(idx) {
            Some(self.pool.get_mut(idx))
        } else {
            None
        }
    }

    fn in_flight(&self) -> usize {
        self.slots.in_flight()
    }

    fn push_file(&mut self, slot: u32, op: FileOp) {
        Self::reserve(
            &self.ring.submitter(),
            &self.sq,
            self.sqpoll,
            &mut self.unbound,
        );
        let fd = self
            .file
            .claim(&mut self.slots, self.files.len(), slot, &op);
        let entry = Sqe::from_entry(self.file_entry(slot, op, fd));
        // SAFETY: the reserve left a free entry, and no view of the crate's
        // queue is alive; the claims above checked that the slot's buffer is
        // idle and fits the I/O, and that the file is open with nothing
        // closing it; the buffer, the open's path and `open_how` (in
        // `open_args`), the directory and the open file all belong to this
        // engine and stay until the completion is reaped (the close is
        // refused while an I/O on the file is in flight; Drop waits for
        // everything, or leaks the buffers and open arguments).
        unsafe { self.sq.push_with(|sqe| *sqe = entry) };
    }

    fn open_file(&self) -> Option<BorrowedFd<'_>> {
        self.file.file()
    }

    fn features(&self) -> EngineFeatures {
        EngineFeatures {
            registered_files: self.registered_files,
            fixed_buffers: self.fixed_buffers,
            reap_window_us: self.batch_window.then_some(REAP_WINDOW_US),
            sqpoll: self.sqpoll,
            iopoll: self.iopoll,
            empty_wakeups: self.empty_wakeups,
        }
    }
}

mod teardown;
mod trims;

mod cq;
mod sq;
mod sqe;
#[cfg(test)]
mod tests;
