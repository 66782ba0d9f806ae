//! The `video` presenters (frametest, AJA System Test, Blackmagic Disk Speed
//! Test), rebuilt from a report alone: frametest's summary, averaged
//! details and histogram of frame times (from the frames summary, or the
//! records of an older report), a real-time verdict over every preset and
//! frame rate, a per-frame CSV of the records kept and the list of presets.

use iosurvey_model::result::FRAME_HISTOGRAM_EDGES_NS;
pub use iosurvey_model::result::{bucket_of, frame_ns};

pub(crate) const SEC: u64 = 1_000_000_000;
/// The margin a format needs over its data rate to be called `ok`.
pub const MARGIN: f64 = 1.2;
/// Ratios this close to a threshold count as reaching it, so that a rate of
/// exactly 1.2 times the need is not undone by rounding.
const EPSILON: f64 = 1e-9;
/// Upper edges of the histogram's buckets; the last bucket is 1 s or more.
pub const HISTOGRAM_EDGES_NS: [u64; 13] = FRAME_HISTOGRAM_EDGES_NS;
/// The histogram's bucket names, one per bucket.
pub const HISTOGRAM_LABELS: [&str; 14] = [
    "<0.1 ms", "<0.2 ms", "<0.5 ms", "<1 ms", "<2 ms", "<5 ms", "<10 ms", "<20 ms", "<50 ms",
    "<100 ms", "<200 ms", "<500 ms", "<1 s", ">=1 s",
];
/// Width of the histogram's bars.
const BAR: usize = 50;
/// Width of the summary's labels (`Frames transferred: `).
const LABEL: usize = 20;
/// Longest line any presenter here prints.
const WIDTH: usize = 100;

mod csv;
mod summary;
mod text;
mod verdict;
pub use csv::*;
pub use summary::*;
pub use text::*;
pub use verdict::*;

#[cfg(test)]
mod tests {
    use super::text::wrapped;
    use super::*;

    #[test]
    fn ratios_keep_three_or_four_figures() {
        assert_eq!(ratio_text(2.414), "2.41x");
        assert_eq!(ratio_text(12.34), "12.3x");
        assert_eq!(ratio_text(456.4), "456x");
        assert_eq!(ratio_text(20000.0), ">9999x");
    }

    #[test]
    fn milliseconds_keep_four_figures() {
        assert_eq!(format_ms(21_000.0), "0.021 ms");
        assert_eq!(format_ms(10_200_000.0), "10.20 ms");
        assert_eq!(format_ms(123_450_000.0), "123.5 ms");
        assert_eq!(format_ms(1_500_000_000.0), "1500 ms");
    }

    #[test]
    fn frame_rates_go_by_their_usual_names() {
        let fps = |num, den| iosurvey_model::Fps { num, den };
        assert_eq!(fps_name(fps(24000, 1001)), "23.976");
        assert_eq!(fps_name(fps(48000, 2002)), "23.976");
        assert_eq!(fps_name(fps(24, 1)), "24");
        assert_eq!(fps_name(fps(25, 2)), "12.5");
        assert_eq!(fps_name(fps(100, 1)), "100");
    }

    #[test]
    fn buckets_take_their_upper_edge_out() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(99_999), 0);
        assert_eq!(bucket_of(100_000), 1);
        assert_eq!(bucket_of(999_999_999), 12);
        assert_eq!(bucket_of(1_000_000_000), 13);
    }

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let mut out = String::new();
        wrapped(&mut out, "warning: ", &"word ".repeat(60));
        assert!(out.lines().count() > 2);
        assert!(out.lines().all(|l| l.len() <= WIDTH), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("         word")));
    }
}
