//! Batches: SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch.
//!
//! AWS refuses a whole batch for what is wrong with the batch itself (no entries, more than
//! ten, repeated or malformed ids, a send batch over the size limit) and otherwise runs
//! every entry on its own, reporting each as `Successful` or `Failed` with the error the
//! single operation would have returned. The three operations share [`entries`] and
//! [`run`]; each supplies only what one entry does.

use std::collections::BTreeSet;

use roto_core::{AwsError, AwsResult, Context, Value};

use super::attributes::{self, Kind};
use super::queues::MAX_MESSAGE_SIZE;
use super::store::Queue;
use super::Sqs;

/// The most entries one batch may carry.
const MAX_ENTRIES: usize = 10;

fn batch_error(code: &'static str, message: String) -> AwsError {
    AwsError::new(code, message).with_status(400)
}

/// The `Entries` of a batch request, checked as a whole; `entry_shape` names the entry type
/// in the empty-batch message (`SendMessageBatchRequestEntry`).
fn entries<'v>(input: &'v Value, entry_shape: &str) -> AwsResult<&'v [Value]> {
    let entries = input.get("Entries").and_then(Value::as_list).unwrap_or(&[]);
    if entries.is_empty() {
        return Err(batch_error(
            "EmptyBatchRequest",
            format!("There should be at least one {entry_shape} in the request."),
        ));
    }
    if entries.len() > MAX_ENTRIES {
        return Err(batch_error(
            "TooManyEntriesInBatchRequest",
            format!(
                "Maximum number of entries per request are {MAX_ENTRIES}. You have sent {}.",
                entries.len()
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    for entry in entries {
        let id = entry.str("Id").unwrap_or_default();
        let valid = !id.is_empty()
            && id.len() <= 80
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(batch_error(
                "InvalidBatchEntryId",
                "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.".into(),
            ));
        }
        if !seen.insert(id) {
            return Err(batch_error(
                "BatchEntryIdsNotDistinct",
                format!("Id {id} repeated."),
            ));
        }
    }
    Ok(entries)
}

/// Runs `one` on every entry and reports each outcome, AWS's `Successful`/`Failed` pair.
fn run(entries: &[Value], mut one: impl FnMut(&Value) -> AwsResult<Value>) -> Value {
    let mut successful = Vec::new();
    let mut failed = Vec::new();
    for entry in entries {
        let id = entry.str("Id").unwrap_or_default();
        match one(entry) {
            Ok(result) => successful.push(result.with("Id", id)),
            Err(e) => failed.push(
                Value::map()
                    .with("Id", id)
                    .with("SenderFault", e.sender_fault)
                    .with("Code", e.code.as_ref())
                    .with("Message", e.message),
            ),
        }
    }
    Value::map()
        .with("Successful", successful)
        .with("Failed", failed)
}

/// The bytes a send batch counts against the size limit: bodies and message attributes.
fn batch_size(entries: &[Value]) -> usize {
    entries
        .iter()
        .map(|e| {
            let body = e.str("MessageBody").map_or(0, str::len);
            let attrs = attributes::parse(e.get("MessageAttributes"), Kind::User)
                .map_or(0, |a| attributes::size(&a));
            body + attrs
        })
        .sum()
}

impl Sqs {
    pub(super) fn send_message_batch(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let entries = entries(input, "SendMessageBatchRequestEntry")?;
        let size = batch_size(entries);
        if size as i64 > MAX_MESSAGE_SIZE {
            return Err(batch_error(
                "BatchRequestTooLong",
                format!(
                    "Batch requests cannot be longer than {MAX_MESSAGE_SIZE} bytes. You have sent {size} bytes."
                ),
            ));
        }
        let out = run(entries, |entry| self.enqueue(&queue, &ctx.account, entry));
        self.wake(queue.id);
        Ok(out)
    }

    pub(super) fn delete_message_batch(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let entries = entries(input, "DeleteMessageBatchRequestEntry")?;
        Ok(self.each(&queue, entries, Sqs::delete_one))
    }

    pub(super) fn change_message_visibility_batch(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let entries = entries(input, "ChangeMessageVisibilityBatchRequestEntry")?;
        Ok(self.each(&queue, entries, Sqs::change_visibility))
    }

    /// Runs a per-message action that has no output over every entry.
    fn each(
        &self,
        queue: &Queue,
        entries: &[Value],
        action: fn(&Sqs, &Queue, &Value) -> AwsResult<()>,
    ) -> Value {
        run(entries, |entry| {
            action(self, queue, entry).map(|()| Value::map())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(ids: &[&str]) -> Value {
        let entries: Vec<Value> = ids
            .iter()
            .map(|id| Value::map().with("Id", *id).with("MessageBody", "x"))
            .collect();
        Value::map().with("Entries", entries)
    }

    #[test]
    fn a_batch_is_refused_whole_for_its_shape() {
        let code = |ids: &[&str]| entries(&batch(ids), "E").unwrap_err().code;
        assert_eq!(code(&[]), "EmptyBatchRequest");
        assert_eq!(code(&["a"; 11]), "TooManyEntriesInBatchRequest");
        assert_eq!(code(&["a", "b", "a"]), "BatchEntryIdsNotDistinct");
        assert_eq!(code(&["has space"]), "InvalidBatchEntryId");
        assert_eq!(code(&[&"x".repeat(81)]), "InvalidBatchEntryId");
        assert_eq!(entries(&batch(&["a-1", "B_2"]), "E").unwrap().len(), 2);
        let message = entries(&batch(&[]), "SendMessageBatchRequestEntry")
            .unwrap_err()
            .message;
        assert_eq!(
            message,
            "There should be at least one SendMessageBatchRequestEntry in the request."
        );
    }

    #[test]
    fn each_entry_reports_its_own_outcome() {
        let input = batch(&["ok", "bad"]);
        let out = run(
            input.get("Entries").unwrap().as_list().unwrap(),
            |e| match e.str("Id") {
                Some("ok") => Ok(Value::map().with("MessageId", "m")),
                _ => Err(AwsError::new("InvalidParameterValue", "no")),
            },
        );
        let ok = out.get("Successful").and_then(Value::as_list).unwrap();
        let failed = out.get("Failed").and_then(Value::as_list).unwrap();
        assert_eq!(ok[0].str("Id"), Some("ok"));
        assert_eq!(ok[0].str("MessageId"), Some("m"));
        assert_eq!(failed[0].str("Code"), Some("InvalidParameterValue"));
        assert_eq!(failed[0].bool("SenderFault"), Some(true));
    }
}
