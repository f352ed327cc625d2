//! Single statements through the connection's prepared-statement cache.
//!
//! rusqlite's `Connection::execute` and `Connection::query_row` prepare their SQL on every
//! call: SQLite tokenises, parses and plans it again, which for the short statements of a
//! request path costs more than running them. The store's connections keep
//! `STATEMENT_CACHE` prepared statements each; these methods look the SQL up there first.
//! Schema statements, run once, keep using `execute` and `execute_batch` so that they do
//! not push the request path's statements out of the cache.

use rusqlite::{Connection, Params, Row};

/// `execute` and `query_row` that reuse the connection's prepared statements.
pub trait Cached {
    /// Runs one statement that changes rows; how many it changed.
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;

    /// Runs one query and maps its first row (`QueryReturnedNoRows` without one).
    fn query_row_cached<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn query_row_cached<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}
