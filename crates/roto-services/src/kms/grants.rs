//! Grants: stored and listed as AWS returns them (they are not enforced, like policies).

use roto_core::protocol::json::value_to_json;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::keys::list_page;
use super::{crypto, key_arn, Kms};

/// The request members a grant keeps, as `GrantListEntry` spells them.
const GRANT_MEMBERS: &[&str] = &[
    "Name",
    "GranteePrincipal",
    "RetiringPrincipal",
    "Operations",
    "Constraints",
];

fn grant_not_found() -> AwsError {
    AwsError::new("NotFoundException", "Grant ID not found")
}

impl Kms {
    pub(super) fn create_grant(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if input.str("GranteePrincipal").is_none() && input.str("GranteeServicePrincipal").is_none()
        {
            return Err(AwsError::validation(
                "1 validation error detected: Value null at 'granteePrincipal' failed to satisfy constraint: Member must not be null",
            ));
        }
        let grant_id = hex::encode(crypto::random_bytes(32));
        let token = hex::encode(crypto::random_bytes(48));
        let mut stored = Value::map();
        for member in GRANT_MEMBERS {
            if let Some(v) = input.get(member) {
                stored.insert(*member, v.clone());
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO kms_grants (account, region, grant_id, key_id, created, grant_token, grant)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    grant_id,
                    key.id,
                    now_millis(),
                    token,
                    value_to_json(&stored).to_string()
                ],
            )
        })?;
        Ok(Value::map()
            .with("GrantId", grant_id)
            .with("GrantToken", token))
    }

    /// Grants in the account and region, as `GrantListEntry` values with their key ids.
    fn grants(&self, ctx: &Context) -> AwsResult<Vec<(String, String, Value)>> {
        let rows: Vec<(String, String, i64, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT grant_id, key_id, created, grant FROM kms_grants
                 WHERE account = ?1 AND region = ?2 ORDER BY created, grant_id",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        Ok(rows
            .into_iter()
            .map(|(grant_id, key_id, created, json)| {
                let stored = serde_json::from_str(&json)
                    .map(|j| Value::from_json(&j))
                    .unwrap_or_else(|_| Value::map());
                let mut entry = stored
                    .with("KeyId", key_arn(&ctx.region, &ctx.account, &key_id))
                    .with("GrantId", grant_id.as_str())
                    .with("CreationDate", Value::Timestamp(created))
                    .with(
                        "IssuingAccount",
                        format!("arn:aws:iam::{}:root", ctx.account),
                    );
                if entry.get("Name").is_none() {
                    entry.insert("Name", "");
                }
                (grant_id, key_id, entry)
            })
            .collect())
    }

    pub(super) fn list_grants(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let grants = self
            .grants(ctx)?
            .into_iter()
            .filter(|(grant_id, key_id, entry)| {
                *key_id == key.id
                    && input.str("GrantId").is_none_or(|g| g == grant_id)
                    && input
                        .str("GranteePrincipal")
                        .is_none_or(|p| entry.str("GranteePrincipal") == Some(p))
            })
            .map(|(_, _, entry)| entry)
            .collect();
        list_page(grants, "Grants", input)
    }

    pub(super) fn list_retirable_grants(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let principal = input.str("RetiringPrincipal").unwrap_or_default();
        let grants = self
            .grants(ctx)?
            .into_iter()
            .filter(|(_, _, entry)| entry.str("RetiringPrincipal") == Some(principal))
            .map(|(_, _, entry)| entry)
            .collect();
        list_page(grants, "Grants", input)
    }

    fn delete_grant(&self, ctx: &Context, key_id: &str, grant_id: &str) -> AwsResult<()> {
        let deleted = self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM kms_grants WHERE account = ?1 AND region = ?2 AND key_id = ?3 AND grant_id = ?4",
                [&ctx.account, &ctx.region, key_id, grant_id],
            )
        })?;
        if deleted == 0 {
            return Err(grant_not_found());
        }
        Ok(())
    }

    pub(super) fn revoke_grant(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        self.delete_grant(ctx, &key.id, input.str("GrantId").unwrap_or_default())?;
        Ok(Value::map())
    }

    pub(super) fn retire_grant(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        if let Some(token) = input.str("GrantToken") {
            let deleted = self.env.store.with(|c| {
                c.execute_cached(
                    "DELETE FROM kms_grants WHERE account = ?1 AND region = ?2 AND grant_token = ?3",
                    [&ctx.account, &ctx.region, token],
                )
            })?;
            if deleted == 0 {
                return Err(AwsError::new(
                    "InvalidGrantTokenException",
                    "The grant token is not valid.",
                ));
            }
            return Ok(Value::map());
        }
        let (Some(key_id), Some(grant_id)) = (input.str("KeyId"), input.str("GrantId")) else {
            return Err(AwsError::validation(
                "Either GrantToken or both KeyId and GrantId must be specified.",
            ));
        };
        let key = self.find_key(ctx, key_id)?;
        self.delete_grant(ctx, &key.id, grant_id)?;
        Ok(Value::map())
    }
}
