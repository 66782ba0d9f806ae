//! The model: a Plan is an ordered list of Points, each Point one Job of
//! targets, stream classes and bounds.

pub use crate::pattern::Pattern;
use crate::{ArraySpec, EngineKind, Op, PointParams, SqPoll};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A file, block device, or (later) a directory holding test files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetSpec {
    pub path: PathBuf,
    /// Size to create a new regular file at. An existing file or device is
    /// used at its own size.
    pub create_size: Option<u64>,
}

/// What a stream does: read, write, a mix, or discards among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    Read,
    Write,
    /// Each op is a read with probability `read_pct` percent.
    Mixed {
        read_pct: u8,
    },
    /// Each op is a discard with probability `trim_pct` percent (1 to
    /// 100), and otherwise a read with probability `read_pct` percent
    /// (`run --rw trim`, `--trim PCT`).
    Trims {
        trim_pct: u8,
        read_pct: u8,
    },
}

impl Mix {
    /// Whether any op of this mix writes.
    pub fn writes(self) -> bool {
        match self {
            Mix::Read => false,
            Mix::Write => true,
            Mix::Mixed { read_pct } => read_pct < 100,
            // A discard destroys data as a write does.
            Mix::Trims { .. } => true,
        }
    }

    /// Only discards: `run --rw trim` or `randtrim`.
    pub const TRIM: Mix = Mix::Trims {
        trim_pct: 100,
        read_pct: 0,
    };

    /// Whether any op of this mix is a discard.
    pub fn trims(self) -> bool {
        matches!(self, Mix::Trims { .. })
    }

    /// Percent of ops that are discards.
    pub fn trim_pct(self) -> u8 {
        match self {
            Mix::Trims { trim_pct, .. } => trim_pct,
            _ => 0,
        }
    }

    /// Whether any op of this mix reads.
    pub fn reads(self) -> bool {
        match self {
            Mix::Read => true,
            Mix::Write => false,
            Mix::Mixed { read_pct } => read_pct > 0,
            Mix::Trims { trim_pct, read_pct } => trim_pct < 100 && read_pct > 0,
        }
    }

    /// The op a stream of this mix issues when `roll` (0..100) is drawn.
    #[inline]
    pub fn op(self, roll: u64) -> Op {
        match self {
            Mix::Read => Op::Read,
            Mix::Write => Op::Write,
            Mix::Mixed { read_pct } => {
                if roll < u64::from(read_pct) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            Mix::Trims { trim_pct, read_pct } => {
                let trim = u64::from(trim_pct);
                // The reads' share of the ops that are not discards.
                let reads = (100 - trim) * u64::from(read_pct) / 100;
                if roll < trim {
                    Op::Trim
                } else if roll < trim + reads {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}

/// One class of I/O: operation, pattern, block size, outstanding I/Os and
/// the area of its target. Stats are kept apart by class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamClass {
    /// e.g. `main`, `small`, `large`.
    pub label: String,
    /// Index into [`Job::targets`].
    pub target: usize,
    pub mix: Mix,
    pub pattern: Pattern,
    /// Bytes per I/O.
    pub bs: u64,
    /// Outstanding I/Os per worker.
    pub outstanding: u32,
    /// Start of the area, in bytes from the start of the target.
    pub offset: u64,
    /// Length of the area; `None` runs to the end of the target.
    pub span: Option<u64>,
    /// Sequential streams the area is split into, over all workers; `0`
    /// means one per worker.
    pub regions: u32,
    /// Run by this worker alone (its regions, budget and slots are not
    /// shared out): one thread per device, as parallel `dd` has. `None`
    /// shares the stream out over every worker.
    pub pin: Option<u32>,
    /// Run over a virtual array of the job's targets (concat or raid0)
    /// instead of `target` alone; `target` is then the array's first member.
    pub array: Option<ArraySpec>,
    /// Whether the stream goes round to the start of its area when it
    /// reaches its end before its time or byte bound (the default); `false`
    /// ends it at the end of its area, like `dd` (`parallel` without
    /// `--loop`).
    pub wrap: bool,
    /// The stream moves whole frames (`iosurvey video`) instead of blocks:
    /// each worker takes the next frame, opens it in the files layout,
    /// moves it in I/Os of `bs` with `outstanding` in flight, syncs it when
    /// buffered and closes it. `mix` is the frames' op.
    pub frames: Option<FrameJob>,
    /// Keep the offset and latency of up to this many of the stream's
    /// measured I/Os, per worker (profile's access-time scatter); 0 keeps
    /// none.
    pub trace: u32,
    /// The target (or array) counts as this long, however long it is:
    /// `run --size` on an existing file or device bounds the area there,
    /// as fio's `size=` does. A target shorter than this is refused, never
    /// grown.
    pub limit: Option<u64>,
    /// Each I/O's size drawn from this split (`--bs 4k:70,64k:30`); `bs`
    /// is then its largest size. `None`: every I/O is `bs` long.
    pub split: Option<crate::BsSplit>,
    /// How a random stream spreads its I/Os over its area's blocks
    /// (`run --dist`); uniform for every other stream.
    pub dist: crate::Dist,
}

impl StreamClass {
    /// A stream over the whole of target `target`, shared out over every
    /// worker; set the other fields with struct update syntax.
    pub fn new(
        label: impl Into<String>,
        target: usize,
        mix: Mix,
        pattern: Pattern,
        bs: u64,
        outstanding: u32,
    ) -> Self {
        StreamClass {
            label: label.into(),
            target,
            mix,
            pattern,
            bs,
            outstanding,
            offset: 0,
            span: None,
            regions: 0,
            pin: None,
            array: None,
            wrap: true,
            frames: None,
            trace: 0,
            limit: None,
            split: None,
            dist: crate::Dist::Uniform,
        }
    }

    /// Whether the stream does I/O on target `t`.
    pub fn touches(&self, t: usize) -> bool {
        match &self.array {
            Some(a) => a.members.contains(&t),
            None => self.target == t,
        }
    }
}

/// When a job ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Measured duration.
    pub time: Option<Duration>,
    /// Bytes per stream class; `None` with no `time` means one pass over
    /// the area.
    pub bytes: Option<u64>,
    /// Unmeasured warm-up before the measured phase.
    pub ramp: Duration,
}

/// How compressible a job's generated data is (see the engine's `data`
/// module): `--compressible PCT`.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct DataFill {
    /// Percent of each 512-byte chunk that is zeros (0 to 100), as fio's
    /// `buffer_compress_percentage`: the data compresses by about this
    /// much. 0: incompressible.
    pub compressible_pct: u8,
}

/// One job: what runs at one Point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub targets: Vec<TargetSpec>,
    pub streams: Vec<StreamClass>,
    pub bounds: Bounds,
    /// Worker threads; each runs its share of every stream.
    pub workers: u32,
    pub engine: EngineKind,
    /// O_DIRECT (true) or buffered through the page cache.
    pub direct: bool,
    /// Seed for random offsets and op mixes; recorded in the results.
    pub seed: u64,
    /// Length of one interval of the series.
    pub interval: Duration,
    /// Keep going after a failed I/O (counting it) instead of stopping.
    pub continue_on_error: bool,
    /// io_uring's kernel thread polls the submission queue (`--sqpoll`).
    pub sqpoll: Option<SqPoll>,
    /// io_uring polls for completions (`--hipri`).
    pub iopoll: bool,
    /// CPUs the worker threads are pinned to, round-robin (`--cpus`);
    /// empty: not pinned.
    pub cpus: Vec<u32>,
    /// What the writes hold (`--compressible`).
    pub fill: DataFill,
    /// `--verify`: writes carry verify headers and are read back after
    /// the job; a job that only reads checks each block against what its
    /// target's verify state says the verified runs before wrote.
    pub verify: bool,
    /// `--verify-backlog N`: each worker also reads back its last N writes
    /// after every N, during the job.
    pub verify_backlog: Option<u32>,
    /// `--verify-state DIR`: where each target's verify state lives (see
    /// `iosurvey-run`'s `verify_state`); none: beside a file target.
    pub verify_state: Option<std::path::PathBuf>,
    /// `--check-compression`: before the job, its writes run for a while
    /// with data that compresses to almost nothing, then with
    /// incompressible data, and the two rates are compared.
    pub check_compression: bool,
    /// An unmeasured warm-up of this many bytes moved (all workers
    /// together) before the measured phase, instead of `bounds.ramp`'s
    /// time: ORION's `-cache_size`. 0: none.
    pub warm_bytes: u64,
    /// `run --rate-iops`, `--rate`: the workers issue their I/Os on a
    /// schedule no faster than this. None: as fast as they complete.
    pub rate: Option<crate::RateCap>,
}

impl Job {
    /// A job on one worker with io_uring, O_DIRECT, seed 0, 1 s intervals,
    /// stopping at the first failed I/O; set the rest with struct update
    /// syntax.
    pub fn new(targets: Vec<TargetSpec>, streams: Vec<StreamClass>, bounds: Bounds) -> Self {
        Job {
            targets,
            streams,
            bounds,
            workers: 1,
            engine: EngineKind::Uring,
            direct: true,
            seed: 0,
            interval: Duration::from_secs(1),
            continue_on_error: false,
            sqpoll: None,
            iopoll: false,
            cpus: Vec::new(),
            fill: DataFill::default(),
            verify: false,
            verify_backlog: None,
            verify_state: None,
            check_compression: false,
            warm_bytes: 0,
            rate: None,
        }
    }

    /// Whether any stream writes.
    pub fn writes(&self) -> bool {
        self.streams.iter().any(|s| s.mix.writes())
    }

    /// Whether any stream writes to target `t`, alone or as a member of
    /// an array.
    pub fn writes_target(&self, t: usize) -> bool {
        self.streams.iter().any(|s| s.mix.writes() && s.touches(t))
    }

    /// Whether any stream discards on target `t`, alone or as a member
    /// of an array.
    pub fn trims_target(&self, t: usize) -> bool {
        self.streams.iter().any(|s| s.mix.trims() && s.touches(t))
    }

    /// The frame workload of the job's frame stream, if it has one.
    pub fn frames(&self) -> Option<&FrameJob> {
        self.streams.iter().find_map(|s| s.frames.as_ref())
    }

    /// The largest block size of any stream.
    pub fn max_bs(&self) -> u64 {
        self.streams.iter().map(|s| s.bs).max().unwrap_or(0)
    }
}

/// A frame rate as a fraction, so NTSC's 30000/1001 stays exact.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Fps {
    pub num: u64,
    pub den: u64,
}

impl Fps {
    /// Frames per second.
    pub fn value(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// How long `frames` frames last at this rate.
    pub fn duration_of(self, frames: u64) -> Duration {
        let ns =
            u128::from(frames) * u128::from(self.den) * 1_000_000_000 / u128::from(self.num.max(1));
        Duration::from_nanos(ns.min(u128::from(u64::MAX)) as u64)
    }

    /// Whether `other` is the same rate (24/1 and 48/2 are).
    pub fn same_rate(self, other: Fps) -> bool {
        u128::from(self.num) * u128::from(other.den) == u128::from(other.num) * u128::from(self.den)
    }

    /// Nanoseconds from one frame to the next.
    pub fn interval_ns(self) -> u64 {
        (u128::from(self.den) * 1_000_000_000 / u128::from(self.num.max(1))) as u64
    }
}

/// Where the frames of a video workload live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameLayout {
    /// One file per frame in the `iosurvey-frames` directory of the target
    /// directory, `files_per_dir` to a subdirectory (0: all in one).
    Files { files_per_dir: u32 },
    /// Every frame in the target file or device, back to back.
    Stream,
}

/// The order frames are transferred in; saved as frametest names it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub enum FrameOrder {
    #[serde(rename = "fwd")]
    Forward,
    #[serde(rename = "rev")]
    Reverse,
    /// Each frame once, in a seeded shuffle.
    #[serde(rename = "random")]
    Random,
}

/// `fwd`, `rev` or `random`, as reports print it.
impl std::fmt::Display for FrameOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FrameOrder {
    pub fn name(self) -> &'static str {
        match self {
            FrameOrder::Forward => "fwd",
            FrameOrder::Reverse => "rev",
            FrameOrder::Random => "random",
        }
    }
}

/// A frame workload: `frames` frames of `frame_bytes` each, read or
/// written whole, paced at `fps` or as fast as they go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameJob {
    pub layout: FrameLayout,
    /// Read or write (video frames are never mixed).
    pub op: Op,
    /// The preset's name, or `custom`.
    pub format: String,
    /// Bytes per frame as transferred, header included, aligned.
    pub frame_bytes: u64,
    /// Of which the header (DPX).
    pub header_bytes: u64,
    pub frames: u64,
    /// Passes over the frames (frametest's `-l`): a sustained run without
    /// more space. Each pass moves every frame once, in `order`.
    pub loops: u32,
    /// I/Os in flight per frame: the frame is cut into this many pieces.
    pub depth: u32,
    /// Real-time pacing; `None` transfers frames as fast as they go.
    pub fps: Option<Fps>,
    /// With `fps`: how many frame times a frame may wait in the queue
    /// before it is dropped.
    pub queue: u32,
    pub order: FrameOrder,
    /// Reading: write the frames that are missing first, unmeasured.
    pub prepare: bool,
}

impl FrameJob {
    /// Frame transfers over every loop.
    pub fn transfers(&self) -> u64 {
        self.frames * u64::from(self.loops.max(1))
    }

    /// Bytes of each I/O (the last piece of a frame may be shorter),
    /// aligned to `align`.
    pub fn piece_bytes(&self, align: u64) -> u64 {
        let align = align.max(1);
        let per = self.frame_bytes.div_ceil(u64::from(self.depth.max(1)));
        per.div_ceil(align) * align
    }

    /// The frames in the order they are transferred: each once, forward,
    /// backward, or shuffled with `seed`.
    pub fn sequence(&self, seed: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..self.frames).collect();
        match self.order {
            FrameOrder::Forward => {}
            FrameOrder::Reverse => v.reverse(),
            FrameOrder::Random => {
                let mut rng = crate::rng::Rng::new(seed);
                for i in (1..v.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    v.swap(i, j);
                }
            }
        }
        v
    }

    /// The path of frame `index` under the frames directory `root`.
    pub fn frame_path(&self, root: &Path, index: u64) -> PathBuf {
        let name = format!("f{index:07}.frm");
        match self.layout {
            FrameLayout::Files { files_per_dir } if files_per_dir > 0 => root
                .join(format!("d{:05}", index / u64::from(files_per_dir)))
                .join(name),
            _ => root.join(name),
        }
    }
}

/// The directory the frames of a files-per-frame workload go in, inside
/// the target directory.
pub fn frames_dir(target: &Path) -> PathBuf {
    target.join("iosurvey-frames")
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub index: usize,
    pub label: String,
    /// What the point varies, typed, by mode: what presenters read.
    pub params: PointParams,
    pub job: Job,
    /// Set when the mode decided up front not to run this point (e.g.
    /// sgpdd-survey's `ENOMEM` memory check); the reason is reported.
    pub skip: Option<String>,
}

/// What a command will run, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The mode that expanded it (`run`, `diskperf`, ...).
    pub mode: String,
    pub points: Vec<Point>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(mix: Mix) -> [usize; 3] {
        let mut n = [0; 3];
        for roll in 0..100 {
            n[mix.op(roll) as usize] += 1;
        }
        n
    }

    #[test]
    fn a_trim_share_takes_its_percent_and_the_rest_splits_as_the_mix_says() {
        let m = Mix::Trims {
            trim_pct: 10,
            read_pct: 70,
        };
        // Of 100 rolls: 10 trims, 70% of the other 90 reads (63), 27 writes.
        assert_eq!(shares(m), [63, 27, 10]);
        assert!(m.writes() && m.reads() && m.trims());
        assert_eq!(shares(Mix::TRIM), [0, 0, 100]);
        assert!(Mix::TRIM.writes() && !Mix::TRIM.reads());
        let w = Mix::Trims {
            trim_pct: 25,
            read_pct: 0,
        };
        assert_eq!(shares(w), [0, 75, 25]);
        assert!(!Mix::Mixed { read_pct: 50 }.trims());
        assert_eq!(Mix::Write.trim_pct(), 0);
    }
}
