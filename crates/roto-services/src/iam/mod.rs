//! IAM: users, groups, roles, managed and inline policies, access keys, instance profiles,
//! and a user's other credentials (SSH keys, signing certificates, service-specific ones).
//!
//! IAM is global: its state belongs to the account alone, whatever region a call is
//! signed for, and its ARNs carry no region. The policy simulator evaluates policies
//! (`evaluate.rs`, `simulate.rs`), and `--enforce-iam` asks the same evaluator for every
//! request (`enforce.rs`, through the `Service::identify` and `Service::authorize` hooks). Access keys made by `CreateAccessKey` carry their account in the key id (see
//! `roto_core::identity`), so calls signed with them route to the creating account; STS
//! learns which user a key belongs to by calling `GetUser` without a user name through the
//! dispatcher, the way AWS resolves the caller from the signing key.
//!
//! Users, groups, roles, instance profiles and managed policies share one table of
//! entities (`store.rs`); the files beside this one hold each family's operations.

mod access;
mod account;
mod certificates;
mod credentials;
mod details;
mod document;
mod enforce;
mod evaluate;
pub mod fuzz;
mod keys;
mod mfa;
mod policies;
mod principals;
mod profiles;
mod providers;
mod report;
mod signing;
mod simulate;
mod spanned;
mod ssh_keys;
mod store;
mod unmodeled;

use std::io;
use std::sync::Arc;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use roto_core::access::{Access, Principal, Verdict};
use roto_core::featureless::{self, Featureless};
use roto_core::identity::Secret;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

use store::{Entity, Family, Kind};

static SPEC: ServiceSpec = ServiceSpec {
    name: "iam",
    model: "iam",
    query_model: None,
    signing_names: &["iam"],
    target_prefix: None,
    query_version: Some("2010-05-08"),
    crc32_responses: false,
    validate_input: true,
};

/// IAM.
pub struct Iam {
    env: Arc<Env>,
    cache: enforce::Cache,
}

impl Iam {
    /// Creates IAM's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Iam> {
        env.store.migrate(store::SCHEMA)?;
        Ok(Iam {
            env,
            cache: enforce::Cache::default(),
        })
    }

    fn run(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let a = &ctx.account;
        match operation {
            "CreateUser" => self.create_principal(a, Kind::User, input),
            "GetUser" => self.get_user(ctx, input),
            "ListUsers" => self.list_principals(a, Kind::User, input),
            "UpdateUser" => self.update_principal(a, Kind::User, input),
            "DeleteUser" => self.delete_principal(a, Kind::User, input),
            "CreateGroup" => self.create_principal(a, Kind::Group, input),
            "GetGroup" => self.get_group(a, input),
            "ListGroups" => self.list_principals(a, Kind::Group, input),
            "UpdateGroup" => self.update_principal(a, Kind::Group, input),
            "DeleteGroup" => self.delete_principal(a, Kind::Group, input),
            "AddUserToGroup" => self.add_user_to_group(a, input),
            "RemoveUserFromGroup" => self.remove_user_from_group(a, input),
            "ListGroupsForUser" => self.list_groups_for_user(a, input),
            "CreateRole" => self.create_principal(a, Kind::Role, input),
            "GetRole" => self.get_principal(a, Kind::Role, input),
            "ListRoles" => self.list_principals(a, Kind::Role, input),
            "UpdateRole" => self.update_role(a, input, false),
            "UpdateRoleDescription" => self.update_role(a, input, true),
            "UpdateAssumeRolePolicy" => self.update_assume_role_policy(a, input),
            "DeleteRole" => self.delete_principal(a, Kind::Role, input),
            "CreateServiceLinkedRole" => self.create_service_linked_role(a, input),
            "DeleteServiceLinkedRole" => self.delete_service_linked_role(a, input),
            "GetServiceLinkedRoleDeletionStatus" => Ok(deletion_status(input)),
            "TagUser" => self.tag(a, Kind::User, input),
            "UntagUser" => self.untag(a, Kind::User, input),
            "ListUserTags" => self.list_tags(a, Kind::User, input),
            "TagRole" => self.tag(a, Kind::Role, input),
            "UntagRole" => self.untag(a, Kind::Role, input),
            "ListRoleTags" => self.list_tags(a, Kind::Role, input),
            "TagPolicy" => self.tag(a, Kind::Policy, input),
            "UntagPolicy" => self.untag(a, Kind::Policy, input),
            "ListPolicyTags" => self.list_tags(a, Kind::Policy, input),
            "TagInstanceProfile" => self.tag(a, Kind::InstanceProfile, input),
            "UntagInstanceProfile" => self.untag(a, Kind::InstanceProfile, input),
            "ListInstanceProfileTags" => self.list_tags(a, Kind::InstanceProfile, input),
            "CreatePolicy" => self.create_policy(a, input),
            "GetPolicy" => self.get_policy(a, input),
            "ListPolicies" => self.list_policies(a, input),
            "DeletePolicy" => self.delete_policy(a, input),
            "CreatePolicyVersion" => self.create_policy_version(a, input),
            "GetPolicyVersion" => self.get_policy_version(a, input),
            "ListPolicyVersions" => self.list_policy_versions(a, input),
            "DeletePolicyVersion" => self.delete_policy_version(a, input),
            "SetDefaultPolicyVersion" => self.set_default_policy_version(a, input),
            "AttachUserPolicy" => self.attach(a, Kind::User, input),
            "AttachGroupPolicy" => self.attach(a, Kind::Group, input),
            "AttachRolePolicy" => self.attach(a, Kind::Role, input),
            "DetachUserPolicy" => self.detach(a, Kind::User, input),
            "DetachGroupPolicy" => self.detach(a, Kind::Group, input),
            "DetachRolePolicy" => self.detach(a, Kind::Role, input),
            "ListAttachedUserPolicies" => self.list_attached(a, Kind::User, input),
            "ListAttachedGroupPolicies" => self.list_attached(a, Kind::Group, input),
            "ListAttachedRolePolicies" => self.list_attached(a, Kind::Role, input),
            "ListEntitiesForPolicy" => self.list_entities_for_policy(a, input),
            "PutUserPolicy" => self.put_inline(a, Kind::User, input),
            "PutGroupPolicy" => self.put_inline(a, Kind::Group, input),
            "PutRolePolicy" => self.put_inline(a, Kind::Role, input),
            "GetUserPolicy" => self.get_inline(a, Kind::User, input),
            "GetGroupPolicy" => self.get_inline(a, Kind::Group, input),
            "GetRolePolicy" => self.get_inline(a, Kind::Role, input),
            "DeleteUserPolicy" => self.delete_inline(a, Kind::User, input),
            "DeleteGroupPolicy" => self.delete_inline(a, Kind::Group, input),
            "DeleteRolePolicy" => self.delete_inline(a, Kind::Role, input),
            "ListUserPolicies" => self.list_inline(a, Kind::User, input),
            "ListGroupPolicies" => self.list_inline(a, Kind::Group, input),
            "ListRolePolicies" => self.list_inline(a, Kind::Role, input),
            "CreateAccessKey" => self.create_access_key(ctx, input),
            "ListAccessKeys" => self.list_access_keys(ctx, input),
            "UpdateAccessKey" => self.update_access_key(ctx, input),
            "DeleteAccessKey" => self.delete_access_key(ctx, input),
            "GetAccessKeyLastUsed" => self.get_access_key_last_used(a, input),
            "UploadSSHPublicKey" => self.upload_ssh_public_key(ctx, input),
            "GetSSHPublicKey" => self.get_ssh_public_key(ctx, input),
            "ListSSHPublicKeys" => self.list_ssh_public_keys(ctx, input),
            "UpdateSSHPublicKey" => self.update_credential(ctx, Family::SshKey, input),
            "DeleteSSHPublicKey" => self.delete_credential(ctx, Family::SshKey, input),
            "UploadSigningCertificate" => self.upload_signing_certificate(ctx, input),
            "ListSigningCertificates" => self.list_signing_certificates(ctx, input),
            "UpdateSigningCertificate" => {
                self.update_credential(ctx, Family::SigningCertificate, input)
            }
            "DeleteSigningCertificate" => {
                self.delete_credential(ctx, Family::SigningCertificate, input)
            }
            "CreateServiceSpecificCredential" => self.create_service_credential(ctx, input),
            "ListServiceSpecificCredentials" => self.list_service_credentials(ctx, input),
            "ResetServiceSpecificCredential" => self.reset_service_credential(ctx, input),
            "UpdateServiceSpecificCredential" => {
                self.update_credential(ctx, Family::ServiceCredential, input)
            }
            "DeleteServiceSpecificCredential" => {
                self.delete_credential(ctx, Family::ServiceCredential, input)
            }
            "CreateInstanceProfile" => self.create_principal(a, Kind::InstanceProfile, input),
            "GetInstanceProfile" => self.get_principal(a, Kind::InstanceProfile, input),
            "ListInstanceProfiles" => self.list_principals(a, Kind::InstanceProfile, input),
            "DeleteInstanceProfile" => self.delete_principal(a, Kind::InstanceProfile, input),
            "AddRoleToInstanceProfile" => self.add_role_to_instance_profile(a, input),
            "RemoveRoleFromInstanceProfile" => self.remove_role_from_instance_profile(a, input),
            "ListInstanceProfilesForRole" => self.list_instance_profiles_for_role(a, input),
            "GetAccountSummary" => self.get_account_summary(a),
            "GenerateCredentialReport" => self.generate_credential_report(a),
            "GetCredentialReport" => self.get_credential_report(a),
            "CreateVirtualMFADevice" => self.create_virtual_mfa_device(a, input),
            "EnableMFADevice" => self.enable_mfa_device(a, input),
            "DeactivateMFADevice" => self.deactivate_mfa_device(a, input),
            "DeleteVirtualMFADevice" => self.delete_virtual_mfa_device(a, input),
            "ListMFADevices" => self.list_mfa_devices(a, input),
            "GetMFADevice" => self.get_mfa_device(a, input),
            "ResyncMFADevice" => self.resync_mfa_device(a, input),
            "ListVirtualMFADevices" => self.list_virtual_mfa_devices(a, input),
            "TagMFADevice" => self.tag(a, Kind::MfaDevice, input),
            "UntagMFADevice" => self.untag(a, Kind::MfaDevice, input),
            "ListMFADeviceTags" => self.list_tags(a, Kind::MfaDevice, input),
            "SimulateCustomPolicy" => self.simulate_custom_policy(ctx, input),
            "SimulatePrincipalPolicy" => self.simulate_principal_policy(ctx, input),
            "GetContextKeysForCustomPolicy" => self.get_context_keys_for_custom_policy(input),
            "GetContextKeysForPrincipalPolicy" => {
                self.get_context_keys_for_principal_policy(a, input)
            }
            "GenerateServiceLastAccessedDetails" => self.generate_service_last_accessed(a, input),
            "GetServiceLastAccessedDetails" => self.get_service_last_accessed(a, input),
            "GetServiceLastAccessedDetailsWithEntities" => {
                self.get_service_last_accessed_with_entities(a, input)
            }
            "ListPoliciesGrantingServiceAccess" => {
                self.list_policies_granting_service_access(a, input)
            }
            "GetAccountAuthorizationDetails" => self.get_account_authorization_details(a, input),
            "UploadServerCertificate" => self.upload_server_certificate(a, input),
            "GetServerCertificate" => self.get_server_certificate(a, input),
            "ListServerCertificates" => self.list_server_certificates(a, input),
            "UpdateServerCertificate" => self.update_server_certificate(a, input),
            "DeleteServerCertificate" => self.delete_server_certificate(a, input),
            "TagServerCertificate" => self.tag(a, Kind::ServerCertificate, input),
            "UntagServerCertificate" => self.untag(a, Kind::ServerCertificate, input),
            "ListServerCertificateTags" => self.list_tags(a, Kind::ServerCertificate, input),
            "CreateAccountAlias" => self.create_account_alias(a, input),
            "ListAccountAliases" => self.list_account_aliases(a),
            "DeleteAccountAlias" => self.delete_account_alias(a, input),
            "UpdateAccountPasswordPolicy" => self.update_password_policy(a, input),
            "GetAccountPasswordPolicy" => self.get_password_policy(a),
            "DeleteAccountPasswordPolicy" => self.delete_password_policy(a),
            "CreateLoginProfile" | "GetLoginProfile" | "UpdateLoginProfile"
            | "DeleteLoginProfile" => self.login_profile(ctx, operation, input),
            "ChangePassword" => self.change_password(ctx, input),
            "SetSecurityTokenServicePreferences" => self.set_sts_preferences(a, input),
            "GetAccountProperties" => self.get_account_properties(a),
            "PutAccountProperties" => self.put_account_properties(a, input),
            "EnableOutboundWebIdentityFederation" => self.enable_outbound_federation(a),
            "GetOutboundWebIdentityFederationInfo" => self.get_outbound_federation(a),
            "DisableOutboundWebIdentityFederation" => self.disable_outbound_federation(a),
            "PutUserPermissionsBoundary" => self.set_boundary(a, Kind::User, input, true),
            "PutRolePermissionsBoundary" => self.set_boundary(a, Kind::Role, input, true),
            "DeleteUserPermissionsBoundary" => self.set_boundary(a, Kind::User, input, false),
            "DeleteRolePermissionsBoundary" => self.set_boundary(a, Kind::Role, input, false),
            "CreateOpenIDConnectProvider" => self.create_oidc_provider(a, input),
            "GetOpenIDConnectProvider" => self.get_oidc_provider(a, input),
            "ListOpenIDConnectProviders" => self.list_providers(a, Kind::OidcProvider),
            "DeleteOpenIDConnectProvider" => self.delete_provider(a, Kind::OidcProvider, input),
            "UpdateOpenIDConnectProvider" => self.update_oidc_provider(a, input),
            "AddClientIDToOpenIDConnectProvider"
            | "RemoveClientIDFromOpenIDConnectProvider"
            | "UpdateOpenIDConnectProviderThumbprint" => {
                self.edit_oidc_provider(a, operation, input)
            }
            "TagOpenIDConnectProvider" => self.tag(a, Kind::OidcProvider, input),
            "UntagOpenIDConnectProvider" => self.untag(a, Kind::OidcProvider, input),
            "ListOpenIDConnectProviderTags" => self.list_tags(a, Kind::OidcProvider, input),
            "CreateSAMLProvider" => self.create_saml_provider(a, input),
            "GetSAMLProvider" => self.get_saml_provider(a, input),
            "UpdateSAMLProvider" => self.update_saml_provider(a, input),
            "ListSAMLProviders" => self.list_providers(a, Kind::SamlProvider),
            "DeleteSAMLProvider" => self.delete_provider(a, Kind::SamlProvider, input),
            "TagSAMLProvider" => self.tag(a, Kind::SamlProvider, input),
            "UntagSAMLProvider" => self.untag(a, Kind::SamlProvider, input),
            "ListSAMLProviderTags" => self.list_tags(a, Kind::SamlProvider, input),
            other => featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input),
        }
    }
}

impl Service for Iam {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let result = self.run(ctx, operation, &request.input);
            if !["Get", "List", "Simulate", "Generate"]
                .iter()
                .any(|read| operation.starts_with(read))
            {
                self.cache.clear();
            }
            result.map(Response::new)
        })
    }

    fn access(&self, ctx: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        let mut access = roto_core::access::generic(&SPEC, op, input);
        if let Some(resource) = enforce::resource(&ctx.account, input) {
            access.resource = resource;
            self.tag_access(&mut access)?;
        }
        Ok(access)
    }

    fn identify(&self, _: &Context, access_key: &str) -> AwsResult<Option<Principal>> {
        self.identify_key(access_key)
    }

    fn secret_key(&self, access_key: &str) -> AwsResult<Option<Secret>> {
        let secret = self
            .env
            .store
            .with(|c| store::active_secret(c, access_key))?;
        Ok(secret.map(|key| Secret {
            key,
            session_token: None,
        }))
    }

    fn authorize(
        &self,
        principal: &Principal,
        access: &Access,
        context: &[(String, Vec<String>)],
    ) -> Option<AwsResult<Verdict>> {
        Some(self.decide(principal, access, context))
    }
}

/// `GetServiceLinkedRoleDeletionStatus`: deletions complete at once here.
fn deletion_status(input: &Value) -> Value {
    let _ = input;
    Value::map().with("Status", "SUCCEEDED")
}

/// The characters IAM leaves unescaped when it URL-encodes a policy document.
const DOCUMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A policy document as IAM puts it on the wire: URL-encoded (SDKs decode it).
fn wire_document(document: &str) -> String {
    utf8_percent_encode(document, DOCUMENT).to_string()
}

fn no_such_entity(message: impl Into<String>) -> AwsError {
    AwsError::new("NoSuchEntityException", message)
}

fn already_exists(message: impl Into<String>) -> AwsError {
    AwsError::new("EntityAlreadyExistsException", message)
}

fn delete_conflict(message: impl Into<String>) -> AwsError {
    AwsError::new("DeleteConflictException", message)
}

fn limit_exceeded(message: impl Into<String>) -> AwsError {
    AwsError::new("LimitExceededException", message)
}

fn invalid_input(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidInputException", message)
}

fn validation_error(message: impl Into<String>) -> AwsError {
    AwsError::new("ValidationError", message).with_status(400)
}

/// A required string member (the model's validation has already rejected its absence).
fn required<'v>(input: &'v Value, member: &str) -> &'v str {
    input.str(member).unwrap_or_default()
}

/// The path member (default `/`); the model's pattern checked it.
fn path_of(input: &Value, member: &str) -> String {
    input.str(member).unwrap_or("/").to_string()
}

/// The `PathPrefix` filter of the list operations (default `/`, every entity).
fn path_prefix(input: &Value) -> String {
    path_of(input, "PathPrefix")
}

/// A page of a list sorted by `key`, resumed after `Marker`, at most `MaxItems` (100)
/// long; the marker of the next page when there is one.
fn page<T>(
    mut items: Vec<T>,
    key: impl Fn(&T) -> String,
    input: &Value,
) -> AwsResult<(Vec<T>, Option<String>)> {
    use base64::Engine;
    let codec = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    items.sort_by_key(|item| key(item));
    let start = match input.str("Marker") {
        Some(marker) => {
            let from = codec
                .decode(marker)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| validation_error("Invalid Marker."))?;
            items.iter().take_while(|item| key(item) < from).count()
        }
        None => 0,
    };
    let max = usize::try_from(input.int("MaxItems").unwrap_or(100)).unwrap_or(100);
    let mut rest = items.split_off(start.min(items.len()));
    let next = (rest.len() > max).then(|| codec.encode(key(&rest[max])));
    rest.truncate(max);
    Ok((rest, next))
}

/// A list operation's output: the items under `member`, `IsTruncated` and `Marker`.
fn listing(member: &str, items: Vec<Value>, next: Option<String>) -> Value {
    Value::map()
        .with(member, items)
        .with("IsTruncated", next.is_some())
        .with_opt("Marker", next)
}

/// A fresh IAM unique id: the kind's four-letter prefix and 17 base32 characters.
fn unique_id(prefix: &str) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let tail: String = (0..17)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect();
    format!("{prefix}{tail}")
}

/// The time IAM stamps on what it creates (whole seconds).
fn now() -> i64 {
    roto_core::timestamp::now_millis() / 1000 * 1000
}

/// The tags of an entity as the wire lists them.
fn tag_values(entity: &Entity) -> Vec<Value> {
    entity
        .tags
        .iter()
        .map(|(k, v)| {
            Value::map()
                .with("Key", k.as_str())
                .with("Value", v.as_str())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_url_encoded_like_iam() {
        assert_eq!(
            wire_document("{\"Action\": \"s3:*\"}"),
            "%7B%22Action%22%3A%20%22s3%3A%2A%22%7D"
        );
    }

    #[test]
    fn pages_resume_after_their_marker() {
        let input = Value::map().with("MaxItems", 2i64);
        let names = vec!["c", "a", "d", "b", "e"];
        let (first, next) = page(names.clone(), |s| s.to_string(), &input).unwrap();
        assert_eq!(first, vec!["a", "b"]);
        let marker = next.unwrap();
        let input = input.with("Marker", marker);
        let (second, next) = page(names.clone(), |s| s.to_string(), &input).unwrap();
        assert_eq!(second, vec!["c", "d"]);
        let input = Value::map()
            .with("MaxItems", 2i64)
            .with("Marker", next.unwrap());
        let (third, next) = page(names, |s| s.to_string(), &input).unwrap();
        assert_eq!((third, next), (vec!["e"], None));
    }
}
