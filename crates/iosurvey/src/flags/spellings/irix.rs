//! IRIX diskperf's own command line (`diskperf -W -D -r4k -m4m -t10 -c2g
//! -n "label" PATH`), rewritten into `iosurvey diskperf`'s flags before
//! parsing. The report keeps the line as typed.

use super::getopt::{no_equivalent, read, row, Row, Takes, Word};
use iosurvey_workload::modes::diskperf::parse_size_or_frame;
use iosurvey_workload::units::{parse_duration, parse_size};

/// IRIX diskperf's options with a value, iosurvey's flag for each, and
/// what the value is.
pub const WITH_VALUE: [Row; 6] = [
    ('n', "--label", "a label"),
    ('t', "--time", "seconds"),
    ('s', "--scale", "a factor"),
    ('c', "--size", "a size (k, m, g)"),
    ('r', "--min", "a size (k, m, g) or a frame preset"),
    ('m', "--max", "a size (k, m, g) or a frame preset"),
];

/// IRIX diskperf's options iosurvey has no equivalent for, and what to do
/// instead.
pub const REFUSED: [Row; 3] = [
    (
        'R',
        "the realtime subvolume of an XLV volume",
        "name the device or file to test",
    ),
    (
        'L',
        "the log subvolume of an XLV volume",
        "name the device or file to test",
    ),
    ('d', "a delay between tests", "leave it out"),
];

fn takes(c: char) -> Option<Takes> {
    match c {
        // iosurvey's own -q and -h may sit among IRIX's letters.
        'W' | 'D' | 'R' | 'L' | 'q' | 'h' => Some(Takes::Nothing),
        'd' => Some(Takes::Value),
        _ if row(&WITH_VALUE, c).is_some() => Some(Takes::Value),
        _ => None,
    }
}

/// `-t`'s seconds as a duration iosurvey reads: `10` stays (a bare number
/// is seconds), `2.5` becomes `2500ms`.
fn seconds(v: &str) -> String {
    match v.parse::<f64>() {
        Ok(s) if v.contains('.') && s.is_finite() && s >= 0.0 => {
            format!("{}ms", (s * 1000.0).round() as u64)
        }
        _ => v.to_string(),
    }
}

/// Rewrites IRIX diskperf's options (only for `iosurvey diskperf`):
/// `-W` is `--write`, `-n` `--label`, `-t` `--time` (seconds), `-s`
/// `--scale`, `-c` `--size`, `-r` `--min`, `-m` `--max` (k, m and g are
/// 2^10, 2^20 and 2^30 in both; `-r` and `-m` take the frame presets
/// `--min` and `--max` take, `-rhd-422`). `-D` asks for O_DIRECT, which iosurvey
/// uses anyway. `-R`, `-L` (XLV subvolumes) and `-d` (a delay between
/// tests) have no equivalent and are refused, as is any other letter.
pub fn irix_spellings(args: Vec<String>) -> Result<Vec<String>, String> {
    if args.get(1).map(String::as_str) != Some("diskperf") {
        return Ok(args);
    }
    let words = read("diskperf", &args[2..], takes).map_err(|b| {
        b.refusal(
            "IRIX diskperf",
            "its options: -W -D -n NAME -t SECS -s F -c SIZE -r SIZE -m SIZE",
            &WITH_VALUE,
        )
    })?;
    let mut out = args[..2].to_vec();
    for w in words {
        match w {
            Word::Other(s) => out.push(s),
            Word::Opt('W', _) => out.push("--write".into()),
            Word::Opt('D', _) => {}
            Word::Opt(c @ ('q' | 'h'), _) => out.push(format!("-{c}")),
            Word::Opt(c, v) => {
                if let Some(r) = row(&REFUSED, c) {
                    return Err(no_equivalent("IRIX diskperf", r));
                }
                let (_, flag, _) = row(&WITH_VALUE, c).expect("takes() knows only these letters");
                let v = checked(c, v.unwrap_or_default())?;
                out.push(format!("{flag}={v}"));
            }
        }
    }
    Ok(out)
}

/// The value of `-c`, `-r`, `-m`, `-t` or `-s` as iosurvey's flag takes
/// it, or why IRIX's option cannot take it.
fn checked(c: char, v: String) -> Result<String, String> {
    let ok = match c {
        'c' => parse_size(&v).is_ok(),
        // The same values as --min and --max: a size or a frame preset.
        'r' | 'm' => parse_size_or_frame(&v).is_ok(),
        't' => {
            return parse_duration(&seconds(&v))
                .map(|_| seconds(&v))
                .map_err(|_| {
                    format!("IRIX diskperf's -t '{v}': give the seconds of each test (-t10)")
                })
        }
        's' => v.parse::<f64>().is_ok(),
        _ => true,
    };
    if ok {
        return Ok(v);
    }
    let (_, _, what) = row(&WITH_VALUE, c).expect("known");
    Err(format!(
        "IRIX diskperf's -{c} '{v}': give {what}, e.g. -{c}{}",
        match c {
            's' => "0.5",
            'r' | 'm' => "4k or -rhd-422 (iosurvey video --list-formats)",
            _ => "4k",
        }
    ))
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

    #[test]
    fn the_man_page_line_becomes_iosurveys_flags() {
        let got =
            irix_spellings(argv("diskperf -W -D -r4k -m4m -t10 -c2g -n SGI /d/test")).unwrap();
        assert_eq!(
            got,
            argv("diskperf --write --min=4k --max=4m --time=10 --size=2g --label=SGI /d/test")
        );
    }

    #[test]
    fn separated_values_clusters_and_fractional_seconds() {
        let got = irix_spellings(argv("diskperf -WD -r 4k -m 8m -t 2.5 -s 0.5 -q P")).unwrap();
        assert_eq!(
            got,
            argv("diskperf --write --min=4k --max=8m --time=2500ms --scale=0.5 -q P")
        );
    }

    #[test]
    fn a_label_keeps_its_blanks_and_iosurveys_own_flags_pass() {
        let mut a = argv("diskperf -n");
        a.push("SGI ST373405LC".into());
        a.extend(argv("--buffered --json out.json P").into_iter().skip(1));
        let got = irix_spellings(a).unwrap();
        assert_eq!(got[2], "--label=SGI ST373405LC");
        assert_eq!(got[3..], argv("--buffered --json out.json P")[1..]);
    }

    #[test]
    fn options_without_an_equivalent_are_refused_by_name() {
        for (line, want) in [
            ("diskperf -R P", "-R (the realtime subvolume"),
            ("diskperf -WL P", "-L (the log subvolume"),
            ("diskperf -d 0.5 P", "-d (a delay between tests)"),
            ("diskperf -M4m P", "unknown IRIX diskperf option '-M'"),
            ("diskperf P -r", "-r needs a size"),
            (
                "diskperf -r4x P",
                "-r '4x': give a size (k, m, g) or a frame preset, e.g. -r4k",
            ),
            ("diskperf -t soon P", "-t 'soon': give the seconds"),
            ("diskperf -s x P", "-s 'x': give a factor, e.g. -s0.5"),
        ] {
            let e = irix_spellings(argv(line)).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn r_and_m_take_the_frame_presets_min_and_max_take() {
        let got = irix_spellings(argv("diskperf -rhd-422 -m dpx-4k P")).unwrap();
        assert_eq!(got, argv("diskperf --min=hd-422 --max=dpx-4k P"));
        let e = irix_spellings(argv("diskperf -c hd-422 P")).unwrap_err();
        assert!(e.contains("-c 'hd-422': give a size"), "{e}");
    }

    #[test]
    fn other_modes_and_iosurvey_spellings_are_left_alone() {
        let a = argv("run -W x");
        assert_eq!(irix_spellings(a.clone()).unwrap(), a);
        let a = argv("diskperf --write --min 4k --scale -1 P");
        assert_eq!(irix_spellings(a.clone()).unwrap(), a);
    }
}
