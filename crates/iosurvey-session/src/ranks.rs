//! The steps of a run that cross ranks, each the identity on one process:
//! the targets of a host judged together, every rank's opened targets for
//! rank 0's report, the live progress of the whole job, and each point's
//! results gathered and merged on rank 0.

use crate::assign::Assigned;
use crate::cluster::Cluster;
use crate::merge::{Body, Instants, Maps, Merger, RankPart};
use crate::stream_file::StreamFile;
use iosurvey_model::document::{PointWindows, RankPoint, StreamDetail, TargetReport};
use iosurvey_run::{now_ns, IntervalRow, JobResult, Observer, Progress};
use iosurvey_target::target::Identity;
use iosurvey_workload::Point;
use std::path::PathBuf;

/// The targets of every rank of this host (names and identities), for a
/// check that one host's ranks were not given one device twice (an
/// alias, a hard link) or devices that overlap. `ids` is this rank's own
/// check of its targets `mine` (indices into `assigned`); a rank whose
/// check failed sends nothing (its failure is agreed on after).
pub fn host_targets(
    cluster: &dyn Cluster,
    assigned: &[Assigned],
    mine: &[usize],
    ids: Option<&[Option<Identity>]>,
) -> (Vec<PathBuf>, Vec<Option<Identity>>) {
    let sent: Vec<(usize, Option<Identity>)> = match ids {
        Some(v) => mine.iter().copied().zip(v.iter().cloned()).collect(),
        None => Vec::new(),
    };
    let all = cluster.all_gather(&serde_json::to_vec(&sent).expect("identities encode"));
    let host = cluster.host().to_string();
    let mut names = Vec::new();
    let mut identity = Vec::new();
    for (r, b) in all.iter().enumerate() {
        if cluster.ranks()[r].host != host {
            continue;
        }
        let got: Vec<(usize, Option<Identity>)> = serde_json::from_slice(b).unwrap_or_else(|e| {
            cluster.abort(&format!(": rank {r}'s targets did not decode: {e}"), 70)
        });
        for (g, id) in got {
            names.push(assigned[g].name.clone());
            identity.push(id);
        }
    }
    (names, identity)
}

/// Every rank's opened targets (`mine`: the plan's target index and its
/// report), in the plan's order, on rank 0; empty on the others.
pub fn gather_targets(
    cluster: &dyn Cluster,
    mine: &[(usize, TargetReport)],
    count: usize,
) -> Vec<TargetReport> {
    let Some(parts) = cluster.gather(&serde_json::to_vec(mine).expect("targets encode")) else {
        return Vec::new();
    };
    let mut v: Vec<Option<TargetReport>> = vec![None; count];
    for p in parts {
        let list: Vec<(usize, TargetReport)> = serde_json::from_slice(&p).unwrap_or_else(|e| {
            cluster.abort(&format!(": a rank's targets did not decode: {e}"), 70)
        });
        for (g, t) in list {
            if let Some(slot) = v.get_mut(g) {
                *slot = Some(t);
            }
        }
    }
    v.into_iter().flatten().collect()
}

/// The progress display of a rank of several: rank 0 shows the whole job
/// (its own counters and the latest each other rank sent), the others
/// send theirs to rank 0 at each tick (ten times a second: 32 bytes that
/// go eagerly, never waiting for rank 0). Rank 0 ends each point's live
/// lines with the merged result ([`PointMerged::result`]).
pub struct LiveRanks<'a> {
    pub display: &'a mut dyn Observer,
    pub cluster: &'a dyn Cluster,
    /// The whole plan's point, and its stream of each of this rank's:
    /// rank 0's interval lines are named as the merged result's.
    plan_point: &'a Point,
    streams: &'a [usize],
    /// Per rank, its latest `[point + 1, elapsed, ops, bytes]`.
    peers: Vec<[u64; 4]>,
}

impl<'a> LiveRanks<'a> {
    pub fn new(
        display: &'a mut dyn Observer,
        cluster: &'a dyn Cluster,
        (plan_point, streams): (&'a Point, &'a [usize]),
    ) -> Self {
        LiveRanks {
            display,
            plan_point,
            streams,
            peers: vec![[0; 4]; cluster.ranks().len()],
            cluster,
        }
    }

    /// What the other ranks have done so far in point `index`.
    fn others(&mut self, index: usize) -> (u64, u64) {
        for (r, v) in self.cluster.recv_live() {
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
        if !self.cluster.is_root() {
            // The point's number plus one: 0 is "nothing yet".
            self.cluster
                .send_live([point.index as u64 + 1, p.elapsed_ns, p.ops, p.bytes]);
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
    /// Rank 0's own intervals, in the plan's stream numbers.
    fn intervals(&mut self, _point: &Point, rows: &[IntervalRow], last: bool) {
        if !self.cluster.is_root() {
            return;
        }
        let mut rows = rows.to_vec();
        for r in &mut rows {
            r.stream = self.streams.get(r.stream).copied().unwrap_or(r.stream);
        }
        self.display.intervals(self.plan_point, &rows, last);
    }
    /// The point's last live line waits for the merged result.
    fn point_finished(&mut self, _point: &Point, _result: &JobResult) {}
}

/// A point of the whole job, merged on rank 0.
pub struct PointMerged {
    pub result: JobResult,
    pub windows: PointWindows,
    /// Each rank's own figures, in rank order.
    pub per_rank: Vec<RankPoint>,
    /// The ranks whose point failed or whose result did not decode, each
    /// as a line naming its rank and host.
    pub errors: Vec<String>,
}

impl PointMerged {
    /// The result of one process's point: its own, with no window.
    pub fn alone(result: JobResult) -> Self {
        PointMerged {
            result,
            windows: PointWindows::default(),
            per_rank: Vec::new(),
            errors: Vec::new(),
        }
    }
}

/// What `--stream-file` asks of a point's gathering: whether streams
/// travel whole (every rank knows), and rank 0's file.
pub struct ToFile<'a> {
    pub whole: bool,
    pub file: Option<&'a mut StreamFile>,
}

/// Gathers every rank's `result` of `point` (numbered as its local plan,
/// `maps` to the job's; `start_ns` from its barrier exit to its measured
/// phase) on rank 0 and merges it, each stream kept as `detail` says;
/// `None` on the others. Rank 0 takes the
/// ranks' parts one at a time, in rank order, adding each into the
/// merged result before the next. Each rank encodes its part before a
/// barrier; rank 0's cost from that barrier (so that no rank's own point
/// or encoding is in it: the reduction of the windows' instants, the
/// transfers, the decoding and the merge) goes in the windows.
pub fn gather_point(
    cluster: &dyn Cluster,
    point: &Point,
    result: Result<JobResult, String>,
    (start_ns, maps): (u64, &Maps),
    (detail, to_file): (StreamDetail, ToFile<'_>),
) -> Option<PointMerged> {
    let mut mine = RankPart::new(point.index, result, start_ns, maps);
    let root = cluster.is_root();
    // Each rank summarises and encodes its own before the barrier (rank 0
    // summarises its own there, and merges its own streams where they
    // are). For `--stream-file`, every stream travels whole, and rank 0
    // writes then summarises each rank's as it comes.
    let shared = |g: usize| point.job.streams.get(g).is_some_and(|s| s.array.is_some());
    let sent = match to_file.whole {
        true => StreamDetail::Full,
        false => detail,
    };
    let (mut encoded, summary) = match (root, sent) {
        (false, _) => (mine.encode(sent, shared), None),
        (true, StreamDetail::Full) => (Vec::new(), None),
        (true, StreamDetail::Summary) => (Vec::new(), Some(mine.summary_body(shared))),
    };
    let mut file = to_file.file;
    // A rank's whole streams to the file, then as `detail` keeps them.
    let mut kept = |r: usize, body: Body| -> Body {
        match file.as_deref_mut() {
            Some(f) if sent.is_full() => {
                f.write(point, r, body.whole.iter().map(|(g, s)| (*g, s)));
                match detail {
                    StreamDetail::Full => body,
                    StreamDetail::Summary => body.summarised(shared),
                }
            }
            _ => body,
        }
    };
    cluster.barrier();
    let m0 = now_ns();
    let at = Instants::from_largest(&cluster.max_u64s(&mine.seen()));
    mine.count_done(&at, point.job.interval.as_nanos() as u64);
    if !root {
        mine.append_done(&mut encoded);
        cluster.send_to_root(&encoded);
        return None;
    }
    // Nothing here returns early: the other ranks wait for the verdict.
    let mut merger = Merger::new(point.index, point.job.streams.len(), detail);
    let mut errors = Vec::new();
    let mut gathered_bytes = 0usize;
    let failed = |r: usize, e: &str| format!("rank {r} on {}: {e}", cluster.ranks()[r].host);
    if let Err(e) = &mine.result {
        errors.push(failed(0, e));
    }
    let body = summary.unwrap_or_else(|| kept(0, mine.take_whole()));
    if let Err(e) = merger.add(mine, body) {
        errors.push(failed(0, &e));
    }
    for r in 1..cluster.ranks().len() {
        let bytes = cluster.recv_from(r);
        gathered_bytes += bytes.len();
        match RankPart::decode(&bytes) {
            Ok((p, body)) => {
                drop(bytes);
                if let Err(e) = &p.result {
                    errors.push(failed(r, e));
                }
                if let Err(e) = merger.add(p, kept(r, body)) {
                    errors.push(failed(r, &format!("its result did not decode: {e}")));
                }
            }
            Err(e) => {
                errors.push(failed(r, &format!("its result did not decode: {e}")));
                merger.add_lost();
            }
        }
    }
    let (result, mut windows, per_rank) = merger.finish(&at);
    windows.merge_ns = now_ns() - m0;
    windows.gathered_bytes = gathered_bytes as u64;
    Some(PointMerged {
        result,
        windows,
        per_rank,
        errors,
    })
}
