//! fio's job file format: an INI file of `[global]` and job sections, each
//! option `key=value` or a bare `key` on its own line, `;` and `#` lines
//! comments. A job takes the options of every `[global]` above it, then its
//! own; a later value of an option replaces an earlier one.

/// One job section, with the global options above it and its own, in the
/// order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// Its line in the file (from 1).
    pub line: usize,
    /// `[global]` options above it, then its own.
    pub options: Vec<(String, Option<String>)>,
}

impl Section {
    /// The last value given to any of `keys` (`Some(None)`: a bare option).
    pub fn get(&self, keys: &[&str]) -> Option<Option<&str>> {
        self.options
            .iter()
            .rev()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_deref())
    }

    /// The options set in it, each once, in the order first given.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for (k, _) in &self.options {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
        keys
    }
}

/// The job sections of a job file, or the one line that says what in it
/// iosurvey cannot read.
pub fn parse(text: &str) -> Result<Vec<Section>, String> {
    let mut global: Vec<(String, Option<String>)> = Vec::new();
    let mut jobs: Vec<Section> = Vec::new();
    // Where options go: the global ones, or the last job's.
    let mut in_global = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with([';', '#']) {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']').map(str::trim) else {
                return Err(format!(
                    "line {n}: '{line}' opens a section without closing it"
                ));
            };
            if name.is_empty() {
                return Err(format!("line {n}: a section without a name"));
            }
            in_global = Some(name == "global");
            if name != "global" {
                jobs.push(Section {
                    name: name.to_string(),
                    line: n,
                    options: global.clone(),
                });
            }
            continue;
        }
        if line.starts_with("include ") || line == "include" {
            return Err(format!(
                "line {n}: include: iosurvey reads one job file; put the included options in it"
            ));
        }
        let option = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (line.to_string(), None),
        };
        if option.0.is_empty() || option.0.contains(char::is_whitespace) {
            return Err(format!(
                "line {n}: '{line}' is not an option (key=value, or a bare key)"
            ));
        }
        match in_global {
            None => {
                return Err(format!(
                    "line {n}: {} comes before any section ([global] or a job's)",
                    option.0
                ))
            }
            Some(true) => global.push(option),
            Some(false) => jobs
                .last_mut()
                .expect("a job section is open")
                .options
                .push(option),
        }
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
; a comment
[global]
bs=4k
direct = 1

# another
[seq]
rw=read
bs=1m

[global]
iodepth=8

[rand]
rw=randread
time_based
";

    #[test]
    fn a_job_takes_the_globals_above_it_then_its_own() {
        let jobs = parse(FILE).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "seq");
        assert_eq!(jobs[0].line, 7);
        assert_eq!(jobs[0].get(&["bs"]), Some(Some("1m")));
        assert_eq!(jobs[0].get(&["direct"]), Some(Some("1")));
        assert_eq!(jobs[0].get(&["iodepth"]), None);
        assert_eq!(jobs[1].get(&["bs"]), Some(Some("4k")));
        assert_eq!(jobs[1].get(&["iodepth"]), Some(Some("8")));
        assert_eq!(jobs[1].get(&["time_based"]), Some(None));
        assert_eq!(jobs[0].keys(), vec!["bs", "direct", "rw"]);
    }

    #[test]
    fn what_cannot_be_read_is_named_by_its_line() {
        assert!(parse("[a]\ninclude other.fio\n")
            .unwrap_err()
            .starts_with("line 2: include"));
        assert!(parse("bs=4k\n[a]\n")
            .unwrap_err()
            .contains("before any section"));
        assert!(parse("[a\n").unwrap_err().contains("without closing"));
        assert!(parse("[]\n").unwrap_err().contains("without a name"));
        assert!(parse("[a]\nbs 4k\n").unwrap_err().contains("not an option"));
        assert_eq!(parse("[global]\nbs=4k\n").unwrap(), vec![]);
    }
}
