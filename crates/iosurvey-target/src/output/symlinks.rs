//! The kernel's `fs.protected_symlinks` rule, kept for output paths that
//! iosurvey resolves itself: a symlink in a sticky, world-writable
//! directory (`/tmp`) is followed only when it belongs to the follower or
//! to the directory's owner. Root would otherwise follow a link another
//! user planted in `/tmp` and replace whatever file it names (the path is
//! canonicalised in user space, which the kernel's check never sees).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks a resolution follows before it gives up (the
/// kernel's own limit); the open that follows then fails as usual.
const MAX_LINKS: usize = 40;

/// Walks `given` component by component, as the kernel resolves it, and
/// refuses it if it passes through a symlink that `fs.protected_symlinks`
/// would not let this process follow. Components that do not exist end
/// the walk: there is nothing left to follow.
pub fn check_protected_symlinks(given: &Path) -> Result<(), String> {
    let mut here = if given.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?
    };
    let mut todo: VecDeque<OsString> = parts(given);
    let mut links = 0;
    while let Some(part) = todo.pop_front() {
        if part == ".." {
            here.pop();
            continue;
        }
        let next = here.join(&part);
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            return Ok(());
        };
        if !meta.file_type().is_symlink() {
            here = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Ok(());
        }
        check_link(&next, meta.uid(), &here)?;
        let target = std::fs::read_link(&next).map_err(|e| e.to_string())?;
        if target.is_absolute() {
            here = PathBuf::from("/");
        }
        for p in parts(&target).into_iter().rev() {
            todo.push_front(p);
        }
    }
    Ok(())
}

/// The named parts of `p`, `..` kept, `.` and the root dropped.
fn parts(p: &Path) -> VecDeque<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// Refuses the symlink `link` (owned by `link_uid`) in the directory `dir`
/// when the directory is sticky and world-writable and the link belongs
/// neither to this process's user nor to the directory's owner.
fn check_link(link: &Path, link_uid: u32, dir: &Path) -> Result<(), String> {
    let Ok(d) = std::fs::metadata(dir) else {
        return Ok(());
    };
    let sticky_and_open = d.mode() & 0o1002 == 0o1002;
    let me = rustix::process::geteuid().as_raw();
    if !sticky_and_open || link_uid == me || link_uid == d.uid() {
        return Ok(());
    }
    Err(format!(
        "passes through the symlink {}, owned by uid {link_uid} in the sticky world-writable directory {}; \
         the kernel would not follow it for this user (fs.protected_symlinks), nor does iosurvey: give the real path",
        link.display(),
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_keep_parent_steps_and_drop_the_rest() {
        let p = parts(Path::new("/a/./b/../c"));
        assert_eq!(p, ["a", "b", "..", "c"].map(OsString::from));
    }

    #[test]
    fn a_path_without_symlinks_passes() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_protected_symlinks(&d.path().join("missing/r.json")).is_ok());
    }
}
