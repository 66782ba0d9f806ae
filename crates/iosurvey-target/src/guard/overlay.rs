//! Files seen through overlayfs: one file, two identities. Through an
//! overlay mount a file shows the overlay's `st_dev` but the inode number
//! of the real file in its upper or lower layer, and a loop device over
//! either name reports the identity of the name it was given. So a file
//! on an overlay is the same storage as a file of the same inode number
//! on any of the overlay's layers (or on another overlay sharing a layer).
//!
//! Matching by inode number across the layers needs no path (the path a
//! loop device was given may be stale, and the overlay may live in
//! another mount namespace); it is exact where it matters (the upper
//! layer keeps the real inode number, and `xino` only adds high bits,
//! which are left out of the comparison) and errs only towards refusing.
//! An overlay whose layers cannot be told (relative or unreachable layer
//! paths) may lie on any device.

use super::devno::Devno;
use super::inuse::{all_mounts, unescape, MountEntry};
use std::collections::{BTreeMap, BTreeSet};

/// The bits of an inode number that name the real file: `xino` puts the
/// layer's index in the high bits (a few of them, one per doubling of the
/// number of layers).
const INO_BITS: u64 = (1 << 48) - 1;

/// The overlay mounts of the host (every mount namespace), by the device
/// number of each, with the devices their layers lie on (`None`: cannot
/// be told, any device).
#[derive(Clone, Debug, Default)]
pub(crate) struct Overlays {
    layers: BTreeMap<Devno, Option<BTreeSet<Devno>>>,
}

impl Overlays {
    /// The overlays mounted now, in any mount namespace.
    pub(crate) fn now() -> Overlays {
        Overlays::of(&all_mounts())
    }

    /// The overlays among `mounts`, each with its layers' devices, to any
    /// depth (an overlay whose layer is itself on an overlay).
    pub(crate) fn of(mounts: &[MountEntry]) -> Overlays {
        let mut layers: BTreeMap<Devno, Option<BTreeSet<Devno>>> = BTreeMap::new();
        for m in mounts.iter().filter(|m| m.fstype == "overlay") {
            let Some(dev) = m.devno else { continue };
            let found = layer_devices(m);
            let entry = layers.entry(dev).or_insert(Some(BTreeSet::new()));
            *entry = match (entry.take(), found) {
                (Some(mut a), Some(b)) => {
                    a.extend(b);
                    Some(a)
                }
                _ => None,
            };
        }
        let mut o = Overlays { layers };
        o.close_over_nested();
        o
    }

    /// Adds to each overlay's layers the layers of the overlays among
    /// them, until nothing changes.
    fn close_over_nested(&mut self) {
        loop {
            let mut changed = false;
            let snapshot = self.layers.clone();
            for set in self.layers.values_mut() {
                let Some(s) = set else { continue };
                for d in s.clone() {
                    match snapshot.get(&d) {
                        Some(None) => {
                            *set = None;
                            changed = true;
                            break;
                        }
                        Some(Some(inner)) if !inner.is_subset(s) => {
                            s.extend(inner);
                            changed = true;
                        }
                        _ => {}
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Whether files of the filesystem `fs` may lie on the device (or
    /// filesystem) `d`: `fs` is `d`, or an overlay with a layer on `d`
    /// (or whose layers cannot be told).
    pub(crate) fn reaches(&self, fs: Devno, d: Devno) -> bool {
        fs == d
            || self
                .layers
                .get(&fs)
                .is_some_and(|l| l.as_ref().is_none_or(|l| l.contains(&d)))
    }

    /// Whether the files `a` and `b` (each `st_dev`, inode) may be one
    /// file: the same identity, or the same real file seen through an
    /// overlay and on one of its layers (or through two overlays that
    /// share a layer).
    pub(crate) fn same_file(&self, a: (Devno, u64), b: (Devno, u64)) -> bool {
        if a == b {
            return true;
        }
        if (a.1 & INO_BITS) != (b.1 & INO_BITS) {
            return false;
        }
        let (oa, ob) = (self.layers.get(&a.0), self.layers.get(&b.0));
        match (oa, ob) {
            (None, None) => false,
            (Some(_), None) => self.reaches(a.0, b.0),
            (None, Some(_)) => self.reaches(b.0, a.0),
            (Some(Some(la)), Some(Some(lb))) => !la.is_disjoint(lb),
            // Two overlays, one whose layers cannot be told.
            (Some(_), Some(_)) => true,
        }
    }
}

/// The devices the layers of the overlay mount `m` lie on (its `upperdir`,
/// `lowerdir` and `datadir` options, reached in its mount namespace), or
/// `None` when one cannot be told (a relative path, a path that is gone).
fn layer_devices(m: &MountEntry) -> Option<BTreeSet<Devno>> {
    let prefix = m.root.as_deref()?;
    let mut out = BTreeSet::new();
    for opt in m.options.split(',') {
        let Some((key, value)) = opt.split_once('=') else {
            continue;
        };
        if !matches!(
            key,
            "lowerdir" | "lowerdir+" | "upperdir" | "datadir+" | "workdir"
        ) {
            continue;
        }
        // Layers of lowerdir are separated by ':' (one in a path is
        // escaped); "::" separates data-only layers.
        for layer in value.split(':').filter(|l| !l.is_empty()) {
            let path = unescape(layer);
            if !path.starts_with('/') {
                return None;
            }
            let st = rustix::fs::stat(format!("{prefix}{path}").as_str()).ok()?;
            out.insert(st.st_dev);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlay(dev: Devno, layers: Option<&[Devno]>) -> (Devno, Option<BTreeSet<Devno>>) {
        (dev, layers.map(|l| l.iter().copied().collect()))
    }

    #[test]
    fn a_file_through_an_overlay_is_the_file_of_that_inode_on_its_layers() {
        let o = Overlays {
            layers: [overlay(40, Some(&[7])), overlay(41, None)].into(),
        };
        assert!(o.same_file((40, 9), (7, 9)));
        assert!(o.same_file((7, 9), (40, 9)));
        // xino's high bits are the layer's index.
        assert!(o.same_file((40, 9 | (1 << 62)), (7, 9)));
        assert!(!o.same_file((40, 9), (7, 10)));
        assert!(!o.same_file((40, 9), (8, 9)));
        assert!(!o.same_file((7, 9), (8, 9)));
        // Layers that cannot be told: any device.
        assert!(o.same_file((41, 9), (8, 9)));
        assert!(o.same_file((41, 9), (40, 9)));
        assert!(o.reaches(40, 7) && !o.reaches(40, 8) && o.reaches(41, 8));
    }

    #[test]
    fn layers_of_nested_overlays_are_followed() {
        let mut o = Overlays {
            layers: [overlay(40, Some(&[41])), overlay(41, Some(&[7]))].into(),
        };
        o.close_over_nested();
        assert!(o.same_file((40, 9), (7, 9)));
    }

    #[test]
    fn relative_layer_paths_cannot_be_told() {
        let m = MountEntry {
            devno: Some(40),
            source: None,
            point: "/m".into(),
            foreign: None,
            fstype: "overlay".into(),
            options: "rw,lowerdir=lo,upperdir=up,workdir=wk".into(),
            root: Some(String::new()),
            source_file: None,
        };
        assert_eq!(layer_devices(&m), None);
        let m = MountEntry {
            options: "rw,lowerdir=/:/proc,upperdir=/".into(),
            ..m
        };
        assert_eq!(layer_devices(&m).map(|l| l.len()), Some(2));
    }
}
