//! A stream's settings beside its shards: enhanced (shard-level) monitoring, server-side
//! encryption under a KMS key, the account's limits, resource policies on streams and
//! consumers, the largest record a stream takes, an on-demand stream's warm throughput and
//! its record distribution strategy; and the account's minimum throughput billing
//! commitment (DescribeAccountSettings/UpdateAccountSettings), which warm throughput needs.
//! Like every status transition here, a warm-throughput change completes at once.
//!
//! StartStreamEncryption checks its key with KMS through the dispatcher (KMS keeps its own
//! state; a missing, disabled or pending-deletion key is refused with Kinesis' KMS errors),
//! as AWS checks it before answering. Records are not encrypted at rest: the stream shows
//! `EncryptionType: KMS` and its key, and so do the records written while it is on.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
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
        self.check_key(ctx, key_id).await?;
        self.set_column(ctx, &stream.name, "key_id", &key_id)?;
        Ok(Value::map())
    }

    /// Checks with KMS that `key_id` can encrypt (streams' and channels' keys), answering
    /// Kinesis' KMS errors for a missing, disabled or unusable key.
    pub(crate) async fn check_key(&self, ctx: &Context, key_id: &str) -> AwsResult<()> {
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
        Ok(())
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

/// How long a minimum throughput billing commitment lasts at least.
const COMMITMENT_MINIMUM_MS: i64 = 24 * 3_600_000;
/// The most warm throughput an on-demand stream may ask for, in MiB/s (10 GiB/s).
const MAX_WARM_MIBPS: i64 = 10_240;

/// The account's minimum throughput billing commitment: when it started and, once disabled,
/// when it ends (at the earliest 24 hours after it started).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Commitment {
    started: Option<i64>,
    ended: Option<i64>,
}

impl Commitment {
    fn parse(text: &str) -> Commitment {
        let (started, ended) = text.split_once(',').unwrap_or_default();
        Commitment {
            started: started.parse().ok(),
            ended: ended.parse().ok(),
        }
    }

    fn text(self) -> String {
        let show = |t: Option<i64>| t.map(|t| t.to_string()).unwrap_or_default();
        format!("{},{}", show(self.started), show(self.ended))
    }

    /// Whether it is in force at `now`.
    fn active(self, now: i64) -> bool {
        self.started.is_some() && self.ended.is_none_or(|end| now < end)
    }

    /// After an UpdateAccountSettings asking for `enabled` at `now`: enabling starts one (or
    /// cancels a pending end); disabling ends it, not before its earliest allowed end.
    fn update(self, enabled: bool, now: i64) -> Commitment {
        match (enabled, self.active(now)) {
            (true, true) => Commitment {
                ended: None,
                ..self
            },
            (true, false) => Commitment {
                started: Some(now),
                ended: None,
            },
            (false, true) if self.ended.is_none() => Commitment {
                ended: self.started.map(|s| now.max(s + COMMITMENT_MINIMUM_MS)),
                ..self
            },
            (false, _) => self,
        }
    }

    fn describe(self, now: i64) -> Value {
        let status = match (self.active(now), self.ended) {
            (true, None) => "ENABLED",
            (true, Some(_)) => "ENABLED_UNTIL_EARLIEST_ALLOWED_END",
            (false, _) => "DISABLED",
        };
        Value::map()
            .with("Status", status)
            .with_opt("StartedAt", self.started.map(Value::Timestamp))
            .with_opt("EndedAt", self.ended.map(Value::Timestamp))
            .with_opt(
                "EarliestAllowedEndAt",
                self.started
                    .map(|s| Value::Timestamp(s + COMMITMENT_MINIMUM_MS)),
            )
    }
}

impl Kinesis {
    fn commitment(&self, ctx: &Context) -> AwsResult<Commitment> {
        let text: Option<String> = self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT commitment FROM kinesis_accounts WHERE account = ?1 AND region = ?2",
            )?
            .query_row([&ctx.account, &ctx.region], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(text.map(|t| Commitment::parse(&t)).unwrap_or_default())
    }

    pub(crate) fn describe_account_settings(&self, ctx: &Context) -> AwsResult<Value> {
        let commitment = self.commitment(ctx)?.describe(now_millis());
        Ok(Value::map().with("MinimumThroughputBillingCommitment", commitment))
    }

    pub(crate) fn update_account_settings(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let enabled = input
            .get("MinimumThroughputBillingCommitment")
            .and_then(|c| c.str("Status"))
            == Some("ENABLED");
        let now = now_millis();
        let commitment = self.commitment(ctx)?.update(enabled, now);
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT INTO kinesis_accounts (account, region, commitment) VALUES (?1, ?2, ?3)
                 ON CONFLICT (account, region) DO UPDATE SET commitment = excluded.commitment",
                params![ctx.account, ctx.region, commitment.text()],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with(
            "MinimumThroughputBillingCommitment",
            commitment.describe(now),
        ))
    }

    /// InvalidArgumentException unless an on-demand stream of an account with a minimum
    /// throughput billing commitment may be given `mibps` of warm throughput.
    pub(crate) fn check_warm_throughput(
        &self,
        ctx: &Context,
        mode: &str,
        mibps: i64,
    ) -> AwsResult<()> {
        if mode != "ON_DEMAND" {
            return Err(invalid_argument(
                "Warm throughput is only supported for streams in ON_DEMAND mode.",
            ));
        }
        if !self.commitment(ctx)?.active(now_millis()) {
            return Err(invalid_argument(
                "Warm throughput requires MinimumThroughputBillingCommitment to be enabled for the account.",
            ));
        }
        if mibps > MAX_WARM_MIBPS {
            return Err(AwsError::new(
                "LimitExceededException",
                format!(
                    "Requested warm throughput of {mibps} MiBps exceeds the limit of {MAX_WARM_MIBPS} MiBps."
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn update_warm_throughput(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let target = input.int("WarmThroughputMiBps").unwrap_or_default();
        self.check_warm_throughput(ctx, &stream.mode, target)?;
        self.set_column(ctx, &stream.name, "warm_mibps", &target)?;
        Ok(Value::map()
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("StreamName", stream.name.as_str())
            .with(
                "WarmThroughput",
                Value::map()
                    .with("TargetMiBps", target)
                    .with("CurrentMiBps", stream.warm_mibps.unwrap_or_default()),
            ))
    }

    pub(crate) fn update_max_record_size(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let kib = input.int("MaxRecordSizeInKiB").unwrap_or(1024);
        self.set_column(ctx, &stream.name, "max_record_kib", &kib)?;
        Ok(Value::map())
    }

    pub(crate) fn update_distribution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let strategy = input.str("RecordDistributionStrategy").unwrap_or_default();
        self.set_column(ctx, &stream.name, "distribution", &strategy)?;
        Ok(Value::map())
    }
}
