//! The possible values of a flag whose value is parsed from a list kept
//! elsewhere (`--rw` from the workload's names, `--format` from the frame
//! catalogue): clap's `--help`, manual pages and shell completions offer
//! them, and the value is parsed (and refused, in the same words) as
//! before.

use clap::builder::{PossibleValue, TypedValueParser};

/// `inner`, whose values are `values()`.
#[derive(Clone)]
pub struct Listed<P> {
    inner: P,
    values: fn() -> Vec<&'static str>,
}

/// `inner` (the flag's own parser), offering `values()`.
pub fn listed<P: TypedValueParser>(inner: P, values: fn() -> Vec<&'static str>) -> Listed<P> {
    Listed { inner, values }
}

impl<P: TypedValueParser> TypedValueParser for Listed<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.inner.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            (self.values)().into_iter().map(PossibleValue::new),
        ))
    }
}

/// `iosurvey run --rw`: the workloads the run's model parses.
pub fn rw_names() -> Vec<&'static str> {
    iosurvey_workload::modes::run::Rw::NAMES.to_vec()
}

/// `iosurvey video --format`: the frame catalogue's presets.
pub fn format_names() -> Vec<&'static str> {
    iosurvey_workload::modes::video::FORMATS
        .iter()
        .map(|f| f.name)
        .collect()
}

/// `iosurvey survey --actions`: each action alone, and all in order (as
/// sgpdd-survey's `actions="write read"`).
pub fn action_names() -> Vec<&'static str> {
    use iosurvey_workload::modes::survey::Action;
    let all: &'static str = Box::leak(
        Action::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(",")
            .into_boxed_str(),
    );
    std::iter::once(all)
        .chain(Action::ALL.iter().map(|a| a.name()))
        .collect()
}

/// `iosurvey db ... --mode`: the modes a report can be of, and fio's runs
/// that `db import` took.
pub fn mode_names() -> Vec<&'static str> {
    iosurvey_report::MODES
        .iter()
        .copied()
        .chain(["fio"])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::builder::StringValueParser;

    #[test]
    fn the_values_are_offered_and_the_parse_is_the_inner_ones() {
        let p = listed(StringValueParser::new(), rw_names);
        let offered: Vec<String> = p
            .possible_values()
            .unwrap()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(offered, rw_names());
        // Any value passes here: the model refuses it later, in its words.
        let cmd = clap::Command::new("t");
        let got = p.parse_ref(&cmd, None, std::ffi::OsStr::new("nosuch"));
        assert_eq!(got.unwrap(), "nosuch");
        assert!(action_names().contains(&"write,read"));
    }
}
