//! One stream class of a point and its reads and writes: counts, rates,
//! errors by errno, latency figures, the lossless histogram and the series.

use crate::document::errno::errno_name;
use crate::result::ClassSummary;
use crate::{Dist, Layout, Mix, Pattern};
use iosurvey_stats::{ClassStats, HistogramData, IntervalSample, LatencySummary};
use serde::{Deserialize, Serialize};

/// One stream class: its settings and its reads and writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamReport {
    pub label: String,
    pub target: usize,
    pub rw: Rw,
    pub read_pct: u8,
    pub pattern: Pattern,
    /// How a random stream spread its I/Os over its blocks (`run --dist`);
    /// left out when uniform, as every stream was before it.
    #[serde(default, skip_serializing_if = "Dist::is_uniform")]
    pub dist: Dist,
    pub bs: u64,
    pub outstanding: u32,
    pub offset: u64,
    pub span: Option<u64>,
    pub regions: u32,
    /// The virtual array the stream ran over, if any (`target` is then its
    /// first member). Left out when none (schema version 6 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayReport>,
    /// From the start of the measured phase to the stream's last completion;
    /// its rates are taken over this.
    pub elapsed_ns: u64,
    /// Its reads and its writes; a class that did nothing (a read
    /// stream's writes) is left out (schema version 6 on) and reads as
    /// [`ClassReport::idle`].
    #[serde(
        default = "ClassReport::idle",
        skip_serializing_if = "ClassReport::is_idle"
    )]
    pub read: ClassReport,
    #[serde(
        default = "ClassReport::idle",
        skip_serializing_if = "ClassReport::is_idle"
    )]
    pub write: ClassReport,
    /// Its discards (`run --rw trim`, `--trim PCT`); left out when none.
    #[serde(
        default = "ClassReport::idle",
        skip_serializing_if = "ClassReport::is_idle"
    )]
    pub trim: ClassReport,
    /// Percent of its ops that were discards (`read_pct` is then the
    /// reads' share of the others); left out when none.
    #[serde(default, skip_serializing_if = "crate::document::defaults::is_zero_u8")]
    pub trim_pct: u8,
    /// `[offset, latency ns]` of the first measured I/Os of a traced stream
    /// (profile's access times), in completion order. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<[u64; 2]>,
    /// With a block-size split (`--bs 4k:70,64k:30`): each size, the
    /// share asked for and the measured I/Os of that size; `bs` is then the
    /// largest. Left out when every I/O is `bs` long.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bs_split: Vec<crate::SizeReport>,
}

/// What a stream did: read, write, a mix (of `read_pct` percent reads),
/// or discard alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Mixed,
    Trim,
}

/// `read`, `write` or `mixed`, as reports print it.
impl std::fmt::Display for Rw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Mixed => "mixed",
            Rw::Trim => "trim",
        })
    }
}

impl StreamReport {
    /// The plan's mix this stream ran.
    pub fn mix(&self) -> Mix {
        if self.trim_pct > 0 || self.rw == Rw::Trim {
            return Mix::Trims {
                trim_pct: self.trim_pct.max(1),
                read_pct: self.read_pct,
            };
        }
        match self.rw {
            Rw::Read => Mix::Read,
            Rw::Write => Mix::Write,
            Rw::Mixed | Rw::Trim => Mix::Mixed {
                read_pct: self.read_pct,
            },
        }
    }
}

/// A virtual array of targets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArrayReport {
    #[serde(flatten)]
    pub layout: Layout,
    /// Target indices, in array order.
    pub members: Vec<usize>,
}

/// Reads, writes and discards over all streams.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamTotals {
    pub read: ClassReport,
    pub write: ClassReport,
    /// Left out when no stream discarded.
    #[serde(
        default = "ClassReport::idle",
        skip_serializing_if = "ClassReport::is_idle"
    )]
    pub trim: ClassReport,
    /// The histograms are written with the totals: the streams'
    /// summaries hold none to make them again from (a point of
    /// `stream_detail` summary).
    #[serde(skip)]
    pub whole: bool,
}

impl StreamTotals {
    /// Totals whose histograms are the merge of the streams', with no
    /// discards (set `trim` after for a point that had some).
    pub fn new(read: ClassReport, write: ClassReport) -> Self {
        StreamTotals {
            read,
            write,
            trim: ClassReport::idle(),
            whole: false,
        }
    }

    /// Its classes of I/O by name, in the order every table shows them:
    /// reads, writes, trims.
    pub fn classes(&self) -> [(&'static str, &ClassReport); 3] {
        [
            ("read", &self.read),
            ("write", &self.write),
            ("trim", &self.trim),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorCount {
    pub errno: i32,
    pub name: String,
    pub count: u64,
}

/// Latency figures in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyReport {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub max_ns: u64,
    /// Ascending by percentile.
    pub percentiles: Vec<Percentile>,
}

impl LatencyReport {
    /// The value at percentile `p` (one of those reported), in ns.
    pub fn at(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|x| x.percentile == p)
            .map(|x| x.ns)
    }
}

/// One percentile of a latency distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentile {
    /// 0 to 100, e.g. 99.9.
    pub percentile: f64,
    pub ns: u64,
}

/// One class (reads or writes) of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassReport {
    pub ops: u64,
    pub bytes: u64,
    /// ops / elapsed, derived.
    pub iops: f64,
    /// bytes / elapsed, derived.
    pub bytes_per_sec: f64,
    /// By errno; left out when none (schema version 6 on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCount>,
    pub latency: LatencyReport,
    /// Lossless: merge two runs by adding these counts. Left out of a
    /// point's `total` (schema version 4 on): the merge of its streams'
    /// histograms, made again when the document is read. Left out when
    /// empty, as a summarised stream's is (schema version 6 on).
    #[serde(
        default = "crate::document::totals::no_histogram",
        skip_serializing_if = "crate::document::totals::is_no_histogram"
    )]
    pub histogram: HistogramData,
    /// Non-cumulative, one entry per interval of `settings.interval_ns`.
    /// Left out when empty (schema version 6 on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<IntervalSample>,
    /// Real length of the last entry of `series`: `settings.interval_ns`,
    /// or less when the end of the point's measured phase cut it short.
    /// Left out when 0.
    #[serde(
        default,
        skip_serializing_if = "crate::document::defaults::is_zero_u64"
    )]
    pub series_last_ns: u64,
}

impl ClassReport {
    /// A class that did nothing, as [`ClassReport::new`] reports one.
    pub fn idle() -> Self {
        ClassReport::new(&ClassStats::new(), 0)
    }

    /// Whether it is [`ClassReport::idle`], to the bit.
    pub fn is_idle(&self) -> bool {
        self.ops == 0 && self.bytes == 0 && *self == ClassReport::idle()
    }

    /// Builds a class report, deriving rates over `elapsed_ns`.
    pub fn new(c: &ClassStats, elapsed_ns: u64) -> Self {
        let errors: Vec<(i32, u64)> = c.errors.iter().map(|(&e, &n)| (e, n)).collect();
        let mut r = ClassReport::figures(c.ops, c.bytes, &errors, &c.latency.summary(), elapsed_ns);
        r.histogram = c.latency.to_data();
        r.series = c.series.samples.clone();
        r
    }

    /// A summarised class's report: its figures, no histogram and no
    /// series (they are in the point's totals).
    pub fn from_summary(c: &ClassSummary, elapsed_ns: u64) -> Self {
        let latency = c.latency.summary();
        ClassReport::figures(c.ops, c.bytes, &c.errors, &latency, elapsed_ns)
    }

    /// The figures of a class, rates over `elapsed_ns`; an empty
    /// histogram and series.
    fn figures(
        ops: u64,
        bytes: u64,
        errors: &[(i32, u64)],
        s: &LatencySummary,
        elapsed_ns: u64,
    ) -> Self {
        let secs = elapsed_ns as f64 / 1e9;
        let per_sec = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        ClassReport {
            ops,
            bytes,
            iops: per_sec(ops),
            bytes_per_sec: per_sec(bytes),
            errors: errors
                .iter()
                .map(|&(errno, count)| ErrorCount {
                    errno,
                    name: errno_name(errno),
                    count,
                })
                .collect(),
            latency: LatencyReport {
                min_ns: s.min_ns,
                mean_ns: s.mean_ns,
                stdev_ns: s.stdev_ns,
                max_ns: s.max_ns,
                percentiles: s
                    .percentiles_ns
                    .iter()
                    .map(|&(percentile, ns)| Percentile { percentile, ns })
                    .collect(),
            },
            histogram: HistogramData::empty(),
            series: Vec::new(),
            series_last_ns: 0,
        }
    }

    /// Sets `series_last_ns` for a measured phase of `end_ns` cut into
    /// intervals of `interval_ns`.
    pub fn set_last_interval(&mut self, interval_ns: u64, end_ns: u64) {
        self.series_last_ns = match self.series.len().checked_sub(1) {
            Some(k) => end_ns
                .saturating_sub(k as u64 * interval_ns)
                .min(interval_ns),
            None => 0,
        };
    }

    /// Whether anything was attempted in this class.
    pub fn is_empty(&self) -> bool {
        self.ops == 0 && self.errors.is_empty()
    }
}
