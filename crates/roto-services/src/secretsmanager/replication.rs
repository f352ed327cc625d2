//! Replication: a secret's replicas in other regions of its account.
//!
//! A primary's replica records are rows of `sm_replicas`, one per replica region in the
//! order added, each with the replica's `KmsKeyId` and its status. A replica is an ordinary
//! secret of the same name in its region, its ARN the primary's with the region changed;
//! [`Secret::primary_region`](super::Secret) comes from those records. After every write to
//! a primary (the operations in `MIRRORED_WRITES`, and the end of a rotation),
//! [`SecretsManager::mirror`] rewrites each replica from it: description, tags, resource
//! policy and rotation settings, and every version with its labels, each value encrypted
//! anew in the replica's region under the replica's key and ARN. Replication happens before
//! the call returns, so a replica is `InSync` at once; when a replica cannot be written (its
//! KMS key refuses), its status is `Failed` with the reason, as AWS reports it.
//!
//! A region that already holds another secret of the name is left alone unless
//! `ForceOverwriteReplicaSecret` is set: as in AWS, that replication is `Failed` ("Replication
//! failed: Secret name simple already exists in region ...") and the call still succeeds.
//! A replica refuses writes of its own (the operations in `PRIMARY_ONLY`); in its region,
//! StopReplicationToReplica makes it a standalone secret, and on the primary
//! RemoveRegionsFromReplication deletes it.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::{invalid_parameter, Secret, SecretsManager, DEFAULT_KEY};

const IN_SYNC: &str = "InSync";
const FAILED: &str = "Failed";

/// One replica record of a primary.
#[derive(Debug, Clone)]
struct Replica {
    region: String,
    kms_key_id: Option<String>,
    status: String,
    message: String,
    /// Whether the replica secret exists (false when the region's name was taken or the
    /// first write failed).
    replicated: bool,
}

impl Replica {
    fn in_sync(region: &str, kms_key_id: Option<String>) -> Replica {
        Replica {
            region: region.to_string(),
            kms_key_id,
            status: IN_SYNC.into(),
            message: "Replication succeeded".into(),
            replicated: true,
        }
    }
}

/// The ARN of a replica in `region` of the secret `arn` in `primary_region`.
fn replica_arn(arn: &str, primary_region: &str, region: &str) -> String {
    arn.replacen(
        &format!(":secretsmanager:{primary_region}:"),
        &format!(":secretsmanager:{region}:"),
        1,
    )
}

/// The context of the same caller in another region.
fn in_region(ctx: &Context, region: &str) -> Context {
    Context {
        region: region.to_string(),
        ..ctx.clone()
    }
}

/// Whether `region` looks like an AWS region name (`eu-west-1`, `us-gov-east-1`).
fn is_region(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    parts.len() >= 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && parts[parts.len() - 1].chars().all(|c| c.is_ascii_digit())
}

/// The `AddReplicaRegions` of a request (`(region, KmsKeyId)`), checked as AWS checks them
/// before anything is replicated: each a region, none the primary's.
pub(super) fn replica_regions(
    ctx: &Context,
    input: &Value,
) -> AwsResult<Vec<(String, Option<String>)>> {
    let mut regions: Vec<(String, Option<String>)> = Vec::new();
    for entry in input
        .get("AddReplicaRegions")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let region = entry.str("Region").unwrap_or_default();
        if region == ctx.region || !is_region(region) {
            return Err(invalid_parameter("Invalid replica region."));
        }
        let key = entry
            .str("KmsKeyId")
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        match regions.iter_mut().find(|(r, _)| r == region) {
            Some(slot) => slot.1 = key,
            None => regions.push((region.to_string(), key)),
        }
    }
    Ok(regions)
}

impl SecretsManager {
    /// The replica records of the primary `name` in `ctx`'s region, in the order added.
    fn replicas(&self, ctx: &Context, name: &str) -> AwsResult<Vec<Replica>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT replica_region, kms_key_id, status, message, replicated FROM sm_replicas
                 WHERE account = ?1 AND region = ?2 AND name = ?3 ORDER BY seq",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region, name], |r| {
                Ok(Replica {
                    region: r.get(0)?,
                    kms_key_id: r.get(1)?,
                    status: r.get(2)?,
                    message: r.get(3)?,
                    replicated: r.get(4)?,
                })
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(roto_core::AwsError::from)
        })
    }

    /// Writes one replica record (a new one goes last; an old one keeps its place).
    fn record(&self, ctx: &Context, name: &str, replica: &Replica) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sm_replicas (account, region, name, replica_region, kms_key_id,
                    status, message, replicated, seq)
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, COALESCE(MAX(seq), 0) + 1
                 FROM sm_replicas WHERE account = ?1 AND region = ?2 AND name = ?3
                 ON CONFLICT (account, region, name, replica_region) DO UPDATE SET
                    kms_key_id = excluded.kms_key_id, status = excluded.status,
                    message = excluded.message, replicated = excluded.replicated",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    name,
                    replica.region,
                    replica.kms_key_id,
                    replica.status,
                    replica.message,
                    replica.replicated
                ],
            )
            .map(drop)
            .map_err(roto_core::AwsError::from)
        })
    }

    fn forget(&self, ctx: &Context, name: &str, region: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM sm_replicas
                 WHERE account = ?1 AND region = ?2 AND name = ?3 AND replica_region = ?4",
                [&ctx.account, &ctx.region, name, region],
            )
            .map(drop)
            .map_err(roto_core::AwsError::from)
        })
    }

    /// `ReplicationStatus` of the primary `name`: one entry per replica record, with the
    /// replica's `LastAccessedDate` once it has been read.
    pub(super) fn replication_status(&self, ctx: &Context, name: &str) -> AwsResult<Vec<Value>> {
        let mut out = Vec::new();
        for replica in self.replicas(ctx, name)? {
            let accessed = match replica.replicated {
                true => self
                    .find(&in_region(ctx, &replica.region), name)?
                    .and_then(|s| s.accessed),
                false => None,
            };
            out.push(
                Value::map()
                    .with("Region", replica.region)
                    .with(
                        "KmsKeyId",
                        replica.kms_key_id.unwrap_or_else(|| DEFAULT_KEY.into()),
                    )
                    .with("Status", replica.status)
                    .with("StatusMessage", replica.message)
                    .with_opt("LastAccessedDate", accessed.map(Value::Timestamp)),
            );
        }
        Ok(out)
    }

    /// Replicates `primary` to `regions`, replacing another secret of its name there only
    /// when `force`; returns the primary's `ReplicationStatus`.
    pub(super) async fn add_replicas(
        &self,
        ctx: &Context,
        primary: &Secret,
        regions: Vec<(String, Option<String>)>,
        force: bool,
    ) -> AwsResult<Vec<Value>> {
        for (region, key) in regions {
            let there = in_region(ctx, &region);
            let found = self.find(&there, &primary.name)?;
            let ours = found
                .as_ref()
                .is_some_and(|s| s.primary_region.as_deref() == Some(ctx.region.as_str()));
            if let Some(other) = found.filter(|_| !ours) {
                if !force {
                    let message = format!(
                        "Replication failed: Secret name simple already exists in region {region}."
                    );
                    let failed = Replica {
                        status: FAILED.into(),
                        message,
                        replicated: false,
                        ..Replica::in_sync(&region, key)
                    };
                    self.record(ctx, &primary.name, &failed)?;
                    continue;
                }
                self.purge(&there, &other.name)?;
            }
            let replica = Replica::in_sync(&region, key);
            self.record(ctx, &primary.name, &replica)?;
            let written = self.write_replica(ctx, primary, &replica).await?;
            // A replica that could not be written at all does not exist, as in AWS; one
            // that existed stays, its status saying why it is behind.
            if let (Err(message), false) = (written, ours) {
                self.purge(&there, &primary.name)?;
                let failed = Replica {
                    status: FAILED.into(),
                    message,
                    replicated: false,
                    ..replica
                };
                self.record(ctx, &primary.name, &failed)?;
            }
        }
        self.replication_status(ctx, &primary.name)
    }

    /// Rewrites one replica from its primary and records how that went; the inner `Err`
    /// is the reason a replica could not be written, as its status message says it.
    async fn write_replica(
        &self,
        ctx: &Context,
        primary: &Secret,
        replica: &Replica,
    ) -> AwsResult<Result<(), String>> {
        let there = in_region(ctx, &replica.region);
        let copy = Secret {
            arn: replica_arn(&primary.arn, &ctx.region, &replica.region),
            kms_key_id: replica.kms_key_id.clone(),
            primary_region: Some(ctx.region.clone()),
            has_replicas: false,
            ..primary.clone()
        };
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sm_secrets (account, region, name, arn, created, changed,
                    description, kms_key_id, rotation_enabled, rotation_lambda, rotation_rules,
                    last_rotated, tags, policy)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                 ON CONFLICT (account, region, name) DO UPDATE SET
                    arn = excluded.arn, changed = excluded.changed,
                    description = excluded.description, kms_key_id = excluded.kms_key_id,
                    rotation_enabled = excluded.rotation_enabled,
                    rotation_lambda = excluded.rotation_lambda,
                    rotation_rules = excluded.rotation_rules,
                    last_rotated = excluded.last_rotated, tags = excluded.tags,
                    policy = excluded.policy, deleted = NULL, deletion_date = NULL",
                rusqlite::params![
                    there.account,
                    there.region,
                    copy.name,
                    copy.arn,
                    copy.created,
                    copy.changed,
                    copy.description,
                    copy.kms_key_id,
                    copy.rotation_enabled,
                    copy.rotation_lambda,
                    copy.rotation_rules,
                    copy.last_rotated,
                    serde_json::to_string(&copy.tags).unwrap_or_else(|_| "[]".into()),
                    copy.policy
                ],
            )
        })?;
        let outcome = self
            .copy_versions(ctx, primary, &there, &copy)
            .await
            .map_err(|e| format!("Replication failed: {}", e.message));
        let recorded = match &outcome {
            Ok(()) => Replica::in_sync(&replica.region, replica.kms_key_id.clone()),
            Err(message) => Replica {
                status: FAILED.into(),
                message: message.clone(),
                ..replica.clone()
            },
        };
        self.record(ctx, &primary.name, &recorded)?;
        Ok(outcome)
    }

    /// Brings the replicas of the secret `secret_id` names in line with it, after a write.
    pub(super) async fn mirror(&self, ctx: &Context, secret_id: &str) -> AwsResult<()> {
        let Some(primary) = self.find(ctx, secret_id)? else {
            return Ok(());
        };
        for replica in self.replicas(ctx, &primary.name)? {
            if replica.replicated {
                // A replica that cannot be written says so in its status; the write to the
                // primary stands.
                let _ = self.write_replica(ctx, &primary, &replica).await?;
            }
        }
        Ok(())
    }

    /// DeleteSecret's check: AWS refuses to delete a primary that still has replicas.
    pub(super) fn check_no_replicas(&self, ctx: &Context, secret: &Secret) -> AwsResult<()> {
        if !secret.has_replicas {
            return Ok(());
        }
        let regions: Vec<String> = self
            .replicas(ctx, &secret.name)?
            .into_iter()
            .map(|r| r.region)
            .collect();
        Err(invalid_parameter(format!(
            "You can't delete secret {} that still has replica regions [{}].",
            secret.arn,
            regions.join(", ")
        )))
    }

    pub(super) async fn replicate_secret_to_regions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let regions = replica_regions(ctx, input)?;
        let force = input.bool("ForceOverwriteReplicaSecret").unwrap_or(false);
        let status = self.add_replicas(ctx, &secret, regions, force).await?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("ReplicationStatus", Value::List(status)))
    }

    pub(super) fn remove_regions_from_replication(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        let remove: Vec<&str> = input
            .get("RemoveReplicaRegions")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for replica in self.replicas(ctx, &secret.name)? {
            if !remove.contains(&replica.region.as_str()) {
                continue;
            }
            if replica.replicated {
                self.purge(&in_region(ctx, &replica.region), &secret.name)?;
            }
            self.forget(ctx, &secret.name, &replica.region)?;
        }
        Ok(Value::map()
            .with(
                "ReplicationStatus",
                Value::List(self.replication_status(ctx, &secret.name)?),
            )
            .with("ARN", secret.arn))
    }

    pub(super) fn stop_replication_to_replica(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        let Some(primary_region) = &secret.primary_region else {
            return Err(invalid_parameter(
                "StopReplicationToReplica is permitted only on a replica secret, in its region.",
            ));
        };
        self.forget(&in_region(ctx, primary_region), &secret.name, &ctx.region)?;
        Ok(Value::map().with("ARN", secret.arn))
    }

    /// `AssociateCrossAccountReplica` and `DisassociateCrossAccountReplica`: Roto keeps
    /// replicas in the primary's account only, so no secret of another account is a
    /// replica this primary could link or unlink; the primary must exist all the same.
    pub(super) fn cross_account_replica(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.secret(ctx, input)?;
        Err(AwsError::new(
            "ResourceNotFoundException",
            format!(
                "Secrets Manager can't find the cross-account replica secret {}.",
                input.str("CrossAccountReplicaARN").unwrap_or_default()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_arns_differ_from_the_primary_only_by_region() {
        assert_eq!(
            replica_arn(
                "arn:aws:secretsmanager:us-east-1:000000000000:secret:db-AbCdEf",
                "us-east-1",
                "eu-west-1"
            ),
            "arn:aws:secretsmanager:eu-west-1:000000000000:secret:db-AbCdEf"
        );
    }

    #[test]
    fn region_names_are_recognised() {
        for good in [
            "us-east-1",
            "eu-central-2",
            "us-gov-west-1",
            "ap-southeast-4",
        ] {
            assert!(is_region(good), "{good}");
        }
        for bad in ["", "us-east", "mars", "US-EAST-1", "us--1", "us-east-x"] {
            assert!(!is_region(bad), "{bad}");
        }
    }
}
