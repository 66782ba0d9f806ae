//! One job of a fio job file as `iosurvey run`'s flags, by fio's own
//! rules: its defaults (4 KiB blocks, psync, buffered I/O), its units
//! (`kb_base`), and its bounds (one pass, or `runtime` with `time_based`).
//! An option iosurvey cannot do as fio does is refused by name.

use super::fio_file::Section;
use super::fio_option::{self, Engine};
use super::fio_units::{self, KbBase};
use std::path::Path;

/// Options that change nothing iosurvey measures: names, reporting,
/// threads rather than processes, and fio's own bookkeeping.
const IGNORED: [&str; 8] = [
    "name",
    "description",
    "group_reporting",
    "new_group",
    "thread",
    "randrepeat",
    "norandommap",
    "invalidate",
];

/// Options read below.
const READ: [&str; 33] = [
    "cpus_allowed",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "buffer_compress_percentage",
    "kb_base",
    "filename",
    "directory",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bssplit",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "buffered",
    "size",
    "offset",
    "runtime",
    "time_based",
    "ramp_time",
    "randseed",
    "rate",
    "rate_iops",
    "random_distribution",
    "verify",
    "verify_backlog",
    "stonewall",
    "wait_for_previous",
];

/// A job as iosurvey's flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFlags {
    /// The flags and their values, in a fixed order (so two jobs with the
    /// same workload have the same).
    pub flags: Vec<(String, Option<String>)>,
    /// Its files, from `filename` (in `directory`).
    pub targets: Vec<String>,
    /// It waits for the jobs before it (`stonewall`).
    pub stonewall: bool,
    /// What was run otherwise than written (`libaio` as io_uring).
    pub notes: Vec<String>,
}

/// `[name] key=value: why` (or `[name] key: why` for a bare option).
fn refusal(s: &Section, key: &str, why: &str) -> String {
    match s.get(&[key]) {
        Some(Some(v)) => format!("[{}] {key}={v}: {why}", s.name),
        _ => format!("[{}] {key}: {why}", s.name),
    }
}

/// The flags of one job section.
pub fn job_flags(s: &Section) -> Result<JobFlags, String> {
    for k in s.keys() {
        if !IGNORED.contains(&k) && !READ.contains(&k) {
            return Err(format!(
                "[{}] {k}: an option iosurvey has no equivalent for",
                s.name
            ));
        }
    }
    // The value of `key`, read by `read`, refused by name if it cannot be.
    let value = |key: &str| s.get(&[key]).map(|v| v.unwrap_or("1"));
    let read = |key: &str, f: &dyn Fn(&str) -> Result<String, String>| {
        value(key)
            .map(|v| f(v).map_err(|e| refusal(s, key, &e)))
            .transpose()
    };
    let base = match value("kb_base") {
        Some(v) => KbBase::from_value(v).map_err(|e| refusal(s, "kb_base", &e))?,
        None => KbBase::Compat,
    };
    let bytes = |v: &str| fio_units::size(v, base);
    let size_of = |key: &str| -> Result<Option<u64>, String> {
        value(key)
            .map(|v| {
                fio_option::one_direction(v)
                    .and_then(&bytes)
                    .map_err(|e| refusal(s, key, &e))
            })
            .transpose()
    };
    let count = |key: &str| -> Result<Option<u64>, String> {
        value(key)
            .map(|v| fio_units::count(v).map_err(|e| refusal(s, key, &e)))
            .transpose()
    };
    let flag = |f: &str, v: String| (f.to_string(), Some(v));
    let mut flags = Vec::new();
    let mut notes = Vec::new();

    let rw_key = if s.get(&["rw"]).is_some() {
        "rw"
    } else {
        "readwrite"
    };
    let rw = match value(rw_key) {
        Some(v) => fio_option::rw(v).map_err(|e| refusal(s, rw_key, &e))?,
        None => "read",
    };
    flags.push(flag("--rw", rw.into()));
    if rw == "randrw" {
        let mix = match (count("rwmixread")?, count("rwmixwrite")?) {
            (Some(r), _) => r,
            (None, Some(w)) => 100u64.saturating_sub(w),
            (None, None) => 50,
        };
        flags.push(flag("--mix", mix.to_string()));
    }
    let bs = match read("bssplit", &|v| {
        fio_option::bssplit(v, &|x| bytes(x).map(|b| b.to_string()))
    })? {
        Some(split) => split,
        None => {
            let key = if s.get(&["bs"]).is_some() {
                "bs"
            } else {
                "blocksize"
            };
            size_of(key)?.unwrap_or(4096).to_string()
        }
    };
    flags.push(flag("--bs", bs));
    let qd = count("iodepth")?.unwrap_or(1);
    flags.push(flag("--qd", qd.to_string()));
    let jobs = count("numjobs")?.unwrap_or(1);
    if jobs == 0 {
        return Err(refusal(s, "numjobs", "give at least 1"));
    }
    if jobs > 1 && !fio_option::is_random(rw) {
        return Err(refusal(
            s,
            "numjobs",
            &format!("fio's {jobs} jobs each {rw} the whole file from its start, which iosurvey's workers do not (they share the area, a region each): give one job per file"),
        ));
    }
    if jobs > 1 {
        flags.push(flag("--workers", jobs.to_string()));
    }
    let engine = match value("ioengine") {
        Some(v) => fio_option::engine(v).map_err(|e| refusal(s, "ioengine", &e))?,
        None => Engine::Sync,
    };
    if engine == Engine::Sync && qd > 1 {
        return Err(format!(
            "[{}] iodepth={qd}: {} has one I/O in flight at a time: give ioengine=io_uring (or libaio) for a queue, or iodepth=1",
            s.name,
            value("ioengine").map_or("psync (fio's default engine)".into(), |e| format!("ioengine={e}"))
        ));
    }
    if engine == Engine::Libaio {
        notes.push(format!(
            "[{}] ioengine=libaio runs as io_uring (iosurvey has no libaio)",
            s.name
        ));
    }
    flags.push(flag("--engine", engine.flag().into()));
    let bool_of = |key: &str| {
        s.get(&[key])
            .map(|v| fio_units::boolean(v).map_err(|e| refusal(s, key, &e)))
            .transpose()
    };
    // fio's default is buffered I/O; iosurvey's O_DIRECT.
    let direct = match (bool_of("direct")?, bool_of("buffered")?) {
        (Some(d), _) => d,
        (None, Some(b)) => !b,
        (None, None) => false,
    };
    if !direct {
        flags.push(("--buffered".into(), None));
    }
    let size = size_of("size")?;
    let offset = size_of("offset")?.filter(|&o| o > 0);
    if let Some(size) = size {
        let end = size
            .checked_add(offset.unwrap_or(0))
            .ok_or_else(|| refusal(s, "size", "with offset, past the largest size there is"))?;
        flags.push(flag("--size", end.to_string()));
    }
    if let Some(o) = offset {
        flags.push(flag("--offset", o.to_string()));
    }
    let runtime = read("runtime", &|v| {
        fio_units::time(v).map(fio_units::duration_flag)
    })?;
    let time_based = bool_of("time_based")?.unwrap_or(false);
    match (time_based, runtime) {
        (true, Some(t)) => flags.push(flag("--time", t)),
        (true, None) => {
            return Err(refusal(
                s,
                "time_based",
                "without runtime fio runs until stopped; give runtime",
            ))
        }
        (false, runtime) => {
            // fio: one pass of `size` per job (or `runtime`, the first to
            // end); iosurvey's bytes are the target's, over its workers.
            if let Some(t) = &runtime {
                flags.push(flag("--time", t.clone()));
            }
            match size {
                Some(size) => {
                    let all = size.checked_mul(jobs).ok_or_else(|| {
                        refusal(s, "numjobs", "times size is past the largest size there is")
                    })?;
                    flags.push(flag("--bytes", all.to_string()))
                }
                None if runtime.is_some() || jobs > 1 => {
                    let key = if runtime.is_some() {
                        "runtime"
                    } else {
                        "numjobs"
                    };
                    return Err(refusal(
                        s,
                        key,
                        "each of fio's jobs makes one pass over the whole file: give size= (or time_based with runtime)",
                    ));
                }
                None => {}
            }
        }
    }
    if let Some(r) = read("ramp_time", &|v| {
        fio_units::time(v).map(fio_units::duration_flag)
    })? {
        flags.push(flag("--ramp", r));
    }
    if let Some(seed) = count("randseed")? {
        flags.push(flag("--seed", seed.to_string()));
    }
    // fio's rates are each job's.
    if let Some(rate) = size_of("rate")? {
        flags.push(flag("--rate", format!("{rate}/worker")));
    }
    if let Some(iops) = read("rate_iops", &|v| {
        fio_option::one_direction(v)
            .and_then(fio_units::count)
            .map(|n| n.to_string())
    })? {
        flags.push(flag("--rate-iops", format!("{iops}/worker")));
    }
    if let Some(dist) = read("random_distribution", &fio_option::distribution)? {
        flags.push(flag("--dist", dist));
    }
    let verify = match value("verify") {
        Some(v) => fio_option::verify(v).map_err(|e| refusal(s, "verify", &e))?,
        None => false,
    };
    if verify {
        flags.push(("--verify".into(), None));
        if let Some(n) = count("verify_backlog")? {
            flags.push(flag("--verify-backlog", n.to_string()));
        }
    } else if s.get(&["verify_backlog"]).is_some() {
        return Err(refusal(s, "verify_backlog", "without verify"));
    }
    if let Some(cpus) = value("cpus_allowed") {
        flags.push(flag("--cpus", cpus.to_string()));
    }
    if bool_of("sqthread_poll")?.unwrap_or(false) {
        flags.push(("--sqpoll".into(), None));
    }
    if let Some(cpu) = count("sqthread_poll_cpu")? {
        flags.push(flag("--sqpoll-cpu", cpu.to_string()));
    }
    if bool_of("hipri")?.unwrap_or(false) {
        flags.push(("--hipri".into(), None));
    }
    if let Some(pct) = count("buffer_compress_percentage")? {
        flags.push(flag("--compressible", pct.to_string()));
    }
    let Some(files) = value("filename") else {
        return Err(format!(
            "[{}]: no filename: iosurvey runs on the files and devices it is given (give filename=)",
            s.name
        ));
    };
    let dir = value("directory");
    // fio expands `$VAR` (and `${VAR}`) and reads `-` as stdin; a path
    // taken as written would name a file `$ZDEV` or `-` instead.
    for (key, v) in [("filename", Some(files)), ("directory", dir)] {
        let Some(v) = v else { continue };
        if v.contains('$') {
            return Err(refusal(
                s,
                key,
                "an environment variable, which fio expands and iosurvey does not: write the path out",
            ));
        }
        if key == "filename" && super::fio_names::targets(v).iter().any(|f| f == "-") {
            return Err(refusal(
                s,
                key,
                "'-' is fio's stdin or stdout, not a file iosurvey can run on",
            ));
        }
    }
    let targets = super::fio_names::targets(files)
        .into_iter()
        .map(|f| match dir {
            Some(d) if !f.starts_with('/') => Path::new(d).join(f).display().to_string(),
            _ => f,
        })
        .collect();
    let stonewall =
        bool_of("stonewall")?.unwrap_or(false) || bool_of("wait_for_previous")?.unwrap_or(false);
    Ok(JobFlags {
        flags,
        targets,
        stonewall,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::spellings::fio_file::parse;

    #[test]
    fn a_variable_or_dash_in_a_path_is_refused_not_taken_as_a_name() {
        for (text, said) in [
            ("[j]\nfilename=$ZDEV\nrw=read\n", "environment variable"),
            ("[j]\nfilename=${ZDEV}\nrw=read\n", "environment variable"),
            (
                "[j]\nfilename=a\ndirectory=$HOME\nrw=read\n",
                "environment variable",
            ),
            ("[j]\nfilename=-\nrw=read\n", "stdin or stdout"),
        ] {
            let e = flags(text).unwrap_err();
            assert!(e.contains(said), "{text}: {e}");
        }
    }

    fn flags(text: &str) -> Result<String, String> {
        let jobs = parse(text).unwrap();
        job_flags(&jobs[0]).map(|j| {
            j.flags
                .iter()
                .map(|(f, v)| match v {
                    Some(v) => format!("{f} {v}"),
                    None => f.clone(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    #[test]
    fn fios_defaults_are_written_out() {
        assert_eq!(
            flags("[j]\nfilename=/f\n").unwrap(),
            "--rw read --bs 4096 --qd 1 --engine sync --buffered"
        );
    }

    #[test]
    fn a_timed_random_job_in_fios_units() {
        let f = flags(
            "[global]\nioengine=io_uring\ndirect=1\nkb_base=1024\n[j]\nfilename=/f\nrw=randrw\nrwmixwrite=30\nbs=4KB\niodepth=32\nnumjobs=2\nruntime=1m\ntime_based\nramp_time=500ms\nrandseed=7\nsize=64m\noffset=1m\n",
        )
        .unwrap();
        assert_eq!(
            f,
            "--rw randrw --mix 70 --bs 4096 --qd 32 --workers 2 --engine uring --size 68157440 --offset 1048576 --time 60s --ramp 500ms --seed 7"
        );
    }

    #[test]
    fn without_time_based_a_job_is_one_pass_of_size_per_job() {
        let f = flags("[j]\nfilename=/f\nsize=1m\nnumjobs=4\nrw=randread\nruntime=10\n").unwrap();
        assert!(f.ends_with("--time 10s --bytes 4194304"), "{f}");
        let e = flags("[j]\nfilename=/f\nruntime=10\n").unwrap_err();
        assert!(e.starts_with("[j] runtime=10: each of fio's jobs"), "{e}");
        assert!(flags("[j]\nfilename=/f\ntime_based=1\n")
            .unwrap_err()
            .contains("give runtime"));
    }

    #[test]
    fn the_options_of_other_branches_take_their_spellings() {
        let f = flags(
            "[j]\nfilename=/f\nrw=randwrite\nbssplit=4k/70:64k/30\nrate=50m\nrate_iops=500\nrandom_distribution=zipf:1.1\nverify=crc32c\nverify_backlog=16\ndirect=1\n",
        )
        .unwrap();
        assert_eq!(
            f,
            "--rw randwrite --bs 4096:70,65536:30 --qd 1 --engine sync --rate 52428800/worker --rate-iops 500/worker --dist zipf:1.1 --verify --verify-backlog 16"
        );
        assert!(flags("[j]\nfilename=/f\nrw=trim\ndirect=1\n")
            .unwrap()
            .starts_with("--rw trim"));
    }

    #[test]
    fn io_uring_cpu_and_data_options_are_iosurveys() {
        let f = flags(
            "[j]\nfilename=/f\nioengine=io_uring\ndirect=1\nsqthread_poll=1\nsqthread_poll_cpu=1\nhipri\ncpus_allowed=0-1\nbuffer_compress_percentage=50\n",
        )
        .unwrap();
        assert!(
            f.ends_with(
                "--engine uring --cpus 0-1 --sqpoll --sqpoll-cpu 1 --hipri --compressible 50"
            ),
            "{f}"
        );
    }

    #[test]
    fn what_iosurvey_cannot_do_is_refused_by_option_and_section() {
        let e = |t: &str| flags(t).unwrap_err();
        assert_eq!(
            e("[seq]\nfilename=/f\nrw=rw\n"),
            "[seq] rw=rw: fio's sequential mix of reads and writes, which iosurvey does not have (its mix is randrw)"
        );
        assert!(e("[j]\nfilename=/f\nloops=3\n")
            .starts_with("[j] loops: an option iosurvey has no equivalent"));
        assert!(e("[j]\nfilename=/f\niodepth=8\n").contains("psync (fio's default engine)"));
        assert!(e("[j]\nfilename=/f\nsize=50%\n").starts_with("[j] size=50%: "));
        assert!(e("[j]\nfilename=/f\nbs=4k,8k\n").starts_with("[j] bs=4k,8k: "));
        assert!(e("[j]\nfilename=/f\nioengine=mmap\n").contains("no mmap engine"));
        assert!(e("[j]\nfilename=/f\nverify=pattern\n").starts_with("[j] verify=pattern"));
        assert!(e("[j]\nrw=read\n").contains("no filename"));
        assert!(e("[j]\nfilename=/f\nsize=1m\nnumjobs=2\n")
            .starts_with("[j] numjobs=2: fio's 2 jobs each read the whole file"));
    }

    #[test]
    fn libaio_runs_as_io_uring_with_a_note_and_directory_joins_filename() {
        let jobs =
            parse("[j]\nioengine=libaio\niodepth=4\ndirectory=/tmp\nfilename=a:/b\n").unwrap();
        let j = job_flags(&jobs[0]).unwrap();
        assert!(j.flags.contains(&("--engine".into(), Some("uring".into()))));
        assert_eq!(
            j.notes,
            vec!["[j] ioengine=libaio runs as io_uring (iosurvey has no libaio)"]
        );
        assert_eq!(j.targets, vec!["/tmp/a", "/b"]);
        assert!(!j.stonewall);
    }
}
