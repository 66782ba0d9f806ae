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
