//! `iosurvey run --fio JOB.fio [--section NAME]...`: the job file's
//! sections as `run`'s own flags, added to the line before clap parses it
//! (so every check `run` makes applies). Jobs that run together with the
//! same workload on different files are one run over those files; jobs
//! that cannot be one run (other workloads at the same time, a job that
//! waits for another) are refused by name.

use super::fio_file::{parse, Section};
use super::fio_job::JobFlags;
use super::fio_points::points;
use clap::CommandFactory;

/// Whether `iosurvey run` takes the long flag `--NAME` (a job file's
/// option may need one this build does not have yet).
fn run_takes(name: &str) -> bool {
    let cli = crate::flags::cli::Cli::command();
    cli.find_subcommand("run")
        .is_some_and(|run| run.get_arguments().any(|a| a.get_long() == Some(name)))
}

/// What a run from a job file ran, for its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioRun {
    /// The job file as given.
    pub file: String,
    /// Its text, so that the run can be made again from the report.
    pub text: String,
    /// The job sections that ran, point by point (jobs that run together
    /// are one point; a `stonewall` starts the next).
    pub sections: Vec<Vec<String>>,
    /// Their files, the run's targets.
    pub targets: Vec<String>,
    /// What ran otherwise than written (libaio as io_uring).
    pub notes: Vec<String>,
    /// The lines of the points after the first (`stonewall`), each as
    /// clap is to parse it.
    pub later: Vec<Vec<String>>,
}

/// The values of `--NAME` (`--NAME V` or `--NAME=V`) among `words`.
fn values_of(words: &[String], name: &str) -> Vec<String> {
    let flag = format!("--{name}");
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if *w == flag {
            out.extend(words.get(i + 1).cloned());
        } else if let Some(v) = w.strip_prefix(&flag).and_then(|r| r.strip_prefix('=')) {
            out.push(v.to_string());
        }
    }
    out
}

/// The sections to run: those `--section` names (each must be there), or
/// every job section.
fn chosen(file: &str, jobs: Vec<Section>, names: &[String]) -> Result<Vec<Section>, String> {
    if jobs.is_empty() {
        return Err(format!("{file} has no job section (only [global])"));
    }
    if names.is_empty() {
        return Ok(jobs);
    }
    for n in names {
        if !jobs.iter().any(|j| j.name == *n) {
            let all: Vec<String> = jobs.iter().map(|j| format!("[{}]", j.name)).collect();
            return Err(format!(
                "--section {n}: {file} has no job [{n}] (its jobs: {})",
                all.join(" ")
            ));
        }
    }
    Ok(jobs
        .into_iter()
        .filter(|j| names.contains(&j.name))
        .collect())
}

/// `args` (up to `end`, then what follows it) with a point's flags and
/// targets added.
fn with_flags(args: &[String], end: usize, run: &JobFlags) -> Vec<String> {
    let mut out = args[..end].to_vec();
    for (flag, value) in &run.flags {
        out.push(flag.clone());
        out.extend(value.clone());
    }
    out.extend(args[end..].iter().cloned());
    if end == args.len() {
        out.push("--".into());
    }
    out.extend(run.targets.iter().cloned());
    out
}

/// For `iosurvey run` with `--fio JOB.fio`: the line with the job file's
/// flags and files added (`--fio` and `--section` stay, for clap and the
/// report), and what ran; `read` reads the job file. A flag given both on
/// the line and by the job file is refused. Jobs after a `stonewall` are
/// later points: each a line of its own, in [`FioRun::later`].
pub fn fio_job_file(
    args: Vec<String>,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<(Vec<String>, Option<FioRun>), String> {
    if args.get(1).map(String::as_str) != Some("run") {
        return Ok((args, None));
    }
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let files = values_of(&args[2..end], "fio");
    let file = match files.as_slice() {
        [] => return Ok((args, None)),
        [f] => f.clone(),
        _ => return Err("--fio is given more than once: give one job file".into()),
    };
    let text = read(&file).map_err(|e| format!("--fio {file}: {e}"))?;
    let jobs = parse(&text).map_err(|e| format!("{file}: {e}"))?;
    let jobs = chosen(&file, jobs, &values_of(&args[2..end], "section"))?;
    let points = points(&file, &jobs)?;
    for (run, _) in &points {
        for (flag, _) in &run.flags {
            let name = &flag[2..];
            if !run_takes(name) {
                return Err(format!(
                    "{file} needs {flag}, which this iosurvey's run does not take"
                ));
            }
            if !values_of(&args[2..end], name).is_empty() || args[2..end].contains(flag) {
                return Err(format!(
                    "{flag} is given on the command line and by {file}: give it in one place"
                ));
            }
        }
    }
    let lines: Vec<Vec<String>> = points
        .iter()
        .map(|(r, _)| with_flags(&args, end, r))
        .collect();
    let (first, later) = lines.split_first().expect("a job was chosen");
    Ok((
        first.clone(),
        Some(FioRun {
            file,
            text,
            targets: points[0].0.targets.clone(),
            notes: points.iter().flat_map(|(r, _)| r.notes.clone()).collect(),
            sections: points.into_iter().map(|(_, n)| n).collect(),
            later: later.to_vec(),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOBS: &str = "\
[global]
rw=randread
bs=4k
direct=1
ioengine=io_uring
iodepth=16
runtime=5
time_based

[a]
filename=/a

[b]
filename=/b

[w]
stonewall
rw=write
filename=/c
";

    fn line(words: &str) -> Result<(String, Option<FioRun>), String> {
        let args = std::iter::once("iosurvey")
            .chain(words.split(' '))
            .map(String::from)
            .collect();
        let read = |f: &str| match f {
            "jobs.fio" => Ok(JOBS.to_string()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        fio_job_file(args, &read).map(|(a, r)| (a[1..].join(" "), r))
    }

    #[test]
    fn jobs_with_one_workload_on_several_files_are_one_run_over_them() {
        let (l, r) = line("run --fio jobs.fio --section a --section=b --json o.json").unwrap();
        assert_eq!(
            l,
            "run --fio jobs.fio --section a --section=b --json o.json --rw randread --bs 4096 --qd 16 --engine uring --time 5s -- /a /b"
        );
        let r = r.unwrap();
        assert_eq!(r.sections, vec![vec!["a", "b"]]);
        assert!(r.later.is_empty());
        assert_eq!(r.text, JOBS);
        assert_eq!(r.file, "jobs.fio");
    }

    #[test]
    fn a_job_that_waits_for_another_on_other_files_is_refused_with_how_to_run_it() {
        let e = line("run --fio jobs.fio").unwrap_err();
        assert_eq!(
            e,
            "jobs.fio: [w] waits for [a] (stonewall) with other files, which the points of one iosurvey run share: run them one at a time with --section"
        );
        let (l, _) = line("run --fio jobs.fio --section w").unwrap();
        assert!(l.contains("--rw write"), "{l}");
    }

    #[test]
    fn each_later_point_is_a_line_of_its_own() {
        let args: Vec<String> = "iosurvey run --fio s.fio --json o.json"
            .split(' ')
            .map(String::from)
            .collect();
        let read = |_: &str| {
            Ok("[w]\nfilename=/a\nsize=1m\nrw=write\n[r]\nfilename=/a\nsize=1m\nrw=read\nstonewall\n".to_string())
        };
        let (first, r) = fio_job_file(args, &read).unwrap();
        let r = r.unwrap();
        assert!(first.join(" ").contains("--rw write"));
        assert_eq!(r.later.len(), 1);
        assert_eq!(
            r.later[0].join(" "),
            "iosurvey run --fio s.fio --json o.json --rw read --bs 4096 --qd 1 --engine sync --buffered --size 1048576 --bytes 1048576 -- /a"
        );
        assert_eq!(
            r.sections,
            vec![vec!["w".to_string()], vec!["r".to_string()]]
        );
    }

    #[test]
    fn the_line_and_the_job_file_may_not_both_give_a_flag() {
        let e = line("run --fio jobs.fio --section a --qd 4").unwrap_err();
        assert_eq!(
            e,
            "--qd is given on the command line and by jobs.fio: give it in one place"
        );
        assert!(line("run --fio jobs.fio --section a --buffered --bs=1m").is_err());
    }

    #[test]
    fn a_flag_this_builds_run_lacks_is_known_before_clap_sees_it() {
        assert!(run_takes("qd"));
        assert!(run_takes("buffered"));
        assert!(!run_takes("no-such-flag"));
    }

    #[test]
    fn a_missing_file_or_section_is_said_in_one_line() {
        assert!(line("run --fio none.fio")
            .unwrap_err()
            .starts_with("--fio none.fio: "));
        assert_eq!(
            line("run --fio jobs.fio --section z").unwrap_err(),
            "--section z: jobs.fio has no job [z] (its jobs: [a] [b] [w])"
        );
        assert!(line("run --fio a --fio b")
            .unwrap_err()
            .contains("more than once"));
        assert_eq!(line("run f --qd 4").unwrap(), ("run f --qd 4".into(), None));
    }
}
