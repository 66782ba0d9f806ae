//! What a classic tool's command says of its spellings, in plain data
//! (`ToolDoc`), and as the text its `--help` ends with and the usage a
//! link named after the tool prints when nothing follows it.

use std::fmt::Write;

/// One of the tool's own options or variables, as the tool spells it.
pub struct Spelling {
    /// `-W`, `-run`, `size`.
    pub word: String,
    /// What follows it (`NAME`, `KB`), if anything.
    pub value: Option<&'static str>,
    /// What it is here: iosurvey's flag and meaning, or why it is refused.
    pub meaning: String,
    /// iosurvey has no equivalent and refuses it by name.
    pub refused: bool,
}

/// One example: a shell line and what it does.
pub struct Example {
    pub line: &'static str,
    pub what: &'static str,
}

/// A classic tool as one of iosurvey's commands takes it.
pub struct ToolDoc {
    /// The tool's own name, which a link to iosurvey may have (`diskperf`).
    pub tool: &'static str,
    /// Its name in prose (`IRIX diskperf`).
    pub title: &'static str,
    /// iosurvey's command that runs it.
    pub mode: &'static str,
    /// How the tool's options are written, for the heading.
    pub how: &'static str,
    /// Its options (or, for sgpdd-survey, none: its interface is the
    /// environment).
    pub options: Vec<Spelling>,
    /// Variables of the environment it reads.
    pub environment: Vec<Spelling>,
    /// The operands after the options in its usage (`TESTPATH`).
    pub operands: &'static str,
    /// The files it writes, and what each holds.
    pub files: Vec<(&'static str, &'static str)>,
    pub examples: Vec<Example>,
    /// Other pages: `iosurvey-video(1)`, the tool's own.
    pub see_also: Vec<&'static str>,
}

impl Spelling {
    /// An option or variable iosurvey takes.
    pub fn taken(word: impl Into<String>, value: Option<&'static str>, meaning: String) -> Self {
        Spelling {
            word: word.into(),
            value,
            meaning,
            refused: false,
        }
    }

    /// An option iosurvey has no equivalent for: `what` it is and the `fix`.
    pub fn refused(
        word: impl Into<String>,
        value: Option<&'static str>,
        what: &str,
        fix: &str,
    ) -> Self {
        Spelling {
            word: word.into(),
            value,
            meaning: format!("refused: {what} has no equivalent here; {fix}"),
            refused: true,
        }
    }

    /// `-n NAME`, `size=MB`, `-W`.
    pub fn written(&self) -> String {
        match (self.value, self.word.starts_with('-')) {
            (Some(v), true) => format!("{} {v}", self.word),
            (Some(v), false) => format!("{}={v}", self.word),
            (None, _) => self.word.clone(),
        }
    }
}

impl ToolDoc {
    /// The heading over the options.
    pub fn options_heading(&self) -> String {
        format!("{}'s own options ({})", self.title, self.how)
    }

    /// What a link named after the tool does.
    pub fn link_text(&self) -> String {
        format!(
            "Through a link named {tool} (ln -s $(which iosurvey) ~/bin/{tool}), `{tool} ...` runs `iosurvey {mode} ...` with the same words; with nothing after it, it prints {title}'s usage.",
            tool = self.tool,
            mode = self.mode,
            title = self.title,
        )
    }

    /// The tool's usage line: its options and variables (not the refused
    /// ones), then its operands.
    pub fn usage(&self) -> String {
        let mut words: Vec<String> = self
            .environment
            .iter()
            .map(|s| format!("[{}]", s.written()))
            .collect();
        words.push(self.tool.to_string());
        words.extend(
            self.options
                .iter()
                .filter(|s| !s.refused)
                .map(|s| format!("[{}]", s.written())),
        );
        words.push(self.operands.to_string());
        format!(
            "usage: {}\n{} as iosurvey {} runs it: `{} --help` lists every option, and `iosurvey man {}` is the manual page.\n",
            words.join(" "),
            self.title,
            self.mode,
            self.tool,
            self.mode
        )
    }

    /// The text `iosurvey MODE --help` ends with: the tool's spellings,
    /// variables, files, examples and other pages, then `after`.
    pub fn help_text(&self, after: &str) -> String {
        let mut o = String::new();
        let table = |o: &mut String, heading: &str, rows: Vec<(String, &str)>| {
            if rows.is_empty() {
                return;
            }
            let _ = writeln!(o, "{heading}:");
            let width = rows.iter().map(|(w, _)| w.len()).max().unwrap_or(0);
            for (w, m) in rows {
                let _ = writeln!(o, "  {w:width$}  {m}");
            }
            let _ = writeln!(o);
        };
        fn rows(list: &[Spelling]) -> Vec<(String, &str)> {
            list.iter()
                .map(|s| (s.written(), s.meaning.as_str()))
                .collect()
        }
        table(&mut o, &self.options_heading(), rows(&self.options));
        table(
            &mut o,
            &format!("Environment ({}'s variables)", self.title),
            rows(&self.environment),
        );
        let files = self
            .files
            .iter()
            .map(|(f, m)| (f.to_string(), *m))
            .collect();
        table(&mut o, "Files", files);
        let _ = writeln!(o, "{}\n", self.link_text());
        let _ = writeln!(o, "Examples:");
        for e in &self.examples {
            let _ = writeln!(o, "  $ {}\n      {}", e.line, e.what);
        }
        let _ = writeln!(o, "\nSee also: {}\n\n{after}", self.see_also.join(", "));
        o
    }
}
