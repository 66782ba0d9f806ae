//! The `--verify` pass after a job: every block the run wrote read back and
//! checked against the generation map, or, for a job that only reads, each
//! block against what the target's verify state says the verified runs
//! before left there; and the loading and saving of those states.
//! Reads of 1 MiB, O_DIRECT when the run was (a buffered run's cache is
//! dropped first, so the blocks come from the device).

use crate::clock::now_ns;
use crate::runner::RunError;
use crate::verify_state::{capacity, load, state_path};
use iosurvey_engine::open_beneath;
use iosurvey_engine::verify::{check_chunk, Expect, WriteVerify, BLOCK};
use iosurvey_engine::BufferPool;
use iosurvey_model::verify::{FailureClass, VerifyFailure, VerifySummary};
use iosurvey_model::{CachedPages, TargetKind};
use iosurvey_sys::resident::resident_pages;
use iosurvey_target::target::Geometry;
use iosurvey_target::target::{drop_cache, drop_pages, io_alignment, OpenTarget};
use iosurvey_workload::pattern::resolve_area;
use iosurvey_workload::{FrameJob, FrameLayout, Job, StreamClass};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use std::hash::{BuildHasher, RandomState};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod states;
pub(crate) use states::{forget_unverified, load_states, presave_states, save_states, Loaded};

/// Bytes per read of the pass.
const CHUNK: usize = 1 << 20;

/// A random id for a verified run, recorded in every header it writes.
pub(crate) fn new_run_id() -> u64 {
    RandomState::new().hash_one(now_ns())
}

/// Checks that `job` can be verified: whole 4 KiB blocks, on plain
/// targets, each with a place for its verify state that holds iosurvey's
/// own state or nothing yet.
pub(crate) fn check_job(job: &Job, targets: &[Geometry]) -> Result<(), RunError> {
    if !job.verify {
        return Ok(());
    }
    let refuse = |why: String| Err(RunError::Verify(why));
    if job.check_compression && job.writes() {
        return refuse(
            "--check-compression writes without verify headers over the blocks --verify keeps track of; drop one of them".into(),
        );
    }
    for (ti, t) in targets.iter().enumerate() {
        if !job.streams.iter().any(|s| s.target == ti) {
            continue;
        }
        let path = state_path(&t.path, job.verify_state.as_deref())
            .map_err(|e| RunError::Verify(e.to_string()))?;
        load(&path, capacity(&t.path, t.size)).map_err(|e| RunError::Verify(e.to_string()))?;
    }
    for s in &job.streams {
        if let Some(fj) = &s.frames {
            if fj.frame_bytes % BLOCK as u64 != 0 {
                return refuse(format!(
                    "--verify checks whole 4 KiB blocks: frames of {} bytes are not a multiple of 4096; pick a 4096-aligned format or --frame-size",
                    fj.frame_bytes
                ));
            }
        }
        if s.array.is_some() {
            return refuse("a simulated array cannot be verified; drop --simulate".into());
        }
        if s.bs % BLOCK as u64 != 0 {
            return refuse(format!(
                "--verify checks whole 4 KiB blocks: --bs {} is not a multiple of 4096",
                s.bs
            ));
        }
        if s.offset % BLOCK as u64 != 0 {
            return refuse(format!(
                "--verify checks whole 4 KiB blocks: --offset {} is not a multiple of 4096",
                s.offset
            ));
        }
    }
    Ok(())
}

/// The end of the last area a writing stream of `job` covers on target
/// `ti` (of `size` bytes): the generation map of the target need not go
/// further (one byte per 4 KiB block up to it).
pub(crate) fn written_end(job: &Job, ti: usize, size: u64) -> u64 {
    job.streams
        .iter()
        .filter(|s| s.target == ti && s.mix.writes())
        .filter_map(|s| verified_area(s, size))
        .map(|a| a.1)
        .max()
        .unwrap_or(0)
}

/// The blocks stream `s` covers on a target of `size` bytes, as
/// `(start, end)` in whole 4 KiB blocks: frames in files of their own are
/// verified as if they were one stream, frame `k` at `k` frame sizes.
pub(crate) fn verified_area(s: &StreamClass, size: u64) -> Option<(u64, u64)> {
    let (start, len) = match &s.frames {
        Some(fj) if matches!(fj.layout, FrameLayout::Files { .. }) => {
            (0, fj.frames * fj.frame_bytes)
        }
        _ => {
            let a = resolve_area(size, s.offset, s.span, s.bs).ok()?;
            (a.start, a.len)
        }
    };
    Some((start, start + len / BLOCK as u64 * BLOCK as u64))
}

/// Runs the pass over the targets of `job`: against `written`'s maps when
/// the job wrote, else against each target's verify state (`states`).
pub(crate) fn verify_point(
    job: &Job,
    targets: &[OpenTarget],
    written: Option<&WriteVerify>,
    states: &[Option<Loaded>],
    stop: &AtomicBool,
) -> Result<VerifySummary, RunError> {
    let t0 = now_ns();
    let mut out = VerifySummary {
        mode: if written.is_some() { "write" } else { "read" }.into(),
        run_id: written.map(|w| format!("{:016x}", w.run_id)),
        run_seed: written.map(|w| w.seed),
        ..Default::default()
    };
    let mut pool = BufferPool::new(1, CHUNK, io_alignment(targets), 0, None)?;
    let mut missing = Vec::new();
    for (ti, t) in targets.iter().enumerate() {
        let areas: Vec<(u64, u64)> = job
            .streams
            .iter()
            .filter(|s| s.target == ti)
            .filter_map(|s| verified_area(s, t.size))
            .collect();
        if areas.is_empty() {
            continue;
        }
        let in_files = job.streams.iter().find_map(|s| match &s.frames {
            Some(fj) if s.target == ti && matches!(fj.layout, FrameLayout::Files { .. }) => {
                Some(fj)
            }
            _ => None,
        });
        // What the blocks should hold: the run's map, or the state.
        let loaded = states.get(ti).and_then(Option::as_ref);
        let mut expect = match (written, loaded) {
            (Some(w), _) => Expect::Map {
                map: &w.maps[ti],
                run_id: w.run_id,
            },
            (None, Some(l)) => {
                missing.extend(l.missing.clone());
                if out.run_id.is_none() {
                    if let Some(&(id, seed)) = l.state.runs.last() {
                        out.run_id = Some(format!("{id:016x}"));
                        out.run_seed = Some(seed);
                    }
                }
                Expect::State { state: &l.state }
            }
            (None, None) => continue,
        };
        if let Some(fj) = in_files {
            verify_frame_files(fj, t, ti, pool.get_mut(0), &mut expect, &mut out, stop);
        } else {
            if !t.direct {
                drop_cache(t);
            }
            let (start, end) = match written {
                // Every block the run wrote, wherever it is.
                Some(w) => (0, w.maps[ti].len() as u64 * BLOCK as u64),
                None => (
                    areas.iter().map(|a| a.0).min().unwrap_or(0),
                    areas.iter().map(|a| a.1).max().unwrap_or(0),
                ),
            };
            let mut off = start;
            while off < end {
                let len = (end - off).min(CHUNK as u64) as usize;
                let first = (off / BLOCK as u64) as usize;
                let known = known_blocks(&expect, first..first + len / BLOCK);
                if known == 0 {
                    // Nothing known there: not read.
                    if written.is_none() {
                        out.blocks_unwritten += (len / BLOCK) as u64;
                    }
                    off += len as u64;
                    continue;
                }
                if stop.load(Ordering::Relaxed) {
                    // Stopped: what is left is counted, not read.
                    out.blocks_skipped += known;
                    off += len as u64;
                    continue;
                }
                let buf = &mut pool.get_mut(0)[..len];
                read_and_check(t.fd.as_fd(), ti, buf, off, off, &mut expect, &mut out);
                off += len as u64;
            }
        }
    }
    out.elapsed_ns = now_ns() - t0;
    out.interrupted = stop.load(Ordering::Relaxed);
    if out.blocks_checked == 0 && !out.interrupted {
        out.nothing_checked = Some(match written {
            Some(_) => {
                "no write of this run completed whole, so no block has a known content".into()
            }
            None if !missing.is_empty() => missing.join("; "),
            None => format!(
                "the verify state records none of the {} blocks read as written by a verified run",
                out.blocks_unwritten
            ),
        });
    }
    Ok(out)
}

/// Blocks in `range` whose content `expect` knows.
fn known_blocks(expect: &Expect<'_>, range: std::ops::Range<usize>) -> u64 {
    match expect {
        Expect::Map { map, .. } => map.count_written(range),
        Expect::State { state } => state.count_written(range),
    }
}

/// Checks the frames of `fj`, each in its own file beneath the frames
/// directory `t` (target `ti`), as blocks of one stream: frame `k`'s bytes
/// at `k` frame sizes. Each file is opened without following a symlink and
/// must be a regular file; a frame the map says was written whose file is
/// gone is unwritten, block by block. `buf` holds one read.
fn verify_frame_files(
    fj: &FrameJob,
    t: &OpenTarget,
    ti: usize,
    buf: &mut [u8],
    expect: &mut Expect<'_>,
    out: &mut VerifySummary,
    stop: &AtomicBool,
) {
    let flags = if t.direct {
        OFlags::RDONLY | OFlags::DIRECT
    } else {
        OFlags::RDONLY
    };
    let blocks = (fj.frame_bytes / BLOCK as u64) as usize;
    for k in 0..fj.frames {
        let base = k * fj.frame_bytes;
        let first = (base / BLOCK as u64) as usize;
        let known = known_blocks(expect, first..first + blocks);
        if known == 0 {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            out.blocks_skipped += known;
            continue;
        }
        let rel = fj.frame_path(Path::new(""), k);
        let listed = out.failures.len();
        let file = open_beneath(t.fd.as_fd(), &rel, flags, Mode::empty()).and_then(|f| {
            match FileType::from_raw_mode(rustix::fs::fstat(&f)?.st_mode) {
                FileType::RegularFile => Ok(f),
                _ => Err(Errno::EXIST),
            }
        });
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                for b in 0..blocks {
                    if !expect.wants(base + (b * BLOCK) as u64) {
                        out.blocks_unwritten += 1;
                        continue;
                    }
                    out.blocks_checked += 1;
                    out.fail(VerifyFailure {
                        target: ti,
                        offset: (b * BLOCK) as u64,
                        file: Some(rel.display().to_string()),
                        class: FailureClass::Unwritten,
                        errno: None,
                        expected: format!("frame file {}", rel.display()),
                        found: format!("no plain file there ({e})"),
                    });
                }
                continue;
            }
        };
        if !t.direct {
            drop_pages(file.as_fd());
        }
        let mut off = 0;
        while off < fj.frame_bytes {
            let len = (fj.frame_bytes - off).min(buf.len() as u64) as usize;
            read_and_check(
                file.as_fd(),
                ti,
                &mut buf[..len],
                off,
                base + off,
                expect,
                out,
            );
            off += len as u64;
        }
        name_frame_file(&mut out.failures[listed..], &rel, base);
    }
}

/// Names the frame file `rel` (at `base` in the frames' sequence) in
/// `failures`, each with its offset in that file.
fn name_frame_file(failures: &mut [VerifyFailure], rel: &Path, base: u64) {
    for f in failures {
        f.file = Some(rel.display().to_string());
        f.offset -= base;
    }
}

/// Reads `buf.len()` bytes of `fd` at `off` and checks them into `out` as
/// blocks of target `ti` at `at`. When the read stops short, the rest is
/// read again one 4 KiB block at a time, so that only a block that cannot
/// be read fails, at its own offset: a read error with its errno, or
/// unwritten past the end of a file.
pub(crate) fn read_and_check(
    fd: BorrowedFd<'_>,
    ti: usize,
    buf: &mut [u8],
    off: u64,
    at: u64,
    expect: &mut Expect<'_>,
    out: &mut VerifySummary,
) {
    let len = buf.len();
    let (got, _) = read_full(fd, buf, off);
    out.bytes_read += got as u64;
    let whole = got / BLOCK * BLOCK;
    check_chunk(&buf[..whole], at, ti, expect, out);
    for b in (whole..len).step_by(BLOCK) {
        let block = &mut buf[b..b + BLOCK];
        let o = at + b as u64;
        match read_full(fd, block, off + b as u64) {
            (BLOCK, _) => {
                out.bytes_read += BLOCK as u64;
                check_chunk(block, o, ti, expect, out);
            }
            (_, err) if expect.wants(o) => {
                out.blocks_checked += 1;
                out.fail(VerifyFailure {
                    target: ti,
                    offset: o,
                    file: None,
                    class: if err.is_some() {
                        FailureClass::ReadError
                    } else {
                        FailureClass::Unwritten
                    },
                    errno: err.map(|e| e.raw_os_error()),
                    expected: expect.describe(o),
                    found: match err {
                        Some(e) => format!("a read error ({})", std::io::Error::from(e)),
                        None => "the end of the file".into(),
                    },
                })
            }
            _ => out.blocks_unwritten += 1,
        }
    }
}

/// The pages of the areas the job's buffered reading streams cover on
/// file targets not already known to sit in memory, and how many are in
/// the page cache (measured right after the caches were dropped).
pub(crate) fn cached_read_areas(job: &Job, targets: &[OpenTarget]) -> Vec<CachedPages> {
    let mut out: Vec<CachedPages> = Vec::new();
    for s in job
        .streams
        .iter()
        .filter(|s| s.mix.reads() && s.array.is_none())
    {
        let Some(t) = targets.get(s.target) else {
            continue;
        };
        if t.kind != TargetKind::File || t.memory_backed.is_some() {
            continue;
        }
        let Ok(a) = resolve_area(t.size, s.offset, s.span, s.bs) else {
            continue;
        };
        let Some((pages, resident)) = resident_pages(t.fd.as_fd(), a.start, a.len) else {
            continue;
        };
        match out.iter_mut().find(|c| c.target == s.target) {
            Some(c) => {
                c.pages += pages;
                c.resident += resident;
            }
            None => out.push(CachedPages {
                target: s.target,
                pages,
                resident,
            }),
        }
    }
    out
}

/// Reads `buf.len()` bytes at `off`, as many as it can: the bytes read,
/// and the error that stopped it short (none at the end of the file).
pub(crate) fn read_full(fd: BorrowedFd<'_>, buf: &mut [u8], off: u64) -> (usize, Option<Errno>) {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], off + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::INTR) => continue,
            Err(e) => return (done, Some(e)),
        }
    }
    (done, None)
}
