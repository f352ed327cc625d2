//! PutEvents and TestEventPattern: the event envelope, entry validation, rule matching,
//! the input each target receives, and the delivery that carries it.

use roto_core::events::Event;
use roto_core::timestamp::{format, TimestampFormat};
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::invoke::API_DESTINATION_CALL;
use super::metrics;
use super::rules::{parse_pattern, Rule};
use super::{bus_name, new_id, Events};

/// The largest PutEvents request (entries' sizes summed), 256 KB.
const MAX_REQUEST_SIZE: usize = 256 * 1024;

/// Attempts per target delivery (EventBridge retries; the bus backs off between them).
const DELIVERY_ATTEMPTS: u32 = 3;

/// An event's `time`, as EventBridge writes it: seconds, UTC (`2026-01-01T00:00:00Z`).
pub(super) fn event_time(millis: EpochMillis) -> String {
    let text = format(millis - millis.rem_euclid(1000), TimestampFormat::Iso8601);
    match text.split_once('.') {
        Some((seconds, _)) => format!("{seconds}Z"),
        None => text,
    }
}

/// The size AWS counts for one entry.
fn entry_size(entry: &Value) -> usize {
    let text = |m: &str| entry.str(m).map_or(0, str::len);
    let resources: usize = entry
        .get("Resources")
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_str)
        .map(str::len)
        .sum();
    let time = if entry.get("Time").is_some() { 14 } else { 0 };
    text("Source") + text("DetailType") + text("Detail") + resources + time
}

/// An entry's failure, as `FailedEntries` reports it.
fn failure(code: &str, message: &str) -> Value {
    Value::map()
        .with("ErrorCode", code)
        .with("ErrorMessage", message)
}

/// The envelope of one entry, or why the entry is refused.
fn envelope(ctx: &Context, entry: &Value, now: EpochMillis) -> Result<Json, Value> {
    let required = |member: &str| match entry.str(member) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(failure(
            "InvalidArgument",
            &format!("Parameter {member} is not valid. Reason: {member} is a required argument."),
        )),
    };
    let source = required("Source")?;
    let detail_type = required("DetailType")?;
    let detail_text = required("Detail")?;
    let detail: Json = match serde_json::from_str(detail_text) {
        Ok(d @ Json::Object(_)) => d,
        _ => return Err(failure("MalformedDetail", "Detail is malformed.")),
    };
    let time = match entry.get("Time") {
        Some(Value::Timestamp(t)) => *t,
        _ => now,
    };
    let resources: Vec<Json> = entry
        .get("Resources")
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|r| r.as_str().map(Json::from))
        .collect();
    Ok(json!({
        "version": "0",
        "id": new_id(),
        "detail-type": detail_type,
        "source": source,
        "account": ctx.account,
        "time": event_time(time),
        "region": ctx.region,
        "resources": resources,
        "detail": detail,
    }))
}

impl Events {
    pub(super) fn put_events(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let entries = input.get("Entries").and_then(Value::as_list).unwrap_or(&[]);
        if entries.iter().map(entry_size).sum::<usize>() > MAX_REQUEST_SIZE {
            return Err(AwsError::validation(
                "Total size of the entries in the request is over the limit.",
            ));
        }
        let now = self.now();
        let mut results = Vec::new();
        let mut failed = 0i64;
        for entry in entries {
            let bus = bus_name(entry, "EventBusName");
            let outcome = match envelope(ctx, entry, now) {
                Ok(_) if !self.bus_exists(ctx, &bus)? => Err(failure(
                    "ResourceNotFoundException",
                    &format!("Event bus {bus} does not exist."),
                )),
                other => other,
            };
            match outcome {
                Ok(event) => {
                    let id = event["id"].as_str().unwrap_or_default().to_string();
                    self.route(&ctx.account, &ctx.region, &bus, &event)?;
                    self.archive_event(ctx, &bus, &event)?;
                    results.push(Value::map().with("EventId", id));
                }
                Err(f) => {
                    failed += 1;
                    results.push(f);
                }
            }
        }
        Ok(Value::map()
            .with("FailedEntryCount", failed)
            .with("Entries", results))
    }

    /// Delivers an event to the targets of every enabled rule of `bus` it matches.
    pub(super) fn route(
        &self,
        account: &str,
        region: &str,
        bus: &str,
        event: &Json,
    ) -> AwsResult<()> {
        for rule in self.bus_rules(account, region, bus)? {
            if rule.state != "ENABLED" {
                continue;
            }
            let Some(text) = &rule.pattern else {
                continue;
            };
            let Ok(pattern) = parse_pattern(text) else {
                continue;
            };
            if pattern.matches(event) {
                self.fire(&rule, event)?;
            }
        }
        Ok(())
    }

    /// Sends `event` to every target of `rule`.
    pub(super) fn fire(&self, rule: &Rule, event: &Json) -> AwsResult<()> {
        let mut invocations = 0;
        for target in self.targets(rule)? {
            let input = target_input(rule, &target, event);
            if let Some(delivery) = delivery(rule, &target, input, event) {
                self.env.bus.publish(delivery);
                invocations += 1;
            }
        }
        metrics::fired(&self.env, rule, invocations);
        Ok(())
    }
}

pub(super) fn test_event_pattern(input: &Value) -> AwsResult<Value> {
    let pattern = parse_pattern(input.str("EventPattern").unwrap_or_default())?;
    let event: Json = match serde_json::from_str(input.str("Event").unwrap_or_default()) {
        Ok(e @ Json::Object(_)) => e,
        _ => return Err(AwsError::validation("Parameter Event is not valid.")),
    };
    for member in ["id", "account", "source", "time", "region", "detail-type"] {
        if event.get(member).is_none() {
            return Err(AwsError::validation(format!(
                "Parameter Event is not valid. Reason: Provided Event must have mandatory field {member}."
            )));
        }
    }
    Ok(Value::map().with("Result", pattern.matches(&event)))
}

/// One step of a JSONPath: a member or an array index.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    Member(String),
    Index(usize),
}

/// Parses the JSONPath subset EventBridge paths use: `$`, `$.a.b`, `$.a[0]`, `$['a-b']`.
pub(super) fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Member(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            steps.push(Step::Member(r[..end].to_string()));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            steps.push(Step::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// The value `path` selects in `event`, if any.
fn select<'j>(event: &'j Json, path: &str) -> Option<&'j Json> {
    parse_path(path)?
        .iter()
        .try_fold(event, |node, step| match step {
            Step::Member(m) => node.get(m),
            Step::Index(i) => node.get(*i),
        })
}

/// What a target receives: `Input` verbatim, the part `InputPath` selects, the
/// `InputTransformer` template filled in, or else the whole event.
fn target_input(rule: &Rule, target: &Value, event: &Json) -> String {
    if let Some(input) = target.str("Input") {
        return input.to_string();
    }
    if let Some(path) = target.str("InputPath") {
        return select(event, path).unwrap_or(&Json::Null).to_string();
    }
    if let Some(transformer) = target.get("InputTransformer") {
        return transform(rule, transformer, event);
    }
    event.to_string()
}

/// Fills an `InputTemplate`'s `<placeholders>` from `InputPathsMap` and the predefined
/// `aws.events.*` variables: inside quotes a string goes in bare (escaped), elsewhere
/// every value goes in as JSON; a path that selects nothing is `null` (empty in quotes).
fn transform(rule: &Rule, transformer: &Value, event: &Json) -> String {
    let template = transformer.str("InputTemplate").unwrap_or_default();
    let paths = transformer.get("InputPathsMap").and_then(Value::as_map);
    let lookup = |name: &str| -> Option<Json> {
        if let Some(path) = paths.and_then(|p| p.get(name)).and_then(Value::as_str) {
            return Some(select(event, path).cloned().unwrap_or(Json::Null));
        }
        match name {
            "aws.events.rule-arn" => Some(Json::from(rule.arn())),
            "aws.events.rule-name" => Some(Json::from(rule.name.as_str())),
            "aws.events.event.ingestion-time" => Some(event["time"].clone()),
            "aws.events.event" | "aws.events.event.json" => Some(event.clone()),
            _ => None,
        }
    };
    let mut out = String::with_capacity(template.len());
    let mut in_quotes = false;
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            if let Some(end) = rest.find('>') {
                let name = &rest[1..end];
                if let Some(value) = lookup(name) {
                    match (&value, in_quotes) {
                        (Json::String(s), true) => {
                            let quoted = Json::from(s.as_str()).to_string();
                            out.push_str(&quoted[1..quoted.len() - 1]);
                        }
                        (Json::Null, true) => {}
                        (v, _) => out.push_str(&v.to_string()),
                    }
                    rest = &rest[end + 1..];
                    continue;
                }
            }
        }
        if c == '"' && !out.ends_with('\\') {
            in_quotes = !in_quotes;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The bus event that delivers `input` to `target`, or `None` for a kind of target Roto
/// does not deliver to.
fn delivery(rule: &Rule, target: &Value, input: String, event: &Json) -> Option<Event> {
    let arn = target.str("Arn").unwrap_or_default();
    let mut parts = arn.splitn(6, ':');
    let service = parts.nth(2)?;
    let region = parts.next()?.to_string();
    let account = parts.next()?.to_string();
    let resource = parts.next().unwrap_or_default();
    let call = |service: &str, operation: &str, input: Value| {
        Value::map()
            .with("Service", service)
            .with("Operation", operation)
            .with("Input", input)
    };
    let (target_service, payload) = match service {
        "sqs" => {
            let mut payload = Value::map().with("MessageBody", input);
            if resource.ends_with(".fifo") {
                if let Some(group) = target
                    .get("SqsParameters")
                    .and_then(|p| p.str("MessageGroupId"))
                {
                    payload.insert("MessageGroupId", group);
                }
                payload.insert(
                    "MessageDeduplicationId",
                    event["id"].as_str().unwrap_or_default(),
                );
            }
            ("sqs", payload)
        }
        "sns" => (
            "events",
            calls(vec![call(
                "sns",
                "Publish",
                Value::map().with("TopicArn", arn).with("Message", input),
            )]),
        ),
        "lambda" => (
            "events",
            calls(vec![call(
                "lambda",
                "Invoke",
                Value::map()
                    .with("FunctionName", arn)
                    .with("InvocationType", "Event")
                    .with("Payload", Value::Blob(input.into_bytes())),
            )]),
        ),
        "states" => (
            "events",
            calls(vec![call(
                "stepfunctions",
                "StartExecution",
                Value::map()
                    .with("stateMachineArn", arn)
                    .with("input", input),
            )]),
        ),
        "logs" => {
            let group = resource
                .strip_prefix("log-group:")?
                .trim_end_matches(":*")
                .to_string();
            let stream = event["id"].as_str().unwrap_or_default().to_string();
            let time = roto_core::timestamp::parse(event["time"].as_str().unwrap_or_default())
                .unwrap_or_else(roto_core::timestamp::now_millis);
            let streams = Value::map()
                .with("logGroupName", group.as_str())
                .with("logStreamName", stream.as_str());
            let put = streams.clone().with(
                "logEvents",
                vec![Value::map().with("timestamp", time).with("message", input)],
            );
            let mut create = call("logs", "CreateLogStream", streams);
            create.insert("Tolerate", "ResourceAlreadyExistsException");
            (
                "events",
                calls(vec![create, call("logs", "PutLogEvents", put)]),
            )
        }
        "events" if resource.starts_with("api-destination/") => (
            "events",
            Value::map().with(
                API_DESTINATION_CALL,
                Value::map()
                    .with("Body", input)
                    .with_opt("HttpParameters", target.get("HttpParameters").cloned()),
            ),
        ),
        "events" => {
            let bus = resource.strip_prefix("event-bus/")?;
            let entry = Value::map()
                .with("EventBusName", bus)
                .with("Source", event["source"].as_str().unwrap_or_default())
                .with(
                    "DetailType",
                    event["detail-type"].as_str().unwrap_or_default(),
                )
                .with("Detail", event["detail"].to_string())
                .with("Resources", Value::from_json(&event["resources"]));
            (
                "events",
                calls(vec![call(
                    "events",
                    "PutEvents",
                    Value::map().with("Entries", vec![entry]),
                )]),
            )
        }
        _ => return None,
    };
    Some(Event {
        kind: "events:RuleTriggered".into(),
        source_service: "events".into(),
        source: rule.arn(),
        target_service: target_service.into(),
        target: arn.to_string(),
        account,
        region,
        payload,
        max_attempts: DELIVERY_ATTEMPTS,
    })
}

/// A delivery payload of calls for [`Events::run_calls`](super::Events).
fn calls(calls: Vec<Value>) -> Value {
    Value::map().with("Calls", calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> Rule {
        Rule {
            account: "000000000000".into(),
            region: "us-east-1".into(),
            bus: "default".into(),
            name: "r".into(),
            pattern: None,
            schedule: None,
            state: "ENABLED".into(),
            description: None,
            role_arn: None,
            created: 0,
            last_fired: None,
        }
    }

    fn event() -> Json {
        json!({"id": "e1", "time": "2026-01-01T00:00:00Z", "source": "shop",
               "detail": {"order": {"id": "o-1", "total": 12.5, "tags": ["a", "b"]}}})
    }

    #[test]
    fn paths_select_members_and_indexes() {
        let e = event();
        assert_eq!(select(&e, "$.detail.order.id"), Some(&json!("o-1")));
        assert_eq!(select(&e, "$.detail.order.tags[1]"), Some(&json!("b")));
        assert_eq!(select(&e, "$['source']"), Some(&json!("shop")));
        assert_eq!(select(&e, "$"), Some(&e));
        assert_eq!(select(&e, "$.missing"), None);
        assert!(parse_path("detail").is_none());
        assert!(parse_path("$..x").is_none());
    }

    #[test]
    fn templates_quote_values_outside_strings_only() {
        let transformer = Value::map()
            .with(
                "InputPathsMap",
                Value::map()
                    .with("id", "$.detail.order.id")
                    .with("total", "$.detail.order.total")
                    .with("none", "$.detail.nothing"),
            )
            .with(
                "InputTemplate",
                r#"{"order": <id>, "text": "order <id> costs <total>", "n": <total>, "x": "<none>", "rule": "<aws.events.rule-name>"}"#,
            );
        let out: Json = serde_json::from_str(&transform(&rule(), &transformer, &event())).unwrap();
        assert_eq!(
            out,
            json!({"order": "o-1", "text": "order o-1 costs 12.5", "n": 12.5, "x": "", "rule": "r"})
        );
    }

    #[test]
    fn string_templates_fill_in_bare_text() {
        let transformer = Value::map()
            .with("InputPathsMap", Value::map().with("s", "$.source"))
            .with("InputTemplate", r#""from <s>""#);
        assert_eq!(transform(&rule(), &transformer, &event()), r#""from shop""#);
    }

    #[test]
    fn event_times_drop_milliseconds() {
        assert_eq!(event_time(1_767_225_600_123), "2026-01-01T00:00:00Z");
    }
}
