//! Run Command (SendCommand, ListCommands, CancelCommand) in an account with no managed
//! nodes, as SSM answers it there.
//!
//! Roto has no managed nodes: a command naming instances is `InvalidInstanceId`, and one
//! sent to `Targets` matches none, so it is recorded as finished with no targets
//! (`Success`, every count zero), listed by ListCommands and has no invocations.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::records::{paged, Kind};
use super::Ssm;
use crate::documents;

const COMMAND: Kind<'static> = Kind::top("command");

/// How long a command may wait to be delivered when the request names no timeout.
const DEFAULT_TIMEOUT_SECONDS: i64 = 3600;

fn invalid_command() -> AwsError {
    AwsError::new("InvalidCommandId", "The specified command ID is not valid.")
}

/// `InvalidInstanceId` for instances that are not managed nodes of the account.
pub(super) fn invalid_instance(id: &str) -> AwsError {
    AwsError::new(
        "InvalidInstanceId",
        format!("Instance Id {id} is not valid."),
    )
}

impl Ssm {
    pub(super) fn send_command(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let document = input.str("DocumentName").unwrap_or_default();
        if !document.starts_with("AWS-") && !document.starts_with("arn:") {
            self.document_head(ctx, document)?;
        }
        let instances = input
            .get("InstanceIds")
            .and_then(Value::as_list)
            .unwrap_or_default();
        if let Some(first) = instances.first() {
            return Err(invalid_instance(first.as_str().unwrap_or_default()));
        }
        let now = now_millis();
        let timeout = input
            .int("TimeoutSeconds")
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        let id = crate::ids::uuid();
        let mut command =
            documents::shaped(super::SPEC.model(), "Command", &documents::document(input))?;
        for (member, value) in [
            ("CommandId", Value::from(id.as_str())),
            ("InstanceIds", Value::List(Vec::new())),
            ("RequestedDateTime", Value::Timestamp(now)),
            ("ExpiresAfter", Value::Timestamp(now + timeout * 1000)),
            ("Status", Value::from("Success")),
            ("StatusDetails", Value::from("Success")),
            ("TargetCount", Value::from(0)),
            ("CompletedCount", Value::from(0)),
            ("ErrorCount", Value::from(0)),
            ("DeliveryTimedOutCount", Value::from(0)),
        ] {
            command.insert(member, value);
        }
        for (member, default) in [
            ("DocumentVersion", "$DEFAULT"),
            ("MaxConcurrency", "50"),
            ("MaxErrors", "0"),
        ] {
            if command.get(member).is_none() {
                command.insert(member, default);
            }
        }
        if let Some(role) = input.str("ServiceRoleArn") {
            command.insert("ServiceRole", role);
        }
        self.save(ctx, COMMAND, &id, &command)?;
        Ok(Value::map().with(
            "Command",
            self.record_as(ctx, COMMAND, &id, "Command")?
                .unwrap_or(command),
        ))
    }

    pub(super) fn list_commands(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let commands = match (input.str("CommandId"), input.str("InstanceId")) {
            (Some(id), _) => vec![self
                .record_as(ctx, COMMAND, id, "Command")?
                .ok_or_else(invalid_command)?],
            (None, Some(_)) => Vec::new(),
            (None, None) => self.records_as(ctx, COMMAND, "Command")?,
        };
        paged(input, commands, "Commands", 50)
    }

    pub(super) fn cancel_command(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("CommandId").unwrap_or_default();
        self.record(ctx, COMMAND, id)?.ok_or_else(invalid_command)?;
        if let Some(first) = input
            .get("InstanceIds")
            .and_then(Value::as_list)
            .and_then(|l| l.first())
        {
            return Err(invalid_instance(first.as_str().unwrap_or_default()));
        }
        Ok(Value::map())
    }
}
