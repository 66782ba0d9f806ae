//! The JSON presenter. The layout is described by
//! `schema/run-report.schema.json`; bump [`SCHEMA_VERSION`] on any change
//! that is not a pure addition.

use iosurvey_model::document::RunReport;

/// Version of the JSON layout.
pub const SCHEMA_VERSION: u32 = 5;

/// The first version of the layout: every version from it to
/// [`SCHEMA_VERSION`] is read.
pub const FIRST_SCHEMA_VERSION: u32 = 1;

/// Every mode a report can be of (a report's `mode`).
pub const MODES: [&str; 8] = [
    "run", "quick", "diskperf", "parallel", "survey", "matrix", "profile", "video",
];

/// The report as compact JSON (serde_json's own layout), newline-terminated.
pub fn to_json(report: &RunReport) -> String {
    let mut s = serde_json::to_string(report).expect("reports always serialise");
    s.push('\n');
    s
}

/// The JSON Schema of [`RunReport`], generated from the types (draft
/// 2020-12); every object refuses properties it does not list. It is
/// checked in as `schema/run-report.schema.json`, and a test keeps the two
/// equal (`UPDATE_SCHEMA=1 cargo test -p iosurvey-report --test schema`
/// rewrites the file).
pub fn json_schema() -> String {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<RunReport>();
    let mut schema = schema.to_value();
    close(&mut schema, false);
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "$id".into(),
            format!("https://iosurvey.invalid/schema/run-report.v{SCHEMA_VERSION}.json").into(),
        );
        root.insert(
            "title".into(),
            format!("iosurvey run report, schema_version {SCHEMA_VERSION}").into(),
        );
        root.insert(
            "description".into(),
            "Raw counts in bytes and nanoseconds; iops and bytes_per_sec are derived over elapsed_ns. Histograms are lossless: add counts to merge runs. Generated from the report types.".into(),
        );
    }
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serialises");
    s.push('\n');
    s
}

/// Closes every object schema that lists its properties, so that a
/// property the types do not have is refused. An object that also has
/// `oneOf`/`anyOf`/`allOf` branches (a flattened enum, such as an array's
/// layout) is closed with `unevaluatedProperties`, which sees the
/// branches' properties, and its branches are left open (`branch`).
fn close(v: &mut serde_json::Value, branch: bool) {
    const BRANCHES: [&str; 3] = ["oneOf", "anyOf", "allOf"];
    match v {
        serde_json::Value::Object(m) => {
            let has_props = m.contains_key("properties");
            let combined = BRANCHES.iter().any(|k| m.contains_key(*k));
            if has_props && !branch {
                let key = if combined {
                    m.remove("additionalProperties");
                    "unevaluatedProperties"
                } else {
                    "additionalProperties"
                };
                m.entry(key).or_insert(false.into());
            }
            if branch {
                m.remove("additionalProperties");
            }
            for (k, child) in m.iter_mut() {
                if BRANCHES.contains(&k.as_str()) {
                    if let serde_json::Value::Array(list) = child {
                        for c in list {
                            close(c, has_props);
                        }
                    }
                } else {
                    close(child, false);
                }
            }
        }
        serde_json::Value::Array(list) => {
            for c in list {
                close(c, false);
            }
        }
        _ => {}
    }
}
