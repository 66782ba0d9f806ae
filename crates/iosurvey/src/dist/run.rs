//! Running a plan over the ranks of an MPI job. Every rank holds the same
//! plan; each keeps the targets assigned to it (its local plan). Then:
//! 1. every rank checks its targets (probe, write guard) and rank 0 its
//!    outputs; the outcome is all-reduced, so one refusal stops every rank
//!    before any I/O, and rank 0 prints each refusal with its host;
//! 2. every rank opens and lays out its targets, then a barrier;
//! 3. every point starts at a barrier (after an all-reduce of Ctrl-C, so
//!    that every rank stops at the same point); each rank times its point
//!    from its own barrier exit; rank 0 gathers every rank's lossless
//!    result, merges it, and writes the report after every point;
//! 4. the exit code is the worst over the ranks.

use super::assign::Assigned;
use super::merge::{self, Maps, RankPart};
use super::{comm, world};
use crate::cli::{OutputArg, OutputFlags, TargetFlags};
use crate::execute::{self, Presenter};
use crate::exit::{Failure, Outcome};
use crate::{output, progress, targets};
use anyhow::anyhow;
use iosurvey_model::document::{PointReport, RankReport, RunReport, TargetReport};
use iosurvey_report::TextOptions;
use iosurvey_run::{now_ns, run_point, JobResult, Observer, Progress};
use iosurvey_workload::modes::describe::describe;
use iosurvey_workload::Point;
use iosurvey_workload::{Job, Plan, StreamClass};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A rank's part of a plan: its points over its own targets, and how its
/// numbers map to the whole plan's.
pub struct Local {
    pub plan: Plan,
    /// Per point: local streams and targets to the plan's.
    pub maps: Vec<Maps>,
    /// The plan's targets this rank runs.
    pub targets: Vec<usize>,
}

/// The rank of each of the plan's targets.
fn owners(plan: &Plan, assigned: &[Assigned]) -> Result<Vec<usize>, String> {
    let Some(first) = plan.points.first() else {
        return Ok(Vec::new());
    };
    first
        .job
        .targets
        .iter()
        .map(|t| {
            assigned
                .iter()
                .find(|a| a.name == t.path)
                .map(|a| a.owner)
                .ok_or_else(|| format!("{}: no rank is assigned this target", t.path.display()))
        })
        .collect()
}

/// Rank `me`'s share of stream `s`, as (outstanding I/Os, regions), or
/// `None` when it runs none of it. A stream on one target is its owner's
/// whole. A stream over a virtual array (matrix's volume of LUNs) is
/// shared out over the ranks that hold its members, in rank order: each
/// runs its share of the regions (and of the I/Os in flight with them),
/// or of the I/Os in flight, over its own members.
fn share(s: &StreamClass, owner: &[usize], me: usize) -> Option<(u32, u32)> {
    let Some(arr) = &s.array else {
        return (owner.get(s.target) == Some(&me)).then_some((s.outstanding, s.regions));
    };
    let mut holders: Vec<usize> = arr
        .members
        .iter()
        .filter_map(|&m| owner.get(m).copied())
        .collect();
    holders.sort_unstable();
    holders.dedup();
    let j = holders.iter().position(|&r| r == me)? as u32;
    let k = holders.len() as u32;
    let part = |n: u32| n / k + u32::from(j < n % k);
    let (outstanding, regions) = if s.regions > 0 {
        let r = part(s.regions);
        (s.outstanding / s.regions * r, r)
    } else {
        (part(s.outstanding), 0)
    };
    (outstanding > 0).then_some((outstanding, regions))
}

/// The part of `plan` that rank `me` runs, by the assignment of its
/// targets; refuses what cannot be shared out over ranks.
pub fn localize(plan: &Plan, assigned: &[Assigned], me: usize) -> Result<Local, String> {
    let owner = owners(plan, assigned)?;
    let Some(first) = plan.points.first() else {
        return Ok(Local {
            plan: plan.clone(),
            maps: Vec::new(),
            targets: Vec::new(),
        });
    };
    let mut mine = Vec::new();
    let mut local_path = Vec::new();
    for (ti, t) in first.job.targets.iter().enumerate() {
        if owner[ti] == me {
            let a = assigned.iter().find(|a| a.name == t.path);
            mine.push(ti);
            local_path.push(a.map_or_else(|| t.path.clone(), |a| a.local.clone()));
        }
    }
    let mut out = Local {
        plan: Plan {
            mode: plan.mode.clone(),
            points: Vec::with_capacity(plan.points.len()),
        },
        maps: Vec::with_capacity(plan.points.len()),
        targets: mine.clone(),
    };
    for p in &plan.points {
        let job = &p.job;
        let mut maps = Maps {
            streams: Vec::new(),
            targets: mine.clone(),
        };
        let mut streams = Vec::new();
        let mut pins: Vec<u32> = Vec::new();
        for (si, s) in job.streams.iter().enumerate() {
            let Some((outstanding, regions)) = share(s, &owner, me) else {
                continue;
            };
            let local = |t: usize| mine.iter().position(|&m| m == t);
            let mut s = s.clone();
            if let Some(arr) = &mut s.array {
                arr.members = arr.members.iter().filter_map(|&m| local(m)).collect();
                s.target = arr.members[0];
            } else {
                s.target = local(s.target).expect("a stream of this rank's target");
            }
            (s.outstanding, s.regions) = (outstanding, regions);
            if let Some(pin) = s.pin {
                let at = pins.iter().position(|&p| p == pin).unwrap_or_else(|| {
                    pins.push(pin);
                    pins.len() - 1
                });
                s.pin = Some(at as u32);
            }
            maps.streams.push(si);
            streams.push(s);
        }
        let targets = mine
            .iter()
            .zip(&local_path)
            .map(|(&ti, path)| iosurvey_workload::TargetSpec {
                path: path.clone(),
                create_size: job.targets[ti].create_size,
            })
            .collect();
        // A worker per pinned stream (one thread per device, as dd), else
        // the plan's own count.
        let workers = if pins.is_empty() {
            job.workers
        } else {
            pins.len() as u32
        };
        let mut point = p.clone();
        point.job = Job {
            targets,
            streams,
            workers,
            ..job.clone()
        };
        out.plan.points.push(point);
        out.maps.push(maps);
    }
    Ok(out)
}

/// The maps of rank `r` for every point of `plan` (what [`localize`]
/// gives, without building its plan): its streams and targets in the
/// plan's numbers.
pub fn maps_of(plan: &Plan, assigned: &[Assigned], r: usize) -> Vec<Maps> {
    let owner = owners(plan, assigned).unwrap_or_default();
    let targets: Vec<usize> = (0..owner.len()).filter(|&t| owner[t] == r).collect();
    plan.points
        .iter()
        .map(|p| Maps {
            streams: p
                .job
                .streams
                .iter()
                .enumerate()
                .filter(|(_, s)| share(s, &owner, r).is_some())
                .map(|(i, _)| i)
                .collect(),
            targets: targets.clone(),
        })
        .collect()
}

/// A failure as it travels to rank 0: its exit code and its line.
pub(crate) fn encode_failure(f: &Failure) -> (u8, String) {
    match f {
        Failure::Usage(e) => (2, format!("{e:#}")),
        Failure::Run(e) => (1, format!("{e:#}")),
        Failure::Interrupted(e) => (130, format!("{e:#}")),
    }
}

/// All-reduces a step's outcome over the ranks: `Ok` when every rank
/// passed, else every rank fails, and rank 0 prints each refusal with its
/// rank and host.
pub(crate) fn agree(step: Result<(), Failure>) -> Result<(), Failure> {
    let mine = step.as_ref().err().map(encode_failure);
    let bytes = serde_json::to_vec(&mine).expect("a failure encodes");
    let failed = comm::any(mine.is_some());
    if !failed {
        return Ok(());
    }
    let all = comm::all_gather(&bytes);
    let ranks = &world().expect("a distributed run").ranks;
    let mut code = 0u8;
    // The same refusal from several ranks (of one host) is said once.
    let mut said: Vec<(String, Vec<usize>)> = Vec::new();
    for (r, b) in all.iter().enumerate() {
        if let Ok(Some((c, msg))) = serde_json::from_slice::<Option<(u8, String)>>(b) {
            code = code.max(c);
            let key = format!("on {}: {msg}", ranks[r].host);
            match said.iter_mut().find(|(k, _)| *k == key) {
                Some((_, rs)) => rs.push(r),
                None => said.push((key, vec![r])),
            }
        }
    }
    let lines: Vec<String> = said
        .into_iter()
        .map(|(key, rs)| {
            let rs: Vec<String> = rs.iter().map(usize::to_string).collect();
            let word = if rs.len() == 1 { "rank" } else { "ranks" };
            format!("{word} {} {key}", rs.join(", "))
        })
        .collect();
    // Rank 0 says it; the others exit with the same code, silently.
    let e = if comm::rank() == 0 {
        anyhow!(lines.join("\n"))
    } else {
        anyhow!(SILENT)
    };
    Err(super::agreed(match code {
        2 => Failure::Usage(e),
        130 => Failure::Interrupted(e),
        _ => Failure::Run(e),
    }))
}

/// The message of a failure a rank other than 0 exits with: rank 0 prints
/// the real ones.
pub const SILENT: &str = "\u{0}silent";

/// The progress display of a rank: rank 0 shows the whole job (its own
/// counters and the latest each other rank sent), the others send theirs
/// to rank 0 at each tick (ten times a second: 32 bytes that go eagerly,
/// never waiting for rank 0). Rank 0 ends each point's live lines with the
/// merged result (see [`execute`]).
struct LiveRanks<'a> {
    display: &'a mut dyn Observer,
    /// Per rank, its latest `[point, elapsed, ops, bytes]`.
    peers: Vec<[u64; 4]>,
}

impl LiveRanks<'_> {
    /// What the other ranks have done so far in point `index`.
    fn others(&mut self, index: usize) -> (u64, u64) {
        for (r, v) in comm::recv_live() {
            if let Some(p) = self.peers.get_mut(r) {
                *p = v;
            }
        }
        self.peers
            .iter()
            .filter(|v| v[0] == index as u64 + 1)
            .fold((0, 0), |(o, b), v| (o + v[2], b + v[3]))
    }
}

impl Observer for LiveRanks<'_> {
    fn point_started(&mut self, point: &Point) {
        self.display.point_started(point);
    }
    fn tick(&mut self, point: &Point, p: Progress) {
        if comm::rank() != 0 {
            // The point's number plus one: 0 is "nothing yet".
            comm::send_live([point.index as u64 + 1, p.elapsed_ns, p.ops, p.bytes]);
            return;
        }
        let (ops, bytes) = self.others(point.index);
        self.display.tick(
            point,
            Progress {
                ops: p.ops + ops,
                bytes: p.bytes + bytes,
                ..p
            },
        );
    }
    /// The point's last live line waits for the merged result.
    fn point_finished(&mut self, _point: &Point, _result: &JobResult) {}
}

/// Every rank's targets by identity, gathered: each rank refuses what its
/// host's ranks were given together (one device named twice, by an alias,
/// or devices that overlap), as one process refuses its own. `ids` is
/// this rank's own check, passed on (a rank whose check failed sends
/// nothing, and its failure is agreed on).
fn together(
    w: &super::World,
    assigned: &[Assigned],
    mine: &[usize],
    ids: Result<Vec<Option<iosurvey_run::Identity>>, Failure>,
) -> Result<(), Failure> {
    let sent: Vec<(usize, Option<iosurvey_run::Identity>)> = match &ids {
        Ok(v) => mine.iter().copied().zip(v.iter().cloned()).collect(),
        Err(_) => Vec::new(),
    };
    let all = comm::all_gather(&serde_json::to_vec(&sent).expect("identities encode"));
    ids?;
    let host = &w.ranks[w.rank].host;
    let mut names = Vec::new();
    let mut identity = Vec::new();
    for (r, b) in all.iter().enumerate() {
        if &w.ranks[r].host != host {
            continue;
        }
        let got: Vec<(usize, Option<iosurvey_run::Identity>)> = serde_json::from_slice(b)
            .unwrap_or_else(|e| {
                comm::abort(&format!(": rank {r}'s targets did not decode: {e}"), 70)
            });
        for (g, id) in got {
            names.push(assigned[g].name.clone());
            identity.push(id);
        }
    }
    targets::check_together(&names, &identity)
}

/// Runs `plan` over the ranks (see the module's text).
pub fn execute(
    plan: &Plan,
    argv: &[String],
    tflags: &TargetFlags,
    oflags: &OutputFlags,
    presenter: &dyn Presenter,
) -> Result<Outcome, Failure> {
    let w = world().expect("a distributed run");
    let me = w.rank;
    let root = me == 0;
    let assigned = super::assigned();
    // The flags' settings on the whole plan; each rank checks them
    // against its own CPUs and targets below, agreed.
    let tuned = &crate::tuning::settings(plan, tflags);
    // Refusals found by every rank alike (the same plan): each says it.
    let local = if assigned.is_empty() {
        Err(format!(
            "{} does not run under MPI yet; run it on one host",
            plan.mode
        ))
    } else if oflags.repeat > 1 {
        Err("--repeat does not run under MPI yet: launch the job once per repeat".into())
    } else {
        localize(plan, &assigned, me)
    };
    let mut local = match local {
        Ok(l) => l,
        Err(e) if root => return Err(super::agreed(Failure::Usage(anyhow!(e)))),
        Err(_) => return Err(super::agreed(Failure::Usage(anyhow!(SILENT)))),
    };
    let plan = tuned;
    let has_work = !local.targets.is_empty();
    let mut report = RunReport {
        ranks: w
            .ranks
            .iter()
            .map(|r| RankReport {
                rank: r.rank,
                host: r.host.clone(),
                targets: assigned
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.owner == r.rank)
                    .map(|(i, _)| i)
                    .collect(),
                points: Vec::new(),
            })
            .collect(),
        ..execute::new_report(plan, argv, tflags)
    };
    presenter.annotate(&mut report);

    // 1. Checks: every rank's targets, rank 0's outputs, and the targets
    // of each host together (two ranks given aliases of one device).
    let ids = if has_work {
        crate::tuning::apply(&local.plan, tflags).and_then(|p| {
            local.plan = p;
            targets::identities(&local.plan, tflags)
        })
    } else {
        Ok(Vec::new())
    };
    let checked = together(w, &assigned, &local.targets, ids);
    let mut outs = None;
    let judged = checked.and_then(|()| {
        if root {
            outs = Some(execute::judge_outputs(
                &local.plan,
                &report,
                oflags,
                presenter,
            )?);
        }
        Ok(())
    });
    agree(judged)?;
    if oflags.dry_run {
        if root {
            output::print_text(&describe(plan));
        }
        return Ok(Outcome::Ok);
    }

    // 2. Open and lay out, every rank; then a barrier.
    let stop = execute::stop_flag();
    let closed = Arc::new(AtomicBool::new(false));
    if let Some(o) = &mut outs {
        o.stop = Some(Arc::clone(&stop));
        execute::watch_stdout(&stop, &closed);
    }
    let quiet = oflags.quiet || !root;
    let banner = presenter.banner().filter(|_| !quiet);
    let opened = if has_work {
        targets::open_all(&local.plan, tflags, quiet, banner, &stop).map(Some)
    } else {
        Ok(None)
    };
    let (opened, step) = match opened {
        Ok(o) => (o, Ok(())),
        Err(e) => (None, Err(e)),
    };
    // Rank 0's display opens `--live`: a failure there is agreed too.
    let display = step.and_then(|()| {
        progress::Display::new(
            quiet,
            oflags.mib,
            outs.as_ref().and_then(|o| o.live.as_ref()),
            Arc::clone(&stop),
            Arc::clone(&closed),
        )
        .map_err(|e| output::open_failure(e, Failure::Usage))
    });
    let (mut display, step) = match display {
        Ok(d) => (Some(d), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree(step)?;
    let display = display
        .as_mut()
        .expect("agreed: every rank has its display");
    // Every rank's targets as opened, for rank 0's report.
    let mine: Vec<(usize, TargetReport)> = match &opened {
        Some(o) => local
            .targets
            .iter()
            .zip(o.iter())
            .map(|(&g, t)| {
                let mut r = execute::target_report(t);
                r.path = assigned[g].name.display().to_string();
                (g, r)
            })
            .collect(),
        None => Vec::new(),
    };
    let gathered = comm::gather(&serde_json::to_vec(&mine).expect("targets encode"));
    let all_targets: Vec<TargetReport> = match gathered {
        Some(parts) => {
            let mut v: Vec<Option<TargetReport>> = vec![None; assigned.len()];
            for p in parts {
                let list: Vec<(usize, TargetReport)> =
                    serde_json::from_slice(&p).unwrap_or_else(|e| {
                        comm::abort(&format!(": a rank's targets did not decode: {e}"), 70)
                    });
                for (g, t) in list {
                    v[g] = Some(t);
                }
            }
            v.into_iter().flatten().collect()
        }
        None => Vec::new(),
    };
    let mut stdout = outs.as_ref().map(|o| execute::Stdout {
        streams: !o.takes_stdout() && oflags.output() == OutputArg::Text,
        shown: String::new(),
        opts: TextOptions { mib: oflags.mib },
    });
    comm::barrier();

    // Every rank's numbering, for rank 0's merges.
    let rank_maps: Vec<Vec<Maps>> = if root {
        (0..w.ranks.len())
            .map(|r| maps_of(plan, &assigned, r))
            .collect()
    } else {
        Vec::new()
    };

    // 3. The points.
    let mut outcome = Outcome::Ok;
    let mut failed: Option<Failure> = None;
    for (pi, point) in plan.points.iter().enumerate() {
        if comm::any(stop.load(Ordering::Relaxed)) {
            stop.store(true, Ordering::Relaxed);
            outcome = Outcome::Interrupted;
            break;
        }
        comm::barrier();
        let t0 = now_ns();
        let lp = &local.plan.points[pi];
        let result: Result<JobResult, String> = match (&opened, point.skip.is_some()) {
            (Some(o), false) if !lp.job.streams.is_empty() => {
                let mut live = LiveRanks {
                    display,
                    peers: vec![[0; 4]; w.ranks.len()],
                };
                run_point(lp, o, &stop, &mut live).map_err(|e| format!("{e:#}"))
            }
            _ => Ok(JobResult {
                streams: vec![Default::default(); lp.job.streams.len()],
                ..Default::default()
            }),
        };
        let start_ns = match &result {
            Ok(r) if r.measure_start_ns > 0 => r.measure_start_ns.saturating_sub(t0),
            _ => 0,
        };
        let part = RankPart { result, start_ns };
        let bytes = serde_json::to_vec(&part).expect("a result encodes");
        // Rank 0's cost of the distributed point: the gather and the merge,
        // from a barrier (so that no rank's own point is in it).
        comm::barrier();
        let m0 = now_ns();
        let gathered = comm::gather(&bytes);
        let mut errors = Vec::new();
        let mut interrupted = part.result.as_ref().is_ok_and(|r| r.interrupted);
        if let Some(parts) = gathered {
            let gathered_bytes: usize = parts.iter().map(Vec::len).sum();
            // Rank 0: every rank's part, each rank's maps. Nothing here
            // returns early: the other ranks wait for the verdict below.
            let n = point.job.streams.len();
            let mut results: Vec<Option<JobResult>> = Vec::with_capacity(parts.len());
            let mut starts = Vec::with_capacity(parts.len());
            for (r, b) in parts.iter().enumerate() {
                let p = match serde_json::from_slice::<RankPart>(b) {
                    Ok(p) => p,
                    Err(e) => {
                        errors.push(format!(
                            "rank {r} on {}: its result did not decode: {e}",
                            w.ranks[r].host
                        ));
                        starts.push(0);
                        results.push(None);
                        continue;
                    }
                };
                let maps = &rank_maps[r][pi];
                starts.push(p.start_ns);
                results.push(match p.result {
                    // A rank with nothing to run adds nothing (not even its
                    // engine's features).
                    Ok(_) if maps.streams.is_empty() => None,
                    Ok(res) => Some(merge::globalise(res, maps, n)),
                    Err(e) => {
                        errors.push(format!("rank {r} on {}: {e}", w.ranks[r].host));
                        None
                    }
                });
            }
            let (mut win, per) = merge::windows(
                point.index,
                &results,
                &starts,
                point.job.interval.as_nanos() as u64,
            );
            let merged = merge::merge(results.into_iter().flatten().collect(), n);
            interrupted |= merged.interrupted;
            // The live lines and the bar end with the whole job's figures.
            display.point_finished(point, &merged);
            if errors.is_empty() {
                win.merge_ns = now_ns() - m0;
                win.gathered_bytes = gathered_bytes as u64;
                for (rr, p) in report.ranks.iter_mut().zip(per) {
                    rr.points.push(p);
                }
                report.windows.push(win);
                let ram = report.host.memory_bytes;
                report
                    .points
                    .push(PointReport::new(point, &all_targets, &merged, ram));
                let verify_failed = merged.verify.as_ref().is_some_and(|v| v.failed());
                if merged.first_failure.is_some() || verify_failed {
                    outcome = Outcome::IoFailed;
                }
                if let Some(why) = merged
                    .verify
                    .as_ref()
                    .and_then(|v| v.nothing_checked.as_ref())
                {
                    eprintln!("iosurvey: --verify could check no block: {why}");
                }
                let outs = outs.as_ref().expect("rank 0 judged its outputs");
                let saved = outs
                    .save(&report, presenter, false)
                    .and_then(|()| presenter.after_point(&report));
                match saved {
                    Err(e) => failed = Some(e),
                    Ok(()) => {
                        if let Some(s) = &mut stdout {
                            s.advance(&report, presenter, &closed);
                        }
                    }
                }
            }
        }
        // Every rank learns whether the job goes on.
        let stop_all = comm::any(
            !errors.is_empty() || failed.is_some() || interrupted || stop.load(Ordering::Relaxed),
        );
        if !errors.is_empty() {
            failed = Some(Failure::Run(anyhow!(errors.join("\n"))));
        }
        if stop_all {
            // Collective on every rank alike: whether a rank failed.
            let any_failed = comm::any(failed.is_some() || part.result.is_err());
            if any_failed && failed.is_none() {
                // Rank 0 says which rank failed and why.
                failed = Some(Failure::Run(anyhow!(SILENT)));
            }
            if !any_failed {
                outcome = Outcome::Interrupted;
            }
            break;
        }
    }
    // Progress messages still on their way are taken in before MPI ends.
    comm::barrier();
    let _ = comm::recv_live();
    // Rank 0's last save can fail alone: that is an outcome like the
    // others, agreed below, never a return that leaves the ranks waiting.
    let mut last_save = Ok(());
    if let (Some(outs), Some(stdout)) = (&outs, &stdout) {
        let done = execute::wrap_up(&report, oflags, outs, presenter, stdout);
        if failed.is_none() {
            last_save = done;
        }
    }
    if display.live_failed && outcome == Outcome::Ok {
        outcome = Outcome::IoFailed;
    }
    // 4. The worst outcome over the ranks.
    let code = |o: Outcome| match o {
        Outcome::Ok => 0,
        Outcome::IoFailed => 1,
        Outcome::Interrupted => 2,
    };
    let worst = comm::max_u64(code(outcome) + 4 * u64::from(last_save.is_err()));
    if let Some(f) = failed {
        return Err(super::agreed(f));
    }
    last_save.map_err(super::agreed)?;
    if worst >= 4 {
        // Rank 0 could not save the report: it says why.
        return Err(super::agreed(Failure::Run(anyhow!(SILENT))));
    }
    Ok(match worst {
        0 => Outcome::Ok,
        1 => Outcome::IoFailed,
        _ => Outcome::Interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosurvey_workload::{Bounds, Mix, Pattern, Point, PointParams, StreamClass, TargetSpec};

    fn plan(targets: &[&str], pinned: bool) -> Plan {
        let streams = (0..targets.len())
            .map(|t| StreamClass {
                pin: pinned.then_some(t as u32),
                ..StreamClass::new("main", t, Mix::Read, Pattern::Random, 4096, 4)
            })
            .collect();
        let job = Job {
            workers: if pinned { targets.len() as u32 } else { 2 },
            ..Job::new(
                targets
                    .iter()
                    .map(|t| TargetSpec {
                        path: std::path::PathBuf::from(t),
                        create_size: None,
                    })
                    .collect(),
                streams,
                Bounds {
                    time: None,
                    bytes: None,
                    ramp: std::time::Duration::ZERO,
                },
            )
        };
        Plan {
            mode: "run".into(),
            points: vec![Point {
                index: 0,
                label: "p".into(),
                params: PointParams::default(),
                job,
                skip: None,
            }],
        }
    }

    fn assigned(v: &[(&str, &str, usize)]) -> Vec<Assigned> {
        v.iter()
            .map(|&(n, l, o)| Assigned {
                name: n.into(),
                local: l.into(),
                owner: o,
            })
            .collect()
    }

    #[test]
    fn a_rank_keeps_its_own_targets_and_streams_at_its_local_paths() {
        let p = plan(&["a:/dev/x", "b:/dev/x", "a:/dev/y"], true);
        let asg = assigned(&[
            ("a:/dev/x", "/dev/x", 0),
            ("b:/dev/x", "/dev/x", 1),
            ("a:/dev/y", "/dev/y", 0),
        ]);
        let l = localize(&p, &asg, 0).unwrap();
        let job = &l.plan.points[0].job;
        let paths: Vec<&std::path::Path> = job.targets.iter().map(|t| t.path.as_path()).collect();
        assert_eq!(paths, ["/dev/x", "/dev/y"]);
        assert_eq!(l.maps[0].streams, [0, 2]);
        assert_eq!(l.maps[0].targets, [0, 2]);
        let pins: Vec<Option<u32>> = job.streams.iter().map(|s| s.pin).collect();
        assert_eq!(pins, [Some(0), Some(1)]);
        assert_eq!(job.workers, 2);
        let l = localize(&p, &asg, 1).unwrap();
        assert_eq!(l.maps[0].streams, [1]);
        for r in 0..3 {
            assert_eq!(maps_of(&p, &asg, r), localize(&p, &asg, r).unwrap().maps);
        }
        assert_eq!(l.plan.points[0].job.streams[0].target, 0);
        assert_eq!(l.plan.points[0].job.workers, 1);
        // A rank with no target runs nothing.
        let l = localize(&p, &asg, 2).unwrap();
        assert!(l.plan.points[0].job.streams.is_empty());
        // An array stream (matrix's volume) is shared out over the ranks
        // that hold its members: 7 regions of 2 I/Os each over 2 ranks.
        let mut p = plan(&["a:/l0", "b:/l1", "a:/l2"], false);
        let arr = iosurvey_workload::ArraySpec {
            members: vec![0, 1, 2],
            layout: iosurvey_workload::Layout::Raid0 { stripe: 65536 },
        };
        p.points[0].job.streams = vec![StreamClass {
            array: Some(arr),
            regions: 7,
            ..StreamClass::new("large", 0, Mix::Read, Pattern::Forward, 1 << 20, 14)
        }];
        let asg = assigned(&[
            ("a:/l0", "/l0", 0),
            ("b:/l1", "/l1", 1),
            ("a:/l2", "/l2", 0),
        ]);
        let l0 = localize(&p, &asg, 0).unwrap();
        let s0 = &l0.plan.points[0].job.streams[0];
        assert_eq!((s0.outstanding, s0.regions), (8, 4));
        assert_eq!(s0.array.as_ref().unwrap().members, [0, 1]);
        let l1 = localize(&p, &asg, 1).unwrap();
        let s1 = &l1.plan.points[0].job.streams[0];
        assert_eq!((s1.outstanding, s1.regions), (6, 3));
        assert_eq!(s1.array.as_ref().unwrap().members, [0]);
        assert_eq!(l1.maps[0].streams, [0]);
        // A rank holding no member runs none of it.
        assert!(localize(&p, &asg, 2).unwrap().plan.points[0]
            .job
            .streams
            .is_empty());
        // Unpinned streams keep the plan's workers.
        let p = plan(&["a:/dev/x", "b:/dev/x"], false);
        let asg = assigned(&[("a:/dev/x", "/dev/x", 0), ("b:/dev/x", "/dev/x", 1)]);
        assert_eq!(localize(&p, &asg, 1).unwrap().plan.points[0].job.workers, 2);
    }
}
