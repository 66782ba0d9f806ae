//! The history database's tests: the file (made, checked, refused), runs
//! written and read back, many writers at once, export and import, fio's
//! JSON, series with their change points, and the files beside the
//! database.

mod backend;
mod fio;
mod history;
mod postgres;
mod sidecars;
mod store;

use iosurvey_db::record::{
    FigureRow, HistogramRow, HostRow, LatencyFigures, PointHead, PointRecord, RunHead, RunRecord,
    Source, TargetRow, TOTAL,
};

/// A run of one point whose read IOPS are `iops`, on `host` with a
/// target of firmware `fw`.
pub fn run(key: &str, started: &str, label: Option<&str>, iops: f64, fw: &str) -> RunRecord {
    RunRecord {
        head: RunHead {
            run_key: key.into(),
            source: Source::Iosurvey,
            started_at: started.into(),
            tool: "iosurvey".into(),
            tool_version: "0.1.0".into(),
            tool_commit: Some("abcdef012345".into()),
            schema_version: Some(6),
            mode: "run".into(),
            command_line: vec!["iosurvey".into(), "run".into(), "/dev/x".into()],
            plan_hash: "00112233aabbccdd".into(),
            label: label.map(String::from),
            repeats: 1,
            interrupted: false,
        },
        hosts: vec![HostRow {
            index: 0,
            hostname: "h1".into(),
            kernel: Some("6.1.0".into()),
            os: Some("Linux".into()),
            arch: Some("x86_64".into()),
            cpu_model: Some("cpu".into()),
            cpus: Some(8),
            memory_bytes: Some(1 << 34),
        }],
        targets: vec![TargetRow {
            index: 0,
            host: 0,
            path: "/dev/x".into(),
            kind: "block".into(),
            size_bytes: 1 << 40,
            logical_block_size: 512,
            physical_block_size: 4096,
            rotational: Some(false),
            direct: true,
            model: Some("Drive 9000".into()),
            firmware: Some(fw.into()),
            serial_hash: Some("0123456789abcdef".into()),
            transport: Some("nvme".into()),
            scheduler: Some("none".into()),
            ..TargetRow::default()
        }],
        points: vec![PointRecord {
            head: PointHead {
                index: 0,
                repeat: 0,
                label: "randread 4k".into(),
                params: serde_json::json!({"mode": "run"}),
                elapsed_ns: 10_000_000_000,
                interrupted: false,
                skipped: None,
                cpu_us_per_io: Some(1.5),
                warnings: vec!["too_short".into()],
                verify_failures: None,
            },
            figures: vec![FigureRow {
                stream: TOTAL.into(),
                direction: "read".into(),
                window: "total".into(),
                ops: iops * 10.0,
                bytes: iops * 10.0 * 4096.0,
                iops,
                bytes_per_sec: iops * 4096.0,
                errors: 0,
                latency: Some(LatencyFigures {
                    min_ns: 1000,
                    mean_ns: 8000.5,
                    stdev_ns: 100.25,
                    max_ns: 90_000,
                    percentiles: vec![(50.0, 7900), (99.0, 12_000), (99.9, 20_000)],
                }),
            }],
            histograms: vec![HistogramRow {
                stream: TOTAL.into(),
                direction: "read".into(),
                data: serde_json::json!({"counts": [[7900, 5], [12000, 1]]}),
            }],
        }],
        document: Some("{\"stand-in\": true}".into()),
    }
}
