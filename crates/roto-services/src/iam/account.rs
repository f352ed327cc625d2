//! Account-wide settings: the account alias, the password policy (which the passwords of
//! login profiles are checked against), the version of the tokens STS's global endpoint
//! issues, the account properties, and outbound web identity federation (the issuer of
//! the JSON web tokens STS would vend for the account, off until enabled).
//!
//! Each is a single value per account, kept in `iam_account_settings` by name.

use roto_core::{AwsError, AwsResult, Value};
use rusqlite::Connection;
use sha2::{Digest, Sha256};

use super::store;
use super::{listing, no_such_entity, required, validation_error, Iam};

/// The SHA-256 of a salt and a password, as login profiles keep passwords.
pub(super) fn password_digest(salt: &str, password: &str) -> String {
    hex::encode(Sha256::digest(format!("{salt}:{password}")))
}

/// A kind of character a password policy may require.
type CharClass = fn(&char) -> bool;

/// `PasswordPolicyViolation` unless `password` satisfies the account's password policy
/// (IAM's default, six characters of any kind, when there is none).
pub(super) fn check_password(c: &Connection, account: &str, password: &str) -> AwsResult<()> {
    let policy: serde_json::Value = store::setting(c, account, "password-policy")?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let flag = |member: &str| policy.get(member).and_then(serde_json::Value::as_bool) == Some(true);
    let min = policy
        .get("MinimumPasswordLength")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(6);
    let classes: [(&str, CharClass); 4] = [
        ("RequireSymbols", |c| c.is_ascii_punctuation()),
        ("RequireNumbers", |c| c.is_ascii_digit()),
        ("RequireUppercaseCharacters", |c| c.is_ascii_uppercase()),
        ("RequireLowercaseCharacters", |c| c.is_ascii_lowercase()),
    ];
    let long_enough = i64::try_from(password.chars().count()).unwrap_or(i64::MAX) >= min;
    if long_enough
        && classes
            .iter()
            .all(|(member, class)| !flag(member) || password.chars().any(|c| class(&c)))
    {
        return Ok(());
    }
    Err(AwsError::new(
        "PasswordPolicyViolationException",
        "Password does not conform to the account password policy.",
    ))
}

/// The `GlobalEndpointTokenVersion` `GetAccountSummary` reports: 1, or 2 for `v2Token`.
pub(super) fn token_version(c: &Connection, account: &str) -> AwsResult<i64> {
    Ok(
        match store::setting(c, account, "sts-token-version")?.as_deref() {
            Some("v2Token") => 2,
            _ => 1,
        },
    )
}

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

impl Iam {
    /// `SetSecurityTokenServicePreferences`.
    pub(super) fn set_sts_preferences(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let version = required(input, "GlobalEndpointTokenVersion");
        self.env
            .store
            .with(|c| store::put_setting(c, account, "sts-token-version", version))?;
        Ok(Value::map())
    }

    /// `PutAccountProperties`: sets the given properties, keeping the others.
    pub(super) fn put_account_properties(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let given = input
            .get("Properties")
            .and_then(Value::as_map)
            .cloned()
            .unwrap_or_default();
        self.env.store.transaction(|c| {
            let mut properties = account_properties(c, account)?;
            for (key, value) in given {
                properties.insert(key, value.as_str().unwrap_or_default().into());
            }
            let text = serde_json::Value::Object(properties).to_string();
            store::put_setting(c, account, "account-properties", &text)
        })?;
        Ok(Value::map())
    }

    /// `GetAccountProperties`.
    pub(super) fn get_account_properties(&self, account: &str) -> AwsResult<Value> {
        let properties = self.env.store.with(|c| account_properties(c, account))?;
        Ok(Value::map().with(
            "Properties",
            Value::from_json(&serde_json::Value::Object(properties)),
        ))
    }
}

/// The setting holding the account's outbound federation issuer while it is enabled.
const OUTBOUND_ISSUER: &str = "outbound-federation-issuer";

fn federation_disabled(message: &str) -> AwsError {
    AwsError::new("FeatureDisabledException", message).with_status(404)
}

impl Iam {
    /// `EnableOutboundWebIdentityFederation`: a new issuer for the account.
    pub(super) fn enable_outbound_federation(&self, account: &str) -> AwsResult<Value> {
        let issuer = self.env.store.transaction(|c| {
            if store::setting(c, account, OUTBOUND_ISSUER)?.is_some() {
                return Err(AwsError::new(
                    "FeatureEnabledException",
                    "Outbound identity federation is already enabled for your AWS account.",
                )
                .with_status(409));
            }
            let issuer = format!("https://{}.tokens.sts.global.api.aws", crate::ids::uuid());
            store::put_setting(c, account, OUTBOUND_ISSUER, &issuer)?;
            Ok(issuer)
        })?;
        Ok(Value::map().with("IssuerIdentifier", issuer))
    }

    /// `GetOutboundWebIdentityFederationInfo`.
    pub(super) fn get_outbound_federation(&self, account: &str) -> AwsResult<Value> {
        match self
            .env
            .store
            .with(|c| store::setting(c, account, OUTBOUND_ISSUER))?
        {
            Some(issuer) => Ok(Value::map()
                .with("IssuerIdentifier", issuer)
                .with("JwtVendingEnabled", true)),
            None => Err(federation_disabled(
                "Outbound identity federation is disabled for your AWS account.",
            )),
        }
    }

    /// `DisableOutboundWebIdentityFederation`.
    pub(super) fn disable_outbound_federation(&self, account: &str) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            if store::setting(c, account, OUTBOUND_ISSUER)?.is_none() {
                return Err(federation_disabled(
                    "Outbound identity federation is already disabled for your AWS account.",
                ));
            }
            store::delete_setting(c, account, OUTBOUND_ISSUER)
        })?;
        Ok(Value::map())
    }
}

fn account_properties(
    c: &Connection,
    account: &str,
) -> AwsResult<serde_json::Map<String, serde_json::Value>> {
    Ok(store::setting(c, account, "account-properties")?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default())
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
    fn password_digests_depend_on_salt_and_password() {
        assert_eq!(password_digest("s", "p"), password_digest("s", "p"));
        assert_ne!(password_digest("s", "p"), password_digest("t", "p"));
        assert_eq!(password_digest("s", "p").len(), 64);
    }

    #[test]
    fn aliases_follow_iam_rules() {
        assert!(valid_alias("my-company-prod"));
        for bad in ["ab", "-abc", "abc-", "a--b", "Upper", "under_score"] {
            assert!(!valid_alias(bad), "{bad}");
        }
    }
}
