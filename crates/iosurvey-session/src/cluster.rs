//! The [`Cluster`] trait: what a run asks of the processes it runs on, and
//! [`Local`], one process, where every collective is the identity.

use crate::assign::{self, Assigned, RankInfo};
use crate::localize::Localized;
use crate::merge::Maps;
use iosurvey_workload::Plan;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A failure as it travels between ranks: its exit code (2 refused, 1 run
/// failed, 130 interrupted) and its line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    pub code: u8,
    pub text: String,
}

/// The text of a failure a rank other than 0 exits with: rank 0 prints
/// the real ones.
pub const SILENT: &str = "\u{0}silent";

/// The processes a plan runs on. Collectives are called by every rank
/// alike, from the main thread, in the same order.
pub trait Cluster {
    /// This process's rank (0 alone).
    fn rank(&self) -> usize;
    /// Every rank of the job, in rank order.
    fn ranks(&self) -> &[RankInfo];
    /// Waits for every rank.
    fn barrier(&self);
    /// The largest of each `v[i]` over the ranks, on every rank.
    fn max_u64s(&self, v: &[u64]) -> Vec<u64>;
    /// The largest `v` over the ranks, on every rank.
    fn max_u64(&self, v: u64) -> u64 {
        self.max_u64s(&[v])[0]
    }
    /// Sends rank 0 this rank's `bytes` (a point's part); rank 0 takes
    /// them with [`Cluster::recv_from`]. Alone: nothing to send to.
    fn send_to_root(&self, _bytes: &[u8]) {}
    /// On rank 0: what rank `r` sent with [`Cluster::send_to_root`],
    /// waited for. Alone: nothing.
    fn recv_from(&self, _r: usize) -> Vec<u8> {
        Vec::new()
    }
    /// Every rank's `bytes`, in rank order, on every rank.
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// Every rank's `bytes`, in rank order, on rank 0; `None` on the others.
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Sends rank 0 this rank's progress in a point: `[point + 1, elapsed
    /// ns, ops, bytes]`, without waiting for it to be received.
    fn send_live(&self, _v: [u64; 4]) {}
    /// On rank 0: the progress the other ranks sent since the last call.
    fn recv_live(&self) -> Vec<(usize, [u64; 4])> {
        Vec::new()
    }
    /// Ends every rank at once with `code`, after `why` on stderr: for a
    /// failure of one rank the others, waiting in a collective, cannot
    /// learn of (a bug, not a refusal: those are agreed on).
    fn abort(&self, why: &str, code: u8) -> !;
    /// What the run learnt of its ranks so far.
    fn learnt(&self) -> &Learnt;
    /// Marks the run's failure as one every rank reached together (so
    /// that each ends on its own, rank 0 saying why).
    fn mark_agreed(&self) {
        self.learnt().agreed.store(true, Ordering::Relaxed);
    }
    /// Whether the run's failure was reached by every rank together.
    fn was_agreed(&self) -> bool {
        self.learnt().agreed.load(Ordering::Relaxed)
    }
    /// Keeps the assignment of the command line's targets to ranks.
    fn keep_assigned(&self, assigned: Vec<Assigned>) {
        *self
            .learnt()
            .assigned
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = assigned;
    }
    /// The assignment [`Cluster::localize_targets`] made.
    fn assigned(&self) -> Vec<Assigned> {
        self.learnt()
            .assigned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
    /// The part of `plan` this rank runs, and how it maps to the plan.
    fn localize(&self, plan: &Plan) -> Result<Localized, String>;

    /// Whether this process is one of several ranks.
    fn distributed(&self) -> bool {
        self.ranks().len() > 1
    }
    /// Whether this rank reports (rank 0).
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    /// The smallest `v` over the ranks, on every rank.
    fn min_u64(&self, v: u64) -> u64 {
        u64::MAX - self.max_u64(u64::MAX - v)
    }
    /// Whether `flag` is set on any rank, on every rank.
    fn any(&self, flag: bool) -> bool {
        self.max_u64(u64::from(flag)) != 0
    }
    /// This rank's host name.
    fn host(&self) -> &str {
        &self.ranks()[self.rank()].host
    }
    /// A failure of this rank alone: said with its rank and host, then
    /// every rank ends with its exit code.
    fn end_alone(&self, code: u8, text: &str) -> ! {
        self.abort(&format!("on {}: {text}", self.host()), code)
    }

    /// The targets a mode's command line named, as the plan names them:
    /// each assigned to its rank (`host:path`, `{rank}`...). Under one
    /// rank, a target on this host loses its `host:` and placeholders take
    /// rank 0. The same command line and ranks give every rank the same
    /// verdict.
    fn localize_targets(&self, given: &[PathBuf]) -> Result<Vec<PathBuf>, Verdict> {
        let assigned = assign::assign(given, self.ranks()).map_err(|text| {
            self.mark_agreed();
            Verdict { code: 2, text }
        })?;
        let names = assigned.iter().map(|a| a.name.clone()).collect();
        self.keep_assigned(assigned);
        Ok(names)
    }
    /// The local paths of the targets assigned to this rank.
    fn local_targets(&self) -> Vec<PathBuf> {
        let me = self.rank();
        self.assigned()
            .into_iter()
            .filter(|a| a.owner == me)
            .map(|a| a.local)
            .collect()
    }

    /// All-reduces a step's outcome (`mine`, this rank's failure if any):
    /// `Ok` when every rank passed, else every rank fails with the worst
    /// code, and rank 0 says each failure with its ranks and hosts (the
    /// same one from several ranks, on one host or several, once); the
    /// others get [`SILENT`].
    fn agree(&self, mine: Option<Verdict>) -> Result<(), Verdict> {
        let failed = self.any(mine.is_some());
        if !failed {
            return Ok(());
        }
        let bytes = serde_json::to_vec(&mine).expect("a failure encodes");
        let all = self.all_gather(&bytes);
        let ranks = self.ranks();
        let mut code = 0u8;
        // One line per failure, with every rank (and host) that said it.
        let mut said: Vec<(String, Vec<usize>, Vec<&str>)> = Vec::new();
        for (r, b) in all.iter().enumerate() {
            if let Ok(Some(v)) = serde_json::from_slice::<Option<Verdict>>(b) {
                code = code.max(v.code);
                let host = ranks[r].host.as_str();
                match said.iter_mut().find(|(t, ..)| *t == v.text) {
                    Some((_, rs, hosts)) => {
                        rs.push(r);
                        if !hosts.contains(&host) {
                            hosts.push(host);
                        }
                    }
                    None => said.push((v.text, vec![r], vec![host])),
                }
            }
        }
        let lines: Vec<String> = said
            .into_iter()
            .map(|(text, rs, hosts)| {
                let rs: Vec<String> = rs.iter().map(usize::to_string).collect();
                let word = if rs.len() == 1 { "rank" } else { "ranks" };
                format!("{word} {} on {}: {text}", rs.join(", "), hosts.join(", "))
            })
            .collect();
        self.mark_agreed();
        Err(Verdict {
            // The codes a failure travels with: anything else is a run failure.
            code: match code {
                2 | 130 => code,
                _ => 1,
            },
            text: self.said_by_root(lines.join("\n")),
        })
    }
    /// `text` on rank 0, [`SILENT`] on the others (rank 0 says it).
    fn said_by_root(&self, text: String) -> String {
        match self.is_root() {
            true => text,
            false => SILENT.into(),
        }
    }
    /// Refuses a mode that runs on one host only when several ranks run.
    fn single_rank(&self, mode: &str) -> Result<(), Verdict> {
        if !self.distributed() {
            return Ok(());
        }
        self.mark_agreed();
        Err(Verdict {
            code: 2,
            text: format!(
                "{mode} runs on one host only; start it without mpirun (or with -n 1), or use run, parallel or survey across the {} ranks",
                self.ranks().len()
            ),
        })
    }
}

/// `list` as every rank read it for itself (a file of its own host), when
/// they all read the same; refused, on every rank, when they differ.
pub fn same_everywhere(cluster: &dyn Cluster, list: &[PathBuf], what: &str) -> Result<(), Verdict> {
    if !cluster.distributed() {
        return Ok(());
    }
    let mine = serde_json::to_vec(list).expect("paths encode");
    let all = cluster.all_gather(&mine);
    if all.iter().all(|b| *b == mine) {
        return Ok(());
    }
    cluster.mark_agreed();
    Err(Verdict {
        code: 2,
        text: cluster.said_by_root(format!("{what} differs between the ranks' hosts; make it the same on every host, or name the targets on the command line")),
    })
}

/// `f` of each target [`Cluster::localize_targets`] named, run by the rank
/// that owns it on its local path (a device can be probed only on its own
/// host), in the order of the targets, on every rank. A failure on any
/// rank fails every rank; rank 0 says each, with its rank and host.
pub fn probe_each<T>(
    cluster: &dyn Cluster,
    f: impl Fn(&Path) -> Result<T, Verdict>,
) -> Result<Vec<T>, Verdict>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let assigned = cluster.assigned();
    if !cluster.distributed() {
        return assigned.iter().map(|a| f(&a.local)).collect();
    }
    let me = cluster.rank();
    type Probed<T> = Vec<(usize, Result<T, Verdict>)>;
    let mine: Probed<T> = assigned
        .iter()
        .enumerate()
        .filter(|(_, a)| a.owner == me)
        .map(|(i, a)| (i, f(&a.local)))
        .collect();
    let bytes = serde_json::to_vec(&mine).expect("a probe encodes");
    let mut out: Vec<Option<T>> = assigned.iter().map(|_| None).collect();
    let mut code = 0u8;
    let mut lines = Vec::new();
    for (r, b) in cluster.all_gather(&bytes).iter().enumerate() {
        let got: Probed<T> = serde_json::from_slice(b).unwrap_or_else(|e| {
            cluster.abort(&format!(": rank {r}'s probes did not decode: {e}"), 70)
        });
        for (i, res) in got {
            match res {
                Ok(v) => out[i] = Some(v),
                Err(v) => {
                    code = code.max(v.code);
                    lines.push(format!(
                        "rank {r} on {}: {}",
                        cluster.ranks()[r].host,
                        v.text
                    ));
                }
            }
        }
    }
    if !lines.is_empty() {
        cluster.mark_agreed();
        return Err(Verdict {
            code: match code {
                1 | 130 => code,
                _ => 2,
            },
            text: cluster.said_by_root(lines.join("\n")),
        });
    }
    Ok(out
        .into_iter()
        .map(|v| v.expect("every target probed"))
        .collect())
}

/// One process: every collective is the identity, and a plan is its own
/// part.
pub struct Local {
    ranks: Vec<RankInfo>,
    learnt: Learnt,
}

/// What a run learns of its ranks, the same for every [`Cluster`].
#[derive(Debug, Default)]
pub struct Learnt {
    /// Set when a failure is one every rank reached together (so that
    /// each ends on its own, rank 0 saying why); any other failure of one
    /// rank ends every rank at once, since the others would wait for it
    /// in a collective.
    agreed: AtomicBool,
    /// The targets the mode's command line named, assigned to ranks.
    assigned: Mutex<Vec<Assigned>>,
}

impl Local {
    pub fn new() -> Local {
        Local {
            ranks: assign::rank_table(&[crate::host::host_name()]),
            learnt: Learnt::default(),
        }
    }
}

impl Default for Local {
    fn default() -> Self {
        Local::new()
    }
}

impl Cluster for Local {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> &[RankInfo] {
        &self.ranks
    }
    fn barrier(&self) {}
    fn max_u64s(&self, v: &[u64]) -> Vec<u64> {
        v.to_vec()
    }
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }
    fn abort(&self, why: &str, code: u8) -> ! {
        crate::host::say_line(format_args!("iosurvey: rank 0 {why}"));
        std::process::exit(i32::from(code))
    }
    fn learnt(&self) -> &Learnt {
        &self.learnt
    }
    /// One process's failure is the run's, as it is.
    fn agree(&self, mine: Option<Verdict>) -> Result<(), Verdict> {
        match mine {
            None => Ok(()),
            Some(v) => {
                self.mark_agreed();
                Err(v)
            }
        }
    }
    /// The whole plan, numbered as itself.
    fn localize(&self, plan: &Plan) -> Result<Localized, String> {
        let n = plan.points.first().map_or(0, |p| p.job.targets.len());
        let targets: Vec<usize> = (0..n).collect();
        let maps = plan
            .points
            .iter()
            .map(|p| Maps {
                streams: (0..p.job.streams.len()).collect(),
                targets: targets.clone(),
            })
            .collect();
        Ok(Localized {
            plan: plan.clone(),
            maps,
            targets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_runs_the_whole_plan_numbered_as_itself() {
        let one = Local::new();
        let names = one
            .localize_targets(&["/tmp/a".into(), "/tmp/b".into()])
            .unwrap();
        assert_eq!(names, [PathBuf::from("/tmp/a"), PathBuf::from("/tmp/b")]);
        assert_eq!(one.local_targets(), names);
        let mut spec = iosurvey_workload::modes::run::RunSpec::new(names);
        spec.size = Some(1 << 20);
        let plan = iosurvey_workload::modes::run::expand(&spec).unwrap();
        let l = one.localize(&plan).unwrap();
        assert_eq!(l.plan, plan);
        assert_eq!(l.targets, [0, 1]);
        assert_eq!(l.maps[0].streams, [0, 1]);
        assert_eq!(l.maps[0].targets, [0, 1]);
    }

    #[test]
    fn one_process_agrees_with_itself_and_probes_its_own_targets() {
        let one = Local::new();
        let failed = Verdict {
            code: 2,
            text: "refused".into(),
        };
        assert_eq!(one.agree(Some(failed.clone())), Err(failed));
        assert!(!one.any(false));
        assert_eq!(one.min_u64(7), 7);
        assert!(one.single_rank("quick").is_ok());
        one.localize_targets(&["/x".into(), "/y".into()]).unwrap();
        let probed = probe_each(&one, |p| Ok(p.display().to_string())).unwrap();
        assert_eq!(probed, ["/x", "/y"]);
        let refused = probe_each(&one, |p| -> Result<u8, Verdict> {
            Err(Verdict {
                code: 1,
                text: p.display().to_string(),
            })
        });
        assert_eq!(refused.unwrap_err().text, "/x");
    }

    #[test]
    fn a_target_on_another_host_is_refused_and_marked_agreed() {
        let one = Local::new();
        let e = one
            .localize_targets(&["no-such-host-here:/dev/x".into()])
            .unwrap_err();
        assert_eq!(e.code, 2);
        assert!(one.was_agreed());
    }
}
