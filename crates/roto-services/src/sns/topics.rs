//! Topics: CreateTopic, DeleteTopic, Get/SetTopicAttributes, ListTopics, TagResource,
//! UntagResource, ListTagsForResource, AddPermission, RemovePermission.
//!
//! A topic stores only the attributes that were set; GetTopicAttributes adds the computed
//! ones (owner, subscription counts, the default policy and delivery policy) as AWS does.

use std::collections::BTreeMap;

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::json;

use super::store::{self, Topic};
use super::{invalid, not_found, page, required, string_list, string_map, Sns};

/// The most tags a topic may carry.
const MAX_TAGS: usize = 50;

/// The topics one ListTopics page returns.
const PAGE_SIZE: usize = 100;

/// Actions AddPermission may grant on a topic.
const TOPIC_ACTIONS: &[&str] = &[
    "GetTopicAttributes",
    "SetTopicAttributes",
    "AddPermission",
    "RemovePermission",
    "DeleteTopic",
    "Subscribe",
    "ListSubscriptionsByTopic",
    "Publish",
    "Receive",
];

/// Whether `name` may be set on a topic (`fifo` topics accept the FIFO ones).
fn settable(name: &str, fifo: bool) -> bool {
    const ANY: &[&str] = &[
        "DeliveryPolicy",
        "DisplayName",
        "Policy",
        "KmsMasterKeyId",
        "SignatureVersion",
        "TracingConfig",
        "DataProtectionPolicy",
    ];
    const FIFO: &[&str] = &[
        "ContentBasedDeduplication",
        "ArchivePolicy",
        "FifoThroughputScope",
    ];
    ANY.contains(&name)
        || (fifo && FIFO.contains(&name))
        || name.ends_with("FeedbackRoleArn")
        || name.ends_with("FeedbackSampleRate")
}

/// Validates one attribute value.
fn check_attribute(name: &str, value: &str) -> AwsResult<()> {
    let ok = match name {
        "SignatureVersion" => matches!(value, "1" | "2"),
        "TracingConfig" => matches!(value, "PassThrough" | "Active"),
        "ContentBasedDeduplication" | "FifoTopic" => matches!(value, "true" | "false"),
        "FifoThroughputScope" => matches!(value, "Topic" | "MessageGroup"),
        "Policy" | "DeliveryPolicy" | "ArchivePolicy" | "DataProtectionPolicy" => {
            value.is_empty()
                || serde_json::from_str::<serde_json::Value>(value).is_ok_and(|v| v.is_object())
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "Attributes Reason: {name}: Invalid value [{value}]"
        )))
    }
}

/// Checks a topic name for its type.
fn check_topic_name(name: &str, fifo: bool) -> AwsResult<()> {
    let base = name.strip_suffix(".fifo").filter(|_| fifo).unwrap_or(name);
    let valid = !base.is_empty()
        && name.len() <= 256
        && base
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    match (valid, fifo) {
        (true, true) if name.ends_with(".fifo") => Ok(()),
        (true, false) => Ok(()),
        (_, true) => Err(invalid(
            "Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.",
        )),
        (false, false) => Err(invalid("Topic Name")),
    }
}

/// `Tags` as a `[{Key, Value}]` list member.
fn tag_list(input: &Value) -> BTreeMap<String, String> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .map(|l| {
            l.iter()
                .filter_map(|t| Some((t.str("Key")?.to_string(), t.str("Value")?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn tag_values(tags: &BTreeMap<String, String>) -> Vec<Value> {
    tags.iter()
        .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
        .collect()
}

fn check_tags(tags: &BTreeMap<String, String>) -> AwsResult<()> {
    if tags.len() > MAX_TAGS {
        return Err(AwsError::new(
            "TagLimitExceededException",
            "Could not complete request: tag quota of per resource exceeded",
        ));
    }
    if tags
        .iter()
        .any(|(k, v)| k.is_empty() || k.chars().count() > 128 || v.chars().count() > 256)
    {
        return Err(invalid(
            "Tags Reason: Tag keys must be 1 to 128 characters and values at most 256",
        ));
    }
    Ok(())
}

/// The policy every new topic has.
fn default_policy(topic: &Topic) -> String {
    json!({
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [{
            "Sid": "__default_statement_ID",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission",
                "SNS:RemovePermission", "SNS:DeleteTopic", "SNS:Subscribe",
                "SNS:ListSubscriptionsByTopic", "SNS:Publish"
            ],
            "Resource": topic.arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": topic.account}}
        }]
    })
    .to_string()
}

/// The delivery policy AWS reports for topics without one.
const EFFECTIVE_DELIVERY_POLICY: &str = r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#;

/// A topic's ARN.
pub fn topic_arn(ctx: &Context, name: &str) -> String {
    format!("arn:aws:sns:{}:{}:{name}", ctx.region, ctx.account)
}

impl Sns {
    /// The topic an ARN member names, else `NotFound`.
    pub(super) fn topic(&self, arn: &str) -> AwsResult<Topic> {
        self.env
            .store
            .with(|c| store::find_topic(c, arn).map_err(AwsError::from))?
            .ok_or_else(|| not_found("Topic does not exist"))
    }

    pub(super) fn create_topic(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required(input, "Name")?;
        let mut attributes = string_map(input, "Attributes");
        let fifo = match attributes.get("FifoTopic").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => {
                return Err(invalid(format!(
                    "Attributes Reason: FifoTopic: Invalid value [{v}]"
                )))
            }
        };
        check_topic_name(name, fifo || name.ends_with(".fifo"))?;
        if name.ends_with(".fifo") && !fifo {
            return Err(invalid("Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long."));
        }
        attributes.remove("FifoTopic");
        for (k, v) in &attributes {
            if !settable(k, fifo) {
                return Err(invalid("Attributes Reason: Invalid attribute name"));
            }
            check_attribute(k, v)?;
        }
        if let Some(policy) = input.str("DataProtectionPolicy") {
            attributes.insert("DataProtectionPolicy".into(), policy.to_string());
        }
        let tags = tag_list(input);
        check_tags(&tags)?;
        let arn = topic_arn(ctx, name);
        self.env.store.transaction(|tx| {
            if let Some(existing) = store::find_topic(tx, &arn)? {
                if attributes
                    .iter()
                    .any(|(k, v)| existing.attributes.get(k) != Some(v))
                {
                    return Err(invalid(
                        "Attributes Reason: Topic already exists with different attributes",
                    ));
                }
                if !tags.is_empty() && tags != existing.tags {
                    return Err(invalid(
                        "Tags Reason: Topic already exists with different tags",
                    ));
                }
                return Ok(());
            }
            store::insert_topic(
                tx,
                &Topic {
                    arn: arn.clone(),
                    account: ctx.account.clone(),
                    region: ctx.region.clone(),
                    name: name.to_string(),
                    fifo,
                    attributes: attributes.clone(),
                    tags: tags.clone(),
                },
            )?;
            Ok(())
        })?;
        Ok(Value::map().with("TopicArn", arn))
    }

    pub(super) fn delete_topic(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "TopicArn")?;
        self.env
            .store
            .transaction(|tx| store::delete_topic(tx, arn).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn get_topic_attributes(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let topic = self.topic(required(input, "TopicArn")?)?;
        let subs = self
            .env
            .store
            .with(|c| store::topic_subscriptions(c, &topic.arn).map_err(AwsError::from))?;
        let confirmed = subs.iter().filter(|s| s.confirmed).count();
        let mut all: BTreeMap<String, Value> = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            all.insert(k.to_string(), Value::String(v));
        };
        put("TopicArn", topic.arn.clone());
        put("Owner", topic.account.clone());
        put("DisplayName", String::new());
        put("Policy", default_policy(&topic));
        put("SubscriptionsConfirmed", confirmed.to_string());
        put("SubscriptionsPending", (subs.len() - confirmed).to_string());
        put("SubscriptionsDeleted", "0".into());
        put("EffectiveDeliveryPolicy", EFFECTIVE_DELIVERY_POLICY.into());
        if topic.fifo {
            put("FifoTopic", "true".into());
            put("ContentBasedDeduplication", "false".into());
        }
        for (k, v) in &topic.attributes {
            put(k, v.clone());
        }
        Ok(Value::map().with("Attributes", all))
    }

    pub(super) fn set_topic_attributes(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required(input, "AttributeName")?;
        let value = input.str("AttributeValue").unwrap_or_default();
        let mut topic = self.topic(required(input, "TopicArn")?)?;
        if !settable(name, topic.fifo) {
            return Err(invalid("AttributeName"));
        }
        check_attribute(name, value)?;
        if value.is_empty() && name != "DisplayName" {
            topic.attributes.remove(name);
        } else {
            topic.attributes.insert(name.to_string(), value.to_string());
        }
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn list_topics(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let after = input.str("NextToken").unwrap_or_default();
        let arns = self.env.store.with(|c| {
            store::topic_arns(c, &ctx.account, &ctx.region, after, PAGE_SIZE as i64 + 1)
                .map_err(AwsError::from)
        })?;
        let (arns, token) = page(arns, PAGE_SIZE, |a| a.as_str());
        let topics: Vec<Value> = arns
            .into_iter()
            .map(|a| Value::map().with("TopicArn", a))
            .collect();
        Ok(Value::map()
            .with("Topics", topics)
            .with_opt("NextToken", token))
    }

    /// The topic a tagging call's `ResourceArn` names, else `ResourceNotFound`.
    fn tagged_topic(&self, input: &Value) -> AwsResult<Topic> {
        let arn = required(input, "ResourceArn")?;
        self.env
            .store
            .with(|c| store::find_topic(c, arn).map_err(AwsError::from))?
            .ok_or_else(|| AwsError::new("ResourceNotFoundException", "Resource does not exist"))
    }

    pub(super) fn tag_resource(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut topic = self.tagged_topic(input)?;
        topic.tags.extend(tag_list(input));
        check_tags(&topic.tags)?;
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut topic = self.tagged_topic(input)?;
        for key in string_list(input, "TagKeys") {
            topic.tags.remove(key);
        }
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_for_resource(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let topic = self.tagged_topic(input)?;
        Ok(Value::map().with("Tags", tag_values(&topic.tags)))
    }

    pub(super) fn add_permission(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut topic = self.topic(required(input, "TopicArn")?)?;
        let label = required(input, "Label")?;
        let accounts = string_list(input, "AWSAccountId");
        let actions = string_list(input, "ActionName");
        if accounts.is_empty() {
            return Err(invalid("AWSAccountId"));
        }
        if actions.is_empty() {
            return Err(invalid("ActionName"));
        }
        if actions.iter().any(|a| !TOPIC_ACTIONS.contains(a)) {
            return Err(invalid("Policy statement action out of service scope!"));
        }
        let mut policy: serde_json::Value = topic
            .attributes
            .get("Policy")
            .and_then(|p| serde_json::from_str(p).ok())
            .unwrap_or_else(|| serde_json::from_str(&default_policy(&topic)).unwrap_or_default());
        let statements = policy
            .get_mut("Statement")
            .and_then(serde_json::Value::as_array_mut);
        let Some(statements) = statements else {
            return Err(invalid("Policy"));
        };
        if statements.iter().any(|s| s["Sid"] == label) {
            return Err(invalid("Statement already exists"));
        }
        let one_or_many = |v: Vec<String>| match <[String; 1]>::try_from(v) {
            Ok([one]) => serde_json::Value::String(one),
            Err(many) => serde_json::Value::from(many),
        };
        statements.push(json!({
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": one_or_many(accounts.iter().map(|a| format!("arn:aws:iam::{a}:root")).collect())},
            "Action": one_or_many(actions.iter().map(|a| format!("SNS:{a}")).collect()),
            "Resource": topic.arn,
        }));
        topic.attributes.insert("Policy".into(), policy.to_string());
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    /// The topic's data protection policy (empty when it has none), as the
    /// `DataProtectionPolicy` attribute holds it.
    pub(super) fn get_data_protection_policy(&self, input: &Value) -> AwsResult<Value> {
        let topic = self.topic(required(input, "ResourceArn")?)?;
        let policy = topic.attributes.get("DataProtectionPolicy").cloned();
        Ok(Value::map().with("DataProtectionPolicy", policy.unwrap_or_default()))
    }

    /// Sets the topic's `DataProtectionPolicy` attribute.
    pub(super) fn put_data_protection_policy(&self, input: &Value) -> AwsResult<Value> {
        let mut topic = self.topic(required(input, "ResourceArn")?)?;
        let policy = required(input, "DataProtectionPolicy")?;
        if serde_json::from_str::<serde_json::Value>(policy).is_err() {
            return Err(invalid("DataProtectionPolicy"));
        }
        topic
            .attributes
            .insert("DataProtectionPolicy".into(), policy.to_string());
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn remove_permission(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut topic = self.topic(required(input, "TopicArn")?)?;
        let label = required(input, "Label")?;
        let Some(mut policy) = topic
            .attributes
            .get("Policy")
            .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        else {
            return Ok(Value::map());
        };
        if let Some(statements) = policy
            .get_mut("Statement")
            .and_then(serde_json::Value::as_array_mut)
        {
            statements.retain(|s| s["Sid"] != label);
        }
        topic.attributes.insert("Policy".into(), policy.to_string());
        self.env
            .store
            .with(|c| store::update_topic(c, &topic).map_err(AwsError::from))?;
        Ok(Value::map())
    }
}
