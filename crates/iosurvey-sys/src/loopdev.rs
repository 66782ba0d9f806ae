//! What backs a loop device, by identity, from the `LOOP_GET_STATUS64` ioctl.
//!
//! The guard cannot trust `/sys/block/loopN/loop/backing_file`: it is a path,
//! and a path may no longer resolve (a deleted or renamed node, a node in
//! another mount namespace) or may now name something else. The kernel keeps
//! the backing file's identity, which this reads.

use std::os::fd::BorrowedFd;

/// `LOOP_GET_STATUS64` from `<linux/loop.h>`.
const LOOP_GET_STATUS64: rustix::ioctl::Opcode = 0x4C05;

/// `struct loop_info64` from `<linux/loop.h>`.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// The identity of a loop device's backing file, in the encoding of
/// `st_dev`/`st_rdev` as `stat` returns them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopBacking {
    /// `st_dev` of the backing file: the filesystem it lies on.
    pub dev: u64,
    /// `st_ino` of the backing file.
    pub ino: u64,
    /// `st_rdev` of the backing file: the device it is, when it is a block
    /// device node (0 for a regular file).
    pub rdev: u64,
    /// Where in the backing file the loop device starts, in bytes.
    pub offset: u64,
    /// How many bytes of the backing file it shows (0: up to its end).
    pub sizelimit: u64,
}

/// The backing file of the loop device open as `fd`. Fails (`ENXIO`) when
/// nothing is attached, or (`ENOTTY`/`EINVAL`) when `fd` is no loop device.
pub fn loop_backing(fd: BorrowedFd<'_>) -> std::io::Result<LoopBacking> {
    // SAFETY: `LOOP_GET_STATUS64` writes exactly one `struct loop_info64`
    // through its pointer argument, and `LoopInfo64` is that struct laid out
    // `#[repr(C)]` with the kernel's field types (all integers, so any bit
    // pattern the kernel writes is valid). On any other file the kernel
    // rejects the opcode (ENOTTY/EINVAL) without writing, and the
    // uninitialised output is then never read.
    let info = unsafe {
        rustix::ioctl::ioctl(
            fd,
            rustix::ioctl::Getter::<LOOP_GET_STATUS64, LoopInfo64>::new(),
        )
    }
    .map_err(std::io::Error::from)?;
    Ok(LoopBacking {
        dev: info.lo_device,
        ino: info.lo_inode,
        rdev: info.lo_rdevice,
        offset: info.lo_offset,
        sizelimit: info.lo_sizelimit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::process::Command;

    #[test]
    fn a_regular_file_is_no_loop_device() {
        let f = tempfile::tempfile().unwrap();
        assert!(loop_backing(f.as_fd()).is_err());
    }

    #[test]
    fn the_backing_file_is_identified_by_dev_and_inode() {
        if !rustix::process::geteuid().is_root() {
            iosurvey_testkit::skip!("needs root to attach a loop device");
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output();
        let Some(out) = out.ok().filter(|o| o.status.success()) else {
            iosurvey_testkit::skip!("losetup could not attach a loop device");
        };
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let got = std::fs::File::open(&dev).map(|f| loop_backing(f.as_fd()));
        let _ = Command::new("losetup").args(["-d", &dev]).status();
        let got = got.unwrap().unwrap();
        let st = rustix::fs::stat(&img).unwrap();
        assert_eq!(got.dev, st.st_dev);
        assert_eq!(got.ino, st.st_ino);
        assert_eq!(got.rdev, 0);
    }
}
