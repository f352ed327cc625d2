//! What a user's SSH public keys, signing certificates and service-specific credentials
//! share: each belongs to one user, has an id and an `Active` or `Inactive` status, is
//! counted against a per-user quota, and is updated and deleted by user and id (the user
//! defaulting to the caller's). Service-specific credentials themselves live here too:
//! CodeCommit's and Keyspaces' user names and passwords and Bedrock's API keys, whose
//! secrets are returned only when created or reset.

use base64::Engine;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::Connection;
use serde_json::Value as Json;

use super::store::{self, Credential, Family};
use super::{invalid_input, limit_exceeded, listing, no_such_entity, now, page, required, Iam};

/// The services that issue service-specific credentials, and whether theirs are API keys
/// (an alias and a secret) rather than a user name and password.
const SERVICES: &[(&str, bool)] = &[
    ("codecommit.amazonaws.com", false),
    ("cassandra.amazonaws.com", false),
    ("bedrock.amazonaws.com", true),
];

const DAY_MILLIS: i64 = 86_400_000;

impl Family {
    /// The input member holding a credential's id.
    pub(super) fn id_member(self) -> &'static str {
        match self {
            Family::SshKey => "SSHPublicKeyId",
            Family::SigningCertificate => "CertificateId",
            Family::ServiceCredential => "ServiceSpecificCredentialId",
        }
    }

    /// IAM's message for an id the user does not have.
    fn missing(self, id: &str) -> AwsError {
        no_such_entity(match self {
            Family::SshKey => format!("The Public Key with id {id} cannot be found."),
            Family::SigningCertificate => format!("The Certificate with id {id} cannot be found."),
            Family::ServiceCredential => format!("No such credential {id} exists"),
        })
    }

    /// The quota's name and size: per user, per service for service-specific credentials.
    fn quota(self) -> (&'static str, usize) {
        match self {
            Family::SshKey => ("KeysPerUser", 5),
            Family::SigningCertificate => ("CertificatesPerUser", 2),
            Family::ServiceCredential => ("ServiceSpecificCredentialsPerUser", 2),
        }
    }
}

/// `LimitExceeded` when `held` credentials already fill the family's quota.
pub(super) fn check_quota(family: Family, held: usize) -> AwsResult<()> {
    let (name, limit) = family.quota();
    if held >= limit {
        return Err(limit_exceeded(format!(
            "Cannot exceed quota for {name}: {limit}"
        )));
    }
    Ok(())
}

/// A fresh credential id: `prefix` and upper-case letters and digits, `len` long in all.
pub(super) fn credential_id(prefix: &str, len: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let tail: String = (prefix.len()..len)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect();
    format!("{prefix}{tail}")
}

/// A new `Active` credential of `user`, created now.
pub(super) fn new_credential(id: String, user: &str) -> Credential {
    Credential {
        id,
        user: user.to_string(),
        status: "Active".into(),
        created: now(),
        attrs: serde_json::Map::new(),
    }
}

fn random_text(len: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..len)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect()
}

/// Whether `service` issues API keys, or `NoSuchEntity` when it issues no credentials.
fn service_kind(service: &str) -> AwsResult<bool> {
    SERVICES
        .iter()
        .find(|(name, _)| *name == service)
        .map(|(_, api_key)| *api_key)
        .ok_or_else(|| {
            no_such_entity(format!(
                "No such service {service} is supported for Service Specific Credentials"
            ))
        })
}

/// Sets a fresh secret on a service-specific credential: a password, or an API key that
/// carries its alias (`ABSK` and base64 of `alias:secret`, as Bedrock's do).
fn new_secret(cred: &mut Credential) {
    let secret = match cred.attr("ServiceCredentialAlias") {
        Some(alias) => {
            let codec = base64::engine::general_purpose::STANDARD;
            format!(
                "ABSK{}",
                codec.encode(format!("{alias}:{}", random_text(60)))
            )
        }
        None => format!("{}=", random_text(59)),
    };
    cred.attrs.insert("Secret".into(), secret.into());
}

/// A service-specific credential as the wire shows it; the secret only when `secret`.
fn service_credential_value(cred: &Credential, secret: bool) -> Value {
    let api_key = cred.attrs.contains_key("ServiceCredentialAlias");
    let mut v = Value::map()
        .with("UserName", cred.user.as_str())
        .with("Status", cred.status.as_str())
        .with("ServiceName", cred.attr("ServiceName").unwrap_or_default())
        .with("ServiceSpecificCredentialId", cred.id.as_str())
        .with("CreateDate", Value::Timestamp(cred.created))
        .with_opt("ServiceUserName", cred.attr("ServiceUserName"))
        .with_opt(
            "ServiceCredentialAlias",
            cred.attr("ServiceCredentialAlias"),
        )
        .with_opt(
            "ExpirationDate",
            cred.attrs
                .get("ExpirationDate")
                .and_then(Json::as_i64)
                .map(Value::Timestamp),
        );
    if secret {
        let member = match api_key {
            true => "ServiceCredentialSecret",
            false => "ServicePassword",
        };
        v.insert(member, cred.attr("Secret").unwrap_or_default());
    }
    v
}

impl Iam {
    /// The credential of `family` that the input's user (or the caller) holds under the
    /// input's id.
    pub(super) fn credential_of(
        &self,
        c: &Connection,
        ctx: &Context,
        family: Family,
        input: &Value,
    ) -> AwsResult<Credential> {
        let user = self.user_name(c, ctx, input)?;
        let id = required(input, family.id_member());
        store::credential(c, &ctx.account, family, &user, id)?.ok_or_else(|| family.missing(id))
    }

    /// `UpdateSSHPublicKey`, `UpdateSigningCertificate`, `UpdateServiceSpecificCredential`.
    pub(super) fn update_credential(
        &self,
        ctx: &Context,
        family: Family,
        input: &Value,
    ) -> AwsResult<Value> {
        let status = required(input, "Status");
        if !matches!(status, "Active" | "Inactive") {
            return Err(invalid_input(format!(
                "Status {status} is not valid: a credential is Active or Inactive."
            )));
        }
        self.env.store.transaction(|c| {
            let mut cred = self.credential_of(c, ctx, family, input)?;
            cred.status = status.to_string();
            store::put_credential(c, &ctx.account, family, &cred)?;
            Ok(Value::map())
        })
    }

    /// `DeleteSSHPublicKey`, `DeleteSigningCertificate`, `DeleteServiceSpecificCredential`.
    pub(super) fn delete_credential(
        &self,
        ctx: &Context,
        family: Family,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let cred = self.credential_of(c, ctx, family, input)?;
            store::delete_credential(c, &ctx.account, family, &cred.user, &cred.id)?;
            Ok(Value::map())
        })
    }

    /// `CreateServiceSpecificCredential`: a user name (`<user>-at-<account>`, then
    /// `<user>+1-at-<account>`) and password, or for Bedrock an alias and API key.
    pub(super) fn create_service_credential(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let account = &ctx.account;
        let service = required(input, "ServiceName");
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            let api_key = service_kind(service)?;
            let all = store::credentials(c, account, Family::ServiceCredential, None)?;
            let of_service: Vec<&Credential> = all
                .iter()
                .filter(|k| k.attr("ServiceName") == Some(service))
                .collect();
            let held = of_service
                .iter()
                .filter(|k| k.user.eq_ignore_ascii_case(&user))
                .count();
            check_quota(Family::ServiceCredential, held)?;
            let alias = (0..)
                .map(|slot| match slot {
                    0 => format!("{user}-at-{account}"),
                    n => format!("{user}+{n}-at-{account}"),
                })
                .find(|alias| {
                    !of_service.iter().any(|k| {
                        k.attr("ServiceUserName") == Some(alias.as_str())
                            || k.attr("ServiceCredentialAlias") == Some(alias.as_str())
                    })
                })
                .unwrap_or_default();
            let mut cred = new_credential(credential_id("ACCA", 21), &user);
            cred.attrs.insert("ServiceName".into(), service.into());
            let alias_member = match api_key {
                true => "ServiceCredentialAlias",
                false => "ServiceUserName",
            };
            cred.attrs.insert(alias_member.into(), alias.into());
            if let Some(days) = input.int("CredentialAgeDays") {
                let expires = cred.created + days * DAY_MILLIS;
                cred.attrs.insert("ExpirationDate".into(), expires.into());
            }
            new_secret(&mut cred);
            store::put_credential(c, account, Family::ServiceCredential, &cred)?;
            Ok(Value::map().with(
                "ServiceSpecificCredential",
                service_credential_value(&cred, true),
            ))
        })
    }

    /// `ListServiceSpecificCredentials`: the user's (or, with `AllUsers`, everyone's),
    /// optionally of one service, without their secrets.
    pub(super) fn list_service_credentials(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let service = input.str("ServiceName");
        self.env.store.with(|c| {
            let all_users = input.bool("AllUsers").unwrap_or(false);
            let user = match all_users {
                true => None,
                false => match self.listed_user(c, ctx, input)? {
                    Some(user) => Some(user),
                    None => return Ok(listing("ServiceSpecificCredentials", Vec::new(), None)),
                },
            };
            if let Some(service) = service {
                service_kind(service)?;
            }
            let creds: Vec<Credential> =
                store::credentials(c, &ctx.account, Family::ServiceCredential, user.as_deref())?
                    .into_iter()
                    .filter(|k| service.is_none() || k.attr("ServiceName") == service)
                    .collect();
            let (creds, next) = page(creds, |k| format!("{:020}{}", k.created, k.id), input)?;
            let values = creds
                .iter()
                .map(|k| service_credential_value(k, false))
                .collect();
            Ok(listing("ServiceSpecificCredentials", values, next))
        })
    }

    /// `ResetServiceSpecificCredential`: a new secret, returned once.
    pub(super) fn reset_service_credential(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut cred = self.credential_of(c, ctx, Family::ServiceCredential, input)?;
            new_secret(&mut cred);
            store::put_credential(c, &ctx.account, Family::ServiceCredential, &cred)?;
            Ok(Value::map().with(
                "ServiceSpecificCredential",
                service_credential_value(&cred, true),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_ids_have_their_prefix_and_length() {
        let id = credential_id("ACCA", 21);
        assert!(id.starts_with("ACCA") && id.len() == 21);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()));
    }

    #[test]
    fn api_keys_carry_their_alias() {
        let mut cred = new_credential("ACCAX".into(), "u");
        cred.attrs
            .insert("ServiceCredentialAlias".into(), "u-at-1".into());
        new_secret(&mut cred);
        let secret = cred.attr("Secret").unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(secret.strip_prefix("ABSK").unwrap())
            .unwrap();
        assert!(String::from_utf8(decoded).unwrap().starts_with("u-at-1:"));
    }

    #[test]
    fn only_known_services_issue_credentials() {
        assert!(!service_kind("codecommit.amazonaws.com").unwrap());
        assert!(service_kind("bedrock.amazonaws.com").unwrap());
        assert_eq!(
            service_kind("lambda.amazonaws.com").unwrap_err().message,
            "No such service lambda.amazonaws.com is supported for Service Specific Credentials"
        );
    }
}
