//! Starting the cluster: one process, or, when a launcher (mpirun, srun)
//! started several copies, the ranks of an MPI job ([`Mpi`]). A build
//! without MPI started as several copies refuses to start: it must not
//! run N independent copies of the job.

use crate::cluster::{Cluster, Local};
#[cfg(feature = "mpi")]
use crate::host::{host_name, say_line};
#[cfg(feature = "mpi")]
use {
    crate::assign::RankInfo, crate::cluster::Learnt, crate::comm, crate::localize::Localized,
    iosurvey_workload::Plan,
};

/// How many ranks the launcher started, from its environment: Open MPI's
/// `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE` (MPICH, Intel MPI, Slurm's
/// PMI-2), or, under srun (whose PMIx plugin sets `PMIX_RANK` but no size),
/// the step's `SLURM_STEP_NUM_TASKS`.
pub fn launched_size() -> usize {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .or_else(|| {
            // srun sets SLURM_NTASKS for every job step; only a step's own
            // task count says how many copies it started.
            std::env::var_os("SLURM_STEP_ID")?;
            std::env::var("SLURM_STEP_NUM_TASKS").ok()?.parse().ok()
        })
        .unwrap_or(1)
}

/// This process's rank by the launcher's environment (0 when none says).
pub fn launched_rank() -> usize {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
    .unwrap_or(0)
}

/// The cluster this process runs in: MPI up for as long as it lives
/// (finalised on drop) when the launcher started several ranks; a refusal
/// (to be said by the first copy, exit 2) when this build has no MPI.
pub fn start() -> Result<Box<dyn Cluster>, String> {
    let n = launched_size();
    #[cfg(not(feature = "mpi"))]
    {
        if n > 1 {
            return Err(format!(
                "this iosurvey was built without MPI, and the launcher started {n} copies of it, which would each run the whole job on their own; build with `cargo build --release --features mpi` to run under mpirun or srun"
            ));
        }
        Ok(Box::new(Local::new()))
    }
    #[cfg(feature = "mpi")]
    {
        if n <= 1 {
            return Ok(Box::new(Local::new()));
        }
        joinable(n)?;
        Ok(Box::new(Mpi::start()?))
    }
}

/// Refuses, before MPI starts, ranks that srun started with no PMIx
/// (`--mpi=pmi2`, or `none`) when the MPI library is Open MPI: Open MPI 4
/// finds its ranks through PMIx only, and its `MPI_Init` would fail with a
/// page of text from every rank. Another MPI (MPICH, Intel MPI) may take
/// PMI-2, and is left to start.
#[cfg(feature = "mpi")]
fn joinable(n: usize) -> Result<(), String> {
    let var = |v: &str| std::env::var_os(v).is_some();
    if !var("SLURM_STEP_ID") || var("PMIX_RANK") || var("OMPI_COMM_WORLD_SIZE") {
        return Ok(());
    }
    let library = mpi::environment::library_version().unwrap_or_default();
    if !library.starts_with("Open MPI") {
        return Ok(());
    }
    let how = std::env::var("SLURM_MPI_TYPE").unwrap_or_else(|_| "none".into());
    let library = library.split(',').next().unwrap_or_default().trim();
    Err(format!(
        "srun started {n} ranks with --mpi={how}, and this iosurvey's MPI ({library}) finds its ranks only through PMIx: run srun --mpi=pmix (srun --mpi=list says what this Slurm has)"
    ))
}

/// The ranks of an MPI job, and what the run learnt about them.
#[cfg(feature = "mpi")]
pub struct Mpi {
    /// Held for the life of the run: MPI is finalised when it drops.
    _universe: mpi::environment::Universe,
    rank: usize,
    ranks: Vec<RankInfo>,
    /// What the run learnt of its ranks.
    learnt: Learnt,
}

#[cfg(feature = "mpi")]
impl Mpi {
    /// Starts MPI and learns every rank's host.
    fn start() -> Result<Mpi, String> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or("MPI could not be initialised")?;
        let hosts: Vec<String> = comm::all_gather(host_name().as_bytes())
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        Ok(Mpi {
            _universe: universe,
            rank: comm::rank(),
            ranks: crate::assign::rank_table(&hosts),
            learnt: Learnt::default(),
        })
    }
}

#[cfg(feature = "mpi")]
impl Cluster for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> &[RankInfo] {
        &self.ranks
    }
    fn barrier(&self) {
        comm::barrier();
    }
    fn max_u64s(&self, v: &[u64]) -> Vec<u64> {
        comm::max_u64s(v)
    }
    fn send_to_root(&self, bytes: &[u8]) {
        if self.rank != 0 {
            comm::send_part(bytes);
        }
    }
    fn recv_from(&self, r: usize) -> Vec<u8> {
        match (self.rank, r) {
            (0, 1..) => comm::recv_part(r),
            _ => Vec::new(),
        }
    }
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        comm::all_gather(bytes)
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        comm::gather(bytes)
    }
    fn send_live(&self, v: [u64; 4]) {
        if self.rank != 0 {
            comm::send_live(&v);
        }
    }
    fn recv_live(&self) -> Vec<(usize, [u64; 4])> {
        match self.rank {
            0 => comm::recv_live(),
            _ => Vec::new(),
        }
    }
    fn abort(&self, why: &str, code: u8) -> ! {
        say_line(format_args!("iosurvey: rank {} {why}", self.rank));
        comm::abort(code)
    }
    fn learnt(&self) -> &Learnt {
        &self.learnt
    }
    /// Refused for a mode whose targets were not assigned to ranks.
    fn localize(&self, plan: &Plan) -> Result<Localized, String> {
        let assigned = self.assigned();
        if assigned.is_empty() {
            return Err(format!(
                "{} does not run under MPI yet; run it on one host",
                plan.mode
            ));
        }
        crate::localize::localize(plan, &assigned, self.rank)
    }
}
