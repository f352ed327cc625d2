//! Grants: stored and listed as AWS returns them, and, under `--enforce-iam`, what they
//! give a caller ([`Kms::grant_access`], [`Kms::retire_access`]): a grant naming the
//! caller (its user, its role, its own session) for the operation, whose constraints the
//! request's encryption context meets, allows it without any policy; a grant naming the
//! caller's account delegates to that account's IAM policies, as a key policy would.

use roto_core::access::{Grant, Principal, PrincipalKind};
use roto_core::protocol::json::value_to_json;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

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

/// What a grant's `GranteePrincipal` (or `RetiringPrincipal`) gives `who`: a user, a role
/// (for its sessions) or a session named is the caller; the account's root or id, its
/// account.
fn names(principal: Option<&str>, who: &Principal) -> Grant {
    let Some(principal) = principal else {
        return Grant::None;
    };
    let role = |arn: &str| {
        let prefix = format!("arn:aws:iam::{}:role/", who.account);
        arn.strip_prefix(&prefix)
            .and_then(|path| path.rsplit('/').next())
            .is_some_and(|name| Some(name) == who.name.as_deref())
    };
    if principal == who.arn || (who.kind == PrincipalKind::AssumedRole && role(principal)) {
        Grant::Caller
    } else if principal == who.account || principal == format!("arn:aws:iam::{}:root", who.account)
    {
        Grant::Account
    } else {
        Grant::None
    }
}

/// Whether a request's encryption context meets a grant's constraints: every pair of
/// `EncryptionContextSubset` in it, exactly the pairs of `EncryptionContextEquals`.
fn constraints_met(constraints: Option<&Value>, context: Option<&Value>) -> bool {
    let empty = Default::default();
    let context = context.and_then(Value::as_map).unwrap_or(&empty);
    let Some(constraints) = constraints else {
        return true;
    };
    let subset = constraints
        .get("EncryptionContextSubset")
        .and_then(Value::as_map)
        .is_none_or(|pairs| pairs.iter().all(|(k, v)| context.get(k) == Some(v)));
    let equals = constraints
        .get("EncryptionContextEquals")
        .and_then(Value::as_map)
        .is_none_or(|pairs| pairs == context);
    subset && equals
}

fn allows_operation(grant: &Value, operation: &str) -> bool {
    grant
        .get("Operations")
        .and_then(Value::as_list)
        .is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some(operation)))
}

fn stored(json: &str) -> Value {
    serde_json::from_str(json)
        .map(|j| Value::from_json(&j))
        .unwrap_or_else(|_| Value::map())
}

impl Kms {
    /// What the key's grants give `who` for `operation` with the request's `input`: the
    /// strongest of the grants that name the caller (or its account), list the operation
    /// and whose constraints hold.
    pub(super) fn grant_access(
        &self,
        ctx: &Context,
        key_id: &str,
        who: &Principal,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Grant> {
        let grants: Vec<String> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT grant FROM kms_grants WHERE account = ?1 AND region = ?2 AND key_id = ?3",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region, key_id], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        let mut best = Grant::None;
        for grant in grants.iter().map(|json| stored(json)) {
            if !allows_operation(&grant, operation)
                || !constraints_met(grant.get("Constraints"), input.get("EncryptionContext"))
            {
                continue;
            }
            match names(grant.str("GranteePrincipal"), who) {
                Grant::Caller => return Ok(Grant::Caller),
                Grant::Account => best = Grant::Account,
                Grant::None => {}
            }
        }
        Ok(best)
    }

    /// The key a `RetireGrant` names (by its token, or its key and id) and what that grant
    /// gives `who`: its retiring principal, and its grantee when it lists `RetireGrant`,
    /// may retire it.
    pub(super) fn retire_access(
        &self,
        ctx: &Context,
        who: &Principal,
        input: &Value,
    ) -> AwsResult<Option<(String, Grant)>> {
        let token = input.str("GrantToken").unwrap_or_default();
        let grant_id = input.str("GrantId").unwrap_or_default();
        let key_id = match input.str("KeyId") {
            Some(key_id) => self.find_key(ctx, key_id).map(|k| k.id).unwrap_or_default(),
            None => String::new(),
        };
        let row: Option<(String, String)> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT key_id, grant FROM kms_grants WHERE account = ?1 AND region = ?2
                   AND (grant_token = ?3 OR (key_id = ?4 AND grant_id = ?5))",
            )?
            .query_row([&ctx.account, &ctx.region, token, &key_id, grant_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(row.map(|(key_id, json)| {
            let grant = stored(&json);
            let retiring = names(grant.str("RetiringPrincipal"), who);
            let grantee = match allows_operation(&grant, "RetireGrant") {
                true => names(grant.str("GranteePrincipal"), who),
                false => Grant::None,
            };
            let strongest = match (retiring, grantee) {
                (Grant::Caller, _) | (_, Grant::Caller) => Grant::Caller,
                (Grant::Account, _) | (_, Grant::Account) => Grant::Account,
                _ => Grant::None,
            };
            (key_id, strongest)
        }))
    }
}
