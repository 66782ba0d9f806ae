//! Discards go through the write guard exactly as writes do: a device not
//! offered (`--allow-destroy`) or carrying a filesystem (without
//! `--force`) is refused, and its data is left as it was.

use crate::common::*;

#[test]
fn a_trim_on_a_device_not_offered_is_refused_and_touches_nothing() {
    let _lock = serial();
    need!(require_root());
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    let p = run_point(&["--rw", "write", "--bs", "1m", "--allow-destroy", dev]);
    assert_eq!(u(&p["total"]["write"]["bytes"]), 16 * MIB);
    let before = checksum(z.path(), None);
    for args in [
        &["--rw", "trim"][..],
        &["--rw", "randtrim", "--engine", "sync"][..],
        &["--rw", "randread", "--trim", "1"][..],
    ] {
        let mut all = vec!["run", dev, "--bs", "4k"];
        all.extend_from_slice(args);
        let out = iosurvey(&all);
        assert_refused(&out, &[dev, "--allow-destroy"]);
        assert_eq!(stderr_of(&out).trim_end().lines().count(), 1);
    }
    // --readonly wins over --allow-destroy, as for writes.
    let out = iosurvey(&["run", dev, "--rw", "trim", "--allow-destroy", "--readonly"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(
        checksum(z.path(), None),
        before,
        "a refused trim changed the device"
    );
}

#[test]
fn a_trim_on_a_device_with_a_filesystem_needs_force() {
    let _lock = serial();
    need!(require_root());
    need!(require_tool("mkfs.ext4"));
    let z = need!(Zram::new(16 * MIB));
    let dev = path_str(z.path());
    mkfs_ext4(z.path());
    let before = checksum(z.path(), None);
    let out = iosurvey(&[
        "run",
        dev,
        "--rw",
        "randtrim",
        "--bs",
        "4k",
        "--allow-destroy",
    ]);
    assert_refused(&out, &[dev, "--force"]);
    assert_eq!(checksum(z.path(), None), before);
}
