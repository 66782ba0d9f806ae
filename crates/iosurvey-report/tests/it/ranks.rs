//! The text of a run under MPI: each rank, and each point's three windows
//! (or none when the ranks never ran at once); nothing for one host.

use iosurvey_model::document::*;
use iosurvey_report::*;

use crate::fixtures;

fn window(start_ns: u64, end_ns: u64, bytes: f64) -> Window {
    let secs = end_ns.saturating_sub(start_ns) as f64 / 1e9;
    Window {
        start_ns,
        end_ns,
        ops: bytes / 4096.0,
        bytes,
        iops: if secs > 0.0 {
            bytes / 4096.0 / secs
        } else {
            0.0
        },
        bytes_per_sec: if secs > 0.0 { bytes / secs } else { 0.0 },
    }
}

#[test]
fn ranks_and_windows_follow_the_mode_s_text() {
    let mut r = fixtures::run_report("run", vec![fixtures::blank_point(2_000_000_000)]);
    assert_eq!(render_ranks(&r, TextOptions::default()), "");
    r.ranks = (0..2)
        .map(|k| RankReport {
            rank: k,
            host: format!("node{k}"),
            targets: vec![],
        })
        .collect();
    r.points[0].ranks = vec![
        RankPoint {
            index: 0,
            start_ns: 1_000_000,
            end_ns: 2_001_000_000,
            read_ops: 1000,
            read_bytes: 4_096_000,
            ..Default::default()
        };
        2
    ];
    r.points[0].windows = Some(PointWindows {
        index: 0,
        common: window(1_000_000, 2_001_000_000, 8_192_000.0),
        first_done: window(1_000_000, 2_001_000_000, 8_192_000.0),
        last_done: window(1_000_000, 2_001_000_000, 8_192_000.0),
        ..Default::default()
    });
    let t = render_ranks(&r, TextOptions::default());
    assert!(t.contains("MPI: 2 ranks on 2 hosts"), "{t}");
    assert!(t.contains("rank   1 on node1: no target"), "{t}");
    assert!(
        t.contains("common window     0.001 s to     2.001 s:     4.1 MB/s,       1000 IOPS (every rank running)"),
        "{t}"
    );
    assert!(t.contains("rank   0 node0"), "{t}");
    assert!(t.contains("(1000 ops, 0 errors)"), "{t}");
    // A repeat of the point: its own ranks' figures, under its own head
    // (each point's are in the point).
    let mut again = r.points[0].clone();
    again.repeat = 1;
    again.ranks[1].read_ops = 2000;
    r.points.push(again);
    let t = render_ranks(&r, TextOptions::default());
    let second = &t[t.find(", repeat 2):").expect(&t)..];
    assert!(second.contains("(2000 ops, 0 errors)"), "{t}");
    assert!(!t[..t.len() - second.len()].contains("2000 ops"), "{t}");
    r.points.pop();
    // Ranks that never ran at once have no common window.
    r.points[0].windows.as_mut().unwrap().common = window(3_000_000_000, 2_001_000_000, 0.0);
    let t = render_ranks(&r, TextOptions::default());
    assert!(
        t.contains("common window none: the ranks never all ran at once"),
        "{t}"
    );
}
