//! The fastest a block device's interface can move data, from sysfs: an
//! NVMe drive's PCIe link (`current_link_speed` x `current_link_width`), a
//! SATA drive's link (`ata_link/linkN/sata_spd`), the sum over the members
//! of an md or dm device. A rate above it came from somewhere else (a
//! cache, or a bug).

use std::path::{Path, PathBuf};

/// A ceiling: bytes per second, and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Ceiling {
    pub bytes_per_sec: u64,
    pub how: String,
}

/// The ceiling of the disk named `name` (`nvme0n1`, `sda`, `md0`, `dm-3`)
/// under the sysfs tree at `sys` (`/sys`), when sysfs tells it.
pub fn ceiling(sys: &Path, name: &str) -> Option<Ceiling> {
    ceiling_depth(sys, name, 0)
}

fn ceiling_depth(sys: &Path, name: &str, depth: u32) -> Option<Ceiling> {
    if depth > 8 {
        return None;
    }
    let block = sys.join("block").join(name);
    // md and dm: the sum over the members, when every member has one.
    let slaves: Vec<String> = std::fs::read_dir(block.join("slaves"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    if !slaves.is_empty() {
        let mut total = 0u64;
        let mut parts = Vec::new();
        for s in &slaves {
            // A member may be a partition: its disk's link.
            let disk = disk_of(sys, s).unwrap_or_else(|| s.clone());
            let c = ceiling_depth(sys, &disk, depth + 1)?;
            total += c.bytes_per_sec;
            parts.push(format!("{s}: {}", c.how));
        }
        return Some(Ceiling {
            bytes_per_sec: total,
            how: format!(
                "the sum over {} members ({})",
                slaves.len(),
                parts.join("; ")
            ),
        });
    }
    if name.starts_with("nvme") {
        return pcie(&block.join("device/device"));
    }
    sata(sys, &block)
}

/// The disk a partition `name` belongs to, when it is one.
fn disk_of(sys: &Path, name: &str) -> Option<String> {
    let real = std::fs::canonicalize(sys.join("class/block").join(name)).ok()?;
    if real.join("partition").exists() {
        real.parent()?.file_name()?.to_str().map(String::from)
    } else {
        None
    }
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A PCIe device's link: GT/s per lane, after the line code (8b/10b up to
/// 5 GT/s, 128b/130b from 8 GT/s), times the lanes.
fn pcie(dev: &Path) -> Option<Ceiling> {
    let speed = read(&dev.join("current_link_speed"))?;
    let width: u64 = read(&dev.join("current_link_width"))?.parse().ok()?;
    let gts: f64 = speed.split_whitespace().next()?.parse().ok()?;
    let efficiency = if gts <= 5.0 {
        8.0 / 10.0
    } else {
        128.0 / 130.0
    };
    let lane = gts * 1e9 * efficiency / 8.0;
    Some(Ceiling {
        bytes_per_sec: (lane * width as f64) as u64,
        how: format!("PCIe {speed} x{width}"),
    })
}

/// A SATA disk's link speed, 8b/10b coded: the `ataN` port in its device
/// path names `ata_link/linkN`.
fn sata(sys: &Path, block: &Path) -> Option<Ceiling> {
    let dev: PathBuf = std::fs::canonicalize(block.join("device")).ok()?;
    let port = dev
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .find_map(|c| c.strip_prefix("ata")?.parse::<u32>().ok())?;
    let spd = read(&sys.join(format!("class/ata_link/link{port}/sata_spd")))?;
    let gbps: f64 = spd.split_whitespace().next()?.parse().ok()?;
    Some(Ceiling {
        bytes_per_sec: (gbps * 1e9 * 0.8 / 8.0) as u64,
        how: format!("SATA link ata{port} at {spd}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    /// A sysfs tree with an NVMe drive on PCIe 3.0 x4, a SATA drive on a
    /// 6 Gbps link (its partition too), an md array over both, and a
    /// virtio disk.
    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let s = t.path();
        let pci = s.join("devices/pci0000:00/0000:00:01.0");
        write(&pci.join("current_link_speed"), "8.0 GT/s PCIe\n");
        write(&pci.join("current_link_width"), "4\n");
        let ctrl = pci.join("nvme/nvme0");
        fs::create_dir_all(&ctrl).unwrap();
        symlink(&pci, ctrl.join("device")).unwrap();
        fs::create_dir_all(s.join("block/nvme0n1")).unwrap();
        symlink(&ctrl, s.join("block/nvme0n1/device")).unwrap();

        let ata = s.join("devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0");
        let sda = ata.join("block/sda");
        fs::create_dir_all(sda.join("sda1")).unwrap();
        write(&sda.join("sda1/partition"), "1\n");
        fs::create_dir_all(s.join("block")).unwrap();
        symlink(&sda, s.join("block/sda")).unwrap();
        symlink(&ata, sda.join("device")).unwrap();
        fs::create_dir_all(s.join("class/block")).unwrap();
        symlink(sda.join("sda1"), s.join("class/block/sda1")).unwrap();
        symlink(&sda, s.join("class/block/sda")).unwrap();
        symlink(s.join("block/nvme0n1"), s.join("class/block/nvme0n1")).unwrap();
        write(&s.join("class/ata_link/link3/sata_spd"), "6.0 Gbps\n");

        fs::create_dir_all(s.join("block/md0/slaves/sda1")).unwrap();
        fs::create_dir_all(s.join("block/md0/slaves/nvme0n1")).unwrap();

        let virtio = s.join("devices/pci0000:00/0000:00:02.0/virtio1");
        fs::create_dir_all(&virtio).unwrap();
        fs::create_dir_all(s.join("block/vda")).unwrap();
        symlink(&virtio, s.join("block/vda/device")).unwrap();
        t
    }

    #[test]
    fn nvme_sata_and_md_ceilings_come_from_their_links() {
        let t = tree();
        let nvme = ceiling(t.path(), "nvme0n1").unwrap();
        assert_eq!(nvme.bytes_per_sec, 3_938_461_538);
        assert_eq!(nvme.how, "PCIe 8.0 GT/s PCIe x4");
        let sata = ceiling(t.path(), "sda").unwrap();
        assert_eq!(sata.bytes_per_sec, 600_000_000);
        let md = ceiling(t.path(), "md0").unwrap();
        assert_eq!(md.bytes_per_sec, 3_938_461_538 + 600_000_000, "{md:?}");
        assert!(md.how.starts_with("the sum over 2 members"), "{md:?}");
        assert_eq!(ceiling(t.path(), "vda"), None, "virtio has no link to read");
    }
}
