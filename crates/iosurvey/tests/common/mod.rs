//! Shared code of the root-only device tests (`devices.rs`,
//! `guard_devices.rs`): skipping when a test cannot run, guards that create
//! devices, mounts and cgroups and remove them again on drop (also when an
//! assertion fails), and helpers that run iosurvey and read its report.
//!
//! Each test binary uses a subset of this module.
#![allow(dead_code)]

use serde_json::Value;
use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_iosurvey");
pub const MIB: u64 = 1 << 20;

/// Prints why a test does not run and returns from it; under CI (`CI`
/// set), where `.ci/run` installs everything the tests need, a skip is a
/// failure, so a test never passes by not running.
macro_rules! skip {
    ($($arg:tt)*) => {{
        let why = format!($($arg)*);
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false") {
            panic!("would skip under CI: {why}");
        }
        eprintln!("skipping: {why}");
        return;
    }};
}

/// Unwraps a setup result, or skips the test with the reason.
macro_rules! need {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reason) => skip!("{}", reason),
        }
    };
}

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

/// `mkfs.ext4 -q -F DEV`.
pub fn mkfs_ext4(dev: &Path) {
    must("mkfs.ext4", &["-q", "-F", path_str(dev)]);
}

/// An ext4 with every inode table and the journal written at mkfs time, so
/// that mounting it starts no background writes.
pub fn mkfs_ext4_settled(dev: &Path) {
    must(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
            path_str(dev),
        ],
    );
}

/// A run in the background, killed and waited for on drop (when an
/// assertion failed); take the child out to wait for it.
pub struct Running(pub Option<std::process::Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
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

// ---------------------------------------------------------------------------
// Loop devices
// ---------------------------------------------------------------------------

/// What a new loop device's backing file holds.
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// Incompressible bytes from `random_bytes(size, seed)`.
    Random(u64),
    /// Zeros (a sparse file): a device that was never formatted.
    Zero,
}

/// A loop device, detached on drop. Made by `new`/`create` over a file in a
/// private directory (on tmpfs when /dev/shm exists, so that the device is
/// fast and the machine's disk stays out of it; removed after the detach),
/// or by `attach` over a file the caller owns.
pub struct LoopDev {
    dev: PathBuf,
    pub size: u64,
    // Dropped after `Drop::drop` has detached the device.
    _dir: Option<tempfile::TempDir>,
}

impl LoopDev {
    /// Random data, attached with `--direct-io=on`.
    pub fn new(size: u64, seed: u64) -> Result<LoopDev, String> {
        LoopDev::create(size, Fill::Random(seed), &["--direct-io=on"])
    }

    /// A zero-filled device, attached with the extra losetup options `opts`
    /// (e.g. `-P` to scan for partitions).
    pub fn blank(size: u64, opts: &[&str]) -> Result<LoopDev, String> {
        LoopDev::create(size, Fill::Zero, opts)
    }

    pub fn create(size: u64, fill: Fill, opts: &[&str]) -> Result<LoopDev, String> {
        require_root()?;
        let dir = match tempfile::Builder::new()
            .prefix("iosurvey-devtest")
            .tempdir_in("/dev/shm")
        {
            Ok(d) => d,
            Err(_) => tempfile::Builder::new()
                .prefix("iosurvey-devtest")
                .tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))?,
        };
        let file = dir.path().join("backing.img");
        match fill {
            Fill::Random(seed) => fs::write(&file, random_bytes(size as usize, seed)),
            Fill::Zero => fs::File::create(&file).and_then(|f| f.set_len(size)),
        }
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let mut l = LoopDev::attach(&file, opts)?;
        l._dir = Some(dir);
        Ok(l)
    }

    /// A loop device over `file`, which must outlive it.
    pub fn attach(file: &Path, opts: &[&str]) -> Result<LoopDev, String> {
        require_root()?;
        let size = fs::metadata(file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .len();
        let mut last = String::new();
        // `losetup -f` can race with other processes taking the same free
        // device; try a few times.
        for _ in 0..5 {
            let out = match Command::new("losetup")
                .args(["-f", "--show"])
                .args(opts)
                .arg(file)
                .output()
            {
                Ok(o) => o,
                Err(e) => return Err(format!("losetup is not available: {e}")),
            };
            if out.status.success() {
                let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
                return Ok(LoopDev {
                    dev,
                    size,
                    _dir: None,
                });
            }
            last = String::from_utf8_lossy(&out.stderr).trim().to_string();
            sleep(Duration::from_millis(100));
        }
        Err(format!("losetup could not attach a loop device: {last}"))
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }

    /// Kernel name, e.g. `loop3`.
    pub fn name(&self) -> &str {
        self.dev
            .file_name()
            .and_then(|n| n.to_str())
            .expect("loop device name")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        for _ in 0..20 {
            match Command::new("losetup").arg("-d").arg(&self.dev).output() {
                Ok(o) if o.status.success() => return,
                _ => sleep(Duration::from_millis(100)),
            }
        }
        eprintln!("warning: could not detach {}", self.dev.display());
    }
}

// ---------------------------------------------------------------------------
// Mounts and swap
// ---------------------------------------------------------------------------

/// What a test of a mounted, frozen ext4 on a loop or zram device needs.
pub const FROZEN_EXT4_TOOLS: [&str; 5] = ["losetup", "mkfs.ext4", "mount", "umount", "fsfreeze"];

/// A mount on a private temporary directory; unfrozen (if frozen), unmounted
/// and the directory removed on drop.
pub struct Mount {
    frozen: bool,
    // Removed after `Drop::drop` has unmounted it.
    dir: tempfile::TempDir,
}

impl Mount {
    /// `mount OPTS... SOURCE DIR`, e.g. `Mount::new("/dev/loop3", &[])` or
    /// `Mount::new("tmpfs", &["-t", "tmpfs", "-o", "size=16m"])`.
    pub fn new(source: &str, opts: &[&str]) -> Result<Mount, String> {
        require_root()?;
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-mnt")
            .tempdir()
            .map_err(|e| format!("cannot create a mount point: {e}"))?;
        let mut args = opts.to_vec();
        args.push(source);
        args.push(dir.path().to_str().expect("UTF-8 temp path"));
        sh("mount", &args)?;
        Ok(Mount { frozen: false, dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Mounts the filesystem on `dev` and freezes it: a freshly mounted
    /// ext4 still writes to its device for a while (its first journal
    /// commit); freezing flushes it and holds back every later write, so
    /// that any change to the device comes from iosurvey. A mount that
    /// fails is an `Err` (a test skips on it); a freeze that fails panics.
    pub fn frozen(dev: &Path) -> Result<Mount, String> {
        let mut m = Mount::new(path_str(dev), &[])?;
        m.freeze().expect("fsfreeze -f");
        Ok(m)
    }

    /// `fsfreeze -f`: flushes the filesystem and holds back every further
    /// write to its device until the drop unfreezes it.
    pub fn freeze(&mut self) -> Result<(), String> {
        sh("fsfreeze", &["-f", path_str(self.dir.path())])?;
        self.frozen = true;
        Ok(())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let dir = self.dir.path().to_path_buf();
        if self.frozen {
            let _ = Command::new("fsfreeze").arg("-u").arg(&dir).output();
        }
        for _ in 0..20 {
            match Command::new("umount").arg(&dir).output() {
                Ok(o) if o.status.success() => return,
                _ => sleep(Duration::from_millis(100)),
            }
        }
        eprintln!(
            "warning: could not unmount {}; detaching it lazily",
            dir.display()
        );
        let _ = Command::new("umount").arg("-l").arg(&dir).output();
    }
}

/// A device in use as swap (`swapon`), `swapoff`ed on drop.
pub struct Swap {
    dev: PathBuf,
}

impl Swap {
    pub fn on(dev: &Path) -> Result<Swap, String> {
        require_root()?;
        sh("swapon", &[path_str(dev)])?;
        Ok(Swap {
            dev: dev.to_path_buf(),
        })
    }
}

impl Drop for Swap {
    fn drop(&mut self) {
        for _ in 0..20 {
            match Command::new("swapoff").arg(&self.dev).output() {
                Ok(o) if o.status.success() => return,
                _ => sleep(Duration::from_millis(100)),
            }
        }
        eprintln!("warning: could not swapoff {}", self.dev.display());
    }
}

// ---------------------------------------------------------------------------
// zram devices
// ---------------------------------------------------------------------------

const ZRAM_CONTROL: &str = "/sys/class/zram-control";

/// A zram device made with hot_add and removed with hot_remove on drop.
pub struct Zram {
    id: u32,
    dev: PathBuf,
}

impl Zram {
    pub fn new(disksize: u64) -> Result<Zram, String> {
        require_root()?;
        if !Path::new(ZRAM_CONTROL).join("hot_add").exists() {
            return Err(format!(
                "{ZRAM_CONTROL}/hot_add does not exist (zram module not loaded?)"
            ));
        }
        let id: u32 = fs::read_to_string(Path::new(ZRAM_CONTROL).join("hot_add"))
            .map_err(|e| format!("zram hot_add failed: {e}"))?
            .trim()
            .parse()
            .map_err(|e| format!("zram hot_add gave no device number: {e}"))?;
        // From here on the guard removes the device, whatever happens.
        let z = Zram {
            id,
            dev: PathBuf::from(format!("/dev/zram{id}")),
        };
        fs::write(
            format!("/sys/block/zram{id}/disksize"),
            disksize.to_string(),
        )
        .map_err(|e| format!("setting the disksize of zram{id}: {e}"))?;
        for _ in 0..50 {
            if z.dev.exists() {
                return Ok(z);
            }
            sleep(Duration::from_millis(40));
        }
        Err(format!("{} did not appear", z.dev.display()))
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let ctl = Path::new(ZRAM_CONTROL).join("hot_remove");
        // hot_remove fails with EBUSY while something (udev, a late reader)
        // still holds the device open.
        for _ in 0..50 {
            if fs::write(&ctl, self.id.to_string()).is_ok() {
                return;
            }
            sleep(Duration::from_millis(100));
        }
        eprintln!("warning: could not hot_remove zram{}", self.id);
    }
}

// ---------------------------------------------------------------------------
// blkio cgroup v1
// ---------------------------------------------------------------------------

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A blkio cgroup of its own, removed (rmdir) on drop.
pub struct Cgroup {
    dir: PathBuf,
}

/// Whether the blkio cgroup v1 hierarchy, with throttling, is there.
pub fn require_blkio() -> Result<(), String> {
    require_root()?;
    if !Path::new(BLKIO).is_dir() {
        return Err(format!(
            "{BLKIO} does not exist (no blkio cgroup v1 hierarchy)"
        ));
    }
    if !Path::new(BLKIO)
        .join("blkio.throttle.read_bps_device")
        .exists()
    {
        return Err("the kernel has no blkio throttling".into());
    }
    Ok(())
}

impl Cgroup {
    pub fn new() -> Result<Cgroup, String> {
        require_blkio()?;
        let dir = Path::new(BLKIO).join(unique("iosurvey-test"));
        fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        Ok(Cgroup { dir })
    }

    /// Writes `line` to the control file `name` of this group.
    pub fn set(&self, name: &str, line: &str) {
        let p = self.dir.join(name);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap_or_else(|e| panic!("opening {}: {e}", p.display()));
        f.write_all(line.as_bytes())
            .unwrap_or_else(|e| panic!("writing {line:?} to {}: {e}", p.display()));
    }

    /// Runs iosurvey with `args` as a member of this group.
    pub fn run_iosurvey(&self, args: &[&str]) -> Output {
        self.spawn_iosurvey(args)
            .wait_with_output()
            .expect("running sh")
    }

    /// Starts iosurvey with `args` as a member of this group, its stdout
    /// and stderr piped.
    pub fn spawn_iosurvey(&self, args: &[&str]) -> std::process::Child {
        self.spawn(BIN, args)
    }

    /// Starts `program` with `args` as a member of this group (its
    /// children too), its stdout and stderr piped.
    pub fn spawn(&self, program: &str, args: &[&str]) -> std::process::Child {
        let procs = self.dir.join("cgroup.procs");
        Command::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(&procs)
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running sh")
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The group empties as soon as its (waited-for) process has exited.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            sleep(Duration::from_millis(100));
        }
        eprintln!("warning: could not remove cgroup {}", self.dir.display());
    }
}

// ---------------------------------------------------------------------------
// Running iosurvey
// ---------------------------------------------------------------------------

pub fn iosurvey(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        // sgpdd-survey's variables, if the shell running the tests has
        // them, would give `survey` its devices.
        .env_remove("scsidevs")
        .env_remove("rawdevs")
        .stdin(Stdio::null())
        .output()
        .expect("running iosurvey")
}

pub fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstderr: {}\nstdout (start): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
            .chars()
            .take(2000)
            .collect::<String>()
    )
}

/// Parses the JSON report of a run that must have succeeded.
pub fn report_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "iosurvey failed: {}",
        describe(out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", describe(out)))
}

/// Runs `iosurvey run ARGS --output json --quiet` and returns its first point.
pub fn run_point(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json", "--quiet"]);
    let out = iosurvey(&all);
    let report = report_of(&out);
    let point = report["points"][0].clone();
    assert!(point.is_object(), "no point in the report: {report}");
    assert!(
        point["failure"].is_null(),
        "the run reported a failure: {}",
        point["failure"]
    );
    point
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, got {v}"))
}

pub fn f(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Asserts that a report matches the checked-in JSON schema.
pub fn assert_valid(report: &Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/run-report.schema.json"
    );
    let schema: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The stdout of a run that must have succeeded.
pub fn stdout_ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", describe(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A JSON file, parsed.
pub fn json_file(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// What iosurvey printed on stderr.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit code 2 (a refusal) and every one of `needles` on stderr.
pub fn assert_refused(out: &Output, needles: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2: {}",
        describe(out)
    );
    let err = stderr_of(out);
    for n in needles {
        assert!(err.contains(n), "stderr should contain {n:?}: {err}");
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
