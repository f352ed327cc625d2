//! Key lifecycle: creation, description, listing, enabling, scheduled deletion, rotation
//! settings, key policies and tags.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::crypto::{self, Family};
use super::multi_region;
use super::{check_usable, invalid_state, key_arn, new_key_id, wrong_state, Key, Kms};
use crate::paging::page;

pub(super) const DAY_MS: i64 = 86_400_000;

/// The policy every key gets when CreateKey names none: the account's principals may do
/// anything with it.
pub(super) fn default_policy(account: &str) -> String {
    format!(
        r#"{{
  "Version" : "2012-10-17",
  "Id" : "key-default-1",
  "Statement" : [ {{
    "Sid" : "Enable IAM User Permissions",
    "Effect" : "Allow",
    "Principal" : {{
      "AWS" : "arn:aws:iam::{account}:root"
    }},
    "Action" : "kms:*",
    "Resource" : "*"
  }} ]
}}"#
    )
}

/// The rows of `kms_keys` that share a key's material (`?1` account, `?2` region, `?3` key
/// id): the key itself and, for a multi-Region key, its primary and replicas everywhere.
const KEY_SET: &str = "account = ?1 AND key_id = ?3 AND (region = ?2 OR multi_region = 1)";

/// Fails for a multi-Region replica: its shared properties change through its primary.
fn check_not_replica(key: &Key) -> AwsResult<()> {
    if !key.is_replica() {
        return Ok(());
    }
    Err(AwsError::new(
        "UnsupportedOperationException",
        format!(
            "{} is a multi-Region replica key; change its primary key in {} instead.",
            key.arn,
            key.primary_region.as_deref().unwrap_or_default()
        ),
    ))
}

/// Fails unless KMS made the key's material: rotation is for such keys only.
fn check_generated(key: &Key) -> AwsResult<()> {
    if key.origin == "AWS_KMS" {
        return Ok(());
    }
    Err(AwsError::new(
        "UnsupportedOperationException",
        format!(
            "{} origin is {} which is not valid for this operation.",
            key.arn, key.origin
        ),
    ))
}

fn validation_range(value: i64, member: &str, min: i64, max: i64) -> AwsResult<()> {
    let constraint = if value < min {
        format!("greater than or equal to {min}")
    } else if value > max {
        format!("less than or equal to {max}")
    } else {
        return Ok(());
    };
    Err(AwsError::validation(format!(
        "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must have value {constraint}"
    )))
}

/// The policy a request names, checked, or the default policy.
pub(super) fn requested_policy(ctx: &Context, input: &Value) -> AwsResult<String> {
    match input.str("Policy") {
        Some(p) => {
            check_policy(p)?;
            Ok(p.to_string())
        }
        None => Ok(default_policy(&ctx.account)),
    }
}

fn check_policy(policy: &str) -> AwsResult<()> {
    match serde_json::from_str::<serde_json::Value>(policy) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(AwsError::new(
            "MalformedPolicyDocumentException",
            "The policy document is not valid JSON.",
        )),
    }
}

/// Tags as stored: `[[key, value], ...]` in the order they were first set.
fn read_tags(json: &str) -> Vec<(String, String)> {
    serde_json::from_str(json).unwrap_or_default()
}

pub(super) fn tag_pairs(input: &Value) -> Vec<(String, String)> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t.str("TagKey").unwrap_or_default().to_string(),
                t.str("TagValue").unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn merge_tags(tags: &mut Vec<(String, String)>, new: Vec<(String, String)>) {
    for (k, v) in new {
        match tags.iter_mut().find(|(existing, _)| *existing == k) {
            Some(slot) => slot.1 = v,
            None => tags.push((k, v)),
        }
    }
}

fn tags_json(tags: &[(String, String)]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

/// The `KeyMetadata` structure AWS returns for a key.
pub(super) fn metadata(key: &Key) -> AwsResult<Value> {
    let mut m = Value::map()
        .with("AWSAccountId", key.account.as_str())
        .with("KeyId", key.id.as_str())
        .with("Arn", key.arn.as_str())
        .with("CreationDate", Value::Timestamp(key.created))
        .with("Enabled", key.state == "Enabled")
        .with("Description", key.description.as_str())
        .with("KeyUsage", key.usage.as_str())
        .with("KeyState", key.state.as_str())
        .with("Origin", key.origin.as_str())
        .with("KeyManager", key.manager.as_str())
        .with("CustomerMasterKeySpec", key.spec.as_str())
        .with("KeySpec", key.spec.as_str())
        .with("MultiRegion", key.multi_region);
    let strings = |list: &[&str]| Value::List(list.iter().map(|s| Value::from(*s)).collect());
    match key.usage.as_str() {
        "ENCRYPT_DECRYPT" => m.insert(
            "EncryptionAlgorithms",
            strings(key.family.encryption_algorithms()),
        ),
        "SIGN_VERIFY" => m.insert(
            "SigningAlgorithms",
            strings(key.family.signing_algorithms()),
        ),
        "KEY_AGREEMENT" => m.insert("KeyAgreementAlgorithms", strings(&["ECDH"])),
        "ENCAPSULATE_DECAPSULATE" => m.insert("EncapsulationAlgorithms", strings(&["ML_KEM"])),
        _ => m.insert("MacAlgorithms", strings(key.family.mac_algorithms())),
    }
    if let Some(date) = key.deletion_date {
        m.insert("DeletionDate", Value::Timestamp(date));
    }
    if let Some(days) = key.pending_days {
        m.insert("PendingDeletionWindowInDays", days);
    }
    if let Some(store) = &key.custom_key_store_id {
        m.insert("CustomKeyStoreId", store.as_str());
    }
    if let Some(cluster) = &key.cloud_hsm_cluster_id {
        m.insert("CloudHsmClusterId", cluster.as_str());
    }
    if let Some(xks) = &key.xks_key_id {
        m.insert("XksKeyConfiguration", Value::map().with("Id", xks.as_str()));
    }
    if let Some(model) = &key.expiration_model {
        m.insert("ExpirationModel", model.as_str());
    }
    if let Some(valid_to) = key.valid_to {
        m.insert("ValidTo", Value::Timestamp(valid_to));
    }
    if key.family == Family::Symmetric && !key.material.is_empty() {
        m.insert(
            "CurrentKeyMaterialId",
            crypto::material_id(&key.id, &key.material)?,
        );
    }
    if key.multi_region {
        m.insert("MultiRegionConfiguration", multi_region::configuration(key));
    }
    Ok(m)
}

impl Kms {
    pub(super) fn insert_key(
        &self,
        tx: &rusqlite::Connection,
        ctx: &Context,
        key: &Key,
        policy: &str,
        tags: &[(String, String)],
    ) -> AwsResult<()> {
        tx.execute_cached(
            "INSERT INTO kms_keys (account, region, key_id, created, description, key_spec,
                key_usage, state, origin, manager, multi_region, rotation_period, policy, tags,
                material, material_id, primary_region, custom_key_store_id, xks_key_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19)",
            rusqlite::params![
                ctx.account,
                ctx.region,
                key.id,
                key.created,
                key.description,
                key.spec,
                key.usage,
                key.state,
                key.origin,
                key.manager,
                key.multi_region,
                key.rotation_period,
                policy,
                tags_json(tags),
                key.material,
                key.material_id,
                key.primary_region,
                key.custom_key_store_id,
                key.xks_key_id,
            ],
        )?;
        Ok(())
    }

    /// A new key in the caller's region, enabled, without material yet.
    fn new_key(
        ctx: &Context,
        spec: &str,
        family: Family,
        usage: &str,
        description: &str,
        manager: &str,
        multi_region: bool,
    ) -> Key {
        let id = if multi_region {
            format!("mrk-{}", hex::encode(crypto::random_bytes(16)))
        } else {
            new_key_id()
        };
        Key {
            arn: key_arn(&ctx.region, &ctx.account, &id),
            id,
            account: ctx.account.clone(),
            region: ctx.region.clone(),
            created: now_millis(),
            description: description.to_string(),
            spec: spec.to_string(),
            family,
            usage: usage.to_string(),
            state: "Enabled".into(),
            deletion_date: None,
            pending_days: None,
            origin: "AWS_KMS".into(),
            manager: manager.to_string(),
            multi_region,
            rotation_period: (manager == "AWS").then_some(365),
            material: Vec::new(),
            generation: 0,
            expiration_model: None,
            valid_to: None,
            material_id: None,
            primary_region: multi_region.then(|| ctx.region.clone()),
            regions: if multi_region {
                vec![ctx.region.clone()]
            } else {
                Vec::new()
            },
            custom_key_store_id: None,
            cloud_hsm_cluster_id: None,
            xks_key_id: None,
        }
    }

    pub(super) fn create_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let spec = input
            .str("KeySpec")
            .or_else(|| input.str("CustomerMasterKeySpec"))
            .unwrap_or("SYMMETRIC_DEFAULT");
        if input.str("KeySpec").is_some() && input.str("CustomerMasterKeySpec").is_some() {
            return Err(AwsError::validation(
                "You cannot specify KeySpec and CustomerMasterKeySpec in the same request. CustomerMasterKeySpec is deprecated.",
            ));
        }
        let family = Family::of(spec).ok_or_else(|| {
            AwsError::new(
                "UnsupportedOperationException",
                format!("KeySpec {spec} is not supported by Roto."),
            )
        })?;
        let usage = input.str("KeyUsage").unwrap_or("ENCRYPT_DECRYPT");
        if !family.usages().contains(&usage) {
            return Err(AwsError::validation(format!(
                "KeyUsage {usage} is not compatible with KeySpec {spec}"
            )));
        }
        let origin = input.str("Origin").unwrap_or("AWS_KMS");
        let multi_region = input.bool("MultiRegion").unwrap_or(false);
        let store = self.requested_key_store(ctx, input, origin, spec, multi_region)?;
        let policy = requested_policy(ctx, input)?;
        let mut key = Self::new_key(
            ctx,
            spec,
            family,
            usage,
            input.str("Description").unwrap_or_default(),
            "CUSTOMER",
            multi_region,
        );
        key.origin = origin.to_string();
        if origin == "EXTERNAL" {
            key.state = "PendingImport".into();
        } else {
            key.material = crypto::generate(family)?;
        }
        if let Some((store_id, cluster)) = store {
            key.custom_key_store_id = Some(store_id);
            key.cloud_hsm_cluster_id = cluster;
            key.xks_key_id = input.str("XksKeyId").map(str::to_string);
        }
        let tags = tag_pairs(input);
        self.env
            .store
            .transaction(|tx| self.insert_key(tx, ctx, &key, &policy, &tags))?;
        Ok(Value::map().with("KeyMetadata", metadata(&key)?))
    }

    /// The custom key store CreateKey puts the key in, with its CloudHSM cluster: a connected
    /// store of the type `origin` names, for a single-Region symmetric key (with an external key
    /// of its own in an external key store).
    fn requested_key_store(
        &self,
        ctx: &Context,
        input: &Value,
        origin: &str,
        spec: &str,
        multi_region: bool,
    ) -> AwsResult<Option<(String, Option<String>)>> {
        let in_store = ["AWS_CLOUDHSM", "EXTERNAL_KEY_STORE"].contains(&origin);
        let xks_key = input.str("XksKeyId");
        let Some(store_id) = input.str("CustomKeyStoreId") else {
            if in_store {
                return Err(AwsError::validation(format!(
                    "CustomKeyStoreId is required when Origin is {origin}."
                )));
            }
            if xks_key.is_some() {
                return Err(AwsError::validation(
                    "XksKeyId is valid only when Origin is EXTERNAL_KEY_STORE.",
                ));
            }
            return Ok(None);
        };
        if !in_store {
            return Err(AwsError::validation(format!(
                "CustomKeyStoreId is not valid when Origin is {origin}."
            )));
        }
        if spec != "SYMMETRIC_DEFAULT" || multi_region {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                "Custom key stores hold only single-Region symmetric encryption keys.",
            ));
        }
        let cluster = self.connected_key_store(ctx, store_id, origin)?;
        if origin == "EXTERNAL_KEY_STORE" {
            let Some(xks_key) = xks_key else {
                return Err(AwsError::validation(
                    "XksKeyId is required when Origin is EXTERNAL_KEY_STORE.",
                ));
            };
            let used: i64 = self.env.store.with(|c| {
                c.query_row_cached(
                    "SELECT count(*) FROM kms_keys WHERE account = ?1 AND region = ?2
                     AND custom_key_store_id = ?3 AND xks_key_id = ?4",
                    [&ctx.account, &ctx.region, store_id, xks_key],
                    |r| r.get(0),
                )
            })?;
            if used > 0 {
                return Err(AwsError::new(
                    "XksKeyAlreadyInUseException",
                    format!(
                        "External key {xks_key} is already used by another KMS key in {store_id}."
                    ),
                ));
            }
        } else if xks_key.is_some() {
            return Err(AwsError::validation(
                "XksKeyId is valid only when Origin is EXTERNAL_KEY_STORE.",
            ));
        }
        Ok(Some((store_id.to_string(), cluster)))
    }

    /// Creates the AWS managed key behind `alias` (`alias/aws/<service>`) unless another
    /// call just did; returns its id.
    pub(super) fn create_managed_key(
        &self,
        ctx: &Context,
        alias: &str,
        description: &str,
    ) -> AwsResult<String> {
        let mut key = Self::new_key(
            ctx,
            "SYMMETRIC_DEFAULT",
            Family::Symmetric,
            "ENCRYPT_DECRYPT",
            description,
            "AWS",
            false,
        );
        key.material = crypto::generate(Family::Symmetric)?;
        self.env.store.transaction(|tx| {
            let existing: Option<String> = rusqlite::OptionalExtension::optional(tx.query_row_cached(
                "SELECT key_id FROM kms_aliases WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, alias],
                |r| r.get(0),
            ))?;
            if let Some(id) = existing {
                return Ok(id);
            }
            self.insert_key(tx, ctx, &key, &default_policy(&ctx.account), &[])?;
            tx.execute_cached(
                "INSERT INTO kms_aliases (account, region, name, key_id, created, updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                rusqlite::params![ctx.account, ctx.region, alias, key.id, key.created],
            )?;
            Ok(key.id.clone())
        })
    }

    pub(super) fn describe_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        Ok(Value::map().with("KeyMetadata", metadata(&key)?))
    }

    pub(super) fn list_keys(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let now = now_millis();
        let keys: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT key_id FROM kms_keys WHERE account = ?1 AND region = ?2
                 AND (deletion_date IS NULL OR deletion_date > ?3) ORDER BY created, key_id",
            )?;
            let rows = st.query_map(rusqlite::params![ctx.account, ctx.region, now], |r| {
                r.get::<_, String>(0)
            })?;
            rows.map(|id| {
                id.map(|id| {
                    Value::map()
                        .with("KeyArn", key_arn(&ctx.region, &ctx.account, &id))
                        .with("KeyId", id)
                })
            })
            .collect::<rusqlite::Result<_>>()
            .map_err(AwsError::from)
        })?;
        list_page(keys, "Keys", input)
    }

    pub(super) fn set_enabled(
        &self,
        ctx: &Context,
        input: &Value,
        enabled: bool,
    ) -> AwsResult<Value> {
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if key.state == "PendingImport" {
            return Err(wrong_state(&key));
        }
        let state = if enabled { "Enabled" } else { "Disabled" };
        self.set_column(ctx, &key, "state", &state)?;
        Ok(Value::map())
    }

    pub(super) fn schedule_key_deletion(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let days = input.int("PendingWindowInDays").unwrap_or(30);
        validation_range(days, "pendingWindowInDays", 7, 30)?;
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if self.has_live_replicas(ctx, &key)? {
            self.env.store.with(|c| {
                c.execute_cached(
                    "UPDATE kms_keys SET state = 'PendingReplicaDeletion', pending_days = ?4
                     WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                    rusqlite::params![ctx.account, ctx.region, key.id, days],
                )
            })?;
            return Ok(Value::map()
                .with("KeyId", key.arn)
                .with("KeyState", "PendingReplicaDeletion")
                .with("PendingWindowInDays", days));
        }
        let date = now_millis() + days * DAY_MS;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_keys SET state = 'PendingDeletion', deletion_date = ?4, pending_days = ?5
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                rusqlite::params![ctx.account, ctx.region, key.id, date, days],
            )
        })?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("DeletionDate", Value::Timestamp(date))
            .with("KeyState", "PendingDeletion")
            .with("PendingWindowInDays", days))
    }

    pub(super) fn cancel_key_deletion(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if !["PendingDeletion", "PendingReplicaDeletion"].contains(&key.state.as_str()) {
            return Err(invalid_state(format!(
                "{} is not pending deletion.",
                key.arn
            )));
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_keys SET deletion_date = NULL, pending_days = NULL,
                    state = CASE WHEN length(material) = 0 THEN 'PendingImport' ELSE 'Disabled' END
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, &key.id],
            )
        })?;
        Ok(Value::map().with("KeyId", key.arn))
    }

    pub(super) fn update_key_description(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        self.set_column(
            ctx,
            &key,
            "description",
            &input.str("Description").unwrap_or_default(),
        )?;
        Ok(Value::map())
    }

    pub(super) fn set_rotation(
        &self,
        ctx: &Context,
        input: &Value,
        enabled: bool,
    ) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usable(&key)?;
        check_generated(&key)?;
        if key.family != Family::Symmetric {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!(
                    "{} key spec {} does not support automatic key rotation.",
                    key.arn, key.spec
                ),
            ));
        }
        if key.manager == "AWS" {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!(
                    "{} is an AWS managed key; its rotation cannot be changed.",
                    key.arn
                ),
            ));
        }
        check_not_replica(&key)?;
        let period = enabled.then(|| input.int("RotationPeriodInDays").unwrap_or(365));
        self.env.store.with(|c| {
            c.execute_cached(
                &format!("UPDATE kms_keys SET rotation_period = ?4 WHERE {KEY_SET}"),
                rusqlite::params![ctx.account, ctx.region, key.id, period],
            )
        })?;
        Ok(Value::map())
    }

    pub(super) fn get_key_rotation_status(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if key.family != Family::Symmetric {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!(
                    "{} key spec {} does not support automatic key rotation.",
                    key.arn, key.spec
                ),
            ));
        }
        let mut out = Value::map()
            .with("KeyRotationEnabled", key.rotation_period.is_some())
            .with("KeyId", key.arn.as_str());
        if let Some(days) = key.rotation_period {
            let periods = (now_millis() - key.created) / (days * DAY_MS) + 1;
            out.insert("RotationPeriodInDays", days);
            out.insert(
                "NextRotationDate",
                Value::Timestamp(key.created + periods * days * DAY_MS),
            );
        }
        Ok(out)
    }

    /// RotateKeyOnDemand: new material for a symmetric customer key; ciphertexts under the
    /// old material still decrypt.
    pub(super) fn rotate_key_on_demand(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usable(&key)?;
        check_generated(&key)?;
        if key.family != Family::Symmetric || key.manager == "AWS" {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!("{} does not support on-demand rotation.", key.arn),
            ));
        }
        check_not_replica(&key)?;
        let material = crypto::generate(Family::Symmetric)?;
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "INSERT INTO kms_materials (account, region, key_id, generation, material, rotated, rotation_type)
                     SELECT account, region, key_id, ?4, ?5, ?6, 'ON_DEMAND' FROM kms_keys WHERE {KEY_SET}"
                ),
                rusqlite::params![ctx.account, ctx.region, key.id, key.generation + 1, material, now_millis()],
            )
        })?;
        Ok(Value::map().with("KeyId", key.id))
    }

    pub(super) fn list_key_rotations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if key.family != Family::Symmetric {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!(
                    "{} key spec {} does not support key rotation.",
                    key.arn, key.spec
                ),
            ));
        }
        let rotations: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT rotated, rotation_type FROM kms_materials
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3 ORDER BY generation",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region, &key.id], |r| {
                Ok(Value::map()
                    .with("KeyId", key.id.as_str())
                    .with("RotationDate", Value::Timestamp(r.get(0)?))
                    .with("RotationType", r.get::<_, String>(1)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        list_page(rotations, "Rotations", input)
    }

    fn check_policy_name(input: &Value) -> AwsResult<()> {
        match input.str("PolicyName") {
            None | Some("default") => Ok(()),
            Some(_) => Err(AwsError::new("NotFoundException", "No such policy exists")),
        }
    }

    pub(super) fn get_key_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Self::check_policy_name(input)?;
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let policy: String = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT policy FROM kms_keys WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, &key.id],
                |r| r.get(0),
            )
        })?;
        Ok(Value::map()
            .with("Policy", policy)
            .with("PolicyName", "default"))
    }

    pub(super) fn put_key_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Self::check_policy_name(input)?;
        let policy = input.str("Policy").unwrap_or_default();
        check_policy(policy)?;
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        self.set_column(ctx, &key, "policy", &policy)?;
        Ok(Value::map())
    }

    pub(super) fn list_key_policies(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        Ok(Value::map()
            .with("PolicyNames", Value::List(vec!["default".into()]))
            .with("Truncated", false))
    }

    pub(super) fn tags_of(&self, ctx: &Context, key: &Key) -> AwsResult<Vec<(String, String)>> {
        let json: String = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT tags FROM kms_keys WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, &key.id],
                |r| r.get(0),
            )
        })?;
        Ok(read_tags(&json))
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let mut tags = self.tags_of(ctx, &key)?;
        merge_tags(&mut tags, tag_pairs(input));
        self.set_column(ctx, &key, "tags", &tags_json(&tags))?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.mutable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let remove: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut tags = self.tags_of(ctx, &key)?;
        tags.retain(|(k, _)| !remove.contains(&k.as_str()));
        self.set_column(ctx, &key, "tags", &tags_json(&tags))?;
        Ok(Value::map())
    }

    pub(super) fn list_resource_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let tags = self
            .tags_of(ctx, &key)?
            .into_iter()
            .map(|(k, v)| Value::map().with("TagKey", k).with("TagValue", v))
            .collect();
        list_page(tags, "Tags", input)
    }
}

/// A KMS list page (`Limit`, `Marker` in; `NextMarker`, `Truncated` out).
pub(super) fn list_page(items: Vec<Value>, member: &str, input: &Value) -> AwsResult<Value> {
    let limit = usize::try_from(input.int("Limit").unwrap_or(100)).unwrap_or(100);
    let (items, next) = page(items, limit, input.str("Marker"), || {
        AwsError::new("InvalidMarkerException", "Invalid marker")
    })?;
    Ok(Value::map()
        .with(member, Value::List(items))
        .with("Truncated", next.is_some())
        .with_opt("NextMarker", next))
}
