//! `iosurvey video` (frametest, AJA System Test): frames of a video format
//! written or read whole, one file per frame or all in one stream, as fast
//! as they go or paced at a frame rate with a bounded queue.
//!
//! The plan is one Point whose Job carries a [`FrameJob`]; its one stream
//! class describes a frame's I/Os (piece size and how many are in flight).

use crate::model::{
    Bounds, Fps, FrameJob, FrameLayout, FrameOrder, Job, Mix, Pattern, Plan, Point, StreamClass,
    TargetSpec,
};
use iosurvey_engine::{EngineKind, Op};
use std::path::PathBuf;

/// Frames are laid out on this boundary (frametest's 4096), or on the
/// target's O_DIRECT alignment when that is larger.
pub const FRAME_ALIGN: u64 = 4096;
/// The DPX header frametest adds by default.
pub const DPX_HEADER: u64 = 64 << 10;
/// The largest frame: one I/O buffer per frame piece must fit in memory
/// per thread.
pub const MAX_FRAME: u64 = 1 << 30;

/// A frame preset: picture size and bytes per pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameFormat {
    pub name: &'static str,
    /// Other names accepted by `--format` (frametest's `sd`, `hd`, `2k`, `4k`).
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub width: u64,
    pub height: u64,
    /// 2 for 8-bit 4:2:2, 4 for 4:4:4:4 and 10-bit DPX RGB.
    pub bytes_per_pixel: u64,
    /// A DPX file: carries a header ([`DPX_HEADER`] unless `--header`).
    pub dpx: bool,
}

impl FrameFormat {
    /// Picture bytes, without any header.
    pub fn picture_bytes(&self) -> u64 {
        self.width * self.height * self.bytes_per_pixel
    }

    /// The header used when `--header` is not given.
    pub fn default_header(&self) -> u64 {
        if self.dpx {
            DPX_HEADER
        } else {
            0
        }
    }

    /// Bytes per frame with the default header, aligned as written.
    pub fn frame_bytes(&self) -> u64 {
        frame_bytes(self.picture_bytes(), self.default_header(), FRAME_ALIGN)
    }
}

const fn preset(
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    width: u64,
    height: u64,
    bytes_per_pixel: u64,
    dpx: bool,
) -> FrameFormat {
    FrameFormat {
        name,
        aliases,
        description,
        width,
        height,
        bytes_per_pixel,
        dpx,
    }
}

/// Every preset, smallest first.
pub const FORMATS: &[FrameFormat] = &[
    preset(
        "ntsc-422",
        &["sd"],
        "NTSC SD, 8-bit 4:2:2",
        720,
        486,
        2,
        false,
    ),
    preset("pal-422", &[], "PAL SD, 8-bit 4:2:2", 720, 576, 2, false),
    preset(
        "ntsc-4444",
        &[],
        "NTSC SD, 8-bit 4:4:4:4",
        720,
        486,
        4,
        false,
    ),
    preset("pal-4444", &[], "PAL SD, 8-bit 4:4:4:4", 720, 576, 4, false),
    preset(
        "hd720-422",
        &[],
        "HD 720p, 8-bit 4:2:2",
        1280,
        720,
        2,
        false,
    ),
    preset(
        "hd-422",
        &["hd", "hd1080-422"],
        "HD 1080, 8-bit 4:2:2",
        1920,
        1080,
        2,
        false,
    ),
    preset(
        "hd-4444",
        &["hd1080-4444"],
        "HD 1080, 8-bit 4:4:4:4",
        1920,
        1080,
        4,
        false,
    ),
    preset(
        "2k",
        &["dpx-2k"],
        "DPX 2K full aperture, 10-bit RGB",
        2048,
        1556,
        4,
        true,
    ),
    preset(
        "uhd-422",
        &[],
        "UHD 2160p, 8-bit 4:2:2",
        3840,
        2160,
        2,
        false,
    ),
    preset(
        "uhd-4444",
        &[],
        "UHD 2160p, 8-bit 4:4:4:4",
        3840,
        2160,
        4,
        false,
    ),
    preset(
        "4k",
        &["dpx-4k"],
        "DPX 4K full aperture, 10-bit RGB",
        4096,
        3112,
        4,
        true,
    ),
    preset(
        "8k-422",
        &["uhd2-422"],
        "8K UHD 4320p, 8-bit 4:2:2",
        7680,
        4320,
        2,
        false,
    ),
];

/// The preset called `name` (or one of its aliases), case-insensitively.
pub fn find_format(name: &str) -> Option<&'static FrameFormat> {
    FORMATS.iter().find(|f| {
        f.name.eq_ignore_ascii_case(name) || f.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// Picture plus header, rounded up to `align`; `u64::MAX` when that does
/// not fit, so a size near 2^64 is refused as too large instead of
/// wrapping round to a small one.
pub fn frame_bytes(picture: u64, header: u64, align: u64) -> u64 {
    let align = align.max(1);
    picture
        .checked_add(header)
        .and_then(|b| b.div_ceil(align).checked_mul(align))
        .unwrap_or(u64::MAX)
}

/// The frame rates the verdict table judges, with their usual names.
pub const VERDICT_RATES: [(&str, Fps); 8] = [
    (
        "23.976",
        Fps {
            num: 24000,
            den: 1001,
        },
    ),
    ("24", Fps { num: 24, den: 1 }),
    ("25", Fps { num: 25, den: 1 }),
    (
        "29.97",
        Fps {
            num: 30000,
            den: 1001,
        },
    ),
    ("30", Fps { num: 30, den: 1 }),
    ("50", Fps { num: 50, den: 1 }),
    (
        "59.94",
        Fps {
            num: 60000,
            den: 1001,
        },
    ),
    ("60", Fps { num: 60, den: 1 }),
];

/// Parses a frame rate: `24`, `29.97`, or a fraction such as `30000/1001`.
/// The NTSC names 23.976, 29.97 and 59.94 mean their exact fractions.
pub fn parse_fps(s: &str) -> Result<Fps, String> {
    let bad =
        || format!("invalid frame rate '{s}': give frames per second (24, 29.97, 30000/1001)");
    let s = s.trim();
    if let Some((_, exact)) = VERDICT_RATES.iter().find(|(name, _)| *name == s) {
        return Ok(*exact);
    }
    let fps = if let Some((n, d)) = s.split_once('/') {
        let num: u64 = n.trim().parse().map_err(|_| bad())?;
        let den: u64 = d.trim().parse().map_err(|_| bad())?;
        Fps { num, den }
    } else {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty() || frac.len() > 6 {
            return Err(bad());
        }
        let digits = format!("{int}{frac}");
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let num: u64 = digits.parse().map_err(|_| bad())?;
        Fps {
            num,
            den: 10u64.pow(frac.len() as u32),
        }
    };
    if fps.num == 0 || fps.den == 0 {
        return Err(format!("frame rate '{s}' must be greater than zero"));
    }
    if fps.value() > 1_000_000.0 {
        return Err(format!("frame rate '{s}' is above 1000000 fps"));
    }
    Ok(fps)
}

/// The size of a frame: a preset, or a custom number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameSize {
    Preset(&'static FrameFormat),
    Custom(u64),
    /// frametest's `-e`: files with no data, so only the create (or open)
    /// and close are timed: the filesystem's metadata rate.
    Empty,
}

/// Everything `iosurvey video` was asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoSpec {
    /// A directory (files layout; stream layout creates a test file in
    /// it), a file or a block device (stream layout).
    pub target: PathBuf,
    pub op: Op,
    pub size: FrameSize,
    /// Header bytes per frame; `None` is the preset's default (64 KiB for
    /// DPX, none otherwise).
    pub header: Option<u64>,
    pub frames: u64,
    /// Passes over the frames.
    pub loops: u32,
    pub layout: FrameLayout,
    pub threads: u32,
    pub depth: u32,
    pub fps: Option<Fps>,
    pub queue: u32,
    pub order: FrameOrder,
    pub prepare: bool,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    /// O_DIRECT alignment of the target, if larger than [`FRAME_ALIGN`].
    pub align: u64,
}

impl VideoSpec {
    /// frametest's defaults: read 1800 HD 1080 4:2:2 frames, one file per
    /// frame, one thread, one I/O per frame, unpaced, O_DIRECT.
    pub fn new(target: PathBuf) -> Self {
        VideoSpec {
            target,
            op: Op::Read,
            size: FrameSize::Preset(find_format("hd").expect("the hd preset exists")),
            header: None,
            frames: 1800,
            loops: 1,
            layout: FrameLayout::Files { files_per_dir: 0 },
            threads: 1,
            depth: 1,
            fps: None,
            queue: 4,
            order: FrameOrder::Forward,
            prepare: false,
            engine: EngineKind::Uring,
            direct: true,
            seed: 0,
            align: FRAME_ALIGN,
        }
    }

    /// Bytes per frame as transferred, and of which the header.
    pub fn frame_bytes(&self) -> (u64, u64) {
        let (picture, header) = match self.size {
            FrameSize::Preset(f) => (f.picture_bytes(), self.header.unwrap_or(f.default_header())),
            FrameSize::Custom(b) => (b, self.header.unwrap_or(0)),
            FrameSize::Empty => return (0, 0),
        };
        (
            frame_bytes(picture, header, self.align.max(FRAME_ALIGN)),
            header,
        )
    }
}

/// Why a video spec cannot run. Messages name the option to change.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VideoError {
    #[error("--frames must be greater than zero")]
    NoFrames,
    #[error("--loops must be greater than zero")]
    NoLoops,
    #[error("--threads must be greater than zero")]
    NoThreads,
    #[error("--depth must be greater than zero")]
    NoDepth,
    #[error("--frame-size must be greater than zero")]
    EmptyFrame,
    #[error("a frame of {0} bytes is larger than the 1 GiB iosurvey supports; lower --frame-size or --header")]
    FrameTooLarge(u64),
    #[error("--queue must be greater than zero when --fps paces the frames")]
    NoQueue,
    #[error("--prepare writes missing frames before a read test; it does nothing with --write")]
    PrepareWrite,
    #[error("{0} frames of {1} bytes do not fit in 2^64 bytes; lower --frames")]
    Overflow(u64, u64),
    #[error("empty frames are files with no data; they need --mode files")]
    EmptyStream,
    #[error("empty frames have no data to cut into I/Os; drop --depth or --empty")]
    EmptyDepth,
    #[error("--depth {depth} cuts a {bytes}-byte frame into pieces smaller than {align} bytes; lower --depth")]
    DepthTooDeep { depth: u32, bytes: u64, align: u64 },
}

/// Expands `spec` into its one-point plan.
pub fn expand(spec: &VideoSpec) -> Result<Plan, VideoError> {
    if spec.frames == 0 {
        return Err(VideoError::NoFrames);
    }
    if spec.loops == 0 {
        return Err(VideoError::NoLoops);
    }
    if spec.threads == 0 {
        return Err(VideoError::NoThreads);
    }
    if spec.depth == 0 {
        return Err(VideoError::NoDepth);
    }
    if spec.size == FrameSize::Custom(0) {
        return Err(VideoError::EmptyFrame);
    }
    if spec.size == FrameSize::Empty && spec.layout == FrameLayout::Stream {
        return Err(VideoError::EmptyStream);
    }
    if spec.size == FrameSize::Empty && spec.depth > 1 {
        return Err(VideoError::EmptyDepth);
    }
    if spec.fps.is_some() && spec.queue == 0 {
        return Err(VideoError::NoQueue);
    }
    if spec.prepare && spec.op == Op::Write {
        return Err(VideoError::PrepareWrite);
    }
    let align = spec.align.max(FRAME_ALIGN);
    let (bytes, header) = spec.frame_bytes();
    if bytes > MAX_FRAME {
        return Err(VideoError::FrameTooLarge(bytes));
    }
    if bytes > 0 && u64::from(spec.depth) * align > bytes {
        return Err(VideoError::DepthTooDeep {
            depth: spec.depth,
            bytes,
            align,
        });
    }
    let total = spec
        .frames
        .checked_mul(bytes)
        .ok_or(VideoError::Overflow(spec.frames, bytes))?;
    let transfers = spec
        .frames
        .checked_mul(u64::from(spec.loops))
        .ok_or(VideoError::Overflow(spec.frames, bytes))?;
    let moved = transfers
        .checked_mul(bytes)
        .ok_or(VideoError::Overflow(transfers, bytes))?;
    let format = match spec.size {
        FrameSize::Preset(f) => f.name.to_string(),
        FrameSize::Custom(_) => "custom".to_string(),
        FrameSize::Empty => "empty".to_string(),
    };
    let frames = FrameJob {
        layout: spec.layout,
        op: spec.op,
        format: format.clone(),
        frame_bytes: bytes,
        header_bytes: header,
        frames: spec.frames,
        loops: spec.loops,
        depth: spec.depth,
        fps: spec.fps,
        queue: spec.queue,
        order: spec.order,
        prepare: spec.prepare,
    };
    let (mix, verb) = match spec.op {
        Op::Read => (Mix::Read, "read"),
        Op::Write => (Mix::Write, "write"),
    };
    let pattern = match spec.order {
        FrameOrder::Forward => Pattern::Forward,
        FrameOrder::Reverse => Pattern::Backward,
        FrameOrder::Random => Pattern::Random,
    };
    let stream = StreamClass {
        // Empty frames occupy no area.
        span: (total > 0).then_some(total),
        regions: 1,
        ..StreamClass::new(
            "frames",
            0,
            mix,
            pattern,
            // Empty frames do no I/O; one nominal block keeps the buffer
            // pool and the stream's shape valid.
            frames.piece_bytes(align).max(align),
            spec.depth,
        )
    };
    let create_size = match spec.layout {
        FrameLayout::Stream => Some(total),
        FrameLayout::Files { .. } => None,
    };
    let job = Job {
        workers: spec.threads,
        engine: spec.engine,
        direct: spec.direct,
        seed: spec.seed,
        frames: Some(frames),
        ..Job::new(
            vec![TargetSpec {
                path: spec.target.clone(),
                create_size,
            }],
            vec![stream],
            Bounds {
                time: None,
                bytes: (moved > 0).then_some(moved),
                ramp: std::time::Duration::ZERO,
            },
        )
    };
    Ok(Plan {
        mode: "video".into(),
        points: vec![Point {
            index: 0,
            label: if spec.loops > 1 {
                format!("{verb} {} x {format}, {} loops", spec.frames, spec.loops)
            } else {
                format!("{verb} {} x {format}", spec.frames)
            },
            job,
            skip: None,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpx_presets_match_frametest_sizes() {
        assert_eq!(frame_bytes(u64::MAX, 0, 4096), u64::MAX, "no wrap to 0");
        assert_eq!(frame_bytes(u64::MAX - 10, 20, 4096), u64::MAX);
        assert_eq!(find_format("2k").unwrap().frame_bytes(), 12_812_288);
        assert_eq!(find_format("4k").unwrap().frame_bytes(), 51_052_544);
        assert_eq!(find_format("DPX-2K").unwrap().name, "2k");
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
        s.size = FrameSize::Preset(find_format("2k").unwrap());
        s.frames = 100;
        s.depth = 4;
        s.threads = 2;
        let plan = expand(&s).unwrap();
        assert_eq!(plan.mode, "video");
        assert_eq!(plan.points.len(), 1);
        let job = &plan.points[0].job;
        assert_eq!(job.workers, 2);
        let f = job.frames.as_ref().unwrap();
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
        let f = job.frames.as_ref().unwrap();
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
        let f = job.frames.as_ref().unwrap();
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
        let f = job.frames.as_ref().unwrap();
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
            let f = job.frames.as_ref().unwrap();
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
        let f = job.frames.as_ref().unwrap();
        let root = std::path::Path::new("/m/iosurvey-frames");
        assert_eq!(
            f.frame_path(root, 250),
            std::path::Path::new("/m/iosurvey-frames/d00002/f0000250.frm")
        );
        s.layout = FrameLayout::Files { files_per_dir: 0 };
        let job = &expand(&s).unwrap().points[0].job;
        assert_eq!(
            job.frames.as_ref().unwrap().frame_path(root, 7),
            std::path::Path::new("/m/iosurvey-frames/f0000007.frm")
        );
    }
}
