//! Runs read back from the database, whole or filtered.

use crate::record::{
    FigureRow, HistogramRow, HostRow, LatencyFigures, PointHead, PointRecord, RunHead, RunRecord,
    Source, TargetRow,
};
use crate::store::{Db, DbError};
use crate::value::{vals, SqlError, Value};

/// Which runs: every condition given must hold.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub ids: Vec<i64>,
    pub plan_hash: Option<String>,
    pub label: Option<String>,
    /// A host of the run by name.
    pub host: Option<String>,
    /// Rank 0's kernel.
    pub kernel: Option<String>,
    /// A target's device model, and firmware.
    pub model: Option<String>,
    pub firmware: Option<String>,
    /// A target by its path, its device's name or its serial's hash.
    pub device: Option<String>,
    pub mode: Option<String>,
}

/// A run in the database: its id and rows (its points read with
/// [`Db::points`]).
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub id: i64,
    pub recorded_at: String,
    pub record: RunRecord,
}

impl Db {
    /// The runs `f` selects, oldest first (by start, then id), with their
    /// hosts and targets and without their points.
    pub fn runs(&self, f: &Filter) -> Result<Vec<StoredRun>, DbError> {
        let mut sql = String::from(
            "SELECT id, run_key, source, started_at, recorded_at, tool, tool_version, tool_commit,
                 schema_version, mode, command_line, plan_hash, label, repeats, interrupted
             FROM runs r WHERE 1 = 1",
        );
        let mut args: Vec<Value> = Vec::new();
        let mut cond = |sql: &mut String, clause: &str, v: Value| {
            args.push(v);
            sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
        };
        if !f.ids.is_empty() {
            let list: Vec<String> = f.ids.iter().map(|i| i.to_string()).collect();
            sql.push_str(&format!(" AND id IN ({})", list.join(",")));
        }
        if let Some(v) = &f.plan_hash {
            cond(&mut sql, " AND plan_hash = ?", Value::Text(v.clone()));
        }
        if let Some(v) = &f.label {
            cond(&mut sql, " AND label = ?", Value::Text(v.clone()));
        }
        if let Some(v) = &f.mode {
            cond(&mut sql, " AND mode = ?", Value::Text(v.clone()));
        }
        if let Some(v) = &f.host {
            cond(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM hosts h WHERE h.run_id = r.id AND h.hostname = ?)",
                Value::Text(v.clone()),
            );
        }
        if let Some(v) = &f.kernel {
            cond(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM hosts h WHERE h.run_id = r.id AND h.host_index = 0 AND h.kernel = ?)",
                Value::Text(v.clone()),
            );
        }
        if let Some(v) = &f.model {
            cond(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM targets t WHERE t.run_id = r.id AND t.model = ?)",
                Value::Text(v.clone()),
            );
        }
        if let Some(v) = &f.firmware {
            cond(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM targets t WHERE t.run_id = r.id AND t.firmware = ?)",
                Value::Text(v.clone()),
            );
        }
        if let Some(v) = &f.device {
            cond(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM targets t WHERE t.run_id = r.id AND ? IN (t.path, t.device_name, t.serial_hash))",
                Value::Text(v.clone()),
            );
        }
        // Byte order, as SQLite's: a locale's collation may order the
        // times' punctuation otherwise.
        sql.push_str(&format!(" ORDER BY started_at{}, id", self.conn.bytewise()));
        let e = |e| self.err("reading runs", e);
        let rows = self.conn.query(&sql, &args).map_err(e)?;
        let mut runs = rows
            .iter()
            .map(|r| -> Result<StoredRun, SqlError> {
                let command: String = r.get(10)?;
                let source: String = r.get(2)?;
                Ok(StoredRun {
                    id: r.get(0)?,
                    recorded_at: r.get(4)?,
                    record: RunRecord {
                        head: RunHead {
                            run_key: r.get(1)?,
                            source: Source::parse(&source).unwrap_or(Source::Iosurvey),
                            started_at: r.get(3)?,
                            tool: r.get(5)?,
                            tool_version: r.get(6)?,
                            tool_commit: r.get(7)?,
                            schema_version: r.get(8)?,
                            mode: r.get(9)?,
                            command_line: serde_json::from_str(&command).unwrap_or_default(),
                            plan_hash: r.get(11)?,
                            label: r.get(12)?,
                            repeats: r.get(13)?,
                            interrupted: r.get(14)?,
                        },
                        hosts: Vec::new(),
                        targets: Vec::new(),
                        points: Vec::new(),
                        document: None,
                    },
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        for run in &mut runs {
            run.record.hosts = self.hosts(run.id)?;
            run.record.targets = self.targets(run.id)?;
        }
        Ok(runs)
    }

    fn hosts(&self, id: i64) -> Result<Vec<HostRow>, DbError> {
        let e = |e| self.err("reading hosts", e);
        let rows = self
            .conn
            .query(
                "SELECT host_index, hostname, kernel, os, arch, cpu_model, cpus, memory_bytes
                 FROM hosts WHERE run_id = ?1 ORDER BY host_index",
                &vals![id],
            )
            .map_err(e)?;
        let rows = rows.iter().map(|r| -> Result<_, SqlError> {
            Ok(HostRow {
                index: r.get(0)?,
                hostname: r.get(1)?,
                kernel: r.get(2)?,
                os: r.get(3)?,
                arch: r.get(4)?,
                cpu_model: r.get(5)?,
                cpus: r.get(6)?,
                memory_bytes: r.get(7)?,
            })
        });
        rows.collect::<Result<_, _>>().map_err(e)
    }

    fn targets(&self, id: i64) -> Result<Vec<TargetRow>, DbError> {
        let e = |e| self.err("reading targets", e);
        let rows = self
            .conn
            .query(
                "SELECT target_index, host_index, path, kind, size_bytes, logical_block_size,
                     physical_block_size, rotational, direct, memory_backed, link,
                     link_bytes_per_sec, device_name, model, serial_hash, firmware, transport,
                     scheduler, filesystem, mount_options, array_layout
                 FROM targets WHERE run_id = ?1 ORDER BY target_index",
                &vals![id],
            )
            .map_err(e)?;
        let rows = rows.iter().map(|r| -> Result<_, SqlError> {
            Ok(TargetRow {
                index: r.get(0)?,
                host: r.get(1)?,
                path: r.get(2)?,
                kind: r.get(3)?,
                size_bytes: r.get(4)?,
                logical_block_size: r.get(5)?,
                physical_block_size: r.get(6)?,
                rotational: r.get(7)?,
                direct: r.get(8)?,
                memory_backed: r.get(9)?,
                link: r.get(10)?,
                link_bytes_per_sec: r.get(11)?,
                device_name: r.get(12)?,
                model: r.get(13)?,
                serial_hash: r.get(14)?,
                firmware: r.get(15)?,
                transport: r.get(16)?,
                scheduler: r.get(17)?,
                filesystem: r.get(18)?,
                mount_options: r.get(19)?,
                array_layout: r.get(20)?,
            })
        });
        rows.collect::<Result<_, _>>().map_err(e)
    }

    /// Run `id`'s points, with their figures and histograms, in order.
    pub fn points(&self, id: i64) -> Result<Vec<PointRecord>, DbError> {
        let e = |e| self.err("reading points", e);
        let heads = self
            .conn
            .query(
                "SELECT repeat, point_index, label, params, elapsed_ns, interrupted, skipped,
                     cpu_us_per_io, warnings, verify_failures
                 FROM points WHERE run_id = ?1 ORDER BY repeat, point_index",
                &vals![id],
            )
            .map_err(e)?
            .iter()
            .map(|r| -> Result<_, SqlError> {
                let params: String = r.get(3)?;
                let warnings: String = r.get(8)?;
                Ok(PointHead {
                    repeat: r.get(0)?,
                    index: r.get(1)?,
                    label: r.get(2)?,
                    params: serde_json::from_str(&params).unwrap_or_default(),
                    elapsed_ns: r.get(4)?,
                    interrupted: r.get(5)?,
                    skipped: r.get(6)?,
                    cpu_us_per_io: r.get(7)?,
                    warnings: serde_json::from_str(&warnings).unwrap_or_default(),
                    verify_failures: r.get(9)?,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        let order = self.conn.written_order();
        let figures = self
            .conn
            .query(
                &format!(
                    "SELECT repeat, point_index, stream, direction, time_window, ops, bytes, iops,
                     bytes_per_sec, errors, lat_min_ns, lat_mean_ns, lat_stdev_ns, lat_max_ns,
                     percentiles
                 FROM figures WHERE run_id = ?1 ORDER BY {order}"
                ),
                &vals![id],
            )
            .map_err(e)?
            .iter()
            .map(|r| -> Result<_, SqlError> {
                let pct: Option<String> = r.get(14)?;
                let min: Option<u64> = r.get(10)?;
                let latency = match min {
                    Some(min_ns) => Some(LatencyFigures {
                        min_ns,
                        mean_ns: r.get::<Option<f64>>(11)?.unwrap_or(0.0),
                        stdev_ns: r.get::<Option<f64>>(12)?.unwrap_or(0.0),
                        max_ns: r.get::<Option<u64>>(13)?.unwrap_or(0),
                        percentiles: pct
                            .and_then(|p| serde_json::from_str(&p).ok())
                            .unwrap_or_default(),
                    }),
                    None => None,
                };
                Ok((
                    (r.get::<u32>(0)?, r.get::<u32>(1)?),
                    FigureRow {
                        stream: r.get(2)?,
                        direction: r.get(3)?,
                        window: r.get(4)?,
                        ops: r.get(5)?,
                        bytes: r.get(6)?,
                        iops: r.get(7)?,
                        bytes_per_sec: r.get(8)?,
                        errors: r.get(9)?,
                        latency,
                    },
                ))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        let hists = self
            .conn
            .query(
                &format!(
                    "SELECT repeat, point_index, stream, direction, data
                 FROM histograms WHERE run_id = ?1 ORDER BY {order}"
                ),
                &vals![id],
            )
            .map_err(e)?
            .iter()
            .map(|r| -> Result<_, SqlError> {
                let data: String = r.get(4)?;
                Ok((
                    (r.get::<u32>(0)?, r.get::<u32>(1)?),
                    HistogramRow {
                        stream: r.get(2)?,
                        direction: r.get(3)?,
                        data: serde_json::from_str(&data).unwrap_or_default(),
                    },
                ))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?;
        // By point, in one pass each (a survey has thousands of points).
        let mut by_point: std::collections::HashMap<(u32, u32), PointRecord> = heads
            .iter()
            .map(|h| {
                let rec = PointRecord {
                    head: h.clone(),
                    figures: Vec::new(),
                    histograms: Vec::new(),
                };
                ((h.repeat, h.index), rec)
            })
            .collect();
        for (k, f) in figures {
            if let Some(p) = by_point.get_mut(&k) {
                p.figures.push(f);
            }
        }
        for (k, h) in hists {
            if let Some(p) = by_point.get_mut(&k) {
                p.histograms.push(h);
            }
        }
        Ok(heads
            .iter()
            .filter_map(|h| by_point.remove(&(h.repeat, h.index)))
            .collect())
    }

    /// The document run `id` was recorded from (its iosurvey report or
    /// fio's JSON), when kept.
    pub fn document(&self, id: i64) -> Result<Option<String>, DbError> {
        let e = |e| self.err("reading the run's document", e);
        match self
            .conn
            .query_opt("SELECT document FROM runs WHERE id = ?1", &vals![id])
            .map_err(e)?
        {
            Some(r) => r.get(0).map_err(e),
            None => Err(DbError::Failed(format!("{}: no run {id}", self.shown()))),
        }
    }
}
