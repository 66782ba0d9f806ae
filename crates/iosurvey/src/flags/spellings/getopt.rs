//! A getopt-style reader of a classic tool's single-dash options (`-W
//! -r4k -n "label"`, `-w 2k -n 100`), for the modes that take IRIX
//! diskperf's and frametest's command lines as typed. iosurvey's own long
//! flags, their values and every word after `--` pass through untouched.

use clap::CommandFactory;

/// What a classic single-dash option takes.
#[derive(Clone, Copy)]
pub enum Takes {
    /// Nothing (`-W`).
    Nothing,
    /// A value, attached (`-r4k`) or the next word (`-r 4k`).
    Value,
    /// An attached value, or the next word when `accept(word, is_last)`
    /// takes it for one (frametest's `-r 2k DIR`, `-q 4`); else nothing.
    Maybe(fn(&str, bool) -> bool),
}

/// One word of a classic command line.
#[derive(Debug, PartialEq, Eq)]
pub enum Word {
    /// A classic option and its value.
    Opt(char, Option<String>),
    /// Anything else (iosurvey's flags and their values, targets), as typed.
    Other(String),
}

/// Why a classic command line cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum Bad {
    /// A letter the tool does not have.
    Unknown(char),
    /// An option that needs a value came last.
    NoValue(char),
}

/// One option in a tool's table: its letter and two texts, iosurvey's
/// flag and what its value is (`WITH_VALUE`), or what the option is and
/// what to do instead (`REFUSED`).
pub type Row = (char, &'static str, &'static str);

/// The row of letter `c` in `table`.
pub fn row(table: &[Row], c: char) -> Option<&Row> {
    table.iter().find(|(o, _, _)| *o == c)
}

/// The refusal of `tool`'s option `-c` by its `REFUSED` row (`what` it is
/// and the `fix`): iosurvey has nothing it means.
pub fn no_equivalent(tool: &str, &(c, what, fix): &Row) -> String {
    format!("{tool}'s -{c} ({what}) has no iosurvey equivalent; {fix}")
}

impl Bad {
    /// The one-line refusal, for `tool` (`IRIX diskperf`, `frametest`)
    /// whose options `usage` lists; `with_value` names what each option
    /// that takes a value takes.
    pub fn refusal(&self, tool: &str, usage: &str, with_value: &[Row]) -> String {
        match *self {
            Bad::Unknown(c) => format!("unknown {tool} option '-{c}' ({usage})"),
            Bad::NoValue(c) => {
                let what = row(with_value, c).map_or("a value", |&(_, _, w)| w);
                format!("{tool}'s -{c} needs {what}: -{c}VALUE or -{c} VALUE")
            }
        }
    }
}

/// Reads `args` (the words after `iosurvey MODE`) option by option.
/// `takes` says what each of the tool's letters takes; `None` for a letter
/// it does not have. A long flag of `mode` that takes a value keeps its
/// next word with it.
pub fn read(
    mode: &str,
    args: &[String],
    takes: impl Fn(char) -> Option<Takes>,
) -> Result<Vec<Word>, Bad> {
    let longs = value_flags(mode);
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.extend(args[i - 1..].iter().cloned().map(Word::Other));
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            out.push(Word::Other(a.clone()));
            if !long.contains('=') && longs.iter().any(|l| l == long) && i < args.len() {
                out.push(Word::Other(args[i].clone()));
                i += 1;
            }
            continue;
        }
        if a.len() < 2 || !a.starts_with('-') || crate::flags::common::negative(a) {
            out.push(Word::Other(a.clone()));
            continue;
        }
        // A cluster of letters: `-WD`, `-Wr4k`.
        let body = &a[1..];
        for (at, c) in body.char_indices() {
            let rest = &body[at + c.len_utf8()..];
            match takes(c).ok_or(Bad::Unknown(c))? {
                Takes::Nothing => out.push(Word::Opt(c, None)),
                Takes::Value if !rest.is_empty() => {
                    out.push(Word::Opt(c, Some(rest.to_string())));
                    break;
                }
                Takes::Value => {
                    let v = args.get(i).ok_or(Bad::NoValue(c))?;
                    out.push(Word::Opt(c, Some(v.clone())));
                    i += 1;
                    break;
                }
                Takes::Maybe(_) if !rest.is_empty() => {
                    out.push(Word::Opt(c, Some(rest.to_string())));
                    break;
                }
                Takes::Maybe(accept) => {
                    let next = args
                        .get(i)
                        .filter(|v| accept(v, i + 1 == args.len()))
                        .cloned();
                    i += usize::from(next.is_some());
                    out.push(Word::Opt(c, next));
                }
            }
        }
    }
    Ok(out)
}

/// The long flags of `iosurvey MODE` (and their aliases) that take a value.
fn value_flags(mode: &str) -> Vec<String> {
    let cli = crate::flags::cli::Cli::command();
    let Some(sub) = cli.find_subcommand(mode) else {
        return Vec::new();
    };
    sub.get_arguments()
        .filter(|a| a.get_action().takes_values() && a.get_long().is_some())
        .flat_map(|a| {
            let mut names: Vec<String> = a.get_long().into_iter().map(String::from).collect();
            names.extend(
                a.get_all_aliases()
                    .unwrap_or_default()
                    .into_iter()
                    .map(String::from),
            );
            names
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn irixish(c: char) -> Option<Takes> {
        match c {
            'W' | 'D' => Some(Takes::Nothing),
            'r' | 'n' => Some(Takes::Value),
            'q' => Some(Takes::Maybe(|w, _| w.bytes().all(|b| b.is_ascii_digit()))),
            _ => None,
        }
    }

    #[test]
    fn values_are_read_attached_or_separated_and_clusters_split() {
        let got = read("diskperf", &words("-WDr4k -n lab -r 8k PATH"), irixish).unwrap();
        assert_eq!(
            got,
            vec![
                Word::Opt('W', None),
                Word::Opt('D', None),
                Word::Opt('r', Some("4k".into())),
                Word::Opt('n', Some("lab".into())),
                Word::Opt('r', Some("8k".into())),
                Word::Other("PATH".into()),
            ]
        );
    }

    #[test]
    fn long_flags_keep_their_values_and_double_dash_ends_the_options() {
        let got = read(
            "diskperf",
            &words("--scale -1 --label=-W --json -r -- -W"),
            irixish,
        )
        .unwrap();
        let others: Vec<&Word> = got.iter().filter(|w| matches!(w, Word::Other(_))).collect();
        assert_eq!(others.len(), 7, "{got:?}");
        assert!(!got.iter().any(|w| matches!(w, Word::Opt(..))), "{got:?}");
    }

    #[test]
    fn a_maybe_value_is_taken_only_when_accepted() {
        let got = read("video", &words("-q 4 -q DIR"), irixish).unwrap();
        assert_eq!(
            got,
            vec![
                Word::Opt('q', Some("4".into())),
                Word::Opt('q', None),
                Word::Other("DIR".into()),
            ]
        );
    }

    #[test]
    fn unknown_letters_and_missing_values_are_named() {
        assert_eq!(
            read("diskperf", &words("-M4m P"), irixish),
            Err(Bad::Unknown('M'))
        );
        assert_eq!(
            read("diskperf", &words("-WX"), irixish),
            Err(Bad::Unknown('X'))
        );
        assert_eq!(
            read("diskperf", &words("P -r"), irixish),
            Err(Bad::NoValue('r'))
        );
        // A negative number is a value, not an option.
        assert_eq!(
            read("diskperf", &words("-5"), irixish),
            Ok(vec![Word::Other("-5".into())])
        );
    }
}
