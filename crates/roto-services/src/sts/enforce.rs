//! STS's side of `--enforce-iam`: the principal behind a session key STS issued (a role
//! session with its session policy and tags, a user's or root's `GetSessionToken`
//! session, a federated user with the policies of the user who federated it), and what
//! STS's calls ask. `GetCallerIdentity` needs no permission; `AssumeRole` needs the role's
//! trust policy, which IAM (owning roles) reads, and `sts:TagSession` too when it passes
//! tags. The unsigned `AssumeRoleWith*` calls are decided for their identity provider (an
//! OIDC provider's ARN, a well-known provider's name, a SAML provider's ARN) as the trust
//! policy's `Federated` principal, with the token's claims as condition keys; the token
//! itself is read, never verified.

use roto_core::access::{self, Access, Principal, PrincipalKind, ResourcePolicy};
use roto_core::Value;

use super::{federation, parse_role_arn, Identity};

/// The principal a session's identity is.
pub(super) fn principal(identity: Identity) -> Principal {
    let resource = identity.arn.splitn(6, ':').nth(5).unwrap_or_default();
    let user_name = |arn: &str| {
        let (_, rest) = arn.split_once(":user/")?;
        rest.rsplit('/').next().map(str::to_string)
    };
    let (kind, name) = match resource.split_once('/') {
        Some(("assumed-role", rest)) => (
            PrincipalKind::AssumedRole,
            rest.split('/').next().map(str::to_string),
        ),
        Some(("user", _)) => (PrincipalKind::User, user_name(&identity.arn)),
        Some(("federated-user", _)) => (
            PrincipalKind::Federated,
            identity.parent.as_deref().and_then(user_name),
        ),
        _ => (PrincipalKind::Root, None),
    };
    Principal {
        kind,
        account: identity.account,
        arn: identity.arn,
        user_id: identity.user_id,
        name,
        session_policy: identity.policy,
        session_policy_arns: identity.policy_arns,
        session_tags: identity.tags,
    }
}

/// The identity providers web identity federation knows by name; any other issuer is an
/// IAM OIDC provider of the role's account.
const NAMED_PROVIDERS: &[&str] = &[
    "accounts.google.com",
    "cognito-identity.amazonaws.com",
    "graph.facebook.com",
    "www.amazon.com",
];

/// What an STS call asks; for the role-assuming calls, the role's trust policy, which IAM,
/// the role's owner, reads when it decides.
pub(super) fn access_of(operation: &str, input: &Value) -> Access {
    let mut access = access::generic(&super::SPEC, operation, input);
    access.open = matches!(
        operation,
        "GetCallerIdentity" | "GetAccessKeyInfo" | "DecodeAuthorizationMessage"
    );
    let assumes = matches!(
        operation,
        "AssumeRole" | "AssumeRoleWithWebIdentity" | "AssumeRoleWithSAML"
    );
    let role_arn = input.str("RoleArn").unwrap_or_default();
    let Some((account, _)) = parse_role_arn(role_arn).filter(|_| assumes) else {
        return access;
    };
    access.resource = role_arn.to_string();
    let trust = ResourcePolicy {
        owner: account.clone(),
        required: true,
        ..ResourcePolicy::default()
    };
    access.policy = Some(trust.clone());
    let tagged = match operation {
        "AssumeRoleWithWebIdentity" => web_identity(&mut access, &account, input),
        "AssumeRoleWithSAML" => saml(&mut access, &account, input),
        _ => input
            .get("Tags")
            .is_some_and(|tags| !access::tag_pairs(tags).is_empty()),
    };
    if tagged {
        access.also.push(Access {
            action: "sts:TagSession".into(),
            resource: access.resource.clone(),
            policy: Some(trust),
            context: access.context.clone(),
            ..Access::default()
        });
    }
    access
}

/// The provider as caller of a provider's sign-in.
fn provider(account: &str, arn: String, subject: Option<String>) -> Principal {
    Principal {
        kind: PrincipalKind::Provider,
        arn,
        user_id: subject.unwrap_or_default(),
        ..Principal::root(account)
    }
}

/// An OIDC sign-in: its provider, and the token's `<issuer>:sub` and `<issuer>:aud`;
/// whether the token carries session tags.
fn web_identity(access: &mut Access, account: &str, input: &Value) -> bool {
    let claims = federation::web_identity(input.str("WebIdentityToken").unwrap_or_default());
    let issuer = input
        .str("ProviderId")
        .map(str::to_string)
        .or(claims.issuer)
        .unwrap_or_default();
    let arn = match NAMED_PROVIDERS.contains(&issuer.as_str()) {
        true => issuer.clone(),
        false => format!("arn:aws:iam::{account}:oidc-provider/{issuer}"),
    };
    for (claim, value) in [("sub", &claims.subject), ("aud", &claims.audience)] {
        if let Some(value) = value {
            access
                .context
                .push((format!("{issuer}:{claim}"), vec![value.clone()]));
        }
    }
    access.caller = Some(provider(account, arn, claims.subject));
    !claims.tags.is_empty()
}

/// A SAML sign-in: its provider (`PrincipalArn`), and the assertion's `saml:sub`,
/// `saml:sub_type`, `saml:iss` and `saml:aud`; whether the assertion carries session tags.
fn saml(access: &mut Access, account: &str, input: &Value) -> bool {
    let assertion = federation::saml(input.str("SAMLAssertion").unwrap_or_default());
    let assertion = assertion.unwrap_or_default();
    for (key, value) in [
        ("saml:sub", &assertion.subject),
        ("saml:sub_type", &assertion.subject_type),
        ("saml:iss", &assertion.issuer),
        ("saml:aud", &assertion.audience),
    ] {
        if let Some(value) = value {
            access.context.push((key.into(), vec![value.clone()]));
        }
    }
    let arn = input.str("PrincipalArn").unwrap_or_default().to_string();
    access.caller = Some(provider(account, arn, assertion.subject));
    !assertion.tags.is_empty()
}
