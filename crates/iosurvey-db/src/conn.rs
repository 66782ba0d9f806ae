//! One connection to either database, SQLite or PostgreSQL, with the few
//! operations the queries need (a batch, a statement, a query) over one
//! value type: the queries are written once, in SQLite's spelling
//! (`?1` placeholders), and PostgreSQL's (`$1`) is made from it.

use crate::value::{Row, SqlError, Value};
use postgres::types::{ToSql, Type};
use std::cell::RefCell;
use std::collections::HashMap;

/// An open connection.
pub(crate) enum Conn {
    Lite(rusqlite::Connection),
    Pg(Box<RefCell<PgConn>>),
}

/// A PostgreSQL client with its statements prepared once each.
pub(crate) struct PgConn {
    pub client: postgres::Client,
    /// The schema the tables are in (a checked identifier).
    pub schema: String,
    prepared: HashMap<String, postgres::Statement>,
}

impl PgConn {
    pub fn new(client: postgres::Client, schema: String) -> PgConn {
        PgConn {
            client,
            schema,
            prepared: HashMap::new(),
        }
    }

    fn statement(&mut self, sql: &str) -> Result<postgres::Statement, SqlError> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&dollars(sql))?;
        self.prepared.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

/// `sql` with SQLite's numbered placeholders (`?1`) spelt as
/// PostgreSQL's (`$1`). The queries have no `?` inside a literal.
fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl Conn {
    /// Statements without arguments, one after the other.
    pub fn batch(&self, sql: &str) -> Result<(), SqlError> {
        match self {
            Conn::Lite(c) => Ok(c.execute_batch(sql)?),
            Conn::Pg(p) => Ok(p.borrow_mut().client.batch_execute(sql)?),
        }
    }

    /// One statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, args: &[Value]) -> Result<u64, SqlError> {
        match self {
            Conn::Lite(c) => {
                let mut st = c.prepare_cached(sql)?;
                Ok(st.execute(rusqlite::params_from_iter(args))? as u64)
            }
            Conn::Pg(p) => {
                let mut p = p.borrow_mut();
                let st = p.statement(sql)?;
                let bound = bind(args, st.params())?;
                let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
                Ok(p.client.execute(&st, &refs)?)
            }
        }
    }

    /// The rows of one query.
    pub fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, SqlError> {
        match self {
            Conn::Lite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let n = st.column_count();
                let mut rows = st.query(rusqlite::params_from_iter(args))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut vals = Vec::with_capacity(n);
                    for i in 0..n {
                        vals.push(Value::from(r.get_ref(i)?));
                    }
                    out.push(Row(vals));
                }
                Ok(out)
            }
            Conn::Pg(p) => {
                let mut p = p.borrow_mut();
                let st = p.statement(sql)?;
                let bound = bind(args, st.params())?;
                let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
                p.client
                    .query(&st, &refs)?
                    .iter()
                    .map(pg_row)
                    .collect::<Result<_, _>>()
            }
        }
    }

    /// The first row of a query, if any.
    pub fn query_opt(&self, sql: &str, args: &[Value]) -> Result<Option<Row>, SqlError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// Starts a transaction that writes, waiting for other writers first
    /// (SQLite: the write lock taken at once; PostgreSQL: an advisory
    /// lock of the schema, held until the transaction ends), so that
    /// writers queue up and the run key is looked up race-free.
    pub fn begin_write(&self) -> Result<(), SqlError> {
        match self {
            Conn::Lite(c) => Ok(c.execute_batch("BEGIN IMMEDIATE")?),
            Conn::Pg(p) => {
                let mut p = p.borrow_mut();
                let schema = p.schema.clone();
                p.client.batch_execute("BEGIN")?;
                p.client.execute(
                    "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                    &[&crate::schema::APPLICATION_ID, &schema],
                )?;
                Ok(())
            }
        }
    }

    /// What makes a text ordered byte by byte (SQLite's own order).
    pub fn bytewise(&self) -> &'static str {
        match self {
            Conn::Lite(_) => "",
            Conn::Pg(_) => " COLLATE \"C\"",
        }
    }

    /// The column that keeps the order rows were written in.
    pub fn written_order(&self) -> &'static str {
        match self {
            Conn::Lite(_) => "rowid",
            Conn::Pg(_) => "seq",
        }
    }
}

/// `args` as the types PostgreSQL asks for (`types`, the statement's).
fn bind(args: &[Value], types: &[Type]) -> Result<Vec<Box<dyn ToSql + Sync>>, SqlError> {
    args.iter()
        .zip(types)
        .map(|(v, t)| bind_one(v, t))
        .collect()
}

fn bind_one(v: &Value, t: &Type) -> Result<Box<dyn ToSql + Sync>, SqlError> {
    let wrong = || SqlError::Type(format!("{v:?} given where the database wants {t}"));
    Ok(match (v, t) {
        (Value::Null, &Type::INT8) => Box::new(None::<i64>),
        (Value::Null, &Type::INT4) => Box::new(None::<i32>),
        (Value::Null, &Type::FLOAT8) => Box::new(None::<f64>),
        (Value::Null, &Type::BOOL) => Box::new(None::<bool>),
        (Value::Null, _) => Box::new(None::<String>),
        (Value::Int(i), &Type::INT8) => Box::new(*i),
        (Value::Int(i), &Type::INT4) => Box::new(i32::try_from(*i).map_err(|_| wrong())?),
        (Value::Int(i), &Type::FLOAT8) => Box::new(*i as f64),
        (Value::Int(i), &Type::BOOL) => Box::new(*i != 0),
        (Value::Int(i), &Type::TEXT) => Box::new(i.to_string()),
        (Value::Real(f), &Type::FLOAT8) => Box::new(*f),
        (Value::Real(f), &Type::TEXT) => Box::new(f.to_string()),
        (Value::Text(s), _) if s.contains('\0') => {
            return Err(SqlError::Type(crate::value::NUL_TEXT.into()))
        }
        (Value::Text(s), &Type::TEXT | &Type::VARCHAR | &Type::NAME) => Box::new(s.clone()),
        (Value::TooBig(u), _) => {
            return Err(SqlError::Type(format!(
                "{u} is beyond the database's 64-bit signed integers"
            )))
        }
        _ => return Err(wrong()),
    })
}

/// A PostgreSQL row as values.
fn pg_row(r: &postgres::Row) -> Result<Row, SqlError> {
    let mut vals = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        let t = c.type_();
        let v = if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(i)?.map(Value::Int)
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)?
                .map(|x| Value::Int(x.into()))
        } else if *t == Type::INT2 {
            r.try_get::<_, Option<i16>>(i)?
                .map(|x| Value::Int(x.into()))
        } else if *t == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i)?.map(Value::Real)
        } else if *t == Type::FLOAT4 {
            r.try_get::<_, Option<f32>>(i)?
                .map(|x| Value::Real(x.into()))
        } else if *t == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)?
                .map(|x| Value::Int(x.into()))
        } else if [Type::TEXT, Type::VARCHAR, Type::NAME, Type::BPCHAR].contains(t) {
            r.try_get::<_, Option<String>>(i)?.map(Value::Text)
        } else {
            return Err(SqlError::Type(format!(
                "column {} is of type {t}, which iosurvey does not read",
                c.name()
            )));
        };
        vals.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(vals))
}

#[cfg(test)]
mod tests {
    use super::dollars;

    #[test]
    fn numbered_placeholders_become_dollars_and_nothing_else_changes() {
        assert_eq!(
            dollars("SELECT a FROM t WHERE b = ?1 AND c IN (?2, ?13) AND d = '?'"),
            "SELECT a FROM t WHERE b = $1 AND c IN ($2, $13) AND d = '?'"
        );
    }
}
