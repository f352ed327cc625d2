//! Secrets Manager: secrets, their versions and staging labels, over the json 1.1 protocol.
//!
//! A secret's metadata is a row of `sm_secrets`; each version's value is a row of
//! `sm_versions`, encrypted through KMS by envelope encryption (see [`crate::envelope`])
//! under the secret's `KmsKeyId` or the account's `aws/secretsmanager` key, which KMS
//! creates on first use as AWS does. The encryption context names the secret's ARN and the
//! version id, as AWS's does. Staging labels move between versions exactly as AWS moves
//! them (see [`stages`]).
//!
//! - [`secrets`]: create, describe, list, update, delete/restore, tags, resource policies.
//! - [`rotation`]: RotateSecret, CancelRotateSecret, and running the rotation function.
//! - [`versions`]: values (get, put, batch get), version listing and stage moves.
//! - [`replication`]: replicas in other regions (ReplicateSecretToRegions,
//!   RemoveRegionsFromReplication, StopReplicationToReplica): real secrets there, kept in
//!   line with their primary after every write to it, and refusing writes of their own.
//! - [`password`]: GetRandomPassword, from the operating system generator.

use std::io;
use std::sync::Arc;

use roto_core::access::{Access, Principal};
use roto_core::events::{DeliveryError, Event};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

mod access;
mod password;
mod replication;
mod rotation;
mod secrets;
mod stages;
mod versions;

static SPEC: ServiceSpec = ServiceSpec {
    name: "secretsmanager",
    model: "secretsmanager",
    query_model: None,
    signing_names: &["secretsmanager"],
    target_prefix: Some("secretsmanager"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sm_secrets (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    arn TEXT NOT NULL,
    created INTEGER NOT NULL,
    changed INTEGER NOT NULL,
    accessed INTEGER,
    description TEXT,
    kms_key_id TEXT,
    deleted INTEGER,
    deletion_date INTEGER,
    rotation_enabled INTEGER NOT NULL DEFAULT 0,
    rotation_lambda TEXT,
    rotation_rules TEXT,
    last_rotated INTEGER,
    tags TEXT NOT NULL DEFAULT '[]',
    policy TEXT,
    PRIMARY KEY (account, region, name)
);
CREATE UNIQUE INDEX IF NOT EXISTS sm_secrets_arn ON sm_secrets (arn);
CREATE TABLE IF NOT EXISTS sm_replicas (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    replica_region TEXT NOT NULL,
    kms_key_id TEXT,
    status TEXT NOT NULL,
    message TEXT NOT NULL,
    replicated INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (account, region, name, replica_region)
);
CREATE INDEX IF NOT EXISTS sm_replicas_replica ON sm_replicas (account, replica_region, name);
CREATE TABLE IF NOT EXISTS sm_versions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    created INTEGER NOT NULL,
    accessed INTEGER,
    kind TEXT NOT NULL,
    ciphertext BLOB NOT NULL,
    stages TEXT NOT NULL,
    kms_key_id TEXT,
    PRIMARY KEY (account, region, name, version_id)
);
";

/// The KMS alias of the key that protects secrets that name none.
const DEFAULT_KEY: &str = "alias/aws/secretsmanager";

/// A secret's metadata as stored.
#[derive(Debug, Clone)]
pub(crate) struct Secret {
    name: String,
    arn: String,
    created: i64,
    changed: i64,
    accessed: Option<i64>,
    description: Option<String>,
    kms_key_id: Option<String>,
    deleted: Option<i64>,
    rotation_enabled: bool,
    rotation_lambda: Option<String>,
    rotation_rules: Option<String>,
    last_rotated: Option<i64>,
    tags: Vec<(String, String)>,
    policy: Option<String>,
    /// The primary's region, for a replica.
    primary_region: Option<String>,
    /// Whether the secret is a primary with replicas (or failed replications) recorded.
    has_replicas: bool,
}

/// The columns [`secret_from_row`] reads, the last two from the replica records.
const SECRET_COLUMNS: &str = "name, arn, created, changed, accessed, description, kms_key_id,
    deleted, rotation_enabled, rotation_lambda, rotation_rules, last_rotated, tags, policy,
    deletion_date,
    (SELECT r.region FROM sm_replicas r WHERE r.account = sm_secrets.account
     AND r.replica_region = sm_secrets.region AND r.name = sm_secrets.name AND r.replicated),
    EXISTS (SELECT 1 FROM sm_replicas r WHERE r.account = sm_secrets.account
     AND r.region = sm_secrets.region AND r.name = sm_secrets.name)";

fn secret_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Secret, Option<i64>)> {
    let tags: String = r.get(12)?;
    Ok((
        Secret {
            name: r.get(0)?,
            arn: r.get(1)?,
            created: r.get(2)?,
            changed: r.get(3)?,
            accessed: r.get(4)?,
            description: r.get(5)?,
            kms_key_id: r.get(6)?,
            deleted: r.get(7)?,
            rotation_enabled: r.get(8)?,
            rotation_lambda: r.get(9)?,
            rotation_rules: r.get(10)?,
            last_rotated: r.get(11)?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            policy: r.get(13)?,
            primary_region: r.get(15)?,
            has_replicas: r.get(16)?,
        },
        r.get(14)?,
    ))
}

fn not_found() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "Secrets Manager can't find the specified secret.",
    )
}

fn invalid_parameter(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterException", message)
}

fn invalid_request(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidRequestException", message)
}

impl Secret {
    /// The `PrimaryRegion` AWS shows: the primary's for a replica, `region` (the secret's
    /// own) for a primary with replicas, none for a secret that is not replicated.
    fn shown_primary_region<'s>(&'s self, region: &'s str) -> Option<&'s str> {
        match (&self.primary_region, self.has_replicas) {
            (Some(primary), _) => Some(primary),
            (None, true) => Some(region),
            (None, false) => None,
        }
    }
}

/// What a replica answers to a write of its own.
fn not_permitted_on_replica() -> AwsError {
    invalid_parameter(
        "Operation not permitted on a replica secret. Call must be made in primary secret's region.",
    )
}

fn marked_for_deletion() -> AwsError {
    invalid_request(
        "You can't perform this operation on the secret because it was marked for deletion.",
    )
}

/// Operations a replica refuses: it changes only with its primary.
const PRIMARY_ONLY: &[&str] = &[
    "PutSecretValue",
    "UpdateSecret",
    "UpdateSecretVersionStage",
    "RotateSecret",
    "CancelRotateSecret",
    "TagResource",
    "UntagResource",
    "PutResourcePolicy",
    "DeleteResourcePolicy",
    "DeleteSecret",
    "RestoreSecret",
    "ReplicateSecretToRegions",
    "RemoveRegionsFromReplication",
];

/// Operations that change a secret its replicas mirror (values, labels, metadata).
const MIRRORED_WRITES: &[&str] = &[
    "PutSecretValue",
    "UpdateSecret",
    "UpdateSecretVersionStage",
    "RotateSecret",
    "CancelRotateSecret",
    "TagResource",
    "UntagResource",
    "PutResourcePolicy",
    "DeleteResourcePolicy",
];

/// The date part of a time, as AWS reports `LastAccessedDate`.
fn day_of(millis: i64) -> i64 {
    millis - millis.rem_euclid(86_400_000)
}

/// Secrets Manager.
pub struct SecretsManager {
    env: Arc<Env>,
}

impl SecretsManager {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<SecretsManager> {
        env.store.migrate(SCHEMA)?;
        Ok(SecretsManager { env })
    }

    /// The secret a `SecretId` names: its name, its full ARN, or its ARN without the random
    /// suffix. Secrets whose recovery window has passed are removed first.
    fn find(&self, ctx: &Context, secret_id: &str) -> AwsResult<Option<Secret>> {
        let found = self.env.store.with(|c| {
            let sql = format!(
                "SELECT {SECRET_COLUMNS} FROM sm_secrets WHERE account = ?1 AND region = ?2 AND
                 (name = ?3 OR arn = ?3 OR (?3 LIKE 'arn:%' AND substr(arn, 1, length(arn) - 7) = ?3))"
            );
            c.prepare_cached(&sql)?
                .query_row([&ctx.account, &ctx.region, secret_id], secret_from_row)
                .optional()
                .map_err(AwsError::from)
        })?;
        match found {
            Some((secret, Some(date))) if date <= now_millis() => {
                self.purge(ctx, &secret.name)?;
                Ok(None)
            }
            other => Ok(other.map(|(s, _)| s)),
        }
    }

    /// The secret a `SecretId` names, or ResourceNotFoundException.
    fn secret(&self, ctx: &Context, input: &Value) -> AwsResult<Secret> {
        self.find(ctx, input.str("SecretId").unwrap_or_default())?
            .ok_or_else(not_found)
    }

    /// A secret that is not scheduled for deletion.
    fn live_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Secret> {
        let secret = self.secret(ctx, input)?;
        if secret.deleted.is_some() {
            return Err(marked_for_deletion());
        }
        Ok(secret)
    }

    /// Removes a secret, its versions, and the replica records it is part of (as the
    /// primary or as a replica).
    fn purge(&self, ctx: &Context, name: &str) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            for table in ["sm_secrets", "sm_versions", "sm_replicas"] {
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND name = ?3"
                    ),
                    [&ctx.account, &ctx.region, name],
                )?;
            }
            tx.execute_cached(
                "DELETE FROM sm_replicas WHERE account = ?1 AND replica_region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
            )?;
            Ok::<_, AwsError>(())
        })
    }

    /// Sets one column of a secret and its `LastChangedDate`.
    fn update_secret_column(
        &self,
        ctx: &Context,
        secret: &Secret,
        column: &str,
        value: &dyn rusqlite::ToSql,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE sm_secrets SET {column} = ?4, changed = ?5
                     WHERE account = ?1 AND region = ?2 AND name = ?3"
                ),
                rusqlite::params![ctx.account, ctx.region, secret.name, value, now_millis()],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }
}

impl Service for SecretsManager {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let secret_id = input.str("SecretId").unwrap_or_default();
            if PRIMARY_ONLY.contains(&operation) {
                if let Some(secret) = self.find(ctx, secret_id)? {
                    if secret.primary_region.is_some() {
                        return Err(not_permitted_on_replica());
                    }
                }
            }
            let output = match operation {
                "CreateSecret" => self.create_secret(ctx, input).await?,
                "DescribeSecret" => self.describe_secret(ctx, input)?,
                "ListSecrets" => self.list_secrets(ctx, input)?,
                "UpdateSecret" => self.update_secret(ctx, input).await?,
                "DeleteSecret" => self.delete_secret(ctx, input)?,
                "RestoreSecret" => self.restore_secret(ctx, input)?,
                "TagResource" => self.tag_resource(ctx, input)?,
                "UntagResource" => self.untag_resource(ctx, input)?,
                "PutResourcePolicy" => self.put_resource_policy(ctx, input)?,
                "GetResourcePolicy" => self.get_resource_policy(ctx, input)?,
                "DeleteResourcePolicy" => self.delete_resource_policy(ctx, input)?,
                "ListResourcePolicies" => self.list_resource_policies(ctx, input)?,
                "ValidateResourcePolicy" => secrets::validate_resource_policy(input)?,
                "RotateSecret" => self.rotate_secret(ctx, input)?,
                "CancelRotateSecret" => self.cancel_rotate_secret(ctx, input)?,
                "GetSecretValue" => self.get_secret_value(ctx, input).await?,
                "PutSecretValue" => self.put_secret_value(ctx, input).await?,
                "BatchGetSecretValue" => self.batch_get_secret_value(ctx, input).await?,
                "ListSecretVersionIds" => self.list_secret_version_ids(ctx, input)?,
                "UpdateSecretVersionStage" => self.update_secret_version_stage(ctx, input)?,
                "GetRandomPassword" => password::get_random_password(input)?,
                "ReplicateSecretToRegions" => self.replicate_secret_to_regions(ctx, input).await?,
                "RemoveRegionsFromReplication" => {
                    self.remove_regions_from_replication(ctx, input)?
                }
                "StopReplicationToReplica" => self.stop_replication_to_replica(ctx, input)?,
                "AssociateCrossAccountReplica" | "DisassociateCrossAccountReplica" => {
                    self.cross_account_replica(ctx, input)?
                }
                other => return Err(AwsError::not_implemented(other)),
            };
            if MIRRORED_WRITES.contains(&operation) {
                self.mirror(ctx, secret_id).await?;
            }
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(async move {
            if event.kind != rotation::ROTATION_EVENT {
                return Err(format!("secretsmanager accepts no {} deliveries", event.kind).into());
            }
            Ok(self.run_rotation(event).await?)
        })
    }

    fn access(&self, ctx: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, op, input)
    }
}
