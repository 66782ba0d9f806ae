//! frametest's own command line (`frametest -w 2k -n 1800 -t 4 -f 24 DIR`),
//! rewritten into `iosurvey video`'s flags before parsing. The report
//! keeps the line as typed.

use super::getopt::{no_equivalent, read, row, Row, Takes, Word};
use iosurvey_workload::modes::video::{find_format, parse_fps, FrameFormat};

/// frametest's options that map onto a flag of iosurvey's, the flag, and
/// what the value is.
pub const WITH_VALUE: [Row; 5] = [
    ('n', "--frames", "a number of frames"),
    ('t', "--threads", "a number of threads"),
    ('f', "--fps", "a frame rate"),
    ('l', "--loops", "a number of loops"),
    ('d', "--files-per-dir", "a number of files"),
];

/// frametest's options iosurvey has no meaning for, and what to do instead.
pub const REFUSED: [Row; 9] = [
    (
        'a',
        "asynchronous overlapped I/Os",
        "--depth N cuts each frame into N I/Os in flight, --threads N moves N frames at once",
    ),
    (
        'i',
        "I/Os per frame, one after another",
        "--depth N cuts each frame into N I/Os in flight",
    ),
    ('o', "out-of-order completion", "leave it out"),
    (
        'b',
        "frames buffered before playback starts",
        "leave it out",
    ),
    ('p', "a pause", "leave it out"),
    (
        'c',
        "a crop read of the middle of each frame",
        "leave it out",
    ),
    ('u', "the display interval", "leave it out"),
    (
        'h',
        "the histogram window",
        "the report has the whole histogram",
    ),
    (
        'x',
        "a CSV file in frametest's columns",
        "--csv FILE writes iosurvey's, one line per frame",
    ),
];

fn digits(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
}

fn takes(c: char) -> Option<Takes> {
    match c {
        'w' | 'z' => Some(Takes::Value),
        // `-r` may name the frames' size: `-r2k`, or `-r 2k DIR`.
        'r' => Some(Takes::Maybe(|w, last| {
            !last && (digits(w) || frametest_format(w).is_some())
        })),
        // `-q N` is frametest's queue; `-q` alone is iosurvey's --quiet, and
        // `-h` alone its --help.
        'q' | 'h' => Some(Takes::Maybe(|w, _| digits(w))),
        'e' | 's' | 'v' | 'm' | 'o' => Some(Takes::Nothing),
        _ if row(&WITH_VALUE, c).is_some() || row(&REFUSED, c).is_some() => Some(Takes::Value),
        _ => None,
    }
}

/// A format by frametest's name: its `2k` and `4k` are the DPX frames
/// (`dpx-2k`, `dpx-4k`; elsewhere in iosurvey `2k` is 2048 bytes), the
/// others iosurvey's presets.
fn frametest_format(v: &str) -> Option<&'static FrameFormat> {
    let name = match v.to_ascii_lowercase().as_str() {
        "2k" => "dpx-2k",
        "4k" => "dpx-4k",
        _ => v,
    };
    find_format(name)
}

/// A frame size as frametest takes it: a format name (`sd`, `hd`, `2k`,
/// `4k`, or any of iosurvey's presets) or a number of KB (2^10 bytes).
fn frame_size(opt: char, v: &str) -> Result<String, String> {
    if let Some(f) = frametest_format(v) {
        return Ok(format!("--format={}", f.name));
    }
    if digits(v) && v.bytes().any(|b| b != b'0') {
        return Ok(format!("--frame-size={v}KiB"));
    }
    Err(format!(
        "frametest's -{opt} '{v}': give a frame size in KB (12512) or a format (sd, hd, 2k, 4k; iosurvey video --list-formats shows all)"
    ))
}

/// Rewrites frametest's options (only for `iosurvey video`): `-w SIZE` is
/// `--write` with `--format` or `--frame-size` (a bare number is KB),
/// `-r [SIZE]` `--read`, `-e` `--empty` (written unless `-r`), `-z KB`
/// `--frame-size`, `-n` `--frames`, `-t` `--threads`, `-f` `--fps`, `-q N`
/// `--queue`, `-l` `--loops`, `-d` `--files-per-dir`, `-s` `--mode
/// stream`, `-v` and `-m` `--order rev` and `random`; a bare
/// `--header=N` is KB in such a line. Options iosurvey has no meaning for
/// are refused, naming them.
pub fn frametest_spellings(args: Vec<String>) -> Result<Vec<String>, String> {
    if args.get(1).map(String::as_str) != Some("video") {
        return Ok(args);
    }
    let words = read("video", &args[2..], takes).map_err(|b| {
        b.refusal(
            "frametest",
            "its options here: -w SIZE -r [SIZE] -e -z KB -n N -t N -f RATE -q N -l N -d N -s -v -m",
            &WITH_VALUE,
        )
    })?;
    let classic = words
        .iter()
        .any(|w| matches!(w, Word::Opt(c, v) if !(matches!(c, 'q' | 'h') && v.is_none())));
    let mut out = args[..2].to_vec();
    let (mut size, mut custom) = (None, None);
    // A format named by -w or -r (`-w 2k`), as typed.
    let mut named: Option<(char, String)> = None;
    let (mut write, mut read_, mut empty, mut queue, mut fps) = (false, false, false, false, false);
    let mut header_next = false;
    for w in words {
        match w {
            Word::Other(s) => {
                out.push(kb_header(&s, classic, &mut header_next));
                fps |= s == "--fps" || s.starts_with("--fps=");
            }
            Word::Opt('w', v) => {
                write = true;
                let v = v.unwrap_or_default();
                size = Some(frame_size('w', &v)?);
                named = frametest_format(&v).is_some().then_some(('w', v));
            }
            Word::Opt('r', v) => {
                read_ = true;
                if let Some(v) = v {
                    size = Some(frame_size('r', &v)?);
                    named = frametest_format(&v).is_some().then_some(('r', v));
                }
            }
            Word::Opt('z', v) => custom = Some(v.unwrap_or_default()),
            Word::Opt('e', _) => empty = true,
            Word::Opt(c @ ('q' | 'h'), None) => out.push(format!("-{c}")),
            Word::Opt('q', Some(v)) => {
                queue = true;
                out.push(format!("--queue={}", number('q', "a number of frames", v)?));
            }
            Word::Opt('s', _) => out.push("--mode=stream".into()),
            Word::Opt('v', _) => out.push("--order=rev".into()),
            Word::Opt('m', _) => out.push("--order=random".into()),
            Word::Opt(c, v) => {
                if let Some(r) = row(&REFUSED, c) {
                    return Err(no_equivalent("frametest", r));
                }
                let (_, flag, what) =
                    row(&WITH_VALUE, c).expect("takes() knows only these letters");
                let v = v.unwrap_or_default();
                let v = if c == 'f' {
                    fps = true;
                    parse_fps(&v).map(|_| v.clone()).map_err(|_| {
                        format!("frametest's -f '{v}': give a frame rate (24, 29.97)")
                    })?
                } else {
                    number(c, what, v)?
                };
                out.push(format!("{flag}={v}"));
            }
        }
    }
    if write && read_ {
        return Err(
            "frametest's -w and -r are two tests; give one (write first, then read)".into(),
        );
    }
    if empty && size.is_some() {
        return Err(
            "frametest's -e (empty frames) takes no frame size; drop the size after -w or -r"
                .into(),
        );
    }
    if queue && !fps {
        return Err("frametest's -q N (frames queued before one is dropped) needs -f RATE, the pace they are queued behind".into());
    }
    // frametest's -z replaces the size -w gives (its idiom is `-w 1 -z
    // 40000`, -w's number a placeholder); after a format's name the user
    // meant that format, so two sizes are named: said, not guessed.
    if let (Some(kb), Some((opt, name))) = (&custom, &named) {
        let f = frametest_format(name).map_or(name.as_str(), |f| f.name);
        return Err(format!(
            "frametest's -{opt} {name} ({f}) and -z {kb} name two frame sizes, and frametest uses -z's: give -{opt} 1 -z {kb} for {kb} KB frames, or -{opt} {name} alone"
        ));
    }
    // What the test is goes first, before any `--`.
    let mut test = Vec::new();
    match custom {
        Some(kb) if digits(&kb) && kb.bytes().any(|b| b != b'0') => {
            test.push(format!("--frame-size={kb}KiB"))
        }
        Some(kb) => {
            return Err(format!(
                "frametest's -z '{kb}': give a frame size in KB (40000)"
            ))
        }
        None => test.extend(size),
    }
    if write || (empty && !read_) {
        test.push("--write".into());
    }
    if read_ {
        test.push("--read".into());
    }
    if empty {
        test.push("--empty".into());
    }
    out.splice(2..2, test);
    Ok(out)
}

/// `v` if it is a whole number, else why frametest's option `c` cannot take it.
fn number(c: char, what: &str, v: String) -> Result<String, String> {
    if digits(&v) {
        Ok(v)
    } else {
        Err(format!("frametest's -{c} '{v}': give {what}"))
    }
}

/// `--header N` (or `=N`) with a bare number is KB in a frametest line, as
/// frametest's own `--header` is; anything else is kept as typed.
fn kb_header(word: &str, classic: bool, value_next: &mut bool) -> String {
    let was_next = std::mem::replace(value_next, word == "--header");
    if !classic {
        return word.to_string();
    }
    if was_next && digits(word) {
        return format!("{word}KiB");
    }
    match word.strip_prefix("--header=") {
        Some(v) if digits(v) => format!("--header={v}KiB"),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        std::iter::once("iosurvey")
            .chain(line.split(' '))
            .map(String::from)
            .collect()
    }

    fn rewrite(line: &str) -> Vec<String> {
        frametest_spellings(argv(line)).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    #[test]
    fn a_write_test_with_a_format_or_a_size_in_kb() {
        assert_eq!(
            rewrite("video -w 2k -n 100 -t 4 DIR"),
            argv("video --format=dpx-2k --write --frames=100 --threads=4 DIR")
        );
        assert_eq!(
            rewrite("video -w12512 -l2 DIR"),
            argv("video --frame-size=12512KiB --write --loops=2 DIR")
        );
        assert_eq!(
            rewrite("video -w hd DIR"),
            argv("video --format=hd-422 --write DIR")
        );
        // frametest's idiom for a size of its own: -w 1 -z KB.
        assert_eq!(
            rewrite("video -w 1 -z 40000 DIR"),
            argv("video --frame-size=40000KiB --write DIR")
        );
    }

    #[test]
    fn a_read_test_may_name_its_size_and_the_last_word_is_the_target() {
        assert_eq!(rewrite("video -r DIR"), argv("video --read DIR"));
        assert_eq!(
            rewrite("video -r 4k -n 10 DIR"),
            argv("video --format=dpx-4k --read --frames=10 DIR")
        );
        assert_eq!(
            rewrite("video -r4k -- DIR"),
            argv("video --format=dpx-4k --read -- DIR")
        );
        // `-r 2k` with nothing after: 2k is the directory.
        assert_eq!(rewrite("video -r 2k"), argv("video --read 2k"));
    }

    #[test]
    fn pace_queue_order_stream_empty_and_iosurveys_quiet() {
        assert_eq!(
            rewrite("video -w sd -f 24 -q 2 -s -v -q DIR"),
            argv("video --format=ntsc-422 --write --fps=24 --queue=2 --mode=stream --order=rev -q DIR")
        );
        assert_eq!(
            rewrite("video -e -n 50 -d 10 DIR"),
            argv("video --write --empty --frames=50 --files-per-dir=10 DIR")
        );
        assert_eq!(rewrite("video -e -r DIR"), argv("video --read --empty DIR"));
        assert_eq!(
            rewrite("video -w 2k --header 16 -m DIR"),
            argv("video --format=dpx-2k --write --header 16KiB --order=random DIR")
        );
    }

    #[test]
    fn iosurvey_spellings_are_left_alone() {
        for line in [
            "video DIR --write --format 2k --header 16 -q",
            "video --fps 24 --queue 2 --frames 10 DIR",
            "run -w x",
        ] {
            assert_eq!(rewrite(line), argv(line));
        }
    }

    #[test]
    fn bad_lines_are_refused_in_one_line_naming_the_option() {
        for (line, want) in [
            ("video -w vhs DIR", "frametest's -w 'vhs'"),
            ("video -w 0 DIR", "frametest's -w '0'"),
            ("video -w 2k -r DIR", "-w and -r are two tests"),
            (
                "video -e -w 2k DIR",
                "-e (empty frames) takes no frame size",
            ),
            ("video -w 2k -q 4 DIR", "needs -f RATE"),
            ("video -w 2k -a 4 DIR", "-a (asynchronous overlapped I/Os)"),
            ("video -w 2k -h 5 DIR", "-h (the histogram window)"),
            ("video -w 2k -x out.csv DIR", "--csv FILE"),
            ("video -w 2k -o DIR", "-o (out-of-order completion)"),
            ("video -w 2k -k DIR", "unknown frametest option '-k'"),
            ("video -w 1 -z 2k DIR", "frametest's -z '2k'"),
            (
                "video -w 2k -z 100 DIR",
                "-w 2k (dpx-2k) and -z 100 name two frame sizes",
            ),
            ("video -r hd -z 100 DIR", "give -r 1 -z 100"),
            ("video DIR -n", "-n needs a number of frames"),
            ("video -w 2k -n x DIR", "-n 'x': give a number of frames"),
            ("video -w 2k -f fast DIR", "-f 'fast': give a frame rate"),
        ] {
            let e = frametest_spellings(argv(line)).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
