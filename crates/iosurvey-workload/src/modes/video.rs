//! `iosurvey video` (frametest, AJA System Test): frames of a video format
//! written or read whole, one file per frame or all in one stream, as fast
//! as they go or paced at a frame rate with a bounded queue.
//!
//! The plan is one Point whose Job carries a [`FrameJob`]; its one stream
//! class describes a frame's I/Os (piece size and how many are in flight).

mod formats;
mod fps;
mod spec;
pub use formats::*;
pub use fps::*;
pub use spec::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Fps, FrameLayout, FrameOrder, Mix, Pattern};
    use iosurvey_model::Op;

    #[test]
    fn dpx_presets_match_frametest_sizes() {
        assert_eq!(frame_bytes(u64::MAX, 0, 4096), u64::MAX, "no wrap to 0");
        assert_eq!(frame_bytes(u64::MAX - 10, 20, 4096), u64::MAX);
        assert_eq!(find_format("dpx-2k").unwrap().frame_bytes(), 12_812_288);
        assert_eq!(find_format("dpx-4k").unwrap().frame_bytes(), 51_052_544);
        assert_eq!(find_format("DPX-2K").unwrap().name, "dpx-2k");
        assert!(find_format("2k").is_none(), "2k is a size");
    }

    #[test]
    fn video_presets_are_picture_bytes_rounded_to_4k() {
        let hd = find_format("hd").unwrap();
        assert_eq!(hd.name, "hd-422");
        assert_eq!(hd.picture_bytes(), 1920 * 1080 * 2);
        assert_eq!(hd.frame_bytes(), 4_149_248);
        assert_eq!(find_format("hd-4444").unwrap().frame_bytes(), 8_294_400);
        assert_eq!(find_format("pal-422").unwrap().frame_bytes(), 831_488);
        assert_eq!(find_format("uhd-4444").unwrap().frame_bytes(), 33_177_600);
        for f in FORMATS {
            assert_eq!(f.frame_bytes() % FRAME_ALIGN, 0, "{}", f.name);
            assert!(f.frame_bytes() >= f.picture_bytes(), "{}", f.name);
        }
        assert!(find_format("vhs").is_none());
    }

    /// The 10-bit presets, from their packings: v210 is 16 bytes every 6
    /// pixels with rows padded to 128 bytes; 10-bit DPX is 4 bytes a pixel
    /// plus frametest's 64 KiB header.
    #[test]
    fn ten_bit_presets_are_v210_and_dpx_sized() {
        let hd = find_format("hd-v210").unwrap();
        assert_eq!(hd.picture_bytes(), 1920 / 6 * 16 * 1080);
        assert_eq!(hd.picture_bytes(), 5_529_600);
        assert_eq!(find_format("uhd-v210").unwrap().picture_bytes(), 22_118_400);
        // 1280 wide: 214 groups, 3424 bytes, padded to 3456 (27 x 128).
        assert_eq!(iosurvey_model::video::Packing::V210.row_bytes(1280), 3456);
        let dpx = find_format("dpx-2k").unwrap();
        assert_eq!(dpx.picture_bytes(), 12_746_752);
        assert_eq!(dpx.frame_bytes(), 12_812_288);
        assert_eq!(find_format("dpx-4k").unwrap().frame_bytes(), 51_052_544);
    }

    #[test]
    fn presets_are_smallest_first_and_uniquely_named() {
        for w in FORMATS.windows(2) {
            assert!(w[0].frame_bytes() <= w[1].frame_bytes(), "{}", w[1].name);
        }
        let mut names: Vec<&str> = FORMATS
            .iter()
            .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn frame_rates_parse_exactly() {
        assert_eq!(parse_fps("24"), Ok(Fps { num: 24, den: 1 }));
        assert_eq!(
            parse_fps("29.97"),
            Ok(Fps {
                num: 30000,
                den: 1001
            })
        );
        assert_eq!(parse_fps("12.5"), Ok(Fps { num: 125, den: 10 }));
        assert_eq!(
            parse_fps("30000/1001"),
            Ok(Fps {
                num: 30000,
                den: 1001
            })
        );
        assert_eq!(parse_fps("25").unwrap().interval_ns(), 40_000_000);
        assert_eq!(parse_fps("29.97").unwrap().interval_ns(), 33_366_666);
        for bad in ["0", "0/1", "1/0", "fast", "-24", "", ".", "1e3", "24/x"] {
            assert!(parse_fps(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn expand_builds_one_frame_point() {
        let mut s = VideoSpec::new("/mnt/media".into());
        s.op = Op::Write;
        s.size = FrameSize::Preset(find_format("dpx-2k").unwrap());
        s.frames = 100;
        s.depth = 4;
        s.threads = 2;
        let plan = expand(&s).unwrap();
        assert_eq!(plan.mode, "video");
        assert_eq!(plan.points.len(), 1);
        let job = &plan.points[0].job;
        assert_eq!(job.workers, 2);
        let f = job.frames().unwrap();
        assert_eq!(f.frame_bytes, 12_812_288);
        assert_eq!(f.header_bytes, DPX_HEADER);
        assert_eq!(f.op, Op::Write);
        // Four pieces of a quarter frame, rounded up to 4 KiB.
        assert_eq!(job.streams[0].bs, 3_203_072);
        assert_eq!(job.streams[0].outstanding, 4);
        assert_eq!(job.streams[0].mix, Mix::Write);
        assert_eq!(job.targets[0].create_size, None);
        assert_eq!(job.bounds.bytes, Some(100 * 12_812_288));
    }

    #[test]
    fn stream_layout_creates_a_test_file_of_every_frame() {
        let mut s = VideoSpec::new("/mnt/media".into());
        s.layout = FrameLayout::Stream;
        s.size = FrameSize::Custom(1_000_000);
        s.header = Some(0);
        s.frames = 10;
        s.order = FrameOrder::Random;
        let job = &expand(&s).unwrap().points[0].job;
        let f = job.frames().unwrap();
        assert_eq!(f.frame_bytes, 1_003_520);
        assert_eq!(f.format, "custom");
        assert_eq!(job.targets[0].create_size, Some(10_035_200));
        assert_eq!(job.streams[0].span, Some(10_035_200));
        assert_eq!(job.streams[0].pattern, Pattern::Random);
    }

    #[test]
    fn a_custom_size_may_carry_a_header_and_follows_the_target_alignment() {
        let mut s = VideoSpec::new("d".into());
        s.size = FrameSize::Custom(10_000);
        s.header = Some(100);
        assert_eq!(s.frame_bytes(), (12_288, 100));
        s.align = 65536;
        assert_eq!(s.frame_bytes(), (65536, 100));
    }

    #[test]
    fn bad_specs_are_refused() {
        let base = VideoSpec::new("d".into());
        let check = |f: &dyn Fn(&mut VideoSpec), want: VideoError| {
            let mut s = base.clone();
            f(&mut s);
            assert_eq!(expand(&s).unwrap_err(), want);
        };
        check(&|s| s.frames = 0, VideoError::NoFrames);
        check(&|s| s.threads = 0, VideoError::NoThreads);
        check(&|s| s.depth = 0, VideoError::NoDepth);
        check(&|s| s.size = FrameSize::Custom(0), VideoError::EmptyFrame);
        check(
            &|s| s.size = FrameSize::Custom(2 << 30),
            VideoError::FrameTooLarge(2 << 30),
        );
        check(
            &|s| {
                s.fps = Some(Fps { num: 24, den: 1 });
                s.queue = 0
            },
            VideoError::NoQueue,
        );
        check(
            &|s| {
                s.op = Op::Write;
                s.prepare = true
            },
            VideoError::PrepareWrite,
        );
        check(
            &|s| {
                s.size = FrameSize::Custom(8192);
                s.depth = 3
            },
            VideoError::DepthTooDeep {
                depth: 3,
                bytes: 8192,
                align: 4096,
            },
        );
        check(
            &|s| s.frames = u64::MAX,
            VideoError::Overflow(u64::MAX, 4_149_248),
        );
    }

    #[test]
    fn loops_multiply_the_transfers_not_the_space() {
        let mut s = VideoSpec::new("d".into());
        s.size = FrameSize::Custom(4096);
        s.frames = 10;
        s.loops = 3;
        s.fps = Some(Fps { num: 10, den: 1 });
        let plan = expand(&s).unwrap();
        let job = &plan.points[0].job;
        let f = job.frames().unwrap();
        assert_eq!((f.frames, f.loops, f.transfers()), (10, 3, 30));
        assert_eq!(job.bounds.bytes, Some(30 * 4096));
        assert_eq!(job.streams[0].span, Some(10 * 4096), "one loop's space");
        assert!(plan.points[0].label.ends_with("3 loops"));
        assert_eq!(
            crate::modes::describe::estimate(&plan),
            Some(std::time::Duration::from_secs(3))
        );
        s.loops = 0;
        assert_eq!(expand(&s).unwrap_err(), VideoError::NoLoops);
    }

    #[test]
    fn empty_frames_are_files_without_data() {
        let mut s = VideoSpec::new("d".into());
        s.size = FrameSize::Empty;
        s.op = Op::Write;
        s.header = Some(65536);
        let job = &expand(&s).unwrap().points[0].job;
        let f = job.frames().unwrap();
        assert_eq!((f.frame_bytes, f.header_bytes), (0, 0), "no header either");
        assert_eq!(f.format, "empty");
        assert_eq!(job.streams[0].bs, FRAME_ALIGN);
        assert_eq!((job.bounds.bytes, job.streams[0].span), (None, None));
        s.layout = FrameLayout::Stream;
        assert_eq!(expand(&s).unwrap_err(), VideoError::EmptyStream);
        s.layout = FrameLayout::Files { files_per_dir: 0 };
        s.depth = 2;
        assert_eq!(expand(&s).unwrap_err(), VideoError::EmptyDepth);
    }

    #[test]
    fn every_order_moves_each_frame_once() {
        let mut s = VideoSpec::new("d".into());
        s.frames = 50;
        for (order, first) in [
            (FrameOrder::Forward, Some(0)),
            (FrameOrder::Reverse, Some(49)),
            (FrameOrder::Random, None),
        ] {
            s.order = order;
            let job = &expand(&s).unwrap().points[0].job;
            let f = job.frames().unwrap();
            let seq = f.sequence(7);
            if let Some(first) = first {
                assert_eq!(seq[0], first);
            } else {
                assert_ne!(seq, (0..50).collect::<Vec<_>>(), "shuffled");
                assert_eq!(seq, f.sequence(7), "seeded");
            }
            let mut sorted = seq.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        }
    }

    #[test]
    fn frame_paths_spread_over_subdirectories() {
        let mut s = VideoSpec::new("d".into());
        s.layout = FrameLayout::Files { files_per_dir: 100 };
        let job = &expand(&s).unwrap().points[0].job;
        let f = job.frames().unwrap();
        let root = std::path::Path::new("/m/iosurvey-frames");
        assert_eq!(
            f.frame_path(root, 250),
            std::path::Path::new("/m/iosurvey-frames/d00002/f0000250.frm")
        );
        s.layout = FrameLayout::Files { files_per_dir: 0 };
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(
            job.frames().unwrap().frame_path(root, 7),
            std::path::Path::new("/m/iosurvey-frames/f0000007.frm")
        );
    }
}
