//! STS's side of `--enforce-iam`: the principal behind a session key STS issued (a role
//! session with its session policy, a user's or root's `GetSessionToken` session, a
//! federated user), and what STS's calls ask: `GetCallerIdentity` needs no permission,
//! `AssumeRole` needs the role's trust policy, which STS asks IAM for. The federated
//! `AssumeRoleWith*` calls are unsigned and authorised by their token, which Roto reads
//! and does not verify, so they are not checked.

use roto_core::access::{self, Access, Principal, PrincipalKind, ResourcePolicy};
use roto_core::{AwsResult, Context, Value};

use super::{parse_role_arn, Identity, Sts};

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

/// The trust policy of a role, as IAM's `GetRole` gives it (decoded).
fn trust_document(role: &Value) -> Option<String> {
    let text = role.get("Role")?.str("AssumeRolePolicyDocument")?;
    Some(
        percent_encoding::percent_decode_str(text)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

impl Sts {
    /// What an STS call asks.
    pub(super) async fn access_of(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Access> {
        let mut access = access::generic(&super::SPEC, operation, input);
        access.open = matches!(
            operation,
            "GetCallerIdentity"
                | "GetAccessKeyInfo"
                | "DecodeAuthorizationMessage"
                | "AssumeRoleWithWebIdentity"
                | "AssumeRoleWithSAML"
        );
        if operation != "AssumeRole" {
            return Ok(access);
        }
        let role_arn = input.str("RoleArn").unwrap_or_default();
        let Some((account, name)) = parse_role_arn(role_arn) else {
            return Ok(access);
        };
        let role_ctx = Context {
            account: account.clone(),
            access_key: None,
            ..ctx.clone()
        };
        let input = Value::map().with("RoleName", name);
        let document = match self.call_other(&role_ctx, "iam", "GetRole", input).await {
            Some(Ok(role)) => trust_document(&role),
            _ => None,
        };
        access.policy = Some(ResourcePolicy {
            owner: account,
            document,
            required: true,
            ..ResourcePolicy::default()
        });
        Ok(access)
    }
}
