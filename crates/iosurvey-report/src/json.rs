//! The JSON presenter. The layout is described by
//! `schema/run-report.schema.json`; bump [`SCHEMA_VERSION`] on any change
//! that is not a pure addition.

use iosurvey_model::document::RunReport;
use iosurvey_stats::pairs;
use serde::Serialize;
use std::io::{self, Write};

/// Version of the JSON layout.
pub const SCHEMA_VERSION: u32 = 4;

/// The first version of the layout: every version from it to
/// [`SCHEMA_VERSION`] is read.
pub const FIRST_SCHEMA_VERSION: u32 = 1;

/// Every mode a report can be of (a report's `mode`).
pub const MODES: [&str; 8] = [
    "run", "quick", "diskperf", "parallel", "survey", "matrix", "profile", "video",
];

/// The report as pretty-printed JSON, newline-terminated: two-space
/// indents, one member per line, and an array inside an array (a
/// histogram's `[value, count]`) on one line.
pub fn to_json(report: &RunReport) -> String {
    let mut s = pretty(report);
    s.push('\n');
    s
}

/// `value` in the report's JSON layout ([`Layout`]).
fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    // Room for a long run's histograms and series: the pages never
    // written are never touched, and the buffer is not copied as it grows.
    let mut out = Vec::with_capacity(1 << 20);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Layout::default());
    // The histograms' pairs are written by the layout itself
    // ([`Layout::pairs`]), at a fraction of serde's cost per pair.
    pairs::set_aside(|| value.serialize(&mut ser)).expect("reports always serialise");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's pretty layout, but with the arrays nested in arrays on one
/// line (a histogram's thousands of `[value, count]` pairs would take four
/// lines each), and each line break and indent written at once.
#[derive(Default)]
struct Layout {
    /// The open objects and arrays, innermost last.
    open: Vec<Frame>,
    /// The innermost open container has a member.
    has_value: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Object,
    Array,
    /// An array in an array, or anything inside one: on one line.
    Inline,
}

/// A comma, a line break and the deepest indent [`Layout`] writes at once.
const BREAK: &[u8; 2 + 2 * 32] =
    b",\n                                                                ";

impl Layout {
    fn inline(&self) -> bool {
        self.open.last() == Some(&Frame::Inline)
    }

    /// Opens a container of kind `frame` (inline inside an inline one) with
    /// `bracket`.
    fn begin<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        frame: Frame,
        bracket: &[u8],
    ) -> io::Result<()> {
        let frame = if self.inline() { Frame::Inline } else { frame };
        self.open.push(frame);
        self.has_value = false;
        w.write_all(bracket)
    }

    /// Closes the innermost container with `bracket`, on a line of its own
    /// when it is not inline and not empty.
    fn end<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        let frame = self.open.pop();
        if frame != Some(Frame::Inline) && self.has_value {
            self.line(w, false)?;
        }
        w.write_all(bracket)
    }

    /// Starts a member: after a comma unless `first`, on a new line
    /// indented to its depth, or after a space when inline.
    fn member<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.inline() {
            return if first { Ok(()) } else { w.write_all(b", ") };
        }
        self.line(w, !first)
    }

    /// A line break (after a comma when `comma`) and the indent of the
    /// current depth.
    fn line<W: ?Sized + Write>(&self, w: &mut W, comma: bool) -> io::Result<()> {
        let start = usize::from(!comma);
        let mut spaces = 2 * self.open.len();
        let first = spaces.min(BREAK.len() - 2);
        w.write_all(&BREAK[start..2 + first])?;
        spaces -= first;
        while spaces > 0 {
            let n = spaces.min(BREAK.len() - 2);
            w.write_all(&BREAK[2..2 + n])?;
            spaces -= n;
        }
        Ok(())
    }

    /// Writes a histogram's `[value, count]` pairs into the array just
    /// begun, as serde would through this layout: each on a line of its
    /// own, or one after the other inside an inline array.
    fn pairs<W: ?Sized + Write>(&mut self, w: &mut W, pairs: &[[u64; 2]]) -> io::Result<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        // Each pair is laid out in `line` after what goes before it: `,\n`,
        // the indent and the pair's own bracket, or `, [` inline; the
        // first pair leaves out the comma (and the space inline).
        let indent = if self.inline() {
            0
        } else {
            2 * self.open.len()
        };
        let mut line = [b' '; LINE];
        let (prefix, first) = if self.inline() {
            line[..3].copy_from_slice(b", [");
            (3, 2)
        } else if indent <= MAX_INDENT {
            line[..2].copy_from_slice(b",\n");
            line[2 + indent] = b'[';
            (3 + indent, 1)
        } else {
            // Deeper than any report goes: through serde's own path.
            self.has_value = true;
            return pairs.iter().enumerate().try_for_each(|(i, p)| {
                self.member(w, i == 0)?;
                let mut ser = serde_json::Serializer::with_formatter(&mut *w, Inline);
                p.serialize(&mut ser).map_err(io::Error::other)
            });
        };
        let mut out = Vec::with_capacity(pairs.len() * (prefix + 16));
        for (i, &[v, n]) in pairs.iter().enumerate() {
            let mut end = put_decimal(&mut line, prefix, v);
            line[end..end + 2].copy_from_slice(b", ");
            end = put_decimal(&mut line, end + 2, n);
            line[end] = b']';
            out.extend_from_slice(&line[if i == 0 { first } else { 0 }..=end]);
        }
        self.has_value = true;
        w.write_all(&out)
    }
}

/// Room for one pair's line: a comma, a line break, an indent of at most
/// [`MAX_INDENT`] spaces, and `[value, count]` with 20 digits of room
/// after each number's start.
const LINE: usize = 3 + MAX_INDENT + 20 + 2 + 20 + 1;

/// The deepest indent [`Layout::pairs`] lays out itself (30 levels).
const MAX_INDENT: usize = 60;

/// Two decimal digits of each number below 100.
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `v` in decimal into `line` at `at`, which has 20 bytes of room
/// after it (as many as `u64::MAX` has digits), and returns where the
/// digits end: a copy of 20 bytes of fixed length, not a call per number.
#[inline(always)]
fn put_decimal(line: &mut [u8; LINE], at: usize, mut v: u64) -> usize {
    // The digits end at 20, right-aligned, with 20 bytes of slack after.
    let mut digits = [0u8; 40];
    let mut i = 20;
    while v >= 100 {
        let d = 2 * (v % 100) as usize;
        v /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if v >= 10 {
        let d = 2 * v as usize;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + v as u8;
    }
    line[at..at + 20].copy_from_slice(&digits[i..i + 20]);
    at + (20 - i)
}

/// serde_json's compact layout with a space after each comma, as
/// [`Layout`] writes an inline array.
struct Inline;

impl serde_json::ser::Formatter for Inline {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
}

impl serde_json::ser::Formatter for Layout {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let frame = match self.open.last() {
            Some(Frame::Array | Frame::Inline) => Frame::Inline,
            _ => Frame::Array,
        };
        self.begin(w, frame, b"[")?;
        // A histogram's counts, set aside as an empty array (see `pretty`).
        pairs::take(|p| self.pairs(w, p)).unwrap_or(Ok(()))
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.member(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, Frame::Object, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.member(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// The JSON Schema of [`RunReport`], generated from the types (draft
/// 2020-12); every object refuses properties it does not list. It is
/// checked in as `schema/run-report.schema.json`, and a test keeps the two
/// equal (`UPDATE_SCHEMA=1 cargo test -p iosurvey-report --test schema`
/// rewrites the file).
pub fn json_schema() -> String {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<RunReport>();
    let mut schema = schema.to_value();
    close(&mut schema, false);
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "$id".into(),
            format!("https://iosurvey.invalid/schema/run-report.v{SCHEMA_VERSION}.json").into(),
        );
        root.insert(
            "title".into(),
            format!("iosurvey run report, schema_version {SCHEMA_VERSION}").into(),
        );
        root.insert(
            "description".into(),
            "Raw counts in bytes and nanoseconds; iops and bytes_per_sec are derived over elapsed_ns. Histograms are lossless: add counts to merge runs. Generated from the report types.".into(),
        );
    }
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serialises");
    s.push('\n');
    s
}

/// Closes every object schema that lists its properties, so that a
/// property the types do not have is refused. An object that also has
/// `oneOf`/`anyOf`/`allOf` branches (a flattened enum, such as an array's
/// layout) is closed with `unevaluatedProperties`, which sees the
/// branches' properties, and its branches are left open (`branch`).
fn close(v: &mut serde_json::Value, branch: bool) {
    const BRANCHES: [&str; 3] = ["oneOf", "anyOf", "allOf"];
    match v {
        serde_json::Value::Object(m) => {
            let has_props = m.contains_key("properties");
            let combined = BRANCHES.iter().any(|k| m.contains_key(*k));
            if has_props && !branch {
                let key = if combined {
                    m.remove("additionalProperties");
                    "unevaluatedProperties"
                } else {
                    "additionalProperties"
                };
                m.entry(key).or_insert(false.into());
            }
            if branch {
                m.remove("additionalProperties");
            }
            for (k, child) in m.iter_mut() {
                if BRANCHES.contains(&k.as_str()) {
                    if let serde_json::Value::Array(list) = child {
                        for c in list {
                            close(c, has_props);
                        }
                    }
                } else {
                    close(child, false);
                }
            }
        }
        serde_json::Value::Array(list) => {
            for c in list {
                close(c, false);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_go_one_per_line_and_pairs_on_one_line() {
        let v = json!({
            "a": 1,
            "empty": [],
            "none": {},
            "counts": [[86213, 1], [99999, 12]],
            "list": [{"x": [1, [2, 3]]}, "s"],
        });
        let want = r#"{
  "a": 1,
  "counts": [
    [86213, 1],
    [99999, 12]
  ],
  "empty": [],
  "list": [
    {
      "x": [
        1,
        [2, 3]
      ]
    },
    "s"
  ],
  "none": {}
}"#;
        assert_eq!(pretty(&v), want);
    }

    /// `value` through [`Layout`] with serde writing every pair.
    fn through_serde<T: Serialize>(value: &T) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, Layout::default());
        value.serialize(&mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn histogram_pairs_are_laid_out_as_serde_would() {
        use iosurvey_stats::{Histogram, HistogramData};
        #[derive(Serialize)]
        struct Point {
            h: HistogramData,
            empty: HistogramData,
            // Histograms inside an array in an array: on one line.
            inline: Vec<Vec<HistogramData>>,
            after: Vec<u64>,
        }
        let mut h = Histogram::new();
        for i in 1..400u64 {
            h.record_n(i * i * 997, i);
        }
        let mut small = Histogram::new();
        small.record_n(5_000, 2);
        let p = Point {
            h: h.to_data(),
            empty: Histogram::new().to_data(),
            inline: vec![vec![small.to_data(), Histogram::new().to_data()]],
            after: vec![1, 2],
        };
        let report = vec![Some(&p), None, Some(&p)];
        let ours = pretty(&report);
        assert_eq!(ours, through_serde(&report));
        assert!(
            ours.contains("\n        [997, 1],\n        [3989, 2],\n"),
            "{ours}"
        );
        assert!(ours.contains(r#""counts": [[5003, 2]]"#), "{ours}");
        assert!(ours.contains("\"counts\": []"), "{ours}");
        // Nothing stays set aside once the report is written.
        assert_eq!(
            serde_json::to_value(&p).unwrap()["h"]["counts"]
                .as_array()
                .map(Vec::len),
            Some(399)
        );
    }

    #[test]
    fn pairs_of_any_size_and_depth_are_laid_out_as_serde_would() {
        use iosurvey_stats::HistogramData;
        let edge = [
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            4_294_967_296,
            u64::MAX - 1,
            u64::MAX,
        ];
        let data = HistogramData {
            lowest_ns: 1,
            highest_ns: 2,
            significant_digits: 3,
            clamped: 0,
            min_ns: None,
            max_ns: None,
            counts: edge
                .iter()
                .zip(edge.iter().rev())
                .map(|(&a, &b)| [a, b])
                .collect(),
        };
        // At depth 1, in an inline array, and nested deeper than the
        // layout's own path goes (30 levels).
        #[derive(Serialize)]
        struct Nest {
            k: Option<Box<Nest>>,
            h: Option<HistogramData>,
        }
        let mut nest = Nest {
            k: None,
            h: Some(data.clone()),
        };
        for _ in 0..35 {
            nest = Nest {
                k: Some(Box::new(nest)),
                h: None,
            };
        }
        let inline = vec![vec![data.clone()]];
        for text in [pretty(&data), pretty(&inline), pretty(&nest)] {
            assert!(text.contains("18446744073709551615"), "{text}");
        }
        assert_eq!(pretty(&data), through_serde(&data));
        assert_eq!(pretty(&inline), through_serde(&inline));
        assert_eq!(pretty(&nest), through_serde(&nest));
    }

    #[test]
    fn deep_indents_are_whole() {
        let mut v = json!(1);
        for _ in 0..40 {
            v = json!({ "k": v });
        }
        let ours = pretty(&v);
        let serde = serde_json::to_string_pretty(&v).unwrap();
        assert_eq!(ours, serde);
        assert!(ours.contains(&format!("\n{}\"k\": 1", " ".repeat(80))));
    }

    #[test]
    fn the_layout_is_serde_jsons_pretty_one_but_for_nested_arrays() {
        let v = json!({"p": [{"h": {"counts": [[1, 2], [3, 4]]}, "t": [1.5, null, true]}]});
        let ours = pretty(&v);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&ours).unwrap(), v);
        let serde = serde_json::to_string_pretty(&v).unwrap();
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&ours), squeeze(&serde));
        assert_eq!(ours.lines().count() + 6, serde.lines().count());
    }
}
