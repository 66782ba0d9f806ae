//! Plausibility warnings (issues 12 and 27) on real devices the tests make
//! (root): each check raised where its figures are implausible, and silent
//! where they are not. Every warning has a stable code, its evidence and
//! its threshold in the JSON. The checks of what backs a target are in
//! `memory`, of the interval series in `series`, of what the storage holds
//! in `stored`, of `parallel` in `parallel`; the helpers they share here.

mod memory;
mod parallel;
mod series;
mod stored;

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The codes of a point's warnings.
fn codes(p: &Value) -> Vec<String> {
    p["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array in {p}"))
        .iter()
        .map(|w| {
            assert!(w["evidence"].is_object(), "{w}");
            assert!(!w["threshold"].as_str().unwrap_or("").is_empty(), "{w}");
            w["code"].as_str().unwrap().to_string()
        })
        .collect()
}

fn has(p: &Value, code: &str) -> bool {
    codes(p).iter().any(|c| c == code)
}

/// A loop device over a file on the machine's disk (not memory), with
/// direct I/O, made non-rotational unless `rotational`.
struct DiskLoop {
    _dir: tempfile::TempDir,
    dev: LoopDev,
}

impl DiskLoop {
    fn new(size: u64, rotational: bool) -> Result<DiskLoop, String> {
        let d = DiskLoop::attached(size, &["--direct-io=on"])?;
        let rot = sysfs_dir(d.dev.path()).join("queue/rotational");
        std::fs::write(&rot, if rotational { "1" } else { "0" }).map_err(|e| e.to_string())?;
        Ok(d)
    }

    /// Attached with the losetup options `opts`, its flags as the kernel
    /// set them.
    fn attached(size: u64, opts: &[&str]) -> Result<DiskLoop, String> {
        require_root()?;
        let dir = tempfile::Builder::new()
            .prefix("iosurvey-warn")
            .tempdir_in("/var/tmp")
            .map_err(|e| e.to_string())?;
        let file = dir.path().join("backing.img");
        std::fs::write(&file, random_bytes(size as usize, 3)).map_err(|e| e.to_string())?;
        let dev = LoopDev::attach(&file, opts)?;
        Ok(DiskLoop { _dir: dir, dev })
    }

    fn path(&self) -> &str {
        path_str(self.dev.path())
    }
}

/// What the report says backs the first target ("" when nothing does).
fn backing(p: &Value) -> String {
    p["targets"][0]["memory_backed"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Random 4 KiB reads of `dev`, 2 MiB of them.
fn randread(dev: &str) -> Value {
    run_point(&["--rw", "randread", "--bs", "4k", "--bytes", "2m", dev])
}

/// The warning of code `code` of point `p`, or a panic naming the point.
fn warning(p: &Value, code: &str) -> Value {
    p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {}: {}", p["label"], p["warnings"]))
        .clone()
}
