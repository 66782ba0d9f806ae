//! IRIX diskperf as `iosurvey diskperf` takes it: its options, from the
//! rewriter's own tables, and its man page's command line as an example.

use super::page::{Example, Spelling, ToolDoc};
use crate::flags::spellings::irix::{REFUSED, WITH_VALUE};

/// The value each of IRIX's options with a value names in its usage.
fn value_name(c: char) -> &'static str {
    match c {
        'n' => "NAME",
        't' => "SECS",
        's' => "FACTOR",
        'd' => "SECS",
        _ => "SIZE",
    }
}

/// `-n`, `-t`, ...
fn word(c: char) -> String {
    format!("-{c}")
}

pub fn doc() -> ToolDoc {
    let mut options = vec![
        Spelling::taken("-W", None, "--write: add the write tests (fwd_wt, bwd_wt, rnd_wt)".into()),
        Spelling::taken(
            "-D",
            None,
            "O_DIRECT, which iosurvey uses with or without it (--buffered goes through the page cache)".into(),
        ),
    ];
    options.extend(WITH_VALUE.iter().map(|&(c, flag, what)| {
        Spelling::taken(word(c), Some(value_name(c)), format!("{flag}: {what}"))
    }));
    options.extend(REFUSED.iter().map(|&(c, what, fix)| {
        let value = (c == 'd').then_some(value_name(c));
        Spelling::refused(word(c), value, what, fix)
    }));
    ToolDoc {
        tool: "diskperf",
        title: "IRIX diskperf",
        mode: "diskperf",
        how: "the value attached, -r4k, or apart, -r 4k; k, m and g are 2^10, 2^20 and 2^30",
        options,
        environment: Vec::new(),
        operands: "TESTPATH",
        files: Vec::new(),
        examples: vec![
            Example {
                line: "diskperf -D -W -n \"SGI ST373405LC\" -r4k /d/test",
                what: "IRIX diskperf's own line (a real run on an Octane's disk): write and read tests from 4 KiB requests up to 4 MiB on the test file /d/test, labelled; `iosurvey diskperf` with the same words without a link",
            },
            Example {
                line: "iosurvey diskperf -W -D -r4k -m16k -t1 -c256m -n \"VM disk, test file\" /tmp/dp.dat",
                what: "The same spellings: 4 to 16 KiB, 1 s per test, on a 256 MiB test file created and removed",
            },
            Example {
                line: "iosurvey diskperf /dev/sdb --min 4k --max 4m --time 1s --json dp.json",
                what: "iosurvey's own flags: reads only on a device (--write --allow-destroy to write it)",
            },
        ],
        see_also: vec!["iosurvey(1)", "iosurvey-video(1)", "iosurvey-profile(1)", "diskperf(1) on IRIX"],
    }
}
