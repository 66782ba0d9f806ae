//! The database's tables, as migrations: each is applied once, in order,
//! and recorded in `schema_migrations`; a database whose newest migration
//! is beyond this build's is refused (made by a newer iosurvey). The
//! tables are documented in `docs/database.md`.

/// `PRAGMA application_id` of an iosurvey database ("iosv"): a SQLite
/// file with tables and another id is someone else's, and refused.
pub const APPLICATION_ID: i32 = 0x696f_7376;

/// The migrations, in order; the version of each is its place from 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs, their hosts and targets, points, figures and histograms.
    r#"
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    run_key         TEXT NOT NULL UNIQUE,
    source          TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    recorded_at     TEXT NOT NULL,
    tool            TEXT NOT NULL,
    tool_version    TEXT NOT NULL,
    tool_commit     TEXT,
    schema_version  INTEGER,
    mode            TEXT NOT NULL,
    command_line    TEXT NOT NULL,
    plan_hash       TEXT NOT NULL,
    label           TEXT,
    repeats         INTEGER NOT NULL,
    interrupted     INTEGER NOT NULL,
    document        TEXT
);
CREATE INDEX runs_by_plan ON runs (plan_hash, started_at);
CREATE INDEX runs_by_label ON runs (label);
CREATE TABLE hosts (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    host_index      INTEGER NOT NULL,
    hostname        TEXT NOT NULL,
    kernel          TEXT,
    os              TEXT,
    arch            TEXT,
    cpu_model       TEXT,
    cpus            INTEGER,
    memory_bytes    INTEGER,
    PRIMARY KEY (run_id, host_index)
);
CREATE TABLE targets (
    run_id              INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    target_index        INTEGER NOT NULL,
    host_index          INTEGER NOT NULL,
    path                TEXT NOT NULL,
    kind                TEXT NOT NULL,
    size_bytes          INTEGER NOT NULL,
    logical_block_size  INTEGER NOT NULL,
    physical_block_size INTEGER NOT NULL,
    rotational          INTEGER,
    direct              INTEGER NOT NULL,
    memory_backed       TEXT,
    link                TEXT,
    link_bytes_per_sec  INTEGER,
    device_name         TEXT,
    model               TEXT,
    serial_hash         TEXT,
    firmware            TEXT,
    transport           TEXT,
    scheduler           TEXT,
    filesystem          TEXT,
    mount_options       TEXT,
    array_layout        TEXT,
    PRIMARY KEY (run_id, target_index)
);
CREATE TABLE points (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    repeat          INTEGER NOT NULL,
    point_index     INTEGER NOT NULL,
    label           TEXT NOT NULL,
    params          TEXT NOT NULL,
    elapsed_ns      INTEGER NOT NULL,
    interrupted     INTEGER NOT NULL,
    skipped         TEXT,
    cpu_us_per_io   REAL,
    warnings        TEXT NOT NULL,
    verify_failures INTEGER,
    PRIMARY KEY (run_id, repeat, point_index)
);
CREATE TABLE figures (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    repeat          INTEGER NOT NULL,
    point_index     INTEGER NOT NULL,
    stream          TEXT NOT NULL,
    direction       TEXT NOT NULL,
    time_window     TEXT NOT NULL,
    ops             REAL NOT NULL,
    bytes           REAL NOT NULL,
    iops            REAL NOT NULL,
    bytes_per_sec   REAL NOT NULL,
    errors          INTEGER NOT NULL,
    lat_min_ns      INTEGER,
    lat_mean_ns     REAL,
    lat_stdev_ns    REAL,
    lat_max_ns      INTEGER,
    lat_p50_ns      INTEGER,
    lat_p90_ns      INTEGER,
    lat_p99_ns      INTEGER,
    lat_p999_ns     INTEGER,
    percentiles     TEXT,
    PRIMARY KEY (run_id, repeat, point_index, stream, direction, time_window)
);
CREATE TABLE histograms (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    repeat          INTEGER NOT NULL,
    point_index     INTEGER NOT NULL,
    stream          TEXT NOT NULL,
    direction       TEXT NOT NULL,
    data            TEXT NOT NULL,
    PRIMARY KEY (run_id, repeat, point_index, stream, direction)
);
"#,
];

/// The version this build writes: the number of migrations.
pub fn current() -> u32 {
    MIGRATIONS.len() as u32
}

/// The tables the migrations make, by name (`CREATE TABLE name`).
pub fn table_names() -> Vec<&'static str> {
    MIGRATIONS
        .iter()
        .flat_map(|m| m.lines())
        .filter_map(|l| l.trim().strip_prefix("CREATE TABLE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// The tables whose rows are read back in the order they were written:
/// SQLite's `rowid` keeps it, PostgreSQL has a `seq` column for it.
const WRITTEN_ORDER: [&str; 2] = ["figures", "histograms"];

/// Migration `sql` in PostgreSQL's types: 64-bit integers, doubles, the
/// run's id an identity, and `seq` in the tables read in written order.
pub fn pg_ddl(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() * 2);
    for line in sql.lines() {
        let l = line
            .replace(
                "INTEGER PRIMARY KEY",
                "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
            )
            .replace(" INTEGER", " BIGINT")
            .replace(" REAL", " DOUBLE PRECISION");
        out.push_str(&l);
        out.push('\n');
        let table = l.trim().strip_prefix("CREATE TABLE ");
        if table.is_some_and(|t| {
            WRITTEN_ORDER
                .iter()
                .any(|w| t.starts_with(&format!("{w} ")))
        }) {
            out.push_str("    seq             BIGINT GENERATED ALWAYS AS IDENTITY,\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgresql_gets_the_same_tables_with_its_types() {
        assert_eq!(
            table_names(),
            [
                "runs",
                "hosts",
                "targets",
                "points",
                "figures",
                "histograms"
            ]
        );
        let pg = pg_ddl(MIGRATIONS[0]);
        assert!(!pg.contains(" INTEGER") && !pg.contains(" REAL"));
        assert_eq!(pg.matches("seq ").count(), WRITTEN_ORDER.len());
        assert!(pg.contains("id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"));
    }
}
