//! sgpdd-survey's environment-variable interface (`size=8192 crghi=16
//! scsidevs="/dev/sdb /dev/sdc" iosurvey survey`), turned into `iosurvey
//! survey`'s flags before parsing.
//!
//! `size`, `actions` and the like are short, common names that a shell may
//! hold for reasons of its own, so the variables are read only when
//! `scsidevs` (or `rawdevs`) is set: naming the devices that way is what
//! says the line is sgpdd-survey's. A flag or a device given on the command
//! line wins over its variable.

use clap::parser::ValueSource;
use clap::CommandFactory;

/// sgpdd-survey's variables, the id and flag of iosurvey's, and the unit
/// of its number (MB and KB there are 2^20 and 2^10 bytes).
const VARIABLES: [(&str, &str, &str, Unit); 10] = [
    ("size", "size", "--size", Unit::Bytes("MiB")),
    ("rszlo", "rszlo", "--rszlo", Unit::Bytes("KiB")),
    ("rszhi", "rszhi", "--rszhi", Unit::Bytes("KiB")),
    ("crglo", "crglo", "--crglo", Unit::Count),
    ("crghi", "crghi", "--crghi", Unit::Count),
    ("thrlo", "thrlo", "--thrlo", Unit::Count),
    ("thrhi", "thrhi", "--thrhi", Unit::Count),
    ("boundary", "boundary", "--boundary", Unit::Count),
    ("actions", "actions", "--actions", Unit::Words),
    ("rslt", "prefix", "--out", Unit::Words),
];

/// The variables that name the devices: exactly one of them.
pub const DEVICES: [&str; 2] = ["scsidevs", "rawdevs"];

#[derive(Clone, Copy)]
enum Unit {
    /// A whole number of this unit.
    Bytes(&'static str),
    /// A whole number.
    Count,
    /// Taken as written.
    Words,
}

/// sgpdd-survey's variables beside the devices': each name, iosurvey's
/// flag, and what its value is (`a number of MB`, ...).
pub fn variables() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    VARIABLES.iter().map(|&(name, _, flag, unit)| {
        let what = match unit {
            Unit::Bytes("MiB") => "a number of MB (2^20 bytes)",
            Unit::Bytes(_) => "a number of KB (2^10 bytes)",
            Unit::Count => "a number",
            Unit::Words => "words",
        };
        (name, flag, what)
    })
}

/// What was made of sgpdd-survey's variables.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Taken {
    /// The variables read, as `NAME=VALUE`, in the order of the table.
    pub read: Vec<String>,
    /// Variables set but not read because the command line gave the flag
    /// (or the devices).
    pub overridden: Vec<&'static str>,
}

impl Taken {
    /// One line for stderr, or `None` when no variable was read.
    pub fn line(&self) -> Option<String> {
        if self.read.is_empty() {
            return None;
        }
        let read: Vec<String> = self
            .read
            .iter()
            .map(|nv| match nv.split_once('=') {
                Some((n, v)) if v.contains(char::is_whitespace) || v.is_empty() => {
                    format!("{n}=\"{v}\"")
                }
                _ => nv.clone(),
            })
            .collect();
        let mut line = format!("sgpdd-survey's variables taken: {}", read.join(" "));
        if !self.overridden.is_empty() {
            line.push_str(&format!(
                " (the command line's own instead of {})",
                self.overridden.join(", ")
            ));
        }
        Some(line)
    }
}

/// Rewrites `iosurvey survey`'s command line with sgpdd-survey's variables
/// from `env`, read only when `scsidevs` or `rawdevs` is set: each becomes
/// its flag (`size` in MB, `rszlo`/`rszhi` in KB, `actions` as listed,
/// `rslt` the `--out` prefix) unless the command line gives that flag, and
/// the devices are appended unless the command line names some. Returns
/// the line to parse and what was taken; anything else is returned as is.
pub fn sgpdd_variables(
    args: Vec<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<String>, Taken), String> {
    if args.get(1).map(String::as_str) != Some("survey") {
        return Ok((args, Taken::default()));
    }
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let devices = match (set(DEVICES[0]), set(DEVICES[1])) {
        (None, None) => return Ok((args, Taken::default())),
        (Some(_), Some(_)) => return Err(
            "both scsidevs and rawdevs are set; sgpdd-survey takes one of them, so unset the other"
                .into(),
        ),
        (Some(d), None) => (DEVICES[0], d),
        (None, Some(d)) => (DEVICES[1], d),
    };
    // What the command line gives, as clap sees it (devices not required
    // here); a line clap refuses is left for it to refuse.
    let cmd = crate::flags::cli::Cli::command()
        .mut_subcommand("survey", |s| s.mut_arg("devices", |a| a.required(false)));
    let Ok(matches) = cmd.try_get_matches_from(&args) else {
        return Ok((args, Taken::default()));
    };
    let Some(given) = matches.subcommand_matches("survey") else {
        return Ok((args, Taken::default()));
    };
    let on_line = |id: &str| given.value_source(id) == Some(ValueSource::CommandLine);
    let mut taken = Taken::default();
    let mut flags = Vec::new();
    for (name, id, flag, unit) in VARIABLES {
        let Some(v) = set(name) else { continue };
        if on_line(id) {
            taken.overridden.push(name);
            continue;
        }
        let v = v.trim();
        let value = match unit {
            Unit::Bytes(u) if whole(v) => format!("{v}{u}"),
            Unit::Count if whole(v) => v.to_string(),
            Unit::Words => v.to_string(),
            Unit::Bytes(u) => {
                let what = if u == "MiB" { "MB" } else { "KB" };
                return Err(format!(
                    "sgpdd-survey's {name}={v}: give a whole number of {what}, as sgpdd-survey takes it"
                ));
            }
            Unit::Count => return Err(format!("sgpdd-survey's {name}={v}: give a whole number")),
        };
        flags.push(format!("{flag}={value}"));
        taken.read.push(format!("{name}={v}"));
    }
    let (name, list) = devices;
    if on_line("devices") {
        taken.overridden.push(name);
    } else {
        // sgpdd-survey's `host:dev` entries are iosurvey's too. A word
        // that reads as a flag is refused: consent (`--allow-destroy`,
        // `--force`) is given on the command line, never by a variable.
        if let Some(w) = list.split_whitespace().find(|w| w.starts_with('-')) {
            return Err(format!(
                "sgpdd-survey's {name}: '{w}' is not a device; its variables name devices only, and flags (consent among them) go on the command line"
            ));
        }
        flags.extend(list.split_whitespace().map(String::from));
        taken.read.insert(0, format!("{name}={}", list.trim()));
    }
    let mut out = args;
    out.splice(2..2, flags);
    Ok((out, taken))
}

fn whole(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_in_a_device_variable_is_refused() {
        let env = |k: &str| (k == "scsidevs").then(|| "--allow-destroy /dev/zram1".to_string());
        let e = sgpdd_variables(argv("survey"), &env).unwrap_err();
        assert!(e.contains("'--allow-destroy' is not a device"), "{e}");
    }

    fn argv(line: &str) -> Vec<String> {
        std::iter::once("iosurvey")
            .chain(line.split_whitespace())
            .map(String::from)
            .collect()
    }

    fn with(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_variables_become_flags_and_the_devices_targets() {
        let env = with(&[
            ("size", "8192"),
            ("crghi", "16"),
            ("rszlo", "512"),
            ("actions", "write read"),
            ("rslt", "/tmp/sv"),
            ("scsidevs", "/dev/sdb /dev/sdc"),
        ]);
        let (got, taken) = sgpdd_variables(argv("survey --allow-destroy"), &env).unwrap();
        let mut want = argv("survey --size=8192MiB --rszlo=512KiB --crghi=16");
        want.push("--actions=write read".into());
        want.extend(
            argv("--out=/tmp/sv /dev/sdb /dev/sdc --allow-destroy")
                .into_iter()
                .skip(1),
        );
        assert_eq!(got, want);
        assert_eq!(
            taken.line().unwrap(),
            "sgpdd-survey's variables taken: scsidevs=\"/dev/sdb /dev/sdc\" size=8192 rszlo=512 crghi=16 actions=\"write read\" rslt=/tmp/sv"
        );
    }

    #[test]
    fn the_command_line_wins_over_a_variable() {
        let env = with(&[("size", "8192"), ("crghi", "16"), ("scsidevs", "/dev/sdb")]);
        let (got, taken) =
            sgpdd_variables(argv("survey --size 1g --crghi=4 /dev/loop9"), &env).unwrap();
        assert_eq!(got, argv("survey --size 1g --crghi=4 /dev/loop9"));
        assert!(taken.read.is_empty());
        assert_eq!(taken.overridden, ["size", "crghi", "scsidevs"]);
        assert_eq!(taken.line(), None);
    }

    #[test]
    fn nothing_is_read_without_scsidevs_or_rawdevs() {
        // `size` alone may be any shell's: it is not sgpdd-survey's line.
        let env = with(&[("size", "10"), ("crghi", "16"), ("scsidevs", " ")]);
        let a = argv("survey /dev/loop9 --size 8m");
        assert_eq!(
            sgpdd_variables(a.clone(), &env).unwrap(),
            (a, Taken::default())
        );
        let env = with(&[("rawdevs", "/dev/raw/raw1")]);
        let (got, taken) = sgpdd_variables(argv("survey --size 8m"), &env).unwrap();
        assert_eq!(got, argv("survey /dev/raw/raw1 --size 8m"));
        assert_eq!(taken.read, ["rawdevs=/dev/raw/raw1"]);
        let a = argv("run --size 8m");
        assert_eq!(sgpdd_variables(a.clone(), &env).unwrap().0, a);
    }

    #[test]
    fn bad_variables_are_refused_in_one_line() {
        for (vars, want) in [
            (
                &[("scsidevs", "/dev/sdb"), ("size", "8g")][..],
                "size=8g: give a whole number of MB",
            ),
            (
                &[("scsidevs", "/dev/sdb"), ("rszhi", "1m")],
                "rszhi=1m: give a whole number of KB",
            ),
            (&[("scsidevs", "/dev/sdb"), ("crghi", "-4")], "crghi=-4"),
            (
                &[("scsidevs", "/dev/sdb"), ("rawdevs", "/dev/raw/raw1")],
                "both scsidevs and rawdevs",
            ),
        ] {
            let env = move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            };
            let e = sgpdd_variables(argv("survey"), &env).unwrap_err();
            assert!(e.contains(want), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
