//! Every frame of a video report as CSV.

use super::frame_ns;
use iosurvey_model::document::RunReport;

/// Every frame of every point as CSV, in record order; times in
/// nanoseconds, `errno` empty unless the frame failed.
pub fn render_video_csv(report: &RunReport) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "frame", "thread", "status", "errno", "start_ns", "end_ns", "open_ns", "io_ns", "close_ns",
        "frame_ns", "bytes",
    ]);
    for f in report.points.iter().filter_map(|p| p.frames.as_ref()) {
        for r in &f.records {
            let _ = w.write_record([
                r.frame.to_string(),
                r.thread.to_string(),
                r.status.name().into(),
                r.errno.map_or(String::new(), |e| e.to_string()),
                r.start_ns.to_string(),
                r.end_ns.to_string(),
                r.open_ns.to_string(),
                r.io_ns.to_string(),
                r.close_ns.to_string(),
                frame_ns(r).to_string(),
                r.bytes.to_string(),
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
