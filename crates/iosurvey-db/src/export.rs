//! `db export`: JSON Lines, one document per point, stream, direction and
//! window, each whole on its own (the run, its hosts and targets, the
//! point), as OpenSearch, Elasticsearch or BigQuery take them; and the
//! way back (`db import` of such lines gives the same figures).

use crate::record::{
    FigureRow, HistogramRow, HostRow, PointHead, PointRecord, RunHead, RunRecord, TargetRow,
};
use serde::{Deserialize, Serialize};

/// The `format` every exported line carries.
pub const FORMAT: &str = "iosurvey-db-export/1";

/// One exported line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub format: String,
    pub run: RunLine,
    pub point: PointHead,
    /// `None` for a point with no figure (a point skipped).
    pub figure: Option<FigureRow>,
    /// The figure's lossless histogram, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<serde_json::Value>,
}

/// The run, as each line repeats it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    /// The run's id in the database it was exported from.
    pub id: i64,
    #[serde(flatten)]
    pub head: RunHead,
    pub hosts: Vec<HostRow>,
    pub targets: Vec<TargetRow>,
}

/// The lines of one run (`id`), one per figure of each point, each
/// newline-terminated; a figure JSON cannot hold (not finite) is an error.
pub fn lines(id: i64, r: &RunRecord, out: &mut String) -> Result<(), String> {
    let run = RunLine {
        id,
        head: r.head.clone(),
        hosts: r.hosts.clone(),
        targets: r.targets.clone(),
    };
    let mut put = |point: &PointHead, figure: Option<&FigureRow>, h: Option<&HistogramRow>| {
        let finite = figure.is_none_or(|f| {
            [f.ops, f.bytes, f.iops, f.bytes_per_sec]
                .iter()
                .all(|v| v.is_finite())
        });
        if !finite {
            return Err(format!(
                "point {}: a figure is not a finite number",
                point.index
            ));
        }
        let line = Line {
            format: FORMAT.into(),
            run: run.clone(),
            point: point.clone(),
            figure: figure.cloned(),
            histogram: h.map(|h| h.data.clone()),
        };
        out.push_str(&serde_json::to_string(&line).map_err(|e| e.to_string())?);
        out.push('\n');
        Ok(())
    };
    for p in &r.points {
        if p.figures.is_empty() {
            put(&p.head, None, None)?;
        }
        for f in &p.figures {
            let h = (f.window == "total")
                .then(|| {
                    p.histograms
                        .iter()
                        .find(|h| h.stream == f.stream && h.direction == f.direction)
                })
                .flatten();
            put(&p.head, Some(f), h)?;
        }
    }
    Ok(())
}

/// Whether `text` is exported lines (its first line says so).
pub fn is_export(text: &str) -> bool {
    text.lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .is_some_and(|v| v.get("format").and_then(|f| f.as_str()) == Some(FORMAT))
}

/// The runs exported lines hold, in the order they first appear. A line
/// that is not one is an error naming its number.
pub fn read_lines(text: &str) -> Result<Vec<RunRecord>, String> {
    let mut runs: Vec<RunRecord> = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(l)
            .map_err(|e| format!("line {}: not an exported line: {e}", n + 1))?;
        if line.format != FORMAT {
            return Err(format!(
                "line {}: format {:?}, not {FORMAT:?}",
                n + 1,
                line.format
            ));
        }
        let k = match runs
            .iter()
            .position(|r| r.head.run_key == line.run.head.run_key)
        {
            Some(k) => k,
            None => {
                runs.push(RunRecord {
                    head: line.run.head.clone(),
                    hosts: line.run.hosts.clone(),
                    targets: line.run.targets.clone(),
                    points: Vec::new(),
                    document: None,
                });
                runs.len() - 1
            }
        };
        let run = &mut runs[k];
        let at = (line.point.repeat, line.point.index);
        let p = match run
            .points
            .iter()
            .rposition(|p| (p.head.repeat, p.head.index) == at)
        {
            Some(i) => &mut run.points[i],
            None => {
                run.points.push(PointRecord {
                    head: line.point.clone(),
                    figures: Vec::new(),
                    histograms: Vec::new(),
                });
                run.points.last_mut().expect("just pushed")
            }
        };
        if let Some(f) = line.figure {
            if let Some(data) = line.histogram {
                p.histograms.push(HistogramRow {
                    stream: f.stream.clone(),
                    direction: f.direction.clone(),
                    data,
                });
            }
            p.figures.push(f);
        }
    }
    Ok(runs)
}
