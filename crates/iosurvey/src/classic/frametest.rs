//! frametest as `iosurvey video` takes it: its short options, from the
//! rewriter's own tables, and its command lines as examples.

use super::page::{Example, Spelling, ToolDoc};
use crate::flags::spellings::frametest::{REFUSED, WITH_VALUE};

/// The value each of frametest's options names in its usage.
fn value_name(c: char) -> Option<&'static str> {
    match c {
        'f' => Some("RATE"),
        'p' | 'u' | 'h' => Some("SECS"),
        'c' => Some("PCT"),
        'x' => Some("FILE"),
        'o' => None,
        _ => Some("N"),
    }
}

pub fn doc() -> ToolDoc {
    let mut options = vec![
        Spelling::taken(
            "-w",
            Some("SIZE"),
            "--write frames of SIZE: a format (sd, hd, frametest's 2k and 4k, which are dpx-2k and dpx-4k, or any of --list-formats) or a number of KB".into(),
        ),
        Spelling::taken(
            "-r",
            Some("[SIZE]"),
            "--read the frames written before; SIZE as -w's (frametest reads it from the frames; here give it)".into(),
        ),
        Spelling::taken("-e", None, "--empty: files with no data, only open and close timed (written, or read with -r)".into()),
        Spelling::taken("-z", Some("KB"), "--frame-size in KB (frametest's idiom: -w 1 -z 40000)".into()),
    ];
    options.extend(WITH_VALUE.iter().map(|&(c, flag, what)| {
        Spelling::taken(format!("-{c}"), value_name(c), format!("{flag}: {what}"))
    }));
    options.extend([
        Spelling::taken(
            "-q",
            Some("N"),
            "--queue: frames a frame may wait behind the -f pace before it is dropped (needs -f); -q alone is iosurvey's --quiet".into(),
        ),
        Spelling::taken("-s", None, "--mode stream: every frame in one file or device".into()),
        Spelling::taken("-v", None, "--order rev: the frames backwards".into()),
        Spelling::taken("-m", None, "--order random".into()),
        Spelling::taken("--header", Some("KB"), "a bare number is KB in a frametest line, as in frametest".into()),
    ]);
    options.extend(REFUSED.iter().map(|&(c, what, fix)| {
        let fix = if c == 'h' {
            format!("{fix} (-h alone is --help)")
        } else {
            fix.to_string()
        };
        Spelling::refused(format!("-{c}"), value_name(c), what, &fix)
    }));
    ToolDoc {
        tool: "frametest",
        title: "frametest",
        mode: "video",
        how: "the value attached, -w2k, or apart, -w 2k",
        options,
        environment: Vec::new(),
        operands: "DIR",
        files: Vec::new(),
        examples: vec![
            Example {
                line: "frametest -w 2k -n 100 -t 2 /tmp/media --keep",
                what: "100 DPX 2K frames (12812288 bytes each) written by 2 threads, one file per frame in /tmp/media/iosurvey-frames, kept for a read",
            },
            Example {
                line: "frametest -r 2k -n 100 -t 2 -f 24 /tmp/media",
                what: "The same frames read back at 24 fps: frames dropped and the real-time verdict",
            },
            Example {
                line: "frametest -w 1 -z 40000 -s -n 50 /tmp/media",
                what: "frametest's idiom for a size of its own: 50 frames of 40000 KB in one stream file",
            },
            Example {
                line: "iosurvey video /tmp/media --write --format hd-422 --frames 600 --fps 30",
                what: "iosurvey's own flags: HD 4:2:2 frames written at 30 fps",
            },
        ],
        see_also: vec!["iosurvey(1)", "iosurvey-diskperf(1)", "frametest (DVS)", "AJA System Test"],
    }
}
