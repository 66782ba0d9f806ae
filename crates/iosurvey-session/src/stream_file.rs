//! `--stream-file FILE`: every stream of every point whole (its latency
//! histograms and interval series) as JSON Lines, one line per stream,
//! whatever the report keeps of it (`--stream-detail`). It is the full
//! per-rank data of a large MPI job, whose report summarises its streams:
//! rank 0 writes each rank's streams as its part arrives and drops them,
//! so it never holds more than one rank's. A line is the stream's report
//! (as a point's `streams` entry of a full report) with its `point`,
//! `repeat`, `rank` and `stream` (its index in the point) first. A stream
//! that ranks share (matrix's array over several hosts' targets) has a
//! line from each rank, each rank's part of it; the report merges them.

use iosurvey_model::document::StreamReport;
use iosurvey_model::StreamResult;
use iosurvey_target::output::path::OutPath;
use iosurvey_workload::Point;
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::AtomicBool;

/// The open `--stream-file`, on rank 0.
pub struct StreamFile {
    /// `None`: stdout.
    file: Option<std::fs::File>,
    shown: String,
    /// The point and repeat the next lines are of.
    at: (usize, u32),
    /// The first failed write, said once; nothing is written after it.
    pub failed: Option<String>,
}

/// One line.
#[derive(Serialize)]
struct Line<'a> {
    point: usize,
    repeat: u32,
    rank: usize,
    stream: usize,
    #[serde(flatten)]
    report: &'a StreamReport,
}

impl StreamFile {
    /// Opens the judged `out` as `--live` is opened (see
    /// [`crate::output::open_appended`]).
    pub fn open(out: &OutPath, stop: &AtomicBool) -> anyhow::Result<StreamFile> {
        Ok(StreamFile {
            file: crate::output::open_appended(out, stop)?,
            shown: out.shown(),
            at: (0, 0),
            failed: None,
        })
    }

    /// The lines that follow are of `point`'s repeat `repeat`.
    pub fn at(&mut self, point: usize, repeat: u32) {
        self.at = (point, repeat);
    }

    /// Writes rank `rank`'s `streams` of `point` (each numbered as the
    /// job's), whole; a failure is kept in [`StreamFile::failed`].
    pub fn write<'a>(
        &mut self,
        point: &Point,
        rank: usize,
        streams: impl IntoIterator<Item = (usize, &'a StreamResult)>,
    ) {
        if self.failed.is_some() {
            return;
        }
        let mut buf = Vec::new();
        for (g, s) in streams {
            let Some(class) = point.job.streams.get(g) else {
                continue;
            };
            let report = StreamReport::whole(class, s);
            let line = Line {
                point: self.at.0,
                repeat: self.at.1,
                rank,
                stream: g,
                report: &report,
            };
            serde_json::to_writer(&mut buf, &line).expect("a stream's report serialises");
            buf.push(b'\n');
        }
        let wrote = match &mut self.file {
            Some(f) => f.write_all(&buf),
            None => crate::output::write_stdout_bytes(&buf),
        };
        if let Err(e) = wrote {
            self.failed = Some(format!("{}: writing failed: {e}", self.shown));
        }
    }
}
