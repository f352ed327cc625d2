//! Tags and permissions: TagQueue, UntagQueue, ListQueueTags, AddPermission,
//! RemovePermission.
//!
//! AWS keeps AddPermission's grants in the queue's `Policy` attribute, one statement per
//! label, so GetQueueAttributes shows them and SetQueueAttributes can replace them; Roto
//! does the same (grants are recorded, not enforced).

use std::collections::BTreeMap;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::store::{self, Queue};
use super::{invalid_parameter, invalid_value, missing, required, string_list, Sqs};

/// The most tags a queue may carry.
const MAX_TAGS: usize = 50;

/// The most actions one AddPermission may grant.
const MAX_ACTIONS: usize = 7;

/// Actions AddPermission may grant (only the owner may do the others).
const SHAREABLE_ACTIONS: &[&str] = &[
    "*",
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "PurgeQueue",
    "ListQueueTags",
];

/// Checks a queue's tags against SQS's limits.
pub fn check_tags(tags: &BTreeMap<String, String>, queue_name: &str) -> AwsResult<()> {
    if tags.len() > MAX_TAGS {
        return Err(invalid_parameter(format!(
            "Too many tags added for queue {queue_name}."
        )));
    }
    if tags.keys().any(|k| k.is_empty() || k.chars().count() > 128) {
        return Err(invalid_parameter(
            "Tag keys must be between 1 and 128 characters in length.",
        ));
    }
    if tags.values().any(|v| v.chars().count() > 256) {
        return Err(invalid_parameter(
            "Tag values may be at most 256 characters in length.",
        ));
    }
    Ok(())
}

/// A single value or a list, as IAM policies spell one-element lists.
fn one_or_many(values: Vec<String>) -> Json {
    match <[String; 1]>::try_from(values) {
        Ok([one]) => Json::String(one),
        Err(many) => Json::from(many),
    }
}

impl Sqs {
    /// Changes a queue's tags in one transaction.
    fn update_tags(
        &self,
        queue: &Queue,
        change: impl FnOnce(&mut BTreeMap<String, String>),
    ) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            let mut tags = store::queue_tags(tx, queue.id)?;
            change(&mut tags);
            check_tags(&tags, &queue.name)?;
            store::set_tags(tx, queue.id, &tags)?;
            Ok(())
        })
    }

    pub(super) fn tag_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let given: BTreeMap<String, String> = input
            .get("Tags")
            .and_then(Value::as_map)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        if given.is_empty() {
            return Err(missing("Tags"));
        }
        self.update_tags(&queue, |tags| tags.extend(given))?;
        Ok(Value::map())
    }

    pub(super) fn untag_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let keys = string_list(input, "TagKeys");
        if keys.is_empty() {
            return Err(missing("TagKeys"));
        }
        self.update_tags(&queue, |tags| {
            for key in keys {
                tags.remove(key);
            }
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_queue_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let tags = self
            .env
            .store
            .with(|c| store::queue_tags(c, queue.id).map_err(AwsError::from))?;
        if tags.is_empty() {
            return Ok(Value::map());
        }
        let tags: BTreeMap<String, Value> = tags
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        Ok(Value::map().with("Tags", tags))
    }

    pub(super) fn add_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let label = required(input, "Label")?;
        check_label(label)?;
        let accounts = string_list(input, "AWSAccountIds");
        if accounts.is_empty() {
            return Err(missing("AWSAccountIds"));
        }
        let actions = string_list(input, "Actions");
        if actions.is_empty() {
            return Err(missing("Actions"));
        }
        if actions.len() > MAX_ACTIONS {
            return Err(AwsError::new(
                "OverLimit",
                format!(
                    "{} Actions were found, maximum allowed is {MAX_ACTIONS}.",
                    actions.len()
                ),
            )
            .with_status(403));
        }
        if let Some(action) = actions.iter().find(|a| !SHAREABLE_ACTIONS.contains(a)) {
            return Err(invalid_value(
                "ActionName",
                format!("SQS:{action}"),
                "Only the queue owner is allowed to invoke this action.",
            ));
        }
        let arn = queue.arn();
        let statement = json!({
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": one_or_many(
                accounts.iter().map(|a| format!("arn:aws:iam::{a}:root")).collect()
            )},
            "Action": one_or_many(actions.iter().map(|a| format!("SQS:{a}")).collect()),
            "Resource": arn,
        });
        self.change_policy(&queue, |statements| {
            if statements.iter().any(|s| s["Sid"] == label) {
                return Err(invalid_value("Label", label, "Already exists."));
            }
            statements.push(statement);
            Ok(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn remove_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let label = required(input, "Label")?;
        self.change_policy(&queue, |statements| {
            let before = statements.len();
            statements.retain(|s| s["Sid"] != label);
            if statements.len() == before {
                return Err(invalid_value(
                    "Label",
                    label,
                    "can't find label on existing policy.",
                ));
            }
            Ok(())
        })?;
        Ok(Value::map())
    }

    /// Edits the statements of a queue's policy, creating it when absent and removing it
    /// when no statement remains.
    fn change_policy(
        &self,
        queue: &Queue,
        change: impl FnOnce(&mut Vec<Json>) -> AwsResult<()>,
    ) -> AwsResult<()> {
        let now = now_millis();
        self.env.store.transaction(|tx| {
            let current = store::queue_by_id(tx, queue.id)?.unwrap_or_else(|| queue.clone());
            let mut policy: Json = current
                .attributes
                .get("Policy")
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or_else(|| {
                    json!({
                        "Version": "2012-10-17",
                        "Id": format!("{}/SQSDefaultPolicy", queue.arn()),
                        "Statement": [],
                    })
                });
            let mut statements = match policy["Statement"].take() {
                Json::Array(a) => a,
                Json::Null => Vec::new(),
                one => vec![one],
            };
            change(&mut statements)?;
            let mut attributes = current.attributes.clone();
            if statements.is_empty() {
                attributes.remove("Policy");
            } else {
                policy["Statement"] = Json::from(statements);
                attributes.insert("Policy".into(), policy.to_string());
            }
            store::update_attributes(tx, queue.id, &attributes, now)?;
            Ok(())
        })
    }
}

/// A permission label: 1-80 alphanumerics, hyphens or underscores.
fn check_label(label: &str) -> AwsResult<()> {
    let valid = label.len() <= 80
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(invalid_value(
            "Label",
            label,
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ))
    }
}
