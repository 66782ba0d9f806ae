//! What `iosurvey video` was asked for, and its expansion into a plan.

use super::*;
use crate::model::{
    Bounds, Fps, FrameJob, FrameLayout, FrameOrder, Job, Mix, Pattern, Plan, Point, StreamClass,
    TargetSpec,
};
use iosurvey_model::{EngineKind, Op, PointParams};
use std::path::PathBuf;

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
    /// `--verify` (`--mode stream`): frames written carry verify headers
    /// and are read back after the job; frames read are checked against
    /// what the verified runs before wrote (their verify state).
    pub verify: bool,
    /// `--verify-state DIR`.
    pub verify_state: Option<PathBuf>,
    /// O_DIRECT alignment of the target, if larger than [`FRAME_ALIGN`].
    pub align: u64,
    /// The run also ends when this time is up (`--time`), with the frames
    /// done by then; `None`: every frame.
    pub time: Option<std::time::Duration>,
    /// The engine flags, written into every job.
    pub engine_flags: crate::EngineFlags,
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
            verify: false,
            verify_state: None,
            align: FRAME_ALIGN,
            time: None,
            engine_flags: crate::EngineFlags::default(),
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
        Op::Write | Op::Trim => (Mix::Write, "write"),
    };
    let pattern = match spec.order {
        FrameOrder::Forward => Pattern::Forward,
        FrameOrder::Reverse => Pattern::Backward,
        FrameOrder::Random => Pattern::Random,
    };
    // Empty frames do no I/O; one block keeps the buffer pool valid.
    let piece = frames.piece_bytes(align).max(align);
    let stream = StreamClass {
        // Empty frames occupy no area.
        span: (total > 0).then_some(total),
        regions: 1,
        frames: Some(frames),
        ..StreamClass::new("frames", 0, mix, pattern, piece, spec.depth)
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
        verify: spec.verify,
        verify_state: spec.verify_state.clone(),
        ..Job::new(
            vec![TargetSpec {
                path: spec.target.clone(),
                create_size,
            }],
            vec![stream],
            Bounds {
                time: spec.time,
                bytes: (moved > 0).then_some(moved),
                ramp: std::time::Duration::ZERO,
            },
        )
    };
    Ok(spec.engine_flags.written(Plan {
        mode: "video".into(),
        points: vec![Point {
            index: 0,
            params: PointParams::Video,
            label: if spec.loops > 1 {
                format!("{verb} {} x {format}, {} loops", spec.frames, spec.loops)
            } else {
                format!("{verb} {} x {format}", spec.frames)
            },
            job,
            skip: None,
        }],
    }))
}
