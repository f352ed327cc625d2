//! STS: caller identity and temporary credentials.
//!
//! `GetCallerIdentity` is also Roto's readiness probe, so it stays cheap. Credentials that
//! `AssumeRole` and `GetSessionToken` issue carry their account in the access key id (see
//! `roto_core::identity`), so later calls signed with them route to that account without a
//! lookup; the identity behind each issued key (the assumed-role ARN) is kept in
//! `sts_sessions` for `GetCallerIdentity`.
//!
//! IAM owns users and roles, so STS asks it through the dispatcher rather than reading its
//! tables: `GetUser` (signed with the caller's key, no user name) names the IAM user behind
//! an `AKIA` key that Roto issued, and `GetRole` gives `AssumeRole` the role's id and its
//! `MaxSessionDuration`. A role IAM does not have is `AccessDenied`, as in AWS.

mod enforce;
mod federation;
mod scoped;

use std::io;
use std::sync::Arc;

use roto_core::access::{self, Access, Principal};
use roto_core::featureless::{self, Featureless};
use roto_core::identity::{
    account_of_access_key, issue_access_key_id, issue_secret_key, issue_session_token, Secret,
};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

/// The STS features Roto does not model, answered as STS answers an account without them:
/// outbound web identity federation, which an account has off until IAM enables it.
const FEATURELESS: &[Featureless] = &[Featureless::error("GetWebIdentityToken", |_| {
    AwsError::new(
        "OutboundWebIdentityFederationDisabledException",
        "The outbound web identity federation feature is not enabled for this account. To use this feature, you must first enable it through the Amazon Web Services Management Console or API.",
    )
    .with_status(403)
})];

static SPEC: ServiceSpec = ServiceSpec {
    name: "sts",
    model: "sts",
    query_model: None,
    signing_names: &["sts"],
    target_prefix: None,
    query_version: Some("2011-06-15"),
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS sts_sessions (
    access_key TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    arn TEXT NOT NULL,
    user_id TEXT NOT NULL,
    expiration INTEGER NOT NULL,
    policy TEXT,
    secret TEXT,
    token TEXT,
    tags TEXT,
    parent TEXT,
    policy_arns TEXT,
    transitive TEXT
);";

/// The identity behind a set of credentials.
struct Identity {
    account: String,
    arn: String,
    user_id: String,
    /// The session policy the credentials were issued with.
    policy: Option<String>,
    /// The session's tags.
    tags: Vec<(String, String)>,
    /// Whose federated user a `GetFederationToken` session is (the caller's ARN).
    parent: Option<String>,
    /// The managed policies passed as session policies (`PolicyArns`).
    policy_arns: Vec<String>,
    /// The keys of its tags that pass on to the sessions it assumes (role chaining).
    transitive: Vec<String>,
}

impl Identity {
    /// An identity of its own, with no session policy, tags or parent.
    fn plain(account: String, arn: String, user_id: String) -> Identity {
        Identity {
            account,
            arn,
            user_id,
            policy: None,
            tags: Vec::new(),
            parent: None,
            policy_arns: Vec::new(),
            transitive: Vec::new(),
        }
    }
}

/// A JSON list column.
fn json_list<T: serde::de::DeserializeOwned>(text: Option<String>) -> Vec<T> {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// A list as its JSON column keeps it.
fn to_json<T: serde::Serialize>(items: &[T]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

/// STS.
pub struct Sts {
    env: Arc<Env>,
}

impl Sts {
    /// Creates STS's table.
    pub fn new(env: Arc<Env>) -> io::Result<Sts> {
        env.store.migrate(SCHEMA)?;
        Ok(Sts { env })
    }

    /// The identity behind credentials this STS issued; other keys have none, and are
    /// told apart without touching the store.
    fn session(&self, access_key: &str) -> AwsResult<Option<Identity>> {
        Ok(self
            .session_until(access_key)?
            .map(|(identity, _)| identity))
    }

    /// A session's identity and when it expires (epoch millis).
    fn session_until(&self, access_key: &str) -> AwsResult<Option<(Identity, i64)>> {
        if !access_key.starts_with("ASIA") || account_of_access_key(access_key).is_none() {
            return Ok(None);
        }
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT account, arn, user_id, policy, expiration, tags, parent, policy_arns,
                        transitive
                 FROM sts_sessions WHERE access_key = ?1",
            )?
            .query_row([access_key], |r| {
                let identity = Identity {
                    account: r.get(0)?,
                    arn: r.get(1)?,
                    user_id: r.get(2)?,
                    policy: r.get(3)?,
                    tags: json_list(r.get(5)?),
                    parent: r.get(6)?,
                    policy_arns: json_list(r.get(7)?),
                    transitive: json_list(r.get(8)?),
                };
                Ok((identity, r.get(4)?))
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Calls another service's operation in `ctx`; `None` when the dispatcher is gone.
    async fn call_other(
        &self,
        ctx: &Context,
        service: &str,
        operation: &str,
        input: Value,
    ) -> Option<AwsResult<Value>> {
        let dispatcher = self.env.dispatcher()?;
        Some(dispatcher.call(ctx, service, operation, input).await)
    }

    /// The IAM user behind an `AKIA` key Roto issued, as IAM's `GetUser` reports it for
    /// the key that signed the call. Keys IAM never issued are not IAM users; a key IAM
    /// issued and then deleted or deactivated is refused, as AWS refuses it.
    async fn iam_user(&self, ctx: &Context, key: &str) -> AwsResult<Option<Identity>> {
        if !key.starts_with("AKIA") || account_of_access_key(key).is_none() {
            return Ok(None);
        }
        let Some(result) = self.call_other(ctx, "iam", "GetUser", Value::map()).await else {
            return Ok(None);
        };
        let user = match result {
            Ok(out) => out.get("User").cloned().unwrap_or_else(Value::map),
            Err(e) if e.code == "InvalidClientTokenId" => return Err(e),
            Err(_) => return Ok(None),
        };
        Ok(match (user.str("Arn"), user.str("UserId")) {
            (Some(arn), Some(user_id)) if arn.contains(":user/") => Some(Identity::plain(
                ctx.account.clone(),
                arn.to_string(),
                user_id.to_string(),
            )),
            _ => None,
        })
    }

    async fn caller(&self, ctx: &Context) -> AwsResult<Identity> {
        if let Some(key) = &ctx.access_key {
            if let Some(identity) = self.session(key)? {
                return Ok(identity);
            }
            if let Some(identity) = self.iam_user(ctx, key).await? {
                return Ok(identity);
            }
        }
        Ok(Identity::plain(
            ctx.account.clone(),
            format!("arn:aws:iam::{}:root", ctx.account),
            ctx.account.clone(),
        ))
    }

    async fn get_caller_identity(&self, ctx: &Context) -> AwsResult<Value> {
        let identity = self.caller(ctx).await?;
        Ok(Value::map()
            .with("UserId", identity.user_id)
            .with("Account", identity.account)
            .with("Arn", identity.arn))
    }

    /// Issues and records credentials for `identity`, valid for `duration` seconds.
    fn issue(&self, identity: &Identity, duration: i64) -> AwsResult<Value> {
        let access_key = issue_access_key_id("ASIA", &identity.account);
        let secret = issue_secret_key();
        let token = issue_session_token();
        let expiration = now_millis() / 1000 * 1000 + duration * 1000;
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sts_sessions
                   (access_key, account, arn, user_id, expiration, policy, secret, token, tags,
                    parent, policy_arns, transitive)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                rusqlite::params![
                    access_key,
                    identity.account,
                    identity.arn,
                    identity.user_id,
                    expiration,
                    identity.policy,
                    secret,
                    token,
                    to_json(&identity.tags),
                    identity.parent,
                    to_json(&identity.policy_arns),
                    to_json(&identity.transitive),
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map()
            .with("AccessKeyId", access_key)
            .with("SecretAccessKey", secret)
            .with("SessionToken", token)
            .with("Expiration", Value::Timestamp(expiration)))
    }

    /// The role's id and maximum session duration, as IAM's `GetRole` reports them in the
    /// role's account; `None` only when no dispatcher serves IAM. A role IAM does not have
    /// is the caller's `AccessDenied`, as in AWS.
    async fn iam_role(
        &self,
        ctx: &Context,
        account: &str,
        name: &str,
        role_arn: &str,
        action: &str,
    ) -> AwsResult<Option<(String, i64)>> {
        let role_ctx = Context {
            account: account.to_string(),
            access_key: None,
            ..ctx.clone()
        };
        let input = Value::map().with("RoleName", name);
        let out = match self.call_other(&role_ctx, "iam", "GetRole", input).await {
            None => return Ok(None),
            Some(Err(e)) if e.code.trim_end_matches("Exception") == "NoSuchEntity" => {
                return Err(self.not_authorized(ctx, action, role_arn).await)
            }
            Some(result) => result?,
        };
        let role = out.get("Role").cloned().unwrap_or_else(Value::map);
        Ok(Some((
            role.str("RoleId").unwrap_or_default().to_string(),
            role.int("MaxSessionDuration").unwrap_or(3600),
        )))
    }

    /// STS's refusal of `action` on a role IAM does not have: `AssumeRole` names its
    /// caller, the federated actions (whose callers are unsigned) do not.
    async fn not_authorized(&self, ctx: &Context, action: &str, role_arn: &str) -> AwsError {
        let message = match self.caller(ctx).await {
            Ok(caller) if action == "AssumeRole" => format!(
                "User: {} is not authorized to perform: sts:AssumeRole on resource: {role_arn}",
                caller.arn
            ),
            Ok(_) => format!("Not authorized to perform sts:{action}"),
            Err(e) => return e,
        };
        AwsError::new("AccessDenied", message).with_status(403)
    }

    async fn assume_role(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let session = Session {
            name: input.str("RoleSessionName").unwrap_or_default(),
            duration: input.int("DurationSeconds").unwrap_or(3600),
            tags: input.get("Tags").map(access::tag_pairs).unwrap_or_default(),
            transitive: input.strings("TransitiveTagKeys"),
        };
        let mut out = self.assume(ctx, input, session, "AssumeRole").await?;
        if let Some(source) = input.str("SourceIdentity") {
            out.insert("SourceIdentity", source);
        }
        Ok(out)
    }

    /// Issues credentials for the role `RoleArn` names, as `session`: the shared core of
    /// `AssumeRole`, `AssumeRoleWithWebIdentity` and `AssumeRoleWithSAML`.
    async fn assume(
        &self,
        ctx: &Context,
        input: &Value,
        session: Session<'_>,
        action: &str,
    ) -> AwsResult<Value> {
        let Session {
            name: session_name,
            duration,
            mut tags,
            mut transitive,
        } = session;
        let role_arn = input.str("RoleArn").unwrap_or_default();
        let (account, role_name) = parse_role_arn(role_arn).ok_or_else(|| {
            AwsError::new("ValidationError", format!("{role_arn} is invalid")).with_status(400)
        })?;
        let role_id = match self
            .iam_role(ctx, &account, &role_name, role_arn, action)
            .await?
        {
            Some((_, max)) if duration > max => return Err(AwsError::new(
                "ValidationError",
                "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.",
            )
            .with_status(400)),
            Some((id, _)) => id,
            None => format!("AROA{}", random_upper(17)),
        };
        if let Some(key) = &ctx.access_key {
            if let Some(caller) = self.session(key)? {
                inherit_transitive(&caller, &mut tags, &mut transitive)?;
            }
        }
        let user_id = format!("{role_id}:{session_name}");
        let identity = Identity {
            arn: format!("arn:aws:sts::{account}:assumed-role/{role_name}/{session_name}"),
            account,
            user_id: user_id.clone(),
            policy: input.str("Policy").map(str::to_string),
            tags,
            parent: None,
            policy_arns: policy_arns(input),
            transitive,
        };
        let credentials = self.issue(&identity, duration)?;
        let mut out = Value::map().with("Credentials", credentials).with(
            "AssumedRoleUser",
            Value::map()
                .with("AssumedRoleId", user_id)
                .with("Arn", identity.arn),
        );
        if let Some(policy) = input.str("Policy") {
            out.insert("PackedPolicySize", packed_policy_size(policy));
        }
        Ok(out)
    }

    /// `AssumeRoleWithWebIdentity`: the token's claims are read, never verified.
    async fn assume_role_with_web_identity(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let claims = federation::web_identity(input.str("WebIdentityToken").unwrap_or_default());
        let session = Session {
            name: input.str("RoleSessionName").unwrap_or_default(),
            duration: input.int("DurationSeconds").unwrap_or(3600),
            tags: claims.tags.clone(),
            transitive: Vec::new(),
        };
        let mut out = self
            .assume(ctx, input, session, "AssumeRoleWithWebIdentity")
            .await?;
        let provider = input
            .str("ProviderId")
            .map(str::to_string)
            .or(claims.issuer);
        out.insert(
            "SubjectFromWebIdentityToken",
            claims.subject.unwrap_or_default(),
        );
        if let Some(provider) = provider {
            out.insert("Provider", provider);
        }
        if let Some(audience) = claims.audience {
            out.insert("Audience", audience);
        }
        Ok(out)
    }

    /// `AssumeRoleWithSAML`: the session name, duration and subject come from the
    /// assertion, which is read, never verified.
    async fn assume_role_with_saml(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let assertion = federation::saml(input.str("SAMLAssertion").unwrap_or_default())
            .ok_or_else(|| {
                AwsError::new(
                    "InvalidIdentityTokenException",
                    "Invalid base64 SAMLResponse (check that the SAMLResponse is base64 encoded).",
                )
            })?;
        let duration = input
            .int("DurationSeconds")
            .or(assertion.duration)
            .unwrap_or(3600);
        let session_name = assertion
            .session_name
            .clone()
            .or_else(|| assertion.subject.clone())
            .unwrap_or_default();
        // The model checks the other operations' session names; this one is the assertion's.
        check_name_pattern(&session_name, "roleSessionName")?;
        let session = Session {
            name: &session_name,
            duration,
            tags: assertion.tags.clone(),
            transitive: assertion.transitive.clone(),
        };
        let mut out = self
            .assume(ctx, input, session, "AssumeRoleWithSAML")
            .await?;
        for (member, value) in [
            ("Subject", assertion.subject),
            ("SubjectType", assertion.subject_type),
            ("Issuer", assertion.issuer),
            ("Audience", assertion.audience),
        ] {
            if let Some(value) = value {
                out.insert(member, value);
            }
        }
        Ok(out)
    }

    /// `GetAccessKeyInfo`: the account a key id belongs to (Roto's keys carry it).
    fn get_access_key_info(&self, ctx: &Context, input: &Value) -> Value {
        let key = input.str("AccessKeyId").unwrap_or_default();
        let account = account_of_access_key(key).unwrap_or_else(|| ctx.account.clone());
        Value::map().with("Account", account)
    }

    /// Refuses `operation` to callers signing with session credentials, as STS does.
    fn refuse_session_credentials(&self, ctx: &Context, operation: &str) -> AwsResult<()> {
        match &ctx.access_key {
            Some(key) if self.session(key)?.is_some() => Err(AwsError::new(
                "AccessDenied",
                format!("Cannot call {operation} with session credentials"),
            )
            .with_status(403)),
            _ => Ok(()),
        }
    }

    async fn get_session_token(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.refuse_session_credentials(ctx, "GetSessionToken")?;
        let identity = self.caller(ctx).await?;
        let credentials = self.issue(&identity, input.int("DurationSeconds").unwrap_or(43200))?;
        Ok(Value::map().with("Credentials", credentials))
    }
}

impl Sts {
    /// `GetFederationToken`: credentials for a federated user named by the caller. Sessions
    /// the root user asks for last at most an hour, as AWS caps them.
    async fn get_federation_token(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.refuse_session_credentials(ctx, "GetFederationToken")?;
        let name = input.str("Name").unwrap_or_default();
        let caller = self.caller(ctx).await?;
        let mut duration = input.int("DurationSeconds").unwrap_or(43200);
        if caller.arn.ends_with(":root") {
            duration = duration.min(3600);
        }
        let identity = Identity {
            arn: format!("arn:aws:sts::{}:federated-user/{name}", caller.account),
            user_id: format!("{}:{name}", caller.account),
            account: caller.account,
            policy: input.str("Policy").map(str::to_string),
            tags: input.get("Tags").map(access::tag_pairs).unwrap_or_default(),
            parent: Some(caller.arn),
            policy_arns: policy_arns(input),
            transitive: Vec::new(),
        };
        let credentials = self.issue(&identity, duration)?;
        let mut out = Value::map().with("Credentials", credentials).with(
            "FederatedUser",
            Value::map()
                .with("FederatedUserId", identity.user_id)
                .with("Arn", identity.arn),
        );
        if let Some(policy) = input.str("Policy") {
            out.insert("PackedPolicySize", packed_policy_size(policy));
        }
        Ok(out)
    }
}

/// A role session asked for: its name, duration in seconds, tags and the keys of those
/// that pass on to the sessions it assumes.
struct Session<'a> {
    name: &'a str,
    duration: i64,
    tags: Vec<(String, String)>,
    transitive: Vec<String>,
}

/// Role chaining: the caller's transitive tags pass on to the session it assumes, and stay
/// transitive there; a request that sets one of them again is refused, as STS refuses it.
fn inherit_transitive(
    caller: &Identity,
    tags: &mut Vec<(String, String)>,
    transitive: &mut Vec<String>,
) -> AwsResult<()> {
    let inherited = |key: &str| {
        caller
            .transitive
            .iter()
            .any(|k| k.eq_ignore_ascii_case(key))
    };
    if tags.iter().any(|(k, _)| inherited(k)) {
        return Err(AwsError::new(
            "InvalidParameterValue",
            "One of the specified transitive tag keys can't be set because it conflicts with a transitive tag key from the calling session.",
        )
        .with_status(400));
    }
    for key in &caller.transitive {
        if let Some(tag) = caller
            .tags
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        {
            tags.push(tag.clone());
        }
        if !transitive.iter().any(|k| k.eq_ignore_ascii_case(key)) {
            transitive.push(key.clone());
        }
    }
    Ok(())
}

/// The managed policies a call passes as session policies (`PolicyArns[].arn`).
fn policy_arns(input: &Value) -> Vec<String> {
    input
        .get("PolicyArns")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.str("arn").map(str::to_string))
        .collect()
}

/// The `[\w+=,.@-]*` pattern STS's names (role session names, federated user names) obey,
/// with the validation error AWS words for the member `field`.
fn check_name_pattern(name: &str, field: &str) -> AwsResult<()> {
    if name
        .chars()
        .all(|c| c.is_alphanumeric() || "_+=,.@-".contains(c))
    {
        return Ok(());
    }
    Err(AwsError::new(
        "ValidationError",
        format!(
            "1 validation error detected: Value '{name}' at '{field}' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*"
        ),
    )
    .with_status(400))
}

/// The account and role name of `arn:aws:iam::<account>:role/<path/><name>`.
fn parse_role_arn(arn: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [prefix, partition, service, _region, account, resource] = parts[..] else {
        return None;
    };
    let valid_account = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
    if prefix != "arn" || partition.is_empty() || service != "iam" || !valid_account {
        return None;
    }
    let name = resource.strip_prefix("role/")?.rsplit('/').next()?;
    (!name.is_empty()).then(|| (account.to_string(), name.to_string()))
}

/// The percentage of the packed-policy limit a session policy uses, as STS reports it.
fn packed_policy_size(policy: &str) -> i64 {
    let compact: usize = policy.split_whitespace().map(str::len).sum();
    i64::try_from((compact * 100).div_ceil(2048)).unwrap_or(100)
}

fn random_upper(n: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    (0..n)
        .map(|_| CHARS[fastrand::usize(..CHARS.len())] as char)
        .collect()
}

impl Service for Sts {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let output =
                match operation {
                    "GetCallerIdentity" => self.get_caller_identity(ctx).await?,
                    "AssumeRole" => self.assume_role(ctx, input).await?,
                    "GetSessionToken" => self.get_session_token(ctx, input).await?,
                    "AssumeRoleWithWebIdentity" => {
                        self.assume_role_with_web_identity(ctx, input).await?
                    }
                    "AssumeRoleWithSAML" => self.assume_role_with_saml(ctx, input).await?,
                    "GetAccessKeyInfo" => self.get_access_key_info(ctx, input),
                    "GetFederationToken" => self.get_federation_token(ctx, input).await?,
                    "AssumeRoot" => self.assume_root(ctx, input).await?,
                    "GetScopedCredentials" => self.get_scoped_credentials(ctx, input).await?,
                    "GetDelegatedAccessToken" => return Err(scoped::expired_trade_in_token()),
                    "DecodeAuthorizationMessage" => return Err(AwsError::new(
                        "InvalidAuthorizationMessageException",
                        "Roto never encodes authorization messages, so there is none to decode.",
                    )),
                    other => {
                        return featureless::answer(SPEC.model(), FEATURELESS, other, input)
                            .map(Response::new)
                    }
                };
            Ok(Response::new(output))
        })
    }

    fn access(&self, _: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        Ok(enforce::access_of(op, input))
    }

    fn identify(&self, _: &Context, access_key: &str) -> AwsResult<Option<Principal>> {
        match self.session_until(access_key)? {
            Some((_, until)) if until <= now_millis() => Err(access::expired_token()),
            session => Ok(session.map(|(identity, _)| enforce::principal(identity))),
        }
    }

    fn secret_key(&self, access_key: &str) -> AwsResult<Option<Secret>> {
        let row = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT secret, expiration, token FROM sts_sessions WHERE access_key = ?1",
            )?
            .query_row([access_key], |r| {
                let secret = r.get::<_, Option<String>>(0)?.map(|key| Secret {
                    key,
                    session_token: r.get(2).ok().flatten(),
                });
                Ok((secret, r.get::<_, i64>(1)?))
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        match row {
            Some((_, until)) if until <= now_millis() => Err(access::expired_token()),
            row => Ok(row.and_then(|(secret, _)| secret)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_arns_parse_with_paths_and_reject_other_resources() {
        assert_eq!(
            parse_role_arn("arn:aws:iam::123456789012:role/app/deploy"),
            Some(("123456789012".into(), "deploy".into()))
        );
        assert_eq!(parse_role_arn("arn:aws:iam::123456789012:user/bob"), None);
        assert_eq!(parse_role_arn("arn:aws:iam::12345:role/r"), None);
        assert_eq!(parse_role_arn("not-an-arn"), None);
    }
}
