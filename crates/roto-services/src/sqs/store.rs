//! SQS's tables and every query over them.
//!
//! A queue is one `sqs_queues` row (its effective settable attributes as a JSON object, its
//! tags, its FIFO sequence counter). A message is one `sqs_messages` row whose `visible_at`
//! deadline carries both the delivery delay and the visibility timeout: a message is
//! visible when `visible_at <= now`, delayed when it is not yet visible and was never
//! received, and in flight when it is not visible and was received. `seq` orders messages
//! (FIFO order, and roughly send order for standard queues). `sqs_dedup` remembers FIFO
//! deduplication ids for five minutes. Retention is enforced lazily: expired messages are
//! purged whenever a queue's messages are read.
//!
//! Every per-request query is an index seek whose cost does not grow with the queue's depth:
//! a receive walks `sqs_messages_order` in `seq` order and stops after its `LIMIT`, and the
//! lazy purges seek the expiry indexes (`plans_seek_whatever_the_depth` checks the plans).

use std::collections::BTreeMap;

use roto_core::store::Cached;
use roto_core::value::EpochMillis;
use roto_core::AwsResult;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// The schema, created idempotently at start.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sqs_queues (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    fifo INTEGER NOT NULL,
    attributes TEXT NOT NULL,
    tags TEXT NOT NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    sequence INTEGER NOT NULL DEFAULT 0,
    UNIQUE (account, region, name)
);
CREATE TABLE IF NOT EXISTS sqs_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    queue_id INTEGER NOT NULL REFERENCES sqs_queues(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL,
    body TEXT NOT NULL,
    attributes TEXT NOT NULL,
    system_attributes TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    visible_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    first_receive_at INTEGER,
    group_id TEXT,
    dedup_id TEXT,
    sequence_number TEXT,
    dead_letter_source TEXT
);
CREATE INDEX IF NOT EXISTS sqs_messages_visible ON sqs_messages (queue_id, visible_at);
CREATE INDEX IF NOT EXISTS sqs_messages_id ON sqs_messages (queue_id, message_id);
CREATE INDEX IF NOT EXISTS sqs_messages_order ON sqs_messages (queue_id, seq, visible_at);
CREATE INDEX IF NOT EXISTS sqs_messages_expiry ON sqs_messages (queue_id, expires_at);
CREATE TABLE IF NOT EXISTS sqs_dedup (
    queue_id INTEGER NOT NULL REFERENCES sqs_queues(id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    dedup_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    sequence_number TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, scope, dedup_id)
);
CREATE INDEX IF NOT EXISTS sqs_dedup_expiry ON sqs_dedup (queue_id, expires_at);
CREATE TABLE IF NOT EXISTS sqs_move_tasks (
    handle TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    source_arn TEXT NOT NULL,
    destination_arn TEXT,
    rate INTEGER,
    status TEXT NOT NULL,
    moved INTEGER NOT NULL,
    to_move INTEGER NOT NULL,
    started INTEGER NOT NULL
);
";

/// A queue as stored.
#[derive(Debug, Clone)]
pub struct Queue {
    /// The row id (keys messages and long-poll wake-ups).
    pub id: i64,
    /// The owning account.
    pub account: String,
    /// The region.
    pub region: String,
    /// The queue name (`.fifo` included).
    pub name: String,
    /// Whether this is a FIFO queue.
    pub fifo: bool,
    /// The effective settable attributes, defaults filled in.
    pub attributes: BTreeMap<String, String>,
    /// Creation time.
    pub created: EpochMillis,
    /// Last attribute change.
    pub modified: EpochMillis,
}

impl Queue {
    /// The queue's ARN.
    pub fn arn(&self) -> String {
        format!("arn:aws:sqs:{}:{}:{}", self.region, self.account, self.name)
    }

    /// An integer attribute (`VisibilityTimeout`), 0 when absent.
    pub fn int_attribute(&self, name: &str) -> i64 {
        self.attributes
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// A boolean attribute (`ContentBasedDeduplication`).
    pub fn bool_attribute(&self, name: &str) -> bool {
        self.attributes.get(name).is_some_and(|v| v == "true")
    }
}

const QUEUE_COLUMNS: &str = "id, account, region, name, fifo, attributes, created, modified";

fn queue_row(row: &Row<'_>) -> rusqlite::Result<Queue> {
    let attributes: String = row.get(5)?;
    Ok(Queue {
        id: row.get(0)?,
        account: row.get(1)?,
        region: row.get(2)?,
        name: row.get(3)?,
        fifo: row.get(4)?,
        attributes: serde_json::from_str(&attributes).unwrap_or_default(),
        created: row.get(6)?,
        modified: row.get(7)?,
    })
}

/// The queue `name` in an account and region.
pub fn find_queue(
    c: &Connection,
    account: &str,
    region: &str,
    name: &str,
) -> rusqlite::Result<Option<Queue>> {
    c.query_row_cached(
        &format!(
            "SELECT {QUEUE_COLUMNS} FROM sqs_queues WHERE account = ?1 AND region = ?2 AND name = ?3"
        ),
        params![account, region, name],
        queue_row,
    )
    .optional()
}

/// The queue with row id `id`, if it still exists.
pub fn queue_by_id(c: &Connection, id: i64) -> rusqlite::Result<Option<Queue>> {
    c.query_row_cached(
        &format!("SELECT {QUEUE_COLUMNS} FROM sqs_queues WHERE id = ?1"),
        [id],
        queue_row,
    )
    .optional()
}

/// A new queue.
pub struct NewQueue<'a> {
    /// The owning account.
    pub account: &'a str,
    /// The region.
    pub region: &'a str,
    /// The queue name.
    pub name: &'a str,
    /// Whether it is FIFO.
    pub fifo: bool,
    /// Effective attributes.
    pub attributes: &'a BTreeMap<String, String>,
    /// Tags.
    pub tags: &'a BTreeMap<String, String>,
    /// Creation time.
    pub now: EpochMillis,
}

/// Inserts a queue.
pub fn insert_queue(c: &Connection, q: &NewQueue<'_>) -> AwsResult<()> {
    let attributes = serde_json::to_string(q.attributes).unwrap_or_default();
    let tags = serde_json::to_string(q.tags).unwrap_or_default();
    c.execute_cached(
        "INSERT INTO sqs_queues (account, region, name, fifo, attributes, tags, created, modified)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![q.account, q.region, q.name, q.fifo, attributes, tags, q.now],
    )?;
    Ok(())
}

/// Replaces a queue's settable attributes and stamps the change.
pub fn update_attributes(
    c: &Connection,
    id: i64,
    attributes: &BTreeMap<String, String>,
    now: EpochMillis,
) -> rusqlite::Result<()> {
    let json = serde_json::to_string(attributes).unwrap_or_default();
    c.execute_cached(
        "UPDATE sqs_queues SET attributes = ?2, modified = ?3 WHERE id = ?1",
        params![id, json, now],
    )?;
    Ok(())
}

/// A queue's tags.
pub fn queue_tags(c: &Connection, id: i64) -> rusqlite::Result<BTreeMap<String, String>> {
    let tags: String =
        c.query_row_cached("SELECT tags FROM sqs_queues WHERE id = ?1", [id], |r| {
            r.get(0)
        })?;
    Ok(serde_json::from_str(&tags).unwrap_or_default())
}

/// Replaces a queue's tags.
pub fn set_tags(c: &Connection, id: i64, tags: &BTreeMap<String, String>) -> rusqlite::Result<()> {
    let json = serde_json::to_string(tags).unwrap_or_default();
    c.execute_cached(
        "UPDATE sqs_queues SET tags = ?2 WHERE id = ?1",
        params![id, json],
    )?;
    Ok(())
}

/// Names of the queues in an account and region whose redrive policy targets `arn`, after
/// `after`, in order.
pub fn dead_letter_sources(
    c: &Connection,
    account: &str,
    region: &str,
    arn: &str,
    after: &str,
    limit: i64,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = c.prepare(
        "SELECT name FROM sqs_queues
         WHERE account = ?1 AND region = ?2 AND name > ?4
           AND json_extract(json_extract(attributes, '$.RedrivePolicy'),
                            '$.deadLetterTargetArn') = ?3
         ORDER BY name LIMIT ?5",
    )?;
    let names = stmt
        .query_map(params![account, region, arn, after, limit], |r| r.get(0))?
        .collect();
    names
}

/// Deletes every message of a queue; returns how many there were.
pub fn purge_messages(c: &Connection, queue_id: i64) -> rusqlite::Result<usize> {
    c.execute_cached("DELETE FROM sqs_messages WHERE queue_id = ?1", [queue_id])
}

/// Deletes a queue with its messages and deduplication ids.
pub fn delete_queue(c: &Connection, id: i64) -> rusqlite::Result<()> {
    c.execute_cached("DELETE FROM sqs_messages WHERE queue_id = ?1", [id])?;
    c.execute_cached("DELETE FROM sqs_dedup WHERE queue_id = ?1", [id])?;
    c.execute_cached("DELETE FROM sqs_queues WHERE id = ?1", [id])?;
    Ok(())
}

/// Queue names in an account and region starting with `prefix`, after `after`, in order.
pub fn queue_names(
    c: &Connection,
    account: &str,
    region: &str,
    prefix: &str,
    after: &str,
    limit: i64,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = c.prepare(
        "SELECT name FROM sqs_queues
         WHERE account = ?1 AND region = ?2 AND substr(name, 1, length(?3)) = ?3 AND name > ?4
         ORDER BY name LIMIT ?5",
    )?;
    let names = stmt
        .query_map(params![account, region, prefix, after, limit], |r| r.get(0))?
        .collect();
    names
}

/// Deletes a queue's messages whose retention period has passed (`sqs_messages_expiry`).
pub(super) const PURGE_EXPIRED: &str =
    "DELETE FROM sqs_messages WHERE queue_id = ?1 AND expires_at <= ?2";

/// Removes the queue's messages whose retention period has passed.
pub fn purge_expired(c: &Connection, queue_id: i64, now: EpochMillis) -> rusqlite::Result<()> {
    c.prepare_cached(PURGE_EXPIRED)?
        .execute(params![queue_id, now])?;
    Ok(())
}

/// The approximate counts: visible, in flight, delayed.
pub fn message_counts(
    c: &Connection,
    queue_id: i64,
    now: EpochMillis,
) -> rusqlite::Result<(i64, i64, i64)> {
    c.query_row_cached(
        "SELECT
            COALESCE(SUM(visible_at <= ?2), 0),
            COALESCE(SUM(visible_at > ?2 AND receive_count > 0), 0),
            COALESCE(SUM(visible_at > ?2 AND receive_count = 0), 0)
         FROM sqs_messages WHERE queue_id = ?1",
        params![queue_id, now],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// A message as stored.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    /// Ordering key.
    pub seq: i64,
    /// The message id.
    pub message_id: String,
    /// The body.
    pub body: String,
    /// Message attributes as a JSON object (see `attributes::to_json`).
    pub attributes: String,
    /// Message system attributes as a JSON object.
    pub system_attributes: String,
    /// Who sent it.
    pub sender_id: String,
    /// When it was sent.
    pub sent_at: EpochMillis,
    /// Receives so far (this one included once received).
    pub receive_count: i64,
    /// The first receive.
    pub first_receive_at: Option<EpochMillis>,
    /// FIFO (or fair-queue) message group.
    pub group_id: Option<String>,
    /// FIFO deduplication id.
    pub dedup_id: Option<String>,
    /// FIFO sequence number.
    pub sequence_number: Option<String>,
    /// The ARN of the queue a dead-lettered message came from.
    pub dead_letter_source: Option<String>,
}

/// A message to insert.
pub struct NewMessage<'a> {
    /// The queue's row id.
    pub queue_id: i64,
    /// The message id.
    pub message_id: &'a str,
    /// The body.
    pub body: &'a str,
    /// Message attributes, JSON.
    pub attributes: &'a str,
    /// Message system attributes, JSON.
    pub system_attributes: &'a str,
    /// Who sent it.
    pub sender_id: &'a str,
    /// When.
    pub sent_at: EpochMillis,
    /// When it first becomes visible (after its delay).
    pub visible_at: EpochMillis,
    /// When retention drops it.
    pub expires_at: EpochMillis,
    /// Message group.
    pub group_id: Option<&'a str>,
    /// Deduplication id.
    pub dedup_id: Option<&'a str>,
    /// Sequence number.
    pub sequence_number: Option<&'a str>,
}

/// Inserts a message.
pub fn insert_message(c: &Connection, m: &NewMessage<'_>) -> rusqlite::Result<()> {
    c.execute_cached(
        "INSERT INTO sqs_messages (queue_id, message_id, body, attributes, system_attributes,
            sender_id, sent_at, visible_at, expires_at, group_id, dedup_id, sequence_number)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            m.queue_id,
            m.message_id,
            m.body,
            m.attributes,
            m.system_attributes,
            m.sender_id,
            m.sent_at,
            m.visible_at,
            m.expires_at,
            m.group_id,
            m.dedup_id,
            m.sequence_number
        ],
    )?;
    Ok(())
}

/// The next FIFO sequence number of a queue, as AWS spells them (20 digits).
pub fn next_sequence_number(c: &Connection, queue_id: i64) -> rusqlite::Result<String> {
    let n: i64 = c.query_row_cached(
        "UPDATE sqs_queues SET sequence = sequence + 1 WHERE id = ?1 RETURNING sequence",
        [queue_id],
        |r| r.get(0),
    )?;
    Ok(format!("{}", 10_000_000_000_000_000_000u128 + n as u128))
}

/// Forgets a queue's deduplication ids whose five minutes have passed (`sqs_dedup_expiry`).
pub(super) const EXPIRE_DEDUP: &str =
    "DELETE FROM sqs_dedup WHERE queue_id = ?1 AND expires_at <= ?2";

/// A FIFO deduplication hit: the original message id and sequence number.
pub fn find_duplicate(
    c: &Connection,
    queue_id: i64,
    scope: &str,
    dedup_id: &str,
    now: EpochMillis,
) -> rusqlite::Result<Option<(String, String)>> {
    c.prepare_cached(EXPIRE_DEDUP)?
        .execute(params![queue_id, now])?;
    c.query_row_cached(
        "SELECT message_id, sequence_number FROM sqs_dedup
         WHERE queue_id = ?1 AND scope = ?2 AND dedup_id = ?3",
        params![queue_id, scope, dedup_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// Remembers a FIFO deduplication id until `expires_at`.
pub fn remember_dedup(
    c: &Connection,
    queue_id: i64,
    scope: &str,
    dedup_id: &str,
    message: (&str, &str),
    expires_at: EpochMillis,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "INSERT OR REPLACE INTO sqs_dedup
            (queue_id, scope, dedup_id, message_id, sequence_number, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![queue_id, scope, dedup_id, message.0, message.1, expires_at],
    )?;
    Ok(())
}

const MESSAGE_COLUMNS: &str = "seq, message_id, body, attributes, system_attributes, sender_id,
    sent_at, receive_count, first_receive_at, group_id, dedup_id, sequence_number,
    dead_letter_source";

fn message_row(row: &Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        seq: row.get(0)?,
        message_id: row.get(1)?,
        body: row.get(2)?,
        attributes: row.get(3)?,
        system_attributes: row.get(4)?,
        sender_id: row.get(5)?,
        sent_at: row.get(6)?,
        receive_count: row.get(7)?,
        first_receive_at: row.get(8)?,
        group_id: row.get(9)?,
        dedup_id: row.get(10)?,
        sequence_number: row.get(11)?,
        dead_letter_source: row.get(12)?,
    })
}

/// The query behind [`visible_messages`]: a walk of `sqs_messages_order` in `seq` order
/// that skips hidden messages and stops at the `LIMIT`, so its cost follows the messages
/// taken and the hidden ones ahead of them, never the queue's depth. For FIFO queues,
/// messages of a group with a message in flight are held back.
pub(super) fn visible_sql(fifo: bool) -> String {
    let held_back = if fifo {
        "AND (group_id IS NULL OR group_id NOT IN (
            SELECT group_id FROM sqs_messages
            WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count > 0
              AND group_id IS NOT NULL))"
    } else {
        ""
    };
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM sqs_messages INDEXED BY sqs_messages_order
         WHERE queue_id = ?1 AND visible_at <= ?2 {held_back}
         ORDER BY seq LIMIT ?3"
    )
}

/// Up to `limit` visible messages in order. For FIFO queues, messages of a group with a
/// message in flight are held back, so a group is consumed strictly in order.
pub fn visible_messages(
    c: &Connection,
    queue_id: i64,
    fifo: bool,
    now: EpochMillis,
    limit: i64,
) -> rusqlite::Result<Vec<StoredMessage>> {
    let mut stmt = c.prepare_cached(&visible_sql(fifo))?;
    let messages = stmt
        .query_map(params![queue_id, now, limit], message_row)?
        .collect();
    messages
}

/// Marks a message received: hidden until `visible_at`, one more receive.
pub fn mark_received(
    c: &Connection,
    seq: i64,
    now: EpochMillis,
    visible_at: EpochMillis,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sqs_messages SET visible_at = ?2, receive_count = receive_count + 1,
            first_receive_at = COALESCE(first_receive_at, ?3)
         WHERE seq = ?1",
        params![seq, visible_at, now],
    )?;
    Ok(())
}

/// Moves a message to a dead-letter queue: visible there now, never received there, and
/// marked with the queue it came from.
pub fn move_to_dead_letter(
    c: &Connection,
    seq: i64,
    target_queue_id: i64,
    source_arn: &str,
    now: EpochMillis,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sqs_messages SET queue_id = ?2, dead_letter_source = ?3, visible_at = ?4,
            receive_count = 0, first_receive_at = NULL
         WHERE seq = ?1",
        params![seq, target_queue_id, source_arn, now],
    )?;
    Ok(())
}

/// The earliest future time a message of the queue becomes visible.
pub fn next_visible_at(
    c: &Connection,
    queue_id: i64,
    now: EpochMillis,
) -> rusqlite::Result<Option<EpochMillis>> {
    c.query_row_cached(
        "SELECT MIN(visible_at) FROM sqs_messages WHERE queue_id = ?1 AND visible_at > ?2",
        params![queue_id, now],
        |r| r.get(0),
    )
}

/// Where a message stands: its visibility deadline and receive count, if it still exists.
pub fn message_state(
    c: &Connection,
    queue_id: i64,
    message_id: &str,
) -> rusqlite::Result<Option<(EpochMillis, i64)>> {
    c.query_row_cached(
        "SELECT visible_at, receive_count FROM sqs_messages WHERE queue_id = ?1 AND message_id = ?2",
        params![queue_id, message_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// Sets when a message becomes visible again.
pub fn set_visible_at(
    c: &Connection,
    queue_id: i64,
    message_id: &str,
    visible_at: EpochMillis,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sqs_messages SET visible_at = ?3 WHERE queue_id = ?1 AND message_id = ?2",
        params![queue_id, message_id, visible_at],
    )?;
    Ok(())
}

/// The oldest `limit` unexpired messages of a queue, in or out of flight, each with when
/// it is (or became) visible: what the web console shows, read without receiving.
pub fn first_messages(
    c: &Connection,
    queue_id: i64,
    now: EpochMillis,
    limit: i64,
) -> rusqlite::Result<Vec<(StoredMessage, EpochMillis)>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {MESSAGE_COLUMNS}, visible_at FROM sqs_messages
         WHERE queue_id = ?1 AND expires_at > ?2 ORDER BY seq LIMIT ?3"
    ))?;
    let messages = stmt
        .query_map(params![queue_id, now, limit], |row| {
            Ok((message_row(row)?, row.get(13)?))
        })?
        .collect();
    messages
}

/// Every message of a queue in order, for a move task.
pub fn all_messages(c: &Connection, queue_id: i64) -> rusqlite::Result<Vec<StoredMessage>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM sqs_messages WHERE queue_id = ?1 ORDER BY seq"
    ))?;
    let messages = stmt.query_map([queue_id], message_row)?.collect();
    messages
}

/// Moves a message to another queue as a new arrival there (a move task's redrive).
pub fn move_message(
    c: &Connection,
    seq: i64,
    target_queue_id: i64,
    now: EpochMillis,
    expires_at: EpochMillis,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sqs_messages SET queue_id = ?2, visible_at = ?3, expires_at = ?4,
            receive_count = 0, first_receive_at = NULL, dead_letter_source = NULL
         WHERE seq = ?1",
        params![seq, target_queue_id, now, expires_at],
    )?;
    Ok(())
}

/// A message move task as stored.
#[derive(Debug, Clone)]
pub struct MoveTask {
    /// The opaque handle returned to the caller.
    pub handle: String,
    /// The dead-letter queue's ARN.
    pub source_arn: String,
    /// Where messages go; `None` means back to their source queues.
    pub destination_arn: Option<String>,
    /// The requested rate.
    pub rate: Option<i64>,
    /// `RUNNING`, `COMPLETED`, `CANCELLED`, `FAILED`.
    pub status: String,
    /// Messages moved so far.
    pub moved: i64,
    /// Messages there were to move.
    pub to_move: i64,
    /// When it started.
    pub started: EpochMillis,
}

/// Records a move task.
pub fn insert_move_task(
    c: &Connection,
    account: &str,
    region: &str,
    t: &MoveTask,
) -> rusqlite::Result<()> {
    c.execute_cached(
        "INSERT INTO sqs_move_tasks (handle, account, region, source_arn, destination_arn, rate,
            status, moved, to_move, started)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            t.handle,
            account,
            region,
            t.source_arn,
            t.destination_arn,
            t.rate,
            t.status,
            t.moved,
            t.to_move,
            t.started
        ],
    )?;
    Ok(())
}

/// The move tasks of a source queue, newest first.
pub fn move_tasks(
    c: &Connection,
    account: &str,
    region: &str,
    source_arn: &str,
    limit: i64,
) -> rusqlite::Result<Vec<MoveTask>> {
    let mut stmt = c.prepare(
        "SELECT handle, source_arn, destination_arn, rate, status, moved, to_move, started
         FROM sqs_move_tasks WHERE account = ?1 AND region = ?2 AND source_arn = ?3
         ORDER BY started DESC, rowid DESC LIMIT ?4",
    )?;
    let tasks = stmt
        .query_map(params![account, region, source_arn, limit], |r| {
            Ok(MoveTask {
                handle: r.get(0)?,
                source_arn: r.get(1)?,
                destination_arn: r.get(2)?,
                rate: r.get(3)?,
                status: r.get(4)?,
                moved: r.get(5)?,
                to_move: r.get(6)?,
                started: r.get(7)?,
            })
        })?
        .collect();
    tasks
}

/// Deletes a message by id.
pub fn delete_message(c: &Connection, queue_id: i64, message_id: &str) -> rusqlite::Result<()> {
    c.execute_cached(
        "DELETE FROM sqs_messages WHERE queue_id = ?1 AND message_id = ?2",
        params![queue_id, message_id],
    )?;
    Ok(())
}
