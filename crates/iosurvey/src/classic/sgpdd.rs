//! Lustre's sgpdd-survey as `iosurvey survey` takes it: its environment
//! variables, from the rewriter's own table, and the line of a published
//! survey as an example.

use super::page::{Example, Spelling, ToolDoc};
use crate::flags::spellings::sgpdd_env::{variables, DEVICES};

pub fn doc() -> ToolDoc {
    let mut environment: Vec<Spelling> = DEVICES
        .iter()
        .map(|&name| {
            Spelling::taken(
                name,
                Some("\"DEV ...\""),
                "the devices (host:dev too); exactly one of scsidevs and rawdevs, and without either no variable is read".into(),
            )
        })
        .collect();
    environment.extend(variables().map(|(name, flag, what)| {
        let value = match what {
            "words" if name == "actions" => "\"write read\"",
            "words" => "PREFIX",
            w if w.contains("MB") => "MB",
            w if w.contains("KB") => "KB",
            _ => "N",
        };
        let what = match name {
            "actions" => "the actions of each point, in order (write, read)",
            "rslt" => "the prefix of the files (PREFIX.summary, PREFIX.detail)",
            _ => what,
        };
        Spelling::taken(name, Some(value), format!("{flag}: {what}"))
    }));
    ToolDoc {
        tool: "sgpdd-survey",
        title: "sgpdd-survey",
        mode: "survey",
        how: "none: its interface is the environment",
        options: Vec::new(),
        environment,
        operands: "[iosurvey survey's flags]",
        files: vec![
            ("PREFIX.summary", "the lines printed, one per point (--out PREFIX, or rslt=PREFIX)"),
            ("PREFIX.detail", "one line per region of each point"),
        ],
        examples: vec![
            Example {
                line: "size=8192 crghi=256 thrhi=256 rawdevs=\"/dev/raw/raw1 /dev/raw/raw2 /dev/raw/raw3 /dev/raw/raw4 /dev/raw/raw5 /dev/raw/raw6 /dev/raw/raw7 /dev/raw/raw8\" sgpdd-survey --allow-destroy --format legacy",
                what: "A published survey of eight LUNs: 8 GiB each, 1 MiB records, up to 256 regions and 256 I/Os per device, in the older `N x min = product` lines",
            },
            Example {
                line: "size=128 crghi=4 thrhi=16 actions=\"write read\" scsidevs=\"/dev/zram2 /dev/zram3\" rslt=/tmp/sv sgpdd-survey --allow-destroy",
                what: "A short survey of two devices, its files /tmp/sv.summary and /tmp/sv.detail",
            },
            Example {
                line: "iosurvey survey /dev/sdb /dev/sdc --size 1g --crghi 16 --thrhi 64 --actions read",
                what: "iosurvey's own flags: reads only, nothing destroyed",
            },
        ],
        see_also: vec!["iosurvey(1)", "iosurvey-parallel(1)", "iosurvey-matrix(1)", "Lustre's sgpdd-survey and iokit-plot-sgpdd"],
    }
}
