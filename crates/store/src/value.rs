//! Values as the store passes them to and reads them from either engine: five kinds, with
//! the conversions each driver needs, and `params![...]` to write a statement's parameters.

/// A value passed to or read from a database.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer (also flags, 0 or 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

macro_rules! value_from {
    ($($t:ty => $e:expr),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Value {
                let f: fn($t) -> Value = $e;
                f(v)
            }
        })*
    };
}

value_from! {
    i64 => Value::Int,
    i32 => |v| Value::Int(v.into()),
    u32 => |v| Value::Int(v.into()),
    bool => |v| Value::Int(v.into()),
    f64 => Value::Real,
    String => Value::Text,
    &str => |v| Value::Text(v.to_string()),
    &String => |v| Value::Text(v.clone()),
    Vec<u8> => Value::Blob,
    &[u8] => |v| Value::Blob(v.to_vec()),
    &Vec<u8> => |v| Value::Blob(v.clone()),
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// The parameters of a statement, as a slice of [`Value`]s: `params![a, b]`.
macro_rules! params {
    ($($x:expr),* $(,)?) => {
        &[$($crate::value::Value::from($x)),*] as &[$crate::value::Value]
    };
}
pub(crate) use params;

/// A column's value of another kind than the one read there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("expected {expected}, found {found:?}")]
pub struct WrongKind {
    /// The kind read, as a phrase: `an integer`, `a number`, `text`, `bytes`.
    pub expected: &'static str,
    /// The value found.
    pub found: Value,
}

/// A [`WrongKind`] for `found` where `expected` was read.
fn wrong<T>(expected: &'static str, found: Value) -> Result<T, WrongKind> {
    Err(WrongKind { expected, found })
}

/// Conversion of a column's value into a Rust type.
pub trait FromValue: Sized {
    /// The value as `Self`, or what was found instead.
    fn from_value(v: Value) -> Result<Self, WrongKind>;
}

impl FromValue for Value {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        Ok(v)
    }
}

impl FromValue for i64 {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        match v {
            Value::Int(i) => Ok(i),
            other => wrong("an integer", other),
        }
    }
}

impl FromValue for f64 {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        match v {
            Value::Real(x) => Ok(x),
            Value::Int(i) => Ok(i as f64),
            other => wrong("a number", other),
        }
    }
}

impl FromValue for String {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        match v {
            Value::Text(s) => Ok(s),
            other => wrong("text", other),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        match v {
            Value::Blob(b) => Ok(b),
            other => wrong("bytes", other),
        }
    }
}

impl FromValue for bool {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        i64::from_value(v).map(|i| i != 0)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: Value) -> Result<Self, WrongKind> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(x) => ValueRef::Real(*x),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

/// Values take the type PostgreSQL inferred for their placeholder (an integer bound where a
/// boolean or a float is expected becomes one), since the two engines type values differently.
impl postgres::types::ToSql for Value {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, BoxError> {
        use postgres::types::{IsNull, Type};
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => Err(format!("cannot pass an integer as {ty}").into()),
            },
            Value::Real(x) => match *ty {
                Type::FLOAT8 => x.to_sql(ty, out),
                Type::FLOAT4 => (*x as f32).to_sql(ty, out),
                _ => Err(format!("cannot pass a number as {ty}").into()),
            },
            Value::Text(s) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    s.as_str().to_sql(ty, out)
                }
                _ => Err(format!("cannot pass text as {ty}").into()),
            },
            Value::Blob(b) => match *ty {
                Type::BYTEA => b.as_slice().to_sql(ty, out),
                _ => Err(format!("cannot pass bytes as {ty}").into()),
            },
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

impl<'a> postgres::types::FromSql<'a> for Value {
    fn from_sql(ty: &postgres::types::Type, raw: &'a [u8]) -> Result<Value, BoxError> {
        use postgres::types::Type;
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                Value::Text(String::from_sql(ty, raw)?)
            }
            Type::BYTEA => Value::Blob(Vec::<u8>::from_sql(ty, raw)?),
            _ => return Err(format!("the store reads no column of type {ty}").into()),
        })
    }

    fn from_sql_null(_: &postgres::types::Type) -> Result<Value, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
}
