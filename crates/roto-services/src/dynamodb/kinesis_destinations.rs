//! Kinesis Data Streams destinations: Enable, Disable, Describe and
//! UpdateKinesisStreamingDestination.
//!
//! Roto serves no Kinesis, so no Kinesis data stream exists and none can be a table's
//! destination. The operations answer as AWS answers for a stream that does not exist:
//! after the table is found (`ResourceNotFoundException` for a missing one, as for every
//! table operation) and the stream ARN is seen to be one (`ValidationException`
//! otherwise), enabling, disabling or updating a destination is
//! `ResourceNotFoundException` for the stream, and a table lists no destinations.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::tables::{load_table, table_name, table_not_found};
use super::DynamoDb;

/// Checks the table exists; returns its name.
fn existing_table(service: &DynamoDb, ctx: &Context, input: &Value) -> AwsResult<String> {
    let name = table_name(input)?;
    service
        .env
        .store
        .with(|c| load_table(c, ctx, &name))?
        .ok_or_else(|| table_not_found(&name))?;
    Ok(name)
}

/// Whether an ARN has the form of a Kinesis data stream's.
fn is_stream_arn(arn: &str) -> bool {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    matches!(
        parts.as_slice(),
        ["arn", partition, "kinesis", region, account, resource]
            if partition.starts_with("aws")
                && !region.is_empty()
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit())
                && resource.strip_prefix("stream/").is_some_and(|name| !name.is_empty())
    )
}

impl DynamoDb {
    /// Enable, Disable and UpdateKinesisStreamingDestination: the stream named cannot exist.
    pub(super) fn change_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        existing_table(self, ctx, input)?;
        let arn = input.str("StreamArn").unwrap_or_default();
        if !is_stream_arn(arn) {
            return Err(AwsError::validation(format!("Invalid StreamArn: {arn}")));
        }
        Err(AwsError::new(
            "ResourceNotFoundException",
            format!("Requested resource not found: Stream: {arn} not found"),
        )
        .with_status(400))
    }

    pub(super) fn describe_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = existing_table(self, ctx, input)?;
        Ok(Value::map()
            .with("TableName", name)
            .with("KinesisDataStreamDestinations", Value::List(Vec::new())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_arns_are_told_from_others() {
        assert!(is_stream_arn(
            "arn:aws:kinesis:us-east-1:123456789012:stream/orders"
        ));
        assert!(!is_stream_arn(
            "arn:aws:kinesis:us-east-1:123456789012:stream/"
        ));
        assert!(!is_stream_arn(
            "arn:aws:sqs:us-east-1:123456789012:stream/orders"
        ));
        assert!(!is_stream_arn(
            "arn:aws:kinesis:us-east-1:1234:stream/orders"
        ));
        assert!(!is_stream_arn("orders"));
    }
}
