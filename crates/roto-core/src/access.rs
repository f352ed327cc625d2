//! Access control's shared vocabulary, for `--enforce-iam`: who calls (a [`Principal`]),
//! what a call asks (an [`Access`]: the IAM action, the resource's ARN and the resource's
//! own policy), and what was decided (a [`Verdict`]).
//!
//! The pieces meet through [`crate::Service`]: STS and IAM name the principal behind the
//! keys they issued (`identify`), each service turns its shaped input into an [`Access`]
//! (`access`; [`generic`] serves services with nothing to add) and reads its own resource
//! policies, and IAM decides (`authorize`) with the one evaluator its policy simulator
//! uses. No service reads another's tables.

use std::borrow::Cow;

use crate::dispatch::{Context, Dispatcher, ServiceSpec};
use crate::error::AwsError;
use crate::identity::account_of_access_key;
use crate::protocol::Protocol;
use crate::timestamp::{now_millis, TimestampFormat};
use crate::value::Value;

/// The [`crate::Env`] option set when the server enforces access (`--enforce-iam`), for
/// services that decide access on their own data planes.
pub const ENFORCE_OPTION: &str = "enforce-iam";

/// What kind of caller a principal is (`aws:PrincipalType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    /// An account's root (the key `test`, or a 12-digit key id).
    Root,
    /// An IAM user, by its access keys.
    User,
    /// A role session from STS.
    AssumedRole,
    /// A federated user, from `GetFederationToken` (a `GetSessionToken` session is its
    /// user or root).
    Federated,
    /// An unsigned request.
    Anonymous,
    /// An identity provider signing a user in (the unsigned `AssumeRoleWithWebIdentity`
    /// and `AssumeRoleWithSAML`), as trust policies name it in `Principal.Federated`.
    Provider,
}

impl PrincipalKind {
    /// The value of `aws:PrincipalType`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Root => "Account",
            PrincipalKind::User => "User",
            PrincipalKind::AssumedRole => "AssumedRole",
            PrincipalKind::Federated | PrincipalKind::Provider => "FederatedUser",
            PrincipalKind::Anonymous => "Anonymous",
        }
    }
}

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Principal {
    /// Its kind.
    pub kind: PrincipalKind,
    /// Its account (the routed account for an anonymous caller).
    pub account: String,
    /// Its ARN (`arn:aws:iam::111122223333:user/alice`); `*` for an anonymous caller.
    pub arn: String,
    /// `aws:userid`.
    pub user_id: String,
    /// The IAM user's or the role's name, whose policies apply (for a federated user,
    /// the IAM user who federated it; none when an account's root did).
    pub name: Option<String>,
    /// A session policy passed to `AssumeRole` or `GetFederationToken`, which limits the
    /// session further.
    pub session_policy: Option<String>,
    /// The managed policies passed as session policies (`PolicyArns`), which IAM keeps.
    pub session_policy_arns: Vec<String>,
    /// A session's tags (`aws:PrincipalTag/<key>`, over its role's tags).
    pub session_tags: Vec<(String, String)>,
}

impl Principal {
    /// An account's root.
    pub fn root(account: &str) -> Principal {
        Principal {
            kind: PrincipalKind::Root,
            account: account.to_string(),
            arn: format!("arn:aws:iam::{account}:root"),
            user_id: account.to_string(),
            name: None,
            session_policy: None,
            session_policy_arns: Vec::new(),
            session_tags: Vec::new(),
        }
    }

    /// An unsigned caller.
    pub fn anonymous(account: &str) -> Principal {
        Principal {
            kind: PrincipalKind::Anonymous,
            account: account.to_string(),
            arn: "*".into(),
            user_id: "anonymous".into(),
            name: None,
            session_policy: None,
            session_policy_arns: Vec::new(),
            session_tags: Vec::new(),
        }
    }
}

/// Who besides the policies grants access to a resource (S3 ACLs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// Nobody.
    #[default]
    None,
    /// The caller's account (as an account named in a resource policy: its principals
    /// still need their identity policies).
    Account,
    /// The caller itself, or everyone (a public ACL).
    Caller,
}

/// A resource's own access policy.
#[derive(Debug, Clone, Default)]
pub struct ResourcePolicy {
    /// The account that owns the resource.
    pub owner: String,
    /// The policy document, if the resource has one.
    pub document: Option<String>,
    /// What an access control list grants the caller for this action.
    pub grant: Grant,
    /// Whether the policy must allow whatever the identity allows (a role's trust policy).
    pub required: bool,
}

/// What a call asks.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The IAM action (`s3:GetObject`).
    pub action: String,
    /// The resource's ARN, or `*`.
    pub resource: String,
    /// The resource's policy, where the service has one.
    pub policy: Option<ResourcePolicy>,
    /// Whether no permission is needed (`sts:GetCallerIdentity`).
    pub open: bool,
    /// The IAM roles the call hands its service (`iam:PassRole` on each, by the caller).
    pub passed_roles: Vec<String>,
    /// The resource's tags (`aws:ResourceTag/<key>`), where the service reads them.
    pub resource_tags: Vec<(String, String)>,
    /// The service's own condition keys (`s3:ExistingObjectTag/<key>`, a web identity
    /// token's `<issuer>:sub`).
    pub context: Vec<(String, Vec<String>)>,
    /// Who the call is decided for when not its signer: the identity provider of a
    /// federated sign-in, which the role's trust policy must name.
    pub caller: Option<Principal>,
    /// What else the call needs, each decided as the call is (an S3 copy's source).
    pub also: Vec<Access>,
}

/// Why a request was denied, in the words AWS's messages use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// No identity-based policy allows the action.
    NoIdentityAllow,
    /// No resource-based policy allows it (across accounts, or a trust policy).
    NoResourceAllow,
    /// The permissions boundary does not allow it.
    NoBoundaryAllow,
    /// The session policy does not allow it.
    NoSessionAllow,
    /// A statement in an identity-based policy denies it.
    IdentityDeny,
    /// A statement in a resource-based policy denies it.
    ResourceDeny,
}

impl Denial {
    /// The `because ...` clause of AWS's message.
    pub fn because(self, action: &str) -> String {
        match self {
            Denial::NoIdentityAllow => {
                format!("because no identity-based policy allows the {action} action")
            }
            Denial::NoResourceAllow => {
                format!("because no resource-based policy allows the {action} action")
            }
            Denial::NoBoundaryAllow => {
                format!("because no permissions boundary allows the {action} action")
            }
            Denial::NoSessionAllow => {
                format!("because no session policy allows the {action} action")
            }
            Denial::IdentityDeny => "with an explicit deny in an identity-based policy".into(),
            Denial::ResourceDeny => "with an explicit deny in a resource-based policy".into(),
        }
    }
}

/// IAM's decision.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// `None` when allowed.
    pub denial: Option<Denial>,
    /// The statements that decided, for the trace (`Policy.json` ids and kinds).
    pub matched: Vec<String>,
}

/// The action and resource of a call for a service that adds nothing: the action is
/// `<signing name>:<operation>`, the resource the first input member holding an ARN
/// (`TopicArn`, `RoleArn`), else `*`.
pub fn generic(spec: &ServiceSpec, operation: &str, input: &Value) -> Access {
    let prefix = spec.signing_names.first().copied().unwrap_or(spec.name);
    let resource = input
        .as_map()
        .into_iter()
        .flatten()
        .filter(|(name, _)| name.ends_with("Arn") || name.ends_with("ARN"))
        .find_map(|(_, v)| v.as_str().filter(|s| s.starts_with("arn:")))
        .unwrap_or("*")
        .to_string();
    Access {
        action: format!("{prefix}:{operation}"),
        resource,
        passed_roles: passed_roles(operation, input),
        ..Access::default()
    }
}

/// The roles a call passes to its service, which the caller needs `iam:PassRole` for: the
/// role ARNs in members named `...Role`, `...RoleArn` or `...RoleARN`, at any depth, of a
/// `Create*`, `Update*` or `Put*` call (Lambda's `Role`, Step Functions' `roleArn`,
/// EventBridge's `Targets[].RoleArn`, Scheduler's `Target.RoleArn`).
pub fn passed_roles(operation: &str, input: &Value) -> Vec<String> {
    let mut roles: Vec<String> = Vec::new();
    if !["Create", "Update", "Put"]
        .iter()
        .any(|verb| operation.starts_with(verb))
    {
        return roles;
    }
    let mut pending = vec![input];
    while let Some(value) = pending.pop() {
        match value {
            Value::Map(members) => {
                for (name, member) in members {
                    let name = name.to_ascii_lowercase();
                    let role = member.as_str().filter(|arn| {
                        (name.ends_with("role") || name.ends_with("rolearn"))
                            && arn.starts_with("arn:aws:iam::")
                            && arn.contains(":role/")
                    });
                    match role {
                        Some(arn) if !roles.iter().any(|r| r == arn) => roles.push(arn.into()),
                        _ => pending.push(member),
                    }
                }
            }
            Value::List(items) => pending.extend(items),
            _ => {}
        }
    }
    roles
}

/// Tags as (key, value) pairs, from a member holding them in any form AWS's models use: a
/// list of `{Key, Value}` structures (`{TagKey, TagValue}`, `{key, value}`), a map of
/// strings, a structure with a `TagSet` (S3), or S3's URL-encoded `x-amz-tagging`.
pub fn tag_pairs(tags: &Value) -> Vec<(String, String)> {
    let field =
        |item: &Value, names: [&str; 3]| names.iter().find_map(|n| item.str(n)).map(str::to_string);
    match tags {
        Value::List(items) => items
            .iter()
            .filter_map(|item| {
                let key = field(item, ["Key", "TagKey", "key"])?;
                Some((
                    key,
                    field(item, ["Value", "TagValue", "value"]).unwrap_or_default(),
                ))
            })
            .collect(),
        Value::Map(members) => match members.get("TagSet") {
            Some(set) => tag_pairs(set),
            None => members
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect(),
        },
        Value::String(encoded) => form_urlencoded::parse(encoded.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
        _ => Vec::new(),
    }
}

/// What a request says of tags, for `aws:RequestTag/<key>` and `aws:TagKeys`: the tags it
/// sets (its `Tags`, `tags` or `Tagging` member), and every tag key it names (those, and an
/// untagging call's `TagKeys`).
pub fn request_tags(input: &Value) -> (Vec<(String, String)>, Vec<String>) {
    let tags: Vec<(String, String)> = ["Tags", "tags", "Tagging"]
        .iter()
        .filter_map(|member| input.get(member))
        .flat_map(tag_pairs)
        .collect();
    let mut keys: Vec<String> = tags.iter().map(|(k, _)| k.clone()).collect();
    for member in ["TagKeys", "tagKeys"] {
        let named = input
            .get(member)
            .and_then(Value::as_list)
            .unwrap_or_default();
        keys.extend(named.iter().filter_map(Value::as_str).map(str::to_string));
    }
    (tags, keys)
}

/// The context a call acts in when it names a resource by `arn`: the ARN's account when it is
/// another account's (AWS's cross-account use, which the resource's policy then decides),
/// else the caller's.
pub fn in_owner_account<'a>(ctx: &'a Context, arn: Option<&str>) -> Cow<'a, Context> {
    let account = arn
        .filter(|arn| arn.starts_with("arn:"))
        .and_then(|arn| arn.split(':').nth(4))
        .filter(|account| account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()));
    match account {
        Some(account) if account != ctx.account => Cow::Owned(Context {
            account: account.to_string(),
            ..ctx.clone()
        }),
        _ => Cow::Borrowed(ctx),
    }
}

/// An ARN in the caller's partition, region and account.
pub fn arn(ctx: &Context, service: &str, resource: &str) -> String {
    format!(
        "arn:aws:{service}:{}:{}:{resource}",
        ctx.region, ctx.account
    )
}

/// AWS's message for a denied request.
pub fn denial_message(
    principal: &Principal,
    access: &Access,
    denial: Denial,
    quoted: bool,
) -> String {
    if principal.kind == PrincipalKind::Provider {
        return format!("Not authorized to perform {}", access.action);
    }
    let resource = match quoted {
        true => format!("\"{}\"", access.resource),
        false => access.resource.clone(),
    };
    format!(
        "User: {} is not authorized to perform: {} on resource: {resource} {}",
        principal.arn,
        access.action,
        denial.because(&access.action)
    )
}

/// The principal behind the caller's key: anonymous without one, the account's root for
/// `test` or a 12-digit key, else whoever STS or IAM issued it to ([`unknown_key`] when
/// neither did).
pub fn identify(dispatcher: &Dispatcher, ctx: &Context) -> Result<Principal, AwsError> {
    let Some(key) = ctx.access_key.as_deref() else {
        return Ok(Principal::anonymous(&ctx.account));
    };
    if key == "test" || (key.len() == 12 && key.bytes().all(|b| b.is_ascii_digit())) {
        return Ok(Principal::root(&ctx.account));
    }
    let issuer = match &key.get(..4) {
        Some("ASIA") => "sts",
        Some("AKIA") => "iam",
        _ => return Err(unknown_key()),
    };
    if account_of_access_key(key).is_none() {
        return Err(unknown_key());
    }
    dispatcher
        .service(issuer)
        .map(|s| s.identify(ctx, key))
        .transpose()?
        .flatten()
        .ok_or_else(unknown_key)
}

/// A resource's condition keys: `aws:ResourceTag/<key>` for each of its tags (where its
/// service reads them), and the service's own.
pub fn resource_keys(access: &Access) -> impl Iterator<Item = (String, Vec<String>)> + '_ {
    access
        .resource_tags
        .iter()
        .map(|(k, v)| (format!("aws:ResourceTag/{k}"), vec![v.clone()]))
        .chain(access.context.iter().cloned())
}

/// IAM's decision on `access` for `principal`, with the request's condition `keys` and the
/// resource's own; `None` when no IAM is served to decide.
pub fn authorize(
    dispatcher: &Dispatcher,
    principal: &Principal,
    access: &Access,
    keys: &[(String, Vec<String>)],
) -> Option<Result<Verdict, AwsError>> {
    let iam = dispatcher.service("iam")?;
    if access.resource_tags.is_empty() && access.context.is_empty() {
        return iam.authorize(principal, access, keys);
    }
    let mut keys = keys.to_vec();
    keys.extend(resource_keys(access));
    iam.authorize(principal, access, &keys)
}

/// A denial in the protocol's shape: S3's XML `AccessDenied` (403; "Access Denied" to an
/// anonymous caller), the JSON services' `AccessDeniedException`, the query services'
/// `AccessDenied`.
pub fn denied(
    protocol: Protocol,
    principal: &Principal,
    access: &Access,
    denial: Denial,
) -> AwsError {
    match protocol {
        Protocol::RestXml if principal.kind == PrincipalKind::Anonymous => {
            AwsError::new("AccessDenied", "Access Denied").with_status(403)
        }
        Protocol::RestXml => AwsError::new(
            "AccessDenied",
            denial_message(principal, access, denial, true),
        )
        .with_status(403),
        Protocol::Json => AwsError::new(
            "AccessDeniedException",
            denial_message(principal, access, denial, false),
        )
        .with_status(400),
        Protocol::RestJson => AwsError::new(
            "AccessDeniedException",
            denial_message(principal, access, denial, false),
        )
        .with_status(403),
        Protocol::Query => AwsError::new(
            "AccessDenied",
            denial_message(principal, access, denial, false),
        )
        .with_status(403),
    }
}

/// The global condition keys of a request by `principal`, from `source_ip` with
/// `user_agent` where known.
pub fn context_keys(
    ctx: &Context,
    principal: &Principal,
    source_ip: Option<&str>,
    user_agent: Option<&str>,
) -> Vec<(String, Vec<String>)> {
    let mut keys = vec![
        (
            "aws:PrincipalAccount".to_string(),
            principal.account.clone(),
        ),
        ("aws:PrincipalArn".into(), principal.arn.clone()),
        ("aws:PrincipalType".into(), principal.kind.as_str().into()),
        ("aws:userid".into(), principal.user_id.clone()),
        ("aws:RequestedRegion".into(), ctx.region.clone()),
        ("aws:SecureTransport".into(), "false".into()),
        (
            "aws:CurrentTime".into(),
            crate::timestamp::format(now_millis(), TimestampFormat::Iso8601),
        ),
        ("aws:EpochTime".into(), (now_millis() / 1000).to_string()),
    ];
    if principal.kind == PrincipalKind::User {
        if let Some(name) = &principal.name {
            keys.push(("aws:username".into(), name.clone()));
        }
    }
    if let Some(ip) = source_ip {
        keys.push(("aws:SourceIp".into(), ip.to_string()));
    }
    if let Some(agent) = user_agent {
        keys.push(("aws:UserAgent".into(), agent.to_string()));
    }
    keys.into_iter().map(|(k, v)| (k, vec![v])).collect()
}

/// The error an unknown access key gets under enforcement.
pub fn unknown_key() -> AwsError {
    AwsError::new(
        "InvalidClientTokenId",
        "The security token included in the request is invalid.",
    )
    .with_status(403)
}

/// The error a session's key gets with a token that is not its session's (S3's words; the
/// other front ends answer it as [`unknown_key`]).
pub fn invalid_token() -> AwsError {
    AwsError::new(
        "InvalidToken",
        "The provided token is malformed or otherwise invalid.",
    )
    .with_status(400)
}

/// The error a session's credentials get once the session has expired (STS's words; each
/// front end answers it in its own, as for [`unknown_key`]).
pub fn expired_token() -> AwsError {
    AwsError::new(
        "ExpiredToken",
        "The security token included in the request is expired",
    )
    .with_status(403)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_who_what_and_why() {
        let alice = Principal {
            kind: PrincipalKind::User,
            name: Some("alice".into()),
            arn: "arn:aws:iam::123456789012:user/alice".into(),
            ..Principal::root("123456789012")
        };
        let access = Access {
            action: "s3:GetObject".into(),
            resource: "arn:aws:s3:::b/k".into(),
            ..Access::default()
        };
        assert_eq!(
            denial_message(&alice, &access, Denial::NoIdentityAllow, true),
            "User: arn:aws:iam::123456789012:user/alice is not authorized to perform: \
             s3:GetObject on resource: \"arn:aws:s3:::b/k\" because no identity-based policy \
             allows the s3:GetObject action"
        );
    }

    #[test]
    fn roles_passed_are_found_at_any_depth_of_create_update_and_put_calls() {
        let role = "arn:aws:iam::123456789012:role/app/worker";
        let targets = Value::map().with(
            "Targets",
            Value::List(vec![Value::map()
                .with("RoleArn", role)
                .with("Arn", "arn:x")]),
        );
        assert_eq!(passed_roles("PutTargets", &targets), [role]);
        let function = Value::map().with("Role", role).with("FunctionName", "f");
        assert_eq!(passed_roles("CreateFunction", &function), [role]);
        assert!(passed_roles("AssumeRole", &Value::map().with("RoleArn", role)).is_empty());
        let not_a_role = Value::map().with("Role", "arn:aws:iam::123456789012:user/u");
        assert!(passed_roles("UpdateThing", &not_a_role).is_empty());
    }

    #[test]
    fn tags_are_read_in_every_form_the_models_use() {
        let pair = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        let list = Value::List(vec![Value::map().with("Key", "env").with("Value", "dev")]);
        assert_eq!(tag_pairs(&list), pair("env", "dev"));
        let kms = Value::List(vec![Value::map()
            .with("TagKey", "env")
            .with("TagValue", "dev")]);
        assert_eq!(tag_pairs(&kms), pair("env", "dev"));
        assert_eq!(
            tag_pairs(&Value::map().with("env", "dev")),
            pair("env", "dev")
        );
        assert_eq!(
            tag_pairs(&Value::map().with("TagSet", list)),
            pair("env", "dev")
        );
        assert_eq!(tag_pairs(&Value::from("env=dev")), pair("env", "dev"));
        let untag = Value::map().with("TagKeys", Value::List(vec!["a".into()]));
        assert_eq!(request_tags(&untag), (Vec::new(), vec!["a".to_string()]));
    }
}
