//! The write guard: what iosurvey refuses to write to, checked in the target
//! layer so every mode inherits it.
//!
//! - `--readonly` refuses every write workload.
//! - Block devices are written only with `--allow-destroy`, and even then not
//!   when the device or one of its partitions is mounted, is active swap, or
//!   has holders (LVM, md, dm), nor when it carries a filesystem, partition
//!   table, RAID, LVM or swap signature (found by util-linux's `blkid -p`)
//!   unless `--force` is added. `--force` never overrides a mount or holder.
//! - Existing files are overwritten only if iosurvey created them (marked
//!   with an extended attribute) or with `--allow-destroy`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the user allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritePolicy {
    pub allow_destroy: bool,
    pub force: bool,
    pub readonly: bool,
}

/// Why a write was refused. Each message names the reason and the way out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{0}: --readonly refuses write workloads")]
    ReadOnly(PathBuf),
    #[error("{0}: refusing to write to a block device without --allow-destroy; it would destroy its data")]
    BlockDevice(PathBuf),
    #[error("{0}: refusing to overwrite an existing file iosurvey did not create; add --allow-destroy, or name a new file with --size")]
    ForeignFile(PathBuf),
    #[error("{path}: {dev} is mounted at {mountpoint}; unmount it or pick another device (--force does not override this)")]
    Mounted {
        path: PathBuf,
        dev: String,
        mountpoint: String,
    },
    #[error("{path}: {dev} is in use as swap; swapoff it or pick another device (--force does not override this)")]
    Swap { path: PathBuf, dev: String },
    #[error("{path}: {dev} is held by {holders} (LVM, md or dm); release it or pick another device (--force does not override this)")]
    Held {
        path: PathBuf,
        dev: String,
        holders: String,
    },
    #[error("{path}: {dev} holds data ({what}); wipe it first or add --force to destroy it")]
    Signature {
        path: PathBuf,
        dev: String,
        what: String,
    },
    #[error("{0}: cannot check the device for filesystem or partition signatures: blkid (util-linux) is not installed; install it or add --force")]
    NoProber(PathBuf),
}

/// The kernel's view of a block device and its partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockNode {
    /// Kernel name, e.g. `loop3` or `loop3p1`.
    pub name: String,
    /// `major:minor`.
    pub devno: String,
}

/// The device `major:minor` and its partitions, from sysfs.
pub fn block_family(major: u32, minor: u32) -> Vec<BlockNode> {
    let devno = format!("{major}:{minor}");
    let dir = PathBuf::from(format!("/sys/dev/block/{devno}"));
    let name = std::fs::canonicalize(&dir)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| devno.clone());
    let mut out = vec![BlockNode {
        name: name.clone(),
        devno,
    }];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(d) = std::fs::read_to_string(p.join("dev")) {
                    out.push(BlockNode {
                        name: e.file_name().to_string_lossy().into_owned(),
                        devno: d.trim().to_string(),
                    });
                }
            }
        }
    }
    out
}

/// Mount points by `major:minor`, from a mountinfo text.
fn mounts_of(mountinfo: &str, devno: &str) -> Option<String> {
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&devno)).then(|| f.get(4).unwrap_or(&"?").to_string())
    })
}

/// Checks that `path`, a block device `major:minor`, may be written.
pub fn check_block_write(
    path: &Path,
    major: u32,
    minor: u32,
    policy: WritePolicy,
) -> Result<(), Refusal> {
    if policy.readonly {
        return Err(Refusal::ReadOnly(path.to_path_buf()));
    }
    if !policy.allow_destroy {
        return Err(Refusal::BlockDevice(path.to_path_buf()));
    }
    let family = block_family(major, minor);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for node in &family {
        let dev = format!("/dev/{}", node.name);
        if let Some(mountpoint) = mounts_of(&mountinfo, &node.devno) {
            return Err(Refusal::Mounted {
                path: path.to_path_buf(),
                dev,
                mountpoint,
            });
        }
        if swaps
            .lines()
            .skip(1)
            .any(|l| l.split_whitespace().next() == Some(dev.as_str()))
        {
            return Err(Refusal::Swap {
                path: path.to_path_buf(),
                dev,
            });
        }
        let holders: Vec<String> =
            std::fs::read_dir(format!("/sys/dev/block/{}/holders", node.devno))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
        if !holders.is_empty() {
            return Err(Refusal::Held {
                path: path.to_path_buf(),
                dev,
                holders: holders.join(", "),
            });
        }
    }
    if policy.force {
        return Ok(());
    }
    for node in &family {
        let dev = format!("/dev/{}", node.name);
        let probe_path = if node.devno == family[0].devno {
            path.to_path_buf()
        } else {
            PathBuf::from(&dev)
        };
        if let Some(what) =
            probe_signature(&probe_path).map_err(|_| Refusal::NoProber(path.to_path_buf()))?
        {
            return Err(Refusal::Signature {
                path: path.to_path_buf(),
                dev,
                what,
            });
        }
    }
    Ok(())
}

/// Probes `dev` for signatures with util-linux: `blkid -p` first, then
/// `wipefs --no-act`, which also sees what blkid ignores (a backup GPT
/// header once the primary is gone). `Ok(Some(what))` when one is found,
/// `Ok(None)` when none is, `Err` when blkid cannot be run.
pub fn probe_signature(dev: &Path) -> Result<Option<String>, std::io::Error> {
    if let Some(found) = probe_blkid(dev)? {
        return Ok(Some(found));
    }
    Ok(probe_wipefs(dev))
}

/// `wipefs --no-act --noheadings --output TYPE`: one signature type per
/// line. `None` when it finds nothing or is not installed.
fn probe_wipefs(dev: &Path) -> Option<String> {
    let out = Command::new("wipefs")
        .args(["--no-act", "--noheadings", "--output", "TYPE"])
        .arg(dev)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut types: Vec<&str> = text.split_whitespace().collect();
    types.dedup();
    (out.status.success() && !types.is_empty()).then(|| format!("{} signature", types.join(", ")))
}

fn probe_blkid(dev: &Path) -> Result<Option<String>, std::io::Error> {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()?;
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
                Err(std::io::Error::other(err.trim().to_string()))
            }
        }
    }
}

/// `TYPE=ext4\nPTTYPE=gpt` -> `"an ext4 signature, a gpt partition table"`.
fn describe_blkid(export: &str) -> String {
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

/// The extended attribute that marks a file iosurvey created.
pub const CREATED_XATTR: &str = "user.iosurvey.created";

/// Marks a file or directory iosurvey created, so that a later run may
/// write or remove it without --allow-destroy. Filesystems without user
/// xattrs leave it unmarked.
pub fn mark_created(fd: impl std::os::fd::AsFd) {
    let _ = rustix::fs::fsetxattr(fd, CREATED_XATTR, b"1", rustix::fs::XattrFlags::empty());
}

/// Whether the file or directory open at `fd` carries iosurvey's mark.
/// Judged on the descriptor held, never on a path that may have changed.
pub fn fd_is_marked(fd: impl std::os::fd::AsFd) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::fgetxattr(fd, CREATED_XATTR, &mut buf[..]).is_ok()
}

/// Creates a new file at `path` with `O_CREAT|O_EXCL|O_NOFOLLOW` (so it
/// never follows a symlink and never opens what is already there), for
/// writing plus `extra` flags, and marks it as iosurvey's.
pub fn create_new_marked(
    path: &Path,
    extra: rustix::fs::OFlags,
) -> Result<std::os::fd::OwnedFd, rustix::io::Errno> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC | extra,
        Mode::from_raw_mode(0o644),
    )?;
    mark_created(&fd);
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_is_matched_by_device_number() {
        let mi = "36 25 7:3 / /mnt/x rw,relatime shared:1 - ext4 /dev/loop3 rw\n22 1 253:0 / / rw - ext4 /dev/vda rw\n";
        assert_eq!(mounts_of(mi, "7:3").as_deref(), Some("/mnt/x"));
        assert_eq!(mounts_of(mi, "7:30"), None);
    }

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
    fn create_new_never_follows_a_symlink_nor_opens_what_exists() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"user data").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("elsewhere"), &dangling).unwrap();
        let none = rustix::fs::OFlags::empty();
        assert!(create_new_marked(&victim, none).is_err());
        assert!(create_new_marked(&link, none).is_err());
        assert!(create_new_marked(&dangling, none).is_err());
        assert!(!d.path().join("elsewhere").exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"user data");
        let fresh = d.path().join("fresh");
        let fd = create_new_marked(&fresh, none).unwrap();
        let xattrs =
            rustix::fs::fsetxattr(&fd, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok();
        assert_eq!(fd_is_marked(&fd), xattrs);
    }

    #[test]
    fn readonly_and_allow_destroy_come_first() {
        let p = Path::new("/dev/nonexistent");
        let ro = WritePolicy {
            readonly: true,
            allow_destroy: true,
            force: true,
        };
        assert_eq!(
            check_block_write(p, 7, 999, ro),
            Err(Refusal::ReadOnly(p.into()))
        );
        assert_eq!(
            check_block_write(p, 7, 999, WritePolicy::default()),
            Err(Refusal::BlockDevice(p.into()))
        );
    }
}
