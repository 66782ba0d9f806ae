//! The classic tools in `--help` and the manual pages: each command that
//! runs one tells its spellings, variables, files, examples and other
//! pages; completions offer the values of the flags parsed from lists.

use crate::common::*;

fn text(args: &[&str]) -> String {
    stdout_ok(&iosurvey(args))
}

#[test]
fn each_classic_commands_help_tells_the_tools_own_command_line() {
    for (mode, tool, rows) in [
        ("diskperf", "diskperf", &["-W", "-r SIZE", "-R"][..]),
        (
            "matrix",
            "orion",
            &["-run LEVEL", "-size_small KB", "-cache_size MB"],
        ),
        ("video", "frametest", &["-w SIZE", "-z KB", "-a N"]),
        (
            "survey",
            "sgpdd-survey",
            &["scsidevs=", "size=MB", "rslt=PREFIX"],
        ),
    ] {
        let long = text(&[mode, "--help"]);
        for row in rows {
            assert!(
                long.lines().any(|l| l.trim_start().starts_with(row)),
                "{mode} --help lacks {row}: {long}"
            );
        }
        for part in ["Examples:", "See also:", "Exit codes:"] {
            assert!(long.contains(part), "{mode}: {part}");
        }
        assert!(
            long.contains(&format!("ln -s $(which iosurvey) ~/bin/{tool}")),
            "{long}"
        );
        assert!(
            long.contains(&format!("  $ {tool} ")) || long.contains(&format!(" {tool} --")),
            "{mode}: an example in {tool}'s spelling: {long}"
        );
        // -h stays short.
        let short = text(&[mode, "-h"]);
        assert!(
            !short.contains("Examples:") && short.contains("Exit codes:"),
            "{mode} -h: {short}"
        );
    }
    assert!(text(&["survey", "--help"]).contains("Environment (sgpdd-survey's variables):"));
    assert!(text(&["matrix", "--help"]).contains("_summary.txt"));
}

#[test]
fn each_classic_commands_manual_page_has_its_sections() {
    for (mode, sections) in [
        ("diskperf", &[".SH \"IRIX DISKPERF OPTIONS\""][..]),
        ("matrix", &[".SH \"ORION OPTIONS\"", ".SH FILES"]),
        ("video", &[".SH \"FRAMETEST OPTIONS\""]),
        ("survey", &[".SH ENVIRONMENT", ".SH FILES"]),
    ] {
        let page = text(&["man", mode]);
        for s in sections.iter().chain(&[
            ".SH EXAMPLES",
            ".SH \"SEE ALSO\"",
            ".SH \"EXIT STATUS\"",
            ".SH OPTIONS",
        ]) {
            assert!(page.contains(s), "iosurvey man {mode} lacks {s}: {page}");
        }
        assert!(!page.contains(".SH EXTRA"), "{mode}: the help text twice");
    }
    let page = text(&["man", "survey"]);
    let env = &page[page.find(".SH ENVIRONMENT").unwrap()..page.find(".SH FILES").unwrap()];
    for var in [
        "scsidevs", "rawdevs", "size", "rszlo", "crghi", "thrhi", "actions", "rslt",
    ] {
        assert!(
            env.contains(&format!("\\fB{var}=")),
            "ENVIRONMENT lacks {var}: {env}"
        );
    }
    // A command without a classic tool keeps clap's page.
    assert!(!text(&["man", "run"]).contains(".SH EXAMPLES"));
}

#[test]
fn completions_offer_the_values_of_flags_parsed_from_lists() {
    let bash = text(&["completions", "bash"]);
    let after = |flag: &str| {
        let at = bash
            .find(&format!("{flag})"))
            .unwrap_or_else(|| panic!("{flag}"));
        bash[at..].lines().nth(1).unwrap_or("").to_string()
    };
    assert!(after("--rw").contains("read write backread backwrite randread randwrite randrw"));
    assert!(bash.contains("dpx-2k") && bash.contains("hd-422"));
    let zsh = text(&["completions", "zsh"]);
    assert!(zsh.contains(":RW:(read write"), "zsh --rw");
    let fish = text(&["completions", "fish"]);
    assert!(
        fish.contains("-l rw") && fish.contains("randrw\\t"),
        "fish --rw"
    );
    assert!(fish.contains("__fish_iosurvey_using_subcommand completions\" -f -a \"bash"));
    // The value is still the run's to refuse, in its own words.
    let out = iosurvey(&["run", "--rw", "randomread", "/nonexistent/x"]);
    assert_refused(&out, &["unknown --rw 'randomread': use one of read, write"]);
    assert_eq!(stderr_of(&out).lines().count(), 1);
}
