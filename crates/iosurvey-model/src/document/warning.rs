//! A reason to doubt a figure: a stable code, what it means and what to
//! do, the figures that raised it and the threshold they crossed, so that a
//! script can act on it and a reader can judge it.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// One warning of a point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// Stable identifier: `io_uring_unregistered`, `buffered_fits_in_ram`,
    /// `memory_backed`, `unwritten_area`, `rate_above_link`,
    /// `latency_below_floor`, `too_short`, `unstable`, `write_cache_collapse`,
    /// `compression_suspected`, `rate_above_class`, `short_window`,
    /// `super_linear`; `text` for a
    /// warning of a report older than the codes.
    pub code: String,
    /// What it means and what to do.
    pub message: String,
    /// The figures that raised it, by name.
    pub evidence: Map<String, Value>,
    /// The threshold the figures crossed, in words.
    pub threshold: String,
}

impl Warning {
    pub fn new(code: &str, message: String, evidence: Value, threshold: &str) -> Self {
        Warning {
            code: code.into(),
            message,
            evidence: match evidence {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            threshold: threshold.into(),
        }
    }
}

impl fmt::Display for Warning {
    /// The message, then the code, the evidence and the threshold in
    /// brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if self.code == "text" {
            return Ok(());
        }
        let evidence: Vec<String> = self
            .evidence
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k} {s}"),
                v => format!("{k} {v}"),
            })
            .collect();
        write!(f, " [{}: {}", self.code, evidence.join(", "))?;
        if !self.threshold.is_empty() {
            write!(f, "; threshold: {}", self.threshold)?;
        }
        write!(f, "]")
    }
}

impl Warning {
    /// Whether `other` is the same warning of another point: its code, on
    /// the same target and op (an old report's text warnings: the same
    /// words).
    pub fn same_kind(&self, other: &Warning) -> bool {
        let key = |w: &Warning, k: &str| w.evidence.get(k).cloned();
        self.code == other.code
            && key(self, "target") == key(other, "target")
            && key(self, "op") == key(other, "op")
            && (self.code != "text" || self.message == other.message)
    }
}

/// Reads `warnings` as objects, or as the plain strings of reports made
/// before the codes (each then a warning of code `text`).
pub(crate) fn read_warnings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Warning>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Full(Warning),
        Text(String),
    }
    Ok(Vec::<Either>::deserialize(d)?
        .into_iter()
        .map(|w| match w {
            Either::Full(w) => w,
            Either::Text(message) => Warning {
                code: "text".into(),
                message,
                evidence: Map::new(),
                threshold: String::new(),
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "read_warnings")]
        warnings: Vec<Warning>,
    }

    #[test]
    fn plain_string_warnings_of_version_1_reports_read_as_code_text() {
        let h: Holder = serde_json::from_str(
            r#"{"warnings": ["old words", {"code": "too_short", "message": "m",
                "evidence": {"intervals": 2}, "threshold": "at least 5"}]}"#,
        )
        .unwrap();
        assert_eq!(h.warnings[0].code, "text");
        assert_eq!(h.warnings[0].to_string(), "old words");
        assert_eq!(h.warnings[1].code, "too_short");
        assert_eq!(
            h.warnings[1].to_string(),
            "m [too_short: intervals 2; threshold: at least 5]"
        );
    }
}
