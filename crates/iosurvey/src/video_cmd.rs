//! `iosurvey video` (frametest, AJA System Test): video frames written or
//! read whole, one file per frame or in one stream, unpaced or at a frame
//! rate, judged against real time.

use crate::flags::common::{size, OutputFlags, TargetFlags};
use crate::flags::listed::{format_names, listed};
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosurvey_engine::{EngineKind, Op};
use iosurvey_model::document::RunReport;
use iosurvey_report::video::{render_format_list, render_video, render_video_csv};
use iosurvey_report::TextOptions;
use iosurvey_session::output;
use iosurvey_session::presenter::Presenter;
use iosurvey_session::Cluster;
use iosurvey_session::{run_plan, Session};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_target::frame_dir::{check_fd_limit, FrameDir, FrameDirError};
use iosurvey_workload::modes::video::{
    expand, find_format, parse_fps, FrameFormat, FrameSize, VideoSpec, FORMATS,
};
use iosurvey_workload::{frames_dir, Fps, FrameLayout, FrameOrder, Plan};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One file per frame: open (create), I/O, close, each timed.
    Files,
    /// Every frame in one file or device.
    Stream,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    Fwd,
    Rev,
    Random,
}

#[derive(Args, Debug)]
pub struct VideoArgs {
    /// A directory (files mode: frames go in DIR/iosurvey-frames), or for --mode stream a file, a directory (a test file is laid out in it) or a block device.
    #[arg(value_name = "TARGET", required_unless_present = "list_formats")]
    pub target: Option<PathBuf>,
    /// Write the frames (creates them; files iosurvey did not create are refused without --allow-destroy).
    #[arg(long, conflicts_with = "read")]
    pub write: bool,
    /// Read the frames (the default); they must have been written, see --prepare.
    #[arg(long)]
    pub read: bool,
    /// A frame preset (see --list-formats), e.g. hd, dpx-2k, dpx-4k, uhd-422 (2k alone is a size: 2048 bytes).
    #[arg(long, value_parser = listed(format_arg, format_names), conflicts_with = "frame_size")]
    pub format: Option<&'static FrameFormat>,
    /// Empty frames (frametest -e): files with no data, so only their create (or open) and close are timed; --mode files only.
    #[arg(long, conflicts_with_all = ["format", "frame_size", "header"])]
    pub empty: bool,
    /// A custom frame size instead of a preset (rounded up to 4 KiB).
    #[arg(long, value_parser = size)]
    pub frame_size: Option<u64>,
    /// Frames to transfer.
    #[arg(long, default_value_t = 1800)]
    pub frames: u64,
    /// Passes over the frames (frametest's -l): a longer, sustained run in the same space.
    #[arg(long, default_value_t = 1)]
    pub loops: u32,
    /// End the run when this time is up, with the frames done by then (frametest runs every frame).
    #[arg(long, value_parser = crate::flags::common::duration)]
    pub time: Option<std::time::Duration>,
    /// One file per frame, or all frames in one stream.
    #[arg(long, value_enum, default_value = "files")]
    pub mode: ModeArg,
    /// Threads, each moving one frame at a time.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// I/Os in flight per frame: each frame is cut into this many pieces. The engine is sync at depth 1 and io_uring above, unless --engine says otherwise.
    #[arg(long, default_value_t = 1)]
    pub depth: u32,
    /// Pace the frames at this rate (24, 29.97, 30000/1001); unpaced frames go as fast as they can.
    #[arg(long, value_parser = parse_fps)]
    pub fps: Option<Fps>,
    /// With --fps: frame times a frame may wait before it is dropped (default 4).
    #[arg(long)]
    pub queue: Option<u32>,
    /// Header bytes per frame (default 64k for DPX presets, 0 otherwise).
    #[arg(long, value_parser = size)]
    pub header: Option<u64>,
    /// Order frames are transferred in.
    #[arg(long, value_enum, default_value = "fwd")]
    pub order: OrderArg,
    /// Files mode: frames per subdirectory (0: all in one directory).
    #[arg(long, default_value_t = 0)]
    pub files_per_dir: u32,
    /// Reading: write the frames that are missing first, unmeasured (removed at the end unless --keep).
    #[arg(long)]
    pub prepare: bool,
    /// Print every frame preset with its size and exit.
    #[arg(long)]
    pub list_formats: bool,
    /// Seed of the random order; recorded in the results.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub target_flags: TargetFlags,
    #[command(flatten)]
    pub out: OutputFlags,
    /// Frames written carry a verify header in every 4 KiB block and are read back after the run; frames read are checked against what the verified runs before wrote (their state file: beside the frames, or in --verify-state DIR). Frame files are checked as one stream, frame k at k frame sizes. Failures by class, exit 1 (as run --verify). Not with --shared: another run's writes would make the state untrue.
    #[arg(long, conflicts_with = "shared")]
    pub verify: bool,
    /// With --verify: the directory where the verify state is kept (needed for a block device).
    #[arg(long, value_name = "DIR", requires = "verify")]
    pub verify_state: Option<std::path::PathBuf>,
}

/// `--format`: a preset or one of its aliases.
fn format_arg(s: &str) -> Result<&'static FrameFormat, String> {
    find_format(s).ok_or_else(|| {
        // `2k` reads as a size everywhere (2048 bytes): the DPX frame has
        // its own name.
        if let Ok(b) = iosurvey_workload::units::parse_size(s) {
            return format!(
                "'{s}' is a size ({b} bytes), not a format: the DPX frames are dpx-2k and dpx-4k; give --frame-size {s} for {b}-byte frames"
            );
        }
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        format!(
            "unknown format '{s}': use one of {} (see --list-formats), or --frame-size",
            names.join(", ")
        )
    })
}

fn spec_from(a: &VideoArgs, target: PathBuf) -> VideoSpec {
    let mut s = VideoSpec::new(target);
    s.op = if a.write { Op::Write } else { Op::Read };
    if let Some(f) = a.format {
        s.size = FrameSize::Preset(f);
    }
    if let Some(b) = a.frame_size {
        s.size = FrameSize::Custom(b);
    }
    if a.empty {
        s.size = FrameSize::Empty;
    }
    s.header = a.header;
    s.frames = a.frames;
    s.loops = a.loops;
    s.time = a.time;
    s.layout = match a.mode {
        ModeArg::Files => FrameLayout::Files {
            files_per_dir: a.files_per_dir,
        },
        ModeArg::Stream => FrameLayout::Stream,
    };
    s.threads = a.threads;
    s.depth = a.depth;
    s.fps = a.fps;
    if let Some(q) = a.queue {
        s.queue = q;
    }
    s.order = match a.order {
        OrderArg::Fwd => FrameOrder::Forward,
        OrderArg::Rev => FrameOrder::Reverse,
        OrderArg::Random => FrameOrder::Random,
    };
    s.prepare = a.prepare;
    // One I/O per frame at a time is plain pread/pwrite (frametest's
    // shape, and the cheapest); pieces in flight need io_uring.
    s.engine = a.target_flags.engine.kind().unwrap_or(if a.depth > 1 {
        EngineKind::Uring
    } else {
        EngineKind::Sync
    });
    s.engine_flags = crate::flags::common::engine_flags(&a.target_flags);
    s.direct = !a.target_flags.buffered;
    s.seed = a.seed;
    s.verify = a.verify;
    s.verify_state = a.verify_state.clone();
    s
}

/// frametest's report as text, every frame as CSV.
struct VideoPresenter;

impl Presenter for VideoPresenter {
    fn text(&self, report: &RunReport, opts: TextOptions) -> String {
        render_video(report, opts)
    }
    fn csv(&self, report: &RunReport) -> String {
        render_video_csv(report)
    }
}

/// What the run will do, in one line for stderr.
fn banner(plan: &Plan, spec: &VideoSpec) -> String {
    let fj = plan.points[0]
        .job
        .frames()
        .expect("a video plan has frames");
    let verb = if fj.op == Op::Write { "write" } else { "read" };
    let place = match fj.layout {
        FrameLayout::Files { .. } => format!(
            "one file per frame in {}",
            frames_dir(&spec.target).display()
        ),
        FrameLayout::Stream => format!("one stream in {}", spec.target.display()),
    };
    let pace = fj.fps.map_or("unpaced".to_string(), |r| {
        format!("paced at {:.3} fps, queue {}", r.value(), fj.queue)
    });
    let prepare = if fj.prepare {
        "; missing frames are written first, unmeasured"
    } else {
        ""
    };
    let loops = if fj.loops > 1 {
        format!(" x {} loops", fj.loops)
    } else {
        String::new()
    };
    format!(
        "iosurvey: video: {verb} {} frames{loops} of {} ({} bytes), {place}, {pace}{prepare}",
        fj.frames, fj.format, fj.frame_bytes
    )
}

/// Removes the frames an earlier run left in the frames directory when it
/// was killed, saying so in one line.
fn remove_leftovers(spec: &VideoSpec) {
    match iosurvey_target::frame_target::remove_leftovers(&spec.target) {
        Ok(Some(l)) => eprintln!(
            "iosurvey: removed {} leftover frames of an earlier run (pid {}) that did not finish, in {}",
            l.frames,
            l.pid,
            frames_dir(&spec.target).display()
        ),
        Ok(None) => {}
        Err(e) => eprintln!(
            "iosurvey: could not remove the leftover frames in {}: {e}",
            frames_dir(&spec.target).display()
        ),
    }
}

pub fn video(a: VideoArgs, argv: &[String], cluster: &dyn Cluster) -> Result<Outcome, Failure> {
    if a.list_formats {
        if cluster.rank() == 0 {
            output::print_text(&render_format_list());
        }
        return Ok(Outcome::Ok);
    }
    let Some(target) = a.target.clone() else {
        return usage(anyhow!("give a TARGET directory, file or device"));
    };
    if a.mode == ModeArg::Stream && a.files_per_dir > 0 {
        return usage(anyhow!(
            "--files-per-dir is for --mode files; a stream holds every frame in one file"
        ));
    }
    if a.fps.is_none() && a.queue.is_some() {
        return usage(anyhow!(
            "--queue bounds the frames waiting behind a --fps pace; give --fps too"
        ));
    }
    // Under MPI every rank plays the frames on a target of its own
    // ({rank}, {host}, or host:path): this rank's is checked, locked and
    // cleaned here; the plan holds every rank's.
    let names = cluster.localize_targets(std::slice::from_ref(&target))?;
    // A rank with no target of its own (host:path names one host) only
    // takes part: it checks nothing, but agrees as the others do.
    let local = cluster.local_targets().into_iter().next();
    let mine = local.is_some();
    let spec = spec_from(&a, local.unwrap_or_else(|| names[0].clone()));
    // The same on every rank: a refusal said once.
    let plan = iosurvey_session::agree_on(cluster, expand(&spec).or_else(usage))?;
    let plan = per_target(plan, &names);
    // This rank's own checks (its host's limits, lock and room), agreed
    // over the ranks under MPI.
    let ours = |check: Result<(), FrameDirError>| if mine { check.or_else(usage) } else { Ok(()) };
    let files_layout = matches!(spec.layout, FrameLayout::Files { .. });
    let uring = spec.engine == EngineKind::Uring;
    iosurvey_session::agree(
        cluster,
        ours(check_fd_limit(spec.threads, files_layout, uring)),
    )?;
    let files = mine && files_layout;
    // Opened once and held until the frames are cleaned up, after
    // `execute`: the lock, the room and the frames all judge this handle.
    let dir = files.then(|| FrameDir::open(&spec.target)).flatten();
    let locked = match &dir {
        Some(d) if !a.out.dry_run => d.lock(a.target_flags.shared).or_else(usage),
        _ => Ok(()),
    };
    iosurvey_session::agree(cluster, locked)?;
    if files && !a.target_flags.readonly && !a.out.dry_run {
        remove_leftovers(&spec);
    }
    let room = match (&dir, plan.points[0].job.frames()) {
        (Some(d), Some(fj)) => d.check_room(fj),
        _ => Ok(()),
    };
    iosurvey_session::agree(cluster, ours(room))?;
    let banner = banner(&plan, &spec);
    let outcome = run_plan(
        &plan,
        &VideoPresenter,
        &Session {
            argv,
            tflags: &a.target_flags.options(),
            oflags: &a.out.options(),
            cluster,
            banner: Some(banner),
        },
    );
    if files {
        // Frames kept (--keep) are not the leftovers of a killed run.
        iosurvey_target::frame_target::finish_frames(&spec.target);
    }
    outcome
}

/// `plan` (over one target) with the same frames on each of `names`, in
/// their order: one frame stream per target (under MPI, one per rank).
fn per_target(mut plan: Plan, names: &[PathBuf]) -> Plan {
    for p in &mut plan.points {
        let job = &mut p.job;
        let (Some(t), Some(s)) = (job.targets.first().cloned(), job.streams.first().cloned())
        else {
            continue;
        };
        job.targets = names
            .iter()
            .map(|n| iosurvey_workload::TargetSpec {
                path: n.clone(),
                ..t.clone()
            })
            .collect();
        job.streams = (0..names.len())
            .map(|i| iosurvey_workload::StreamClass {
                target: i,
                ..s.clone()
            })
            .collect();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_found_by_name_or_alias_and_unknown_ones_listed() {
        assert_eq!(format_arg("hd").unwrap().name, "hd-422");
        assert_eq!(format_arg("DPX-2K").unwrap().name, "dpx-2k");
        assert!(format_arg("2k")
            .unwrap_err()
            .contains("is a size (2048 bytes)"));
        let err = format_arg("vhs").unwrap_err();
        assert!(
            err.contains("ntsc-422") && err.contains("--list-formats"),
            "{err}"
        );
    }
}
