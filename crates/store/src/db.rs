//! One interface over the two database engines (SQLite, PostgreSQL), so that every query of
//! the store is written once: SQL with numbered placeholders `?1`, `?2` (rewritten to `$1` for
//! PostgreSQL), values of five kinds ([`Value`]) and rows read by column index ([`Row`]).
//!
//! The portable subset the store keeps to: BIGINT/INTEGER, DOUBLE PRECISION/REAL, TEXT,
//! BYTEA/BLOB, flags as integers 0/1, `INSERT ... RETURNING`, `ON CONFLICT ... DO`, no
//! `rowid`. What differs lives here: the engine-specific snippets `{now_ms}` (the server's
//! clock, ms since the epoch) and `{skip_locked}` (row locks PostgreSQL takes and SQLite, which
//! locks the whole file, does not need), transactions, and bulk inserts.

pub(crate) use super::value::params;
pub use super::value::{FromValue, Value};
use crate::error::{Context, Result, StoreError};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// The database engine behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A row of a result, read by column index.
pub enum Row<'a> {
    /// A row of an SQLite statement.
    Sqlite(&'a rusqlite::Row<'a>),
    /// A row of a PostgreSQL query.
    Postgres(&'a postgres::Row),
}

impl Row<'_> {
    /// Column `i` as a [`Value`].
    pub fn value(&self, i: usize) -> Result<Value> {
        Ok(match self {
            Row::Sqlite(r) => {
                use rusqlite::types::ValueRef;
                match r.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                }
            }
            Row::Postgres(r) => r.try_get::<_, Value>(i)?,
        })
    }

    /// Column `i` as a `T`.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        T::from_value(self.value(i)?).map_err(|why| StoreError::Column { index: i, why })
    }
}

/// A PostgreSQL connection with its prepared statements.
pub struct Pg {
    client: RefCell<postgres::Client>,
    statements: RefCell<HashMap<String, postgres::Statement>>,
}

/// Prepared statements kept per PostgreSQL connection before the cache starts over.
const STATEMENT_CACHE: usize = 256;

impl Pg {
    /// Wraps a connected client.
    pub fn new(client: postgres::Client) -> Pg {
        Pg {
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
        }
    }

    /// The prepared statement of `sql` (portable text), prepared once.
    fn statement(&self, sql: &str) -> Result<postgres::Statement> {
        if let Some(st) = self.statements.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .borrow_mut()
            .prepare(&translate(sql, Engine::Postgres))?;
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// An open database of either engine.
pub enum Db {
    /// SQLite.
    Sqlite(rusqlite::Connection),
    /// PostgreSQL (boxed: a client is several times the size of an SQLite connection).
    Postgres(Box<Pg>),
}

/// Rewrites portable SQL for `engine`: `?N` placeholders become `$N` for PostgreSQL, and the
/// engine-specific snippets are filled in. Quoted text is left alone.
pub fn translate(sql: &str, engine: Engine) -> String {
    let (now_ms, skip_locked) = match engine {
        Engine::Sqlite => (
            "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
            "",
        ),
        Engine::Postgres => (
            "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
            "FOR UPDATE SKIP LOCKED",
        ),
    };
    let sql = sql
        .replace("{now_ms}", now_ms)
        .replace("{skip_locked}", skip_locked);
    if engine == Engine::Sqlite {
        return sql;
    }
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// Rewrites schema DDL written for SQLite into PostgreSQL's types: `INTEGER PRIMARY KEY`
/// becomes an identity column, `INTEGER` BIGINT, `REAL` DOUBLE PRECISION, `BLOB` BYTEA.
/// Comments (after `--`) are left alone.
pub fn translate_ddl(ddl: &str) -> String {
    let mut out = String::with_capacity(ddl.len() + 512);
    for line in ddl.lines() {
        let (code, comment) = match line.find("--") {
            Some(i) => line.split_at(i),
            None => (line, ""),
        };
        let code = code.replace(
            "INTEGER PRIMARY KEY",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        );
        let mut words = String::with_capacity(code.len());
        let mut word = String::new();
        let flush = |word: &mut String, words: &mut String| {
            words.push_str(match word.as_str() {
                "INTEGER" => "BIGINT",
                "REAL" => "DOUBLE PRECISION",
                "BLOB" => "BYTEA",
                w => w,
            });
            word.clear();
        };
        for c in code.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut words);
                words.push(c);
            }
        }
        flush(&mut word, &mut words);
        out.push_str(&words);
        out.push_str(comment);
        out.push('\n');
    }
    out
}

thread_local! {
    /// Whether this thread is inside [`Db::transaction`] (they do not nest).
    static IN_TRANSACTION: Cell<bool> = const { Cell::new(false) };
}

impl Db {
    /// The engine.
    pub fn engine(&self) -> Engine {
        match self {
            Db::Sqlite(_) => Engine::Sqlite,
            Db::Postgres(_) => Engine::Postgres,
        }
    }

    /// Runs one statement; returns the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[Value]) -> Result<u64> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(&lite(sql))?;
                Ok(st.execute(rusqlite::params_from_iter(params))? as u64)
            }
            Db::Postgres(pg) => {
                let st = pg.statement(sql)?;
                Ok(pg.client.borrow_mut().execute(&st, &refs(params))?)
            }
        }
    }

    /// Runs several statements without parameters, in the engine's own dialect.
    pub fn batch(&self, sql: &str) -> Result<()> {
        match self {
            Db::Sqlite(c) => c.execute_batch(sql)?,
            Db::Postgres(pg) => pg.client.borrow_mut().batch_execute(sql)?,
        }
        Ok(())
    }

    /// Calls `f` on every row of a query, in order, as the rows arrive.
    pub fn for_each(
        &self,
        sql: &str,
        params: &[Value],
        mut f: impl FnMut(&Row) -> Result<()>,
    ) -> Result<()> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(&lite(sql))?;
                let mut rows = st.query(rusqlite::params_from_iter(params))?;
                while let Some(r) = rows.next()? {
                    f(&Row::Sqlite(r))?;
                }
            }
            Db::Postgres(pg) => {
                use postgres::fallible_iterator::FallibleIterator;
                let st = pg.statement(sql)?;
                let mut client = pg.client.borrow_mut();
                let mut rows = client.query_raw(&st, params.iter())?;
                while let Some(r) = rows.next()? {
                    f(&Row::Postgres(&r))?;
                }
            }
        }
        Ok(())
    }

    /// Every row of a query, each turned into a `T` by `f`.
    pub fn query<T>(
        &self,
        sql: &str,
        params: &[Value],
        mut f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.for_each(sql, params, |r| {
            out.push(f(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, if any.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut f = Some(f);
        let mut out = None;
        self.for_each(sql, params, |r| {
            if let Some(f) = f.take() {
                out = Some(f(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, which must exist.
    pub fn query_one<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?.ok_or(StoreError::NoRow)
    }

    /// The column names of a query's result.
    pub fn columns(&self, sql: &str) -> Result<Vec<String>> {
        Ok(match self {
            Db::Sqlite(c) => c
                .prepare_cached(&lite(sql))?
                .column_names()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Db::Postgres(pg) => pg
                .statement(sql)?
                .columns()
                .iter()
                .map(|c| c.name().to_string())
                .collect(),
        })
    }

    /// Runs `f` in one transaction: committed if `f` succeeds, rolled back if it fails.
    /// SQLite takes the write lock at once (BEGIN IMMEDIATE), so two writers queue up rather
    /// than fail when a read inside the transaction would have to become a write.
    pub fn transaction<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if IN_TRANSACTION.with(|t| t.replace(true)) {
            IN_TRANSACTION.with(|t| t.set(false));
            return Err(StoreError::Internal("nested store transaction".into()));
        }
        let result = (|| {
            self.batch(match self.engine() {
                Engine::Sqlite => "BEGIN IMMEDIATE",
                Engine::Postgres => "BEGIN",
            })?;
            match f() {
                Ok(v) => {
                    self.batch("COMMIT")?;
                    Ok(v)
                }
                Err(e) => {
                    let _ = self.batch("ROLLBACK");
                    Err(e)
                }
            }
        })();
        IN_TRANSACTION.with(|t| t.set(false));
        result
    }

    /// Inserts `rows` (each with one value per column of `columns`) into `table`: one prepared
    /// statement per row for SQLite; for PostgreSQL a multi-row statement for a few rows and
    /// `COPY ... FROM STDIN BINARY` for more (one round trip either way).
    pub fn insert_rows(&self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let quoted: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
        let head = format!("INSERT INTO {table} ({}) VALUES ", quoted.join(", "));
        let row_sql = |first: usize| {
            let marks: Vec<String> = (0..columns.len())
                .map(|c| format!("?{}", first + c + 1))
                .collect();
            format!("({})", marks.join(", "))
        };
        match self {
            Db::Sqlite(_) => {
                let sql = head + &row_sql(0);
                for r in rows {
                    self.execute(&sql, r)
                        .with_context(|| format!("cannot insert into {table}"))?;
                }
            }
            Db::Postgres(pg) if rows.len() >= COPY_ROWS => pg
                .copy_in(table, columns, rows)
                .with_context(|| format!("cannot copy rows into {table}"))?,
            Db::Postgres(_) => {
                let values: Vec<String> = (0..rows.len())
                    .map(|i| row_sql(i * columns.len()))
                    .collect();
                let sql = format!("{head}{}", values.join(", "));
                let flat: Vec<Value> = rows.iter().flatten().cloned().collect();
                self.execute(&sql, &flat)
                    .with_context(|| format!("cannot insert into {table}"))?;
            }
        }
        Ok(())
    }
}

/// From this many rows on, PostgreSQL gets them by COPY rather than a multi-row INSERT.
const COPY_ROWS: usize = 16;

impl Pg {
    /// `rows` into `table` by binary COPY; the columns' types come from the table itself.
    fn copy_in(&self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<()> {
        let cols = columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        let types = self
            .statement(&format!("SELECT {cols} FROM {table} LIMIT 0"))?
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect::<Vec<_>>();
        let mut client = self.client.borrow_mut();
        let writer = client.copy_in(&format!("COPY {table} ({cols}) FROM STDIN BINARY"))?;
        let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(writer, &types);
        for r in rows {
            writer.write(&refs(r))?;
        }
        writer.finish()?;
        Ok(())
    }
}

/// `name` as a quoted SQL identifier (`"name"`, any `"` doubled), the same on both engines:
/// a column name, even one checked against the schema, never becomes SQL.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `sql` for SQLite: unchanged unless it holds an engine-specific snippet.
fn lite(sql: &str) -> std::borrow::Cow<'_, str> {
    if sql.contains('{') {
        std::borrow::Cow::Owned(translate(sql, Engine::Sqlite))
    } else {
        std::borrow::Cow::Borrowed(sql)
    }
}

/// Parameters as postgres wants them.
fn refs(params: &[Value]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

#[cfg(test)]
#[path = "db_tests.rs"]
mod tests;
