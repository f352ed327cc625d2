//! Sessions derived from another principal: `AssumeRoot` (a short privileged session as a
//! member account's root user, scoped to one of AWS's root-task policies),
//! `GetScopedCredentials` (the caller's own session, narrowed by a policy and never
//! outliving it), and `GetDelegatedAccessToken` (trade-in tokens, which only IAM's
//! delegation requests issue and Roto never does).

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::{Identity, Sts};

/// The AWS managed policies an `AssumeRoot` session may be scoped to.
const ROOT_TASKS: &[&str] = &[
    "IAMAuditRootUserCredentials",
    "IAMCreateRootUserPassword",
    "IAMDeleteRootUserCredentials",
    "S3UnlockBucketPolicy",
    "SQSUnlockQueuePolicy",
];

impl Sts {
    /// `AssumeRoot`: credentials for the target account's root user, for at most 900
    /// seconds; root callers are refused, as AWS refuses them.
    pub(super) async fn assume_root(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let caller = self.caller(ctx).await?;
        if caller.arn.ends_with(":root") {
            return Err(AwsError::new(
                "AccessDenied",
                format!(
                    "User: {} is not authorized to perform: sts:AssumeRoot (root user credentials cannot call AssumeRoot)",
                    caller.arn
                ),
            )
            .with_status(403));
        }
        let target = input.str("TargetPrincipal").unwrap_or_default();
        let account = target_account(target).ok_or_else(|| {
            validation(format!(
                "TargetPrincipal {target} is not a valid account ID or account principal ARN"
            ))
        })?;
        let task = input
            .get("TaskPolicyArn")
            .and_then(|p| p.str("arn"))
            .unwrap_or_default();
        let known = task
            .strip_prefix("arn:aws:iam::aws:policy/root-task/")
            .is_some_and(|name| ROOT_TASKS.contains(&name));
        if !known {
            return Err(validation(format!(
                "TaskPolicyArn {task} is not a root task policy"
            )));
        }
        let identity = Identity::plain(
            account.clone(),
            format!("arn:aws:iam::{account}:root"),
            account,
        );
        let duration = input.int("DurationSeconds").unwrap_or(900);
        Ok(Value::map().with("Credentials", self.issue(&identity, duration)?))
    }

    /// `GetScopedCredentials`: new credentials for the calling session's identity, with the
    /// given session policy, lasting at most as long as the calling session.
    pub(super) async fn get_scoped_credentials(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let session = match &ctx.access_key {
            Some(key) => self.session_until(key)?,
            None => None,
        };
        let Some((caller, expiration)) = session else {
            return Err(AwsError::new(
                "InvalidSubjectCredentialsException",
                "GetScopedCredentials must be called with temporary security credentials.",
            ));
        };
        let remaining = (expiration - now_millis()) / 1000;
        let duration = input.int("DurationSeconds").unwrap_or(remaining);
        if duration > remaining {
            return Err(AwsError::new(
                "InsufficientSessionLifetimeException",
                format!(
                    "The requested DurationSeconds ({duration}) exceeds the remaining lifetime of the calling session ({remaining} seconds)."
                ),
            ));
        }
        let policy = match input.str("Policy") {
            Some(policy) => {
                check_policy(policy)?;
                Some(policy.to_string())
            }
            None => caller.policy.clone(),
        };
        let identity = Identity { policy, ..caller };
        let credentials = self.issue(&identity, duration)?;
        Ok(Value::map()
            .with("Credentials", credentials)
            .with(
                "SessionInfo",
                Value::map()
                    .with("ScopedSessionId", identity.user_id)
                    .with("Arn", identity.arn),
            )
            .with(
                "ScopedPoliciesCount",
                i64::from(input.str("Policy").is_some()),
            ))
    }
}

/// `GetDelegatedAccessToken`'s answer: no trade-in token Roto is given was issued by it,
/// so each is one that can no longer be exchanged.
pub(super) fn expired_trade_in_token() -> AwsError {
    AwsError::new(
        "ExpiredTradeInTokenException",
        "The trade-in token provided in the request has expired and can no longer be exchanged for credentials.",
    )
}

/// The account of `TargetPrincipal`: an account id, or an account's root ARN.
fn target_account(target: &str) -> Option<String> {
    let account = match target.strip_prefix("arn:aws:iam::") {
        Some(rest) => rest.strip_suffix(":root")?,
        None => target,
    };
    let valid = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
    valid.then(|| account.to_string())
}

/// A session policy must be a JSON object, as STS parses it.
fn check_policy(policy: &str) -> AwsResult<()> {
    match serde_json::from_str::<serde_json::Value>(policy) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(AwsError::new(
            "MalformedPolicyDocumentException",
            "The policy is not in the valid JSON format.",
        )),
    }
}

fn validation(message: String) -> AwsError {
    AwsError::new("ValidationError", message).with_status(400)
}
