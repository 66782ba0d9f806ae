//! Signature probes with util-linux, trusting nothing of the caller's
//! environment: the binaries are found at fixed system paths (root-owned,
//! not writable by group or others), run with a cleared environment, and
//! probe the descriptor iosurvey holds (`/proc/<pid>/fd/<n>`), not a path
//! that may since name something else.

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

/// Where the system's blkid may be.
pub const BLKID: &[&str] = &[
    "/usr/sbin/blkid",
    "/sbin/blkid",
    "/usr/bin/blkid",
    "/bin/blkid",
];
/// Where the system's wipefs may be.
pub const WIPEFS: &[&str] = &[
    "/usr/sbin/wipefs",
    "/sbin/wipefs",
    "/usr/bin/wipefs",
    "/bin/wipefs",
];

/// The PATH the probes run with.
const SYSTEM_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// The first of `candidates` that is a regular, executable file owned by
/// root and writable by no one else.
pub fn trusted(candidates: &[&'static str]) -> Option<&'static str> {
    candidates.iter().copied().find(|p| {
        std::fs::metadata(p).is_ok_and(|m| {
            m.is_file() && m.uid() == 0 && m.mode() & 0o022 == 0 && m.mode() & 0o111 != 0
        })
    })
}

/// Why a probe could not tell.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("blkid (util-linux) is not installed at a system path")]
    NoBlkid,
    #[error("blkid failed: {0}")]
    Failed(String),
}

fn command(bin: &str) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

/// The name under which a child process can open what `fd` holds.
pub fn proc_fd(fd: impl AsFd) -> String {
    format!("/proc/{}/fd/{}", std::process::id(), fd.as_fd().as_raw_fd())
}

/// Probes the device open at `fd` for signatures: `blkid -p` first, then
/// `wipefs --no-act`, which also sees what blkid ignores (a backup GPT
/// header once the primary is gone). `Ok(Some(what))` when one is found,
/// `Ok(None)` when none is.
pub fn probe_fd(fd: impl AsFd) -> Result<Option<String>, ProbeError> {
    let dev = proc_fd(fd);
    if let Some(found) = probe_blkid(&dev)? {
        return Ok(Some(found));
    }
    Ok(probe_wipefs(&dev))
}

/// `wipefs --no-act --noheadings --output TYPE`: one signature type per
/// line. `None` when it finds nothing or is not installed.
fn probe_wipefs(dev: &str) -> Option<String> {
    let out = command(trusted(WIPEFS)?)
        .args(["--no-act", "--noheadings", "--output", "TYPE"])
        .arg(dev)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut types: Vec<&str> = text.split_whitespace().collect();
    types.dedup();
    (out.status.success() && !types.is_empty()).then(|| format!("{} signature", types.join(", ")))
}

fn probe_blkid(dev: &str) -> Result<Option<String>, ProbeError> {
    let bin = trusted(BLKID).ok_or(ProbeError::NoBlkid)?;
    let out = command(bin)
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()
        .map_err(|e| ProbeError::Failed(format!("{bin}: {e}")))?;
    match out.status.code() {
        Some(0) => Ok(Some(describe_blkid(&String::from_utf8_lossy(&out.stdout)))),
        // 2: nothing found.
        Some(2) => Ok(None),
        _ => {
            // blkid refuses ambiguous probes (several signatures) with exit
            // code 8 on some versions: that is still a signature.
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("ambivalent") || out.status.code() == Some(8) {
                Ok(Some("several conflicting signatures".into()))
            } else {
                Err(ProbeError::Failed(err.trim().to_string()))
            }
        }
    }
}

/// `TYPE=ext4\nPTTYPE=gpt` -> `"ext4 signature and gpt partition table"`.
pub(crate) fn describe_blkid(export: &str) -> String {
    let mut parts = Vec::new();
    for line in export.lines() {
        if let Some((k, v)) = line.split_once('=') {
            match k {
                "TYPE" => parts.push(format!("{v} signature")),
                "PTTYPE" => parts.push(format!("{v} partition table")),
                _ => {}
            }
        }
    }
    if parts.is_empty() {
        "a signature".into()
    } else {
        parts.join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blkid_output_is_described() {
        assert_eq!(
            describe_blkid("DEVNAME=/dev/loop3\nTYPE=ext4\nUSAGE=filesystem\n"),
            "ext4 signature"
        );
        assert_eq!(
            describe_blkid("PTUUID=x\nPTTYPE=gpt\n"),
            "gpt partition table"
        );
    }

    #[test]
    fn only_root_owned_unwritable_binaries_are_trusted() {
        let d = tempfile::tempdir().unwrap();
        let fake = d.path().join("blkid");
        std::fs::write(&fake, "#!/bin/sh\nexit 2\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o777)).unwrap();
        let leaked: &'static str = Box::leak(fake.to_str().unwrap().to_string().into_boxed_str());
        assert_eq!(trusted(&[leaked]), None, "a world-writable binary");
        assert_eq!(trusted(&["/nonexistent/blkid"]), None);
    }
}
