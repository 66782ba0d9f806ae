//! The JSON presenter. The layout is described by
//! `schema/run-report.schema.json`; bump [`SCHEMA_VERSION`] on any change
//! that is not a pure addition.

use iosurvey_model::document::{PointReport, RunReport};

/// Version of the JSON layout.
pub const SCHEMA_VERSION: u32 = 6;

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

/// The report's JSON up to its points: `{...,"points":[`, the same bytes
/// [`to_json`] starts with. A report is [`json_head`], each point's
/// [`json_point`] joined by `,`, then [`JSON_TAIL`]; so a point is added to
/// a saved report by writing `,{point}]}` over its tail.
pub fn json_head(report: &RunReport) -> String {
    // Every field but the points, named (a new field must be placed).
    let RunReport {
        schema_version,
        tool,
        command_line,
        started_at,
        host,
        mode,
        shared,
        ranks,
        repeats,
        diskperf,
        matrix,
        quick,
        environment,
        fio_job,
        label,
        points: _,
    } = report;
    let empty = RunReport {
        schema_version: *schema_version,
        tool: tool.clone(),
        command_line: command_line.clone(),
        started_at: started_at.clone(),
        host: host.clone(),
        mode: mode.clone(),
        shared: *shared,
        ranks: ranks.clone(),
        repeats: *repeats,
        diskperf: diskperf.clone(),
        matrix: matrix.clone(),
        quick: quick.clone(),
        environment: environment.clone(),
        fio_job: fio_job.clone(),
        label: label.clone(),
        points: Vec::new(),
    };
    let mut s = serde_json::to_string(&empty).expect("reports always serialise");
    let cut = s.len() - "]}".len();
    debug_assert_eq!(&s[cut..], "]}", "the points are the report's last field");
    s.truncate(cut);
    s
}

/// One point's JSON, as [`to_json`] writes it inside the report.
pub fn json_point(point: &PointReport) -> String {
    serde_json::to_string(point).expect("reports always serialise")
}

/// What ends a report after its last point.
pub const JSON_TAIL: &str = "]}\n";

/// The last version that kept each rank's figures under `ranks[].points`
/// and each point's windows in a run-wide `windows`, not in the points.
const RANKS_APART_UNTIL: u32 = 5;

/// A report read from its JSON, of any version from
/// [`FIRST_SCHEMA_VERSION`]: an MPI run saved before version 6 has its
/// ranks' figures and windows moved into its points, where version 6 keeps
/// them (the `n`th entry of each was the `n`th point's).
pub fn from_json(text: &str) -> serde_json::Result<RunReport> {
    #[derive(serde::Deserialize)]
    struct Version {
        #[serde(default)]
        schema_version: u32,
    }
    let v: Version = serde_json::from_str(text)?;
    if v.schema_version > RANKS_APART_UNTIL {
        return serde_json::from_str(text);
    }
    let mut doc: serde_json::Value = serde_json::from_str(text)?;
    ranks_into_points(&mut doc);
    serde_json::from_value(doc)
}

/// Moves a version-5 document's `windows[n]` and `ranks[r].points[n]` into
/// `points[n]` (as `windows` and `ranks[r]`).
fn ranks_into_points(doc: &mut serde_json::Value) {
    use serde_json::Value;
    let Some(root) = doc.as_object_mut() else {
        return;
    };
    let windows = match root.remove("windows") {
        Some(Value::Array(w)) => w,
        _ => Vec::new(),
    };
    let mut per_rank: Vec<std::vec::IntoIter<Value>> = Vec::new();
    if let Some(Value::Array(ranks)) = root.get_mut("ranks") {
        for r in ranks.iter_mut().filter_map(Value::as_object_mut) {
            let p = match r.remove("points") {
                Some(Value::Array(p)) => p,
                _ => Vec::new(),
            };
            per_rank.push(p.into_iter());
        }
    }
    let Some(Value::Array(points)) = root.get_mut("points") else {
        return;
    };
    let mut windows = windows.into_iter();
    for p in points.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(w) = windows.next() {
            p.insert("windows".into(), w);
        }
        let ranks: Vec<Value> = per_rank.iter_mut().filter_map(Iterator::next).collect();
        if !ranks.is_empty() {
            p.insert("ranks".into(), Value::Array(ranks));
        }
    }
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

/// The JSON Schema of `iosurvey compare --output json` (and `--json`),
/// generated from [`crate::compare::CompareReport`] like [`json_schema`]
/// and checked in beside it as `schema/compare-report.schema.json`.
pub fn compare_json_schema() -> String {
    use crate::compare::{CompareReport, COMPARE_VERSION};
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<CompareReport>();
    let mut schema = schema.to_value();
    close(&mut schema, false);
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "$id".into(),
            format!("https://iosurvey.invalid/schema/compare-report.v{COMPARE_VERSION}.json")
                .into(),
        );
        root.insert(
            "title".into(),
            format!("iosurvey compare report, compare_version {COMPARE_VERSION}").into(),
        );
        root.insert(
            "description".into(),
            "Runs compared with the first (A), point by point: medians over the repeats with their intervals, B/A with a bootstrap interval, a Mann-Whitney p-value and a verdict per row; the settings that differ; the gate when asked. Generated from the compare types.".into(),
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
