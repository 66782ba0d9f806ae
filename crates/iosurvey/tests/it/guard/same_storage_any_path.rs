//! One storage, reached by any path, is one storage (issue 28 §1): the
//! write guard follows a target's family by identity, in both directions
//! and to any depth. A second loop device over the image of a mounted
//! ext4 (at its offset or another), the same with the ext4 mounted only in
//! another mount namespace, a loop device over a disk whose partition is
//! mounted, a swap file and a loop device over it, two targets of one run
//! that reach the same storage in every mode, one file seen through an
//! overlay mount and on its layer, an image an erofs, fuse2fs or any
//! other process holds with no loop device, and devices whose /dev node
//! was moved away (judged through a node of iosurvey's own). Each test checks the victim's bytes
//! afterwards.
//!
//! Every test needs root (it creates its own loop devices, mounts, swap
//! and files and removes them through Drop guards); without root or a tool
//! it needs, it prints "skipping: <reason>" and passes (fails under CI).

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const SIZE: u64 = 32 * MIB;

/// A file of `size` bytes with every block allocated (random data).
fn allocated_file(path: &Path, size: u64) {
    std::fs::write(path, random_bytes(size as usize, 11)).unwrap();
}

/// `iosurvey run TARGET --rw write --bs 64k --bytes 1m EXTRA... --quiet`.
fn write_run(target: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        path_str(target),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--bytes",
        "1m",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    iosurvey(&args)
}

/// `fsck.ext4 -n -f DEV` finds nothing wrong.
fn assert_fsck_clean(dev: &Path) {
    let fsck = Command::new("fsck.ext4")
        .args(["-n", "-f"])
        .arg(dev)
        .output()
        .unwrap();
    assert!(fsck.status.success(), "fsck: {}", describe(&fsck));
}

/// A read-only mount of `dev` that only a process in a new mount namespace
/// sees (`unshare -m`), kept alive until the drop kills that process.
struct HiddenMount {
    child: Child,
    _dir: tempfile::TempDir,
}

impl HiddenMount {
    fn new(dev: &Path) -> Result<HiddenMount, String> {
        require_tool("unshare")?;
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-nsmnt")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let script = format!(
            "mount -o ro {} {} && echo mounted && exec sleep 600",
            path_str(dev),
            path_str(dir.path())
        );
        let mut child = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run unshare: {e}"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        let m = HiddenMount { child, _dir: dir };
        if line.trim() != "mounted" {
            return Err(format!(
                "could not mount {} in a new namespace",
                dev.display()
            ));
        }
        // Not in this namespace: only the other one holds it.
        let here = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(!here.contains(path_str(m._dir.path())));
        Ok(m)
    }
}

impl Drop for HiddenMount {
    fn drop(&mut self) {
        // The namespace, and the mount with it, ends with its last process.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first partition of `l` (attached with `-P`): a GPT with one 16 MiB
/// partition at 1 MiB, added by `partx -a` if the kernel found none.
fn partitioned(l: &LoopDev) -> Result<PathBuf, String> {
    require_root_and(&["sfdisk", "partx"])?;
    sh(
        "sh",
        &[
            "-c",
            r#"printf 'label: gpt\nstart=2048,size=32768\n' | sfdisk -q "$0""#,
            path_str(l.path()),
        ],
    )?;
    let name = format!("{}p1", l.name());
    let sys = Path::new("/sys/block").join(l.name()).join(&name);
    if !sys.exists() {
        let _ = sh("partx", &["-a", path_str(l.path())]);
    }
    let node = PathBuf::from(format!("/dev/{name}"));
    for _ in 0..50 {
        if sys.exists() && node.exists() {
            return Ok(node);
        }
        std::thread::sleep(std::time::Duration::from_millis(40));
    }
    Err(format!("{} did not appear", node.display()))
}

#[test]
fn a_second_loop_over_the_image_of_a_mounted_ext4_is_refused() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    need!(require_tool("fsck.ext4"));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ext4.img");
    allocated_file(&img, SIZE);
    let first = need!(LoopDev::attach(&img, &[]));
    mkfs_ext4_settled(first.path());
    let m = need!(Mount::frozen(first.path()));
    let before = checksum(&img, None);
    // The same bytes by another loop device: the signature is seen, and
    // --force must not let it through.
    let same = need!(LoopDev::attach(&img, &[]));
    let out = write_run(same.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", first.name(), "--force does not"]);
    // At an offset no signature is seen: --allow-destroy alone was enough.
    let shifted = need!(LoopDev::attach(&img, &["-o", "1M"]));
    let out = write_run(shifted.path(), &["--allow-destroy"]);
    assert_refused(&out, &["is mounted at", first.name()]);
    // To any depth: a loop device over the shifted one.
    let stacked = need!(LoopDev::attach(shifted.path(), &[]));
    let out = write_run(stacked.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", first.name()]);
    drop(stacked);
    assert_eq!(checksum(&img, None), before, "the image changed");
    // Unmounted, the other loop devices over the image are still a use
    // (either may be named first: /sys/block is read in its own order).
    drop(m);
    let out = write_run(shifted.path(), &["--allow-destroy"]);
    assert_refused(&out, &["backs the loop device"]);
    let err = stderr_of(&out);
    assert!(
        err.contains(first.name()) || err.contains(same.name()),
        "{err}"
    );
    assert_fsck_clean(first.path());
}

#[test]
fn a_loop_over_an_image_mounted_in_another_namespace_is_refused() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "fsck.ext4"
    ]));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ext4.img");
    allocated_file(&img, SIZE);
    let first = need!(LoopDev::attach(&img, &[]));
    mkfs_ext4_settled(first.path());
    let hidden = need!(HiddenMount::new(first.path()));
    let before = checksum(&img, None);
    let shifted = need!(LoopDev::attach(&img, &["-o", "1M"]));
    let out = write_run(shifted.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", first.name(), "mount namespace"]);
    // The device itself, mounted out of sight, is named as mounted too.
    let out = write_run(first.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", "mount namespace"]);
    assert_eq!(checksum(&img, None), before, "the image changed");
    drop(hidden);
    assert_fsck_clean(first.path());
}

#[test]
fn a_loop_over_a_disk_whose_partition_is_mounted_is_refused() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    need!(require_tool("fsck.ext4"));
    let disk = need!(LoopDev::blank(64 * MIB, &["-P"]));
    let part = need!(partitioned(&disk));
    mkfs_ext4_settled(&part);
    let m = need!(Mount::frozen(&part));
    let before = checksum(disk.path(), None);
    // 3 MiB into the disk is inside the mounted partition (1 to 17 MiB).
    let over = need!(LoopDev::attach(disk.path(), &["-o", "3M"]));
    let out = write_run(over.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", "p1", "--force does not"]);
    assert_eq!(checksum(disk.path(), None), before, "the disk changed");
    // Past the partition's end a loop device shares no byte with it (the
    // first one, over the same disk, would be a use of its own).
    drop(over);
    let past = need!(LoopDev::attach(disk.path(), &["-o", "40M"]));
    let out = write_run(past.path(), &["--allow-destroy", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    drop(m);
    assert_fsck_clean(&part);
}

/// A swap file of 16 MiB on an ext4 of its own (swap files need a
/// filesystem that maps them: not tmpfs), enabled; swapped off on drop.
struct SwapFile {
    file: PathBuf,
    // Dropped in order: swapoff, unmount, detach.
    swap: Option<Swap>,
    _mount: Mount,
    _dev: LoopDev,
}

impl SwapFile {
    fn new() -> Result<SwapFile, String> {
        require_root_and(&["losetup", "mkfs.ext4", "mount", "mkswap", "swapon"])?;
        let dev = LoopDev::blank(64 * MIB, &[])?;
        mkfs_ext4_settled(dev.path());
        let mount = Mount::new(path_str(dev.path()), &[])?;
        let file = mount.path().join("swapfile");
        allocated_file(&file, 16 * MIB);
        sh("chmod", &["600", path_str(&file)])?;
        sh("mkswap", &[path_str(&file)])?;
        let swap = Swap::on(&file)?;
        Ok(SwapFile {
            file,
            swap: Some(swap),
            _mount: mount,
            _dev: dev,
        })
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        self.swap.take();
    }
}

#[test]
fn an_active_swap_file_and_a_loop_over_it_are_refused_as_swap() {
    let _lock = serial();
    let sw = need!(SwapFile::new());
    let before = checksum(&sw.file, None);
    let out = write_run(&sw.file, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["in use as swap", "swapoff", "--force does not"]);
    // A loop device over it (read-only: the kernel keeps a swap file from
    // any writer) is the same storage.
    let l = need!(LoopDev::attach(&sw.file, &["-r"]));
    let out = write_run(l.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["in use as swap"]);
    assert_eq!(checksum(&sw.file, None), before, "the swap file changed");
    // A loop device over a swap device, likewise.
    let dev = need!(LoopDev::blank(16 * MIB, &[]));
    must("mkswap", &[path_str(dev.path())]);
    let _on = need!(Swap::on(dev.path()));
    let before = checksum(dev.path(), None);
    let over = need!(LoopDev::attach(dev.path(), &[]));
    let out = write_run(over.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["in use as swap", dev.name()]);
    assert_eq!(
        checksum(dev.path(), None),
        before,
        "the swap device changed"
    );
    drop(over);
}

/// The frame files under `dir`'s `iosurvey-frames`, sorted.
fn frames_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.join("iosurvey-frames")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            match e.file_type().unwrap().is_dir() {
                true => todo.push(e.path()),
                false => out.push(e.path()),
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_kept_frame_that_backs_a_mounted_loop_device_is_never_written() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    let dir = tempfile::tempdir().unwrap();
    let video = |extra: &[&str]| {
        let mut args = vec![
            "video",
            path_str(dir.path()),
            "--write",
            "--frame-size",
            "4m",
            "--frames",
            "2",
            "--buffered",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        iosurvey(&args)
    };
    let out = video(&["--keep"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let frames = frames_in(dir.path());
    assert_eq!(frames.len(), 2, "{frames:?}");
    let l = need!(LoopDev::attach(&frames[0], &[]));
    mkfs_ext4_settled(l.path());
    let m = need!(Mount::frozen(l.path()));
    let before = checksum(&frames[0], None);
    for extra in [&[][..], &["--allow-destroy", "--force"][..]] {
        let out = video(extra);
        assert_refused(&out, &["backs the loop device", l.name()]);
        assert_eq!(checksum(&frames[0], None), before, "the frame changed");
        assert_eq!(frames_in(dir.path()), frames, "frames were removed");
    }
    drop(m);
    assert_fsck_clean(l.path());
}

#[test]
fn targets_that_reach_one_storage_are_refused_in_every_mode() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("one.img");
    allocated_file(&img, SIZE);
    let a = need!(LoopDev::attach(&img, &["--direct-io=on"]));
    let b = need!(LoopDev::attach(&img, &["--direct-io=on"]));
    // Disjoint halves of one image: not the same bytes, but one storage
    // (parallel scaling over them measures the one image twice).
    let low = need!(LoopDev::attach(&img, &["--sizelimit", "16M"]));
    let high = need!(LoopDev::attach(&img, &["-o", "16M", "--sizelimit", "16M"]));
    let over_a = need!(LoopDev::attach(a.path(), &[]));
    let pairs = [
        (a.path(), b.path()),
        (low.path(), high.path()),
        (b.path(), over_a.path()),
        (img.as_path(), b.path()),
    ];
    for (x, y) in pairs {
        let (x, y) = (path_str(x), path_str(y));
        // A write is refused already as a use of the other one.
        let out = iosurvey(&["run", x, y, "--rw", "write", "--allow-destroy"]);
        assert_refused(&out, &["--force does not"]);
        let cases: [&[&str]; 6] = [
            &["run", x, y, "--rw", "read", "--bytes", "1m"],
            &["run", x, y, "--rw", "read", "--bytes", "1m", "--dry-run"],
            &["parallel", x, y],
            &["matrix", x, y, "--dry-run"],
            &["profile", x, y, "--simulate", "concat", "--zones", "4"],
            &[
                "survey",
                x,
                y,
                "--size",
                "8m",
                "--crghi",
                "2",
                "--actions",
                "read",
            ],
        ];
        for args in cases {
            let out = iosurvey(args);
            assert_refused(&out, &["overlaps", x, y, "--force does not"]);
            assert_eq!(stderr_of(&out).lines().count(), 1, "{}", describe(&out));
        }
    }
    // Each alone is fine.
    let out = iosurvey(&["run", path_str(high.path()), "--bytes", "1m", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn a_loop_over_a_device_with_a_lazily_unmounted_fs_is_refused() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.ext4",
        "mount",
        "umount"
    ]));
    let lower = need!(LoopDev::blank(SIZE, &[]));
    mkfs_ext4_settled(lower.path());
    let m = need!(Mount::new(path_str(lower.path()), &[]));
    std::fs::write(m.path().join("data"), b"precious\n").unwrap();
    // A file held open keeps the filesystem alive once it is detached from
    // every namespace: no mountinfo shows it, only the kernel's claim.
    let held = std::fs::File::open(m.path().join("data")).unwrap();
    must("umount", &["-l", path_str(m.path())]);
    // Its journal written out, so that the device changes only if written.
    rustix::fs::syncfs(&held).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = checksum(lower.path(), None);
    let upper = need!(LoopDev::attach(lower.path(), &[]));
    let out = write_run(upper.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &[lower.name(), "exclusively", "--force does not"]);
    assert_eq!(checksum(lower.path(), None), before, "the device changed");
    drop(held);
    drop(upper);
    drop(m);
}

/// An overlay mount of `lower` and `upper` (directories the caller owns,
/// given by absolute paths, as mount(8) records them), with its own work
/// directory; unmounted on drop.
struct Overlay {
    mount: Mount,
    _work: tempfile::TempDir,
}

impl Overlay {
    fn new(lower: &Path, upper: &Path) -> Result<Overlay, String> {
        require_root_and(&["mount", "umount"])?;
        let work = tempfile::Builder::new()
            .prefix("iosurvey-ovl-work")
            .tempdir_in(upper.parent().unwrap())
            .map_err(|e| e.to_string())?;
        let opts = format!(
            "lowerdir={},upperdir={},workdir={}",
            path_str(lower),
            path_str(upper),
            path_str(work.path())
        );
        let mount = Mount::new("iosurvey-ovl", &["-t", "overlay", "-o", &opts])?;
        Ok(Overlay { mount, _work: work })
    }

    /// The name of `name` (a file of the upper layer) through the overlay.
    fn merged(&self, name: &str) -> PathBuf {
        self.mount.path().join(name)
    }
}

/// `lower`, `upper` under a fresh directory and an overlay of them; the
/// overlay is dropped before the directories.
fn overlay_dirs() -> Result<(Overlay, PathBuf, tempfile::TempDir), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (lower, upper) = (dir.path().join("lower"), dir.path().join("upper"));
    std::fs::create_dir(&lower).unwrap();
    std::fs::create_dir(&upper).unwrap();
    let ov = Overlay::new(&lower, &upper)?;
    Ok((ov, upper, dir))
}

#[test]
fn a_file_through_an_overlay_is_the_file_on_its_layer() {
    let _lock = serial();
    need!(require_root_and(&FROZEN_EXT4_TOOLS));
    need!(require_tool("fsck.ext4"));
    let (ov, upper, _dir) = need!(overlay_dirs());
    // An ext4 on a loop device over upper/img; its image reached through
    // the overlay, by a name whose st_dev is the overlay's.
    let img = upper.join("img");
    allocated_file(&img, SIZE);
    let over_upper = need!(LoopDev::attach(&img, &[]));
    mkfs_ext4_settled(over_upper.path());
    let m = need!(Mount::frozen(over_upper.path()));
    let before = checksum(&img, None);
    let through = ov.merged("img");
    let out = write_run(&through, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["backs the loop device", over_upper.name()]);
    // A loop device at 1 MiB over the name through the overlay.
    let shifted = need!(LoopDev::attach(&through, &["-o", "1M"]));
    let out = write_run(shifted.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", over_upper.name()]);
    drop(shifted);
    assert_eq!(checksum(&img, None), before, "the image changed");
    drop(m);
    assert_fsck_clean(over_upper.path());
    // The reverse: an ext4 on a loop device over the overlay's name of
    // upper/img2, the target being upper/img2 itself.
    let img2 = upper.join("img2");
    allocated_file(&img2, SIZE);
    let over_merged = need!(LoopDev::attach(&ov.merged("img2"), &[]));
    mkfs_ext4_settled(over_merged.path());
    let m2 = need!(Mount::frozen(over_merged.path()));
    let before = checksum(&img2, None);
    let out = write_run(&img2, &["--allow-destroy", "--force"]);
    assert_refused(&out, &["backs the loop device", over_merged.name()]);
    let shifted = need!(LoopDev::attach(&img2, &["-o", "1M"]));
    let out = write_run(shifted.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is mounted at", over_merged.name()]);
    drop(shifted);
    assert_eq!(checksum(&img2, None), before, "the image changed");
    drop(m2);
    assert_fsck_clean(over_merged.path());
}

#[test]
fn one_file_through_an_overlay_and_on_its_layer_is_one_storage() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let (ov, upper, _dir) = need!(overlay_dirs());
    let x = upper.join("x");
    allocated_file(&x, SIZE);
    let through = ov.merged("x");
    let a = need!(LoopDev::attach(&x, &["--direct-io=on"]));
    let b = need!(LoopDev::attach(&through, &["--direct-io=on"]));
    for (p, q) in [(a.path(), b.path()), (x.as_path(), through.as_path())] {
        let (p, q) = (path_str(p), path_str(q));
        for args in [
            &["parallel", p, q][..],
            &["run", p, q, "--rw", "read", "--bytes", "1m"][..],
            &["profile", p, q, "--simulate", "concat", "--zones", "4"][..],
        ] {
            let out = iosurvey(args);
            assert_refused(&out, &["overlaps", p, q, "--force does not"]);
        }
    }
    // A file and a loop device over its other name.
    let (p, q) = (path_str(&through), path_str(a.path()));
    let out = iosurvey(&["run", p, q, "--rw", "read", "--bytes", "1m"]);
    assert_refused(&out, &["overlaps", p, q]);
    // Each alone is fine.
    let out = iosurvey(&["run", path_str(b.path()), "--bytes", "1m", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

/// An erofs mounted straight from the image file `img` (mount(2) with the
/// file as its source: no loop device, as util-linux would set up),
/// unmounted on drop.
struct FileMount {
    dir: tempfile::TempDir,
}

impl FileMount {
    fn erofs(img: &Path) -> Result<FileMount, String> {
        require_root_and(&["mkfs.erofs"])?;
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-erofs")
            .tempdir()
            .map_err(|e| e.to_string())?;
        rustix::mount::mount(
            img,
            dir.path(),
            "erofs",
            rustix::mount::MountFlags::RDONLY,
            None,
        )
        .map_err(|e| format!("this kernel mounts no erofs from a file: {e}"))?;
        Ok(FileMount { dir })
    }
}

impl Drop for FileMount {
    fn drop(&mut self) {
        for _ in 0..20 {
            match rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::empty()) {
                Ok(()) => return,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
            }
        }
        let _ = rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::DETACH);
    }
}

#[test]
fn an_image_mounted_as_erofs_with_no_loop_device_is_refused() {
    let _lock = serial();
    need!(require_root_and(&["mkfs.erofs", "losetup"]));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("data"), random_bytes(256 << 10, 5)).unwrap();
    let img = dir.path().join("e.img");
    must(
        "mkfs.erofs",
        &["--quiet", "-T0", path_str(&img), path_str(&src)],
    );
    // Whole blocks, no hole (a file with holes is refused for that).
    let len = std::fs::metadata(&img).unwrap().len();
    assert_eq!(len % 4096, 0, "erofs image of {len} bytes");
    let m = need!(FileMount::erofs(&img));
    let before = checksum(&img, None);
    let write_4k = |t: &Path| {
        let t = path_str(t);
        let args = ["--rw", "write", "--bs", "4k", "--bytes", "4k"];
        iosurvey(&[&["run", t][..], &args, &["--allow-destroy", "--force"]].concat())
    };
    let out = write_4k(&img);
    assert_refused(&out, &["erofs", "mounted at", "--force does not"]);
    // A loop device over it reaches the same image.
    let l = need!(LoopDev::attach(&img, &[]));
    let out = write_4k(l.path());
    assert_refused(&out, &["is mounted at", "--force does not"]);
    drop(l);
    assert_eq!(checksum(&img, None), before, "the image changed");
    drop(m);
}

/// A process (`sh`, then `sleep`) holding `file` open for reading and
/// writing; killed on drop.
struct Holder {
    child: Child,
}

impl Holder {
    fn new(file: &Path) -> Holder {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec 3<>\"$0\"; echo ready; exec sleep 60")
            .arg(file)
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("running sh");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        assert_eq!(line.trim(), "ready");
        // Named `sleep` once it has exec'd.
        let comm = format!("/proc/{}/comm", child.id());
        for _ in 0..100 {
            if std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Holder { child }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_file_another_process_holds_open_is_refused_naming_it() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("held.img");
    allocated_file(&img, SIZE);
    let h = Holder::new(&img);
    let pid = h.child.id().to_string();
    let before = checksum(&img, None);
    let out = write_run(&img, &["--allow-destroy", "--force"]);
    assert_refused(
        &out,
        &["is open by process", &pid, "(sleep)", "--force does not"],
    );
    assert_eq!(stderr_of(&out).lines().count(), 1, "{}", describe(&out));
    // A loop device over it writes the same file.
    let l = need!(LoopDev::attach(&img, &[]));
    let out = write_run(l.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["is open by process", &pid, "(sleep)"]);
    drop(l);
    assert_eq!(checksum(&img, None), before, "the file changed");
    drop(h);
    let out = write_run(&img, &["--allow-destroy"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn an_image_under_fuse2fs_is_refused_naming_the_daemon() {
    let _lock = serial();
    need!(require_root_and(&["fuse2fs", "mkfs.ext4", "umount"]));
    if !Path::new("/dev/fuse").exists() {
        skip!("/dev/fuse does not exist");
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fuse.img");
    allocated_file(&img, SIZE);
    mkfs_ext4_settled(&img);
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    // Given a relative path, which its mount's source then is: only the
    // daemon holding the image tells.
    let fuse = Command::new("fuse2fs")
        .args(["fuse.img", "mnt", "-o", "ro,fakeroot"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(fuse.status.success(), "fuse2fs: {}", describe(&fuse));
    // Unmounted (the daemon then ends) whatever happens below.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).output();
        }
    }
    let _u = Unmount(&mnt);
    let before = checksum(&img, None);
    let out = write_run(&img, &["--allow-destroy", "--force"]);
    assert_refused(
        &out,
        &["is open by process", "(fuse2fs)", "--force does not"],
    );
    assert_eq!(checksum(&img, None), before, "the image changed");
}

/// A device node moved away from /dev (into a private directory under
/// /dev: the same filesystem), so that /dev/NAME is missing; put back on
/// drop.
struct MovedNode {
    from: PathBuf,
    to: PathBuf,
    _dir: tempfile::TempDir,
}

impl MovedNode {
    fn new(node: &Path) -> Result<MovedNode, String> {
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-moved")
            .tempdir_in("/dev")
            .map_err(|e| format!("cannot make a directory in /dev: {e}"))?;
        let to = dir.path().join(node.file_name().unwrap());
        std::fs::rename(node, &to).map_err(|e| format!("cannot move {node:?}: {e}"))?;
        Ok(MovedNode {
            from: node.to_path_buf(),
            to,
            _dir: dir,
        })
    }
}

impl Drop for MovedNode {
    fn drop(&mut self) {
        if let Err(e) = std::fs::rename(&self.to, &self.from) {
            eprintln!("warning: could not put {:?} back: {e}", self.from);
        }
    }
}

#[test]
fn a_loop_device_whose_node_is_moved_away_refuses_no_other_target() {
    let _lock = serial();
    need!(require_root_and(&["losetup"]));
    let hidden = need!(LoopDev::blank(16 * MIB, &[]));
    let other = need!(LoopDev::new(16 * MIB, 3));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.img");
    allocated_file(&file, 16 * MIB);
    let _moved = need!(MovedNode::new(hidden.path()));
    assert!(!hidden.path().exists());
    // What the loop device sits on is asked through a node of iosurvey's
    // own: it is not "cannot tell" for every other target on the host.
    for t in [other.path(), file.as_path()] {
        let out = write_run(t, &["--allow-destroy", "--force"]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    }
    // And the private node is gone again.
    let left: Vec<_> = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".iosurvey-node")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_loop_over_a_device_whose_node_is_moved_away_is_refused_while_it_is_mounted() {
    let _lock = serial();
    need!(require_root_and(&[
        "losetup",
        "mkfs.btrfs",
        "mount",
        "fsfreeze"
    ]));
    // btrfs: its mount shows no device number of the zram device, only
    // its source's name, which the moved node no longer resolves.
    let zram = need!(Zram::new(256 * MIB));
    must("mkfs.btrfs", &["-q", "-f", path_str(zram.path())]);
    let m = need!(Mount::frozen(zram.path()));
    let over = need!(LoopDev::attach(zram.path(), &[]));
    let before = checksum(over.path(), None);
    let moved = need!(MovedNode::new(zram.path()));
    let out = write_run(over.path(), &["--allow-destroy", "--force"]);
    assert_refused(&out, &["zram", "exclusively", "--force does not"]);
    assert_eq!(checksum(over.path(), None), before, "the btrfs changed");
    drop(moved);
    drop(over);
    drop(m);
}
