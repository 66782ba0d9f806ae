//! A point's totals are written without their histograms: each is the
//! merge of its streams' (exact and associative), so the document carries
//! every histogram once and the totals' are made again on read. Reports
//! older than schema version 4 carry them and are read as they are, and
//! so are the totals of a point whose streams are summarised (schema
//! version 5 on: `settings.stream_detail`), which hold the only ones.

use crate::document::class::{ClassReport, StreamReport, StreamTotals};
use crate::document::point::PointReport;
use iosurvey_stats::{Histogram, HistogramData};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a totals' histogram reads as before it is made again.
pub(crate) fn no_histogram() -> HistogramData {
    HistogramData::empty()
}

/// Whether a histogram is the one [`no_histogram`] reads as, which is
/// left out of the document.
pub(crate) fn is_no_histogram(h: &HistogramData) -> bool {
    *h == HistogramData::empty()
}

/// Writes `t` without its histograms.
pub(crate) fn write_totals<S: Serializer>(t: &StreamTotals, s: S) -> Result<S::Ok, S::Error> {
    if t.whole {
        return t.serialize(s);
    }
    #[derive(Serialize)]
    struct Bare<'a> {
        read: BareClass<'a>,
        write: BareClass<'a>,
        /// Left out when no stream discarded, as [`StreamTotals`] does.
        #[serde(skip_serializing_if = "Option::is_none")]
        trim: Option<BareClass<'a>>,
    }
    Bare {
        read: BareClass::of(&t.read),
        write: BareClass::of(&t.write),
        trim: (!t.trim.is_idle()).then(|| BareClass::of(&t.trim)),
    }
    .serialize(s)
}

/// A class's figures but its histogram, borrowed.
#[derive(Serialize)]
struct BareClass<'a> {
    ops: u64,
    bytes: u64,
    iops: f64,
    bytes_per_sec: f64,
    errors: &'a [crate::document::class::ErrorCount],
    latency: &'a crate::document::class::LatencyReport,
    series: &'a [iosurvey_stats::IntervalSample],
    series_last_ns: u64,
}

impl<'a> BareClass<'a> {
    fn of(c: &'a ClassReport) -> Self {
        BareClass {
            ops: c.ops,
            bytes: c.bytes,
            iops: c.iops,
            bytes_per_sec: c.bytes_per_sec,
            errors: &c.errors,
            latency: &c.latency,
            series: &c.series,
            series_last_ns: c.series_last_ns,
        }
    }
}

/// The merge of `class` (read, write or trim) over every stream.
fn merged(streams: &[StreamReport], class: fn(&StreamReport) -> &ClassReport) -> HistogramData {
    let mut h = Histogram::new();
    for s in streams {
        h.merge(&Histogram::from_data(&class(s).histogram));
    }
    h.to_data()
}

/// Makes the totals' histograms again where the document left them out
/// (a total with I/Os and an empty histogram).
fn fill(p: &mut PointReport) {
    if !p.settings.stream_detail.is_full() {
        // Written whole: the streams hold no histogram.
        p.total.whole = true;
        return;
    }
    let left_out = |c: &ClassReport| c.ops > 0 && c.histogram.counts.is_empty();
    if left_out(&p.total.read) {
        p.total.read.histogram = merged(&p.streams, |s| &s.read);
    }
    if left_out(&p.total.write) {
        p.total.write.histogram = merged(&p.streams, |s| &s.write);
    }
    if left_out(&p.total.trim) {
        p.total.trim.histogram = merged(&p.streams, |s| &s.trim);
    }
}

impl Serialize for PointReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PointReport::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for PointReport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut p = PointReport::deserialize(d)?;
        fill(&mut p);
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use crate::document::class::{ClassReport, StreamTotals};
    use crate::document::PointReport;
    use iosurvey_stats::ClassStats;

    /// A point of two read streams of different latencies, its totals
    /// their merge, as `PointReport::new` makes them.
    fn point() -> PointReport {
        let stats = |lat: u64| {
            let mut c = ClassStats::new();
            for i in 0..500 {
                c.record(0, 4096, lat + i * 37);
            }
            c
        };
        let (a, b) = (stats(1_000), stats(90_000));
        let mut all = a.clone();
        all.merge(&b);
        let mut p: PointReport = serde_json::from_value(serde_json::json!({
            "index": 0, "label": "", "settings": {
                "engine": "sync", "workers": 1, "direct": true, "seed": 0,
                "time_ns": null, "bytes": null, "ramp_ns": 0, "interval_ns": 1000000000,
                "continue_on_error": false, "registered_files": false,
                "fixed_buffers": false, "reap_window_us": null},
            "targets": [], "elapsed_ns": 1000000000, "first_done_ns": 1000000000,
            "interrupted": false, "skipped": null, "cpu_user_ns": 0,
            "cpu_system_ns": 0, "cpu_workers_ns": 0, "failure": null,
            "warnings": [], "streams": [],
            "total": {"read": serde_json::to_value(ClassReport::new(&ClassStats::new(), 1)).unwrap(),
                      "write": serde_json::to_value(ClassReport::new(&ClassStats::new(), 1)).unwrap()}
        }))
        .unwrap();
        let stream = |c: &ClassStats| crate::document::StreamReport {
            label: "s".into(),
            target: 0,
            rw: crate::document::Rw::Read,
            read_pct: 100,
            pattern: crate::Pattern::Random,
            dist: Default::default(),
            bs: 4096,
            outstanding: 1,
            offset: 0,
            span: None,
            regions: 0,
            array: None,
            elapsed_ns: 1_000_000_000,
            read: ClassReport::new(c, 1_000_000_000),
            write: ClassReport::new(&ClassStats::new(), 1_000_000_000),
            samples: Vec::new(),
            bs_split: Vec::new(),
            trim: ClassReport::idle(),
            trim_pct: 0,
        };
        p.streams = vec![stream(&a), stream(&b)];
        p.total = StreamTotals::new(
            ClassReport::new(&all, 1_000_000_000),
            ClassReport::new(&ClassStats::new(), 1_000_000_000),
        );
        p
    }

    #[test]
    fn each_histogram_is_written_once_and_the_totals_read_back_whole() {
        let p = point();
        let json = serde_json::to_string(&p).unwrap();
        // One per stream's reads; none in the totals, and none for the
        // writes, which did nothing (an empty histogram is left out).
        assert_eq!(json.matches("\"histogram\"").count(), 2, "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(v["total"]["read"].get("histogram").is_none());
        let back: PointReport = serde_json::from_str(&json).unwrap();
        assert!(!back.total.read.histogram.counts.is_empty());
        assert_eq!(back, p);
    }

    #[test]
    fn totals_of_an_older_report_are_read_as_written() {
        let mut p = point();
        // A version-3 total that differs from the streams' merge (it never
        // does in a real report) is kept, not made again.
        p.total.read.histogram = p.streams[0].read.histogram.clone();
        let mut v = serde_json::to_value(&p).unwrap();
        v["total"]["read"]["histogram"] = serde_json::to_value(&p.total.read.histogram).unwrap();
        let back: PointReport = serde_json::from_value(v).unwrap();
        assert_eq!(back.total.read.histogram, p.streams[0].read.histogram);
    }
}
