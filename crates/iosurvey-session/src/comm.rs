//! The few collective operations a distributed run needs, over MPI's
//! world communicator. Only [`crate::Mpi`] calls them, from the main
//! thread, and only when the launcher started several ranks.

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

pub fn barrier() {
    world().barrier();
}

pub fn abort(code: u8) -> ! {
    world().abort(i32::from(code))
}

/// The tag of live progress messages.
const LIVE: i32 = 7;

pub fn send_live(v: &[u64; 4]) {
    // 32 bytes go eagerly: the send returns at once, whether or not
    // rank 0 has received the last one.
    world().process_at_rank(0).send_with_tag(&v[..], LIVE);
}

pub fn recv_live() -> Vec<(usize, [u64; 4])> {
    let w = world();
    let mut out = Vec::new();
    while let Some((msg, status)) = w.any_process().immediate_matched_probe_with_tag(LIVE) {
        let mut buf = [0u64; 4];
        msg.matched_receive_into(&mut buf[..]);
        out.push((status.source_rank() as usize, buf));
    }
    out
}

/// The tag of each rank's part of a point, sent to rank 0.
const PART: i32 = 8;

/// Sends rank 0 this rank's part of a point; returns once rank 0 took it
/// (or MPI buffered it).
pub fn send_part(bytes: &[u8]) {
    if i32::try_from(bytes.len()).is_err() {
        crate::host::say_line(format_args!(
            "iosurvey: rank {}: its result is {} bytes, more than an MPI message holds (2 GiB); fewer regions per rank",
            rank(),
            bytes.len()
        ));
        abort(70);
    }
    world().process_at_rank(0).send_with_tag(bytes, PART);
}

/// On rank 0: rank `r`'s part of a point, waited for.
pub fn recv_part(r: usize) -> Vec<u8> {
    let (v, _) = world()
        .process_at_rank(r as i32)
        .receive_vec_with_tag::<u8>(PART);
    v
}

/// The largest of each `v[i]` over the ranks, on every rank (one
/// reduction for all).
pub fn max_u64s(v: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; v.len()];
    world().all_reduce_into(v, &mut out[..], SystemOperation::max());
    out
}

fn split(counts: &[i32], all: Vec<u8>) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        out.push(all[at..at + c as usize].to_vec());
        at += c as usize;
    }
    out
}

fn displs(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0i32, |a, &c| {
            let d = *a;
            *a += c;
            Some(d)
        })
        .collect()
}

fn len_of(bytes: &[u8]) -> i32 {
    i32::try_from(bytes.len()).expect("a rank's message is under 2 GiB")
}

/// MPI counts and displacements are `int`: every rank's message
/// together must stay under 2 GiB.
fn check_total(counts: &[i32]) {
    let total: i64 = counts.iter().map(|&c| i64::from(c)).sum();
    if total > i64::from(i32::MAX) {
        crate::host::say_line(format_args!(
            "iosurvey: rank {}: gathered {total} bytes, more than MPI counts reach (2 GiB); fewer ranks or regions per point",
            rank()
        ));
        abort(70);
    }
}

pub fn all_gather(bytes: &[u8]) -> Vec<Vec<u8>> {
    let w = world();
    let mut counts = vec![0i32; w.size() as usize];
    w.all_gather_into(&len_of(bytes), &mut counts[..]);
    check_total(&counts);
    let d = displs(&counts);
    let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &d[..]);
        w.all_gather_varcount_into(bytes, &mut part);
    }
    split(&counts, all)
}

pub fn gather(bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let w = world();
    let root = w.process_at_rank(0);
    if w.rank() != 0 {
        root.gather_into(&len_of(bytes));
        root.gather_varcount_into(bytes);
        return None;
    }
    let mut counts = vec![0i32; w.size() as usize];
    root.gather_into_root(&len_of(bytes), &mut counts[..]);
    check_total(&counts);
    let d = displs(&counts);
    let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &d[..]);
        root.gather_varcount_into_root(bytes, &mut part);
    }
    Some(split(&counts, all))
}

/// This process's rank in the world.
pub fn rank() -> usize {
    world().rank() as usize
}
