//! SQS's metrics in `AWS/SQS`, per queue (dimension `QueueName`), as AWS publishes them:
//! the counts of messages sent (and their sizes), received, deleted and of empty receives
//! as they happen, and the queue's gauges (visible, in flight and delayed messages, the
//! age of the oldest message) read when CloudWatch samples them, so that no request pays
//! for a count. A minute CloudWatch samples late is read from the messages still stored
//! that were sent by its end.

use std::sync::{Arc, Weak};

use roto_core::metrics::{Datum, Metrics};
use roto_core::{AwsError, Env};

use super::store::Queue;

const NAMESPACE: &str = "AWS/SQS";

fn put(env: &Env, queue: &Queue, name: &str, value: f64, unit: &str) {
    let dims = [("QueueName", queue.name.as_str())];
    let datum = Datum::new(NAMESPACE, name, &dims, value, unit);
    env.metrics.put(&queue.account, &queue.region, &datum);
}

/// A message stored (sent, or delivered by another service) with a body of `size` bytes.
pub(super) fn sent(env: &Env, queue: &Queue, size: usize) {
    put(env, queue, "NumberOfMessagesSent", 1.0, "Count");
    put(env, queue, "SentMessageSize", size as f64, "Bytes");
}

/// A receive that returned `count` messages.
pub(super) fn received(env: &Env, queue: &Queue, count: usize) {
    put(
        env,
        queue,
        "NumberOfMessagesReceived",
        count as f64,
        "Count",
    );
    if count == 0 {
        put(env, queue, "NumberOfEmptyReceives", 1.0, "Count");
    }
}

/// A message deleted.
pub(super) fn deleted(env: &Env, queue: &Queue) {
    put(env, queue, "NumberOfMessagesDeleted", 1.0, "Count");
}

/// Registers the queues' gauges with the metrics CloudWatch samples.
pub(super) fn add_gauges(env: &Arc<Env>) {
    let weak: Weak<Env> = Arc::downgrade(env);
    env.metrics.add_sampler(Arc::new(move |out: &Metrics, at| {
        if let Some(env) = weak.upgrade() {
            if let Err(e) = gauges(&env, out, at) {
                tracing::warn!("sqs metrics: {}", e.message);
            }
        }
    }));
}

/// Every queue's gauges at `at`.
fn gauges(env: &Env, out: &Metrics, at: i64) -> Result<(), AwsError> {
    let rows = env.store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT q.account, q.region, q.name,
                    COALESCE(SUM(m.visible_at <= ?1), 0),
                    COALESCE(SUM(m.visible_at > ?1 AND m.receive_count > 0), 0),
                    COALESCE(SUM(m.visible_at > ?1 AND m.receive_count = 0), 0),
                    MIN(m.sent_at)
             FROM sqs_queues q LEFT JOIN sqs_messages m
               ON m.queue_id = q.id AND m.sent_at <= ?1 AND m.expires_at > ?1
             GROUP BY q.id",
        )?;
        let rows = stmt.query_map([at], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                [r.get::<_, i64>(3)?, r.get(4)?, r.get(5)?],
                r.get::<_, Option<i64>>(6)?,
            ))
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })?;
    for (account, region, name, counts, oldest) in rows {
        let dims = [("QueueName", name.as_str())];
        let names = [
            "ApproximateNumberOfMessagesVisible",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ];
        for (metric, count) in names.into_iter().zip(counts) {
            let datum = Datum {
                at,
                ..Datum::new(NAMESPACE, metric, &dims, count as f64, "Count")
            };
            out.put(&account, &region, &datum);
        }
        let age = oldest.map_or(0, |sent| (at - sent).max(0) / 1000);
        let datum = Datum {
            at,
            ..Datum::new(
                NAMESPACE,
                "ApproximateAgeOfOldestMessage",
                &dims,
                age as f64,
                "Seconds",
            )
        };
        out.put(&account, &region, &datum);
    }
    Ok(())
}
