//! The jobs of a fio job file in the order they run: jobs that run
//! together with one workload on different files are one point over those
//! files; a job after a `stonewall` starts the next point, which must use
//! the same files and the settings the points of one run share. What
//! cannot be one run is refused by name.

use super::fio_file::Section;
use super::fio_job::{job_flags, JobFlags};

/// The first flag on which two jobs differ, as `--rw randread` or
/// `--buffered`.
fn first_difference(a: &JobFlags, b: &JobFlags) -> String {
    let show = |(f, v): &(String, Option<String>)| match v {
        Some(v) => format!("{f} {v}"),
        None => f.clone(),
    };
    let only = |x: &JobFlags, y: &JobFlags| x.flags.iter().find(|f| !y.flags.contains(f)).map(show);
    match (only(a, b), only(b, a)) {
        (Some(x), Some(y)) => format!("{x} against {y}"),
        (Some(x), None) | (None, Some(x)) => format!("{x} in one only"),
        (None, None) => "their order".into(),
    }
}

/// The jobs as one run: the flags they share and all their files.
pub fn one_run(file: &str, jobs: &[Section]) -> Result<JobFlags, String> {
    let mut run: Option<(JobFlags, String)> = None;
    for s in jobs {
        let job = job_flags(s).map_err(|e| format!("{file}: {e}"))?;
        let Some((all, first)) = &mut run else {
            run = Some((job, s.name.clone()));
            continue;
        };
        if job.flags != all.flags {
            return Err(format!(
                "{file}: [{first}] and [{}] run at the same time with different workloads ({}), which one iosurvey run cannot express: run one at a time with --section",
                s.name,
                first_difference(all, &job)
            ));
        }
        if let Some(t) = job.targets.iter().find(|t| all.targets.contains(t)) {
            return Err(format!(
                "{file}: [{first}] and [{}] both use {t} at the same time: give one job numjobs= instead",
                s.name
            ));
        }
        all.targets.extend(job.targets);
        all.notes.extend(job.notes);
    }
    Ok(run.expect("a group has a job").0)
}

/// Flags of the whole run, which its points share: how the targets are
/// made and opened, and the engine's setup.
const SHARED: [&str; 7] = [
    "--size",
    "--buffered",
    "--sqpoll",
    "--sqpoll-cpu",
    "--hipri",
    "--cpus",
    "--compressible",
];

/// The flags of `job` among [`SHARED`].
fn shared(job: &JobFlags) -> Vec<&(String, Option<String>)> {
    job.flags
        .iter()
        .filter(|(f, _)| SHARED.contains(&f.as_str()))
        .collect()
}

/// The jobs in the order they run: a job with `stonewall` waits for those
/// before it, so it and the jobs after it (up to the next) are the next
/// point of the run; each point one run of its jobs, with their sections.
/// The points of one run share its targets and how they are opened.
pub fn points(file: &str, jobs: &[Section]) -> Result<Vec<(JobFlags, Vec<String>)>, String> {
    let mut groups: Vec<Vec<Section>> = Vec::new();
    for (i, s) in jobs.iter().enumerate() {
        let waits = i > 0 && job_flags(s).map_err(|e| format!("{file}: {e}"))?.stonewall;
        match groups.last_mut() {
            Some(g) if !waits => g.push(s.clone()),
            _ => groups.push(vec![s.clone()]),
        }
    }
    let mut out: Vec<(JobFlags, Vec<String>)> = Vec::new();
    for g in &groups {
        let run = one_run(file, g)?;
        let names: Vec<String> = g.iter().map(|s| s.name.clone()).collect();
        if let Some((first, first_names)) = out.first() {
            let refuse = |what: String| {
                Err(format!(
                    "{file}: [{}] waits for [{}] (stonewall) with {what}, which the points of one iosurvey run share: run them one at a time with --section",
                    names[0], first_names[0]
                ))
            };
            if run.targets != first.targets {
                return refuse("other files".into());
            }
            if shared(&run) != shared(first) {
                let other = JobFlags {
                    flags: shared(&run).into_iter().cloned().collect(),
                    ..run.clone()
                };
                let base = JobFlags {
                    flags: shared(first).into_iter().cloned().collect(),
                    ..first.clone()
                };
                return refuse(format!(
                    "other settings ({})",
                    first_difference(&base, &other)
                ));
            }
        }
        out.push((run, names));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::spellings::fio_file::parse;

    /// The sections of each point.
    fn split(text: &str) -> Result<Vec<Vec<String>>, String> {
        let jobs = parse(text).unwrap();
        points("x.fio", &jobs).map(|p| p.into_iter().map(|(_, names)| names).collect())
    }

    #[test]
    fn a_stonewall_on_the_same_files_starts_the_next_point() {
        let p = split(
            "[global]\nfilename=/a\nsize=1m\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n[r2]\nrw=read\nfilename=/b\n",
        );
        assert!(p
            .unwrap_err()
            .contains("[r] waits for [w] (stonewall) with other files"));
        let p = split("[global]\nfilename=/a\nsize=1m\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n")
            .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0], vec!["w"]);
        assert_eq!(p[1], vec!["r"]);
        let e = split("[global]\nfilename=/a\n[w]\nrw=write\nsize=1m\n[r]\nstonewall\nrw=read\nsize=1m\ndirect=1\n")
            .unwrap_err();
        assert_eq!(
            e,
            "x.fio: [r] waits for [w] (stonewall) with other settings (--buffered in one only), which the points of one iosurvey run share: run them one at a time with --section"
        );
        // wait_for_previous is stonewall; the first job's means nothing.
        let p =
            split("[w]\nfilename=/a\nstonewall\nrw=write\n[r]\nfilename=/a\nwait_for_previous\n")
                .unwrap();
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn jobs_at_the_same_time_with_other_workloads_are_refused_by_name() {
        let text = "[r]\nfilename=/a\nrw=randread\n[w]\nfilename=/b\nrw=randwrite\n";
        let jobs = parse(text).unwrap();
        let e = one_run("x.fio", &jobs).unwrap_err();
        assert_eq!(
            e,
            "x.fio: [r] and [w] run at the same time with different workloads (--rw randread against --rw randwrite), which one iosurvey run cannot express: run one at a time with --section"
        );
        let same = parse("[r]\nfilename=/a\n[s]\nfilename=/a\n").unwrap();
        assert!(one_run("x.fio", &same).unwrap_err().contains("both use /a"));
    }
}
