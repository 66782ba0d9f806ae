//! Names the commit the binary is built from (`iosurvey --version`, and
//! `tool.commit` in every report): `git rev-parse` in the source tree, or
//! nothing when the tree is not a git checkout of its own (a source
//! tarball, even one unpacked inside another repository).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git ARGS` in `dir`, its output trimmed; `None` when git fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).ok())
        .flatten()
        .map(|s| s.trim().to_string())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let own = git(&root, &["rev-parse", "--show-toplevel"])
        .and_then(|t| PathBuf::from(t).canonicalize().ok())
        .is_some_and(|t| t == root);
    let commit = own
        .then(|| git(&root, &["rev-parse", "--short=12", "HEAD"]))
        .flatten()
        .unwrap_or_default();
    println!("cargo:rustc-env=IOSURVEY_COMMIT={commit}");
    // Built again when HEAD moves (a commit, a checkout, a pull): the
    // files that say where it is, those that exist (cargo runs a build
    // script again every time for a path that is missing).
    let mut watched = Vec::new();
    if own {
        let dir =
            |arg| git(&root, &["rev-parse", "--path-format=absolute", arg]).map(PathBuf::from);
        if let (Some(git_dir), Some(common)) = (dir("--git-dir"), dir("--git-common-dir")) {
            watched.push(git_dir.join("HEAD"));
            watched.push(common.join("packed-refs"));
            if let Some(r) = git(&root, &["symbolic-ref", "-q", "HEAD"]) {
                watched.push(common.join(r));
            }
        }
    }
    watched.retain(|p| p.exists());
    if watched.is_empty() {
        println!("cargo:rerun-if-changed=build.rs");
    }
    for p in watched {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
