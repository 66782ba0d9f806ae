//! Opening targets: probing files and block devices (size, logical and
//! physical block size, rotational flag, O_DIRECT), creating and laying out
//! test files with non-zero, incompressible data, and removing them.

use iosurvey_engine::BufferPool;
use iosurvey_workload::TargetSpec;
use rustix::fs::{FileType, Mode, OFlags, SeekFrom, StatxFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
}

/// A target opened for one job.
#[derive(Debug)]
pub struct OpenTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size: u64,
    /// Smallest unit of O_DIRECT offsets and lengths.
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    /// From sysfs, for block devices.
    pub rotational: Option<bool>,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Opened for writing.
    pub writable: bool,
    /// iosurvey created (and laid out) this file and will remove it.
    pub created: bool,
    pub fd: OwnedFd,
}

/// The shape of a target that validation needs: known before a test file
/// is laid out, so bad settings are refused before any I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub path: PathBuf,
    pub size: u64,
    pub logical_block_size: u64,
    pub direct: bool,
}

/// Why a target cannot be used. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{0}: no such file or directory; give an existing device, or --size to create a test file"
    )]
    NotFound(PathBuf),
    #[error("{0}: permission denied")]
    Permission(PathBuf),
    #[error("{path}: unsupported file type ({what}); give a regular file or a block device")]
    Unsupported { path: PathBuf, what: &'static str },
    #[error("{0}: the filesystem does not support O_DIRECT; add --buffered to go through the page cache")]
    NoDirect(PathBuf),
    #[error("{0}: the file is empty; give --size to lay out a test file")]
    Empty(PathBuf),
    #[error("{path}: the file has unwritten holes (first at byte {hole}); reading them would not touch the device. Remove it so iosurvey lays it out, or fill it first")]
    Holes { path: PathBuf, hole: u64 },
    #[error("{path}: {size} bytes is smaller than --size {want}")]
    Smaller { path: PathBuf, size: u64, want: u64 },
    #[error("{path}: not enough free space for a {want}-byte test file ({free} bytes free); lower --size")]
    NoSpace { path: PathBuf, want: u64, free: u64 },
    #[error("{path}: {op} failed: {err}")]
    Io {
        path: PathBuf,
        op: &'static str,
        err: std::io::Error,
    },
}

fn io_err(path: &Path, op: &'static str, e: Errno) -> TargetError {
    match e {
        Errno::ACCESS | Errno::PERM | Errno::ROFS => TargetError::Permission(path.to_path_buf()),
        Errno::NOENT => TargetError::NotFound(path.to_path_buf()),
        _ => TargetError::Io {
            path: path.to_path_buf(),
            op,
            err: e.into(),
        },
    }
}

/// Opens (creating and laying out if needed) the target of `spec`.
pub fn open_target(
    spec: &TargetSpec,
    write: bool,
    direct: bool,
) -> Result<OpenTarget, TargetError> {
    let path = spec.path.as_path();
    let st = match rustix::fs::stat(path) {
        Ok(st) => Some(st),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(io_err(path, "stat", e)),
    };
    let (created, kind) = match st.as_ref().map(|s| FileType::from_raw_mode(s.st_mode)) {
        None => match spec.create_size {
            Some(size) => {
                create_file(path, size)?;
                (true, TargetKind::File)
            }
            None => return Err(TargetError::NotFound(path.to_path_buf())),
        },
        Some(FileType::RegularFile) => (false, TargetKind::File),
        Some(FileType::BlockDevice) => (false, TargetKind::Block),
        Some(FileType::Directory) => {
            return Err(TargetError::Unsupported {
                path: path.to_path_buf(),
                what: "directory",
            })
        }
        Some(FileType::CharacterDevice) => {
            return Err(TargetError::Unsupported {
                path: path.to_path_buf(),
                what: "character device",
            })
        }
        Some(_) => {
            return Err(TargetError::Unsupported {
                path: path.to_path_buf(),
                what: "fifo, socket or other",
            })
        }
    };
    let opened = open_probed(path, kind, created, write, direct, spec.create_size);
    if opened.is_err() && created {
        let _ = std::fs::remove_file(path);
    }
    opened
}

fn open_probed(
    path: &Path,
    kind: TargetKind,
    created: bool,
    write: bool,
    direct: bool,
    want: Option<u64>,
) -> Result<OpenTarget, TargetError> {
    let mut flags = if write { OFlags::RDWR } else { OFlags::RDONLY };
    flags |= OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::INVAL) if direct => return Err(TargetError::NoDirect(path.to_path_buf())),
        Err(e) => return Err(io_err(path, "open", e)),
    };
    let size = rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| io_err(path, "seek", e))?;
    let (logical, physical, rotational) = match kind {
        TargetKind::Block => {
            let lbs = rustix::fs::ioctl_blksszget(&fd).map_err(|e| io_err(path, "BLKSSZGET", e))?;
            let pbs = rustix::fs::ioctl_blkpbszget(&fd).unwrap_or(lbs);
            let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "fstat", e))?;
            let rot = std::fs::read_to_string(format!(
                "/sys/dev/block/{}:{}/queue/rotational",
                rustix::fs::major(st.st_rdev),
                rustix::fs::minor(st.st_rdev)
            ))
            .ok()
            .map(|s| s.trim() == "1");
            (u64::from(lbs), u64::from(pbs), rot)
        }
        TargetKind::File => {
            if size == 0 {
                return Err(TargetError::Empty(path.to_path_buf()));
            }
            if let Some(w) = want {
                if size < w {
                    return Err(TargetError::Smaller {
                        path: path.to_path_buf(),
                        size,
                        want: w,
                    });
                }
            }
            if !created {
                check_no_holes(&fd, path, size)?;
            }
            let (lbs, pbs) = file_alignment(&fd);
            (lbs, pbs, None)
        }
    };
    Ok(OpenTarget {
        path: path.to_path_buf(),
        kind,
        size,
        logical_block_size: logical,
        physical_block_size: physical,
        rotational,
        direct,
        writable: write,
        created,
        fd,
    })
}

/// O_DIRECT offset alignment and preferred I/O size of a file.
fn file_alignment(fd: &OwnedFd) -> (u64, u64) {
    let st = rustix::fs::statx(
        fd,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
        StatxFlags::DIOALIGN | StatxFlags::BASIC_STATS,
    );
    match st {
        Ok(s) if s.stx_dio_offset_align > 0 => (
            u64::from(s.stx_dio_offset_align),
            u64::from(s.stx_blksize).max(u64::from(s.stx_dio_offset_align)),
        ),
        Ok(s) => (512, u64::from(s.stx_blksize).max(512)),
        Err(_) => (512, 4096),
    }
}

fn check_no_holes(fd: &OwnedFd, path: &Path, size: u64) -> Result<(), TargetError> {
    match rustix::fs::seek(fd, SeekFrom::Hole(0)) {
        Ok(hole) if hole < size => Err(TargetError::Holes {
            path: path.to_path_buf(),
            hole,
        }),
        _ => Ok(()),
    }
}

/// Creates `path` at `size` bytes, every byte written with non-zero,
/// incompressible data and flushed to the device.
fn create_file(path: &Path, size: u64) -> Result<(), TargetError> {
    check_free_space(path, parent_dir(path), size)?;
    let fd = rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| io_err(path, "create", e))?;
    let laid = lay_out(&fd, size).map_err(|e| io_err(path, "lay out", e));
    if laid.is_err() {
        drop(fd);
        let _ = std::fs::remove_file(path);
    }
    laid
}

fn lay_out(fd: &OwnedFd, size: u64) -> Result<(), Errno> {
    const CHUNK: usize = 4 << 20;
    let mut pool = BufferPool::new(1, CHUNK, 4096, 0x1057_5eed).map_err(|_| Errno::NOMEM)?;
    let mut off = 0u64;
    let mut round = 0u64;
    while off < size {
        let n = (size - off).min(CHUNK as u64) as usize;
        let buf = pool.get_mut(0);
        // Vary each chunk so no two chunks are equal (no dedupe).
        buf[..8].copy_from_slice(&round.to_le_bytes());
        buf[8..16].copy_from_slice(&off.to_le_bytes());
        let written = rustix::io::pwrite(fd, &buf[..n], off)?;
        if written == 0 {
            return Err(Errno::NOSPC);
        }
        off += written as u64;
        round += 1;
    }
    rustix::fs::fsync(fd)?;
    // Drop what the layout left in the page cache.
    let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
    Ok(())
}

/// Writes back and evicts the target's pages from the page cache, so that
/// a buffered read phase starts cold.
pub fn drop_cache(t: &OpenTarget) {
    let _ = rustix::fs::fsync(&t.fd);
    let _ = rustix::fs::fadvise(&t.fd, 0, None, rustix::fs::Advice::DontNeed);
}

/// The geometry `spec` will have once opened, found without creating or
/// writing anything: an existing target is opened read-only and probed; a
/// missing file is checked against its directory (type, free space, O_DIRECT
/// alignment of the filesystem).
pub fn plan_geometry(spec: &TargetSpec, direct: bool) -> Result<Geometry, TargetError> {
    let path = spec.path.as_path();
    match rustix::fs::stat(path) {
        Ok(st) => {
            let kind = match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => TargetKind::File,
                FileType::BlockDevice => TargetKind::Block,
                _ => return open_target(spec, false, direct).map(|t| t.geometry()),
            };
            let t = open_probed(path, kind, false, false, direct, spec.create_size)?;
            Ok(t.geometry())
        }
        Err(Errno::NOENT) => {
            let Some(size) = spec.create_size else {
                return Err(TargetError::NotFound(path.to_path_buf()));
            };
            let dir = parent_dir(path);
            let st = rustix::fs::stat(dir).map_err(|e| io_err(dir, "stat", e))?;
            if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
                return Err(TargetError::NotFound(path.to_path_buf()));
            }
            check_free_space(path, dir, size)?;
            Ok(Geometry {
                path: path.to_path_buf(),
                size,
                logical_block_size: dir_dio_alignment(dir, st.st_dev),
                direct,
            })
        }
        Err(e) => Err(io_err(path, "stat", e)),
    }
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// O_DIRECT alignment new files in `dir` will have: what the filesystem
/// reports for the directory, else the logical block size of the device it
/// lives on, else 512.
fn dir_dio_alignment(dir: &Path, dev: u64) -> u64 {
    if let Ok(s) = rustix::fs::statx(
        rustix::fs::CWD,
        dir,
        rustix::fs::AtFlags::empty(),
        StatxFlags::DIOALIGN,
    ) {
        if s.stx_dio_offset_align > 0 {
            return u64::from(s.stx_dio_offset_align);
        }
    }
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(v) = std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/{rel}")) {
            if let Ok(n) = v.trim().parse::<u64>() {
                return n;
            }
        }
    }
    512
}

fn check_free_space(path: &Path, dir: &Path, size: u64) -> Result<(), TargetError> {
    if let Ok(vfs) = rustix::fs::statvfs(dir) {
        let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
        if free < size {
            return Err(TargetError::NoSpace {
                path: path.to_path_buf(),
                want: size,
                free,
            });
        }
    }
    Ok(())
}

impl OpenTarget {
    /// What validation needs to know of this target.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            path: self.path.clone(),
            size: self.size,
            logical_block_size: self.logical_block_size,
            direct: self.direct,
        }
    }

    /// Removes the file if iosurvey created it.
    pub fn remove_if_created(&self) -> std::io::Result<()> {
        if self.created {
            std::fs::remove_file(&self.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_fully_written_file_of_nonzero_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let spec = TargetSpec {
            path: path.clone(),
            create_size: Some(5 << 20),
        };
        let t = open_target(&spec, false, false).unwrap();
        assert!(t.created);
        assert_eq!(t.size, 5 << 20);
        assert_eq!(t.kind, TargetKind::File);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 5 << 20);
        assert!(data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
        t.remove_if_created().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn refuses_sparse_files_and_directories_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let sparse = dir.path().join("sparse");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let spec = |p: &Path| TargetSpec {
            path: p.to_path_buf(),
            create_size: None,
        };
        assert!(matches!(
            open_target(&spec(&sparse), false, false),
            Err(TargetError::Holes { .. })
        ));
        assert!(matches!(
            open_target(&spec(dir.path()), false, false),
            Err(TargetError::Unsupported { .. })
        ));
        assert!(matches!(
            open_target(&spec(&dir.path().join("none")), false, false),
            Err(TargetError::NotFound(_))
        ));
    }
}
