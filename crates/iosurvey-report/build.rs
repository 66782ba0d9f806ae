//! Names the commit the binary is built from (`iosurvey --version`, and
//! `tool.commit` in every report): `git rev-parse` in the source tree, or
//! nothing when it is not a git checkout (a source tarball).

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=IOSURVEY_COMMIT={commit}");
    // Built again when HEAD moves: a commit, a checkout, a pull.
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.git");
    for f in ["HEAD", "packed-refs"] {
        println!("cargo:rerun-if-changed={}", git.join(f).display());
    }
    if let Ok(head) = std::fs::read_to_string(git.join("HEAD")) {
        if let Some(r) = head.strip_prefix("ref: ") {
            println!("cargo:rerun-if-changed={}", git.join(r.trim()).display());
        }
    }
}
