//! What an invocation calls: the operation a target's ARN names, with its input.
//!
//! Templated targets, by the ARN's service: Lambda `Invoke` (asynchronous, as Scheduler
//! invokes functions), SQS `SendMessage` (with `SqsParameters.MessageGroupId`), SNS
//! `Publish`, EventBridge `PutEvents` to the bus (`EventBridgeParameters`' DetailType and
//! Source, the input as Detail), Step Functions `StartExecution` and Kinesis `PutRecord`
//! (`KinesisParameters.PartitionKey`). Universal targets,
//! `arn:aws:scheduler:::aws-sdk:<service>:<action>`, call any operation of any Roto service,
//! their input a JSON object of the operation's parameters fitted to its input shape by
//! [`crate::sdk`]. Before either, the input's context attributes are replaced:
//! `<aws.scheduler.schedule-arn>`, `<aws.scheduler.scheduled-time>`,
//! `<aws.scheduler.execution-id>` and `<aws.scheduler.attempt-number>`.

use roto_core::Value;

use crate::cron::Civil;
use crate::sdk;

/// One call a target makes.
#[derive(Debug, PartialEq)]
pub(super) struct Call {
    pub service: &'static str,
    pub operation: String,
    pub input: Value,
}

/// The facts an invocation's context attributes name.
pub(super) struct Context<'a> {
    pub schedule_arn: &'a str,
    pub scheduled_time: i64,
    pub execution_id: &'a str,
    pub attempt: u32,
}

/// A time as Scheduler writes it: `2026-12-04T10:00:00Z`.
pub(super) fn iso_seconds(millis: i64) -> String {
    let t = Civil::of(millis);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// The input with its context attributes replaced.
pub(super) fn substitute(input: &str, ctx: &Context<'_>) -> String {
    input
        .replace("<aws.scheduler.schedule-arn>", ctx.schedule_arn)
        .replace(
            "<aws.scheduler.scheduled-time>",
            &iso_seconds(ctx.scheduled_time),
        )
        .replace("<aws.scheduler.execution-id>", ctx.execution_id)
        .replace("<aws.scheduler.attempt-number>", &ctx.attempt.to_string())
}

fn member<'v>(target: &'v Value, block: &str, name: &str) -> Option<&'v str> {
    target.get(block).and_then(|b| b.str(name))
}

/// The call `target` makes with `input` (context attributes already replaced), or why it
/// cannot be made.
pub(super) fn call(target: &Value, input: &str) -> Result<Call, String> {
    let arn = target.str("Arn").unwrap_or_default();
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, _, service, region, account, resource] = parts[..] else {
        return Err(format!("{arn} is not a target ARN"));
    };
    let text = |s: &str| Value::String(s.to_string());
    let (service, operation, input) = match service {
        "lambda" => (
            "lambda",
            "Invoke",
            Value::map()
                .with("FunctionName", arn)
                .with("InvocationType", "Event")
                .with("Payload", Value::Blob(input.as_bytes().to_vec())),
        ),
        "sqs" => (
            "sqs",
            "SendMessage",
            Value::map()
                .with(
                    "QueueUrl",
                    format!("https://sqs.{region}.amazonaws.com/{account}/{resource}"),
                )
                .with("MessageBody", input)
                .with_opt(
                    "MessageGroupId",
                    member(target, "SqsParameters", "MessageGroupId"),
                ),
        ),
        "sns" => (
            "sns",
            "Publish",
            Value::map().with("TopicArn", arn).with("Message", input),
        ),
        "events" => ("events", "PutEvents", put_events(target, arn, input)?),
        "states" => (
            "stepfunctions",
            "StartExecution",
            Value::map()
                .with("stateMachineArn", arn)
                .with("input", input),
        ),
        "kinesis" => (
            "kinesis",
            "PutRecord",
            Value::map()
                .with("StreamARN", arn)
                .with("Data", Value::Blob(input.as_bytes().to_vec()))
                .with_opt(
                    "PartitionKey",
                    member(target, "KinesisParameters", "PartitionKey").map(text),
                ),
        ),
        "scheduler" => return universal(resource, input),
        other => return Err(format!("targets of service {other} are not supported")),
    };
    Ok(Call {
        service,
        operation: operation.to_string(),
        input,
    })
}

/// PutEvents' input for an event bus target.
fn put_events(target: &Value, bus: &str, input: &str) -> Result<Value, String> {
    let (Some(detail_type), Some(source)) = (
        member(target, "EventBridgeParameters", "DetailType"),
        member(target, "EventBridgeParameters", "Source"),
    ) else {
        return Err("an event bus target needs EventBridgeParameters".into());
    };
    let entry = Value::map()
        .with("EventBusName", bus)
        .with("DetailType", detail_type)
        .with("Source", source)
        .with("Detail", input);
    Ok(Value::map().with("Entries", Value::List(vec![entry])))
}

/// A universal target's call: `aws-sdk:<service>:<action>`, its input the parameters.
fn universal(resource: &str, input: &str) -> Result<Call, String> {
    let rest = resource
        .strip_prefix("aws-sdk:")
        .ok_or_else(|| format!("{resource} is not a universal target"))?;
    let (name, action) = rest
        .split_once(':')
        .ok_or_else(|| format!("{resource} names no action"))?;
    let (service, _) =
        sdk::service(name).ok_or_else(|| format!("service {name} is not supported"))?;
    let operation = sdk::operation(action);
    let model = roto_core::model::model(service);
    let shape = model
        .operation(&operation)
        .ok_or_else(|| format!("{name} has no action {action}"))?
        .input
        .as_ref()
        .map(|s| model.resolve(s));
    let params: serde_json::Value =
        serde_json::from_str(input).map_err(|e| format!("the input is not JSON: {e}"))?;
    let input = match shape {
        Some(shape) => sdk::to_value(model, shape, &params, 0)?,
        None => Value::map(),
    };
    Ok(Call {
        service,
        operation,
        input,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(arn: &str) -> Value {
        Value::map().with("Arn", arn)
    }

    #[test]
    fn templated_targets_call_their_service() {
        let sqs = target("arn:aws:sqs:us-east-1:000000000000:jobs.fifo")
            .with("SqsParameters", Value::map().with("MessageGroupId", "g"));
        let call = call(&sqs, "hello").unwrap();
        assert_eq!(
            (call.service, call.operation.as_str()),
            ("sqs", "SendMessage")
        );
        assert_eq!(
            call.input.str("QueueUrl"),
            Some("https://sqs.us-east-1.amazonaws.com/000000000000/jobs.fifo")
        );
        assert_eq!(call.input.str("MessageGroupId"), Some("g"));
        let lambda = super::call(&target("arn:aws:lambda:us-east-1:0:function:f"), "{}").unwrap();
        assert_eq!(lambda.input.str("InvocationType"), Some("Event"));
        assert!(super::call(&target("arn:aws:events:r:0:event-bus/b"), "{}").is_err());
        assert!(super::call(&target("nonsense"), "{}").is_err());
    }

    #[test]
    fn universal_targets_fit_json_input_to_the_operation() {
        let t = target("arn:aws:scheduler:::aws-sdk:sqs:sendMessage");
        let call = call(&t, r#"{"QueueUrl": "q", "MessageBody": "b"}"#).unwrap();
        assert_eq!(call.operation, "SendMessage");
        assert_eq!(call.input.str("MessageBody"), Some("b"));
        assert!(super::call(&t, "not json").is_err());
        let unknown = target("arn:aws:scheduler:::aws-sdk:nope:doIt");
        assert!(super::call(&unknown, "{}").is_err());
    }

    #[test]
    fn context_attributes_are_replaced() {
        let ctx = Context {
            schedule_arn: "arn:s",
            scheduled_time: 1_767_571_200_000,
            execution_id: "e-1",
            attempt: 2,
        };
        let out = substitute(
            "<aws.scheduler.schedule-arn> <aws.scheduler.scheduled-time> <aws.scheduler.execution-id> <aws.scheduler.attempt-number>",
            &ctx,
        );
        assert_eq!(out, "arn:s 2026-01-05T00:00:00Z e-1 2");
    }
}
