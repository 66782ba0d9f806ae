//! Snapshot tests of the text layout and schema checks of the JSON, both
//! from fixed results (no I/O).

use iosurvey_model::document::*;
use iosurvey_report::*;

use crate::fixtures;
use iosurvey_model::TargetKind;
use iosurvey_stats::ClassStats;

fn class(ops: u64, bs: u64, base_ns: u64) -> ClassStats {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(
            (i * 2 / ops.max(1)) as usize,
            bs,
            base_ns + (i * 7919) % 50_000,
        );
    }
    c
}

fn stream(target: usize, read: &ClassStats, write: &ClassStats, elapsed: u64) -> StreamReport {
    StreamReport {
        samples: Vec::new(),
        bs_split: Vec::new(),
        trim: ClassReport::idle(),
        trim_pct: 0,
        label: "main".into(),
        target,
        rw: iosurvey_model::document::Rw::Mixed,
        read_pct: 70,
        pattern: iosurvey_model::Pattern::Random,
        dist: Default::default(),
        bs: 4096,
        outstanding: 16,
        offset: 0,
        span: None,
        regions: 0,
        array: None,
        elapsed_ns: elapsed,
        read: ClassReport::new(read, elapsed),
        write: ClassReport::new(write, elapsed),
    }
}

fn report() -> RunReport {
    let elapsed = 2_000_000_000;
    let (r0, w0) = (class(7000, 4096, 40_000), class(3000, 4096, 90_000));
    let (r1, mut w1) = (class(700, 4096, 400_000), class(300, 4096, 900_000));
    w1.record_error(28);
    let mut tr = r0.clone();
    tr.merge(&r1);
    let mut tw = w0.clone();
    tw.merge(&w1);
    let target = |path: &str, kind| TargetReport {
        path: path.into(),
        kind,
        size_bytes: 1 << 30,
        logical_block_size: 512,
        physical_block_size: 4096,
        rotational: if kind == TargetKind::Block {
            Some(false)
        } else {
            None
        },
        direct: true,
        created: kind == TargetKind::File,
        memory_backed: None,
        link_bytes_per_sec: None,
        link: None,
        device: None,
    };
    fixtures::run_report(
        "run",
        vec![PointReport {
            repeat: 0,
            index: 0,
            label: "randrw bs=4KiB qd=16 workers=1".into(),
            params: iosurvey_model::PointParams::RUN,
            settings: Settings {
                engine: iosurvey_model::EngineKind::Uring,
                workers: 1,
                direct: true,
                seed: 7,
                time_ns: Some(elapsed),
                bytes: None,
                ramp_ns: 0,
                warm_bytes: 0,
                rate: None,
                interval_ns: 1_000_000_000,
                continue_on_error: true,
                registered_files: true,
                fixed_buffers: true,
                reap_window_us: Some(10),
                empty_wakeups: 0,
                wrap: false,
                sqpoll: false,
                sqpoll_cpu: None,
                hipri: false,
                cpus: vec![],
                unique_blocks: true,
                unique_sectors: true,
                data_nonce: None,
                compressible_pct: 0,
                stream_detail: Default::default(),
            },
            targets: vec![
                target("/tmp/a", TargetKind::File),
                target("/dev/loop9", TargetKind::Block),
            ],
            elapsed_ns: elapsed,
            first_done_ns: elapsed - 1000,
            interrupted: false,
            skipped: None,
            cpu_user_ns: 100_000_000,
            cpu_system_ns: 900_000_000,
            cpu_workers_ns: 990_000_000,
            cpu_us_per_io: Some(2.5),
            failure: Some(FailureReport {
                stream: 1,
                op: iosurvey_model::Op::Write,
                offset: 8192,
                errno: 28,
                error: errno_name(28),
                at_ns: 5000,
            }),
            warnings: vec![iosurvey_model::document::Warning {
                evidence: iosurvey_model::document::Evidence::BufferedFitsInRam(
                    iosurvey_model::document::evidence::BufferedFitsInRam {
                        target: "/tmp/a".into(),
                        area_bytes: 1073741824,
                        ram_bytes: 4294967296,
                    },
                ),
                message: "buffered reads of /tmp/a cover 1073741824 bytes, less than RAM".into(),
                threshold: "an area at least the size of RAM".into(),
            }],
            streams: vec![stream(0, &r0, &w0, elapsed), stream(1, &r1, &w1, elapsed)],
            total: StreamTotals {
                read: ClassReport::new(&tr, elapsed),
                write: ClassReport::new(&tw, elapsed),
                whole: false,
                trim: ClassReport::idle(),
            },
            frames: None,
            verify: None,
            compression_check: None,
            ranks: Vec::new(),
            windows: None,
        }],
    )
}

#[test]
fn text_layout_in_mb_per_second() {
    insta::assert_snapshot!(render_text(&report(), TextOptions { mib: false }));
}

#[test]
fn text_layout_in_mib_per_second() {
    let text = render_text(&report(), TextOptions { mib: true });
    assert!(text.contains("MiB/s"));
    assert!(!text.contains("MB/s"));
}

#[test]
fn text_names_the_tail_of_an_area_that_no_block_covers() {
    let mut r = report();
    assert!(!render_text(&r, TextOptions::default()).contains("not covered"));
    let p = &mut r.points[0];
    let bs = p.streams[0].bs;
    let t = p.streams[0].target;
    p.targets[t].size_bytes = p.streams[0].offset + 10 * bs + 100;
    p.streams[0].span = None;
    let text = render_text(&r, TextOptions::default());
    assert!(
        text.contains(&format!(
            "not covered: the last 100 bytes of the area, less than one {bs}-byte block"
        )),
        "{text}"
    );
}

fn schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/run-report.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn json_matches_the_checked_in_schema_and_round_trips() {
    let r = report();
    let json = to_json(&r);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn schema_rejects_a_report_missing_a_field() {
    let mut value: serde_json::Value = serde_json::from_str(&to_json(&report())).unwrap();
    // (A total's histogram is left out by design since schema version 4:
    // its latency figures are not.)
    value["points"][0]["total"]["read"]
        .as_object_mut()
        .unwrap()
        .remove("latency");
    assert!(!schema().is_valid(&value));
}

#[test]
fn histograms_in_json_merge_exactly() {
    let r = report();
    let p = &r.points[0];
    let merged = {
        let mut a = iosurvey_stats::Histogram::from_data(&p.streams[0].read.histogram);
        a.merge(&iosurvey_stats::Histogram::from_data(
            &p.streams[1].read.histogram,
        ));
        a.to_data()
    };
    assert_eq!(merged, p.total.read.histogram);
}

#[test]
fn quick_card_layout() {
    let mut r = report();
    r.mode = "quick".into();
    let template = r.points[0].clone();
    r.points.clear();
    for (i, name) in [
        "SEQ1M Q8T1 read",
        "RND4K Q1T1 read",
        "SEQ1M Q8T1 write",
        "RND4K Q1T1 write",
    ]
    .iter()
    .enumerate()
    {
        let mut p = template.clone();
        p.index = i;
        p.label = name.to_string();
        let (test, op) = name.rsplit_once(' ').unwrap();
        p.params = iosurvey_model::PointParams::Quick {
            test: test.into(),
            op: if op == "write" {
                iosurvey_model::Op::Write
            } else {
                iosurvey_model::Op::Read
            },
        };
        p.failure = None;
        p.cpu_us_per_io = Some(1.25 * (i + 1) as f64);
        p.targets[0].device = Some(iosurvey_model::document::DeviceReport {
            name: Some("vda".into()),
            transport: Some("virtio".into()),
            filesystem: Some("ext4".into()),
            mount_point: Some("/".into()),
            mount_source: Some("/dev/vda".into()),
            ..Default::default()
        });
        r.points.push(p);
    }
    r.quick = Some(iosurvey_model::document::QuickSettings {
        profile: "cdm8".into(),
        description: "CrystalDiskMark 8 default, KDiskMark Standard".into(),
    });
    insta::assert_snapshot!(render_card(&r, TextOptions { mib: false }));
}

/// Issue 32: the card fits 80 columns whatever its profile's test names,
/// the unit, and however long the names of the storage and test file.
#[test]
fn every_profiles_card_fits_80_columns_with_long_names() {
    let mut r = report();
    r.mode = "quick".into();
    let template = r.points[0].clone();
    let long = format!("/mnt/{}", "a-very-long-mount-point-name/".repeat(6));
    for tests in [
        ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
        ["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"],
    ] {
        r.points.clear();
        for (i, (test, op)) in tests
            .iter()
            .flat_map(|t| {
                [
                    (t, iosurvey_model::Op::Read),
                    (t, iosurvey_model::Op::Write),
                ]
            })
            .enumerate()
        {
            let mut p = template.clone();
            p.index = i;
            p.params = iosurvey_model::PointParams::Quick {
                test: test.to_string(),
                op,
            };
            p.targets[0].path = format!("{long}iosurvey-quick.tmp");
            p.targets[0].device = Some(iosurvey_model::document::DeviceReport {
                name: Some("nvme0n1".into()),
                model: Some("SAMSUNG MZVL2512HCJQ-00BL7 with a much longer model name".into()),
                transport: Some("nvme".into()),
                filesystem: Some("btrfs".into()),
                mount_point: Some(long.clone()),
                mount_source: Some(format!("/dev/mapper/{}", "luks-".repeat(20))),
                ..Default::default()
            });
            p.cpu_us_per_io = Some(123.45);
            r.points.push(p);
        }
        r.quick = Some(iosurvey_model::document::QuickSettings {
            profile: "cdm8-nvme".into(),
            description: "CrystalDiskMark 8 NVMe SSD, KDiskMark NVMe SSD".into(),
        });
        for mib in [false, true] {
            let card = render_card(&r, TextOptions { mib });
            for l in card.lines() {
                assert!(
                    l.chars().count() <= 80,
                    "{} chars: {l}\n{card}",
                    l.chars().count()
                );
            }
            for t in tests {
                assert!(card.contains(&format!("\n{t:<13} Read ")), "{t}: {card}");
            }
            assert!(card.contains("profile cdm8-nvme"), "{card}");
            assert!(
                card.contains("luks-luks-"),
                "the source is kept whole: {card}"
            );
        }
    }
}

#[test]
fn cpu_time_per_io_is_the_process_cpu_over_every_completed_io() {
    let r = report();
    let p = &r.points[0];
    let ops = p.total.read.ops + p.total.write.ops;
    assert!(ops > 0);
    // 100 ms user and 900 ms system: one second of CPU.
    let want = 1e6 / ops as f64;
    assert!((p.cpu_per_io_us().unwrap() - want).abs() < 1e-9);
    let mut idle = p.clone();
    idle.total.read.ops = 0;
    idle.total.write.ops = 0;
    assert_eq!(idle.cpu_per_io_us(), None);
}
