//! Outboxes: item changes bound for another service or region wait in a table of their
//! own, written in the transaction that made the change, until the request has committed;
//! [`relay`] then moves them, in the order they were written, onto the event bus. Kinesis
//! streaming destinations and global table replication each keep one.

use std::sync::Mutex;

use roto_core::{AwsError, AwsResult, Env};
use rusqlite::{OptionalExtension, Row};

/// Serialises relays, so that changes reach the bus in the order they were written.
static RELAY: Mutex<()> = Mutex::new(());

/// Takes every row of the outbox `table` (whose key is `seq`), oldest first, as `read`
/// gives them (from `columns`), and hands each to `publish`. An empty outbox costs one read.
pub fn relay<T>(
    env: &Env,
    table: &str,
    columns: &str,
    read: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    mut publish: impl FnMut(T),
) -> AwsResult<()> {
    let waiting = env.store.read(|c| {
        c.prepare_cached(&format!("SELECT 1 FROM {table} LIMIT 1"))?
            .query_row([], |_| Ok(()))
            .optional()
            .map_err(AwsError::from)
    })?;
    if waiting.is_none() {
        return Ok(());
    }
    let _order = RELAY.lock().unwrap_or_else(|p| p.into_inner());
    let pending = env.store.transaction(|tx| {
        let rows: Vec<(i64, T)> = tx
            .prepare_cached(&format!("SELECT seq, {columns} FROM {table} ORDER BY seq"))?
            .query_map([], |r| Ok((r.get(0)?, read(r)?)))?
            .collect::<rusqlite::Result<_>>()?;
        if let Some((last, _)) = rows.last() {
            tx.prepare_cached(&format!("DELETE FROM {table} WHERE seq <= ?1"))?
                .execute([last])?;
        }
        Ok::<_, AwsError>(rows)
    })?;
    for (_, row) in pending {
        publish(row);
    }
    Ok(())
}
