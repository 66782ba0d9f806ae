//! How much memory this process may use: the limit of its memory cgroup
//! (v2 `memory.max`, or v1 `memory.limit_in_bytes`, on its own group and
//! every parent), or the memory the kernel says is available, whichever is
//! smaller. A plan over it is refused before it runs, rather than killed
//! by the OOM killer halfway.

use std::fs;
use std::path::{Path, PathBuf};

/// The memory the process may use, and where the figure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// For the refusal's line: "the memory cgroup's
    /// /sys/fs/cgroup/.../memory.max", "MemAvailable in /proc/meminfo",
    /// "--memory-limit".
    pub source: String,
}

/// The smaller of the cgroup's limit and the available memory.
pub fn process_limit() -> MemoryLimit {
    let available = mem_available().map(|bytes| MemoryLimit {
        bytes,
        source: "MemAvailable in /proc/meminfo".into(),
    });
    let cgroup = cgroup_limit();
    match (cgroup, available) {
        (Some(c), Some(a)) if c.bytes <= a.bytes => c,
        (_, Some(a)) => a,
        (Some(c), None) => c,
        (None, None) => MemoryLimit {
            bytes: u64::MAX,
            source: "no limit found (no /proc/meminfo)".into(),
        },
    }
}

/// MemAvailable from /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The tightest memory limit of the process's cgroup and its parents, v2
/// or v1, if any is set.
pub fn cgroup_limit() -> Option<MemoryLimit> {
    let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<MemoryLimit> = None;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let found = match (id, controllers) {
            ("0", "") => {
                cgroup_dir(&mounts, None, path).and_then(|dir| tightest(&dir, "memory.max"))
            }
            (_, c) if c.split(',').any(|c| c == "memory") => {
                cgroup_dir(&mounts, Some("memory"), path)
                    .and_then(|dir| tightest(&dir, "memory.limit_in_bytes"))
            }
            _ => None,
        };
        if let Some(f) = found {
            if best.as_ref().is_none_or(|b| f.bytes < b.bytes) {
                best = Some(f);
            }
        }
    }
    best
}

/// The directory of cgroup `path` in the mounted hierarchy: the cgroup2
/// mount (`controller` None), or the v1 mount whose options name
/// `controller`. The path is taken relative to the mount's own root.
fn cgroup_dir(mounts: &str, controller: Option<&str>, path: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fields: Vec<&str> = left.split(' ').collect();
        let (root, point) = (*fields.get(3)?, *fields.get(4)?);
        let mut right = right.split(' ');
        let (fstype, _source, options) = (right.next()?, right.next()?, right.next()?);
        let wanted = match controller {
            None => fstype == "cgroup2",
            Some(c) => fstype == "cgroup" && options.split(',').any(|o| o == c),
        };
        if !wanted {
            return None;
        }
        let rel = path.strip_prefix(root).unwrap_or(path);
        Some(Path::new(point).join(rel.trim_start_matches('/')))
    })
}

/// The smallest limit in file `name` of `dir` and of every parent up to the
/// hierarchy's root ("max", or v1's huge "unlimited" figure, is none).
fn tightest(dir: &Path, name: &str) -> Option<MemoryLimit> {
    let mut best: Option<MemoryLimit> = None;
    for d in dir.ancestors() {
        let Ok(text) = fs::read_to_string(d.join(name)) else {
            // Past the hierarchy's root (or a level without the file).
            if best.is_some() || !d.starts_with("/sys/fs/cgroup") {
                break;
            }
            continue;
        };
        let Ok(bytes) = text.trim().parse::<u64>() else {
            continue;
        };
        // v1 writes "no limit" as a figure near i64::MAX.
        if bytes >= 1 << 60 {
            continue;
        }
        if best.as_ref().is_none_or(|b| bytes < b.bytes) {
            best = Some(MemoryLimit {
                bytes,
                source: format!("the memory cgroup's {}", d.join(name).display()),
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
41 31 0:37 /inner /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids";

    #[test]
    fn the_v1_memory_hierarchy_is_found_by_its_options() {
        assert_eq!(
            cgroup_dir(MOUNTS, Some("memory"), "/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
        );
        assert_eq!(
            cgroup_dir(MOUNTS, None, "/"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }

    #[test]
    fn a_path_is_taken_relative_to_the_mounts_root() {
        assert_eq!(
            cgroup_dir(MOUNTS, Some("pids"), "/inner/x"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/x"))
        );
    }

    #[test]
    fn the_tightest_limit_of_a_group_and_its_parents_wins() {
        let root = tempfile::tempdir().unwrap();
        let child = root.path().join("a/b");
        fs::create_dir_all(&child).unwrap();
        fs::write(root.path().join("memory.max"), "max\n").unwrap();
        fs::write(root.path().join("a/memory.max"), "1048576\n").unwrap();
        fs::write(child.join("memory.max"), "4194304\n").unwrap();
        let l = tightest(&child, "memory.max").unwrap();
        assert_eq!(l.bytes, 1 << 20);
        assert!(l.source.contains("a/memory.max"), "{}", l.source);
    }

    #[test]
    fn the_process_has_some_limit() {
        assert!(process_limit().bytes > 0);
    }
}
