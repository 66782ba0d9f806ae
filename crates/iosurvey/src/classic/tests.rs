//! The classic tools' pages against what the rewriters accept (asked of
//! the rewriters themselves, not of the tables the pages are made from),
//! their examples parsed as typed, and the links' dispatch.

use super::*;
use crate::flags::cli::Cli;
use crate::flags::spellings::rewrite;
use clap::{CommandFactory, FromArgMatches};
use std::cell::RefCell;

/// No job file is read here (`run --fio` is fio_users's).
fn no_file(f: &str) -> std::io::Result<String> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        f.to_string(),
    ))
}

fn none(_: &str) -> Option<String> {
    None
}

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|w| w.to_string()).collect()
}

/// `iosurvey MODE --help` as printed.
fn help(mode: &str) -> String {
    let mut cmd = documented(Cli::command());
    cmd.build();
    let sub = cmd.find_subcommand_mut(mode).expect("a command");
    sub.render_long_help().to_string()
}

/// Whether `help` has a row for `word` (`-W`, `-n NAME`, `size=MB`).
fn has_row(help: &str, word: &str) -> bool {
    help.lines().any(|l| {
        let l = l.trim_start();
        l == word || l.starts_with(&format!("{word} ")) || l.starts_with(&format!("{word}="))
    })
}

/// The letters a getopt-style rewriter takes in `mode`: each letter tried
/// with a value, refused only as "unknown `tool` option".
fn letters_taken(mode: &str, tool: &str) -> Vec<String> {
    ('a'..='z')
        .chain('A'..='Z')
        // iosurvey's own -q and -h pass through every mode.
        .filter(|c| !(mode == "diskperf" && matches!(c, 'q' | 'h')))
        .map(|c| format!("-{c}"))
        .filter(|o| {
            let line = words(&["iosurvey", mode, o, "1", "P"]);
            !matches!(rewrite(line, &none, &no_file), Err(e) if e.contains(&format!("unknown {tool} option")))
        })
        .collect()
}

#[test]
fn every_irix_diskperf_option_taken_is_in_diskperfs_help() {
    let taken = letters_taken("diskperf", "IRIX diskperf");
    assert!(taken.len() >= 11, "{taken:?}");
    let h = help("diskperf");
    for o in taken {
        assert!(has_row(&h, &o), "diskperf --help lacks {o}:\n{h}");
    }
}

#[test]
fn every_frametest_option_taken_is_in_videos_help() {
    let taken = letters_taken("video", "frametest");
    assert!(taken.len() >= 20, "{taken:?}");
    let h = help("video");
    for o in taken {
        assert!(has_row(&h, &o), "video --help lacks {o}:\n{h}");
    }
    assert!(has_row(&h, "--header KB"), "{h}");
}

#[test]
fn every_orion_option_the_refusal_names_is_taken_and_in_matrixs_help() {
    let e = rewrite(words(&["iosurvey", "matrix", "-nosuch"]), &none, &no_file).unwrap_err();
    let list = e
        .split_once("(ORION's options: ")
        .and_then(|(_, l)| l.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{e}"));
    let h = help("matrix");
    for o in list.split(' ') {
        let line = words(&["iosurvey", "matrix", o, "1"]);
        assert!(
            !matches!(rewrite(line, &none, &no_file), Err(e) if e.contains("unknown")),
            "{o}"
        );
        assert!(has_row(&h, o), "matrix --help lacks {o}:\n{h}");
    }
    assert!(list.split(' ').count() >= 18, "{list}");
}

#[test]
fn every_variable_sgpdd_survey_reads_is_in_surveys_help() {
    let asked = RefCell::new(Vec::new());
    let env = |k: &str| {
        asked.borrow_mut().push(k.to_string());
        (k == "scsidevs").then(|| "/dev/sdx".to_string())
    };
    rewrite(words(&["iosurvey", "survey"]), &env, &no_file).unwrap();
    let asked = asked.into_inner();
    assert!(asked.len() >= 12, "{asked:?}");
    let h = help("survey");
    let env_at = h.find("Environment (").expect("an Environment table");
    for name in asked {
        assert!(
            has_row(&h[env_at..], &name),
            "survey --help lacks {name}:\n{h}"
        );
    }
}

/// A shell line's words (double quotes group), its leading `NAME=VALUE`
/// words apart.
fn shell_words(line: &str) -> (Vec<(String, String)>, Vec<String>) {
    let (mut out, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for ch in line.chars() {
        match ch {
            '"' => (quoted, any) = (!quoted, true),
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            _ => (word.push(ch), any = true).1,
        }
    }
    if any {
        out.push(word);
    }
    let vars = out
        .iter()
        .take_while(|w| w.contains('=') && !w.starts_with('-'))
        .map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .unwrap()
        })
        .collect::<Vec<_>>();
    let args = out.split_off(vars.len());
    (vars, args)
}

#[test]
fn every_example_parses_as_typed_into_its_command() {
    for doc in docs() {
        assert!(
            doc.examples.iter().any(
                |e| e.line.starts_with(doc.tool) || e.line.contains(&format!(" {} ", doc.tool))
            ),
            "{}: an example in the tool's own spelling",
            doc.tool
        );
        for e in &doc.examples {
            let (vars, args) = shell_words(e.line);
            let env = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            assert!(
                [doc.tool, "iosurvey"].contains(&args[0].as_str()),
                "{}",
                e.line
            );
            let Invoked::Line(line) = invoked(&args, &env) else {
                panic!("{}: not a line to run", e.line)
            };
            assert_eq!(line[1], doc.mode, "{}", e.line);
            let (parsed, _, _) =
                rewrite(line, &env, &no_file).unwrap_or_else(|err| panic!("{}: {err}", e.line));
            let m = documented(Cli::command())
                .try_get_matches_from(&parsed)
                .unwrap_or_else(|err| panic!("{}: {err}", e.line));
            Cli::from_arg_matches(&m).unwrap();
        }
    }
}

#[test]
fn a_link_runs_its_command_with_the_words_as_typed() {
    for (argv0, mode) in [
        ("/usr/local/bin/orion", "matrix"),
        ("diskperf", "diskperf"),
        ("./frametest", "video"),
        ("sgpdd-survey.sh", "survey"),
    ] {
        let got = invoked(&words(&[argv0, "-x", "y"]), &none);
        assert_eq!(got, Invoked::Line(words(&["iosurvey", mode, "-x", "y"])));
    }
    let own = words(&["/usr/bin/iosurvey", "diskperf"]);
    assert_eq!(invoked(&own, &none), Invoked::Line(own.clone()));
    let bare = words(&["iosurvey"]);
    assert_eq!(invoked(&bare, &none), Invoked::Line(bare.clone()));
}

#[test]
fn a_link_with_nothing_to_run_is_its_tools_usage() {
    for doc in docs() {
        let Invoked::Usage(u) = invoked(&words(&[doc.tool]), &none) else {
            panic!("{}: no usage", doc.tool)
        };
        assert!(u.starts_with("usage: ") && u.contains(doc.tool), "{u}");
        // What is refused is not offered.
        for s in doc.options.iter().filter(|s| s.refused) {
            assert!(!u.contains(&format!("[{}]", s.written())), "{u}");
        }
    }
    // sgpdd-survey's devices may come from the environment alone.
    let devices = |k: &str| (k == "rawdevs").then(|| "/dev/raw/raw1".to_string());
    assert_eq!(
        invoked(&words(&["sgpdd-survey"]), &devices),
        Invoked::Line(words(&["iosurvey", "survey"]))
    );
}
