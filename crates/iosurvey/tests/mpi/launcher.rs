//! Who starts the ranks of the MPI tests: Open MPI's `mpirun` (the
//! default), or Slurm's `srun` when `IOSURVEY_MPI_LAUNCHER=srun` (a
//! one-node Slurm on this machine: `tools/slurm-up.sh`). Both start the
//! same per-rank wrapper, which can join a blkio cgroup and give the rank a
//! host name of its own (a UTS namespace), so the tests read the same under
//! either; only what each launcher says when a rank fails differs.

use crate::common::{require_root_and, sh, BIN};
use std::path::Path;
use std::process::{Command, Stdio};

/// The launcher the tests run under.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Launcher {
    Mpirun,
    Srun,
}

impl Launcher {
    /// `IOSURVEY_MPI_LAUNCHER`: unset or `mpirun`, or `srun`.
    pub fn from_env() -> Result<Launcher, String> {
        match std::env::var("IOSURVEY_MPI_LAUNCHER").as_deref() {
            Err(_) | Ok("") | Ok("mpirun") => Ok(Launcher::Mpirun),
            Ok("srun") => Ok(Launcher::Srun),
            Ok(other) => Err(format!("IOSURVEY_MPI_LAUNCHER={other}: say mpirun or srun")),
        }
    }

    /// Root, the launcher and `unshare`; for srun, a Slurm node that takes
    /// jobs.
    pub fn require(self) -> Result<(), String> {
        require_root_and(&[self.program(), "unshare"])?;
        if self == Launcher::Srun {
            let states = sh("sinfo", &["-h", "-o", "%t"])
                .map_err(|e| format!("{e}; start Slurm with tools/slurm-up.sh"))?;
            if !states
                .lines()
                .any(|s| ["idle", "mix", "alloc"].contains(&s.trim()))
            {
                return Err(format!(
                    "no Slurm node takes jobs (sinfo: {}); start Slurm with tools/slurm-up.sh",
                    states.trim()
                ));
            }
        }
        Ok(())
    }

    pub fn program(self) -> &'static str {
        match self {
            Launcher::Mpirun => "mpirun",
            Launcher::Srun => "srun",
        }
    }

    /// The variable holding a rank's number in its environment.
    fn rank_var(self) -> &'static str {
        match self {
            Launcher::Mpirun => "OMPI_COMM_WORLD_RANK",
            Launcher::Srun => "SLURM_PROCID",
        }
    }

    /// The launcher's arguments that start `n` ranks of iosurvey with
    /// `args`. With `per_host`, rank `r` runs on host `node{r / per_host}`;
    /// with `cgroup` (a `cgroup.procs` file), every rank joins that group
    /// before iosurvey starts.
    pub fn args(
        self,
        n: usize,
        per_host: Option<usize>,
        cgroup: Option<&Path>,
        args: &[&str],
    ) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Launcher::Mpirun => vec!["--allow-run-as-root".into(), "--oversubscribe".into()],
            // More tasks than the node has CPUs (the tests' 4 ranks on 2),
            // found by Open MPI through Slurm's PMIx server.
            Launcher::Srun => vec!["--overcommit".into(), "--mpi=pmix".into()],
        };
        v.extend(["-n".to_string(), n.to_string()]);
        let mut steps = Vec::new();
        if let Some(procs) = cgroup {
            steps.push(format!("echo $$ > '{}'", procs.display()));
        }
        if let Some(k) = per_host {
            steps.push(format!("hostname node$(({} / {k}))", self.rank_var()));
            v.extend(["unshare".into(), "--uts".into()]);
        }
        if !steps.is_empty() {
            steps.push(r#"exec "$0" "$@""#.into());
            v.extend(["sh".into(), "-c".into(), steps.join(" && ")]);
        }
        v.push(BIN.to_string());
        v.extend(args.iter().map(|s| s.to_string()));
        v
    }

    /// The launcher's command, its output piped: `n` ranks of iosurvey
    /// with `args` (see [`Launcher::args`]). Open MPI's ranks talk over
    /// shared memory only (`btl self,vader`), under either launcher.
    pub fn command(
        self,
        n: usize,
        per_host: Option<usize>,
        cgroup: Option<&Path>,
        args: &[&str],
    ) -> Command {
        let mut c = Command::new(self.program());
        c.args(self.args(n, per_host, cgroup, args))
            .env("OMPI_MCA_btl", "self,vader")
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Whether the launcher's `stderr` says that a rank exited with `code`
    /// (mpirun names the first rank to; srun every task that did).
    pub fn said_exit(self, stderr: &str, code: i32) -> bool {
        match self {
            Launcher::Mpirun => stderr.contains(&format!("Exit code:    {code}")),
            Launcher::Srun => stderr.contains(&format!("Exited with exit code {code}")),
        }
    }
}
