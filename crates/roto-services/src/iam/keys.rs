//! Access keys, and the caller's own user behind them.
//!
//! `CreateAccessKey` issues `AKIA` key ids that carry the account (so calls signed with
//! them route there), and the secret only once. `GetUser` without a name answers for the
//! user whose key signed the call, which is how STS's `GetCallerIdentity` learns that a key
//! is an IAM user's.

use roto_core::identity::{account_of_access_key, issue_access_key_id, issue_secret_key};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::Connection;

use super::principals::View;
use super::store::{self, Kind};
use super::{
    account, already_exists, limit_exceeded, listing, no_such_entity, now, page, required,
    validation_error, Iam,
};

/// How many access keys one user may have.
const MAX_KEYS: usize = 2;

fn key_missing(key: &str) -> AwsError {
    no_such_entity(format!("The Access Key with id {key} cannot be found."))
}

/// Keeps a new password in a login profile as a fresh salt and its digest, and when it
/// was set (the credential report's `password_last_changed`).
fn set_password(profile: &mut serde_json::Value, password: &str) {
    let salt = hex::encode(fastrand::u64(..).to_be_bytes());
    profile["Digest"] = account::password_digest(&salt, password).into();
    profile["Salt"] = salt.into();
    profile["Changed"] = now().into();
}

/// Who signed a call, as IAM sees it.
pub(super) enum Caller {
    /// An IAM user's access key.
    User(String),
    /// Temporary (STS) credentials.
    Session,
    /// The account's root (or any key Roto did not issue).
    Root,
}

impl Iam {
    /// Who signed the call: a key IAM issued but no longer has (deleted or inactive) is
    /// refused as AWS refuses it.
    pub(super) fn caller(&self, c: &Connection, ctx: &Context) -> AwsResult<Caller> {
        let Some(key) = ctx.access_key.as_deref() else {
            return Ok(Caller::Root);
        };
        if account_of_access_key(key).is_none() || key.len() != 20 {
            return Ok(Caller::Root);
        }
        if key.starts_with("ASIA") {
            return Ok(Caller::Session);
        }
        match store::access_key_owner(c, &ctx.account, key)? {
            Some((user, status)) if status == "Active" => Ok(Caller::User(user)),
            _ => Err(AwsError::new(
                "InvalidClientTokenId",
                "The security token included in the request is invalid.",
            )
            .with_status(403)),
        }
    }

    /// The user an operation acts on: `UserName`, else the user whose key signed the call.
    pub(super) fn user_name(
        &self,
        c: &Connection,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<String> {
        if let Some(name) = input.str("UserName") {
            return Ok(store::get(c, &ctx.account, Kind::User, name)?.name);
        }
        match self.caller(c, ctx)? {
            Caller::User(name) => Ok(name),
            _ => Err(validation_error(
                "Must specify userName when calling with non-User credentials",
            )),
        }
    }

    /// The user a list of credentials is for: `UserName`, else the caller's; `None` for
    /// the root, whose credentials IAM lists as none.
    pub(super) fn listed_user(
        &self,
        c: &Connection,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Option<String>> {
        if input.get("UserName").is_none() && matches!(self.caller(c, ctx)?, Caller::Root) {
            return Ok(None);
        }
        self.user_name(c, ctx, input).map(Some)
    }

    /// `GetUser`: the named user, or the caller's (the root user for root credentials).
    pub(super) fn get_user(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let account = &ctx.account;
        self.env.store.with(|c| {
            let name = match (input.str("UserName"), self.caller(c, ctx)?) {
                (Some(name), _) => name.to_string(),
                (None, Caller::User(name)) => name,
                (None, Caller::Session) => {
                    return Err(validation_error(
                        "Must specify userName when calling with non-User credentials",
                    ))
                }
                (None, Caller::Root) => {
                    let root = Value::map()
                        .with("UserId", account.as_str())
                        .with("Arn", format!("arn:aws:iam::{account}:root"))
                        .with("CreateDate", Value::Timestamp(0));
                    return Ok(Value::map().with("User", root));
                }
            };
            let user = store::get(c, account, Kind::User, &name)?;
            Ok(Value::map().with("User", self.entity_value(c, account, &user, View::Get)?))
        })
    }

    /// `CreateAccessKey`: at most two per user; the secret is returned only here.
    pub(super) fn create_access_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let account = &ctx.account;
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            if store::access_keys(c, account, &user)?.len() >= MAX_KEYS {
                return Err(limit_exceeded(format!(
                    "Cannot exceed quota for AccessKeysPerUser: {MAX_KEYS}"
                )));
            }
            let key = issue_access_key_id("AKIA", account);
            let secret = issue_secret_key();
            let created = now();
            store::add_access_key(c, account, &user, (&key, &secret), created)?;
            Ok(Value::map().with(
                "AccessKey",
                Value::map()
                    .with("UserName", user)
                    .with("AccessKeyId", key)
                    .with("Status", "Active")
                    .with("SecretAccessKey", secret)
                    .with("CreateDate", Value::Timestamp(created)),
            ))
        })
    }

    /// `ListAccessKeys`.
    pub(super) fn list_access_keys(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let Some(user) = self.listed_user(c, ctx, input)? else {
                return Ok(listing("AccessKeyMetadata", Vec::new(), None));
            };
            let keys = store::access_keys(c, &ctx.account, &user)?;
            let (keys, next) = page(keys, |(k, _, created)| format!("{created:020}{k}"), input)?;
            let values = keys
                .into_iter()
                .map(|(key, status, created)| {
                    Value::map()
                        .with("UserName", user.as_str())
                        .with("AccessKeyId", key)
                        .with("Status", status)
                        .with("CreateDate", Value::Timestamp(created))
                })
                .collect();
            Ok(listing("AccessKeyMetadata", values, next))
        })
    }

    /// `UpdateAccessKey`: `Active` or `Inactive`.
    pub(super) fn update_access_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = input.str("AccessKeyId").unwrap_or_default();
        let status = input.str("Status").unwrap_or_default();
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            if !store::set_access_key_status(c, &ctx.account, &user, key, status)? {
                return Err(key_missing(key));
            }
            Ok(Value::map())
        })
    }

    /// `DeleteAccessKey`.
    pub(super) fn delete_access_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = input.str("AccessKeyId").unwrap_or_default();
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            if !store::delete_access_key(c, &ctx.account, &user, key)? {
                return Err(key_missing(key));
            }
            Ok(Value::map())
        })
    }

    /// `CreateLoginProfile`, `GetLoginProfile`, `UpdateLoginProfile`, `DeleteLoginProfile`:
    /// the user's console password (kept as a salted digest, checked against the account's
    /// password policy).
    pub(super) fn login_profile(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let account = &ctx.account;
        self.env.store.transaction(|c| {
            let name = self.user_name(c, ctx, input)?;
            let mut user = store::get(c, account, Kind::User, &name)?;
            let existing = user.attrs.get("LoginProfile").cloned();
            let reset = input.bool("PasswordResetRequired");
            let mut profile = match (operation, existing) {
                ("CreateLoginProfile", Some(_)) => {
                    return Err(already_exists(format!(
                        "Login Profile for user {name} already exists."
                    )))
                }
                ("CreateLoginProfile", None) => {
                    serde_json::json!({"Created": now(), "Reset": reset.unwrap_or(false)})
                }
                (_, None) => {
                    return Err(no_such_entity(format!(
                        "Login Profile for User {name} cannot be found."
                    )))
                }
                ("DeleteLoginProfile", Some(_)) => {
                    user.attrs.remove("LoginProfile");
                    store::update(c, account, &name, &user)?;
                    return Ok(Value::map());
                }
                (_, Some(mut profile)) => {
                    if let (Some(reset), "UpdateLoginProfile") = (reset, operation) {
                        profile["Reset"] = reset.into();
                    }
                    profile
                }
            };
            if let (Some(password), "CreateLoginProfile" | "UpdateLoginProfile") =
                (input.str("Password"), operation)
            {
                account::check_password(c, account, password)?;
                set_password(&mut profile, password);
            }
            user.attrs.insert("LoginProfile".into(), profile.clone());
            store::update(c, account, &name, &user)?;
            if operation == "UpdateLoginProfile" {
                return Ok(Value::map());
            }
            let created = profile["Created"].as_i64().unwrap_or_default();
            Ok(Value::map().with(
                "LoginProfile",
                Value::map()
                    .with("UserName", name.as_str())
                    .with("CreateDate", Value::Timestamp(created))
                    .with(
                        "PasswordResetRequired",
                        profile["Reset"].as_bool().unwrap_or(false),
                    ),
            ))
        })
    }

    /// `ChangePassword`: an IAM user's own console password, given the current one.
    pub(super) fn change_password(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let account = &ctx.account;
        self.env.store.transaction(|c| {
            let Caller::User(name) = self.caller(c, ctx)? else {
                return Err(AwsError::new(
                    "InvalidUserTypeException",
                    "Only IAM users can change their own password with ChangePassword.",
                ));
            };
            let mut user = store::get(c, account, Kind::User, &name)?;
            let Some(mut profile) = user.attrs.get("LoginProfile").cloned() else {
                return Err(no_such_entity(format!(
                    "Login Profile for User {name} cannot be found."
                )));
            };
            let stored = (profile["Salt"].as_str(), profile["Digest"].as_str());
            if let (Some(salt), Some(digest)) = stored {
                if account::password_digest(salt, required(input, "OldPassword")) != digest {
                    return Err(AwsError::new(
                        "InvalidUserTypeException",
                        "The old password is incorrect.",
                    ));
                }
            }
            let new = required(input, "NewPassword");
            account::check_password(c, account, new)?;
            set_password(&mut profile, new);
            profile["Reset"] = false.into();
            user.attrs.insert("LoginProfile".into(), profile);
            store::update(c, account, &name, &user)?;
            Ok(Value::map())
        })
    }

    /// `GetAccessKeyLastUsed`: the key's user (use is not tracked: `N/A`, as AWS shows
    /// a key never used).
    pub(super) fn get_access_key_last_used(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let key = input.str("AccessKeyId").unwrap_or_default();
        self.env.store.with(|c| {
            let (user, _) =
                store::access_key_owner(c, account, key)?.ok_or_else(|| key_missing(key))?;
            Ok(Value::map().with("UserName", user).with(
                "AccessKeyLastUsed",
                Value::map()
                    .with("ServiceName", "N/A")
                    .with("Region", "N/A"),
            ))
        })
    }
}
