//! STS's side of `--enforce-iam`: the principal behind a session key STS issued (a role
//! session with its session policy, a user's or root's `GetSessionToken` session, a
//! federated user), and what STS's calls ask: `GetCallerIdentity` needs no permission,
//! `AssumeRole` needs the role's trust policy, which IAM (owning roles) reads. The federated
//! `AssumeRoleWith*` calls are unsigned and authorised by their token, which Roto reads
//! and does not verify, so they are not checked.

use roto_core::access::{self, Access, Principal, PrincipalKind, ResourcePolicy};
use roto_core::Value;

use super::{parse_role_arn, Identity};

/// The principal a session's identity is.
pub(super) fn principal(identity: Identity) -> Principal {
    let resource = identity.arn.splitn(6, ':').nth(5).unwrap_or_default();
    let (kind, name) = match resource.split_once('/') {
        Some(("assumed-role", rest)) => (
            PrincipalKind::AssumedRole,
            rest.split('/').next().map(str::to_string),
        ),
        Some(("user", rest)) => (
            PrincipalKind::User,
            rest.rsplit('/').next().map(str::to_string),
        ),
        Some(("federated-user", _)) => (PrincipalKind::Federated, None),
        _ => (PrincipalKind::Root, None),
    };
    Principal {
        kind,
        account: identity.account,
        arn: identity.arn,
        user_id: identity.user_id,
        name,
        session_policy: identity.policy,
    }
}

/// What an STS call asks; for `AssumeRole`, the role's trust policy, which IAM, the role's
/// owner, reads when it decides.
pub(super) fn access_of(operation: &str, input: &Value) -> Access {
    let mut access = access::generic(&super::SPEC, operation, input);
    access.open = matches!(
        operation,
        "GetCallerIdentity"
            | "GetAccessKeyInfo"
            | "DecodeAuthorizationMessage"
            | "AssumeRoleWithWebIdentity"
            | "AssumeRoleWithSAML"
    );
    let role_arn = input.str("RoleArn").unwrap_or_default();
    if let ("AssumeRole", Some((account, _))) = (operation, parse_role_arn(role_arn)) {
        access.policy = Some(ResourcePolicy {
            owner: account,
            required: true,
            ..ResourcePolicy::default()
        });
    }
    access
}
