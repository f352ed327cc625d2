//! Aliases: friendly names (`alias/...`) that point at one key each.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::keys::list_page;
use super::{alias_arn, not_found, Key, Kms};

/// Checks a name a caller wants to create, update or delete.
fn check_alias_name(name: &str) -> AwsResult<()> {
    if !name.starts_with("alias/") || name.len() == "alias/".len() {
        return Err(AwsError::validation(
            "Alias must start with the prefix \"alias/\". Please see https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html",
        ));
    }
    if name.starts_with("alias/aws/") {
        return Err(AwsError::new(
            "NotAuthorizedException",
            "Cannot create, update or delete an alias with the reserved prefix 'alias/aws/'.",
        ));
    }
    Ok(())
}

impl Kms {
    /// The key an alias may point at: named by key id or ARN (never another alias), and
    /// not pending deletion.
    fn alias_target_key(&self, ctx: &Context, input: &Value) -> AwsResult<Key> {
        let target = input.str("TargetKeyId").unwrap_or_default();
        if target.starts_with("alias/") || target.contains(":alias/") {
            return Err(AwsError::validation(
                "Aliases must refer to keys. Not aliases",
            ));
        }
        self.mutable_key(ctx, target)
    }

    pub(super) fn create_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("AliasName").unwrap_or_default();
        check_alias_name(name)?;
        let key = self.alias_target_key(ctx, input)?;
        let now = now_millis();
        let inserted = self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO kms_aliases (account, region, name, key_id, created, updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                rusqlite::params![ctx.account, ctx.region, name, key.id, now],
            )
        })?;
        if inserted == 0 {
            return Err(AwsError::new(
                "AlreadyExistsException",
                format!(
                    "An alias with the name {} already exists",
                    alias_arn(ctx, name)
                ),
            ));
        }
        Ok(Value::map())
    }

    pub(super) fn update_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("AliasName").unwrap_or_default();
        check_alias_name(name)?;
        let key = self.alias_target_key(ctx, input)?;
        let current = self
            .alias_target(ctx, name)?
            .ok_or_else(|| not_found(format!("Alias {} is not found.", alias_arn(ctx, name))))?;
        if let Some(old) = self.load_key(ctx, &current)? {
            if old.usage != key.usage {
                return Err(AwsError::validation(format!(
                    "{} key usage {} does not match the alias's current key usage {}.",
                    key.arn, key.usage, old.usage
                )));
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_aliases SET key_id = ?4, updated = ?5
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, name, key.id, now_millis()],
            )
        })?;
        Ok(Value::map())
    }

    pub(super) fn delete_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("AliasName").unwrap_or_default();
        check_alias_name(name)?;
        let deleted = self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM kms_aliases WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
            )
        })?;
        if deleted == 0 {
            return Err(not_found(format!(
                "Alias {} is not found.",
                alias_arn(ctx, name)
            )));
        }
        Ok(Value::map())
    }

    pub(super) fn list_aliases(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let filter = match input.str("KeyId") {
            Some(k) => Some(self.find_key(ctx, k)?.id),
            None => None,
        };
        let rows: Vec<(String, String, i64, i64)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT name, key_id, created, updated FROM kms_aliases
                 WHERE account = ?1 AND region = ?2 ORDER BY name",
            )?;
            let rows = st.query_map([&ctx.account, &ctx.region], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        let aliases = rows
            .into_iter()
            .filter(|(_, key, _, _)| filter.as_ref().is_none_or(|f| f == key))
            .map(|(name, key, created, updated)| {
                Value::map()
                    .with("AliasArn", alias_arn(ctx, &name))
                    .with("AliasName", name)
                    .with("TargetKeyId", key)
                    .with("CreationDate", Value::Timestamp(created))
                    .with("LastUpdatedDate", Value::Timestamp(updated))
            })
            .collect();
        list_page(aliases, "Aliases", input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_names_need_the_prefix_and_avoid_the_reserved_one() {
        assert!(check_alias_name("alias/app-key").is_ok());
        assert_eq!(
            check_alias_name("app-key").unwrap_err().code,
            "ValidationException"
        );
        assert_eq!(
            check_alias_name("alias/aws/s3").unwrap_err().code,
            "NotAuthorizedException"
        );
    }
}
