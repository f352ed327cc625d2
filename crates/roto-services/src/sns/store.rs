//! SNS's tables and every query over them.
//!
//! A topic is one `sns_topics` row keyed by its ARN (settable attributes and tags as JSON,
//! a FIFO sequence counter); a subscription is one `sns_subscriptions` row keyed by its
//! ARN, with its attributes as JSON and, while pending, the confirmation token.

use std::collections::BTreeMap;

use roto_core::store::Cached;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// The schema, created idempotently at start.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sns_topics (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    fifo INTEGER NOT NULL,
    attributes TEXT NOT NULL,
    tags TEXT NOT NULL,
    sequence INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sns_topics_by_account ON sns_topics (account, region, arn);
CREATE TABLE IF NOT EXISTS sns_subscriptions (
    arn TEXT PRIMARY KEY,
    topic_arn TEXT NOT NULL,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    owner TEXT NOT NULL,
    protocol TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    attributes TEXT NOT NULL,
    confirmed INTEGER NOT NULL,
    token TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sns_subscriptions_by_topic ON sns_subscriptions (topic_arn, arn);
";

/// A topic as stored.
#[derive(Debug, Clone)]
pub struct Topic {
    /// The ARN.
    pub arn: String,
    /// The owning account.
    pub account: String,
    /// The region.
    pub region: String,
    /// The name (`.fifo` included).
    pub name: String,
    /// Whether it is a FIFO topic.
    pub fifo: bool,
    /// Settable attributes as set.
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
}

/// A string map as stored (attributes, tags).
pub(super) fn json_map(text: String) -> BTreeMap<String, String> {
    serde_json::from_str(&text).unwrap_or_default()
}

/// A string map as JSON text, the inverse of [`json_map`].
pub(super) fn to_json(map: &BTreeMap<String, String>) -> String {
    serde_json::to_string(map).unwrap_or_default()
}

fn topic_row(r: &Row<'_>) -> rusqlite::Result<Topic> {
    Ok(Topic {
        arn: r.get(0)?,
        account: r.get(1)?,
        region: r.get(2)?,
        name: r.get(3)?,
        fifo: r.get(4)?,
        attributes: json_map(r.get(5)?),
        tags: json_map(r.get(6)?),
    })
}

const TOPIC_COLUMNS: &str = "arn, account, region, name, fifo, attributes, tags";

/// The topic with this ARN.
pub fn find_topic(c: &Connection, arn: &str) -> rusqlite::Result<Option<Topic>> {
    c.prepare_cached(&format!(
        "SELECT {TOPIC_COLUMNS} FROM sns_topics WHERE arn = ?1"
    ))?
    .query_row([arn], topic_row)
    .optional()
}

/// Inserts a topic.
pub fn insert_topic(c: &Connection, t: &Topic) -> rusqlite::Result<()> {
    c.execute_cached(
        "INSERT INTO sns_topics (arn, account, region, name, fifo, attributes, tags)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            t.arn,
            t.account,
            t.region,
            t.name,
            t.fifo,
            to_json(&t.attributes),
            to_json(&t.tags)
        ],
    )?;
    Ok(())
}

/// Replaces a topic's attributes and tags.
pub fn update_topic(c: &Connection, t: &Topic) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sns_topics SET attributes = ?2, tags = ?3 WHERE arn = ?1",
        params![t.arn, to_json(&t.attributes), to_json(&t.tags)],
    )?;
    Ok(())
}

/// Deletes a topic and its subscriptions.
pub fn delete_topic(c: &Connection, arn: &str) -> rusqlite::Result<()> {
    c.execute_cached("DELETE FROM sns_subscriptions WHERE topic_arn = ?1", [arn])?;
    c.execute_cached("DELETE FROM sns_topics WHERE arn = ?1", [arn])?;
    Ok(())
}

/// Topic ARNs of an account and region after `after`, in order.
pub fn topic_arns(
    c: &Connection,
    account: &str,
    region: &str,
    after: &str,
    limit: i64,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = c.prepare_cached(
        "SELECT arn FROM sns_topics WHERE account = ?1 AND region = ?2 AND arn > ?3
         ORDER BY arn LIMIT ?4",
    )?;
    let arns = stmt
        .query_map(params![account, region, after, limit], |r| r.get(0))?
        .collect();
    arns
}

/// The next FIFO sequence number of a topic (20 digits, as AWS spells them).
pub fn next_sequence_number(c: &Connection, arn: &str) -> rusqlite::Result<String> {
    let n: i64 = c.query_row_cached(
        "UPDATE sns_topics SET sequence = sequence + 1 WHERE arn = ?1 RETURNING sequence",
        [arn],
        |r| r.get(0),
    )?;
    Ok(format!("{}", 10_000_000_000_000_000_000u128 + n as u128))
}

/// A subscription as stored.
#[derive(Debug, Clone)]
pub struct Subscription {
    /// The ARN.
    pub arn: String,
    /// The topic's ARN.
    pub topic_arn: String,
    /// The account it lives in (the topic's).
    pub account: String,
    /// The region.
    pub region: String,
    /// The subscribing account.
    pub owner: String,
    /// `sqs`, `http`, `email`, ...
    pub protocol: String,
    /// The queue ARN, URL, address or function ARN.
    pub endpoint: String,
    /// Settable attributes as set.
    pub attributes: BTreeMap<String, String>,
    /// Whether it is confirmed.
    pub confirmed: bool,
    /// The confirmation token.
    pub token: String,
}

impl Subscription {
    /// A boolean attribute (`RawMessageDelivery`).
    pub fn flag(&self, name: &str) -> bool {
        self.attributes.get(name).is_some_and(|v| v == "true")
    }
}

const SUBSCRIPTION_COLUMNS: &str =
    "arn, topic_arn, account, region, owner, protocol, endpoint, attributes, confirmed, token";

fn subscription_row(r: &Row<'_>) -> rusqlite::Result<Subscription> {
    Ok(Subscription {
        arn: r.get(0)?,
        topic_arn: r.get(1)?,
        account: r.get(2)?,
        region: r.get(3)?,
        owner: r.get(4)?,
        protocol: r.get(5)?,
        endpoint: r.get(6)?,
        attributes: json_map(r.get(7)?),
        confirmed: r.get(8)?,
        token: r.get(9)?,
    })
}

/// The subscription with this ARN.
pub fn find_subscription(c: &Connection, arn: &str) -> rusqlite::Result<Option<Subscription>> {
    c.prepare_cached(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM sns_subscriptions WHERE arn = ?1"
    ))?
    .query_row([arn], subscription_row)
    .optional()
}

/// The subscription of a topic whose deliveries the event bus carries (SQS, Lambda,
/// HTTP/HTTPS) to this endpoint.
pub fn find_topic_subscription(
    c: &Connection,
    topic_arn: &str,
    endpoint: &str,
) -> rusqlite::Result<Option<Subscription>> {
    c.prepare_cached(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM sns_subscriptions
         WHERE topic_arn = ?1 AND endpoint = ?2 AND protocol IN ('sqs', 'lambda', 'http', 'https')"
    ))?
    .query_row([topic_arn, endpoint], subscription_row)
    .optional()
}

/// Every subscription of a topic, in ARN order.
pub fn topic_subscriptions(c: &Connection, topic_arn: &str) -> rusqlite::Result<Vec<Subscription>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM sns_subscriptions WHERE topic_arn = ?1 ORDER BY arn"
    ))?;
    let subs = stmt.query_map([topic_arn], subscription_row)?.collect();
    subs
}

/// Subscriptions of an account and region after `after` (optionally of one topic).
pub fn subscriptions(
    c: &Connection,
    account: &str,
    region: &str,
    topic_arn: Option<&str>,
    after: &str,
    limit: i64,
) -> rusqlite::Result<Vec<Subscription>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {SUBSCRIPTION_COLUMNS} FROM sns_subscriptions
         WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR topic_arn = ?3) AND arn > ?4
         ORDER BY arn LIMIT ?5"
    ))?;
    let subs = stmt
        .query_map(
            params![account, region, topic_arn, after, limit],
            subscription_row,
        )?
        .collect();
    subs
}

/// Inserts a subscription.
pub fn insert_subscription(c: &Connection, s: &Subscription) -> rusqlite::Result<()> {
    c.execute_cached(
        "INSERT INTO sns_subscriptions (arn, topic_arn, account, region, owner, protocol,
            endpoint, attributes, confirmed, token)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            s.arn,
            s.topic_arn,
            s.account,
            s.region,
            s.owner,
            s.protocol,
            s.endpoint,
            to_json(&s.attributes),
            s.confirmed,
            s.token
        ],
    )?;
    Ok(())
}

/// Replaces a subscription's attributes and confirmation state.
pub fn update_subscription(c: &Connection, s: &Subscription) -> rusqlite::Result<()> {
    c.execute_cached(
        "UPDATE sns_subscriptions SET attributes = ?2, confirmed = ?3 WHERE arn = ?1",
        params![s.arn, to_json(&s.attributes), s.confirmed],
    )?;
    Ok(())
}

/// Deletes a subscription.
pub fn delete_subscription(c: &Connection, arn: &str) -> rusqlite::Result<()> {
    c.execute_cached("DELETE FROM sns_subscriptions WHERE arn = ?1", [arn])?;
    Ok(())
}
