//! Unit tests of the matrix expansion: every run level, every matrix type,
//! the classes of a point and the refusals.

use super::*;

fn spec(n: usize) -> MatrixSpec {
    MatrixSpec::new(
        (0..n)
            .map(|i| PathBuf::from(format!("/dev/t{i}")))
            .collect(),
    )
}

fn cells_of(plan: &Plan) -> Vec<(u32, u32)> {
    let cells = plan.points.iter().map(|p| match p.params {
        PointParams::Matrix { small, large } => (small, large),
        ref other => panic!("not a matrix point: {other:?}"),
    });
    cells.collect()
}

/// Every point's classes: `label pattern bs outstanding regions`.
fn shape(p: &Point) -> Vec<String> {
    let s = p.job.streams.iter();
    s.map(|s| {
        format!(
            "{} {} {} {} {}",
            s.label,
            s.pattern.name(),
            s.bs,
            s.outstanding,
            s.regions
        )
    })
    .collect()
}

#[test]
fn simple_is_the_basic_matrix() {
    let mut s = spec(1);
    s.run = RunLevel::Simple;
    let plan = expand(&s).unwrap();
    assert_eq!(plan.mode, "matrix");
    let want = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (0, 2)];
    assert_eq!(cells_of(&plan), want);
    assert!(plan.points.iter().enumerate().all(|(i, p)| p.index == i));
    assert_eq!(plan.points[0].label, "small=1 large=0");
}

#[test]
fn normal_is_the_detailed_matrix_of_seed_004() {
    let mut s = spec(1);
    (s.run, s.num_disks) = (RunLevel::Normal, Some(24));
    let plan = expand(&s).unwrap();
    // 26 columns x 16 rows; (0, 0) moves nothing and is not run.
    assert_eq!(plan.points.len(), 26 * 16 - 1);
    assert_eq!(cells_of(&plan).last(), Some(&(120, 48)));
    let p = plan.points.iter().find(|p| p.label == "small=12 large=4");
    assert_eq!(
        shape(p.unwrap()),
        ["small random 8192 12 0", "large random 1048576 4 0"]
    );
}

#[test]
fn advanced_defaults_to_basic_and_takes_every_matrix_type() {
    let s = spec(1);
    assert_eq!(cells_of(&expand(&s).unwrap()).len(), 7);
    type Case = (MatrixType, Option<u32>, Option<u32>, usize, (u32, u32));
    #[rustfmt::skip]
    let cases: [Case; 6] = [
        (MatrixType::Basic, None, None, 7, (0, 2)),
        (MatrixType::Detailed, None, None, 17, (5, 2)),
        (MatrixType::Row, None, Some(2), 6, (5, 2)),
        (MatrixType::Col, Some(3), None, 3, (3, 2)),
        (MatrixType::Point, Some(4), Some(1), 1, (4, 1)),
        (MatrixType::Max, Some(3), Some(1), 7, (3, 1)),
    ];
    for (kind, ns, nl, n, last) in cases {
        let mut s = spec(1);
        (s.matrix, s.num_small, s.num_large) = (Some(kind), ns, nl);
        let c = cells_of(&expand(&s).unwrap());
        assert_eq!((c.len(), c.last().copied()), (n, Some(last)), "{kind:?}");
    }
}

#[test]
fn oltp_runs_small_only_and_dss_large_only() {
    let mut s = spec(2);
    s.run = RunLevel::Oltp;
    let plan = expand(&s).unwrap();
    assert_eq!(
        cells_of(&plan),
        (1..=10).map(|n| (n, 0)).collect::<Vec<_>>()
    );
    assert!(plan.points.iter().all(|p| p.job.streams.len() == 1));
    s.run = RunLevel::Dss;
    let plan = expand(&s).unwrap();
    assert_eq!(cells_of(&plan), [(0, 1), (0, 2), (0, 3), (0, 4)]);
    assert_eq!(shape(&plan.points[3]), ["large random 1048576 4 0"]);
}

#[test]
fn a_point_is_one_job_over_an_array_of_every_target() {
    let mut s = spec(3);
    s.layout = Layout::Raid0 { stripe: 1 << 20 };
    (s.write_pct, s.warm) = (25, Warm::Bytes(256 << 20));
    (s.matrix, s.num_small, s.num_large) = (Some(MatrixType::Point), Some(6), Some(2));
    let plan = expand(&s).unwrap();
    let job = &plan.points[0].job;
    assert_eq!(
        (job.workers, job.targets.len(), job.streams.len()),
        (1, 3, 2)
    );
    for st in &job.streams {
        let a = st.array.as_ref().unwrap();
        assert_eq!((a.members.as_slice(), a.layout), (&[0, 1, 2][..], s.layout));
        assert_eq!(st.mix, Mix::Mixed { read_pct: 75 });
    }
    assert!(job.writes_target(2));
    assert_eq!(job.bounds.time, Some(Duration::from_secs(60)));
    // Random large I/O: no warm-up (ORION warms the cache before large
    // sequential points only).
    assert_eq!((job.warm_bytes, job.bounds.ramp), (0, Duration::ZERO));
    s.sequential = true;
    let plan = expand(&s).unwrap();
    let job = &plan.points[0].job;
    // 256 MiB moved unmeasured before the point, not a time.
    assert_eq!(
        (job.warm_bytes, job.bounds.ramp),
        (256 << 20, Duration::ZERO)
    );
    // Small I/O alone is never warmed.
    (s.num_small, s.num_large) = (Some(6), Some(0));
    let plan = expand(&s).unwrap();
    assert_eq!(plan.points[0].job.warm_bytes, 0);
}

#[test]
fn sequential_large_io_is_streams_of_num_streamio() {
    let mut s = spec(1);
    (s.sequential, s.num_streamio) = (true, 4);
    (s.matrix, s.num_small, s.num_large) = (Some(MatrixType::Point), Some(0), Some(3));
    let plan = expand(&s).unwrap();
    assert_eq!(shape(&plan.points[0]), ["large forward 1048576 12 3"]);
}

#[test]
fn every_point_carries_its_cell_typed_and_in_its_label() {
    let plan = expand(&spec(1)).unwrap();
    assert!(!plan.points.is_empty());
    for p in &plan.points {
        let PointParams::Matrix { small, large } = p.params else {
            panic!("not a matrix point: {:?}", p.params);
        };
        assert_eq!(p.label, label(small, large));
    }
}

#[test]
fn bad_specs_are_refused_with_a_message_naming_the_flag() {
    type Edit = fn(&mut MatrixSpec);
    #[rustfmt::skip]
    let cases: [(Edit, &str); 12] = [
        (|s| s.targets.clear(), "no target given"),
        (|s| s.targets.push("/dev/t0".into()), "named twice"),
        (|s| s.num_disks = Some(0), "--num-disks must be greater than zero"),
        (|s| s.size_small = 0, "--size-small must be"),
        (|s| s.duration = Duration::ZERO, "--time must be"),
        (|s| s.write_pct = 101, "--write-pct 101 is out of range"),
        (|s| (s.run, s.matrix) = (RunLevel::Simple, Some(MatrixType::Row)), "--run advanced only"),
        (|s| s.matrix = Some(MatrixType::Row), "--matrix row needs --num-large"),
        (|s| (s.matrix, s.num_large) = (Some(MatrixType::Point), Some(1)), "--matrix point needs --num-small"),
        (|s| s.layout = Layout::Raid0 { stripe: 0 }, "--stripe must be greater than zero"),
        (|s| s.engine = EngineKind::Sync, "use --engine uring"),
        (|s| (s.matrix, s.num_small, s.num_large) = (Some(MatrixType::Point), Some(0), Some(0)), "the matrix is empty"),
    ];
    for (edit, want) in cases {
        let mut s = spec(1);
        edit(&mut s);
        let got = expand(&s).expect_err(want).to_string();
        assert!(got.contains(want), "{got:?} does not say {want:?}");
    }
    let mut deep = spec(1);
    (deep.matrix, deep.num_small, deep.num_large) = (Some(MatrixType::Point), Some(70000), Some(1));
    assert!(matches!(expand(&deep), Err(MatrixError::TooDeep(70001))));
}
