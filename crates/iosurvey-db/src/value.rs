//! The values the queries pass and read, the same for SQLite and
//! PostgreSQL: null, a 64-bit integer, a double or a text, as SQLite
//! stores them; read back into Rust's types with the checks rusqlite
//! makes (an integer out of range is an error, not a wrapped number).

use rusqlite::types::{ToSqlOutput, ValueRef};

/// A value in a row or an argument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// An unsigned integer beyond `i64::MAX`: refused when bound.
    TooBig(u64),
}

/// An error of either database, or of a value of the wrong type.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SqlError {
    #[error("{0}")]
    Lite(#[from] rusqlite::Error),
    #[error("{}", pg_text(.0))]
    Pg(#[from] postgres::Error),
    #[error("{0}")]
    Type(String),
}

/// What PostgreSQL said: the server's message (with its detail and
/// hint) when it said one, else the client's.
pub(crate) fn pg_text(e: &postgres::Error) -> String {
    pg_text_lines(e).replace(['\n', '\r'], " ")
}

fn pg_text_lines(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => {
            let mut s = d.message().to_string();
            if let Some(x) = d.detail() {
                s.push_str(&format!(" ({x})"));
            }
            if let Some(x) = d.hint() {
                s.push_str(&format!("; {x}"));
            }
            s
        }
        None => {
            // The client's error, with its causes (a refused connection).
            let mut s = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                let t = c.to_string();
                if !s.contains(&t) {
                    s.push_str(&format!(": {t}"));
                }
                cause = c.source();
            }
            s
        }
    }
}

impl From<ValueRef<'_>> for Value {
    fn from(v: ValueRef<'_>) -> Value {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                Value::Text(String::from_utf8_lossy(t).into_owned())
            }
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            Value::Int(i) => ToSqlOutput::Owned((*i).into()),
            Value::Real(f) => ToSqlOutput::Owned((*f).into()),
            // PostgreSQL's text holds no NUL: refused on both, alike.
            Value::Text(s) if s.contains('\0') => {
                return Err(rusqlite::Error::ToSqlConversionFailure(NUL_TEXT.into()))
            }
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::TooBig(u) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    format!("{u} is beyond 64-bit signed integers").into(),
                ))
            }
        })
    }
}

/// The refusal of a text with a NUL character in it (a label, a host name
/// of an imported report), which PostgreSQL cannot hold: refused by SQLite
/// too, so that both answer the same.
pub(crate) const NUL_TEXT: &str = "a text holds a NUL character, which the database cannot keep";

/// What can be passed to a query.
pub(crate) trait ToValue {
    fn to_value(&self) -> Value;
}

macro_rules! int_to_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(i64::from(*self))
            }
        }
    )*};
}
int_to_value!(i64, i32, u32, bool);

impl ToValue for u64 {
    fn to_value(&self) -> Value {
        i64::try_from(*self).map_or(Value::TooBig(*self), Value::Int)
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

/// The arguments of a query: `vals![a, b]` (each taken by reference).
macro_rules! vals {
    ($($v:expr),* $(,)?) => {
        [$($crate::value::ToValue::to_value(&$v)),*]
    };
}
pub(crate) use vals;

/// A row read back.
pub(crate) struct Row(pub Vec<Value>);

impl Row {
    /// Column `i` as a `T`.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T, SqlError> {
        let v = self.0.get(i).unwrap_or(&Value::Null);
        T::from_value(v).map_err(|what| SqlError::Type(format!("column {i}: {what}")))
    }
}

/// What can be read from a column.
pub(crate) trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self, String>;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<i64, String> {
        match v {
            Value::Int(i) => Ok(*i),
            other => Err(format!("{other:?} is not an integer")),
        }
    }
}

macro_rules! int_from_value {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<$t, String> {
                let i = i64::from_value(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range of {}", stringify!($t)))
            }
        }
    )*};
}
int_from_value!(u64, u32, i32);

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<bool, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<f64, String> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            other => Err(format!("{other:?} is not a number")),
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<String, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => Err(format!("{other:?} is not a text")),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Option<T>, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}
