//! A run written into the database, whole or not at all.

use crate::record::{FigureRow, RunRecord};
use crate::store::{finish, now, Db, DbError, Inserted};
use crate::value::{vals, SqlError};

impl Db {
    /// Writes `r` in one transaction (taken at once, so that several
    /// processes writing queue up rather than fail). A run already there
    /// (the same run key) is left as it is.
    pub fn insert(&mut self, r: &RunRecord) -> Result<Inserted, DbError> {
        let c = &self.conn;
        c.begin_write()
            .map_err(|e| self.err("recording the run", e))?;
        let done = self.insert_rows(r);
        finish(c, done, |e| self.err("recording the run", e))
    }

    fn insert_rows(&self, r: &RunRecord) -> Result<Inserted, DbError> {
        let c = &self.conn;
        let e = |e| self.err("recording the run", e);
        let h = &r.head;
        let there: Option<i64> = c
            .query_opt("SELECT id FROM runs WHERE run_key = ?1", &vals![h.run_key])
            .map_err(e)?
            .map(|row| row.get(0))
            .transpose()
            .map_err(e)?;
        if let Some(id) = there {
            // A run imported from exported lines gets its document when
            // its report is imported later.
            if r.document.is_some() {
                c.execute(
                    "UPDATE runs SET document = ?1 WHERE id = ?2 AND document IS NULL",
                    &vals![r.document, id],
                )
                .map_err(e)?;
            }
            return Ok(Inserted::AlreadyThere(id));
        }
        let id: i64 = c
            .query(
                "INSERT INTO runs (run_key, source, started_at, recorded_at, tool, tool_version,
                 tool_commit, schema_version, mode, command_line, plan_hash, label, repeats,
                 interrupted, document)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             RETURNING id",
                &vals![
                    h.run_key,
                    h.source.as_str(),
                    h.started_at,
                    now(),
                    h.tool,
                    h.tool_version,
                    h.tool_commit,
                    h.schema_version,
                    h.mode,
                    json(&h.command_line),
                    h.plan_hash,
                    h.label,
                    h.repeats,
                    h.interrupted,
                    r.document,
                ],
            )
            .map_err(e)?
            .first()
            .ok_or_else(|| SqlError::Type("no id returned for the run".into()))
            .and_then(|row| row.get(0))
            .map_err(e)?;
        let host = "INSERT INTO hosts (run_id, host_index, hostname, kernel, os, arch, cpu_model,
                     cpus, memory_bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
        for x in &r.hosts {
            c.execute(
                host,
                &vals![
                    id,
                    x.index,
                    x.hostname,
                    x.kernel,
                    x.os,
                    x.arch,
                    x.cpu_model,
                    x.cpus,
                    x.memory_bytes
                ],
            )
            .map_err(e)?;
        }
        let target =
            "INSERT INTO targets (run_id, target_index, host_index, path, kind, size_bytes,
                     logical_block_size, physical_block_size, rotational, direct, memory_backed,
                     link, link_bytes_per_sec, device_name, model, serial_hash, firmware,
                     transport, scheduler, filesystem, mount_options, array_layout)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20, ?21, ?22)";
        for t in &r.targets {
            c.execute(
                target,
                &vals![
                    id,
                    t.index,
                    t.host,
                    t.path,
                    t.kind,
                    t.size_bytes,
                    t.logical_block_size,
                    t.physical_block_size,
                    t.rotational,
                    t.direct,
                    t.memory_backed,
                    t.link,
                    t.link_bytes_per_sec,
                    t.device_name,
                    t.model,
                    t.serial_hash,
                    t.firmware,
                    t.transport,
                    t.scheduler,
                    t.filesystem,
                    t.mount_options,
                    t.array_layout
                ],
            )
            .map_err(e)?;
        }
        let point = "INSERT INTO points (run_id, repeat, point_index, label, params, elapsed_ns,
                     interrupted, skipped, cpu_us_per_io, warnings, verify_failures)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
        let figure =
            "INSERT INTO figures (run_id, repeat, point_index, stream, direction, time_window,
                     ops, bytes, iops, bytes_per_sec, errors, lat_min_ns, lat_mean_ns,
                     lat_stdev_ns, lat_max_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p999_ns,
                     percentiles)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20)";
        let histogram =
            "INSERT INTO histograms (run_id, repeat, point_index, stream, direction, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
        for p in &r.points {
            let ph = &p.head;
            c.execute(
                point,
                &vals![
                    id,
                    ph.repeat,
                    ph.index,
                    ph.label,
                    ph.params.to_string(),
                    ph.elapsed_ns,
                    ph.interrupted,
                    ph.skipped,
                    ph.cpu_us_per_io,
                    json(&ph.warnings),
                    ph.verify_failures
                ],
            )
            .map_err(e)?;
            for f in &p.figures {
                insert_figure(c, figure, id, (ph.repeat, ph.index), f).map_err(e)?;
            }
            for x in &p.histograms {
                c.execute(
                    histogram,
                    &vals![
                        id,
                        ph.repeat,
                        ph.index,
                        x.stream,
                        x.direction,
                        x.data.to_string()
                    ],
                )
                .map_err(e)?;
            }
        }
        Ok(Inserted::New(id))
    }
}

fn insert_figure(
    c: &crate::conn::Conn,
    sql: &str,
    id: i64,
    (repeat, index): (u32, u32),
    f: &FigureRow,
) -> Result<u64, SqlError> {
    let l = f.latency.as_ref();
    let at = |p: f64| l.and_then(|l| l.at(p));
    c.execute(
        sql,
        &vals![
            id,
            repeat,
            index,
            f.stream,
            f.direction,
            f.window,
            f.ops,
            f.bytes,
            f.iops,
            f.bytes_per_sec,
            f.errors,
            l.map(|l| l.min_ns),
            l.map(|l| l.mean_ns),
            l.map(|l| l.stdev_ns),
            l.map(|l| l.max_ns),
            at(50.0),
            at(90.0),
            at(99.0),
            at(99.9),
            l.map(|l| json(&l.percentiles)),
        ],
    )
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
