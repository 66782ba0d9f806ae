//! The machine as tests see it: root, tools on the PATH, commands run for
//! set-up, names no other test uses, incompressible bytes, a device's sysfs
//! files and its contents.

use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

pub const MIB: u64 = 1 << 20;

static DEVICE_LOCK: Mutex<()> = Mutex::new(());

/// Serialises the tests of one test binary (a failed test poisons nothing).
pub fn serial() -> MutexGuard<'static, ()> {
    DEVICE_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn require_root() -> Result<(), String> {
    if rustix::process::geteuid().is_root() {
        Ok(())
    } else {
        Err("needs root to create loop and zram devices".into())
    }
}

/// Whether the program `name` is on the PATH.
pub fn require_tool(name: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join(name).is_file()) {
        Ok(())
    } else {
        Err(format!("{name} is not installed (not on the PATH)"))
    }
}

/// Root and every one of `tools`.
pub fn require_root_and(tools: &[&str]) -> Result<(), String> {
    require_root()?;
    tools.iter().try_for_each(|t| require_tool(t))
}

/// Runs a setup command; its stdout, or an error naming the command and its
/// stderr.
pub fn sh(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Like `sh`, but a failure fails the test (for steps that must work once
/// the test's tools are there).
pub fn must(program: &str, args: &[&str]) -> String {
    sh(program, args).unwrap_or_else(|e| panic!("{e}"))
}

/// A name no other test (or test process) uses at the same time.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Pseudo-random, incompressible bytes (splitmix64), different per seed.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed ^ 0x5851_f42d_4c95_7f2d;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// `/sys/block/NAME` of a device node such as `/dev/loop3`.
pub fn sysfs_dir(dev: &Path) -> PathBuf {
    Path::new("/sys/block").join(dev.file_name().expect("device name"))
}

pub fn sysfs_read(dev: &Path, rel: &str) -> String {
    let p = sysfs_dir(dev).join(rel);
    fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
        .trim()
        .to_string()
}

/// Write I/Os the device has completed (field 5 of its `stat`): what a
/// test watches to see a run write, without opening anything the guard
/// would count as a use.
pub fn writes_done(dev: &Path) -> u64 {
    let stat = sysfs_read(dev, "stat");
    let field = stat.split_whitespace().nth(4).expect("a stat line");
    field.parse().expect("a count of writes")
}

/// "MAJ:MIN" of a block device, as blkio throttle files want it.
pub fn maj_min(dev: &Path) -> String {
    sysfs_read(dev, "dev")
}

pub fn read_device(dev: &Path) -> Vec<u8> {
    fs::read(dev).unwrap_or_else(|e| panic!("reading {}: {e}", dev.display()))
}

/// A checksum of the first `len` bytes of a device (or of all of it).
pub fn checksum(dev: &Path, len: Option<u64>) -> u64 {
    let f = fs::File::open(dev).unwrap_or_else(|e| panic!("opening {}: {e}", dev.display()));
    let mut r = f.take(len.unwrap_or(u64::MAX));
    let mut h = DefaultHasher::new();
    let mut buf = vec![0u8; MIB as usize];
    loop {
        let n = r
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dev.display()));
        if n == 0 {
            break;
        }
        h.write(&buf[..n]);
    }
    h.finish()
}

/// `blkid -p -o export DEV`: the `KEY=value` lines of what a low-level
/// probe finds, empty when it finds nothing (exit code 2).
pub fn blkid_probe(dev: &Path) -> String {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()
        .expect("running blkid");
    match out.status.code() {
        Some(0) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Some(2) => String::new(),
        _ => panic!(
            "blkid -p {} failed: {}",
            dev.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Fills the filesystem holding `dir`: its blocks (one file written until
/// ENOSPC), then its inodes (empty files made until ENOSPC); then frees
/// `spare` inodes again. What was made, for removal.
pub fn fill_filesystem(dir: &Path, spare: usize) -> Vec<PathBuf> {
    use std::io::Write;
    let mut made = Vec::new();
    let big = dir.join("filler");
    if let Ok(mut f) = std::fs::File::create(&big) {
        let chunk = vec![7u8; 64 << 10];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.write_all(&[7u8; 512]);
        made.push(big);
    }
    for i in 0.. {
        let p = dir.join(format!("inode-filler-{i}"));
        if std::fs::File::create(&p).is_err() {
            break;
        }
        made.push(p);
    }
    for _ in 0..spare {
        if let Some(p) = made.pop() {
            let _ = std::fs::remove_file(p);
        }
    }
    made
}

/// `s` of a path that tests make (always UTF-8).
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
