//! `--html` on every mode, from real runs on devices this test makes (zram)
//! or its own temporary directories, each page then loaded in a headless
//! Chromium: the browser must find the plots in the page, draw them (the
//! screenshot is not blank), and report no console error. Every SVG also
//! parses as XML. `UPDATE_SCREENSHOTS=1` writes each mode's first plot, as
//! the browser draws it, to `docs/html-MODE.png` (the README shows them).

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// The `<svg>` documents of a page.
fn svgs(page: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").expect("an svg not closed") + i + 6;
        out.push(&rest[i..end]);
        rest = &rest[end..];
    }
    out
}

/// The first series' colour (every chart with data draws its first series
/// in it).
const FIRST_SERIES: [&str; 2] = ["stroke=\"#0072B2\"", "fill=\"#0072B2\""];

fn chromium(args: &[&str]) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(args)
        .output()
        .expect("running chromium")
}

/// Pixels of a PNG that are not white, and its distinct colours.
fn ink(png_path: &Path) -> (usize, usize, usize) {
    let dec = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0;
    for p in data.chunks(px) {
        let rgb = (p[0], p[1], p[2]);
        colours.insert(rgb);
        if rgb != (255, 255, 255) {
            inked += 1;
        }
    }
    (inked, data.len() / px, colours.len())
}

/// Measures, in Chromium at 1280 px wide (the page at its default width,
/// 100% zoom), every text of every plot of `page`: its box as drawn must
/// lie inside its SVG's viewBox, and its font be at least 12 px. A copy of
/// the page with a script that writes what it finds into the DOM is
/// loaded with `--dump-dom` (the page itself runs no script). Gives the
/// count of texts measured and what does not fit.
fn misfits_in_the_browser(mode: &str, page_path: &Path) -> (usize, Vec<String>) {
    const MEASURE: &str = r#"<script>
const out = [];
document.querySelectorAll('svg').forEach((svg, i) => {
  const vb = svg.viewBox.baseVal, s = svg.getBoundingClientRect();
  const scale = s.width / vb.width;
  svg.querySelectorAll('text').forEach(t => {
    const what = t.textContent.trim();
    if (!what) return;
    const r = t.getBoundingClientRect();
    const x0 = (r.left - s.left) / scale, x1 = (r.right - s.left) / scale;
    const y0 = (r.top - s.top) / scale, y1 = (r.bottom - s.top) / scale;
    if (x0 < -0.5 || y0 < -0.5 || x1 > vb.width + 0.5 || y1 > vb.height + 0.5)
      out.push(`plot ${i}: "${what}" drawn over [${x0.toFixed(1)}, ${y0.toFixed(1)}, ${x1.toFixed(1)}, ${y1.toFixed(1)}], outside ${vb.width} x ${vb.height}`);
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < 11.95) out.push(`plot ${i}: "${what}" at ${px.toFixed(2)} px`);
  });
});
const pre = document.createElement('pre');
pre.textContent = 'FIT[' + document.querySelectorAll('svg text').length + ']' + JSON.stringify(out) + 'END';
document.body.appendChild(pre);
</script>"#;
    let page = std::fs::read_to_string(page_path).unwrap();
    let at = page.rfind("</body>").expect("a body");
    let probe = page_path.with_extension("fit.html");
    std::fs::write(&probe, format!("{}{MEASURE}{}", &page[..at], &page[at..])).unwrap();
    let dom = chromium(&[
        "--window-size=1280,1000",
        "--dump-dom",
        &format!("file://{}", probe.display()),
    ]);
    assert!(dom.status.success(), "{mode}: chromium");
    let text = String::from_utf8_lossy(&dom.stdout);
    // The last: the script itself spells it too.
    let start = text
        .rfind("FIT[")
        .unwrap_or_else(|| panic!("{mode}: the probe did not run"));
    let end = text[start..].find("END").unwrap() + start;
    let (count, found) = text[start + 4..end].split_once(']').unwrap();
    let found = found
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let found: Vec<String> =
        serde_json::from_str(&found).unwrap_or_else(|e| panic!("{mode}: {e}: {found}"));
    (count.parse().unwrap(), found)
}

fn texts_fit_in_the_browser(mode: &str, page_path: &Path) {
    let (count, found) = misfits_in_the_browser(mode, page_path);
    assert!(count > 0, "{mode}: no text measured");
    assert!(found.is_empty(), "{mode}: {found:#?}");
}

#[test]
fn the_browser_finds_a_clipped_label_and_a_small_font() {
    need!(require_tool("chromium"));
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><svg width=\"200\" height=\"100\" viewBox=\"0 0 200 100\" \
         xmlns=\"http://www.w3.org/2000/svg\"><text x=\"180\" y=\"50\" font-size=\"14\">100.00µs</text>\
         <text x=\"10\" y=\"80\" font-size=\"9\">small</text>\
         <text x=\"10\" y=\"30\" font-size=\"14\">fits</text></svg></body></html>",
    )
    .unwrap();
    let (count, found) = misfits_in_the_browser("probe", &page);
    assert_eq!(count, 3);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("\"100.00µs\" drawn over"), "{found:?}");
    assert!(found[1].contains("\"small\" at 9.00 px"), "{found:?}");
}

/// Checks the page a run wrote: at least `plots` SVGs, each XML with its
/// first series drawn, the same in the browser's DOM, no console error,
/// every text inside its plot at a readable size, and a screenshot that
/// shows something.
fn check_page(mode: &str, page_path: &Path, plots: usize) {
    texts_fit_in_the_browser(mode, page_path);
    let page = std::fs::read_to_string(page_path).unwrap();
    let found = svgs(&page);
    assert!(
        found.len() >= plots,
        "{mode}: {} plots, {plots} expected",
        found.len()
    );
    for svg in &found {
        roxmltree::Document::parse(svg)
            .unwrap_or_else(|e| panic!("{mode}: an SVG that is not XML: {e}"));
        assert!(
            FIRST_SERIES.iter().any(|c| svg.contains(c)),
            "{mode}: a plot with no data drawn"
        );
    }
    let url = format!("file://{}", page_path.display());
    let dom = chromium(&["--dump-dom", &url]);
    assert!(
        dom.status.success(),
        "{mode}: chromium: {}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let in_dom = svgs(&dom_text);
    assert_eq!(
        in_dom.len(),
        found.len(),
        "{mode}: the browser's DOM has another count of plots"
    );
    for svg in &in_dom {
        assert!(
            FIRST_SERIES.iter().any(|c| svg.contains(c)),
            "{mode}: a plot the browser has without data"
        );
    }
    let errors: Vec<&str> = std::str::from_utf8(&dom.stderr)
        .unwrap_or("")
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .collect();
    assert!(errors.is_empty(), "{mode}: console messages: {errors:?}");

    let dir = page_path.parent().unwrap();
    let shot = dir.join(format!("{mode}.png"));
    let out = chromium(&[
        "--window-size=1100,2400",
        &format!("--screenshot={}", shot.display()),
        &url,
    ]);
    assert!(
        out.status.success(),
        "{mode}: screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (inked, all, colours) = ink(&shot);
    assert!(
        inked * 50 > all,
        "{mode}: the screenshot is nearly blank ({inked} of {all} pixels)"
    );
    assert!(colours >= 4, "{mode}: the screenshot has {colours} colours");

    // The mode's first plot alone, as the browser draws it.
    plot_alone(mode, dir, found[0]);
}

/// `svg` alone, as the browser draws it at its own size: not blank, and
/// with `UPDATE_SCREENSHOTS` set, written to `docs/html-NAME.png`.
fn plot_alone(name: &str, dir: &Path, svg: &str) {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let size = |a: &str| -> u32 {
        doc.root_element()
            .attribute(a)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: an SVG without its {a}"))
    };
    let (w, h) = (size("width"), size("height"));
    let page = dir.join(format!("{name}-plot.html"));
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body style=\"margin:0\">{svg}</body></html>"),
    )
    .unwrap();
    let plot_png = dir.join(format!("{name}-plot.png"));
    let out = chromium(&[
        &format!("--window-size={w},{h}"),
        &format!("--screenshot={}", plot_png.display()),
        &format!("file://{}", page.display()),
    ]);
    assert!(out.status.success());
    let (inked, all, _) = ink(&plot_png);
    assert!(
        inked * 20 > all,
        "{name}: the plot is nearly blank ({inked} of {all})"
    );
    if std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&plot_png, docs.join(format!("html-{name}.png"))).unwrap();
    }
}

/// The run page's latency per interval: p50 and p99 lines, each through
/// a point per interval, in the page and in the browser's DOM.
fn latency_over_time_drawn(page_path: &Path) {
    let page = std::fs::read_to_string(page_path).unwrap();
    let url = format!("file://{}", page_path.display());
    let dom = chromium(&["--dump-dom", &url]);
    let dom_text = String::from_utf8_lossy(&dom.stdout).into_owned();
    for (whose, text) in [("page", &page), ("DOM", &dom_text)] {
        let svg = svgs(text)
            .into_iter()
            .find(|s| s.contains("Latency per interval"))
            .unwrap_or_else(|| panic!("{whose}: no latency per interval plot"));
        let doc = roxmltree::Document::parse(svg).unwrap();
        let lines: Vec<usize> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| {
                n.attribute("points")
                    .unwrap_or("")
                    .split_whitespace()
                    .count()
            })
            .collect();
        assert!(
            lines.iter().filter(|&&n| n >= 2).count() >= 2,
            "{whose}: a p50 and a p99 line through the intervals: {lines:?}"
        );
        assert!(
            svg.contains("read p50") && svg.contains("read p99"),
            "{whose}: the legend"
        );
    }
}

/// Runs iosurvey `args` with `--html` into `dir`, and checks the page.
fn run_and_check(mode: &str, dir: &Path, args: &[&str], plots: usize) {
    let page = dir.join(format!("{mode}.html"));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--html", path_str(&page), "--quiet"]);
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(&all)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{mode}: {}", describe(&out));
    check_page(mode, &page, plots);
}

fn filled_zram() -> Result<Zram, String> {
    let z = Zram::new(64 * MIB)?;
    sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", z.path().display()),
            "bs=1M",
            "count=64",
            "oflag=direct",
            "status=none",
        ],
    )?;
    Ok(z)
}

#[test]
fn every_mode_writes_a_page_the_browser_draws() {
    need!(require_root_and(&["chromium", "dd"]));
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let z = need!(filled_zram());
    let z2 = need!(filled_zram());
    let (a, b) = (path_str(z.path()), path_str(z2.path()));
    run_and_check(
        "run",
        d,
        &[
            "run", a, "--rw", "randread", "--bs", "4k", "--qd", "8", "--time", "2s",
        ],
        // Percentiles, MB/s, IOPS and latency per interval, the histogram
        // twice.
        6,
    );
    latency_over_time_drawn(&d.join("run.html"));
    run_and_check(
        "quick",
        d,
        &["quick", "--size", "16m", "--time", "300ms", "--ramp", "0s"],
        // The card's bars, the percentiles and the histogram twice; its
        // points are shorter than an interval: no rate over time.
        4,
    );
    run_and_check(
        "diskperf",
        d,
        &[
            "diskperf", a, "--time", "300ms", "--min", "4k", "--max", "64k", "--fps", "24",
        ],
        // MB/s, and the multiple of real time at 24 fps.
        2,
    );
    run_and_check(
        "parallel",
        d,
        &["parallel", a, b, "--time", "500ms", "--scale"],
        2,
    );
    run_and_check(
        "survey",
        d,
        &[
            "survey",
            a,
            "--size",
            "16m",
            "--crghi",
            "2",
            "--thrhi",
            "4",
            "--allow-destroy",
        ],
        2,
    );
    let mx = d.join("orion");
    std::fs::create_dir(&mx).unwrap();
    run_and_check(
        "matrix",
        d,
        &[
            "matrix",
            a,
            "--run",
            "simple",
            "--size-large",
            "128k",
            "--duration",
            "500ms",
            "--out",
            path_str(&mx),
        ],
        // Three plots and three heatmaps.
        6,
    );
    // The first heatmap of the grid, drawn too.
    let page = std::fs::read_to_string(d.join("matrix.html")).unwrap();
    let heat = svgs(&page)
        .into_iter()
        .find(|s| s.contains("Small IOPS (reads + writes) by load"))
        .expect("the IOPS heatmap");
    plot_alone("matrix-heatmap", d, heat);
    let page = std::fs::read_to_string(d.join("diskperf.html")).unwrap();
    assert!(
        page.contains("x real time at 24 fps (4 KiB a frame"),
        "the fps chart"
    );
    run_and_check(
        "profile",
        d,
        &[
            "profile",
            a,
            "--zones",
            "5",
            "--per-zone",
            "1m",
            "--access-time",
            "--burst",
        ],
        // Rate by position, access percentiles, the access scatter, burst.
        4,
    );
    let frames = d.join("frames");
    std::fs::create_dir(&frames).unwrap();
    run_and_check(
        "video",
        d,
        &[
            "video",
            path_str(&frames),
            "--write",
            "--frame-size",
            "256k",
            "--frames",
            "30",
            "--mode",
            "files",
        ],
        2,
    );
}

#[test]
fn a_saved_report_gives_the_same_page_and_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = d.join("data");
    std::fs::write(&f, random_bytes(4 * MIB as usize, 7)).unwrap();
    let (json, page) = (d.join("r.json"), d.join("r.html"));
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--rw",
        "read",
        "--bs",
        "64k",
        "--time",
        "300ms",
        "--json",
        path_str(&json),
        "--html",
        path_str(&page),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let again = d.join("again.html");
    let out = iosurvey(&["report", path_str(&json), "--html", path_str(&again)]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        std::fs::read(&page).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // From the page itself (its embedded JSON), to stdout.
    let out = iosurvey(&["report", path_str(&page), "--html", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(out.stdout, std::fs::read(&page).unwrap());
    // Never over the report it reads, nor from what is not a report.
    let before = std::fs::read(&json).unwrap();
    for (args, says) in [
        (
            vec!["report", path_str(&json), "--html", path_str(&json)],
            "is the report being read",
        ),
        (
            vec!["report", path_str(&f), "--html", path_str(&again)],
            "not an iosurvey report",
        ),
        (
            vec!["report", path_str(d), "--html", path_str(&again)],
            "is a directory",
        ),
    ] {
        let out = iosurvey(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&json).unwrap(), before);
}

#[test]
fn report_never_writes_over_its_stdin_never_waits_on_a_fifo_and_refuses_newer_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = d.join("data");
    std::fs::write(&f, random_bytes(MIB as usize, 3)).unwrap();
    let json = d.join("r.json");
    let out = iosurvey(&[
        "run",
        path_str(&f),
        "--rw",
        "read",
        "--bs",
        "64k",
        "--time",
        "200ms",
        "--json",
        path_str(&json),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let before = std::fs::read(&json).unwrap();
    // Stdin is the report's file: the page may not replace it.
    let out = Command::new(BIN)
        .args(["report", "-", "--html", path_str(&json)])
        .stdin(std::fs::File::open(&json).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the report being read"));
    assert_eq!(std::fs::read(&json).unwrap(), before);
    // A FIFO with no writer: refused at once, not waited on.
    let fifo = d.join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        0o600.into(),
        0,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = iosurvey(&[
        "report",
        path_str(&fifo),
        "--html",
        path_str(&d.join("x.html")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // A report from a newer iosurvey: what it holds could be lost unseen.
    let mut v: serde_json::Value = serde_json::from_slice(&before).unwrap();
    v["schema_version"] = 999.into();
    let newer = d.join("newer.json");
    std::fs::write(&newer, v.to_string()).unwrap();
    let out = iosurvey(&[
        "report",
        path_str(&newer),
        "--html",
        path_str(&d.join("y.html")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("newer than this iosurvey"));
    assert!(!d.join("x.html").exists() && !d.join("y.html").exists());
}

#[test]
fn names_with_control_characters_keep_every_svg_xml() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (d.join("t<&\"'\x01\x1b.dat"), d.join("plain.dat"));
    for f in [&a, &b] {
        std::fs::write(f, random_bytes(2 * MIB as usize, 5)).unwrap();
    }
    let page = d.join("p.html");
    let out = iosurvey(&[
        "parallel",
        path_str(&a),
        path_str(&b),
        "--time",
        "300ms",
        "--scale",
        "--html",
        path_str(&page),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = std::fs::read_to_string(&page).unwrap();
    let found = svgs(&text);
    assert!(found.len() >= 2);
    for svg in found {
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}"));
    }
    assert!(
        text.contains("\\x01\\x1b.dat"),
        "the control characters shown, not dropped"
    );
}

#[test]
fn repeats_compared_tell_a_real_slowdown_and_fail_if_asked() {
    need!(require_root_and(&["dd", "chromium"]));
    let _g = serial();
    let z = need!(filled_zram());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (fast, slow) = (d.join("fast.json"), d.join("slow.json"));
    for (bs, qd, out) in [("128k", "4", &fast), ("4k", "1", &slow)] {
        let r = iosurvey(&[
            "run",
            path_str(z.path()),
            "--rw",
            "read",
            "--bs",
            bs,
            "--qd",
            qd,
            "--time",
            "300ms",
            "--repeat",
            "4",
            "--json",
            path_str(out),
            "--quiet",
        ]);
        assert_eq!(r.status.code(), Some(0), "{}", describe(&r));
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&fast).unwrap()).unwrap();
    assert_eq!(report["repeats"], 4);
    let repeats: Vec<u64> = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["repeat"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(repeats, [0, 1, 2, 3]);
    // 4 KiB at QD 1 against 128 KiB at QD 4 on zram: many times slower,
    // every repeat below every other: p = 2/70.
    let out = iosurvey(&[
        "compare",
        path_str(&fast),
        path_str(&slow),
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mb = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "MB/s")
        .unwrap();
    assert_eq!(mb["verdict"], "slower", "{mb}");
    assert!(mb["ratio"].as_f64().unwrap() < 0.5, "{mb}");
    assert!((mb["p_value"].as_f64().unwrap() - 2.0 / 70.0).abs() < 1e-9);
    let out = iosurvey(&[
        "compare",
        path_str(&fast),
        path_str(&slow),
        "--fail-if-slower",
        "20",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("slower"));
    // The other way round the rates are faster, but each I/O of 128 KiB
    // at QD 4 waits far longer than one of 4 KiB at QD 1: a significant
    // rise of latency, which counts as slower.
    let page = d.join("c.html");
    let out = iosurvey(&[
        "compare",
        path_str(&slow),
        path_str(&fast),
        "--html",
        path_str(&page),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // The ratio with its whisker, drawn; and what differs (bs, qd).
    check_page("compare", &page, 1);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<td>bs</td>") && html.contains("<td>qd</td>"));
    let out = iosurvey(&[
        "compare",
        path_str(&slow),
        path_str(&fast),
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    let mean = rows.iter().find(|r| r["metric"] == "mean latency").unwrap();
    assert_eq!(mean["verdict"], "slower", "{mean}");
    assert!(mean["ratio"].as_f64().unwrap() > 1.5, "{mean}");
    // The default gate judges the rate, which rose: it passes. Gated, the
    // mean latency alone (one test: 2/70 needs no more repeats) fails it.
    let out = iosurvey(&[
        "compare",
        path_str(&slow),
        path_str(&fast),
        "--fail-if-slower",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = iosurvey(&[
        "compare",
        path_str(&slow),
        path_str(&fast),
        "--fail-if-slower",
        "50",
        "--gate",
        "mean",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("significantly slower by more than 50%") && err.contains("mean latency"),
        "{err}"
    );
    // A run against itself: nothing differs, whatever the threshold.
    let out = iosurvey(&[
        "compare",
        path_str(&fast),
        path_str(&fast),
        "--fail-if-slower",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    for svg in svgs(&html) {
        roxmltree::Document::parse(svg).unwrap();
    }
    assert!(html.contains("faster"));
    // Never over a report it reads.
    let out = iosurvey(&[
        "compare",
        path_str(&fast),
        path_str(&slow),
        "--json",
        path_str(&slow),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}
