//! Secrets themselves: creation, description, listing with filters, updates, deletion
//! with a recovery window, tags, resource policies and rotation settings.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::replication::replica_regions;
use super::stages::CURRENT;
use super::versions::SecretValue;
use super::{invalid_parameter, invalid_request, Secret, SecretsManager, SECRET_COLUMNS};
use crate::paging::page;

const DAY_MS: i64 = 86_400_000;

/// InvalidNextTokenException for a token this service did not issue.
pub(super) fn bad_token() -> AwsError {
    AwsError::new(
        "InvalidNextTokenException",
        "The NextToken value is invalid.",
    )
}

fn check_name(name: &str) -> AwsResult<()> {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/_+=.@-".contains(c))
    {
        return Ok(());
    }
    Err(invalid_parameter(
        "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!",
    ))
}

fn random_suffix() -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    crate::kms::crypto::random_bytes(6)
        .into_iter()
        .map(|b| CHARS[usize::from(b) % CHARS.len()] as char)
        .collect()
}

fn tag_pairs(input: &Value) -> Vec<(String, String)> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t.str("Key").unwrap_or_default().to_string(),
                t.str("Value").unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn tags_json(tags: &[(String, String)]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

fn check_policy(policy: &str) -> AwsResult<()> {
    match serde_json::from_str::<serde_json::Value>(policy) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(AwsError::new(
            "MalformedPolicyDocumentException",
            "This resource policy contains a syntax error.",
        )),
    }
}

/// ValidateResourcePolicy: a policy that parses passes.
pub(super) fn validate_resource_policy(input: &Value) -> AwsResult<Value> {
    check_policy(input.str("ResourcePolicy").unwrap_or_default())?;
    Ok(Value::map()
        .with("PolicyValidationPassed", true)
        .with("ValidationErrors", Value::List(Vec::new())))
}

/// Whether one filter value matches `candidates` (a prefix match; `!` negates).
fn value_matches(value: &str, candidates: &[&str]) -> bool {
    let (negate, value) = match value.strip_prefix('!') {
        Some(v) => (true, v),
        None => (false, value),
    };
    candidates.iter().any(|c| c.starts_with(value)) != negate
}

fn filter_matches(secret: &Secret, region: &str, filter: &Value) -> bool {
    let key = filter.str("Key").unwrap_or_default();
    let description = secret.description.as_deref().unwrap_or_default();
    let tag_keys: Vec<&str> = secret.tags.iter().map(|(k, _)| k.as_str()).collect();
    let tag_values: Vec<&str> = secret.tags.iter().map(|(_, v)| v.as_str()).collect();
    let candidates: Vec<&str> = match key {
        "name" => vec![secret.name.as_str()],
        "description" => vec![description],
        "tag-key" => tag_keys,
        "tag-value" => tag_values,
        "primary-region" => secret.shown_primary_region(region).into_iter().collect(),
        "owning-service" => vec![],
        _ => [
            vec![secret.name.as_str(), description],
            tag_keys,
            tag_values,
        ]
        .concat(),
    };
    filter
        .get("Values")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .any(|v| value_matches(v, &candidates))
}

impl SecretsManager {
    /// Every secret in the account and region that passes all `filters`.
    pub(super) fn matching_secrets(
        &self,
        ctx: &Context,
        filters: &[Value],
        include_deleted: bool,
    ) -> AwsResult<Vec<Secret>> {
        let secrets: Vec<Secret> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {SECRET_COLUMNS} FROM sm_secrets WHERE account = ?1 AND region = ?2
                 AND (deletion_date IS NULL OR deletion_date > ?3) ORDER BY created, name"
            ))?;
            let rows = st.query_map(
                rusqlite::params![ctx.account, ctx.region, now_millis()],
                super::secret_from_row,
            )?;
            rows.map(|r| r.map(|(s, _)| s))
                .collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        Ok(secrets
            .into_iter()
            .filter(|s| include_deleted || s.deleted.is_none())
            .filter(|s| filters.iter().all(|f| filter_matches(s, &ctx.region, f)))
            .collect())
    }

    fn next_rotation(secret: &Secret) -> Option<i64> {
        if !secret.rotation_enabled {
            return None;
        }
        let rules: serde_json::Value =
            serde_json::from_str(secret.rotation_rules.as_deref()?).ok()?;
        let days = rules.get("AutomaticallyAfterDays")?.as_i64()?;
        Some(secret.last_rotated.unwrap_or(secret.created) + days * DAY_MS)
    }

    /// The members DescribeSecret and ListSecrets share.
    fn summary(&self, ctx: &Context, secret: &Secret, stages_member: &str) -> AwsResult<Value> {
        let mut out = Value::map()
            .with("ARN", secret.arn.as_str())
            .with("Name", secret.name.as_str())
            .with("CreatedDate", Value::Timestamp(secret.created))
            .with("LastChangedDate", Value::Timestamp(secret.changed))
            .with_opt("Description", secret.description.as_deref())
            .with_opt("KmsKeyId", secret.kms_key_id.as_deref())
            .with_opt("LastAccessedDate", secret.accessed.map(Value::Timestamp))
            .with_opt("DeletedDate", secret.deleted.map(Value::Timestamp))
            .with_opt("LastRotatedDate", secret.last_rotated.map(Value::Timestamp))
            .with_opt(
                "NextRotationDate",
                Self::next_rotation(secret).map(Value::Timestamp),
            )
            .with_opt("RotationLambdaARN", secret.rotation_lambda.as_deref())
            .with_opt("PrimaryRegion", secret.shown_primary_region(&ctx.region))
            .with(stages_member, self.stage_map(ctx, &secret.name)?);
        if secret.rotation_enabled || secret.rotation_lambda.is_some() {
            out.insert("RotationEnabled", secret.rotation_enabled);
        }
        if let Some(rules) = secret
            .rotation_rules
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok())
        {
            out.insert("RotationRules", Value::from_json(&rules));
        }
        if !secret.tags.is_empty() {
            out.insert(
                "Tags",
                Value::List(
                    secret
                        .tags
                        .iter()
                        .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
                        .collect(),
                ),
            );
        }
        Ok(out)
    }

    pub(super) async fn create_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name)?;
        let value = SecretValue::of(input)?;
        let replica_regions = replica_regions(ctx, input)?;
        let token = input.str("ClientRequestToken");
        if let Some(existing) = self.find(ctx, name)? {
            if existing.deleted.is_some() {
                return Err(invalid_request(
                    "You can't create this secret because a secret with this name is already scheduled for deletion.",
                ));
            }
            if let (Some(token), Some(value)) = (token, value) {
                if self.stage_map(ctx, name)?.get(token).is_some() {
                    let (id, _) = self
                        .add_version(ctx, &existing, Some(token), value, &[CURRENT.to_string()])
                        .await?;
                    return Ok(Value::map()
                        .with("ARN", existing.arn)
                        .with("Name", existing.name)
                        .with("VersionId", id));
                }
            }
            return Err(AwsError::new(
                "ResourceExistsException",
                format!("The operation failed because the secret {name} already exists."),
            ));
        }
        let now = now_millis();
        let secret = Secret {
            name: name.to_string(),
            arn: format!(
                "arn:aws:secretsmanager:{}:{}:secret:{name}-{}",
                ctx.region,
                ctx.account,
                random_suffix()
            ),
            created: now,
            changed: now,
            accessed: None,
            description: input.str("Description").map(str::to_string),
            kms_key_id: input
                .str("KmsKeyId")
                .filter(|k| !k.is_empty())
                .map(str::to_string),
            deleted: None,
            rotation_enabled: false,
            rotation_lambda: None,
            rotation_rules: None,
            last_rotated: None,
            tags: tag_pairs(input),
            policy: None,
            primary_region: None,
            has_replicas: false,
        };
        let inserted = self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO sm_secrets (account, region, name, arn, created, changed,
                    description, kms_key_id, tags)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    secret.name,
                    secret.arn,
                    now,
                    secret.description,
                    secret.kms_key_id,
                    tags_json(&secret.tags)
                ],
            )
        })?;
        if inserted == 0 {
            return Err(AwsError::new(
                "ResourceExistsException",
                format!("The operation failed because the secret {name} already exists."),
            ));
        }
        let mut out = Value::map()
            .with("ARN", secret.arn.as_str())
            .with("Name", name);
        if let Some(value) = value {
            match self
                .add_version(ctx, &secret, token, value, &[CURRENT.to_string()])
                .await
            {
                Ok((id, _)) => out.insert("VersionId", id),
                Err(e) => {
                    self.purge(ctx, name)?;
                    return Err(e);
                }
            }
        }
        if !replica_regions.is_empty() {
            let force = input.bool("ForceOverwriteReplicaSecret").unwrap_or(false);
            let status = self
                .add_replicas(ctx, &secret, replica_regions, force)
                .await?;
            out.insert("ReplicationStatus", Value::List(status));
        }
        Ok(out)
    }

    pub(super) fn describe_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        let mut out = self.summary(ctx, &secret, "VersionIdsToStages")?;
        if secret.has_replicas {
            let status = self.replication_status(ctx, &secret.name)?;
            out.insert("ReplicationStatus", Value::List(status));
        }
        Ok(out)
    }

    pub(super) fn list_secrets(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let filters = input
            .get("Filters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let include_deleted = input.bool("IncludePlannedDeletion").unwrap_or(false);
        let mut secrets = self.matching_secrets(ctx, filters, include_deleted)?;
        match input.str("SortBy") {
            Some("name") => secrets.sort_by(|a, b| a.name.cmp(&b.name)),
            Some("last-changed-date") => secrets.sort_by_key(|s| s.changed),
            Some("last-accessed-date") => secrets.sort_by_key(|s| s.accessed),
            _ => {}
        }
        if input.str("SortOrder") == Some("desc") {
            secrets.reverse();
        }
        let entries = secrets
            .iter()
            .map(|s| self.summary(ctx, s, "SecretVersionsToStages"))
            .collect::<AwsResult<Vec<_>>>()?;
        let limit = usize::try_from(input.int("MaxResults").unwrap_or(100)).unwrap_or(100);
        let (entries, next) = page(entries, limit, input.str("NextToken"), bad_token)?;
        Ok(Value::map()
            .with("SecretList", Value::List(entries))
            .with_opt("NextToken", next))
    }

    pub(super) async fn update_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut secret = self.live_secret(ctx, input)?;
        let value = SecretValue::of(input)?;
        if let Some(description) = input.str("Description") {
            self.update_secret_column(ctx, &secret, "description", &description)?;
        }
        if let Some(key) = input.str("KmsKeyId") {
            let key = (!key.is_empty()).then(|| key.to_string());
            self.update_secret_column(ctx, &secret, "kms_key_id", &key)?;
            secret.kms_key_id = key;
        }
        let mut out = Value::map()
            .with("ARN", secret.arn.as_str())
            .with("Name", secret.name.as_str());
        if let Some(value) = value {
            let (id, _) = self
                .add_version(
                    ctx,
                    &secret,
                    input.str("ClientRequestToken"),
                    value,
                    &[CURRENT.to_string()],
                )
                .await?;
            out.insert("VersionId", id);
        }
        Ok(out)
    }

    pub(super) fn delete_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        self.check_no_replicas(ctx, &secret)?;
        let force = input.bool("ForceDeleteWithoutRecovery").unwrap_or(false);
        let window = input.int("RecoveryWindowInDays");
        if force && window.is_some() {
            return Err(invalid_parameter(
                "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
            ));
        }
        let days = window.unwrap_or(30);
        if !(7..=30).contains(&days) {
            return Err(invalid_parameter(
                "The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).",
            ));
        }
        let now = now_millis();
        if force {
            self.purge(ctx, &secret.name)?;
            return Ok(Value::map()
                .with("ARN", secret.arn)
                .with("Name", secret.name)
                .with("DeletionDate", Value::Timestamp(now)));
        }
        if secret.deleted.is_some() {
            return Err(invalid_request(
                "You can't perform this operation on the secret because it was already scheduled for deletion.",
            ));
        }
        let date = now + days * DAY_MS;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sm_secrets SET deleted = ?4, deletion_date = ?5
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, secret.name, now, date],
            )
        })?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name)
            .with("DeletionDate", Value::Timestamp(date)))
    }

    pub(super) fn restore_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sm_secrets SET deleted = NULL, deletion_date = NULL
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, &secret.name],
            )
        })?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name))
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let mut tags = secret.tags.clone();
        for (k, v) in tag_pairs(input) {
            match tags.iter_mut().find(|(existing, _)| *existing == k) {
                Some(slot) => slot.1 = v,
                None => tags.push((k, v)),
            }
        }
        self.update_secret_column(ctx, &secret, "tags", &tags_json(&tags))?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let remove: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut tags = secret.tags.clone();
        tags.retain(|(k, _)| !remove.contains(&k.as_str()));
        self.update_secret_column(ctx, &secret, "tags", &tags_json(&tags))?;
        Ok(Value::map())
    }

    pub(super) fn put_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let policy = input.str("ResourcePolicy").unwrap_or_default();
        check_policy(policy)?;
        self.update_secret_column(ctx, &secret, "policy", &policy)?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name))
    }

    pub(super) fn get_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name)
            .with_opt("ResourcePolicy", secret.policy))
    }

    /// `ListResourcePolicies`: a secret holds at most its `default` policy.
    pub(super) fn list_resource_policies(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        let policies: Vec<Value> = secret
            .policy
            .iter()
            .map(|_| Value::map().with("PolicyName", "default"))
            .collect();
        Ok(Value::map().with("ResourcePolicies", policies))
    }

    pub(super) fn delete_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        self.update_secret_column(ctx, &secret, "policy", &None::<String>)?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_values_match_prefixes_and_negate_with_a_bang() {
        assert!(value_matches("prod/", &["prod/db"]));
        assert!(!value_matches("dev", &["prod/db"]));
        assert!(value_matches("!dev", &["prod/db"]));
        assert!(!value_matches("!prod", &["prod/db"]));
    }

    #[test]
    fn names_allow_only_aws_characters() {
        assert!(check_name("prod/db_password+1=x.y@z-").is_ok());
        assert!(check_name("bad name").is_err());
        assert!(check_name("bad#name").is_err());
    }
}
