//! fio's JSON as the database's rows, notes before it allowed.

use iosurvey_db::record::Source;
use iosurvey_db::{read_other, Input};

/// fio 3.33's `--output-format=json+` layout, cut to what is read, after
/// a note fio prints first.
const FIO: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
{
  "fio version" : "fio-3.33",
  "timestamp" : 1764806400,
  "timestamp_ms" : 1764806400123,
  "time" : "Thu Dec  4 00:00:00 2025",
  "global options" : { "direct" : "1", "size" : "16m" },
  "jobs" : [
    {
      "jobname" : "rr",
      "groupid" : 0,
      "error" : 0,
      "job options" : { "name" : "rr", "filename" : "/tmp/t.dat", "rw" : "randread", "bs" : "4k", "iodepth" : "8" },
      "read" : {
        "io_bytes" : 409600000, "io_kbytes" : 400000, "bw_bytes" : 40960000, "bw" : 40000,
        "iops" : 10000.5, "runtime" : 10000, "total_ios" : 100000, "short_ios" : 0, "drop_ios" : 0,
        "slat_ns" : { "min" : 1, "max" : 2, "mean" : 1.5, "stddev" : 0.1, "N" : 100000 },
        "clat_ns" : { "min" : 50000, "max" : 900000, "mean" : 99000.0, "stddev" : 2000.0, "N" : 100000,
          "percentile" : { "50.000000" : 98304, "99.000000" : 150528, "99.900000" : 301056 },
          "bins" : { "98304" : 60000, "150528" : 39000, "301056" : 1000 } },
        "lat_ns" : { "min" : 50010, "max" : 900010, "mean" : 99010.0, "stddev" : 2000.0, "N" : 100000 }
      },
      "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0, "runtime" : 0, "total_ios" : 0 },
      "trim" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0, "runtime" : 0, "total_ios" : 0 },
      "usr_cpu" : 10.0,
      "sys_cpu" : 30.0
    }
  ],
  "disk_util" : [ { "name" : "vda", "read_ios" : 100000 } ]
}
"#;

#[test]
fn fios_json_is_a_run_of_one_point_per_job_under_iosurveys_figure_names() {
    let Some(Input::Fio(r)) = read_other(FIO, "h1", Some("base")).unwrap() else {
        panic!("not read as fio's");
    };
    assert_eq!(r.head.source, Source::Fio);
    assert_eq!(r.head.tool_version, "3.33");
    assert_eq!(r.head.started_at, "2025-12-04T00:00:00Z");
    assert_eq!(r.head.label.as_deref(), Some("base"));
    assert_eq!(r.hosts[0].hostname, "h1");
    assert_eq!(r.targets[0].path, "/tmp/t.dat");
    assert_eq!(r.targets[0].device_name.as_deref(), Some("vda"));
    assert_eq!(r.points.len(), 1);
    let p = &r.points[0];
    assert_eq!(p.head.label, "rr");
    assert_eq!(p.head.params["rw"], "randread");
    assert_eq!(
        p.head.params["direct"], "1",
        "global options under the job's"
    );
    assert_eq!(p.head.elapsed_ns, 10_000_000_000);
    // 40% of one CPU over 10 s for 100000 I/Os: 40 us each.
    assert!((p.head.cpu_us_per_io.unwrap() - 40.0).abs() < 1e-9);
    assert_eq!(p.figures.len(), 1, "idle directions are left out");
    let f = &p.figures[0];
    assert_eq!(
        (f.direction.as_str(), f.ops, f.iops),
        ("read", 100000.0, 10000.5)
    );
    assert_eq!(f.bytes_per_sec, 40960000.0);
    let l = f.latency.as_ref().unwrap();
    assert_eq!((l.min_ns, l.max_ns, l.mean_ns), (50010, 900010, 99010.0));
    assert_eq!(
        l.at(99.0),
        Some(150528),
        "clat's percentiles when lat has none"
    );
    assert_eq!(p.histograms.len(), 1);
    assert_eq!(
        p.histograms[0].data["counts"][2],
        serde_json::json!([301056, 1000])
    );
    // The same jobs on another file are the same plan.
    let other = FIO.replace("/tmp/t.dat", "/dev/nvme0n1");
    let Some(Input::Fio(o)) = read_other(&other, "h2", None).unwrap() else {
        panic!()
    };
    assert_eq!(o.head.plan_hash, r.head.plan_hash);
    assert_ne!(o.head.run_key, r.head.run_key);
    // Anything else is not fio's.
    assert!(
        read_other("{\"schema_version\": 6, \"points\": []}", "h", None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn jobs_of_one_name_are_points_apart_and_lat_percentiles_are_preferred() {
    // numjobs=2 without group_reporting: two jobs named rr; the second
    // with lat_percentiles=1 (percentiles and bins under lat_ns); a
    // directory with an escaped colon; a status object after the first.
    let two = FIO
        .replace(
            "\"jobs\" : [\n    {",
            "\"jobs\" : [\n    { \"jobname\" : \"rr\", \"job options\" : { \"directory\" : \"/mnt/a\\\\:b:/mnt/c\" }, \"read\" : { \"io_bytes\" : 4096, \"bw_bytes\" : 4096, \"iops\" : 1.0, \"runtime\" : 1000, \"total_ios\" : 1, \"clat_ns\" : { \"percentile\" : { \"99.000000\" : 5 } }, \"lat_ns\" : { \"min\" : 7, \"max\" : 7, \"mean\" : 7.0, \"stddev\" : 0.0, \"percentile\" : { \"99.000000\" : 7 }, \"bins\" : { \"7\" : 1 } } } },\n    {",
        )
        + "{ \"fio version\" : \"fio-3.33\", \"jobs\" : [] }\n";
    let Some(Input::Fio(r)) = read_other(&two, "h", None).unwrap() else {
        panic!("not read as fio's");
    };
    let labels: Vec<&str> = r.points.iter().map(|p| p.head.label.as_str()).collect();
    assert_eq!(labels, ["rr", "rr#1"]);
    let first = &r.points[0];
    assert_eq!(first.figures[0].latency.as_ref().unwrap().at(99.0), Some(7));
    assert_eq!(first.histograms[0].data["format"], "fio lat_ns bins");
    let dirs: Vec<(&str, &str)> = r
        .targets
        .iter()
        .map(|t| (t.path.as_str(), t.kind.as_str()))
        .collect();
    assert_eq!(
        dirs,
        [
            ("/mnt/a:b", "directory"),
            ("/mnt/c", "directory"),
            ("/tmp/t.dat", "file")
        ]
    );
    assert_eq!(r.points[1].histograms[0].data["format"], "fio clat_ns bins");
}
