//! Many hosts at once, under MPI (`--features mpi`): `mpirun -n N iosurvey
//! MODE ...` or `srun`. Every rank builds the same plan from the same
//! command line; each runs the streams of its own targets (see
//! [`assign`]), every point starting at a barrier, and rank 0 merges every
//! rank's lossless results and writes the only output.
//!
//! A build without the feature, started by mpirun with more than one rank,
//! refuses to start: it must not run N independent copies of the job.

pub mod assign;
pub mod comm;
mod merge;
pub mod run;

use crate::exit::Failure;
use anyhow::anyhow;
use assign::{Assigned, RankInfo};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The ranks of the job, once MPI is up (more than one rank only).
pub struct World {
    pub rank: usize,
    pub ranks: Vec<RankInfo>,
}

static WORLD: OnceLock<World> = OnceLock::new();
/// Set when a failure is one every rank reached together (so that each
/// ends on its own, rank 0 saying why); any other failure of one rank
/// ends every rank at once (see [`end_alone`]), since the others would
/// wait for it in a collective.
static AGREED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `f`, marked as a failure every rank reached together.
pub fn agreed(f: Failure) -> Failure {
    AGREED.store(true, std::sync::atomic::Ordering::Relaxed);
    f
}

/// Whether the run's failure was reached by every rank together.
pub fn was_agreed() -> bool {
    AGREED.load(std::sync::atomic::Ordering::Relaxed)
}

/// A failure of this rank alone, under MPI: said with its rank and host,
/// then every rank ends (MPI_Abort) with its exit code.
pub fn end_alone(code: u8, text: &str) -> ! {
    let w = world().expect("a distributed run");
    comm::abort(&format!("on {}: {text}", w.ranks[w.rank].host), code)
}
/// The targets the mode's command line named, assigned to ranks.
static ASSIGNED: Mutex<Vec<Assigned>> = Mutex::new(Vec::new());

/// A check of this rank's own (a lock, a limit, a directory of its host)
/// agreed over the ranks when several run: one failure fails every rank
/// together, and rank 0 says each with its rank and host.
pub fn agree_if_many(step: Result<(), Failure>) -> Result<(), Failure> {
    if comm::active() {
        run::agree(step)
    } else {
        step
    }
}

/// `list` as every rank read it for itself (a file of its own host), when
/// they all read the same; refused, on every rank, when they differ.
pub fn same_everywhere(list: &[PathBuf], what: &str) -> Result<(), Failure> {
    if !comm::active() {
        return Ok(());
    }
    let mine = serde_json::to_vec(list).expect("paths encode");
    let all = comm::all_gather(&mine);
    if all.iter().all(|b| *b == mine) {
        return Ok(());
    }
    let e = if comm::rank() == 0 {
        anyhow!("{what} differs between the ranks' hosts; make it the same on every host, or name the targets on the command line")
    } else {
        anyhow!(run::SILENT)
    };
    Err(agreed(Failure::Usage(e)))
}

/// The job's ranks, when there are several.
pub fn world() -> Option<&'static World> {
    WORLD.get()
}

/// This host's name, as `uname -n` gives it.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// How many ranks the launcher started, from its environment: Open MPI's
/// `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE` (MPICH, Intel MPI, Slurm's
/// PMI-2), or Slurm's `SLURM_NTASKS` under srun.
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

/// Holds MPI up for the life of the process (finalised on drop).
pub struct Session {
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

/// Starts MPI when the launcher started several ranks; refuses (exit 2)
/// when this build has no MPI.
pub fn init() -> Result<Session, String> {
    let n = launched_size();
    #[cfg(not(feature = "mpi"))]
    {
        if n > 1 {
            return Err(format!(
                "this iosurvey was built without MPI, and the launcher started {n} copies of it, which would each run the whole job on their own; build with `cargo build --release --features mpi` to run under mpirun or srun"
            ));
        }
        Ok(Session {})
    }
    #[cfg(feature = "mpi")]
    {
        if n <= 1 {
            return Ok(Session { _universe: None });
        }
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or("MPI could not be initialised")?;
        use mpi::traits::Communicator;
        let w = universe.world();
        let rank = w.rank() as usize;
        let hosts: Vec<String> = comm_all_gather_hosts(w.size() as usize);
        let _ = WORLD.set(World {
            rank,
            ranks: assign::rank_table(&hosts),
        });
        Ok(Session {
            _universe: Some(universe),
        })
    }
}

/// Every rank's host name, gathered before [`WORLD`] is set.
#[cfg(feature = "mpi")]
fn comm_all_gather_hosts(size: usize) -> Vec<String> {
    use mpi::datatype::PartitionMut;
    use mpi::traits::*;
    let w = mpi::topology::SimpleCommunicator::world();
    let me = host_name().into_bytes();
    let mut counts = vec![0i32; size];
    w.all_gather_into(&(me.len() as i32), &mut counts[..]);
    let displs: Vec<i32> = counts
        .iter()
        .scan(0i32, |a, &c| {
            let d = *a;
            *a += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        w.all_gather_varcount_into(&me[..], &mut part);
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(&c, &d)| String::from_utf8_lossy(&all[d as usize..(d + c) as usize]).into_owned())
        .collect()
}

/// The ranks of the job: the world's, or this process alone.
fn ranks() -> Vec<RankInfo> {
    match world() {
        Some(w) => w.ranks.clone(),
        None => assign::rank_table(&[host_name()]),
    }
}

/// The targets a mode's command line named, as the plan names them: each
/// assigned to its rank (`host:path`, `{rank}`...). Under one rank, a
/// target on this host loses its `host:` and placeholders take rank 0.
pub fn targets(given: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    // The same command line and ranks give every rank the same verdict.
    let assigned =
        assign::assign(given, &ranks()).map_err(|e| agreed(Failure::Usage(anyhow!(e))))?;
    let names = assigned.iter().map(|a| a.name.clone()).collect();
    *ASSIGNED.lock().unwrap_or_else(|e| e.into_inner()) = assigned;
    Ok(names)
}

/// `f` of each target [`targets`] named, run by the rank that owns it on
/// its local path (a device can be probed only on its own host), in the
/// order of the targets, on every rank. A failure on any rank fails every
/// rank; rank 0 says each, with its rank and host.
pub fn probe_each<T>(f: impl Fn(&std::path::Path) -> Result<T, Failure>) -> Result<Vec<T>, Failure>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let assigned = assigned();
    let Some(w) = world() else {
        return assigned.iter().map(|a| f(&a.local)).collect();
    };
    type Probed<T> = Vec<(usize, Result<T, (u8, String)>)>;
    let mine: Probed<T> = assigned
        .iter()
        .enumerate()
        .filter(|(_, a)| a.owner == w.rank)
        .map(|(i, a)| (i, f(&a.local).map_err(|e| run::encode_failure(&e))))
        .collect();
    let bytes = serde_json::to_vec(&mine).expect("a probe encodes");
    let mut out: Vec<Option<T>> = assigned.iter().map(|_| None).collect();
    let mut code = 0u8;
    let mut lines = Vec::new();
    for (r, b) in comm::all_gather(&bytes).iter().enumerate() {
        let got: Probed<T> = serde_json::from_slice(b).unwrap_or_else(|e| {
            comm::abort(&format!(": rank {r}'s probes did not decode: {e}"), 70)
        });
        for (i, res) in got {
            match res {
                Ok(v) => out[i] = Some(v),
                Err((c, msg)) => {
                    code = code.max(c);
                    lines.push(format!("rank {r} on {}: {msg}", w.ranks[r].host));
                }
            }
        }
    }
    if !lines.is_empty() {
        let e = if w.rank == 0 {
            anyhow!(lines.join("\n"))
        } else {
            anyhow!(run::SILENT)
        };
        return Err(agreed(match code {
            1 => Failure::Run(e),
            130 => Failure::Interrupted(e),
            _ => Failure::Usage(e),
        }));
    }
    Ok(out
        .into_iter()
        .map(|v| v.expect("every target probed"))
        .collect())
}

/// The local paths of the targets [`targets`] gave this rank.
pub fn local_targets() -> Vec<PathBuf> {
    let me = world().map_or(0, |w| w.rank);
    assigned()
        .into_iter()
        .filter(|a| a.owner == me)
        .map(|a| a.local)
        .collect()
}

/// The assignment [`targets`] made.
pub(crate) fn assigned() -> Vec<Assigned> {
    ASSIGNED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Refuses a mode that runs on one host only when several ranks run.
pub fn single_rank(mode: &str) -> Result<(), Failure> {
    match world() {
        Some(w) if w.ranks.len() > 1 => Err(agreed(Failure::Usage(anyhow!(
            "{mode} runs on one host only; start it without mpirun (or with -n 1), or use run, parallel or survey across the {} ranks",
            w.ranks.len()
        )))),
        _ => Ok(()),
    }
}
