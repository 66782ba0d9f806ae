//! The few collective operations a distributed run needs, over MPI's world
//! communicator; in a build without MPI, or a process not started by
//! mpirun, the world is this one process and each is trivial. Only the
//! main thread calls them.

/// Whether this process is one of several ranks.
pub fn active() -> bool {
    size() > 1
}

/// This process's rank.
pub fn rank() -> usize {
    super::world().map_or(0, |w| w.rank)
}

/// Ranks in the job.
pub fn size() -> usize {
    super::world().map_or(1, |w| w.ranks.len())
}

#[cfg(feature = "mpi")]
mod imp {
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

    pub fn max_u64(v: u64) -> u64 {
        let mut out = 0u64;
        world().all_reduce_into(&v, &mut out, SystemOperation::max());
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
            super::abort(
                &format!(": gathered {total} bytes, more than MPI counts reach (2 GiB); fewer ranks or regions per point"),
                70,
            );
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
}

#[cfg(not(feature = "mpi"))]
mod imp {
    pub fn barrier() {}

    pub fn abort(code: u8) -> ! {
        std::process::exit(i32::from(code))
    }

    pub fn send_live(_: &[u64; 4]) {}

    pub fn recv_live() -> Vec<(usize, [u64; 4])> {
        Vec::new()
    }

    pub fn max_u64(v: u64) -> u64 {
        v
    }

    pub fn all_gather(bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }

    pub fn gather(bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }
}

/// Ends every rank of the job at once, after `why` on stderr: for a
/// failure on one rank that the others, waiting in a collective, cannot
/// learn of (a bug, not a refusal: those are agreed on).
pub fn abort(why: &str, code: u8) -> ! {
    eprintln!("iosurvey: rank {} {why}", rank());
    imp::abort(code)
}

/// Waits for every rank.
pub fn barrier() {
    if active() {
        imp::barrier();
    }
}

/// The largest `v` over the ranks, on every rank.
pub fn max_u64(v: u64) -> u64 {
    if active() {
        imp::max_u64(v)
    } else {
        v
    }
}

/// The smallest `v` over the ranks, on every rank.
pub fn min_u64(v: u64) -> u64 {
    u64::MAX - max_u64(u64::MAX - v)
}

/// Whether `flag` is set on any rank, on every rank.
pub fn any(flag: bool) -> bool {
    max_u64(u64::from(flag)) != 0
}

/// Every rank's `bytes`, in rank order, on every rank.
pub fn all_gather(bytes: &[u8]) -> Vec<Vec<u8>> {
    if active() {
        imp::all_gather(bytes)
    } else {
        vec![bytes.to_vec()]
    }
}

/// Every rank's `bytes`, in rank order, on rank 0; `None` on the others.
pub fn gather(bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    if active() {
        imp::gather(bytes)
    } else {
        Some(vec![bytes.to_vec()])
    }
}

/// Sends rank 0 this rank's progress in point `point`: `[point, elapsed
/// ns, ops, bytes]`, without waiting for it to be received.
pub fn send_live(v: [u64; 4]) {
    if active() && rank() != 0 {
        imp::send_live(&v);
    }
}

/// On rank 0: every progress message the other ranks sent since the last
/// call, as (rank, `[point, elapsed ns, ops, bytes]`), without waiting.
pub fn recv_live() -> Vec<(usize, [u64; 4])> {
    if active() && rank() == 0 {
        imp::recv_live()
    } else {
        Vec::new()
    }
}
