//! The JSON report's layout for appending (a head, the points joined by
//! commas, a tail: byte for byte what `to_json` writes), and reports of
//! version 5, whose ranks' figures and windows were kept apart from the
//! points, read as version 6 keeps them.

use iosurvey_model::document::*;
use iosurvey_report::*;

use crate::fixtures;

fn pieced(r: &RunReport) -> String {
    let points: Vec<String> = r.points.iter().map(json_point).collect();
    format!("{}{}{JSON_TAIL}", json_head(r), points.join(","))
}

fn mpi_report(points: usize) -> RunReport {
    let mut r = fixtures::run_report("survey", Vec::new());
    r.ranks = (0..3)
        .map(|k| RankReport {
            rank: k,
            host: format!("node{k}"),
            targets: vec![k],
        })
        .collect();
    for i in 0..points {
        let mut p = fixtures::blank_point(1_000_000_000 + i as u64);
        p.index = i;
        p.label = format!("point {i}");
        p.ranks = (0..3)
            .map(|k| RankPoint {
                index: i,
                start_ns: 1000 * k as u64,
                end_ns: 1_000_000_000,
                read_ops: 100 * (i as u64 + 1) + k as u64,
                ..Default::default()
            })
            .collect();
        p.windows = Some(PointWindows {
            index: i,
            merge_ns: 7 + i as u64,
            gathered_bytes: 1000 + i as u64,
            ..Default::default()
        });
        r.points.push(p);
    }
    r
}

#[test]
fn a_report_is_its_head_its_points_and_its_tail_byte_for_byte() {
    for n in [0, 1, 3] {
        let r = mpi_report(n);
        assert_eq!(pieced(&r), to_json(&r), "{n} points");
        assert!(json_head(&r).ends_with("\"points\":["), "{}", json_head(&r));
        let mut one = fixtures::run_report("run", Vec::new());
        one.points = (0..n).map(|_| fixtures::blank_point(5)).collect();
        assert_eq!(pieced(&one), to_json(&one), "{n} points on one host");
    }
    // Appending the next point over the tail gives the longer report.
    let (two, three) = (mpi_report(2), mpi_report(3));
    let mut saved = to_json(&two);
    saved.truncate(saved.len() - JSON_TAIL.len());
    saved.push(',');
    saved.push_str(&json_point(&three.points[2]));
    saved.push_str(JSON_TAIL);
    assert_eq!(saved, to_json(&three));
}

#[test]
fn a_version_5_mpi_report_reads_with_each_point_s_ranks_and_windows() {
    let r = mpi_report(3);
    // Version 5's layout: the ranks' figures under `ranks[].points` and
    // the windows in the run's `windows`, in the order of the points.
    let mut v: serde_json::Value = serde_json::from_str(&to_json(&r)).unwrap();
    let mut windows = Vec::new();
    let mut per_rank = vec![Vec::new(); 3];
    for p in v["points"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        windows.push(p.remove("windows").unwrap());
        let ranks = p.remove("ranks").unwrap();
        for (k, f) in ranks.as_array().unwrap().iter().enumerate() {
            per_rank[k].push(f.clone());
        }
    }
    v["schema_version"] = 5.into();
    v["windows"] = windows.into();
    for (k, f) in per_rank.into_iter().enumerate() {
        v["ranks"][k]["points"] = f.into();
    }
    let old = serde_json::to_string(&v).unwrap();
    let back = from_json(&old).unwrap();
    assert_eq!(back.schema_version, 5);
    assert_eq!(back.points.len(), 3);
    for (a, b) in back.points.iter().zip(&r.points) {
        assert_eq!(a.ranks, b.ranks);
        assert_eq!(a.windows, b.windows);
    }
    assert_eq!(back.ranks, r.ranks);
    assert_eq!(
        render_ranks(&back, TextOptions::default()),
        render_ranks(&r, TextOptions::default())
    );
    // A version-6 report reads as written; one of one host has neither.
    assert_eq!(from_json(&to_json(&r)).unwrap(), r);
    let one = fixtures::run_report("run", vec![fixtures::blank_point(5)]);
    let mut v: serde_json::Value = serde_json::from_str(&to_json(&one)).unwrap();
    v["schema_version"] = 4.into();
    let back = from_json(&v.to_string()).unwrap();
    assert!(back.points[0].ranks.is_empty() && back.points[0].windows.is_none());
}
