//! A rank's part of a plan: the points over the targets assigned to it,
//! at their local paths, and how its stream and target numbers map to the
//! whole plan's (for rank 0's merge). An array stream (matrix's volume of
//! LUNs) is shared out over the ranks that hold its members.

use crate::assign::Assigned;
use crate::merge::Maps;
use iosurvey_workload::{Job, Plan, StreamClass};

/// A rank's part of a plan: its points over its own targets, and how its
/// numbers map to the whole plan's.
pub struct Localized {
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
pub fn localize(plan: &Plan, assigned: &[Assigned], me: usize) -> Result<Localized, String> {
    let owner = owners(plan, assigned)?;
    let Some(first) = plan.points.first() else {
        return Ok(Localized {
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
    let mut out = Localized {
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
