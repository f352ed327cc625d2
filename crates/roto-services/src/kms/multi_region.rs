//! Multi-Region keys: a set of keys with one key id (`mrk-...`) and one material, one row per
//! region in `kms_keys`, each naming the set's primary region. ReplicateKey writes the
//! replica's row (and the primary's rotated material) into the replica region, so ciphertext
//! from any key of the set decrypts with any other; UpdatePrimaryRegion moves the primary.
//! Material, rotation and origin are shared; description, policy, tags, aliases, grants and
//! state are each key's own. A primary scheduled for deletion waits in
//! `PendingReplicaDeletion` until its replicas are deleted, then starts its own window.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::keys::{metadata, requested_policy, tag_pairs, DAY_MS};
use super::{in_region, key_arn, not_found, wrong_state, Key, Kms};

fn unsupported(message: String) -> AwsError {
    AwsError::new("UnsupportedOperationException", message)
}

/// The `MultiRegionConfiguration` of a key of a multi-Region set.
pub(super) fn configuration(key: &Key) -> Value {
    let primary = key.primary_region.as_deref().unwrap_or(&key.region);
    let entry = |region: &str| {
        Value::map()
            .with("Arn", key_arn(region, &key.account, &key.id))
            .with("Region", region)
    };
    let replicas = key
        .regions
        .iter()
        .filter(|r| r.as_str() != primary)
        .map(|r| entry(r))
        .collect();
    Value::map()
        .with(
            "MultiRegionKeyType",
            if key.is_replica() {
                "REPLICA"
            } else {
                "PRIMARY"
            },
        )
        .with("PrimaryKey", entry(primary))
        .with("ReplicaKeys", Value::List(replicas))
}

impl Kms {
    /// The regions holding a key of the multi-Region set `key_id` (deleted ones aside).
    pub(super) fn multi_region_set(&self, ctx: &Context, key_id: &str) -> AwsResult<Vec<String>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT region FROM kms_keys WHERE account = ?1 AND key_id = ?2
                 AND (deletion_date IS NULL OR deletion_date > ?3) ORDER BY region",
            )?;
            let rows = st.query_map(rusqlite::params![ctx.account, key_id, now_millis()], |r| {
                r.get(0)
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })
    }

    /// A primary waiting for its replicas' deletion starts its own deletion window once the
    /// last of them is gone, counted from that replica's deletion date.
    pub(super) fn start_primary_deletion(
        &self,
        ctx: &Context,
        mut key: Key,
    ) -> AwsResult<Option<Key>> {
        if key.regions.iter().any(|r| *r != key.region) {
            return Ok(Some(key));
        }
        let last_replica_deleted: Option<i64> = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT max(deletion_date) FROM kms_keys
                 WHERE account = ?1 AND key_id = ?2 AND region != ?3",
                [&ctx.account, &key.id, &ctx.region],
                |r| r.get(0),
            )
        })?;
        let window = key.pending_days.unwrap_or(30) * DAY_MS;
        let date = last_replica_deleted.unwrap_or_else(now_millis) + window;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_keys SET state = 'PendingDeletion', deletion_date = ?4
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                rusqlite::params![ctx.account, ctx.region, key.id, date],
            )
        })?;
        if date <= now_millis() {
            self.purge_key(ctx, &key.id)?;
            return Ok(None);
        }
        key.state = "PendingDeletion".into();
        key.deletion_date = Some(date);
        Ok(Some(key))
    }

    /// Whether the primary `key` still has replicas that are not pending deletion.
    pub(super) fn has_live_replicas(&self, ctx: &Context, key: &Key) -> AwsResult<bool> {
        if !key.multi_region || key.is_replica() {
            return Ok(false);
        }
        let count: i64 = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT count(*) FROM kms_keys WHERE account = ?1 AND key_id = ?2
                 AND region != ?3 AND deletion_date IS NULL",
                [&ctx.account, &key.id, &ctx.region],
                |r| r.get(0),
            )
        })?;
        Ok(count > 0)
    }

    /// The multi-Region primary key `KeyId` names, in a state that lets it act for the set.
    fn primary_key(&self, ctx: &Context, input: &Value) -> AwsResult<Key> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if !key.multi_region {
            return Err(unsupported(format!(
                "{} is not a multi-Region key.",
                key.arn
            )));
        }
        if key.is_replica() {
            return Err(unsupported(format!(
                "{} is a multi-Region replica key; only its primary key can perform this operation.",
                key.arn
            )));
        }
        match key.state.as_str() {
            "Enabled" | "PendingImport" => Ok(key),
            "Disabled" => Err(AwsError::new(
                "DisabledException",
                format!("{} is disabled.", key.arn),
            )),
            _ => Err(wrong_state(&key)),
        }
    }

    pub(super) fn replicate_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let primary = self.primary_key(ctx, input)?;
        let replica_region = input.str("ReplicaRegion").unwrap_or_default();
        let there = in_region(ctx, replica_region);
        let replica_arn = key_arn(replica_region, &ctx.account, &primary.id);
        if replica_region == ctx.region {
            return Err(AwsError::validation(format!(
                "{replica_region} is the primary key's Region; a replica must be in another Region."
            )));
        }
        if self.load_key(&there, &primary.id)?.is_some() {
            return Err(AwsError::new(
                "AlreadyExistsException",
                format!("{replica_arn} already exists"),
            ));
        }
        let policy = requested_policy(ctx, input)?;
        let tags = tag_pairs(input);
        // A replica of imported material has none until the same material is imported.
        let imported = primary.origin == "EXTERNAL";
        let mut replica = Key {
            arn: replica_arn,
            region: replica_region.to_string(),
            created: now_millis(),
            description: input.str("Description").unwrap_or_default().to_string(),
            state: if imported { "PendingImport" } else { "Enabled" }.into(),
            material: if imported {
                Vec::new()
            } else {
                primary.material.clone()
            },
            deletion_date: None,
            pending_days: None,
            manager: "CUSTOMER".into(),
            expiration_model: None,
            valid_to: None,
            primary_region: Some(ctx.region.clone()),
            ..primary.clone()
        };
        let original = if imported {
            Vec::new()
        } else {
            self.material(ctx, &primary, 0)?.unwrap_or_default()
        };
        self.env.store.transaction(|tx| {
            self.insert_key(tx, &there, &Key { material: original, ..replica.clone() }, &policy, &tags)?;
            tx.execute_cached(
                "INSERT INTO kms_materials (account, region, key_id, generation, material, rotated, rotation_type)
                 SELECT account, ?4, key_id, generation, material, rotated, rotation_type
                 FROM kms_materials WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, &primary.id, replica_region],
            )?;
            tx.execute_cached(
                "UPDATE kms_keys SET primary_region = ?3 WHERE account = ?1 AND key_id = ?2",
                [&ctx.account, &primary.id, &ctx.region],
            )?;
            Ok::<_, AwsError>(())
        })?;
        replica.regions = self.multi_region_set(ctx, &primary.id)?;
        let mut meta = metadata(&replica)?;
        // AWS answers before the replica is ready; Roto's is ready at once.
        meta.insert("KeyState", "Creating");
        meta.insert("Enabled", false);
        let tags = tags
            .into_iter()
            .map(|(k, v)| Value::map().with("TagKey", k).with("TagValue", v))
            .collect();
        Ok(Value::map()
            .with("ReplicaKeyMetadata", meta)
            .with("ReplicaPolicy", policy)
            .with("ReplicaTags", Value::List(tags)))
    }

    pub(super) fn update_primary_region(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let primary = self.primary_key(ctx, input)?;
        let region = input.str("PrimaryRegion").unwrap_or_default();
        if region == ctx.region {
            return Err(AwsError::validation(format!(
                "{} is already the primary key.",
                primary.arn
            )));
        }
        if self
            .load_key(&in_region(ctx, region), &primary.id)?
            .is_none()
        {
            return Err(not_found(format!(
                "Key '{}' does not exist",
                key_arn(region, &ctx.account, &primary.id)
            )));
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_keys SET primary_region = ?3 WHERE account = ?1 AND key_id = ?2",
                [&ctx.account, &primary.id, region],
            )
        })?;
        Ok(Value::map())
    }
}
