//! Queues: names, URLs, attributes, and the operations over them.
//!
//! Queue URLs are LocalStack-style, `http://<host>/<account>/<name>` on the host the caller
//! addressed. Any URL whose path ends in `<account>/<name>` is accepted
//! (`http://sqs.<region>.localhost:4566/...`, AWS's own, a bare path), and the account in it
//! selects the account, so a queue in another account is reachable by its URL.

use std::collections::BTreeMap;

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::store::{self, NewQueue, Queue};
use super::{int_in, invalid_parameter, invalid_value, required, string_list, Sqs};

/// The default maximum message size (1 MiB, AWS's limit since August 2025).
pub const MAX_MESSAGE_SIZE: i64 = 1_048_576;

/// Integer attributes and their ranges.
const INT_ATTRIBUTES: &[(&str, i64, i64)] = &[
    ("DelaySeconds", 0, 900),
    ("MaximumMessageSize", 1024, MAX_MESSAGE_SIZE),
    ("MessageRetentionPeriod", 60, 1_209_600),
    ("ReceiveMessageWaitTimeSeconds", 0, 20),
    ("VisibilityTimeout", 0, 43_200),
    ("KmsDataKeyReusePeriodSeconds", 60, 86_400),
];

/// Attributes only FIFO queues have.
const FIFO_ATTRIBUTES: &[&str] = &[
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// Attributes GetQueueAttributes computes rather than stores.
const COMPUTED_ATTRIBUTES: &[&str] = &[
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
];

fn unknown_attribute(name: &str) -> AwsError {
    AwsError::new("InvalidAttributeName", format!("Unknown Attribute {name}.")).with_status(400)
}

fn invalid_attribute_value(name: &str) -> AwsError {
    AwsError::new(
        "InvalidAttributeValue",
        format!("Invalid value for the parameter {name}."),
    )
    .with_status(400)
}

/// `QueueDoesNotExist`, in AWS's words.
pub fn no_such_queue() -> AwsError {
    AwsError::new("QueueDoesNotExist", "The specified queue does not exist.").with_status(400)
}

/// Where a queue URL points: account, region, name.
#[derive(Debug, PartialEq)]
pub struct QueueAddress {
    /// The owning account.
    pub account: String,
    /// The region.
    pub region: String,
    /// The queue name.
    pub name: String,
}

/// Reads a queue URL; `None` when it cannot name a queue.
pub fn parse_queue_url(url: &str, ctx: &Context) -> Option<QueueAddress> {
    let (host, path) = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/').unwrap_or((rest, "")),
        None => ("", url),
    };
    let region = region_of_host(host).unwrap_or(&ctx.region).to_string();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (account, name) = match segments[..] {
        [.., account, name] => (account, name),
        [name] => (ctx.account.as_str(), name),
        [] => return None,
    };
    let is_account = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
    is_account.then(|| QueueAddress {
        account: account.to_string(),
        region,
        name: name.to_string(),
    })
}

/// The region in `sqs.<region>.<domain>` or `<region>.queue.amazonaws.com`.
fn region_of_host(host: &str) -> Option<&str> {
    let host = host.split(':').next().unwrap_or(host);
    let mut labels = host.split('.');
    let first = labels.next()?;
    let candidate = if first == "sqs" {
        labels.next()?
    } else {
        first
    };
    let looks_like_region = candidate.contains('-')
        && candidate.ends_with(|c: char| c.is_ascii_digit())
        && candidate
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    looks_like_region.then_some(candidate)
}

/// The URL of a queue as returned to the caller.
pub fn queue_url(ctx: &Context, account: &str, name: &str) -> String {
    let host = if ctx.host.is_empty() {
        "localhost:4566"
    } else {
        ctx.host.as_str()
    };
    format!("http://{host}/{account}/{name}")
}

/// Checks a queue name against SQS's rules for its type.
fn check_queue_name(name: &str, fifo: bool) -> AwsResult<()> {
    let base = if fifo {
        name.strip_suffix(".fifo")
    } else {
        Some(name)
    };
    let valid = base.is_some_and(|b| {
        !b.is_empty()
            && b.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    }) && name.len() <= 80;
    match (valid, fifo) {
        (true, _) => Ok(()),
        (false, true) => Err(invalid_parameter(
            "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
        )),
        (false, false) => Err(invalid_parameter(
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        )),
    }
}

/// Validates one settable attribute and returns the value as the queue will report it.
fn normalize_attribute(name: &str, value: &str, fifo: bool) -> AwsResult<String> {
    if let Some(&(_, min, max)) = INT_ATTRIBUTES.iter().find(|(n, _, _)| *n == name) {
        return match value.trim().parse::<i64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v.to_string()),
            _ => Err(invalid_attribute_value(name)),
        };
    }
    if FIFO_ATTRIBUTES.contains(&name) && !fifo {
        return Err(unknown_attribute(name));
    }
    let one_of = |allowed: &[&str]| {
        if allowed.contains(&value) {
            Ok(value.to_string())
        } else {
            Err(invalid_attribute_value(name))
        }
    };
    match name {
        "FifoQueue" | "ContentBasedDeduplication" | "SqsManagedSseEnabled" => {
            one_of(&["true", "false"])
        }
        "DeduplicationScope" => one_of(&["messageGroup", "queue"]),
        "FifoThroughputLimit" => one_of(&["perQueue", "perMessageGroupId"]),
        "Policy" => match serde_json::from_str::<serde_json::Value>(value) {
            Ok(serde_json::Value::Object(_)) => Ok(value.to_string()),
            _ => Err(invalid_attribute_value(name)),
        },
        "RedriveAllowPolicy" => normalize_redrive_allow_policy(value),
        "RedrivePolicy" => normalize_redrive_policy(value),
        "KmsMasterKeyId" => Ok(value.to_string()),
        _ => Err(unknown_attribute(name)),
    }
}

/// A redrive policy: `{"deadLetterTargetArn": ARN, "maxReceiveCount": 1..=1000}`, compacted
/// the way SQS reports it (the count as a number even when sent as a string).
fn normalize_redrive_policy(value: &str) -> AwsResult<String> {
    let reason = |r: &str| invalid_value("RedrivePolicy", value, r);
    let Ok(serde_json::Value::Object(policy)) = serde_json::from_str(value) else {
        return Err(reason("Redrive policy is not a valid JSON map."));
    };
    let arn = policy
        .get("deadLetterTargetArn")
        .and_then(|v| v.as_str())
        .ok_or_else(|| {
            reason("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
        })?;
    let count = match policy.get("maxReceiveCount") {
        Some(serde_json::Value::Number(n)) => n.as_i64(),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        Some(_) => None,
        None => {
            return Err(reason(
                "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
            ))
        }
    };
    match count {
        Some(c) if (1..=1000).contains(&c) => Ok(serde_json::json!({
            "deadLetterTargetArn": arn,
            "maxReceiveCount": c,
        })
        .to_string()),
        _ => Err(reason(&format!(
            "Invalid value for maxReceiveCount: {}, valid values are from 1 to 1000 both inclusive.",
            policy.get("maxReceiveCount").map(|v| v.to_string()).unwrap_or_default().trim_matches('"')
        ))),
    }
}

/// A redrive allow policy: `redrivePermission` `allowAll`, `denyAll`, or `byQueue` with 1 to
/// 10 `sourceQueueArns` (which only `byQueue` may carry).
fn normalize_redrive_allow_policy(value: &str) -> AwsResult<String> {
    let unsupported = || {
        invalid_value(
            "RedriveAllowPolicy",
            value,
            "Amazon SQS can’t create the redrive allow policy, as it’s in an unsupported format.",
        )
    };
    let Ok(serde_json::Value::Object(policy)) = serde_json::from_str(value) else {
        return Err(unsupported());
    };
    let sources = policy.get("sourceQueueArns");
    let source_count = match sources {
        None => 0,
        Some(serde_json::Value::Array(a)) if a.iter().all(|v| v.is_string()) => a.len(),
        Some(_) => return Err(unsupported()),
    };
    let valid = match policy.get("redrivePermission").and_then(|p| p.as_str()) {
        Some("allowAll" | "denyAll") => sources.is_none(),
        Some("byQueue") => (1..=10).contains(&source_count),
        _ => false,
    };
    if valid
        && policy
            .keys()
            .all(|k| k == "redrivePermission" || k == "sourceQueueArns")
    {
        Ok(serde_json::Value::Object(policy).to_string())
    } else {
        Err(unsupported())
    }
}

/// Whether a dead-letter queue's redrive allow policy lets `source_arn` use it.
fn allows_source(dead_letter: &Queue, source_arn: &str) -> bool {
    let Some(policy) = dead_letter.attributes.get("RedriveAllowPolicy") else {
        return true;
    };
    let policy: serde_json::Value = serde_json::from_str(policy).unwrap_or_default();
    match policy["redrivePermission"].as_str() {
        Some("denyAll") => false,
        Some("byQueue") => policy["sourceQueueArns"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(source_arn))),
        _ => true,
    }
}

/// Attributes that an empty value removes (SetQueueAttributes; CreateQueue ignores them).
const CLEARABLE: &[&str] = &[
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
];

/// Validates every given attribute; empty clearable ones come back empty (meaning "remove").
fn normalize_all(
    given: &BTreeMap<String, String>,
    fifo: bool,
) -> AwsResult<BTreeMap<String, String>> {
    given
        .iter()
        .map(|(attr, value)| {
            let normalized = if value.is_empty() && CLEARABLE.contains(&attr.as_str()) {
                String::new()
            } else {
                normalize_attribute(attr, value, fifo)?
            };
            Ok((attr.clone(), normalized))
        })
        .collect()
}

/// The attributes a new queue starts with.
fn default_attributes(fifo: bool) -> BTreeMap<String, String> {
    let mut a: BTreeMap<String, String> = [
        ("DelaySeconds", "0"),
        ("MaximumMessageSize", "1048576"),
        ("MessageRetentionPeriod", "345600"),
        ("ReceiveMessageWaitTimeSeconds", "0"),
        ("VisibilityTimeout", "30"),
        ("SqsManagedSseEnabled", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if fifo {
        for (k, v) in [
            ("FifoQueue", "true"),
            ("ContentBasedDeduplication", "false"),
            ("DeduplicationScope", "queue"),
            ("FifoThroughputLimit", "perQueue"),
        ] {
            a.insert(k.to_string(), v.to_string());
        }
    }
    a
}

/// The string members of a map member (`Attributes`, `tags`).
fn string_map(input: &Value, name: &str) -> BTreeMap<String, String> {
    input
        .get(name)
        .and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The account, region and name in a queue ARN.
pub fn parse_queue_arn(arn: &str) -> Option<(&str, &str, &str)> {
    match arn.split(':').collect::<Vec<_>>()[..] {
        ["arn", _, "sqs", region, account, name] => Some((account, region, name)),
        _ => None,
    }
}

/// One page of a queue-name listing (`MaxResults`, `NextToken`): tokens are the base64 of
/// the last name returned, and only a call that set `MaxResults` gets one.
pub struct Page {
    /// List names after this one.
    pub after: String,
    /// At most this many.
    pub limit: i64,
    paged: bool,
}

impl Page {
    /// The page a request asks for.
    pub fn of(input: &Value) -> AwsResult<Page> {
        let max = int_in(
            input,
            "MaxResults",
            1,
            1000,
            "MaxResults must be an integer between 1 and 1000.",
        )?;
        let after = match input.str("NextToken").filter(|t| !t.is_empty()) {
            Some(token) => base64::engine::general_purpose::STANDARD
                .decode(token)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| invalid_parameter("Invalid NextToken value."))?,
            None => String::new(),
        };
        Ok(Page {
            after,
            limit: max.unwrap_or(1000),
            paged: max.is_some(),
        })
    }

    /// Cuts `names` (fetched with one extra) to the page; the output map carries the
    /// `NextToken` when more remain.
    pub fn finish(&self, mut names: Vec<String>) -> (Vec<String>, Value) {
        let more = names.len() as i64 > self.limit;
        names.truncate(usize::try_from(self.limit).unwrap_or(0));
        let mut out = Value::map();
        if let (true, true, Some(last)) = (more, self.paged, names.last()) {
            out.insert(
                "NextToken",
                base64::engine::general_purpose::STANDARD.encode(last),
            );
        }
        (names, out)
    }
}

impl Sqs {
    /// The queue a request's `QueueUrl` names.
    pub(super) fn queue_of(&self, ctx: &Context, input: &Value) -> AwsResult<Queue> {
        let url = required(input, "QueueUrl")?;
        let address = parse_queue_url(url, ctx).ok_or_else(no_such_queue)?;
        self.env
            .store
            .with(|c| {
                store::find_queue(c, &address.account, &address.region, &address.name)
                    .map_err(AwsError::from)
            })?
            .ok_or_else(no_such_queue)
    }

    pub(super) fn create_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required(input, "QueueName")?;
        let given = string_map(input, "Attributes");
        let fifo = match given.get("FifoQueue").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(invalid_attribute_value("FifoQueue")),
        };
        check_queue_name(name, fifo)?;
        let mut normalized = normalize_all(&given, fifo)?;
        normalized.retain(|_, v| !v.is_empty());
        if let Some(policy) = normalized.get("RedrivePolicy") {
            let arn = format!("arn:aws:sqs:{}:{}:{name}", ctx.region, ctx.account);
            self.check_dead_letter_target(ctx, policy, fifo, &arn)?;
        }
        let mut attributes = default_attributes(fifo);
        if normalized.contains_key("KmsMasterKeyId") && !given.contains_key("SqsManagedSseEnabled")
        {
            attributes.insert("SqsManagedSseEnabled".into(), "false".into());
            attributes.insert("KmsDataKeyReusePeriodSeconds".into(), "300".into());
        }
        attributes.extend(normalized.clone());
        if !fifo {
            attributes.remove("FifoQueue");
        }
        let tags = string_map(input, "tags");
        super::policy::check_tags(&tags, name)?;
        let now = now_millis();
        self.check_not_recently_deleted(ctx, name, now)?;
        self.env.store.transaction(|tx| {
            if let Some(existing) = store::find_queue(tx, &ctx.account, &ctx.region, name)? {
                let differing = normalized.iter().find(|(attr, value)| {
                    let current = existing.attributes.get(*attr);
                    let is_default_false = attr.as_str() == "FifoQueue" && value.as_str() == "false";
                    current != Some(*value) && !(is_default_false && current.is_none())
                });
                if let Some((attr, _)) = differing {
                    return Err(AwsError::new(
                        "QueueNameExists",
                        format!(
                            "A queue already exists with the same name and a different value for attribute {attr}"
                        ),
                    )
                    .with_status(400));
                }
                return Ok(());
            }
            store::insert_queue(
                tx,
                &NewQueue {
                    account: &ctx.account,
                    region: &ctx.region,
                    name,
                    fifo,
                    attributes: &attributes,
                    tags: &tags,
                    now,
                },
            )
        })?;
        Ok(Value::map().with("QueueUrl", queue_url(ctx, &ctx.account, name)))
    }

    /// A redrive policy's target must be an existing queue of the same type that allows
    /// `source_arn` as a source.
    fn check_dead_letter_target(
        &self,
        ctx: &Context,
        policy: &str,
        fifo: bool,
        source_arn: &str,
    ) -> AwsResult<()> {
        let parsed: serde_json::Value = serde_json::from_str(policy).unwrap_or_default();
        let arn = parsed["deadLetterTargetArn"].as_str().unwrap_or_default();
        let target = match parse_queue_arn(arn) {
            Some((account, region, name)) if region == ctx.region => self
                .env
                .store
                .with(|c| store::find_queue(c, account, region, name).map_err(AwsError::from))?,
            _ => None,
        };
        match target {
            None => Err(invalid_value(
                "RedrivePolicy",
                policy,
                "Dead letter target does not exist.",
            )),
            Some(t) if t.fifo != fifo => Err(invalid_value(
                "RedrivePolicy",
                policy,
                "Dead-letter queue must be same type of queue as the source.",
            )),
            Some(t) if !allows_source(&t, source_arn) => Err(invalid_value(
                "RedrivePolicy",
                policy,
                "Dead-letter target does not allow this source queue to redrive messages to it.",
            )),
            Some(_) => Ok(()),
        }
    }

    pub(super) fn get_queue_url(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required(input, "QueueName")?;
        let account = input
            .str("QueueOwnerAWSAccountId")
            .filter(|a| !a.is_empty())
            .unwrap_or(&ctx.account);
        let found = self
            .env
            .store
            .with(|c| store::find_queue(c, account, &ctx.region, name).map_err(AwsError::from))?;
        match found {
            Some(q) => Ok(Value::map().with("QueueUrl", queue_url(ctx, &q.account, &q.name))),
            None => Err(no_such_queue()),
        }
    }

    pub(super) fn get_queue_attributes(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let names = string_list(input, "AttributeNames");
        for name in &names {
            let known = *name == "All"
                || COMPUTED_ATTRIBUTES.contains(name)
                || INT_ATTRIBUTES.iter().any(|(n, _, _)| n == name)
                || FIFO_ATTRIBUTES.contains(name)
                || [
                    "Policy",
                    "RedrivePolicy",
                    "RedriveAllowPolicy",
                    "FifoQueue",
                    "KmsMasterKeyId",
                    "SqsManagedSseEnabled",
                ]
                .contains(name);
            if !known {
                return Err(unknown_attribute(name));
            }
        }
        if names.is_empty() {
            return Ok(Value::map());
        }
        let all = self.all_attributes(&queue)?;
        let wanted = |n: &str| names.contains(&"All") || names.contains(&n);
        let selected: BTreeMap<String, Value> = all
            .into_iter()
            .filter(|(n, _)| wanted(n))
            .map(|(n, v)| (n, Value::String(v)))
            .collect();
        if selected.is_empty() {
            return Ok(Value::map());
        }
        Ok(Value::map().with("Attributes", selected))
    }

    /// Every attribute of a queue, computed ones included.
    fn all_attributes(&self, queue: &Queue) -> AwsResult<BTreeMap<String, String>> {
        let now = now_millis();
        let (visible, in_flight, delayed) = self.env.store.with(|c| {
            store::purge_expired(c, queue.id, now)?;
            store::message_counts(c, queue.id, now).map_err(AwsError::from)
        })?;
        let mut all = queue.attributes.clone();
        for (k, v) in [
            ("QueueArn", queue.arn()),
            ("ApproximateNumberOfMessages", visible.to_string()),
            (
                "ApproximateNumberOfMessagesNotVisible",
                in_flight.to_string(),
            ),
            ("ApproximateNumberOfMessagesDelayed", delayed.to_string()),
            ("CreatedTimestamp", (queue.created / 1000).to_string()),
            ("LastModifiedTimestamp", (queue.modified / 1000).to_string()),
        ] {
            all.insert(k.to_string(), v);
        }
        Ok(all)
    }

    pub(super) fn delete_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        self.env
            .store
            .transaction(|tx| store::delete_queue(tx, queue.id).map_err(AwsError::from))?;
        if let Some(deleted) = &self.deleted {
            let key = (
                queue.account.clone(),
                queue.region.clone(),
                queue.name.clone(),
            );
            super::lock(deleted).insert(key, now_millis());
        }
        self.forget_attempts(queue.id);
        self.wake(queue.id);
        Ok(Value::map())
    }

    /// `QueueDeletedRecently` within a minute of deleting the name, when Roto holds deleted
    /// names back as AWS does (`ROTO_SQS_DELAY_RECENTLY_DELETED=1`; off by default, since
    /// test suites recreate queues by name all the time).
    fn check_not_recently_deleted(&self, ctx: &Context, name: &str, now: i64) -> AwsResult<()> {
        let Some(deleted) = &self.deleted else {
            return Ok(());
        };
        let mut deleted = super::lock(deleted);
        deleted.retain(|_, at| now - *at < 60_000);
        let key = (ctx.account.clone(), ctx.region.clone(), name.to_string());
        if deleted.contains_key(&key) {
            return Err(AwsError::new(
                "QueueDeletedRecently",
                "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
            )
            .with_status(400));
        }
        Ok(())
    }

    pub(super) fn set_queue_attributes(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let given = string_map(input, "Attributes");
        if let Some(v) = given.get("FifoQueue") {
            if v.as_str() != if queue.fifo { "true" } else { "false" } {
                return Err(invalid_attribute_value("FifoQueue"));
            }
        }
        let normalized = normalize_all(&given, queue.fifo)?;
        if let Some(policy) = normalized.get("RedrivePolicy").filter(|p| !p.is_empty()) {
            self.check_dead_letter_target(ctx, policy, queue.fifo, &queue.arn())?;
        }
        let mut attributes = queue.attributes.clone();
        for (attr, value) in normalized {
            if attr == "FifoQueue" {
                continue;
            }
            if value.is_empty() {
                attributes.remove(&attr);
            } else {
                attributes.insert(attr, value);
            }
        }
        let now = now_millis();
        self.env.store.with(|c| {
            store::update_attributes(c, queue.id, &attributes, now).map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn purge_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let now = now_millis();
        {
            let mut purges = super::lock(&self.purges);
            if purges.get(&queue.id).is_some_and(|at| now - at < 60_000) {
                return Err(AwsError::new(
                    "PurgeQueueInProgress",
                    format!(
                        "Only one PurgeQueue operation on {} is allowed every 60 seconds.",
                        queue.name
                    ),
                )
                .with_status(403));
            }
            purges.insert(queue.id, now);
        }
        self.env
            .store
            .with(|c| store::purge_messages(c, queue.id).map_err(AwsError::from))?;
        self.forget_attempts(queue.id);
        Ok(Value::map())
    }

    pub(super) fn list_queues(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("QueueNamePrefix").unwrap_or_default();
        let page = Page::of(input)?;
        let names = self.env.store.with(|c| {
            store::queue_names(
                c,
                &ctx.account,
                &ctx.region,
                prefix,
                &page.after,
                page.limit + 1,
            )
            .map_err(AwsError::from)
        })?;
        let (names, mut out) = page.finish(names);
        if !names.is_empty() {
            let urls: Vec<Value> = names
                .iter()
                .map(|n| Value::String(queue_url(ctx, &ctx.account, n)))
                .collect();
            out.insert("QueueUrls", urls);
        }
        Ok(out)
    }
}
