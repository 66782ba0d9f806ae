//! Every page type, rendered from fixed results, keeps each text of each
//! plot inside its SVG (no clipped last tick label, no y label past the
//! left edge), apart from the texts beside it on its line (tick labels),
//! and writes none smaller than the minimum font size: at the page's
//! default width a plot is drawn at its own size, one unit a pixel.
//! Text extents are taken conservatively (see `text_width`); the Chromium
//! test measures the same in the browser.

use iosurvey_report::html::{text_width, MIN_FONT_PX};
use iosurvey_report::render_html;

/// The inline SVG documents of a page.
fn svgs(page: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").expect("every svg is closed") + i + 6;
        out.push(&rest[i..end]);
        rest = &rest[end..];
    }
    out
}

fn num(s: &str) -> f64 {
    s.trim_end_matches("px").trim().parse().unwrap_or(0.0)
}

/// A length in em or ex of a font of `px`, or in px.
fn length(s: &str, px: f64) -> f64 {
    if let Some(v) = s.strip_suffix("em") {
        num(v) * px
    } else if let Some(v) = s.strip_suffix("ex") {
        num(v) * px * 0.5
    } else {
        num(s)
    }
}

/// The corners of the box a `<text>` covers, in the SVG's units: its
/// width from [`text_width`], from 0.8 em above the baseline to 0.25 em
/// below, turned by its `rotate(a, cx, cy)` if it has one.
fn extent(n: &roxmltree::Node<'_, '_>) -> Vec<(f64, f64)> {
    let px = num(n.attribute("font-size").unwrap_or("16"));
    let t = n.text().unwrap_or_default().trim();
    let w = text_width(t, px);
    let x = num(n.attribute("x").unwrap_or("0"));
    let y = num(n.attribute("y").unwrap_or("0")) + length(n.attribute("dy").unwrap_or("0"), px);
    let left = match n.attribute("text-anchor").unwrap_or("start") {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    let (top, bottom) = match n.attribute("dominant-baseline") {
        Some("middle" | "central") => (y - 0.55 * px, y + 0.55 * px),
        Some("hanging" | "text-before-edge") => (y, y + 1.05 * px),
        _ => (y - 0.8 * px, y + 0.25 * px),
    };
    let mut corners = vec![
        (left, top),
        (left + w, top),
        (left, bottom),
        (left + w, bottom),
    ];
    if let Some(r) = n
        .attribute("transform")
        .and_then(|t| t.strip_prefix("rotate("))
    {
        let a: Vec<f64> = r
            .trim_end_matches(')')
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(num)
            .collect();
        let (deg, cx, cy) = (a[0], *a.get(1).unwrap_or(&0.0), *a.get(2).unwrap_or(&0.0));
        let (sin, cos) = deg.to_radians().sin_cos();
        for c in &mut corners {
            let (dx, dy) = (c.0 - cx, c.1 - cy);
            *c = (cx + dx * cos - dy * sin, cy + dx * sin + dy * cos);
        }
    }
    corners
}

/// What of `svg` does not fit: each text past its edges or smaller than
/// the minimum size.
fn misfits(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}"));
    let root = doc.root_element();
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .expect("a viewBox")
        .split_whitespace()
        .map(num)
        .collect();
    let mut out = Vec::new();
    // Texts on one line (one baseline, not turned) must not overlap: tick
    // labels side by side.
    let mut rows: Vec<(f64, f64, f64, String)> = Vec::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let t = n.text().unwrap_or_default().trim();
        if t.is_empty() || n.attribute("transform").is_some() {
            continue;
        }
        let c = extent(&n);
        rows.push((c[2].1, c[0].0, c[1].0, t.to_string()));
    }
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if (a.0 - b.0).abs() < 1.0 && a.1 < b.2 - 0.5 && b.1 < a.2 - 0.5 {
                out.push(format!("{:?} and {:?} overlap", a.3, b.3));
            }
        }
    }
    for n in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let t = n.text().unwrap_or_default().trim();
        if t.is_empty() {
            continue;
        }
        let px = num(n.attribute("font-size").unwrap_or("16"));
        if px < MIN_FONT_PX {
            out.push(format!("{t:?} at {px}px"));
        }
        for (x, y) in extent(&n) {
            if x < vb[0] - 0.5
                || x > vb[0] + vb[2] + 0.5
                || y < vb[1] - 0.5
                || y > vb[1] + vb[3] + 0.5
            {
                out.push(format!("{t:?} reaches ({x:.0}, {y:.0}), outside {vb:?}"));
                break;
            }
        }
    }
    out
}

/// Every page type, from the fixed reports the other tests use.
fn pages() -> Vec<(&'static str, String)> {
    let compared = iosurvey_report::compare::compare(
        &["a.json".into(), "b.json".into()],
        &[
            crate::compare::run(&[100, 102, 101, 99], 40_000),
            crate::compare::run(&[80, 81, 79, 82], 50_000),
        ],
    )
    .unwrap();
    vec![
        ("run", render_html(&crate::html_one_workload::report())),
        (
            "quick",
            render_html(&crate::html_quick_card::quick_report(
                &crate::html_quick_card::CARD,
            )),
        ),
        (
            "diskperf",
            render_html(&crate::html_diskperf_parallel_survey::diskperf_report(true)),
        ),
        (
            "parallel",
            render_html(&crate::html_diskperf_parallel_survey::parallel_report()),
        ),
        (
            "survey",
            render_html(&crate::html_diskperf_parallel_survey::survey_report()),
        ),
        (
            "matrix",
            render_html(&crate::html_matrix_profile_video::matrix_report()),
        ),
        (
            "profile",
            render_html(&crate::html_matrix_profile_video::profile_report()),
        ),
        (
            "video paced",
            render_html(&crate::html_matrix_profile_video::paced()),
        ),
        (
            "video unpaced",
            render_html(&crate::html_matrix_profile_video::unpaced()),
        ),
        (
            "compare",
            iosurvey_report::compare::render_compare_html(&compared),
        ),
    ]
}

#[test]
fn every_text_of_every_plot_of_every_page_fits_its_svg_at_a_readable_size() {
    let mut bad = Vec::new();
    for (page_type, page) in pages() {
        let found = svgs(&page);
        assert!(!found.is_empty(), "{page_type}: no plot");
        for (i, svg) in found.iter().enumerate() {
            for m in misfits(svg) {
                bad.push(format!("{page_type} plot {i}: {m}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_text_past_the_edge_or_too_small_is_found() {
    let svg = "<svg viewBox=\"0 0 100 50\" xmlns=\"http://www.w3.org/2000/svg\">\
               <text x=\"90\" y=\"20\" font-size=\"12\">1000</text>\
               <text x=\"10\" y=\"40\" font-size=\"9\">a</text>\
               <text x=\"95\" y=\"20\" font-size=\"12\" text-anchor=\"end\">ok</text></svg>";
    let m = misfits(svg);
    assert_eq!(
        m,
        [
            "\"1000\" and \"ok\" overlap",
            "\"1000\" reaches (120, 10), outside [0.0, 0.0, 100.0, 50.0]",
            "\"a\" at 9px"
        ]
    );
    // Turned a quarter round its anchor: a y axis title reaches down.
    let turned = "<svg viewBox=\"0 0 100 50\" xmlns=\"http://www.w3.org/2000/svg\">\
                  <text x=\"20\" y=\"40\" font-size=\"12\" transform=\"rotate(90, 20, 40)\">abcdef</text></svg>";
    assert_eq!(misfits(turned).len(), 1);
}
