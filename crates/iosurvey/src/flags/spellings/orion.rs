//! ORION's single-dash options (`-run advanced -size_small 8`) as
//! `iosurvey matrix`'s flags.

/// ORION's option, iosurvey's flag, and the unit appended to a bare number.
pub const SPELLINGS: [(&str, &str, &str); 15] = [
    ("-run", "--run", ""),
    ("-testname", "--testname", ""),
    ("-num_disks", "--num-disks", ""),
    ("-size_small", "--size-small", "k"),
    ("-size_large", "--size-large", "k"),
    ("-type", "--type", ""),
    ("-num_streamIO", "--num-streamio", ""),
    ("-num_streamio", "--num-streamio", ""),
    ("-simulate", "--simulate", ""),
    ("-stripe", "--stripe", "k"),
    ("-write", "--write-pct", ""),
    ("-duration", "--time", "s"),
    ("-matrix", "--matrix", ""),
    ("-num_small", "--num-small", ""),
    ("-num_large", "--num-large", ""),
];

/// ORION's options that take no value: `-help` is `--help`; `-verbose` and
/// `-hugenotneeded` mean nothing here and go.
pub const WITHOUT_VALUE: [&str; 3] = ["-help", "-verbose", "-hugenotneeded"];

/// Every option of ORION's that a matrix line takes (the others are
/// refused by name, listing these).
pub fn options() -> Vec<&'static str> {
    SPELLINGS
        .iter()
        .map(|(o, _, _)| *o)
        .chain(["-cache_size"])
        .chain(WITHOUT_VALUE)
        .collect()
}

/// Rewrites ORION's single-dash spellings into iosurvey's flags (only for
/// `iosurvey matrix`): sizes in KB, `-cache_size` in MB, `-duration` in
/// seconds; `-help` is `--help`; `-verbose` and `-hugenotneeded` mean
/// nothing here and go.
pub fn orion_spellings(args: Vec<String>) -> Vec<String> {
    if args.get(1).map(String::as_str) != Some("matrix") {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let bare = |v: &str| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        if a == "-help" {
            out.push("--help".into());
            continue;
        }
        if WITHOUT_VALUE.contains(&a.as_str()) {
            continue;
        }
        if a == "-cache_size" {
            out.push("--cache-warm".into());
            if let Some(v) = it.next() {
                out.push(if bare(&v) { format!("{v}MiB") } else { v });
            }
            continue;
        }
        match SPELLINGS.iter().find(|(o, _, _)| *o == a) {
            Some((_, flag, unit)) => {
                out.push((*flag).into());
                if let Some(v) = it.next() {
                    out.push(if bare(&v) { format!("{v}{unit}") } else { v });
                }
            }
            None => out.push(a),
        }
    }
    out
}

/// ORION's own options in a `matrix` command line as typed (`args` after
/// `matrix`), in ORION's spelling and units, for the summary's
/// `Commandline:` as ORION prints it: its single-dash options as typed,
/// iosurvey's spelling of one of them back in ORION's (`--size-small 8k`
/// is `-size_small 8`); the targets and iosurvey's own flags left out.
pub fn orion_command_line(args: &[String]) -> Vec<String> {
    use iosurvey_workload::units::{parse_duration, parse_size};
    let mut out = Vec::new();
    let mut it = args.iter().take_while(|a| *a != "--").peekable();
    while let Some(a) = it.next() {
        if a == "-verbose" || a == "-hugenotneeded" {
            out.push(a.clone());
            continue;
        }
        let orion = a == "-cache_size" || SPELLINGS.iter().any(|(o, _, _)| o == a);
        if orion {
            out.push(a.clone());
            out.extend(it.next().cloned());
            continue;
        }
        let Some(long) = a.strip_prefix("--") else {
            continue;
        };
        let (flag, inline) = match long.split_once('=') {
            Some((f, v)) => (format!("--{f}"), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let flag = if flag == "--duration" {
            "--time".into()
        } else {
            flag
        };
        let name = match SPELLINGS.iter().find(|(_, f, _)| *f == flag) {
            Some((o, _, _)) => *o,
            None if flag == "--cache-warm" => "-cache_size",
            // iosurvey's own flag; its value (if any) is not an ORION
            // option either and is passed over in turn.
            None => continue,
        };
        let Some(v) = inline.or_else(|| it.next().cloned()) else {
            continue;
        };
        // ORION's units: KB, MB, seconds; a value they cannot say stays
        // as typed (a warm-up by time is iosurvey's own: left out).
        let value = match name {
            "-size_small" | "-size_large" | "-stripe" => parse_size(&v)
                .ok()
                .filter(|b| b % 1024 == 0)
                .map_or(v, |b| (b / 1024).to_string()),
            "-cache_size" => match parse_size(&v) {
                Ok(b) if b % (1 << 20) == 0 => (b >> 20).to_string(),
                Ok(_) => v,
                Err(_) => continue,
            },
            "-duration" => parse_duration(&v).map_or(v, |d| {
                let s = d.as_secs_f64();
                if s.fract() == 0.0 {
                    format!("{}", d.as_secs())
                } else {
                    format!("{s}")
                }
            }),
            _ => v,
        };
        out.push(name.to_string());
        out.push(value);
    }
    out
}

/// A single-dash word left after [`orion_spellings`] in `iosurvey matrix`
/// (`-foo`, `-num_disk`): an ORION option that does not exist, named whole
/// (clap would name its first letter as a short flag).
pub fn unknown_orion_option(args: &[String]) -> Option<String> {
    if args.get(1).map(String::as_str) != Some("matrix") {
        return None;
    }
    // Up to a bare `--` (operands follow it); a cluster of matrix's own
    // short flags (`-qh`) is clap's.
    let bad = args.iter().skip(2).take_while(|a| *a != "--").find(|a| {
        let mut c = a.chars();
        c.next() == Some('-')
            && a.len() > 2
            && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            && !a[1..].starts_with(|ch: char| ch.is_ascii_digit())
            && !a[1..].chars().all(|ch| matches!(ch, 'q' | 'h'))
    })?;
    Some(format!(
        "unknown ORION option '{bad}' (ORION's options: {})",
        options().join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn orions_options_alone_in_orions_spelling_and_units() {
        let typed = words(
            "-run advanced -num_disks 2 --out res --json r.json a.dat -size_small 4 --size-large 512k --time 2s -cache_size 0 -verbose --allow-destroy b.dat",
        );
        assert_eq!(
            orion_command_line(&typed).join(" "),
            "-run advanced -num_disks 2 -size_small 4 -size_large 512 -duration 2 -cache_size 0 -verbose"
        );
        let typed = words("--run=simple --cache-warm 30s --write-pct 10 --duration 1500ms -- x");
        assert_eq!(
            orion_command_line(&typed).join(" "),
            "-run simple -write 10 -duration 1.5"
        );
    }
}
