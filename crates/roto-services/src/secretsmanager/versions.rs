//! Secret values: versions, their staging labels, and reading them back.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::stages::{self, Labels, CURRENT};
use super::{day_of, invalid_parameter, Secret, SecretsManager, DEFAULT_KEY};
use crate::envelope;
use crate::paging::page;

/// A secret value: `SecretString` (kind `string`) or `SecretBinary` (kind `binary`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SecretValue {
    kind: &'static str,
    bytes: Vec<u8>,
}

impl SecretValue {
    /// The value a request carries, if any.
    pub(super) fn of(input: &Value) -> AwsResult<Option<SecretValue>> {
        match (input.str("SecretString"), input.get("SecretBinary").and_then(Value::as_blob)) {
            (Some(_), Some(_)) => Err(invalid_parameter(
                "You can't specify both a binary secret value and a string secret value in the same secret.",
            )),
            (Some(s), None) => Ok(Some(SecretValue {
                kind: "string",
                bytes: s.as_bytes().to_vec(),
            })),
            (None, Some(b)) => Ok(Some(SecretValue {
                kind: "binary",
                bytes: b.to_vec(),
            })),
            (None, None) => Ok(None),
        }
    }

    fn insert_into(self, out: &mut Value) {
        if self.kind == "binary" {
            out.insert("SecretBinary", Value::Blob(self.bytes));
        } else {
            out.insert(
                "SecretString",
                String::from_utf8(self.bytes).unwrap_or_default(),
            );
        }
    }
}

/// The kind of a version RotateSecret created for its rotation function to fill.
pub(super) const PLACEHOLDER: &str = "none";

/// A version as stored.
struct Version {
    id: String,
    created: i64,
    accessed: Option<i64>,
    kind: String,
    ciphertext: Vec<u8>,
    stages: Vec<String>,
    kms_key_id: Option<String>,
}

fn encryption_context(arn: &str, version_id: &str) -> Value {
    Value::map()
        .with("SecretARN", arn)
        .with("SecretVersionId", version_id)
}

fn strings(list: &[String]) -> Value {
    Value::List(list.iter().map(Value::from).collect())
}

fn version_not_found(what: &str, value: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Secrets Manager can't find the specified secret value for {what}: {value}"),
    )
}

/// A new version id in the UUID form AWS uses.
pub(super) fn new_version_id() -> String {
    let h = hex::encode(crate::kms::crypto::random_bytes(16));
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

impl SecretsManager {
    fn versions(&self, ctx: &Context, name: &str) -> AwsResult<Vec<Version>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT version_id, created, accessed, kind, ciphertext, stages, kms_key_id
                 FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 ORDER BY seq",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region, name], |r| {
                let stages: String = r.get(5)?;
                Ok(Version {
                    id: r.get(0)?,
                    created: r.get(1)?,
                    accessed: r.get(2)?,
                    kind: r.get(3)?,
                    ciphertext: r.get(4)?,
                    stages: serde_json::from_str(&stages).unwrap_or_default(),
                    kms_key_id: r.get(6)?,
                })
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })
    }

    /// The version → labels map of a secret's labelled versions (`VersionIdsToStages`).
    pub(super) fn stage_map(&self, ctx: &Context, name: &str) -> AwsResult<Value> {
        let mut map = Value::map();
        for v in self.versions(ctx, name)? {
            if !v.stages.is_empty() {
                map.insert(v.id, strings(&v.stages));
            }
        }
        Ok(map)
    }

    async fn decrypt_version(
        &self,
        ctx: &Context,
        secret: &Secret,
        v: &Version,
    ) -> AwsResult<SecretValue> {
        let bytes = envelope::open(
            &self.env,
            ctx,
            &v.ciphertext,
            encryption_context(&secret.arn, &v.id),
        )
        .await
        .map_err(|e| {
            AwsError::new(
                "DecryptionFailure",
                format!(
                    "Secrets Manager can't decrypt the protected secret text using the provided KMS key: {}",
                    e.message
                ),
            )
        })?;
        Ok(SecretValue {
            kind: if v.kind == "binary" {
                "binary"
            } else {
                "string"
            },
            bytes,
        })
    }

    /// `bytes` encrypted as version `version_id` of `secret`: under its key, in its
    /// account and region, with its ARN and the version id as encryption context.
    async fn seal_value(
        &self,
        ctx: &Context,
        secret: &Secret,
        version_id: &str,
        bytes: &[u8],
    ) -> AwsResult<Vec<u8>> {
        let key = secret.kms_key_id.as_deref().unwrap_or(DEFAULT_KEY);
        envelope::seal(
            &self.env,
            ctx,
            key,
            encryption_context(&secret.arn, version_id),
            bytes,
        )
        .await
        .map_err(|e| {
            AwsError::new(
                "EncryptionFailure",
                format!(
                    "Secrets Manager can't encrypt the protected secret text using the provided KMS key: {}",
                    e.message
                ),
            )
        })
    }

    /// Makes the versions of `to` (in `to_ctx`'s region) those of `from`: the same ids,
    /// labels and values, each value encrypted anew for `to` (its key, its ARN) unless `to`
    /// already holds it under that key. A replica's own access dates are kept.
    pub(super) async fn copy_versions(
        &self,
        ctx: &Context,
        from: &Secret,
        to_ctx: &Context,
        to: &Secret,
    ) -> AwsResult<()> {
        let held = self.versions(to_ctx, &to.name)?;
        let mut copies = Vec::new();
        for v in self.versions(ctx, &from.name)? {
            let kept = held
                .iter()
                .find(|h| h.id == v.id && h.kind == v.kind && h.kms_key_id == to.kms_key_id);
            let ciphertext = match kept {
                Some(h) => h.ciphertext.clone(),
                None if v.kind == PLACEHOLDER => Vec::new(),
                None => {
                    let value = self.decrypt_version(ctx, from, &v).await?;
                    self.seal_value(to_ctx, to, &v.id, &value.bytes).await?
                }
            };
            let accessed = held.iter().find(|h| h.id == v.id).and_then(|h| h.accessed);
            copies.push(Version {
                ciphertext,
                accessed,
                kms_key_id: to.kms_key_id.clone(),
                ..v
            });
        }
        self.env.store.transaction(|tx| {
            tx.execute_cached(
                "DELETE FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&to_ctx.account, &to_ctx.region, &to.name],
            )?;
            let mut st = tx.prepare_cached(
                "INSERT INTO sm_versions (account, region, name, version_id, seq, created,
                    accessed, kind, ciphertext, stages, kms_key_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            for (seq, v) in copies.iter().enumerate() {
                st.execute(rusqlite::params![
                    to_ctx.account,
                    to_ctx.region,
                    to.name,
                    v.id,
                    seq as i64 + 1,
                    v.created,
                    v.accessed,
                    v.kind,
                    v.ciphertext,
                    serde_json::to_string(&v.stages).unwrap_or_else(|_| "[]".into()),
                    v.kms_key_id
                ])?;
            }
            Ok::<_, AwsError>(())
        })
    }

    /// Stores `value` as a new version labelled `labels` (moving them from other versions),
    /// or, when `token` names an existing version with the same value, changes nothing.
    /// Returns the version id and its labels.
    pub(super) async fn add_version(
        &self,
        ctx: &Context,
        secret: &Secret,
        token: Option<&str>,
        value: SecretValue,
        labels: &[String],
    ) -> AwsResult<(String, Vec<String>)> {
        let version_id = token.map(str::to_string).unwrap_or_else(new_version_id);
        let existing = self.versions(ctx, &secret.name)?;
        let filling = existing
            .iter()
            .any(|v| v.id == version_id && v.kind == PLACEHOLDER);
        let carried: Vec<String> = existing
            .iter()
            .filter(|v| filling && v.id == version_id)
            .flat_map(|v| v.stages.clone())
            .collect();
        if let Some(v) = existing.iter().find(|v| v.id == version_id && !filling) {
            if self.decrypt_version(ctx, secret, v).await? == value {
                return Ok((v.id.clone(), v.stages.clone()));
            }
            return Err(AwsError::new(
                "ResourceExistsException",
                "You can't modify an existing version, you can only create a new version.",
            ));
        }
        let ciphertext = self
            .seal_value(ctx, secret, &version_id, &value.bytes)
            .await?;
        let now = now_millis();
        let stages = self.env.store.transaction(|tx| {
            let seq: i64 = tx.query_row_cached(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, &secret.name],
                |r| r.get(0),
            )?;
            tx.execute_cached(
                "DELETE FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 AND version_id = ?4 AND kind = ?5",
                rusqlite::params![ctx.account, ctx.region, secret.name, version_id, PLACEHOLDER],
            )?;
            tx.execute_cached(
                "INSERT INTO sm_versions (account, region, name, version_id, seq, created, kind,
                    ciphertext, stages, kms_key_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '[]', ?9)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    secret.name,
                    version_id,
                    seq,
                    now,
                    value.kind,
                    ciphertext,
                    secret.kms_key_id
                ],
            )?;
            let mut all = Self::labels_in(tx, ctx, &secret.name)?;
            for label in carried.iter().chain(labels) {
                stages::attach(&mut all, &version_id, label);
            }
            Self::write_labels(tx, ctx, &secret.name, &all)?;
            tx.execute_cached(
                "UPDATE sm_secrets SET changed = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, secret.name, now],
            )?;
            Ok::<_, AwsError>(stages::holder_labels(&all, &version_id))
        })?;
        Ok((version_id, stages))
    }

    /// Records version `token` with the label `AWSPENDING` and no value yet, for a
    /// rotation function to fill with PutSecretValue, as RotateSecret does.
    pub(super) fn add_placeholder(
        &self,
        ctx: &Context,
        secret: &Secret,
        token: &str,
    ) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            let exists: bool = tx.query_row_cached(
                "SELECT COUNT(*) > 0 FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 AND version_id = ?4",
                [&ctx.account, &ctx.region, &secret.name, token],
                |r| r.get(0),
            )?;
            if !exists {
                tx.execute_cached(
                    "INSERT INTO sm_versions (account, region, name, version_id, seq, created, kind,
                        ciphertext, stages, kms_key_id)
                     SELECT ?1, ?2, ?3, ?4, COALESCE(MAX(seq), 0) + 1, ?5, ?6, x'', '[]', ?7
                     FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![
                        ctx.account,
                        ctx.region,
                        secret.name,
                        token,
                        now_millis(),
                        PLACEHOLDER,
                        secret.kms_key_id
                    ],
                )?;
            }
            let mut all = Self::labels_in(tx, ctx, &secret.name)?;
            stages::attach(&mut all, token, stages::PENDING);
            Self::write_labels(tx, ctx, &secret.name, &all)
        })
    }

    /// Takes `label` off `version` (AWSPENDING once a rotation has finished).
    pub(super) fn drop_label(
        &self,
        ctx: &Context,
        name: &str,
        version: &str,
        label: &str,
    ) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            let mut all = Self::labels_in(tx, ctx, name)?;
            stages::remove(&mut all, version, label);
            Self::write_labels(tx, ctx, name, &all)
        })
    }

    fn labels_in(tx: &rusqlite::Connection, ctx: &Context, name: &str) -> AwsResult<Vec<Labels>> {
        let mut st = tx.prepare_cached(
            "SELECT version_id, stages FROM sm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 ORDER BY seq",
        )?;
        let rows = st.query_map([&ctx.account, &ctx.region, name], |r| {
            let stages: String = r.get(1)?;
            Ok((r.get(0)?, serde_json::from_str(&stages).unwrap_or_default()))
        })?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(AwsError::from)
    }

    fn write_labels(
        tx: &rusqlite::Connection,
        ctx: &Context,
        name: &str,
        all: &[Labels],
    ) -> AwsResult<()> {
        let mut st = tx.prepare_cached(
            "UPDATE sm_versions SET stages = ?5 WHERE account = ?1 AND region = ?2 AND name = ?3 AND version_id = ?4",
        )?;
        for (id, labels) in all {
            let json = serde_json::to_string(labels).unwrap_or_else(|_| "[]".into());
            st.execute(rusqlite::params![ctx.account, ctx.region, name, id, json])?;
        }
        Ok(())
    }

    /// The value of one version of `secret`, chosen by `VersionId` and/or `VersionStage`.
    async fn value_of(&self, ctx: &Context, secret: &Secret, input: &Value) -> AwsResult<Value> {
        let versions = self.versions(ctx, &secret.name)?;
        let version_id = input.str("VersionId");
        let stage = input.str("VersionStage");
        let version = match (version_id, stage) {
            (Some(id), _) => versions
                .iter()
                .find(|v| v.id == id && stage.is_none_or(|s| v.stages.iter().any(|l| l == s)))
                .ok_or_else(|| version_not_found("VersionId", id))?,
            (None, stage) => {
                let stage = stage.unwrap_or(CURRENT);
                versions
                    .iter()
                    .find(|v| v.stages.iter().any(|l| l == stage))
                    .ok_or_else(|| version_not_found("staging label", stage))?
            }
        };
        if version.kind == PLACEHOLDER {
            return Err(match (version_id, stage) {
                (Some(id), _) => version_not_found("VersionId", id),
                (None, stage) => version_not_found("staging label", stage.unwrap_or(CURRENT)),
            });
        }
        let value = self.decrypt_version(ctx, secret, version).await?;
        let today = day_of(now_millis());
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sm_secrets SET accessed = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, secret.name, today],
            )?;
            c.execute_cached(
                "UPDATE sm_versions SET accessed = ?5 WHERE account = ?1 AND region = ?2 AND name = ?3 AND version_id = ?4",
                rusqlite::params![ctx.account, ctx.region, secret.name, version.id, today],
            )
        })?;
        let mut out = Value::map()
            .with("ARN", secret.arn.as_str())
            .with("Name", secret.name.as_str())
            .with("VersionId", version.id.as_str())
            .with("VersionStages", strings(&version.stages))
            .with("CreatedDate", Value::Timestamp(version.created));
        value.insert_into(&mut out);
        Ok(out)
    }

    pub(super) async fn get_secret_value(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        self.value_of(ctx, &secret, input).await
    }

    pub(super) async fn put_secret_value(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let value = SecretValue::of(input)?.ok_or_else(|| {
            invalid_parameter("You must provide either SecretString or SecretBinary.")
        })?;
        let labels: Vec<String> = match input.get("VersionStages").and_then(Value::as_list) {
            Some(list) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            None => vec![CURRENT.to_string()],
        };
        let (id, stages) = self
            .add_version(
                ctx,
                &secret,
                input.str("ClientRequestToken"),
                value,
                &labels,
            )
            .await?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name)
            .with("VersionId", id)
            .with("VersionStages", strings(&stages)))
    }

    pub(super) async fn batch_get_secret_value(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let ids = input.get("SecretIdList").and_then(Value::as_list);
        let filters = input.get("Filters").and_then(Value::as_list);
        let (ids, next): (Vec<String>, Option<String>) = match (ids, filters) {
            (Some(ids), None) => (
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                None,
            ),
            (None, Some(filters)) => {
                let names: Vec<Value> = self
                    .matching_secrets(ctx, filters, false)?
                    .into_iter()
                    .map(|s| Value::from(s.name))
                    .collect();
                let limit = usize::try_from(input.int("MaxResults").unwrap_or(20)).unwrap_or(20);
                let (names, next) = page(
                    names,
                    limit,
                    input.str("NextToken"),
                    super::secrets::bad_token,
                )?;
                (
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    next,
                )
            }
            _ => {
                return Err(invalid_parameter(
                    "Either 'SecretIdList' or 'Filters' must be provided, but not both.",
                ))
            }
        };
        let mut values = Vec::new();
        let mut errors = Vec::new();
        for id in ids {
            let result = match self.live_secret(ctx, &Value::map().with("SecretId", id.as_str())) {
                Ok(secret) => self.value_of(ctx, &secret, &Value::map()).await,
                Err(e) => Err(e),
            };
            match result {
                Ok(v) => values.push(v),
                Err(e) => errors.push(
                    Value::map()
                        .with("SecretId", id)
                        .with("ErrorCode", e.code.to_string())
                        .with("Message", e.message),
                ),
            }
        }
        Ok(Value::map()
            .with("SecretValues", Value::List(values))
            .with("Errors", Value::List(errors))
            .with_opt("NextToken", next))
    }

    pub(super) fn list_secret_version_ids(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.secret(ctx, input)?;
        let deprecated = input.bool("IncludeDeprecated").unwrap_or(false);
        let entries = self
            .versions(ctx, &secret.name)?
            .into_iter()
            .filter(|v| deprecated || !v.stages.is_empty())
            .map(|v| {
                let mut e = Value::map()
                    .with("VersionId", v.id)
                    .with("CreatedDate", Value::Timestamp(v.created))
                    .with(
                        "KmsKeyIds",
                        Value::List(vec![v
                            .kms_key_id
                            .unwrap_or_else(|| "DefaultEncryptionKey".into())
                            .into()]),
                    )
                    .with_opt("LastAccessedDate", v.accessed.map(Value::Timestamp));
                if !v.stages.is_empty() {
                    e.insert("VersionStages", strings(&v.stages));
                }
                e
            })
            .collect();
        let limit = usize::try_from(input.int("MaxResults").unwrap_or(100)).unwrap_or(100);
        let (entries, next) = page(
            entries,
            limit,
            input.str("NextToken"),
            super::secrets::bad_token,
        )?;
        Ok(Value::map()
            .with("Versions", Value::List(entries))
            .with("ARN", secret.arn)
            .with("Name", secret.name)
            .with_opt("NextToken", next))
    }

    pub(super) fn update_secret_version_stage(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let label = input.str("VersionStage").unwrap_or_default();
        let remove_from = input.str("RemoveFromVersionId");
        let move_to = input.str("MoveToVersionId");
        self.env.store.transaction(|tx| {
            let mut all = Self::labels_in(tx, ctx, &secret.name)?;
            for id in [remove_from, move_to].into_iter().flatten() {
                if !all.iter().any(|(v, _)| v == id) {
                    return Err(version_not_found("VersionId", id));
                }
            }
            let holder = stages::holder(&all, label).map(str::to_string);
            if let Some(h) = &holder {
                if Some(h.as_str()) != move_to && Some(h.as_str()) != remove_from {
                    return Err(invalid_parameter(format!(
                        "The staging label {label} is currently attached to version {h}, so you must explicitly reference that version in RemoveFromVersionId."
                    )));
                }
            }
            match (move_to, remove_from) {
                (Some(to), _) => stages::attach(&mut all, to, label),
                (None, Some(from)) => {
                    if label == CURRENT {
                        return Err(invalid_parameter(
                            "You can only move staging label AWSCURRENT to a different secret version. It can't be completely removed.",
                        ));
                    }
                    if holder.as_deref() != Some(from) {
                        return Err(invalid_parameter(format!(
                            "The staging label {label} is not attached to version {from}."
                        )));
                    }
                    stages::remove(&mut all, from, label);
                }
                (None, None) => {
                    return Err(invalid_parameter(
                        "You must specify MoveToVersionId or RemoveFromVersionId.",
                    ))
                }
            }
            Self::write_labels(tx, ctx, &secret.name, &all)
        })?;
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name))
    }
}
