//! Account-wide settings: the account alias and the password policy.
//!
//! Both are single values per account, kept in `iam_account_settings` by name.

use roto_core::{AwsResult, Value};

use super::store;
use super::{listing, no_such_entity, required, validation_error, Iam};

/// The password policy's members and the values IAM reverts them to when a call omits
/// them (`None`: not shown until set).
const PASSWORD_POLICY: &[(&str, Option<PolicyDefault>)] = &[
    ("MinimumPasswordLength", Some(PolicyDefault::Int(6))),
    ("RequireSymbols", Some(PolicyDefault::Bool(false))),
    ("RequireNumbers", Some(PolicyDefault::Bool(false))),
    (
        "RequireUppercaseCharacters",
        Some(PolicyDefault::Bool(false)),
    ),
    (
        "RequireLowercaseCharacters",
        Some(PolicyDefault::Bool(false)),
    ),
    (
        "AllowUsersToChangePassword",
        Some(PolicyDefault::Bool(false)),
    ),
    ("MaxPasswordAge", None),
    ("PasswordReusePrevention", None),
    ("HardExpiry", None),
];

#[derive(Debug, Clone, Copy)]
enum PolicyDefault {
    Int(i64),
    Bool(bool),
}

/// An alias IAM accepts: 3 to 63 lowercase letters, digits and single hyphens, neither
/// first nor last.
fn valid_alias(alias: &str) -> bool {
    let bytes = alias.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && !alias.starts_with('-')
        && !alias.ends_with('-')
        && !alias.contains("--")
}

impl Iam {
    /// `CreateAccountAlias`: the account's one alias (a new one replaces it).
    pub(super) fn create_account_alias(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let alias = required(input, "AccountAlias");
        if !valid_alias(alias) {
            return Err(validation_error(format!(
                "1 validation error detected: Value '{alias}' at 'accountAlias' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-z0-9]([a-z0-9]|-(?!-)){{1,61}}[a-z0-9]$"
            )));
        }
        self.env
            .store
            .with(|c| store::put_setting(c, account, "alias", alias))?;
        Ok(Value::map())
    }

    /// `ListAccountAliases`.
    pub(super) fn list_account_aliases(&self, account: &str) -> AwsResult<Value> {
        let alias = self
            .env
            .store
            .with(|c| store::setting(c, account, "alias"))?;
        Ok(listing(
            "AccountAliases",
            alias.into_iter().map(Value::from).collect(),
            None,
        ))
    }

    /// `DeleteAccountAlias`.
    pub(super) fn delete_account_alias(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let alias = required(input, "AccountAlias");
        self.env.store.transaction(|c| {
            if store::setting(c, account, "alias")?.as_deref() != Some(alias) {
                return Err(no_such_entity(format!(
                    "The account alias {alias} cannot be found."
                )));
            }
            store::delete_setting(c, account, "alias")
        })?;
        Ok(Value::map())
    }

    /// `UpdateAccountPasswordPolicy`: members the call omits revert to their defaults.
    pub(super) fn update_password_policy(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let mut policy = serde_json::Map::new();
        for (member, default) in PASSWORD_POLICY {
            let value = match (input.get(member), default) {
                (Some(Value::Integer(i)), _) => serde_json::Value::from(*i),
                (Some(Value::Bool(b)), _) => serde_json::Value::from(*b),
                (_, Some(PolicyDefault::Int(i))) => serde_json::Value::from(*i),
                (_, Some(PolicyDefault::Bool(b))) => serde_json::Value::from(*b),
                (_, None) => continue,
            };
            policy.insert((*member).to_string(), value);
        }
        let text = serde_json::Value::Object(policy).to_string();
        self.env
            .store
            .with(|c| store::put_setting(c, account, "password-policy", &text))?;
        Ok(Value::map())
    }

    /// `GetAccountPasswordPolicy`.
    pub(super) fn get_password_policy(&self, account: &str) -> AwsResult<Value> {
        let text = self
            .env
            .store
            .with(|c| store::setting(c, account, "password-policy"))?
            .ok_or_else(|| no_password_policy(account))?;
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let mut policy = Value::from_json(&stored);
        let max_age = stored
            .get("MaxPasswordAge")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        policy.insert("ExpirePasswords", max_age > 0);
        Ok(Value::map().with("PasswordPolicy", policy))
    }

    /// `DeleteAccountPasswordPolicy`.
    pub(super) fn delete_password_policy(&self, account: &str) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            if store::setting(c, account, "password-policy")?.is_none() {
                return Err(no_password_policy(account));
            }
            store::delete_setting(c, account, "password-policy")
        })?;
        Ok(Value::map())
    }
}

fn no_password_policy(account: &str) -> roto_core::AwsError {
    no_such_entity(format!(
        "The Password Policy with domain name {account} cannot be found."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_follow_iam_rules() {
        assert!(valid_alias("my-company-prod"));
        for bad in ["ab", "-abc", "abc-", "a--b", "Upper", "under_score"] {
            assert!(!valid_alias(bad), "{bad}");
        }
    }
}
