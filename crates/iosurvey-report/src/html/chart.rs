//! One chart as plain data (axes, series, marks) and its SVG, drawn with
//! plotters. Log axes are drawn in their logarithm on a linear axis, with
//! ticks at whole powers and labels in the axis's own units, so that every
//! kind of axis shares one drawing path. Each data point also gets an
//! invisible circle with an SVG `<title>`: the browser shows it as a
//! tooltip, with no script.

use super::chart_marks::{markers, whiskers};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write as _;

/// How an axis maps its values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Powers of two (request sizes).
    Log2,
    /// Powers of ten (latencies, outstanding I/Os).
    Log10,
    /// Percentiles on a "nines" axis: p90, p99, p99.9 equally spaced.
    Nines,
}

impl Scale {
    /// The value as drawn, `None` where the scale has no place for it.
    fn to_axis(self, v: f64) -> Option<f64> {
        let t = match self {
            Scale::Linear => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log10 if v > 0.0 => v.log10(),
            Scale::Nines if (0.0..100.0).contains(&v) => -(1.0 - v / 100.0).log10(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }

    fn value_at(self, t: f64) -> f64 {
        match self {
            Scale::Linear => t,
            Scale::Log2 => t.exp2(),
            Scale::Log10 => 10f64.powf(t),
            Scale::Nines => 100.0 * (1.0 - 10f64.powf(-t)),
        }
    }
}

/// One axis: its title (with the unit), its scale, and how a value is
/// written on a tick and in a tooltip.
pub struct Axis {
    pub title: String,
    pub scale: Scale,
    pub fmt: fn(f64) -> String,
    /// Start a linear axis at zero (rates, counts).
    pub from_zero: bool,
}

impl Axis {
    pub fn new(title: impl Into<String>, scale: Scale, fmt: fn(f64) -> String) -> Axis {
        Axis {
            title: title.into(),
            scale,
            fmt,
            from_zero: scale == Scale::Linear,
        }
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Style {
    /// A line through the points, with a marker on each.
    Line,
    /// A line only (for curves of many points).
    Curve,
    /// Markers only.
    Points,
    /// A bar from zero to each point (x is a category index).
    Bars,
}

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
    /// A tooltip per point; the default says the series, x and y.
    pub tips: Option<Vec<String>>,
    /// An interval per point (low, high), drawn as a whisker through it;
    /// `None` where the point has none.
    pub whiskers: Vec<Option<(f64, f64)>>,
}

impl Series {
    pub fn new(name: impl Into<String>, style: Style, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            style,
            tips: None,
            whiskers: Vec::new(),
        }
    }
}

/// A shaded band between two curves (say, the slowest and fastest of
/// several runs), drawn under the series.
pub struct Band {
    pub name: String,
    /// (x, low, high), ascending in x.
    pub points: Vec<(f64, f64, f64)>,
}

pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Horizontal lines across the chart (a deadline, a target), named.
    pub hlines: Vec<(f64, String)>,
    /// Names for the ticks of a categorical x axis (bars): tick `i` is
    /// `categories[i]`.
    pub categories: Vec<String>,
}

impl Chart {
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Chart {
        Chart {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            hlines: Vec::new(),
            categories: Vec::new(),
        }
    }

    /// Whether it has a point to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

/// Colours that stay apart for colour-blind readers (Okabe and Ito), in
/// the order series take them; each series also has its own marker, so
/// that a grey print still tells them apart.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermilion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 420;

/// Font sizes as plotters takes them: it writes each as 1/1.24 of this in
/// the SVG, so that 15 is drawn at 12.1 px (the least, see
/// [`super::text_size::MIN_FONT_PX`]), 16 at 12.9 and 20 at 16.1.
const LABEL_FONT: f64 = 15.0;
const AXIS_FONT: f64 = 16.0;
const TITLE_FONT: f64 = 20.0;
/// The right margin: half of the widest last x tick label (`100.00µs`,
/// `p99.999`) at [`LABEL_FONT`], and a little.
const RIGHT_MARGIN: u32 = 44;

/// The chart as an SVG document of [`WIDTH`] × [`HEIGHT`].
pub fn svg(chart: &Chart) -> String {
    let mut out = String::new();
    let mut tips = String::new();
    {
        let height = HEIGHT + turned_labels(chart);
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        // A chart that fails to draw (plotters refuses an empty range)
        // leaves its frame and title: the page still says what is missing.
        if draw(&root, chart, &mut tips).is_err() {
            let _ = root.titled(&clean(&chart.title), ("sans-serif", TITLE_FONT));
        }
        let _ = root.present();
    }
    match out.rfind("</svg>") {
        Some(end) => out.insert_str(end, &tips),
        None => out.push_str(&tips),
    }
    out
}

/// The x label area's height and the plot's left edge, as drawn.
const X_LABELS: u32 = 48;
const Y_LABELS: u32 = 78;
const MARGIN: u32 = 12;

/// The drawn size of a category's name on the x axis, in px.
const LABEL_PX: f64 = LABEL_FONT / 1.24;

/// The longest a name turned upright is drawn, in px; a longer one is
/// cut short with `…` (its tooltip has it whole).
const TURNED_MAX: f64 = 220.0;

/// `name` cut to be drawn in at most [`TURNED_MAX`].
fn shortened(name: &str) -> String {
    let width = |s: &str| super::text_size::text_width(s, LABEL_PX);
    if width(name) <= TURNED_MAX {
        return name.to_string();
    }
    let mut out = String::new();
    for c in name.chars() {
        out.push(c);
        if width(&out) + width("…") > TURNED_MAX {
            out.pop();
            break;
        }
    }
    out.push('…');
    out
}

/// Extra height for the names of a categorical x axis turned upright,
/// when side by side they would overlap: the widest's length, at most
/// [`TURNED_MAX`] (0 when they fit side by side, and on other axes).
fn turned_labels(chart: &Chart) -> u32 {
    if chart.categories.is_empty() {
        return 0;
    }
    let plot = f64::from(WIDTH - MARGIN - RIGHT_MARGIN - Y_LABELS);
    let slot = plot / (chart.categories.len() as f64 + 0.2);
    let widest = chart
        .categories
        .iter()
        .map(|c| super::text_size::text_width(&clean(c), LABEL_PX))
        .fold(0.0, f64::max);
    if widest + 8.0 <= slot {
        0
    } else {
        widest.min(TURNED_MAX).ceil() as u32
    }
}

/// The drawn range of an axis over `values` (already on the axis): whole
/// powers for log axes, zero-based for rates, and never empty.
/// `top` is the share of the span left free above the data (for the
/// legend); 0 on the x axis.
fn range(
    axis: &Axis,
    values: impl Iterator<Item = f64>,
    categorical: bool,
    top: f64,
) -> (f64, f64) {
    // Values too large to draw (say, a period of 1e300 ms) are left out:
    // plotters cannot place ticks on an endless range.
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite() && v.abs() < 1e100)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if categorical {
        return (lo - 0.6, hi + 0.6);
    }
    match axis.scale {
        Scale::Linear => {
            if axis.from_zero {
                lo = lo.min(0.0);
            }
            let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
            let low = if axis.from_zero && lo >= 0.0 {
                0.0
            } else {
                lo - span * 0.05
            };
            (low, hi + span * top.max(0.03))
        }
        Scale::Nines => (0.0, hi.ceil().max(1.0)),
        Scale::Log2 | Scale::Log10 => {
            let (a, b) = (lo.floor(), hi.ceil());
            if a == b {
                (a - 0.5, b + 0.5)
            } else {
                (a, b)
            }
        }
    }
}

/// Ticks for an axis of `(lo, hi)`: every whole power on a log or nines
/// axis, thinned to at most about 12.
fn tick_count(axis: &Axis, (lo, hi): (f64, f64)) -> usize {
    match axis.scale {
        Scale::Linear => 8,
        _ => {
            let whole = (hi - lo).round().max(1.0) as usize + 1;
            if whole <= 13 {
                whole
            } else {
                whole.div_ceil(whole.div_ceil(12))
            }
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    tips: &mut String,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let categorical = !chart.categories.is_empty();
    let on_x = |v: f64| chart.x.scale.to_axis(v);
    let on_y = |v: f64| chart.y.scale.to_axis(v);
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(
            chart
                .bands
                .iter()
                .flat_map(|b| b.points.iter().map(|p| p.0)),
        )
        .filter_map(on_x);
    let bars = chart.series.iter().any(|s| s.style == Style::Bars);
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(
            chart
                .series
                .iter()
                .flat_map(|s| s.whiskers.iter().flatten().flat_map(|w| [w.0, w.1])),
        )
        .chain(
            chart
                .bands
                .iter()
                .flat_map(|b| b.points.iter().flat_map(|p| [p.1, p.2])),
        )
        .chain(chart.hlines.iter().map(|h| h.0))
        .chain(bars.then_some(0.0))
        .filter_map(on_y);
    // Room above the data for the legend, which sits at the top right: a
    // line of it per entry.
    let entries = chart.series.len() + chart.hlines.len() + chart.bands.len();
    let legend = entries > 1 || !chart.hlines.is_empty();
    let top = if legend {
        0.1 + 0.07 * entries as f64
    } else {
        0.05
    };
    let xr = range(&chart.x, xs, categorical, 0.0);
    // Names of categories too long to stand side by side are drawn
    // upright, below the axis, by hand (plotters centres every x label on
    // its tick, so that a turned one would reach into the plot).
    let turned = turned_labels(chart);
    let yr = range(&chart.y, ys, false, top);
    let mut cc = ChartBuilder::on(root)
        .caption(clean(&chart.title), ("sans-serif", TITLE_FONT))
        .margin(MARGIN)
        // Room for half the last x tick label, centred on the axis's end.
        .margin_right(RIGHT_MARGIN)
        .x_label_area_size(X_LABELS + turned)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)?;
    let (xs, ys) = (chart.x.scale, chart.y.scale);
    let (xf, yf) = (chart.x.fmt, chart.y.fmt);
    let cats = &chart.categories;
    let x_label = |t: &f64| -> String {
        if turned > 0 {
            return String::new();
        }
        if categorical {
            let i = t.round();
            if (t - i).abs() < 1e-6 && i >= 0.0 {
                return cats
                    .get(i as usize)
                    .map(|c| clean(c).into_owned())
                    .unwrap_or_default();
            }
            return String::new();
        }
        xf(xs.value_at(*t))
    };
    let y_label = |t: &f64| yf(ys.value_at(*t));
    let x_ticks = if categorical {
        cats.len().max(1) + 1
    } else {
        tick_count(&chart.x, xr)
    };
    cc.configure_mesh()
        .x_desc(clean(&chart.x.title))
        .y_desc(clean(&chart.y.title))
        .x_labels(x_ticks)
        .y_labels(tick_count(&chart.y, yr))
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .light_line_style(RGBColor(235, 235, 235))
        .label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", AXIS_FONT))
        .draw()?;
    if turned > 0 {
        for (i, name) in cats.iter().enumerate() {
            let (px, py) = cc.backend_coord(&(i as f64, yr.0));
            let y = py + 8;
            let _ = writeln!(
                tips,
                "<text x=\"{px}\" y=\"{y}\" dy=\"0.35em\" text-anchor=\"end\" font-family=\"sans-serif\" font-size=\"{LABEL_PX:.2}\" fill=\"#000000\" transform=\"rotate(-90, {px}, {y})\">{}<title>{}</title></text>",
                escape(&shortened(name)),
                escape(name)
            );
        }
    }

    for (k, band) in chart.bands.iter().enumerate() {
        let c = PALETTE[k % PALETTE.len()];
        let upper = band
            .points
            .iter()
            .filter_map(|&(x, _, hi)| Some((on_x(x)?, on_y(hi)?)));
        let lower = band
            .points
            .iter()
            .rev()
            .filter_map(|&(x, lo, _)| Some((on_x(x)?, on_y(lo)?)));
        let outline: Vec<(f64, f64)> = upper.chain(lower).collect();
        if outline.len() >= 3 {
            cc.draw_series(std::iter::once(Polygon::new(outline, c.mix(0.15).filled())))?
                .label(clean(&band.name))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 18, y + 5)], c.mix(0.15).filled())
                });
        }
    }
    let n_bar_series = chart
        .series
        .iter()
        .filter(|s| s.style == Style::Bars)
        .count()
        .max(1);
    let mut bar_k = 0usize;
    // The centre of the last bar series' bars, from their category's.
    let mut bar_at = 0.0;
    for (k, s) in chart.series.iter().enumerate() {
        let c = PALETTE[k % PALETTE.len()];
        let pts: Vec<(f64, f64, usize)> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, &(x, y))| Some((on_x(x)?, on_y(y)?, i)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let line = c.stroke_width(2);
        let marker = k % 4;
        whiskers(&mut cc, &s.points, &s.whiskers, c, on_x, on_y)?;
        let anno = match s.style {
            Style::Line | Style::Curve => {
                if s.style == Style::Line {
                    markers(&mut cc, &pts, marker, c)?;
                }
                cc.draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), line))?
            }
            Style::Points => {
                markers(&mut cc, &pts, marker, c)?;
                // The legend entry: an empty series that carries it.
                cc.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
            }
            Style::Bars => {
                let w = 0.7 / n_bar_series as f64;
                let off = -0.35 + w * bar_k as f64;
                bar_k += 1;
                bar_at = off + w / 2.0;
                let base = yr.0.max(on_y(0.0).unwrap_or(yr.0));
                cc.draw_series(pts.iter().map(|p| {
                    Rectangle::new([(p.0 + off, base), (p.0 + off + w, p.1)], c.filled())
                }))?
            }
        };
        anno.label(clean(&s.name))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
        // A bar's tooltip sits on the bar, beside the category's centre.
        let shift = match s.style {
            Style::Bars => bar_at,
            _ => 0.0,
        };
        for &(x, y, i) in &pts {
            let (px, py) = cc.backend_coord(&(x + shift, y));
            let text = match &s.tips {
                Some(t) => t.get(i).cloned().unwrap_or_default(),
                None => {
                    let (vx, vy) = s.points[i];
                    let xs = if categorical {
                        cats.get(vx.round() as usize).cloned().unwrap_or_default()
                    } else {
                        xf(vx)
                    };
                    format!(
                        "{}: {} {}, {} {}",
                        s.name,
                        chart.x.title,
                        xs,
                        chart.y.title,
                        yf(vy)
                    )
                }
            };
            let _ = writeln!(
                tips,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"6\" fill=\"#000\" fill-opacity=\"0\"><title>{}</title></circle>",
                escape(&text)
            );
        }
    }
    for (k, (v, name)) in chart.hlines.iter().enumerate() {
        let Some(t) = on_y(*v) else { continue };
        let c = PALETTE[(chart.series.len() + k) % PALETTE.len()];
        cc.draw_series(DashedLineSeries::new(
            [(xr.0, t), (xr.1, t)],
            8,
            5,
            c.stroke_width(2),
        ))?
        .label(clean(&format!("{name} ({})", yf(*v))))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    if legend {
        cc.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font(("sans-serif", LABEL_FONT))
            .draw()?;
    }
    Ok(())
}

/// Text for HTML or XML: the five characters that mean something there.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in clean(s).chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// `s` with the characters XML cannot hold (controls other than tab, line
/// feed and carriage return) shown as `\xNN`: a name of a file may have
/// them, and the SVG must stay XML.
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
            || c == '\u{7f}'
            || c == '\u{fffe}'
            || c == '\u{ffff}'
    };
    if !s.chars().any(bad) {
        return s.into();
    }
    s.chars()
        .map(|c| {
            if bad(c) {
                format!("\\x{:02x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_put_each_nine_one_step_further() {
        let at = |p| Scale::Nines.to_axis(p).unwrap();
        assert!((at(90.0) - 1.0).abs() < 1e-9);
        assert!((at(99.0) - 2.0).abs() < 1e-9);
        assert!((at(99.999) - 5.0).abs() < 1e-6);
        assert!((Scale::Nines.value_at(3.0) - 99.9).abs() < 1e-9);
        assert_eq!(
            Scale::Nines.to_axis(100.0),
            None,
            "the maximum has no place"
        );
        assert_eq!(Scale::Log2.to_axis(0.0), None);
        assert_eq!(Scale::Log2.to_axis(4096.0), Some(12.0));
    }

    #[test]
    fn names_too_long_for_their_place_are_turned_upright_and_cut_short() {
        let mut c = Chart::new(
            "t",
            Axis::new("x", Scale::Linear, |v| v.to_string()),
            Axis::new("y", Scale::Linear, |v| v.to_string()),
        );
        c.categories = vec!["a".into(), "b".into()];
        c.series
            .push(Series::new("s", Style::Bars, vec![(0.0, 1.0), (1.0, 2.0)]));
        assert_eq!(turned_labels(&c), 0, "short names stand side by side");
        assert!(!svg(&c).contains("rotate(-90"));
        let long = "randread bs=4KiB qd=16 workers=1 | randread bs=4KiB qd=1 workers=16";
        c.categories = vec![long.into(), "b".into()];
        assert_eq!(turned_labels(&c), TURNED_MAX as u32);
        let drawn = svg(&c);
        roxmltree::Document::parse(&drawn).expect("XML");
        assert_eq!(drawn.matches("rotate(-90").count(), 2, "{drawn}");
        assert!(drawn.contains(&format!("<title>{long}</title>")));
        let cut = shortened(long);
        assert!(cut.ends_with('…') && cut.len() < long.len(), "{cut}");
        assert!(drawn.contains(&format!(">{cut}<title>")));
        assert!(drawn.contains(&format!("height=\"{}\"", HEIGHT + TURNED_MAX as u32)));
    }

    #[test]
    fn log_axes_span_whole_powers() {
        let a = Axis::new("x", Scale::Log10, |v| v.to_string());
        assert_eq!(range(&a, [1.3, 2.2].into_iter(), false, 0.0), (1.0, 3.0));
        assert_eq!(range(&a, [2.0].into_iter(), false, 0.0), (1.5, 2.5));
        let lin = Axis::new("y", Scale::Linear, |v| v.to_string());
        assert_eq!(
            range(&lin, [10.0, 20.0].into_iter(), false, 0.0).0,
            0.0,
            "rates from zero"
        );
    }

    #[test]
    fn each_point_has_a_tooltip_and_text_is_escaped() {
        let mut c = Chart::new(
            "a <b> & c",
            Axis::new("size", Scale::Log2, |v| format!("{v}")),
            Axis::new("MB/s", Scale::Linear, |v| format!("{v}")),
        );
        c.series.push(Series::new(
            "fwd <read>",
            Style::Line,
            vec![(512.0, 1.0), (1024.0, 2.0), (0.0, 9.0)],
        ));
        let svg = svg(&c);
        roxmltree::Document::parse(&svg).expect("XML");
        // The point at 0 has no place on a log axis: two tooltips, not three.
        assert_eq!(svg.matches("<title>").count(), 2);
        assert!(
            svg.contains("<title>fwd &lt;read&gt;: size 1024, MB/s 2</title>"),
            "{svg}"
        );
    }
}
