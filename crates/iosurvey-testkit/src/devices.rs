//! Devices, mounts, swap and cgroups a root test makes, each removed again
//! by its guard's drop (also when an assertion failed): loop devices over
//! images, zram devices, mounts (of a device or a tmpfs), swap, blkio
//! cgroups; and the mkfs a test formats them with.

use crate::sys::*;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread::sleep;
use std::time::Duration;

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

    /// The group's `cgroup.procs`: a process that writes its pid there
    /// joins the group (as a rank started by srun must, itself).
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Runs `program` with `args` as a member of this group, to its end.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.spawn(program, args)
            .wait_with_output()
            .expect("running sh")
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
