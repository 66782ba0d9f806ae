//! How a run was invoked: as `iosurvey MODE ...`, or through a link named
//! after a classic tool (`sgpdd-survey`, `orion`, `frametest`, `diskperf`),
//! whose own words follow the program's name. A report keeps the command
//! line as typed; this says where its mode's words start.

/// The classic tools a link may be named after, and the mode each runs.
pub const CLASSIC_NAMES: [(&str, &str); 4] = [
    ("sgpdd-survey", "survey"),
    ("orion", "matrix"),
    ("frametest", "video"),
    ("diskperf", "diskperf"),
];

/// The classic tool and its mode when `argv0` (a path or a bare name) is a
/// link named after one: the tool's name, that name with `.sh` (a copy of
/// a script is often kept so: `sgpdd-survey.sh`), or `orion_linux_x86-64`
/// and the like, as ORION's downloads were named per platform.
pub fn classic_name(argv0: &str) -> Option<(&'static str, &'static str)> {
    let file = argv0.rsplit('/').next().unwrap_or(argv0);
    let file = file.strip_suffix(".sh").unwrap_or(file);
    CLASSIC_NAMES
        .iter()
        .find(|(tool, _)| file == *tool || (*tool == "orion" && file.starts_with("orion_")))
        .copied()
}

/// The words of `command_line` (as typed) after the program and its mode:
/// after `iosurvey matrix`, or after `orion` alone when a link named after
/// the tool ran it.
pub fn mode_words(command_line: &[String]) -> &[String] {
    let skip = match command_line.first() {
        Some(argv0) if classic_name(argv0).is_some() => 1,
        _ => 2,
    };
    command_line.get(skip..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &str) -> Vec<String> {
        words.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_link_is_known_by_its_file_name() {
        assert_eq!(classic_name("/root/bin/orion"), Some(("orion", "matrix")));
        assert_eq!(
            classic_name("orion_linux_x86-64"),
            Some(("orion", "matrix"))
        );
        assert_eq!(
            classic_name("./sgpdd-survey.sh"),
            Some(("sgpdd-survey", "survey"))
        );
        assert_eq!(classic_name("frametest"), Some(("frametest", "video")));
        assert_eq!(
            classic_name("/usr/sbin/diskperf"),
            Some(("diskperf", "diskperf"))
        );
        for other in [
            "iosurvey",
            "/usr/bin/iosurvey",
            "diskperf2",
            "orionx",
            "sgpdd",
        ] {
            assert_eq!(classic_name(other), None, "{other}");
        }
    }

    #[test]
    fn the_mode_words_follow_the_mode_or_the_link() {
        assert_eq!(
            mode_words(&line("iosurvey matrix -run simple")),
            line("-run simple")
        );
        assert_eq!(
            mode_words(&line("/bin/orion -run simple")),
            line("-run simple")
        );
        assert!(mode_words(&line("iosurvey")).is_empty());
    }
}
