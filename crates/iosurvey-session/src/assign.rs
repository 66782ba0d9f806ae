//! Which rank runs which target. A target says where it runs:
//! - `host:path`, sgpdd-survey's own syntax: the ranks on `host` (its
//!   short or full name) take that host's targets in rank order;
//! - a path with `{rank}`, `{host}` or `{local_rank}`: one target per rank,
//!   each rank its own file or directory (IOR's file-per-process).
//!
//! A plain path under more than one rank is refused (every rank would run
//! the same target), and so is a host with no rank on it, before any I/O.
//! Every rank computes the same assignment from the same targets and the
//! same table of ranks.

use std::path::{Path, PathBuf};

/// One rank of the job: its number, its host's name, and its number among
/// the ranks on that host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    pub rank: usize,
    pub host: String,
    pub local_rank: usize,
}

/// The table of ranks from every rank's host name, in rank order: local
/// ranks count the earlier ranks on the same host.
pub fn rank_table(hosts: &[String]) -> Vec<RankInfo> {
    hosts
        .iter()
        .enumerate()
        .map(|(rank, host)| RankInfo {
            rank,
            host: host.clone(),
            local_rank: hosts[..rank].iter().filter(|h| *h == host).count(),
        })
        .collect()
}

/// A target of the whole job: its name in the report (`host:path`), the
/// path its rank opens, and that rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assigned {
    pub name: PathBuf,
    pub local: PathBuf,
    pub owner: usize,
}

const PLACEHOLDERS: [&str; 3] = ["{rank}", "{host}", "{local_rank}"];

/// `host:/path` split, when `t` is one: a host name (letters, digits,
/// `-`, `.`, `_`) before the first colon, and an absolute path after it.
/// `./a:b`, `/x/a:b` or `a:b` (a file of that name) are plain paths.
pub fn split_host(t: &Path) -> Option<(&str, &Path)> {
    let s = t.to_str()?;
    let (host, path) = s.split_once(':')?;
    let ok = !host.is_empty()
        && path.starts_with('/')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        && host
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    ok.then(|| (host, Path::new(path)))
}

/// The name before the first dot.
fn short(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}

/// Whether a target's `host` names the host a rank runs on (`name`), by
/// its full or its short name.
pub fn same_host(host: &str, name: &str) -> bool {
    host == name || (short(host) == short(name) && (!host.contains('.') || !name.contains('.')))
}

fn has_placeholder(t: &Path) -> bool {
    t.to_str()
        .is_some_and(|s| PLACEHOLDERS.iter().any(|p| s.contains(p)))
}

/// `t` with the placeholders of rank `r`.
fn expand(t: &str, r: &RankInfo) -> String {
    t.replace("{rank}", &r.rank.to_string())
        .replace("{local_rank}", &r.local_rank.to_string())
        .replace("{host}", &r.host)
}

/// Assigns `targets` (as the user gave them) to the ranks of `ranks`.
/// Errors are one line each, for exit 2.
pub fn assign(targets: &[PathBuf], ranks: &[RankInfo]) -> Result<Vec<Assigned>, String> {
    let many = ranks.len() > 1;
    let mut out: Vec<Assigned> = Vec::new();
    // Targets given so far per host, to share them out in rank order.
    let mut per_host: Vec<(String, usize)> = Vec::new();
    for t in targets {
        if let Some((host, path)) = split_host(t) {
            if has_placeholder(path) {
                return Err(format!(
                    "{}: give a host (host:path) or placeholders ({{rank}}, {{host}}, {{local_rank}}), not both",
                    t.display()
                ));
            }
            let on: Vec<&RankInfo> = ranks.iter().filter(|r| same_host(host, &r.host)).collect();
            if on.is_empty() {
                let hosts: Vec<&str> = dedup(ranks.iter().map(|r| r.host.as_str()));
                return Err(format!(
                    "{}: no rank runs on host {host} (the ranks run on {}); start a rank there (mpirun --host, a hostfile) or name one of these hosts",
                    t.display(),
                    hosts.join(", ")
                ));
            }
            let key = on[0].host.clone();
            let n = match per_host.iter_mut().find(|(h, _)| *h == key) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    per_host.push((key.clone(), 1));
                    0
                }
            };
            let owner = on[n % on.len()].rank;
            // One rank: the target is this host's own, named as a path.
            let name = if many {
                PathBuf::from(format!("{key}:{}", path.display()))
            } else {
                path.to_path_buf()
            };
            out.push(Assigned {
                name,
                local: path.to_path_buf(),
                owner,
            });
        } else if has_placeholder(t) {
            let s = t.to_str().unwrap_or_default();
            for r in ranks {
                let local = PathBuf::from(expand(s, r));
                let name = if many {
                    PathBuf::from(format!("{}:{}", r.host, local.display()))
                } else {
                    local.clone()
                };
                out.push(Assigned {
                    name,
                    local,
                    owner: r.rank,
                });
            }
        } else if many {
            return Err(format!(
                "{}: {} ranks would all run this same target; give each rank its own with {{rank}} (e.g. {}.{{rank}}), or name hosts as host:path",
                t.display(),
                ranks.len(),
                t.display()
            ));
        } else {
            out.push(Assigned {
                name: t.clone(),
                local: t.clone(),
                owner: 0,
            });
        }
    }
    // Under one rank the write guard refuses a target named twice (and
    // its aliases); across ranks, only this can see it.
    for (i, a) in out.iter().enumerate().filter(|_| many) {
        if let Some(b) = out[..i].iter().find(|b| b.name == a.name) {
            return Err(format!(
                "{}: named twice (ranks {} and {} would share it); {{host}} alone is not enough with several ranks on a host: add {{rank}} or {{local_rank}}",
                a.name.display(),
                b.owner,
                a.owner
            ));
        }
    }
    Ok(out)
}

fn dedup<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for h in it {
        if !v.contains(&h) {
            v.push(h);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(hosts: &[&str]) -> Vec<RankInfo> {
        rank_table(&hosts.iter().map(|h| h.to_string()).collect::<Vec<_>>())
    }

    fn p(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    fn owners(a: &[Assigned]) -> Vec<(String, String, usize)> {
        a.iter()
            .map(|a| {
                (
                    a.name.display().to_string(),
                    a.local.display().to_string(),
                    a.owner,
                )
            })
            .collect()
    }

    #[test]
    fn local_ranks_count_the_earlier_ranks_on_the_same_host() {
        let t = table(&["a", "b", "a", "a"]);
        let l: Vec<usize> = t.iter().map(|r| r.local_rank).collect();
        assert_eq!(l, [0, 0, 1, 2]);
    }

    #[test]
    fn host_targets_go_to_the_ranks_on_their_host_in_rank_order() {
        let t = table(&["n1", "n2", "n1.lab.org", "n2"]);
        let a = assign(&p(&["n2:/dev/sdb", "n2:/dev/sdc", "n2:/dev/sdd"]), &t).unwrap();
        assert_eq!(
            owners(&a),
            [
                ("n2:/dev/sdb".into(), "/dev/sdb".into(), 1),
                ("n2:/dev/sdc".into(), "/dev/sdc".into(), 3),
                ("n2:/dev/sdd".into(), "/dev/sdd".into(), 1),
            ]
        );
        let t = table(&["n1.lab.org", "n2.lab.org"]);
        let a = assign(&p(&["n2:/dev/sdb", "n1.lab.org:/dev/sdb"]), &t).unwrap();
        assert_eq!(a[0].owner, 1);
        assert_eq!(a[0].name, Path::new("n2.lab.org:/dev/sdb"));
        assert_eq!(a[1].owner, 0);
        assert!(same_host("n1", "n1.lab.org") && same_host("n1.lab.org", "n1"));
        assert!(!same_host("n1.lab.org", "n1.other.org"));
    }

    #[test]
    fn placeholders_give_each_rank_its_own_target() {
        let t = table(&["a", "a", "b"]);
        let a = assign(&p(&["/mnt/f.{rank}", "/tmp/{host}-{local_rank}"]), &t).unwrap();
        assert_eq!(
            owners(&a),
            [
                ("a:/mnt/f.0".into(), "/mnt/f.0".into(), 0),
                ("a:/mnt/f.1".into(), "/mnt/f.1".into(), 1),
                ("b:/mnt/f.2".into(), "/mnt/f.2".into(), 2),
                ("a:/tmp/a-0".into(), "/tmp/a-0".into(), 0),
                ("a:/tmp/a-1".into(), "/tmp/a-1".into(), 1),
                ("b:/tmp/b-0".into(), "/tmp/b-0".into(), 2),
            ]
        );
    }

    #[test]
    fn one_rank_keeps_plain_paths_and_strips_its_own_host() {
        let t = table(&["vm"]);
        let a = assign(&p(&["/dev/sdb", "vm:/dev/sdc", "/x/f.{rank}"]), &t).unwrap();
        assert_eq!(
            owners(&a),
            [
                ("/dev/sdb".into(), "/dev/sdb".into(), 0),
                ("/dev/sdc".into(), "/dev/sdc".into(), 0),
                ("/x/f.0".into(), "/x/f.0".into(), 0),
            ]
        );
    }

    #[test]
    fn what_cannot_be_assigned_is_refused_in_one_line() {
        let t = table(&["a", "b"]);
        for (targets, needle) in [
            (&["/dev/sdb"][..], "{rank}"),
            (
                &["c:/dev/sdb"][..],
                "no rank runs on host c (the ranks run on a, b)",
            ),
            (&["a:/x/{rank}"][..], "not both"),
            (&["/x/{host}", "a:/x/a"][..], "named twice"),
        ] {
            let e = assign(&p(targets), &t).unwrap_err();
            assert!(e.contains(needle), "{targets:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // {host} alone with two ranks on one host.
        let e = assign(&p(&["/x/{host}"]), &table(&["a", "a"])).unwrap_err();
        assert!(e.contains("named twice"), "{e}");
    }

    #[test]
    fn only_a_host_like_prefix_makes_a_host() {
        assert_eq!(
            split_host(Path::new("node-1.x:/dev/sdb")),
            Some(("node-1.x", Path::new("/dev/sdb")))
        );
        for plain in ["/mnt/a:b", "./a:b", ":x", "a:", "-a:/x", "vm:foo", "a:b/c"] {
            assert_eq!(split_host(Path::new(plain)), None, "{plain}");
        }
    }
}
