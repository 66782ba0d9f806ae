//! A reason to doubt a figure: a stable code, what it means and what to
//! do, the figures that raised it and the threshold they crossed, so that a
//! script can act on it and a reader can judge it.

use crate::document::evidence::Evidence;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::fmt;

/// One warning of a point: `code` and `evidence` (the figures that raised
/// it, typed per code), `message` and `threshold`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// The stable code and the figures that raised it, by name; `text` for
    /// a warning of a report older than the codes.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// What it means and what to do.
    pub message: String,
    /// The threshold the figures crossed, in words.
    pub threshold: String,
}

impl Warning {
    pub fn new(evidence: Evidence, message: String, threshold: &str) -> Self {
        Warning {
            evidence,
            message,
            threshold: threshold.into(),
        }
    }

    /// The stable code (`too_short`, ...).
    pub fn code(&self) -> &'static str {
        self.evidence.code()
    }

    /// The evidence as the JSON has it, by name in name order.
    fn evidence_fields(&self) -> serde_json::Map<String, Value> {
        match serde_json::to_value(&self.evidence) {
            Ok(Value::Object(mut m)) => match m.remove("evidence") {
                Some(Value::Object(e)) => e,
                _ => Default::default(),
            },
            _ => Default::default(),
        }
    }
}

impl fmt::Display for Warning {
    /// The message, then the code, the evidence and the threshold in
    /// brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if matches!(self.evidence, Evidence::Text(_)) {
            return Ok(());
        }
        let evidence: Vec<String> = self
            .evidence_fields()
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k} {s}"),
                v => format!("{k} {v}"),
            })
            .collect();
        write!(f, " [{}: {}", self.code(), evidence.join(", "))?;
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
        self.code() == other.code()
            && self.evidence.target_and_op() == other.evidence.target_and_op()
            && (self.code() != "text" || self.message == other.message)
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
                evidence: Evidence::Text(Default::default()),
                message,
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
                "evidence": {"op": "read", "intervals": 2, "interval_ns": 1000000000,
                "measured_ns": 2000000000}, "threshold": "at least 5"}]}"#,
        )
        .unwrap();
        assert_eq!(h.warnings[0].code(), "text");
        assert_eq!(h.warnings[0].to_string(), "old words");
        assert_eq!(h.warnings[1].code(), "too_short");
        assert_eq!(
            h.warnings[1].to_string(),
            "m [too_short: interval_ns 1000000000, intervals 2, measured_ns 2000000000, op read; threshold: at least 5]"
        );
    }
}
