//! The `quick` page leads with the card as bars: one per test of the card
//! and direction, as long as its MB/s, labelled with its name and its
//! MB/s and IOPS, whatever tests the card's profile holds.

use crate::fixtures::{blank_point, run_report};
use iosurvey_model::document::{ClassReport, PointReport, RunReport, StreamTotals};
use iosurvey_model::{Op, PointParams};
use iosurvey_report::render_html;
use iosurvey_stats::ClassStats;

const SEC: u64 = 1_000_000_000;

/// A quick point of `test` and `op` that did `ops` I/Os of `bs` in 1 s.
fn point(index: usize, test: &str, op: Op, ops: u64, bs: u64) -> PointReport {
    let mut c = ClassStats::new();
    for i in 0..ops {
        c.record(0, bs, 20_000 + i % 50);
    }
    let done = ClassReport::new(&c, SEC);
    let idle = ClassReport::new(&ClassStats::new(), SEC);
    let (read, write) = match op {
        Op::Read => (done, idle),
        Op::Write | Op::Trim => (idle, done),
    };
    PointReport {
        index,
        label: format!("{test} {op}"),
        params: PointParams::Quick {
            test: test.into(),
            op,
        },
        total: StreamTotals {
            read,
            write,
            whole: false,
            trim: ClassReport::idle(),
        },
        ..blank_point(SEC)
    }
}

/// A card of `tests` (name, I/Os a second read and written, I/O size).
pub(crate) fn quick_report(tests: &[(&str, u64, u64, u64)]) -> RunReport {
    let mut points = Vec::new();
    for (name, reads, writes, bs) in tests {
        points.push(point(points.len(), name, Op::Read, *reads, *bs));
        points.push(point(points.len(), name, Op::Write, *writes, *bs));
    }
    run_report("quick", points)
}

pub(crate) const CARD: [(&str, u64, u64, u64); 4] = [
    ("SEQ1M Q8T1", 2000, 1500, 1 << 20),
    ("SEQ1M Q1T1", 1000, 900, 1 << 20),
    ("RND4K Q32T16", 60_000, 40_000, 4096),
    ("RND4K Q1T1", 10_000, 8_000, 4096),
];

/// The bars of an SVG: (tooltip, width) of each `<g>` holding a `<rect>`.
fn bars(svg: &str) -> Vec<(String, f64, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("g"))
        .filter_map(|g| {
            let tip = g.children().find(|n| n.has_tag_name("title"))?;
            let rect = g.children().find(|n| n.has_tag_name("rect"))?;
            let label = g.children().find(|n| n.has_tag_name("text"))?;
            Some((
                tip.text().unwrap_or_default().to_string(),
                rect.attribute("width")?.parse().ok()?,
                label.text().unwrap_or_default().to_string(),
            ))
        })
        .collect()
}

fn first_svg(page: &str) -> &str {
    let start = page.find("<svg").expect("a plot");
    let end = page[start..].find("</svg>").unwrap() + start + 6;
    &page[start..end]
}

#[test]
fn the_quick_page_leads_with_the_card_as_bars() {
    let page = render_html(&quick_report(&CARD));
    let card = first_svg(&page);
    assert!(card.contains("The card"), "the card leads: {card}");
    let bars = bars(card);
    assert_eq!(bars.len(), 8, "a bar per test and direction: {bars:?}");
    for (name, ..) in CARD {
        let text = format!(">{name}</text>");
        assert!(card.contains(&text), "{name} names its row");
    }
    let bar = |tip: &str| {
        bars.iter()
            .find(|b| b.0.starts_with(tip))
            .unwrap_or_else(|| panic!("no bar {tip}: {bars:?}"))
    };
    // 2,000 reads of 1 MiB a second: 2097.15 MB/s, the longest bar.
    let top = bar("SEQ1M Q8T1 read: 2097.15 MB/s, 2000 IOPS");
    assert_eq!(top.2, "2097.15 MB/s, 2000 IOPS", "its label");
    // Each bar as long as its MB/s, against the longest.
    let half = bar("SEQ1M Q1T1 read: 1048.58 MB/s");
    assert!((half.1 / top.1 - 0.5).abs() < 0.01, "{} {}", half.1, top.1);
    let rnd = bar("RND4K Q1T1 write: 32.77 MB/s, 8000 IOPS");
    assert!((rnd.1 / top.1 - 32.768 / 2097.152).abs() < 0.01);
    // The tooltip adds the latency.
    assert!(top.0.contains("p99 20.0"), "{}", top.0);
    // Read bars in the first colour, write bars in the second.
    assert!(card.contains("fill=\"#0072B2\"") && card.contains("fill=\"#D55E00\""));
}

#[test]
fn the_card_draws_whatever_tests_its_profile_has() {
    let other = [
        ("SEQ128K Q32T1", 3000, 2000, 128 << 10),
        ("RND4K Q32T16", 90_000, 70_000, 4096),
    ];
    let page = render_html(&quick_report(&other));
    let bars = bars(first_svg(&page));
    assert_eq!(bars.len(), 4);
    assert!(bars[0].0.starts_with("SEQ128K Q32T1 read"), "{bars:?}");
    assert!(bars[3].0.starts_with("RND4K Q32T16 write"), "{bars:?}");
    // No card in a mode that has none.
    let page = render_html(&crate::html_one_workload::report());
    assert!(!page.contains("The card"));
}
