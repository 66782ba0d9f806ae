//! The device under a target, for the report and the history database:
//! its kernel name, model, serial (hashed), firmware, how it is attached,
//! its I/O scheduler, an md array's layout; for a file, its filesystem and
//! mount options too. From sysfs and the mount table; whatever they do
//! not tell is left out.

use iosurvey_model::document::DeviceReport;
use iosurvey_model::TargetKind;
use rustix::fs::{AtFlags, StatxFlags};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_64;

/// What `fd` (a target of `kind`) is on; `None` when nothing is known.
pub fn describe(fd: &OwnedFd, kind: TargetKind) -> Option<DeviceReport> {
    let st = rustix::fs::fstat(fd).ok()?;
    let devno = match kind {
        TargetKind::Block => st.st_rdev,
        _ => st.st_dev,
    };
    let mut d = disk(
        Path::new("/sys"),
        rustix::fs::major(devno),
        rustix::fs::minor(devno),
    )
    .unwrap_or_default();
    if kind != TargetKind::Block {
        let mnt = rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)
            .ok()
            .filter(|s| StatxFlags::from_bits_retain(s.stx_mask).contains(StatxFlags::MNT_ID))
            .map(|s| s.stx_mnt_id);
        if let (Some(id), Ok(table)) = (mnt, std::fs::read_to_string("/proc/self/mountinfo")) {
            if let Some(m) = mount_entry(&table, id) {
                d.filesystem = Some(m.filesystem);
                d.mount_options = Some(m.options);
                d.mount_point = Some(m.point);
                d.mount_source = Some(m.source);
            }
        }
    }
    (d != DeviceReport::default()).then_some(d)
}

/// The whole disk of block device `major:minor` under the sysfs tree
/// `sys`: a partition's disk, with what sysfs says of it.
pub fn disk(sys: &Path, major: u32, minor: u32) -> Option<DeviceReport> {
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let mut dir = std::fs::canonicalize(&link).ok()?;
    // A partition: its disk is the directory above.
    if dir.join("partition").exists() {
        dir = dir.parent()?.to_path_buf();
    }
    let name = dir.file_name()?.to_str()?.to_string();
    let read = |rel: &str| read_trimmed(&dir.join(rel));
    let serial = read("device/serial")
        .or_else(|| read("serial"))
        .or_else(|| vpd_serial(&dir.join("device/vpd_pg80")))
        .filter(|s| !s.is_empty());
    Some(DeviceReport {
        transport: Some(transport(&name, &dir)),
        model: read("device/model").filter(|s| !s.is_empty()),
        serial_hash: serial.map(|s| format!("{:016x}", XxHash3_64::oneshot(s.as_bytes()))),
        firmware: read("device/firmware_rev")
            .or_else(|| read("device/rev"))
            .filter(|s| !s.is_empty()),
        scheduler: read("queue/scheduler").and_then(|s| chosen(&s)),
        array: read("md/level").map(|level| {
            let members = members(&dir);
            format!("{level} of {}", members.join(","))
        }),
        name: Some(name),
        filesystem: None,
        mount_options: None,
        mount_point: None,
        mount_source: None,
    })
}

/// The scheduler in use: the one in brackets (`none [mq-deadline] kyber`),
/// or the only one named.
fn chosen(s: &str) -> Option<String> {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if a < b => Some(s[a + 1..b].to_string()),
        _ => s.split_whitespace().next().map(String::from),
    }
}

/// How the disk `name` (its sysfs directory `dir`) is attached.
fn transport(name: &str, dir: &Path) -> String {
    let real = dir.to_string_lossy();
    let kind = if name.starts_with("nvme") {
        "nvme"
    } else if name.starts_with("md") {
        "md"
    } else if name.starts_with("dm-") {
        "dm"
    } else if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("zram") {
        "zram"
    } else if name.starts_with("ram") {
        "ram"
    } else if name.starts_with("vd") || real.contains("/virtio") && !name.starts_with("sd") {
        "virtio"
    } else if name.starts_with("mmcblk") {
        "mmc"
    } else if real.contains("/usb") {
        "usb"
    } else if real.contains("/ata") {
        "sata"
    } else if real.contains("/end_device-") || real.contains("/sas_") {
        "sas"
    } else if name.starts_with("sd") {
        "scsi"
    } else {
        "other"
    };
    kind.to_string()
}

/// An md or dm device's members, by name.
fn members(dir: &Path) -> Vec<String> {
    let mut m: Vec<String> = std::fs::read_dir(dir.join("slaves"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    m.sort();
    m
}

/// The serial in a SCSI unit serial number page (0x80): its text after
/// the 4-byte header.
fn vpd_serial(p: &PathBuf) -> Option<String> {
    let b = std::fs::read(p).ok()?;
    let text = String::from_utf8_lossy(b.get(4..)?).trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn read_trimmed(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// One mount of the mount table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub filesystem: String,
    /// The mount's options, then the superblock's.
    pub options: String,
    /// Where it is mounted.
    pub point: String,
    /// What is mounted (a device, an export, `tmpfs`).
    pub source: String,
}

/// The filesystem type and options (the mount's, then the superblock's)
/// of mount `id` in a mount table in `/proc/self/mountinfo`'s layout.
pub fn mount_of(table: &str, id: u64) -> Option<(String, String)> {
    mount_entry(table, id).map(|m| (m.filesystem, m.options))
}

/// Mount `id` of a mount table in `/proc/self/mountinfo`'s layout, its
/// paths unescaped (the kernel writes a blank as `\040`).
pub fn mount_entry(table: &str, id: u64) -> Option<MountEntry> {
    for line in table.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        if f.first().and_then(|x| x.parse::<u64>().ok()) != Some(id) {
            continue;
        }
        let opts = f.get(5)?;
        let r: Vec<&str> = right.split(' ').collect();
        let fs = r.first()?.to_string();
        let sb = r.get(2).copied().unwrap_or("");
        let all = match sb {
            "" => opts.to_string(),
            sb => format!("{opts},{sb}"),
        };
        return Some(MountEntry {
            filesystem: fs,
            options: all,
            point: unescape(f.get(4)?),
            source: unescape(r.get(1).copied().unwrap_or("")),
        });
    }
    None
}

/// A mount table's field with its octal escapes (`\040`, `\011`,
/// `\012`, `\134`) turned back into the bytes they stand for.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                let v = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_partition_is_described_by_its_disk_with_the_serial_hashed() {
        let sys = tempfile::tempdir().unwrap();
        let disk_dir = sys
            .path()
            .join("devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
        let part = disk_dir.join("sda1");
        fs::create_dir_all(part.clone()).unwrap();
        fs::write(part.join("partition"), "1\n").unwrap();
        fs::create_dir_all(disk_dir.join("device")).unwrap();
        fs::create_dir_all(disk_dir.join("queue")).unwrap();
        fs::write(disk_dir.join("device/model"), "Samsung SSD 870\n").unwrap();
        // The SCSI layer's rev: 4 characters, a SATA drive's firmware cut short.
        fs::write(disk_dir.join("device/rev"), "2B6Q\n").unwrap();
        fs::write(
            disk_dir.join("device/vpd_pg80"),
            b"\0\x80\0\x0fS6PNNX0R123456A",
        )
        .unwrap();
        fs::write(
            disk_dir.join("queue/scheduler"),
            "none [mq-deadline] kyber bfq\n",
        )
        .unwrap();
        fs::create_dir_all(sys.path().join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&part, sys.path().join("dev/block/8:1")).unwrap();
        let d = disk(sys.path(), 8, 1).unwrap();
        assert_eq!(d.name.as_deref(), Some("sda"));
        assert_eq!(d.model.as_deref(), Some("Samsung SSD 870"));
        assert_eq!(d.firmware.as_deref(), Some("2B6Q"));
        assert_eq!(d.transport.as_deref(), Some("sata"));
        assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
        let h = d.serial_hash.unwrap();
        assert_eq!(h.len(), 16);
        assert!(!h.contains("S6PNN"));
        assert_eq!(
            h,
            format!("{:016x}", XxHash3_64::oneshot(b"S6PNNX0R123456A"))
        );
    }

    #[test]
    fn an_md_array_names_its_level_and_members() {
        let sys = tempfile::tempdir().unwrap();
        let md = sys.path().join("devices/virtual/block/md0");
        for s in ["slaves/sdc", "slaves/sdb", "md", "queue"] {
            fs::create_dir_all(md.join(s)).unwrap();
        }
        fs::write(md.join("md/level"), "raid10\n").unwrap();
        fs::write(md.join("queue/scheduler"), "none\n").unwrap();
        fs::create_dir_all(sys.path().join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&md, sys.path().join("dev/block/9:0")).unwrap();
        let d = disk(sys.path(), 9, 0).unwrap();
        assert_eq!(d.transport.as_deref(), Some("md"));
        assert_eq!(d.array.as_deref(), Some("raid10 of sdb,sdc"));
        assert_eq!(d.scheduler.as_deref(), Some("none"));
        assert!(d.model.is_none() && d.serial_hash.is_none());
        assert!(disk(sys.path(), 9, 1).is_none());
    }

    #[test]
    fn the_mount_table_gives_the_filesystem_and_both_sets_of_options() {
        let t = "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n\
                 40 22 0:35 / /mnt/b rw,noatime - btrfs /dev/sdb rw,compress-force=zstd:3,space_cache=v2\n";
        assert_eq!(
            mount_of(t, 40),
            Some((
                "btrfs".into(),
                "rw,noatime,rw,compress-force=zstd:3,space_cache=v2".into()
            ))
        );
        assert_eq!(
            mount_of(t, 22).unwrap(),
            ("ext4".into(), "rw,relatime,rw,errors=remount-ro".into())
        );
        assert_eq!(mount_of(t, 7), None);
    }

    #[test]
    fn a_mount_names_its_point_and_source_unescaped() {
        let t = "41 22 7:3 / /mnt/my\\040disk rw - xfs /dev/loop3 rw\n";
        let m = mount_entry(t, 41).unwrap();
        assert_eq!(
            (m.point.as_str(), m.source.as_str(), m.filesystem.as_str()),
            ("/mnt/my disk", "/dev/loop3", "xfs")
        );
    }

    #[test]
    fn a_file_here_names_its_filesystem() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let fd: OwnedFd = f.reopen().unwrap().into();
        let d = describe(&fd, TargetKind::File).expect("the mount table names every file's mount");
        assert!(d.filesystem.as_deref().is_some_and(|s| !s.is_empty()));
        assert!(d.mount_point.as_deref().is_some_and(|p| p.starts_with('/')));
        assert!(d
            .mount_options
            .as_deref()
            .is_some_and(|s| s.starts_with("r")));
    }
}
