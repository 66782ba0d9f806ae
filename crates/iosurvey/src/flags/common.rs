//! The flag groups every mode shares (targets and safety, engine, output)
//! and the parsers of sizes, durations and CPU lists: a leaf that imports
//! nothing else of the crate, so that the modes' flags and the command
//! line that gathers them do not import each other.

use clap::{Args, ValueEnum};
use iosurvey_engine::data::DataFill;
use iosurvey_engine::{EngineKind, SqPoll};
use iosurvey_model::document::StreamDetail;
use iosurvey_session::{OutputFormat, OutputOptions, TargetOptions};
use iosurvey_workload::units::{parse_duration, parse_size};
use iosurvey_workload::EngineFlags as WorkloadEngineFlags;
use std::path::PathBuf;
use std::time::Duration;

pub fn size(s: &str) -> Result<u64, String> {
    positive(s)?;
    parse_size(s).map_err(|e| e.to_string())
}

pub fn duration(s: &str) -> Result<Duration, String> {
    positive(s)?;
    parse_duration(s).map_err(|e| e.to_string())
}

/// Refuses a negative value by what it is, not as a malformed one.
pub fn positive(s: &str) -> Result<(), String> {
    if negative(s) {
        return Err("cannot be negative".into());
    }
    Ok(())
}

/// `s` is a negative number (`-4k`, `-1`, `-.5s`).
pub fn negative(s: &str) -> bool {
    let mut c = s.trim_start().chars();
    c.next() == Some('-') && c.next().is_some_and(|d| d.is_ascii_digit() || d == '.')
}

/// Joins a long flag and a negative value after it (`--bs -4k` becomes
/// `--bs=-4k`), so that the value is refused as negative instead of being
/// taken for a flag of its own (`-4`).
pub fn join_negative_values(args: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(args.len());
    let mut options = true;
    for a in args {
        // After a bare `--`, everything is an operand.
        let joins = options
            && out.last().is_some_and(|prev| {
                prev.starts_with("--") && prev.len() > 2 && !prev.contains('=')
            })
            && negative(&a);
        options &= a != "--";
        match out.last_mut() {
            Some(prev) if joins => {
                prev.push('=');
                prev.push_str(&a);
            }
            _ => out.push(a),
        }
    }
    out
}

/// CPUs in the order given, as `--cpus 0-3,6` lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

/// Parses a CPU list: numbers and ranges `a-b` separated by commas, each
/// CPU at most once.
pub fn cpu_list(s: &str) -> Result<CpuList, String> {
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let num = |x: &str| {
            x.trim().parse::<u32>().map_err(|_| {
                format!("'{x}' in '{s}' is not a CPU number: give a list such as 0-3,6")
            })
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("the range {part} runs backwards: write {hi}-{lo}"));
        }
        if hi >= 1 << 16 {
            return Err(format!("CPU {hi} is beyond any machine's CPUs"));
        }
        for c in lo..=hi {
            if cpus.contains(&c) {
                return Err(format!("CPU {c} is listed twice in '{s}'"));
            }
            cpus.push(c);
        }
    }
    Ok(CpuList(cpus))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// io_uring: registered files, fixed buffers, batched submit and reap.
    Uring,
    /// pread/pwrite, one I/O at a time per worker.
    Sync,
}

/// Engine flags every mode takes, in one group so that a new engine flag
/// is added in one place.
#[derive(Args, Debug, Clone)]
pub struct EngineFlags {
    /// I/O engine [default: uring].
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// io_uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL), like fio's --sqthread_poll. Recorded in the report.
    #[arg(long)]
    pub sqpoll: bool,
    /// With --sqpoll: pin the kernel's polling thread to CPU N (fio's --sqthread_poll_cpu).
    #[arg(long, value_name = "N", requires = "sqpoll")]
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: poll for completions (IORING_SETUP_IOPOLL), like fio's --hipri. Needs a block device with poll queues (NVMe: the nvme module's poll_queues); refused otherwise.
    #[arg(long)]
    pub hipri: bool,
    /// Pin the worker threads to these CPUs, round-robin, e.g. 0-3,6 (fio's --cpus_allowed). Recorded in the report.
    #[arg(long, value_name = "LIST", value_parser = cpu_list)]
    pub cpus: Option<CpuList>,
}

impl EngineFlags {
    /// The engine asked for, if any.
    pub fn kind(&self) -> Option<EngineKind> {
        self.engine.map(Into::into)
    }
}

impl TargetFlags {
    /// The engine asked for, or io_uring.
    pub fn engine_or_uring(&self) -> EngineKind {
        self.engine.kind().unwrap_or(EngineKind::Uring)
    }
}

impl From<EngineArg> for EngineKind {
    fn from(e: EngineArg) -> EngineKind {
        match e {
            EngineArg::Uring => EngineKind::Uring,
            EngineArg::Sync => EngineKind::Sync,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DetailArg {
    Full,
    Summary,
}

impl From<DetailArg> for StreamDetail {
    fn from(d: DetailArg) -> StreamDetail {
        match d {
            DetailArg::Full => StreamDetail::Full,
            DetailArg::Summary => StreamDetail::Summary,
        }
    }
}

/// Output flags every mode takes. Every output path is checked before the
/// run: a directory, a block device, a missing directory, an unwritable
/// place, a target of the run or another output's path is refused (exit 2).
/// A regular file (or one a symlink names) is replaced whole; a character
/// device or a FIFO is written in place once, at the end; `-` is stdout.
#[derive(Args, Debug, Clone)]
pub struct OutputFlags {
    /// Write the full JSON report to FILE (a file is rewritten after every point; - is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a CSV table to FILE (a file is rewritten after every point; - is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write a self-contained HTML report with plots to FILE (rewritten as the run goes, at most every 2 s, and at its end; - is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Run the whole plan N times, one repeat after another (so the points alternate), and keep every repeat in the JSON and HTML reports, for `iosurvey compare`; the text shows each repeat, the CSV and the mode's own files the first.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub repeat: u32,
    /// Print the plan (its points and estimated duration) and do no I/O.
    #[arg(long)]
    pub dry_run: bool,
    /// What goes to stdout: the text summary or the JSON report [default: text].
    #[arg(long, value_enum)]
    pub output: Option<OutputArg>,
    /// Show rates in MiB/s (2^20) instead of MB/s (10^6).
    #[arg(long)]
    pub mib: bool,
    /// Print no messages and no progress bar on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Write the interval series to FILE as JSON Lines while the job runs (- is stdout, instead of the text): per interval, one line per target and direction with the point's label, ops, bytes, their rates, and mean, p99 and max latency. Each point ends with lines marked "partial": true, so the lines add up to the report's totals. A failed write stops the stream, is reported, and the run exits 1.
    #[arg(long, value_name = "FILE")]
    pub live: Option<PathBuf>,
    /// What the reports keep of each stream: full (its latency histograms and interval series too) or summary (its counts, rates, errors and latency percentiles; the histograms, series and traced access times only in the point's totals; refused by parallel, matrix and profile, which read them) [default: summary in an MPI job whose largest point has more than 1024 streams, else full].
    #[arg(long, value_enum, value_name = "DETAIL")]
    pub stream_detail: Option<DetailArg>,
    /// Every stream of every point whole (its latency histograms and interval series) to FILE as JSON Lines, one line per stream with its point, repeat and rank, written as each point ends (- for stdout); with it, streams travel whole to MPI rank 0, which writes each rank's as it arrives, whatever the report keeps.
    #[arg(long, value_name = "FILE")]
    pub stream_file: Option<PathBuf>,
    /// Record the run in the history database FILE (SQLite, made when missing), or in PostgreSQL with a URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME&sslmode=MODE]; the password is never shown or kept; PGPASSWORD is read): the run, its hosts, targets and devices, every point and figure, the histograms and the whole JSON report. Checked before any I/O; written at the end, after the report files. See `iosurvey db`.
    #[arg(long, value_name = "FILE|URL")]
    pub db: Option<PathBuf>,
    /// Name the run (a firmware, a setting tried): kept in the JSON report and the history database, where `db history`, `db compare` and `db regress` select by it; diskperf echoes it in its header (its -n).
    #[arg(long, value_name = "TEXT", value_parser = label)]
    pub label: Option<String>,
    /// Write live metrics to FILE for Prometheus (node_exporter's textfile collector reads FILE.prom in its directory), replaced whole at every interval and at each point's end: per target and direction, I/Os, bytes and errors as counters and latency as a histogram, labelled with the host, target, model, firmware, plan hash and point. Not under MPI.
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,
    /// Push the same metrics to a Prometheus Pushgateway at URL (http://HOST:PORT) at every interval and at the end, grouped by job "iosurvey" and the host. Checked before any I/O. A failed push is said once; the run goes on and exits 1. Not under MPI.
    #[arg(long, value_name = "URL")]
    pub metrics_push: Option<String>,
}

/// A run's label: one line of printable text, at most 200 characters.
pub fn label(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("is empty: give the run a name".into());
    }
    if s.chars().any(char::is_control) {
        return Err("has a control character: give one line of text".into());
    }
    if s.chars().count() > 200 {
        return Err("is longer than 200 characters".into());
    }
    Ok(s.to_string())
}

/// Target and safety flags every mode takes.
#[derive(Args, Debug, Clone)]
pub struct TargetFlags {
    /// Allow writes to block devices and to existing files iosurvey did not create.
    #[arg(long)]
    pub allow_destroy: bool,
    /// With --allow-destroy: write a device even if it carries a filesystem, partition table or other signature (never a mounted or held one).
    #[arg(long)]
    pub force: bool,
    /// Refuse every write workload, whatever else is given.
    #[arg(long)]
    pub readonly: bool,
    /// Go through the page cache instead of O_DIRECT (the cache is dropped before reads).
    #[arg(long)]
    pub buffered: bool,
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Keep test files iosurvey created instead of removing them at the end.
    #[arg(long)]
    pub keep: bool,
    /// Allow another iosurvey run that also gives --shared to use the same targets at the same time (each then measures the other's load); every other use, and a second writer of a device, is still refused. Recorded in the report.
    #[arg(long)]
    pub shared: bool,
    /// Make the written data compressible: PCT percent of each 512-byte sector is zeros, as fio's --buffer_compress_percentage (0: incompressible, the default). Every sector written stays unique either way: its first 16 bytes are always generated, so from 97 on the data compresses by 96.9%. Recorded in the report.
    #[arg(long, value_name = "PCT", allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compressible: Option<u8>,
    /// The memory this run may use (e.g. 2g), instead of its memory cgroup's limit (memory.max, or v1 memory.limit_in_bytes) or the memory available; a plan that needs more (I/O buffers, rings, series, the report) is refused before any I/O.
    #[arg(long, value_name = "SIZE", value_parser = size)]
    pub memory_limit: Option<u64>,
}

impl TargetFlags {
    /// The options the session reads, as plain values.
    pub fn options(&self) -> TargetOptions {
        TargetOptions {
            allow_destroy: self.allow_destroy,
            force: self.force,
            readonly: self.readonly,
            buffered: self.buffered,
            keep: self.keep,
            shared: self.shared,
            memory_limit: self.memory_limit,
            sqpoll: self.engine.sqpoll,
            sqpoll_cpu: self.engine.sqpoll_cpu,
            hipri: self.engine.hipri,
            cpus: self
                .engine
                .cpus
                .as_ref()
                .map_or_else(Vec::new, |c| c.0.clone()),
        }
    }
}

impl From<OutputArg> for OutputFormat {
    fn from(o: OutputArg) -> OutputFormat {
        match o {
            OutputArg::Text => OutputFormat::Text,
            OutputArg::Json => OutputFormat::Json,
        }
    }
}

impl OutputFlags {
    /// The options the session reads, as plain values.
    pub fn options(&self) -> OutputOptions {
        OutputOptions {
            json: self.json.clone(),
            csv: self.csv.clone(),
            html: self.html.clone(),
            repeat: self.repeat,
            dry_run: self.dry_run,
            output: self.output.map(Into::into),
            mib: self.mib,
            quiet: self.quiet,
            live: self.live.clone(),
            stream_detail: self.stream_detail.map(StreamDetail::from),
            stream_file: self.stream_file.clone(),
            db: self.db.clone(),
            label: self.label.clone(),
            metrics_file: self.metrics_file.clone(),
            metrics_push: self.metrics_push.clone(),
            inputs: Vec::new(),
        }
    }
}

/// How long the kernel's polling thread spins with nothing to submit
/// before it sleeps (io_uring's `sq_thread_idle`).
pub const SQPOLL_IDLE_MS: u32 = 1000;

/// The engine flags as each mode's spec takes them (its `expand` writes
/// them into every job).
pub fn engine_flags(flags: &TargetFlags) -> WorkloadEngineFlags {
    WorkloadEngineFlags {
        sqpoll: flags.engine.sqpoll.then_some(SqPoll {
            cpu: flags.engine.sqpoll_cpu,
            idle_ms: SQPOLL_IDLE_MS,
        }),
        iopoll: flags.engine.hipri,
        cpus: flags
            .engine
            .cpus
            .as_ref()
            .map_or_else(Vec::new, |c| c.0.clone()),
        fill: DataFill {
            compressible_pct: flags.compressible.unwrap_or(0),
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimulateArg {
    Concat,
    Raid0,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_list_keeps_the_order_given_and_expands_ranges() {
        assert_eq!(cpu_list("0-3,6").unwrap().0, vec![0, 1, 2, 3, 6]);
        assert_eq!(cpu_list("5,1").unwrap().0, vec![5, 1]);
        assert_eq!(cpu_list("2-2").unwrap().0, vec![2]);
    }

    #[test]
    fn a_bad_cpu_list_is_refused_with_what_is_wrong() {
        assert!(cpu_list("3-1").unwrap_err().contains("backwards"));
        assert!(cpu_list("1,1").unwrap_err().contains("twice"));
        assert!(cpu_list("0-2,1").unwrap_err().contains("twice"));
        assert!(cpu_list("a").unwrap_err().contains("not a CPU number"));
        assert!(cpu_list("").is_err());
        assert!(cpu_list("0,").is_err());
    }
}
