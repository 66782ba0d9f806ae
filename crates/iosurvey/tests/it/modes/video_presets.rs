//! `iosurvey video`'s 10-bit presets (issue 32): v210 and 10-bit DPX sized
//! from their packing, and a frametest line naming two frame sizes.

use super::video::video;
use crate::common::*;

/// Issue 32: the 10-bit presets post houses use, v210 (16 bytes every 6
/// pixels, rows padded to 128 bytes) and 10-bit DPX (4 bytes a pixel plus
/// frametest's 64 KiB header), sized from their packing; and a frametest
/// line naming a format and a `-z` size is refused, not silently `-z`'s.
#[test]
fn ten_bit_presets_and_a_format_with_z_said_not_guessed() {
    let text = stdout_ok(&video(&["--list-formats"]));
    for want in [
        "hd-v210",
        "uhd-v210",
        "5529600",
        "22118400",
        "10-bit 4:2:2 v210",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    for (format, bytes) in [
        ("hd-v210", "5529600"),
        ("uhd-v210", "22118400"),
        ("dpx-2k", "12812288"),
        ("dpx-4k", "51052544"),
    ] {
        let text = stdout_ok(&video(&[
            path_str(dir.path()),
            "--write",
            "--format",
            format,
            "--frames",
            "4",
            "--dry-run",
        ]));
        assert!(
            text.contains(&format!("({bytes} bytes")),
            "{format}: {text}"
        );
    }
    let out = video(&["-w", "2k", "-z", "100", path_str(dir.path())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("-w 2k (dpx-2k) and -z 100 name two frame sizes")
            && err.contains("-w 1 -z 100"),
        "{err}"
    );
    // frametest's own idiom for a size of its own still runs, at -z's size.
    let text = stdout_ok(&video(&[
        "-w",
        "1",
        "-z",
        "100",
        "-n",
        "2",
        path_str(dir.path()),
        "--dry-run",
    ]));
    assert!(text.contains("(102400 bytes"), "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
