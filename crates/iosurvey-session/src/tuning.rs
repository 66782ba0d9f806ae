//! `--sqpoll`, `--sqpoll-cpu`, `--hipri` and `--cpus`, which each mode's
//! spec took from the command line: checked against the plan, this
//! process's CPUs and the targets' block devices before any I/O (and under
//! `--dry-run`).

use crate::failure::{usage, Failure};
use crate::TargetOptions;
use anyhow::anyhow;
use iosurvey_engine::EngineKind;
use iosurvey_workload::Plan;
use std::path::{Path, PathBuf};

/// Refuses (exit 2) flags this plan, this process's CPUs or its targets'
/// block devices cannot honour. Under MPI each rank checks its own part.
pub fn check(plan: &Plan, flags: &TargetOptions) -> Result<(), Failure> {
    let cpus = &flags.cpus[..];
    let uring_only = [(flags.sqpoll, "--sqpoll"), (flags.hipri, "--hipri")];
    for (given, flag) in uring_only {
        if given && plan.points.iter().any(|p| p.job.engine == EngineKind::Sync) {
            return usage(anyhow!(
                "{flag} needs the io_uring engine, and this run uses the sync engine: give --engine uring or drop {flag}"
            ));
        }
    }
    let wanted = cpus.iter().map(|&c| (c, "--cpus"));
    let wanted: Vec<(u32, &str)> = wanted
        .chain(flags.sqpoll_cpu.map(|c| (c, "--sqpoll-cpu")))
        .collect();
    if !wanted.is_empty() {
        if let Some(allowed) = allowed_cpus() {
            if let Some((cpu, flag)) = wanted.iter().find(|(c, _)| !allowed.contains(c)) {
                return usage(anyhow!(
                    "{flag}: CPU {cpu} is not one this process may run on ({}); pick among those",
                    list(&allowed)
                ));
            }
        }
    }
    if flags.hipri {
        for path in target_paths(plan) {
            check_poll_queues(&path)?;
        }
    }
    Ok(())
}

/// The CPUs this process may run on; `None` when the kernel does not say.
fn allowed_cpus() -> Option<Vec<u32>> {
    let set = rustix::thread::sched_getaffinity(None).ok()?;
    Some(
        (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .map(|c| c as u32)
            .collect(),
    )
}

/// `0-3,6` for display.
fn list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(match i == j {
            true => cpus[i].to_string(),
            false => format!("{}-{}", cpus[i], cpus[j]),
        });
        i = j + 1;
    }
    out.join(",")
}

fn target_paths(plan: &Plan) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for p in &plan.points {
        for t in &p.job.targets {
            if !paths.contains(&t.path) {
                paths.push(t.path.clone());
            }
        }
    }
    paths
}

/// Refuses `--hipri` on `path` unless the block device under it (the
/// device itself, or the one holding the file; a partition's whole disk)
/// has poll queues.
fn check_poll_queues(path: &Path) -> Result<(), Failure> {
    let (major, minor) = match block_device_of(path) {
        Ok(Some(dev)) => dev,
        Ok(None) => {
            return usage(anyhow!(
                "--hipri: {} is not on a block device (polled completions need one with poll queues); drop --hipri",
                path.display()
            ))
        }
        Err(e) => return usage(anyhow!("--hipri: {}: {e}", path.display())),
    };
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let disk = match sys.join("partition").exists() {
        true => sys.join(".."),
        false => sys.clone(),
    };
    let io_poll = disk.join("queue/io_poll");
    match std::fs::read_to_string(&io_poll) {
        Ok(v) if v.trim() == "1" => Ok(()),
        Ok(v) => usage(anyhow!(
            "--hipri: {} (block device {major}:{minor}) has no poll queues ({} is {}); drop --hipri, or give an NVMe device poll queues (nvme.poll_queues=N)",
            path.display(),
            io_poll.display(),
            v.trim()
        )),
        Err(e) => usage(anyhow!(
            "--hipri: cannot tell whether {} (block device {major}:{minor}) has poll queues: {}: {e}; drop --hipri",
            path.display(),
            io_poll.display()
        )),
    }
}

/// The block device (major, minor) that `path` is, or that holds it (its
/// directory's, for a file the run will create); `None` when none does
/// (tmpfs).
fn block_device_of(path: &Path) -> std::io::Result<Option<(u32, u32)>> {
    let st = match rustix::fs::stat(path) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            rustix::fs::stat(dir)?
        }
        Err(e) => return Err(e.into()),
    };
    let dev = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::BlockDevice => st.st_rdev,
        _ => st.st_dev,
    };
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    // Major 0 is the kernel's unnamed devices: tmpfs, overlay, proc.
    Ok((major != 0).then_some((major, minor)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_list_is_shown_as_ranges() {
        assert_eq!(list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(list(&[1]), "1");
        assert_eq!(list(&[4, 2, 3]), "4,2-3");
    }

    #[test]
    fn a_file_on_tmpfs_is_on_no_block_device() {
        if !Path::new("/dev/shm").is_dir() {
            iosurvey_testkit::skip!("no /dev/shm here");
        }
        let f = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
        assert_eq!(block_device_of(f.path()).unwrap(), None);
        let missing = f.path().with_extension("not-yet");
        assert_eq!(block_device_of(&missing).unwrap(), None);
    }
}
