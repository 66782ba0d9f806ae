//! The checked-in `schema/run-report.schema.json` is the schema the report
//! types generate. `UPDATE_SCHEMA=1` rewrites it from the types.

use crate::fixtures;

const PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/run-report.schema.json"
);

#[test]
fn the_checked_in_schema_is_the_one_the_types_generate() {
    let generated = iosurvey_report::json_schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(PATH, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(PATH).unwrap();
    assert!(
        checked_in == generated,
        "schema/run-report.schema.json is not what the report types generate: run \
         `UPDATE_SCHEMA=1 cargo test -p iosurvey-report --test it schema`, review the diff, \
         and bump SCHEMA_VERSION (with a CHANGELOG line) unless it is a pure addition"
    );
}

#[test]
fn the_generated_schema_is_a_valid_draft_2020_12_schema() {
    let schema: serde_json::Value = serde_json::from_str(&iosurvey_report::json_schema()).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::validator_for(&schema).unwrap();
}

#[test]
fn the_schema_refuses_a_property_the_types_do_not_have() {
    let schema: serde_json::Value = serde_json::from_str(&iosurvey_report::json_schema()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let r = fixtures::run_report("run", vec![fixtures::blank_point(1_000)]);
    let mut value: serde_json::Value = serde_json::from_str(&iosurvey_report::to_json(&r)).unwrap();
    assert!(v.is_valid(&value), "a real report is valid");
    value["points"][0]["surprise"] = 1.into();
    assert!(!v.is_valid(&value), "an unknown property is refused");
}

const COMPARE_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/compare-report.schema.json"
);

#[test]
fn the_checked_in_compare_schema_is_the_one_the_compare_types_generate() {
    let generated = iosurvey_report::compare_json_schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(COMPARE_PATH, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(COMPARE_PATH).unwrap();
    assert!(
        checked_in == generated,
        "schema/compare-report.schema.json is not what the compare types generate: run \
         `UPDATE_SCHEMA=1 cargo test -p iosurvey-report --test it schema`, review the diff, \
         and bump COMPARE_VERSION unless it is a pure addition"
    );
    let schema: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::validator_for(&schema).unwrap();
}
