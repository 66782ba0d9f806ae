//! `iosurvey diskperf` with frames (issue 32): IRIX's `-r` takes the
//! frame presets `--min` takes, and `--fps` needs a frame's size.

use super::diskperf::diskperf;
use crate::common::*;

/// Issue 32: IRIX's `-r` takes the frame presets `--min` takes, and a
/// frame rate without a frame's size is refused (one line, exit 2, before
/// any I/O) instead of counting 4 KiB requests as frames.
#[test]
fn r_takes_the_frame_presets_and_fps_needs_a_frame_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = diskperf(&[
        "-rpal-422",
        "-m",
        "2m",
        "-c8m",
        "-t0.1",
        "--fps",
        "25",
        path_str(dir.path()),
    ]);
    let text = stdout_ok(&out);
    assert!(
        text.contains("# frame pal-422 (720x576x2 = 829440 bytes"),
        "{text}"
    );
    assert!(text.contains("real time at 25 fps"), "{text}");
    // A size given to --min (or -r) is the user's own frame.
    let out = diskperf(&[
        "-r",
        "1m",
        "-m",
        "1m",
        "-c8m",
        "-t0.1",
        "--fps",
        "25",
        path_str(dir.path()),
    ]);
    assert!(stdout_ok(&out).contains("real time at 25 fps (1048576 bytes/frame"));
    let new = dir.path().join("new");
    for args in [
        vec![path_str(&new), "--fps", "25", "--size", "16m"],
        vec!["-c16m", "--fps", "24", path_str(&new)],
    ] {
        let out = diskperf(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("--fps needs a frame size"), "{args:?}: {err}");
        assert!(out.stdout.is_empty() && !new.exists(), "{args:?}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
