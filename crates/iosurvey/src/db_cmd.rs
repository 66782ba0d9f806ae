//! `iosurvey db ...`: the history database (`--db FILE` on every mode)
//! asked what fleets ask: `import` saved runs (iosurvey's, fio's, exported
//! lines), `history` of one test over time (a table, or `--html` plots),
//! `compare` two labels or two runs with `compare`'s statistics, `regress`
//! (change points per series, exit 1 on a regression in the newest runs),
//! and `export` as JSON Lines.

use crate::compare_cmd::{pct, present, CompareOutput};
use crate::flags::common::OutputArg;
use crate::flags::listed::{listed, mode_names};
use crate::out_path::{check_all, judge, Ident, OutPath, Sink};
use crate::report_cmd::{parse_report, read_input, InputBudget};
use anyhow::anyhow;
use clap::builder::StringValueParser;
use clap::{Args, Subcommand, ValueEnum};
use iosurvey_db::history::{self, Figure, Found, Series};
use iosurvey_db::record::RunRecord;
use iosurvey_db::{from_report, Db, DbError, Filter, Input, Inserted, StoredRun};
use iosurvey_model::document::RunReport;
use iosurvey_report::html::history::{render_history_html, HistorySeries};
use iosurvey_session::output::{print_text, write_out};
use iosurvey_session::{usage, Failure, Outcome};
use iosurvey_stats::changepoint::Options;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Add saved runs: iosurvey reports (JSON or HTML pages, every schema version), fio's JSON (--output-format=json or json+) or lines of `db export`; a run already there is skipped.
    Import(ImportArgs),
    /// One test over time: a figure of each point of one plan, run after run (oldest first), as a table or with --html as plots.
    History(HistoryArgs),
    /// Compare the runs of two labels (or two runs) point by point, with `iosurvey compare`'s statistics: each run of a label is a repeat.
    Compare(DbCompareArgs),
    /// Find where each series changed (e-divisive means with a permutation test) and what changed in the environment there; exit 1 when a change for the worse beyond --threshold is among the newest runs.
    #[command(
        after_help = "Exit codes: 0 no regression in the newest runs, 1 a regression (one line per change says where), 2 bad usage or refused."
    )]
    Regress(RegressArgs),
    /// Every point and window of the runs selected as JSON Lines (one document per point, stream, direction and window), for OpenSearch, Elasticsearch or BigQuery; `db import` reads them back.
    Export(ExportArgs),
}

/// The database a `db` command reads or writes.
#[derive(Args, Debug)]
pub struct DbFile {
    /// The history database, as runs' --db wrote it: a SQLite file, or a PostgreSQL URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME&sslmode=MODE]).
    #[arg(long, value_name = "FILE|URL")]
    pub db: PathBuf,
}

impl DbFile {
    /// Whether the database is on PostgreSQL (no file).
    fn is_url(&self) -> bool {
        iosurvey_db::is_postgres(&self.db)
    }

    /// The database as messages name it (a URL's password hidden).
    fn name(&self) -> String {
        iosurvey_db::redact(&self.db.to_string_lossy())
    }
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(flatten)]
    pub file: DbFile,
    /// Saved runs (- for stdin).
    #[arg(value_name = "RUN", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The host a fio run ran on (fio's JSON does not say) [default: unknown].
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// The label of a run that has none.
    #[arg(long, value_name = "TEXT", value_parser = crate::flags::common::label)]
    pub label: Option<String>,
}

/// Which runs: every condition given must hold.
#[derive(Args, Debug, Clone, Default)]
pub struct Select {
    /// The plan (`db history` prints each run's): runs of the same test [default: the newest run's plan].
    #[arg(long, value_name = "HASH")]
    pub plan: Option<String>,
    /// Runs of this label (--label of the run).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Runs on this host.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Runs on this kernel (uname -r).
    #[arg(long, value_name = "RELEASE")]
    pub kernel: Option<String>,
    /// Runs with a target of this device model.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Runs with a target of this firmware.
    #[arg(long, value_name = "REV")]
    pub firmware: Option<String>,
    /// Runs with a target of this path, device name (nvme0n1) or serial hash.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
    /// Runs of this mode (run, survey, ..., fio).
    #[arg(long, value_name = "MODE", value_parser = listed(StringValueParser::new(), mode_names))]
    pub mode: Option<String>,
}

impl Select {
    fn filter(&self) -> Filter {
        Filter {
            plan_hash: self.plan.clone(),
            label: self.label.clone(),
            host: self.host.clone(),
            kernel: self.kernel.clone(),
            model: self.model.clone(),
            firmware: self.firmware.clone(),
            device: self.device.clone(),
            mode: self.mode.clone(),
            ids: Vec::new(),
        }
    }
}

/// A figure a series follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FigureArg {
    /// IOPS where the point's mean I/O is under 64 KiB, MB/s otherwise.
    Rate,
    Iops,
    Mbps,
    /// Mean latency (us).
    Mean,
    /// p50 latency (us).
    P50,
    /// p99 latency (us).
    P99,
}

impl From<FigureArg> for Figure {
    fn from(f: FigureArg) -> Figure {
        match f {
            FigureArg::Rate => Figure::Rate,
            FigureArg::Iops => Figure::Iops,
            FigureArg::Mbps => Figure::Mbps,
            FigureArg::Mean => Figure::Mean,
            FigureArg::P50 => Figure::P50,
            FigureArg::P99 => Figure::P99,
        }
    }
}

/// The series a command follows.
#[derive(Args, Debug, Clone)]
pub struct Follow {
    /// The figure.
    #[arg(long, value_enum, default_value = "rate")]
    pub figure: FigureArg,
    /// Only the point of this label.
    #[arg(long, value_name = "LABEL")]
    pub point: Option<String>,
}

/// How changes are searched for.
#[derive(Args, Debug, Clone)]
pub struct Search {
    /// The significance level of each split's permutation test.
    #[arg(long, value_name = "P", default_value_t = 0.01, value_parser = probability)]
    pub alpha: f64,
    /// The fewest runs on each side of a change (so a change is seen this many runs after it at the soonest).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub min_size: u32,
    /// Permutations per test (the smallest p is 1/(N+1)).
    #[arg(long, value_name = "N", default_value_t = 199, value_parser = clap::value_parser!(u32).range(19..=100000))]
    pub permutations: u32,
}

impl Search {
    fn options(&self) -> Options {
        Options {
            min_size: self.min_size as usize,
            alpha: self.alpha,
            permutations: self.permutations as usize,
            ..Options::default()
        }
    }
}

fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!("{s:?} is not a probability between 0 and 1")),
    }
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub file: DbFile,
    #[command(flatten)]
    pub select: Select,
    #[command(flatten)]
    pub follow: Follow,
    #[command(flatten)]
    pub search: Search,
    /// Write the history as a self-contained HTML page with a plot per series (changes marked) to FILE (- is stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// What goes to stdout: the text tables or the series as JSON [default: text].
    #[arg(long, value_enum)]
    pub output: Option<OutputArg>,
}

#[derive(Args, Debug)]
pub struct DbCompareArgs {
    #[command(flatten)]
    pub file: DbFile,
    /// A label: twice, A then B (each of its runs is a repeat).
    #[arg(long, value_name = "TEXT", num_args = 1, conflicts_with = "run")]
    pub label: Vec<String>,
    /// A run id: twice, A then B.
    #[arg(long, value_name = "ID", num_args = 1)]
    pub run: Vec<i64>,
    /// Of the labels' runs, only those of this plan [default: the newest of B's runs' plan].
    #[arg(long, value_name = "HASH")]
    pub plan: Option<String>,
    #[command(flatten)]
    pub out: CompareOutput,
}

#[derive(Args, Debug)]
pub struct RegressArgs {
    #[command(flatten)]
    pub file: DbFile,
    #[command(flatten)]
    pub select: Select,
    #[command(flatten)]
    pub follow: Follow,
    #[command(flatten)]
    pub search: Search,
    /// A change for the worse larger than PCT percent (of the mean before it) fails the command.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = pct)]
    pub threshold: f64,
    /// Only changes at one of the newest N runs of a series fail the command (older ones are shown).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub newest: u32,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub file: DbFile,
    #[command(flatten)]
    pub select: Select,
    /// Write the lines to FILE [default: - (stdout)].
    #[arg(long, value_name = "FILE")]
    pub to: Option<PathBuf>,
}

pub fn db(a: DbArgs) -> Result<Outcome, Failure> {
    match a.command {
        DbCommand::Import(a) => import(a),
        DbCommand::History(a) => history_cmd(a),
        DbCommand::Compare(a) => compare(a),
        DbCommand::Regress(a) => regress(a),
        DbCommand::Export(a) => export(a),
    }
}

/// The failure of a database error: refused (exit 2) or failed (exit 1).
fn failure(e: DbError) -> Failure {
    match e {
        DbError::Refused(m) => Failure::Usage(anyhow!(m)),
        DbError::Failed(m) => Failure::Run(anyhow!(m)),
    }
}

/// The database and the files beside it judged as outputs (never a
/// device, a FIFO, stdout, a hard link beside it), to write them (`db
/// import`): the database first.
fn judged_db(f: &DbFile) -> Result<Vec<OutPath>, Failure> {
    iosurvey_target::output::database::judge_database(&f.db).map_err(|e| Failure::Usage(e.into()))
}

/// What the database and the files beside it are, to read it: no output
/// (stdout included) may be one of them. Nothing is written to find out
/// (its directory may be read-only).
fn db_ident(f: &DbFile) -> Vec<Ident> {
    if f.is_url() {
        return Vec::new();
    }
    iosurvey_target::output::database::database_idents(&f.db)
}

/// Opens the database to read: the files beside it must be regular
/// files of their own (SQLite writes them even to read), and stdout none
/// of them.
fn open_read(f: &DbFile) -> Result<Db, Failure> {
    let shown = format!("--db {}", f.name());
    if f.is_url() {
        return Db::open_read(&f.db, &shown).map_err(failure);
    }
    iosurvey_target::output::database::check_sidecars(&f.db, &shown)
        .map_err(|e| Failure::Usage(e.into()))?;
    // SQLite truncates and removes the files beside the database even to
    // read it: where it can write there, they are judged as outputs (a
    // loop device's backing file, a target's file there is refused).
    let dir = match f.db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok() {
        judged_db(f)?;
    }
    crate::out_path::check_stdout(&[], &db_ident(f)).map_err(|e| Failure::Usage(e.into()))?;
    Db::open_read(&f.db, &shown).map_err(failure)
}

fn import(a: ImportArgs) -> Result<Outcome, Failure> {
    let files = match a.file.is_url() {
        true => Vec::new(),
        false => judged_db(&a.file)?,
    };
    check_all(&files, &[], None).map_err(|e| Failure::Usage(e.into()))?;
    let host = a.host.as_deref().unwrap_or("unknown");
    // Every input read before the database is touched: a bad one is
    // refused with nothing written.
    let mut runs: Vec<(String, RunRecord)> = Vec::new();
    for input in &a.inputs {
        let shown = input.display().to_string();
        // Before it is read: an input that is the database or a file
        // beside it (read as it is written, or deleted by SQLite after).
        let ids = crate::out_path::target_idents(input);
        if let Some(f) = files.iter().find(|f| ids.contains(&f.ident)) {
            return usage(anyhow!("{shown}: is {} itself; give saved runs", f.shown()));
        }
        let mut budget = InputBudget::new(None);
        let (text, ident) = read_input(input, &mut budget)?;
        if let Some(f) = files.iter().find(|f| ident.as_ref() == Some(&f.ident)) {
            return usage(anyhow!("{shown}: is {} itself; give saved runs", f.shown()));
        }
        match iosurvey_db::read_other(&text, host, a.label.as_deref()) {
            Err(e) => return usage(anyhow!("{shown}: {e}")),
            Ok(Some(Input::Fio(r))) => runs.push((shown, *r)),
            Ok(Some(Input::Export(rs))) => runs.extend(rs.into_iter().map(|r| (shown.clone(), r))),
            Ok(None) => {
                let mut report = parse_report(text, &shown)?;
                if report.label.is_none() {
                    report.label = a.label.clone();
                }
                let json = iosurvey_report::to_json(&report);
                runs.push((shown, from_report(&report, Some(json))));
            }
        }
    }
    let mut db = match files.first() {
        Some(out) => iosurvey_session::history_db::open(out)?,
        None => iosurvey_session::history_db::open_url(&a.file.db)?,
    };
    let mut added = 0;
    for (shown, r) in &runs {
        let points = r.points.len();
        match db.insert(r).map_err(failure)? {
            Inserted::New(id) => {
                added += 1;
                let what = match r.head.mode == r.head.tool {
                    true => r.head.tool.clone(),
                    false => format!("{} {}", r.head.tool, r.head.mode),
                };
                eprintln!(
                    "iosurvey: {shown}: run {id}: {what} {}, {points} point{}, plan {}",
                    r.head.started_at,
                    if points == 1 { "" } else { "s" },
                    r.head.plan_hash
                );
            }
            Inserted::AlreadyThere(id) => {
                eprintln!("iosurvey: {shown}: already there as run {id}; skipped")
            }
        }
    }
    eprintln!(
        "iosurvey: {added} run{} added to {}",
        if added == 1 { "" } else { "s" },
        a.file.name()
    );
    Ok(Outcome::Ok)
}

/// The series `select` and `follow` name, of one plan (the one asked
/// for, else the newest run's), and the runs.
fn follow(
    db: &Db,
    select: &Select,
    follow: &Follow,
) -> Result<(Vec<Series>, Vec<StoredRun>), Failure> {
    let mut f = select.filter();
    f.plan_hash = history::plan_of(db, &f).map_err(failure)?;
    if f.plan_hash.is_none() {
        return Ok((Vec::new(), Vec::new()));
    }
    history::series(db, &f, follow.figure.into(), follow.point.as_deref()).map_err(failure)
}

fn history_cmd(a: HistoryArgs) -> Result<Outcome, Failure> {
    let html = a
        .html
        .as_deref()
        .map(|p| judge("--html", p))
        .transpose()
        .map_err(|e| Failure::Usage(e.into()))?;
    if let Some(h) = &html {
        if db_ident(&a.file).contains(&h.ident) {
            return usage(anyhow!("{}: is the database; give another file", h.shown()));
        }
    }
    let db = open_read(&a.file)?;
    let (series, runs) = follow(&db, &a.select, &a.follow)?;
    if series.is_empty() {
        eprintln!("iosurvey: no run in {} matches", a.file.name());
    }
    let opts = a.search.options();
    let found: Vec<Vec<Found>> = series
        .iter()
        .map(|s| history::regressions(s, &runs, &opts))
        .collect();
    if let Some(h) = &html {
        let page: Vec<HistorySeries> = series
            .iter()
            .zip(&found)
            .map(|(s, f)| HistorySeries {
                title: s.title(),
                figure: s.figure.name().to_string(),
                runs: s
                    .entries
                    .iter()
                    .map(|e| (e.run_id, e.started_at.clone(), e.label.clone(), e.value))
                    .collect(),
                changes: f.iter().map(|c| c.at).collect(),
            })
            .collect();
        let title = format!("iosurvey history: {}", a.file.name());
        write_out(h, &render_history_html(&title, &page), true, None)?;
        if h.sink == Sink::Stdout {
            return Ok(Outcome::Ok);
        }
    }
    let body = match a.output.unwrap_or(OutputArg::Text) {
        OutputArg::Text => history_text(&series, &found, &runs),
        OutputArg::Json => history_json(&series, &found),
    };
    print_text(&iosurvey_report::terminal_text(&body));
    Ok(Outcome::Ok)
}

fn history_text(series: &[Series], found: &[Vec<Found>], runs: &[StoredRun]) -> String {
    let mut t = String::new();
    for (s, f) in series.iter().zip(found) {
        let _ = writeln!(t, "{}: {} runs", s.title(), s.entries.len());
        let _ = writeln!(
            t,
            "{:>6}  {:<20}  {:<16}  {:<12}  {:>12}",
            "run",
            "started",
            "label",
            "kernel",
            s.figure.name()
        );
        for (i, e) in s.entries.iter().enumerate() {
            let kernel = runs
                .iter()
                .find(|r| r.id == e.run_id)
                .and_then(|r| r.record.hosts.first())
                .and_then(|h| h.kernel.clone())
                .unwrap_or_default();
            let mark = if f.iter().any(|c| c.at == i) {
                "  <- change"
            } else {
                ""
            };
            let _ = writeln!(
                t,
                "{:>6}  {:<20}  {:<16}  {:<12}  {:>12}{mark}",
                e.run_id,
                e.started_at,
                e.label.as_deref().unwrap_or("-"),
                kernel,
                number(e.value)
            );
        }
        t.push('\n');
    }
    t
}

fn history_json(series: &[Series], found: &[Vec<Found>]) -> String {
    let v: Vec<serde_json::Value> = series
        .iter()
        .zip(found)
        .map(|(s, f)| {
            serde_json::json!({
                "plan_hash": s.plan_hash,
                "host": s.host,
                "point": s.point,
                "direction": s.direction,
                "figure": s.figure.name(),
                "runs": s.entries.iter().map(|e| serde_json::json!({
                    "run": e.run_id,
                    "started_at": e.started_at,
                    "label": e.label,
                    "value": e.value,
                    "repeats": e.repeats,
                })).collect::<Vec<_>>(),
                "changes": f.iter().map(|c| change_json(s, c)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

fn change_json(s: &Series, c: &Found) -> serde_json::Value {
    serde_json::json!({
        "run": s.entries[c.at].run_id,
        "index": c.at,
        "before": c.before,
        "after": c.after,
        "change_pct": c.pct,
        "p_value": c.change.p,
        "worse": c.worse,
        "differs": c.differs,
    })
}

/// Three significant figures or whole numbers.
fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn regress(a: RegressArgs) -> Result<Outcome, Failure> {
    // A gate that could never fire is refused, not passed.
    let smallest_p = 1.0 / (f64::from(a.search.permutations) + 1.0);
    if smallest_p > a.search.alpha {
        return usage(anyhow!(
            "--permutations {} can give no p-value below {smallest_p:.3}, above --alpha {}: no change could ever be found; give at least {} permutations",
            a.search.permutations,
            a.search.alpha,
            (1.0 / a.search.alpha).ceil() as u64
        ));
    }
    if a.newest < a.search.min_size {
        return usage(anyhow!(
            "--newest {} is below --min-size {}: a change is seen {} runs after it at the soonest, so none could be among the newest {}",
            a.newest,
            a.search.min_size,
            a.search.min_size,
            a.newest
        ));
    }
    let db = open_read(&a.file)?;
    // Every plan the selection holds, each on its own.
    let runs = db.runs(&a.select.filter()).map_err(failure)?;
    let mut plans: Vec<String> = runs
        .iter()
        .map(|r| r.record.head.plan_hash.clone())
        .collect();
    plans.sort();
    plans.dedup();
    let opts = a.search.options();
    let mut text = String::new();
    let mut failing = Vec::new();
    let mut followed = 0;
    for plan in plans {
        let select = Select {
            plan: Some(plan),
            ..a.select.clone()
        };
        let (series, runs) = follow(&db, &select, &a.follow)?;
        for s in &series {
            followed += 1;
            let found = history::regressions(s, &runs, &opts);
            if found.is_empty() {
                continue;
            }
            let _ = writeln!(text, "{}: {} runs", s.title(), s.entries.len());
            for c in &found {
                let e = &s.entries[c.at];
                let recent = c.at + a.newest as usize >= s.entries.len();
                let fails = c.worse && c.pct.abs() > a.threshold && recent;
                let _ = writeln!(
                    text,
                    "  change at run {} ({}{}): {} -> {} ({:+.1}%, p {:.3}), {}{}",
                    e.run_id,
                    e.started_at,
                    e.label
                        .as_deref()
                        .map(|l| format!(", {l}"))
                        .unwrap_or_default(),
                    number(c.before),
                    number(c.after),
                    c.pct,
                    c.change.p,
                    if c.worse { "worse" } else { "better" },
                    if fails { "  REGRESSION" } else { "" }
                );
                for d in &c.differs {
                    let _ = writeln!(text, "    {d}");
                }
                if c.differs.is_empty() {
                    let _ = writeln!(text, "    (nothing recorded changed at that run)");
                }
                if fails {
                    failing.push(format!(
                        "{} at run {} ({:+.1}%)",
                        s.title(),
                        e.run_id,
                        c.pct
                    ));
                }
            }
        }
    }
    if text.is_empty() {
        let _ = writeln!(text, "no change found in {followed} series");
    }
    print_text(&iosurvey_report::terminal_text(&text));
    if let Some(first) = failing.first() {
        eprintln!(
            "iosurvey: {} regression{} beyond {}% in the newest {} runs (first: {})",
            failing.len(),
            if failing.len() == 1 { "" } else { "s" },
            a.threshold,
            a.newest,
            iosurvey_report::visible(first)
        );
        return Ok(Outcome::IoFailed);
    }
    Ok(Outcome::Ok)
}

fn compare(a: DbCompareArgs) -> Result<Outcome, Failure> {
    let db = open_read(&a.file)?;
    let (names, sides): (Vec<String>, Vec<Vec<StoredRun>>) = match (a.label.len(), a.run.len()) {
        (2, 0) => {
            // B's plan unless one is given: the runs of A of that plan.
            let of = |label: &str, plan: Option<String>| {
                db.runs(&Filter {
                    label: Some(label.to_string()),
                    plan_hash: plan,
                    ..Filter::default()
                })
                .map_err(failure)
            };
            let plan = match &a.plan {
                Some(p) => Some(p.clone()),
                None => of(&a.label[1], None)?
                    .last()
                    .map(|r| r.record.head.plan_hash.clone()),
            };
            let sides = vec![of(&a.label[0], plan.clone())?, of(&a.label[1], plan)?];
            (a.label.clone(), sides)
        }
        (0, 2) => {
            let mut sides = Vec::new();
            for &id in &a.run {
                let r = db
                    .runs(&Filter {
                        ids: vec![id],
                        ..Filter::default()
                    })
                    .map_err(failure)?;
                sides.push(r);
            }
            (a.run.iter().map(|i| format!("run {i}")).collect(), sides)
        }
        _ => {
            return usage(anyhow!(
                "db compare: give --label twice (A, then B) or --run twice"
            ))
        }
    };
    let mut reports = Vec::new();
    for (name, runs) in names.iter().zip(&sides) {
        if runs.is_empty() {
            return usage(anyhow!(
                "db compare: {name}: no such run in {} (of that plan)",
                a.file.name()
            ));
        }
        reports.push(side_report(&db, name, runs)?);
    }
    present(&names, &reports, &db_ident(&a.file), &a.out)
}

/// One side of a comparison: its runs' reports as one report, each run's
/// repeats after the one before (so each run is a repeat of the side).
fn side_report(db: &Db, name: &str, runs: &[StoredRun]) -> Result<RunReport, Failure> {
    let mut side: Option<RunReport> = None;
    let mut repeat = 0;
    for r in runs {
        let shown = format!("{name}: run {}", r.id);
        let doc = db.document(r.id).map_err(failure)?;
        let Some(doc) =
            doc.filter(|_| r.record.head.source == iosurvey_db::record::Source::Iosurvey)
        else {
            return usage(anyhow!(
                "{shown}: has no iosurvey report to compare (a fio run, or one imported from exported lines); compare runs iosurvey recorded"
            ));
        };
        let report = parse_report(doc, &shown)?;
        let n = report.repeats.max(1);
        let mut points = report.points.clone();
        for p in &mut points {
            p.repeat += repeat;
        }
        repeat += n;
        match &mut side {
            None => side = Some(RunReport { points, ..report }),
            Some(s) => s.points.extend(points),
        }
    }
    let mut side = side.expect("a side has a run");
    side.repeats = repeat;
    Ok(side)
}

fn export(a: ExportArgs) -> Result<Outcome, Failure> {
    let to = judge("--to", a.to.as_deref().unwrap_or(std::path::Path::new("-")))
        .map_err(|e| Failure::Usage(e.into()))?;
    if db_ident(&a.file).contains(&to.ident) {
        return usage(anyhow!(
            "{}: is the database; give another file",
            to.shown()
        ));
    }
    let db = open_read(&a.file)?;
    let runs = db.runs(&a.select.filter()).map_err(failure)?;
    // To stdout, each run's lines as they are made (a fleet's history
    // need not fit in memory); to a file, whole, replaced as every output.
    let streamed = to.sink == Sink::Stdout;
    let mut body = String::new();
    for r in &runs {
        let mut rec = r.record.clone();
        rec.points = db.points(r.id).map_err(failure)?;
        iosurvey_db::export::lines(r.id, &rec, &mut body)
            .map_err(|e| Failure::Run(anyhow!("run {}: {e}", r.id)))?;
        if streamed {
            match iosurvey_session::output::write_stdout(&body) {
                Ok(()) => body.clear(),
                // Its reader has what it wanted.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(Outcome::Ok),
                Err(e) => return Err(Failure::Run(anyhow!("writing to stdout: {e}"))),
            }
        }
    }
    if !streamed {
        write_out(&to, &body, true, None)?;
    }
    Ok(Outcome::Ok)
}
