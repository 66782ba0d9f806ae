//! Oracle ORION as `iosurvey matrix` takes it: its single-dash options,
//! from the rewriter's own table, the files it writes, and the command
//! line of a published run as an example.

use super::page::{Example, Spelling, ToolDoc};
use crate::flags::spellings::orion::SPELLINGS;

/// What each of ORION's options is (iosurvey's flag is said beside it).
fn what(option: &str) -> (Option<&'static str>, &'static str) {
    match option {
        "-run" => (Some("LEVEL"), "simple, normal, advanced, oltp or dss"),
        "-testname" => (
            Some("NAME"),
            "names the files, and the targets default to the lines of NAME.lun",
        ),
        "-num_disks" => (Some("N"), "spindles behind the targets; sets the loads"),
        "-size_small" => (Some("KB"), "small random I/O size"),
        "-size_large" => (Some("KB"), "large I/O size"),
        "-type" => (Some("rand|seq"), "large I/O random, or sequential streams"),
        "-num_streamIO" | "-num_streamio" => (Some("N"), "outstanding I/Os per sequential stream"),
        "-simulate" => (Some("concat|raid0"), "how the targets make one volume"),
        "-stripe" => (Some("KB"), "stripe size for raid0"),
        "-write" => (
            Some("PCT"),
            "percentage of writes (DESTROYS device data: --allow-destroy)",
        ),
        "-duration" => (Some("SECS"), "measured time of each point"),
        "-matrix" => (Some("TYPE"), "basic, detailed, row, col, point or max"),
        "-num_small" => (Some("N"), "small load for -matrix col, point and max"),
        "-num_large" => (Some("N"), "large load for -matrix row, point and max"),
        _ => (Some("VALUE"), "as ORION's"),
    }
}

pub fn doc() -> ToolDoc {
    let mut options: Vec<Spelling> = SPELLINGS
        .iter()
        .map(|&(o, flag, _)| {
            let (value, meaning) = what(o);
            Spelling::taken(o, value, format!("{flag}: {meaning}"))
        })
        .collect();
    options.extend([
        Spelling::taken(
            "-cache_size",
            Some("MB"),
            "--cache-warm: unmeasured warm-up before each point with large sequential I/O (0 for none)".into(),
        ),
        Spelling::taken("-help", None, "--help: iosurvey matrix's help, these spellings with it".into()),
        Spelling::taken("-verbose", None, "accepted and left out: the text always shows each point".into()),
        Spelling::taken("-hugenotneeded", None, "accepted and left out: iosurvey needs no huge pages".into()),
    ]);
    ToolDoc {
        tool: "orion",
        title: "ORION",
        mode: "matrix",
        how: "one dash and an underscore, the value apart: -size_small 8; sizes in KB, -cache_size in MB, -duration in seconds; any other single-dash word is refused by name",
        options,
        environment: Vec::new(),
        operands: "[TARGET]...",
        files: vec![
            ("NAME.lun", "the targets, one per line, when none is named (NAME is -testname's, orion by default)"),
            ("NAME_STAMP_summary.txt", "ORION's summary: the command line, the test it maps to, the maxima"),
            ("NAME_STAMP_iops.csv", "small I/O per second, large load by row and small load by column"),
            ("NAME_STAMP_mbps.csv", "large I/O MB/s, in the same grid"),
            ("NAME_STAMP_lat.csv", "mean small I/O latency (usecs), in the same grid"),
            ("NAME_STAMP_hist.txt", "latency histograms of each point"),
            ("NAME_STAMP_report.json", "iosurvey's JSON report; STAMP is yyyymmdd_hhmm, the files are in --out DIR (the current directory) and rewritten after every point"),
        ],
        examples: vec![
            Example {
                line: "orion -run advanced -testname r10-7 -num_disks 24 -size_small 4 -size_large 1024 -type rand -simulate concat -verbose -write 25 -duration 15 -matrix detailed -cache_size 256 --allow-destroy",
                what: "A published ORION 10.2 run's command line (the targets in r10-7.lun); iosurvey asks --allow-destroy before writing to devices",
            },
            Example {
                line: "orion -run simple -testname mytest",
                what: "ORION's basic matrix on the targets listed in mytest.lun",
            },
            Example {
                line: "iosurvey matrix --run oltp --num-disks 4 --time 10s /dev/sdb /dev/sdc",
                what: "iosurvey's own flags: small random reads at increasing load, the maximum IOPS",
            },
        ],
        see_also: vec!["iosurvey(1)", "iosurvey-survey(1)", "iosurvey-run(1)", "Oracle's ORION documentation"],
    }
}
