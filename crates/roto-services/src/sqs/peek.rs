//! What the web console shows of a queue's messages: the oldest ones as stored, read
//! without receiving them, so looking changes neither their visibility nor their receive
//! count (`ReceiveMessage` would change both).

use roto_core::timestamp::now_millis;
use roto_core::value::Value;
use roto_core::{AwsError, AwsResult, Context};

use super::store::{self, StoredMessage};
use super::Sqs;

/// The most messages one look returns.
const PEEK_LIMIT: i64 = 50;

impl Sqs {
    /// The oldest messages of the queue `input`'s `QueueUrl` names, in or out of flight.
    pub(super) fn peek_messages(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let now = now_millis();
        let messages = self.env.store.with(|c| {
            store::first_messages(c, queue.id, now, PEEK_LIMIT).map_err(AwsError::from)
        })?;
        let shown = messages
            .iter()
            .map(|(m, visible_at)| shown(m, *visible_at <= now))
            .collect();
        Ok(Value::map().with("Messages", Value::List(shown)))
    }
}

/// One message as the console shows it.
fn shown(m: &StoredMessage, visible: bool) -> Value {
    let mut out = Value::map()
        .with("MessageId", m.message_id.as_str())
        .with("Body", m.body.as_str())
        .with("SentTimestamp", m.sent_at)
        .with("ApproximateReceiveCount", m.receive_count)
        .with("Visible", visible);
    if let Some(group) = &m.group_id {
        out = out.with("MessageGroupId", group.as_str());
    }
    out
}
