//! A stream's settings beside its shards: enhanced (shard-level) monitoring, server-side
//! encryption under a KMS key, the account's limits, and resource policies on streams and
//! consumers.
//!
//! StartStreamEncryption checks its key with KMS through the dispatcher (KMS keeps its own
//! state; a missing, disabled or pending-deletion key is refused with Kinesis' KMS errors),
//! as AWS checks it before answering. Records are not encrypted at rest: the stream shows
//! `EncryptionType: KMS` and its key, and so do the records written while it is on.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::streams::SHARD_LIMIT;
use super::{invalid_argument, stream_arn, Kinesis};

/// Every shard-level metric, what `ALL` stands for.
const ALL_METRICS: [&str; 7] = [
    "IncomingBytes",
    "IncomingRecords",
    "OutgoingBytes",
    "OutgoingRecords",
    "WriteProvisionedThroughputExceeded",
    "ReadProvisionedThroughputExceeded",
    "IteratorAgeMilliseconds",
];
/// How many on-demand streams an account may have.
const ON_DEMAND_STREAM_LIMIT: i64 = 50;
/// The largest resource policy, in bytes.
const MAX_POLICY_BYTES: usize = 20_480;

/// Metric names as a shaped list.
fn metric_list(metrics: &[String]) -> Value {
    Value::List(metrics.iter().map(|m| m.as_str().into()).collect())
}

/// Kinesis' name for a KMS error relayed from StartStreamEncryption.
fn kms_error(error: AwsError) -> AwsError {
    let code = match &*error.code {
        "NotFoundException" => "KMSNotFoundException",
        "DisabledException" => "KMSDisabledException",
        "KMSInvalidStateException" | "InvalidKeyUsageException" => "KMSInvalidStateException",
        "AccessDeniedException" => "KMSAccessDeniedException",
        _ => return error,
    };
    AwsError::new(code, error.message)
}

impl Kinesis {
    pub(crate) fn change_monitoring(
        &self,
        ctx: &Context,
        input: &Value,
        enable: bool,
    ) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let named: Vec<&str> = input
            .get("ShardLevelMetrics")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if named.is_empty() {
            return Err(invalid_argument(
                "Must specify at least one shard level metric.",
            ));
        }
        let all = named.contains(&"ALL");
        let changed = |m: &&str| all || named.contains(m);
        let desired: Vec<String> = ALL_METRICS
            .iter()
            .filter(|m| match enable {
                true => stream.metrics.iter().any(|c| c == **m) || changed(m),
                false => stream.metrics.iter().any(|c| c == **m) && !changed(m),
            })
            .map(|m| m.to_string())
            .collect();
        let text = serde_json::to_string(&desired).unwrap_or_default();
        self.set_column(ctx, &stream.name, "metrics", &text)?;
        Ok(Value::map()
            .with("StreamName", stream.name.as_str())
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("CurrentShardLevelMetrics", metric_list(&stream.metrics))
            .with("DesiredShardLevelMetrics", metric_list(&desired)))
    }

    pub(crate) async fn start_encryption(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        check_kms_type(input)?;
        let key_id = input.str("KeyId").unwrap_or_default();
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let request = Value::map()
            .with("KeyId", key_id)
            .with("KeySpec", "AES_256");
        dispatcher
            .call(ctx, "kms", "GenerateDataKey", request)
            .await
            .map_err(kms_error)?;
        self.set_column(ctx, &stream.name, "key_id", &key_id)?;
        Ok(Value::map())
    }

    pub(crate) fn stop_encryption(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        check_kms_type(input)?;
        self.set_column(ctx, &stream.name, "key_id", &None::<String>)?;
        Ok(Value::map())
    }

    pub(crate) fn describe_limits(&self, ctx: &Context) -> AwsResult<Value> {
        let (open, on_demand): (i64, i64) = self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT
                   (SELECT COUNT(*) FROM kinesis_shards
                    WHERE account = ?1 AND region = ?2 AND closed_seq IS NULL),
                   (SELECT COUNT(*) FROM kinesis_streams
                    WHERE account = ?1 AND region = ?2 AND mode = 'ON_DEMAND')",
            )?
            .query_row([&ctx.account, &ctx.region], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(AwsError::from)
        })?;
        Ok(Value::map()
            .with("ShardLimit", SHARD_LIMIT)
            .with("OpenShardCount", open)
            .with("OnDemandStreamCount", on_demand)
            .with("OnDemandStreamCountLimit", ON_DEMAND_STREAM_LIMIT))
    }

    /// Checks that the resource a policy request names exists; answers its ARN.
    fn policy_resource<'a>(&self, ctx: &Context, input: &'a Value) -> AwsResult<&'a str> {
        let arn = input.str("ResourceARN").unwrap_or_default();
        let stream_part = arn.split("/consumer/").next().unwrap_or_default();
        let name = super::name_from_arn(ctx, stream_part)?;
        let missing = || {
            AwsError::new(
                "ResourceNotFoundException",
                format!("Resource {arn} under account {} not found.", ctx.account),
            )
        };
        self.find(ctx, name)?.ok_or_else(missing)?;
        if arn.contains("/consumer/") && !self.consumer_exists(ctx, arn)? {
            return Err(missing());
        }
        Ok(arn)
    }

    pub(crate) fn put_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = self.policy_resource(ctx, input)?;
        let policy = input.str("Policy").unwrap_or_default();
        let parsed: Option<serde_json::Value> = serde_json::from_str(policy).ok();
        if policy.len() > MAX_POLICY_BYTES || !parsed.is_some_and(|p| p.is_object()) {
            return Err(invalid_argument(
                "Policy is not a valid JSON resource policy document.",
            ));
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT INTO kinesis_policies (account, region, arn, policy) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (account, region, arn) DO UPDATE SET policy = excluded.policy",
                params![ctx.account, ctx.region, arn, policy],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(crate) fn get_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = self.policy_resource(ctx, input)?;
        let policy: Option<String> = self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT policy FROM kinesis_policies WHERE account = ?1 AND region = ?2 AND arn = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, arn], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("Policy", policy.unwrap_or_else(|| "{}".into())))
    }

    pub(crate) fn delete_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = self.policy_resource(ctx, input)?;
        let removed = self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM kinesis_policies WHERE account = ?1 AND region = ?2 AND arn = ?3",
                [&ctx.account, &ctx.region, arn],
            )
            .map_err(AwsError::from)
        })?;
        if removed == 0 {
            return Err(AwsError::new(
                "ResourceNotFoundException",
                format!("No resource policy found for resource ARN {arn}."),
            ));
        }
        Ok(Value::map())
    }
}

/// Forgets the policies of a stream and its consumers, as DeleteStream does.
pub(crate) fn forget_policies(
    tx: &rusqlite::Connection,
    ctx: &Context,
    stream: &str,
) -> AwsResult<()> {
    let arn = stream_arn(ctx, stream);
    tx.execute_cached(
        "DELETE FROM kinesis_policies WHERE account = ?1 AND region = ?2
         AND (arn = ?3 OR substr(arn, 1, length(?3) + 10) = ?3 || '/consumer/')",
        params![ctx.account, ctx.region, arn],
    )?;
    Ok(())
}

/// InvalidArgumentException unless `EncryptionType` is `KMS`.
fn check_kms_type(input: &Value) -> AwsResult<()> {
    match input.str("EncryptionType") {
        Some("KMS") => Ok(()),
        other => Err(invalid_argument(format!(
            "Encryption type {} is not supported. Supported encryption type: KMS.",
            other.unwrap_or_default()
        ))),
    }
}
