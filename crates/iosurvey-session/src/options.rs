//! What a run takes from the command line besides its plan: the target and
//! safety options and the output options, as plain values. The binary's
//! flag groups convert into these, so that the session loop and its callees
//! know no command-line parser.

use iosurvey_model::document::StreamDetail;
use iosurvey_model::PointParams;
use iosurvey_workload::Plan;
use std::path::PathBuf;

/// The target, safety and engine options every mode takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetOptions {
    /// `--allow-destroy`: writes to block devices and to files iosurvey did
    /// not create are allowed.
    pub allow_destroy: bool,
    /// `--force`: with `allow_destroy`, a device carrying a signature may be
    /// written (never a mounted or held one).
    pub force: bool,
    /// `--readonly`: every write workload is refused.
    pub readonly: bool,
    /// `--buffered`: through the page cache instead of O_DIRECT.
    pub buffered: bool,
    /// `--keep`: test files iosurvey created stay.
    pub keep: bool,
    /// `--shared`: another `--shared` run may use the same targets.
    pub shared: bool,
    /// `--memory-limit`: the memory the run may use, in bytes.
    pub memory_limit: Option<u64>,
    /// `--sqpoll`: a kernel thread polls the submission queue.
    pub sqpoll: bool,
    /// `--sqpoll-cpu`: the CPU that thread is pinned to.
    pub sqpoll_cpu: Option<u32>,
    /// `--hipri`: completions are polled.
    pub hipri: bool,
    /// `--cpus`: the CPUs the workers are pinned to, in the order given
    /// (empty: not pinned).
    pub cpus: Vec<u32>,
}

/// What goes to stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// The text summary.
    Text,
    /// The JSON report.
    Json,
}

/// The output options every mode takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    /// `--json`: the full JSON report's path (`-` is stdout).
    pub json: Option<PathBuf>,
    /// `--csv`: the CSV table's path.
    pub csv: Option<PathBuf>,
    /// `--html`: the HTML report's path.
    pub html: Option<PathBuf>,
    /// `--repeat`: how many times the whole plan runs.
    pub repeat: u32,
    /// `--dry-run`: print the plan, do no I/O.
    pub dry_run: bool,
    /// `--output`, when given.
    pub output: Option<OutputFormat>,
    /// `--mib`: rates in MiB/s.
    pub mib: bool,
    /// `--quiet`: no messages and no progress bar on stderr.
    pub quiet: bool,
    /// `--live`: the interval series' path.
    pub live: Option<PathBuf>,
    /// `--stream-detail`, when given.
    pub stream_detail: Option<StreamDetail>,
    /// `--stream-file`: every stream whole, as JSON Lines.
    pub stream_file: Option<PathBuf>,
    /// `--db`: the history database the run is recorded in.
    pub db: Option<PathBuf>,
    /// `--label`: the run's name in the report and the database.
    pub label: Option<String>,
    /// `--metrics-file`: live metrics for Prometheus' textfile collector.
    pub metrics_file: Option<PathBuf>,
    /// `--metrics-push`: the Pushgateway the same metrics go to.
    pub metrics_push: Option<String>,
    /// Files the run reads to know what to do (a fio job file, ORION's
    /// `<testname>.lun`): no output may be one of them.
    pub inputs: Vec<PathBuf>,
}

/// Streams in a distributed job above which the report summarises each
/// by default: rank 0 then decodes and holds a few numbers per stream,
/// not two histograms and two series.
pub const SUMMARY_ABOVE: usize = 1024;

impl OutputOptions {
    /// The same options, with `input` among the files the run reads.
    pub fn reading(mut self, input: Option<PathBuf>) -> Self {
        self.inputs.extend(input);
        self
    }

    /// What goes to stdout: the text summary unless JSON was asked for.
    pub fn output(&self) -> OutputFormat {
        self.output.unwrap_or(OutputFormat::Text)
    }

    /// What the report keeps of each stream of `plan`: as
    /// `--stream-detail` says; else, in a distributed job whose largest
    /// point has more than [`SUMMARY_ABOVE`] streams, a summary; else
    /// everything. One answer for the whole plan. The modes whose output
    /// reads each stream's series, histogram or access times (`parallel`'s
    /// windows, `matrix`'s cells, `profile`'s charts) keep every stream
    /// whole: `--stream-detail summary` is refused there.
    pub fn stream_detail(&self, plan: &Plan, distributed: bool) -> Result<StreamDetail, String> {
        let needs_whole = plan.points.iter().any(|p| {
            matches!(
                p.params,
                PointParams::Parallel { .. }
                    | PointParams::Matrix { .. }
                    | PointParams::Profile { .. }
            )
        });
        let largest = plan
            .points
            .iter()
            .map(|p| p.job.streams.len())
            .max()
            .unwrap_or(0);
        match self.stream_detail {
            Some(StreamDetail::Summary) if needs_whole => Err(format!(
                "--stream-detail summary: {} reads every stream's series and histograms; drop the flag",
                plan.mode
            )),
            Some(d) => Ok(d),
            None if distributed && largest > SUMMARY_ABOVE && !needs_whole => Ok(StreamDetail::Summary),
            None => Ok(StreamDetail::Full),
        }
    }
}

impl Default for OutputOptions {
    /// One repeat, the text summary on stdout, no files.
    fn default() -> Self {
        OutputOptions {
            json: None,
            csv: None,
            html: None,
            repeat: 1,
            dry_run: false,
            output: None,
            mib: false,
            quiet: false,
            live: None,
            stream_detail: None,
            stream_file: None,
            db: None,
            metrics_file: None,
            metrics_push: None,
            label: None,
            inputs: Vec::new(),
        }
    }
}
