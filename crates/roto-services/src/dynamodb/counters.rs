//! A table's live `ItemCount` and `TableSizeBytes`: exact whenever they are read, without
//! a write of the table's row for every item write.
//!
//! DynamoDB refreshes the two figures about every six hours; Roto's users (and tests) read
//! them right after their writes, so they stay exact. Writing them into the table's row in
//! every item write put that row's page into every commit: one more page to write, and on
//! disk one more copy in the WAL for SQLite's WAL index to probe past on the next commit
//! of it. Instead the row holds the figures as of the last fold, and a write adds its
//! difference to a `TEMP` table of the write connection (`temp.ddb_live_counts`): memory
//! that never reaches the WAL, yet commits and rolls back with the write's transaction.
//! [`read`] adds the two; [`fold`] moves the differences into the rows, at a graceful stop.
//!
//! The differences die with the process. A table that has one also has a row in
//! `ddb_counts_unfolded`, written by the transaction that created its difference (and only
//! then, so an item write normally touches no page of it), and deleted by the fold. At
//! start-up [`recount`] counts the items of every table that still has one, which only a
//! process that ended without its fold (`kill -9`, a crash, power loss) leaves: slower to
//! open than the last figures, but never wrong.
//!
//! The difference table lives on the write connection only: the figures are read there
//! (DescribeTable and the operations that answer a table description write or use
//! [`Store::with`](roto_core::store::Store::with)), never on the read-only connections.

use roto_core::store::Cached;
use roto_core::{AwsResult, Context};
use rusqlite::{Connection, OptionalExtension};

/// The tables this module keeps: the persistent marks, and the differences (in memory,
/// one per write connection).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_counts_unfolded (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (account, region, name)
) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS ddb_live_counts (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    items INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
) WITHOUT ROWID;
";

/// A table's item count and billed size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// `ItemCount`.
    pub items: i64,
    /// `TableSizeBytes`.
    pub bytes: i64,
}

/// Adds an item write's difference to a table's figures (in the write's transaction).
pub fn add(conn: &Connection, ctx: &Context, name: &str, items: i64, bytes: i64) -> AwsResult<()> {
    let params = rusqlite::params![ctx.account, ctx.region, name, items, bytes];
    let changed = conn.execute_cached(
        "UPDATE temp.ddb_live_counts SET items = items + ?4, bytes = bytes + ?5
         WHERE account = ?1 AND region = ?2 AND name = ?3",
        params,
    )?;
    if changed == 0 {
        conn.execute_cached(
            "INSERT INTO temp.ddb_live_counts (account, region, name, items, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params,
        )?;
        conn.execute_cached(
            "INSERT OR IGNORE INTO ddb_counts_unfolded (account, region, name)
             VALUES (?1, ?2, ?3)",
            rusqlite::params![ctx.account, ctx.region, name],
        )?;
    }
    Ok(())
}

/// Forgets the difference of a table being created under `name` (one of a deleted table of
/// that name may remain, for example after a reset of the store).
pub fn clear(conn: &Connection, ctx: &Context, name: &str) -> AwsResult<()> {
    conn.execute_cached(
        "DELETE FROM temp.ddb_live_counts WHERE account = ?1 AND region = ?2 AND name = ?3",
        rusqlite::params![ctx.account, ctx.region, name],
    )?;
    Ok(())
}

/// A table's exact figures (`None` without the table), on the write connection.
pub fn read(conn: &Connection, ctx: &Context, name: &str) -> AwsResult<Option<Counts>> {
    Ok(conn
        .query_row_cached(
            "SELECT t.item_count + COALESCE(d.items, 0), t.size_bytes + COALESCE(d.bytes, 0)
             FROM ddb_tables t LEFT JOIN temp.ddb_live_counts d ON d.account = t.account
             AND d.region = t.region AND d.name = t.name
             WHERE t.account = ?1 AND t.region = ?2 AND t.name = ?3",
            rusqlite::params![ctx.account, ctx.region, name],
            |r| {
                Ok(Counts {
                    items: r.get(0)?,
                    bytes: r.get(1)?,
                })
            },
        )
        .optional()?)
}

/// Moves every difference into its table's row, and drops the marks (one transaction).
pub fn fold(conn: &Connection) -> AwsResult<()> {
    conn.execute_batch(
        "UPDATE ddb_tables SET item_count = item_count + d.items,
         size_bytes = size_bytes + d.bytes
         FROM temp.ddb_live_counts d WHERE d.account = ddb_tables.account
         AND d.region = ddb_tables.region AND d.name = ddb_tables.name;
         DELETE FROM temp.ddb_live_counts;
         DELETE FROM ddb_counts_unfolded;",
    )?;
    Ok(())
}

/// Counts again the items of the tables a process left unfolded, and drops the marks (at
/// start-up, before any write).
pub fn recount(conn: &Connection) -> AwsResult<()> {
    conn.execute_batch(
        "UPDATE ddb_tables SET
         item_count = (SELECT COUNT(*) FROM ddb_items i WHERE i.account = ddb_tables.account
                       AND i.region = ddb_tables.region AND i.table_name = ddb_tables.name),
         size_bytes = (SELECT COALESCE(SUM(size), 0) FROM ddb_items i
                       WHERE i.account = ddb_tables.account AND i.region = ddb_tables.region
                       AND i.table_name = ddb_tables.name)
         WHERE EXISTS (SELECT 1 FROM ddb_counts_unfolded u WHERE u.account = ddb_tables.account
                       AND u.region = ddb_tables.region AND u.name = ddb_tables.name);
         DELETE FROM ddb_counts_unfolded;",
    )?;
    Ok(())
}
