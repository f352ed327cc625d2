//! IAM's policy evaluation, as the policy simulator applies it: one request (an action,
//! a resource, the caller and the context's keys) against identity policies, permissions
//! boundaries, organization policies and a resource policy.
//!
//! An explicit `Deny` anywhere wins; otherwise the request is allowed when an identity
//! policy allows it (and the permissions boundary, when there is one, allows it too) or the
//! resource policy allows the caller, and every level of organization policies allows it;
//! anything else is an implicit deny. Statements match by `Action`/`NotAction` (wildcards,
//! any case), `Resource`/`NotResource` (wildcards, policy variables), `Principal`/
//! `NotPrincipal` in resource policies, and every `Condition` operator IAM documents,
//! with `...IfExists` and the `ForAllValues:`/`ForAnyValue:` set qualifiers.
//! Keys a matching statement's conditions need but the context lacks are reported as
//! missing.

use std::net::IpAddr;
use std::sync::Arc;

pub(super) use roto_core::access::{Denial, Grant};

use super::spanned::{self, Json, Node, Position};
use crate::glob::glob;

/// One parsed policy and where its statements came from; clones share the statements.
#[derive(Debug, Clone)]
pub(super) struct Policy {
    /// `SourcePolicyId`: `PolicyInputList.1`, a policy name, `ResourcePolicy`, ...
    pub id: String,
    /// `SourcePolicyType`.
    pub kind: String,
    statements: Arc<[Node]>,
}

impl Policy {
    /// Parses a document already accepted by `document.rs`; `None` if it has no statements.
    pub fn parse(text: &str, id: impl Into<String>, kind: impl Into<String>) -> Option<Policy> {
        let doc = spanned::parse(text)?;
        let statements = match &doc.get("Statement")?.value {
            Json::Array(items) => items.as_slice().into(),
            Json::Object(_) => std::slice::from_ref(doc.get("Statement")?).into(),
            _ => return None,
        };
        Some(Policy {
            id: id.into(),
            kind: kind.into(),
            statements,
        })
    }

    /// The service namespaces the policy's `Allow` statements name outright (`s3` of
    /// `s3:Get*`; wildcard prefixes name none).
    pub fn named_namespaces(&self) -> Vec<String> {
        let mut out = Vec::new();
        for statement in self.allows() {
            for action in statement
                .get("Action")
                .map(Node::strings)
                .unwrap_or_default()
            {
                if let Some((namespace, _)) = action.split_once(':') {
                    if !namespace.contains(['*', '?']) {
                        merge_keys(&mut out, vec![namespace.to_lowercase()]);
                    }
                }
            }
        }
        out
    }

    /// Whether an `Allow` statement grants some action of the service `namespace`
    /// (`NotAction` statements grant every service they do not exclude whole).
    pub fn grants_namespace(&self, namespace: &str) -> bool {
        let whole = format!("{namespace}:*");
        self.allows().any(
            |statement| match (statement.get("Action"), statement.get("NotAction")) {
                (Some(actions), _) => actions.strings().iter().any(|a| {
                    let prefix = a.split(':').next().unwrap_or_default();
                    a == "*" || glob(prefix, namespace, true)
                }),
                (None, Some(excluded)) => !excluded.strings().iter().any(|a| glob(a, &whole, true)),
                (None, None) => false,
            },
        )
    }

    fn allows(&self) -> impl Iterator<Item = &Node> {
        self.statements
            .iter()
            .filter(|s| effect(s) == Some(Effect::Allow))
    }

    /// The context keys the policy refers to, in order of appearance: condition keys and
    /// the variables (`${aws:username}`) in resources and condition values.
    pub fn context_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for statement in self.statements.iter() {
            for (member, node) in statement.members() {
                match member.as_str() {
                    "Resource" | "NotResource" => {
                        for resource in node.strings() {
                            keys.extend(variables(&resource));
                        }
                    }
                    "Condition" => {
                        for (_, block) in node.members() {
                            for (key, values) in block.members() {
                                keys.push(key.clone());
                                for value in values.strings() {
                                    keys.extend(variables(&value));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        keys
    }
}

/// Appends the keys of `more` to `keys`, skipping those already there in any case.
pub(super) fn merge_keys(keys: &mut Vec<String>, more: Vec<String>) {
    for key in more {
        if !keys.iter().any(|k| k.eq_ignore_ascii_case(&key)) {
            keys.push(key);
        }
    }
}

/// The policy variables a string names (`${aws:username}`), the escapes `${*}`, `${?}`
/// and `${$}` aside.
fn variables(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + 2 + len];
        let name = inner.split(',').next().unwrap_or_default().trim();
        if !matches!(name, "*" | "?" | "$") && !name.is_empty() {
            out.push(name.to_string());
        }
        rest = &rest[start + 2 + len + 1..];
    }
    out
}

/// The request being simulated.
#[derive(Debug, Clone)]
pub(super) struct Request<'a> {
    pub action: &'a str,
    pub resource: &'a str,
    /// The caller's ARN, matched against resource policies' principals.
    pub caller: Option<&'a str>,
    /// Context keys and their values (conditions compare them as their operator says,
    /// whatever type the entry declared).
    pub context: &'a [(String, Vec<String>)],
}

impl Request<'_> {
    fn value(&self, key: &str) -> Option<&[String]> {
        self.context
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_slice())
    }

    /// `text` with its policy variables replaced by the context's values; `None` when a
    /// variable has no value and no default.
    fn substitute(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let len = rest[start + 2..].find('}')?;
            let inner = &rest[start + 2..start + 2 + len];
            let (name, default) = match inner.split_once(',') {
                Some((name, default)) => {
                    let default = default.trim().trim_matches('\'');
                    (name.trim(), Some(default))
                }
                None => (inner.trim(), None),
            };
            match name {
                "*" | "?" | "$" => out.push_str(name),
                _ => match (self.value(name).and_then(|v| v.first()), default) {
                    (Some(value), _) => out.push_str(value),
                    (None, Some(default)) => out.push_str(default),
                    (None, None) => return None,
                },
            }
            rest = &rest[start + 2 + len + 1..];
        }
        out.push_str(rest);
        Some(out)
    }
}

/// The simulator's three decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    Allowed,
    ExplicitDeny,
    ImplicitDeny,
}

impl Decision {
    /// The decision as `EvalDecision` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::ExplicitDeny => "explicitDeny",
            Decision::ImplicitDeny => "implicitDeny",
        }
    }
}

/// A statement that decided a request, and its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Matched {
    pub policy_id: String,
    pub policy_kind: String,
    pub start: Position,
    pub end: Position,
}

/// The policies a request is evaluated against.
#[derive(Debug, Clone, Default)]
pub(super) struct PolicySet {
    pub identity: Vec<Policy>,
    /// The permissions boundary, when there is one.
    pub boundary: Option<Vec<Policy>>,
    /// Organization policies, from the root down: each level must allow.
    pub organizations: Vec<Vec<Policy>>,
    pub resource: Option<Policy>,
    /// Whether the resource belongs to another account than the caller, so that both the
    /// identity and the resource policy must allow.
    pub cross_account: bool,
    /// The session policy of a role session, which must allow too (when there is one).
    pub session: Option<Vec<Policy>>,
    /// What an access control list grants beside the resource policy (S3's ACLs).
    pub grant: Grant,
    /// Whether the resource policy must allow in any case (a role's trust policy).
    pub resource_required: bool,
    /// Whether a resource policy that names the caller's account (rather than the caller)
    /// only delegates to the account's identity policies, as AWS enforces it.
    pub account_delegates: bool,
}

/// What the evaluation of one request found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Evaluation {
    pub decision: Decision,
    pub matched: Vec<Matched>,
    pub missing: Vec<String>,
    /// Whether the permissions boundary allowed the request (when there is one).
    pub allowed_by_boundary: Option<bool>,
    /// Whether the organization policies allowed it (when there are any).
    pub allowed_by_organizations: Option<bool>,
    /// Why an implicit deny denied, in the terms of AWS's messages.
    pub lacking: Denial,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Allow,
    Deny,
}

/// The statements of `policies` that apply to the request, by effect, and the context
/// keys their conditions lacked.
#[derive(Default)]
struct Applying {
    allow: Vec<Matched>,
    deny: Vec<Matched>,
    missing: Vec<String>,
    /// Whether an allow names the caller itself (or everyone), not only its account.
    allow_named: bool,
}

fn applying(policies: &[Policy], request: &Request, resource_policy: bool) -> Applying {
    let mut out = Applying::default();
    for policy in policies {
        for statement in policy.statements.iter() {
            let Some(effect) = effect(statement) else {
                continue;
            };
            if !action_matches(statement, request.action) {
                continue;
            }
            let unset: Vec<String> = ["Resource", "NotResource"]
                .iter()
                .filter_map(|member| statement.get(member))
                .flat_map(Node::strings)
                .flat_map(|pattern| variables(&pattern))
                .filter(|name| request.value(name).is_none())
                .collect();
            merge_keys(&mut out.missing, unset);
            if !resource_matches(statement, request)
                || (resource_policy && !principal_matches(statement, request.caller))
            {
                continue;
            }
            let (holds, missing) = conditions_hold(statement, request);
            merge_keys(&mut out.missing, missing);
            if !holds {
                continue;
            }
            let matched = Matched {
                policy_id: policy.id.clone(),
                policy_kind: policy.kind.clone(),
                start: statement.start,
                end: statement.end,
            };
            match effect {
                Effect::Allow => {
                    out.allow_named |= resource_policy && names_caller(statement, request.caller);
                    out.allow.push(matched)
                }
                Effect::Deny => out.deny.push(matched),
            }
        }
    }
    out
}

/// Evaluates one request against a set of policies.
pub(super) fn evaluate(set: &PolicySet, request: &Request) -> Evaluation {
    let identity = applying(&set.identity, request, false);
    let boundary = set.boundary.as_ref().map(|b| applying(b, request, false));
    let organizations: Vec<Applying> = set
        .organizations
        .iter()
        .map(|level| applying(level, request, false))
        .collect();
    let resource = set
        .resource
        .as_ref()
        .map(|p| applying(std::slice::from_ref(p), request, true))
        .unwrap_or_default();
    let mut missing = Vec::new();
    let mut deny = Vec::new();
    for part in std::iter::once(&identity)
        .chain(boundary.iter())
        .chain(organizations.iter())
        .chain(std::iter::once(&resource))
    {
        merge_keys(&mut missing, part.missing.clone());
        deny.extend(part.deny.iter().cloned());
    }
    let session = set.session.as_ref().map(|p| applying(p, request, false));
    if let Some(session) = &session {
        merge_keys(&mut missing, session.missing.clone());
        deny.extend(session.deny.iter().cloned());
    }
    let permits = |a: &Applying| !a.allow.is_empty() && a.deny.is_empty();
    let allowed_by_boundary = boundary.as_ref().map(permits);
    let allowed_by_session = session.as_ref().map(permits);
    let allowed_by_organizations =
        (!organizations.is_empty()).then(|| organizations.iter().all(permits));
    let identity_allows = !identity.allow.is_empty()
        && allowed_by_boundary != Some(false)
        && allowed_by_session != Some(false);
    let resource_allows = !resource.allow.is_empty() || set.grant != Grant::None;
    let resource_names_caller = match set.account_delegates {
        true => resource.allow_named || set.grant == Grant::Caller,
        false => resource_allows,
    };
    let allowed = allowed_by_organizations != Some(false)
        && if set.resource_required {
            resource_allows && (identity_allows || resource_names_caller)
        } else if set.cross_account {
            identity_allows && resource_allows
        } else {
            identity_allows || resource_names_caller
        };
    let lacking = if identity.allow.is_empty() && !(set.cross_account || set.resource_required) {
        Denial::NoIdentityAllow
    } else if allowed_by_boundary == Some(false) {
        Denial::NoBoundaryAllow
    } else if allowed_by_session == Some(false) {
        Denial::NoSessionAllow
    } else if !resource_allows {
        Denial::NoResourceAllow
    } else {
        Denial::NoIdentityAllow
    };
    let (decision, matched) = if !deny.is_empty() {
        (Decision::ExplicitDeny, deny)
    } else if allowed {
        let mut matched = identity.allow.clone();
        matched.extend(resource.allow.iter().cloned());
        (Decision::Allowed, matched)
    } else {
        (Decision::ImplicitDeny, Vec::new())
    };
    Evaluation {
        decision,
        matched,
        missing,
        allowed_by_boundary,
        allowed_by_organizations,
        lacking,
    }
}

fn effect(statement: &Node) -> Option<Effect> {
    match statement.get("Effect")?.value {
        Json::String(ref e) if e == "Allow" => Some(Effect::Allow),
        Json::String(ref e) if e == "Deny" => Some(Effect::Deny),
        _ => None,
    }
}

/// `key` matches when any pattern does, `not_key` when none does; neither: `absent`.
fn list_matches(
    statement: &Node,
    key: &str,
    not_key: &str,
    absent: bool,
    matches: impl Fn(&str) -> bool,
) -> bool {
    if let Some(node) = statement.get(key) {
        return node.strings().iter().any(|p| matches(p));
    }
    if let Some(node) = statement.get(not_key) {
        return !node.strings().iter().any(|p| matches(p));
    }
    absent
}

fn action_matches(statement: &Node, action: &str) -> bool {
    list_matches(statement, "Action", "NotAction", false, |p| {
        glob(p, action, true)
    })
}

fn resource_matches(statement: &Node, request: &Request) -> bool {
    list_matches(statement, "Resource", "NotResource", true, |p| {
        request
            .substitute(p)
            .is_some_and(|p| glob(&p, request.resource, false))
    })
}

/// Whether a principal element (`"*"`, `{"AWS": ...}`, `{"Service": ...}`) names the
/// caller; an account id or `arn:aws:iam::<account>:root` names all of its principals.
fn principal_names(node: &Node, caller: Option<&str>) -> bool {
    let names = |pattern: &str| -> bool {
        if pattern == "*" {
            return true;
        }
        let Some(caller) = caller else {
            return false;
        };
        let account = caller.split(':').nth(4).unwrap_or_default();
        pattern == account
            || pattern == format!("arn:aws:iam::{account}:root")
            || glob(pattern, caller, false)
    };
    match &node.value {
        Json::String(s) => names(s),
        Json::Object(members) => members
            .iter()
            .any(|(_, v)| v.strings().iter().any(|p| names(p))),
        _ => false,
    }
}

/// Whether a statement's `Principal` names the caller itself or everyone, rather than
/// only the caller's account.
fn names_caller(statement: &Node, caller: Option<&str>) -> bool {
    let Some(node) = statement.get("Principal") else {
        return statement.get("NotPrincipal").is_some();
    };
    let names = |pattern: &str| pattern == "*" || caller.is_some_and(|c| glob(pattern, c, false));
    match &node.value {
        Json::String(s) => names(s),
        Json::Object(members) => members
            .iter()
            .any(|(_, v)| v.strings().iter().any(|p| names(p))),
        _ => false,
    }
}

fn principal_matches(statement: &Node, caller: Option<&str>) -> bool {
    if let Some(node) = statement.get("Principal") {
        return principal_names(node, caller);
    }
    if let Some(node) = statement.get("NotPrincipal") {
        return !principal_names(node, caller);
    }
    false
}

/// Whether all of a statement's conditions hold, and the keys they needed and lacked.
fn conditions_hold(statement: &Node, request: &Request) -> (bool, Vec<String>) {
    let mut holds = true;
    let mut missing = Vec::new();
    let Some(conditions) = statement.get("Condition") else {
        return (true, missing);
    };
    for (operator, block) in conditions.members() {
        for (key, expected) in block.members() {
            let actual = request.value(key);
            if actual.is_none() && !operator.ends_with("Null") {
                merge_keys(&mut missing, vec![key.clone()]);
            }
            let expected: Vec<String> = expected
                .strings()
                .iter()
                .filter_map(|v| request.substitute(v))
                .collect();
            holds &= condition_holds(operator, actual, &expected);
        }
    }
    (holds, missing)
}

/// Evaluates one condition: `operator` over the context's values of a key (`None` when
/// the context lacks it) and the policy's values.
pub(super) fn condition_holds(
    operator: &str,
    actual: Option<&[String]>,
    expected: &[String],
) -> bool {
    let (qualifier, operator) = match operator.split_once(':') {
        Some((qualifier, rest)) => (Some(qualifier), rest),
        None => (None, operator),
    };
    let (operator, if_exists) = match operator.strip_suffix("IfExists") {
        Some(base) => (base, true),
        None => (operator, false),
    };
    if operator == "Null" {
        let wants_absent = expected.iter().any(|v| v.eq_ignore_ascii_case("true"));
        return actual.is_none() == wants_absent;
    }
    let Some((base, negated)) = base_operator(operator) else {
        return false;
    };
    // A key the context lacks matches nothing: a negated operator (`StringNotEquals`)
    // holds, as AWS documents.
    let Some(actual) = actual else {
        return if_exists
            || match qualifier {
                Some(q) => q == "ForAllValues",
                None => negated,
            };
    };
    let one = |value: &str| -> bool {
        let any = expected.iter().any(|e| compare(base, value, e));
        any != negated
    };
    match qualifier {
        Some("ForAllValues") => actual.iter().all(|v| one(v)),
        Some("ForAnyValue") => actual.iter().any(|v| one(v)),
        _ if negated => actual.iter().all(|v| one(v)),
        _ => actual.iter().any(|v| one(v)),
    }
}

/// The comparisons conditions make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    String,
    StringIgnoreCase,
    StringLike,
    Numeric(Ordering),
    Date(Ordering),
    Bool,
    Binary,
    Ip,
    Arn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ordering {
    Equals,
    LessThan,
    LessThanEquals,
    GreaterThan,
    GreaterThanEquals,
}

/// An operator's comparison and whether it is the negated form (`StringNotEquals`).
fn base_operator(operator: &str) -> Option<(Compare, bool)> {
    let ordering = |suffix: &str| -> Option<(Ordering, bool)> {
        Some(match suffix {
            "Equals" => (Ordering::Equals, false),
            "NotEquals" => (Ordering::Equals, true),
            "LessThan" => (Ordering::LessThan, false),
            "LessThanEquals" => (Ordering::LessThanEquals, false),
            "GreaterThan" => (Ordering::GreaterThan, false),
            "GreaterThanEquals" => (Ordering::GreaterThanEquals, false),
            _ => return None,
        })
    };
    Some(match operator {
        "StringEquals" => (Compare::String, false),
        "StringNotEquals" => (Compare::String, true),
        "StringEqualsIgnoreCase" => (Compare::StringIgnoreCase, false),
        "StringNotEqualsIgnoreCase" => (Compare::StringIgnoreCase, true),
        "StringLike" => (Compare::StringLike, false),
        "StringNotLike" => (Compare::StringLike, true),
        "Bool" => (Compare::Bool, false),
        "BinaryEquals" => (Compare::Binary, false),
        "IpAddress" => (Compare::Ip, false),
        "NotIpAddress" => (Compare::Ip, true),
        "ArnEquals" | "ArnLike" => (Compare::Arn, false),
        "ArnNotEquals" | "ArnNotLike" => (Compare::Arn, true),
        other => {
            if let Some(suffix) = other.strip_prefix("Numeric") {
                let (o, negated) = ordering(suffix)?;
                (Compare::Numeric(o), negated)
            } else {
                let (o, negated) = ordering(other.strip_prefix("Date")?)?;
                (Compare::Date(o), negated)
            }
        }
    })
}

fn ordered<T: PartialOrd>(ordering: Ordering, actual: T, expected: T) -> bool {
    match ordering {
        Ordering::Equals => actual == expected,
        Ordering::LessThan => actual < expected,
        Ordering::LessThanEquals => actual <= expected,
        Ordering::GreaterThan => actual > expected,
        Ordering::GreaterThanEquals => actual >= expected,
    }
}

/// A date as conditions take it: ISO 8601, or seconds since the epoch.
fn date_millis(text: &str) -> Option<i64> {
    match text.parse::<i64>() {
        Ok(seconds) => seconds.checked_mul(1000),
        Err(_) => roto_core::timestamp::parse(text),
    }
}

fn compare(how: Compare, actual: &str, expected: &str) -> bool {
    match how {
        Compare::String => actual == expected,
        Compare::StringIgnoreCase => actual.eq_ignore_ascii_case(expected),
        Compare::StringLike => glob(expected, actual, false),
        Compare::Numeric(o) => match (actual.parse::<f64>(), expected.parse::<f64>()) {
            (Ok(a), Ok(e)) => ordered(o, a, e),
            _ => false,
        },
        Compare::Date(o) => match (date_millis(actual), date_millis(expected)) {
            (Some(a), Some(e)) => ordered(o, a, e),
            _ => false,
        },
        Compare::Bool => actual.eq_ignore_ascii_case(expected),
        Compare::Binary => actual == expected,
        Compare::Ip => in_cidr(actual, expected),
        Compare::Arn => arn_like(expected, actual),
    }
}

/// Whether `address` lies in `cidr` (an address alone is its own /32 or /128).
fn in_cidr(address: &str, cidr: &str) -> bool {
    let (network, bits) = match cidr.split_once('/') {
        Some((network, bits)) => (network, bits.parse::<u32>().ok()),
        None => (cidr, None),
    };
    let address = address.split('/').next().unwrap_or_default();
    match (address.parse::<IpAddr>(), network.parse::<IpAddr>()) {
        (Ok(IpAddr::V4(a)), Ok(IpAddr::V4(n))) => {
            let bits = bits.unwrap_or(32).min(32);
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (Ok(IpAddr::V6(a)), Ok(IpAddr::V6(n))) => {
            let bits = bits.unwrap_or(128).min(128);
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// ARN matching: the six parts compared one by one, each with wildcards.
fn arn_like(pattern: &str, arn: &str) -> bool {
    let p: Vec<&str> = pattern.splitn(6, ':').collect();
    let a: Vec<&str> = arn.splitn(6, ':').collect();
    p.len() == 6 && a.len() == 6 && p.iter().zip(&a).all(|(p, a)| glob(p, a, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Policy {
        Policy::parse(text, "PolicyInputList.1", "IAM Policy").unwrap()
    }

    fn request<'a>(
        action: &'a str,
        resource: &'a str,
        context: &'a [(String, Vec<String>)],
    ) -> Request<'a> {
        Request {
            action,
            resource,
            caller: Some("arn:aws:iam::123456789012:user/alice"),
            context,
        }
    }

    fn context(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    fn decide(set: &PolicySet, action: &str, resource: &str) -> Decision {
        evaluate(set, &request(action, resource, &[])).decision
    }

    const S3_READ: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:Get*","Resource":"arn:aws:s3:::bucket/*"}]}"#;

    #[test]
    fn allow_implicit_deny_and_explicit_deny() {
        let mut set = PolicySet {
            identity: vec![policy(S3_READ)],
            ..Default::default()
        };
        assert_eq!(
            decide(&set, "s3:GetObject", "arn:aws:s3:::bucket/k"),
            Decision::Allowed
        );
        assert_eq!(
            decide(&set, "S3:getobject", "arn:aws:s3:::bucket/k"),
            Decision::Allowed
        );
        assert_eq!(
            decide(&set, "s3:PutObject", "arn:aws:s3:::bucket/k"),
            Decision::ImplicitDeny
        );
        assert_eq!(
            decide(&set, "s3:GetObject", "arn:aws:s3:::other/k"),
            Decision::ImplicitDeny
        );
        set.identity.push(policy(
            r#"{"Statement":{"Effect":"Deny","NotAction":"s3:List*","Resource":"arn:aws:s3:::bucket/secret*"}}"#,
        ));
        let eval = evaluate(
            &set,
            &request("s3:GetObject", "arn:aws:s3:::bucket/secret.txt", &[]),
        );
        assert_eq!(eval.decision, Decision::ExplicitDeny);
        assert_eq!(eval.matched.len(), 1);
        assert_eq!(
            eval.matched[0].start,
            Position {
                line: 1,
                column: 14
            }
        );
    }

    #[test]
    fn not_resource_and_policy_variables() {
        let set = PolicySet {
            identity: vec![policy(
                r#"{"Statement":[{"Effect":"Allow","Action":"s3:*","NotResource":"arn:aws:s3:::private/*"},
                {"Effect":"Allow","Action":"dynamodb:GetItem","Resource":"arn:aws:dynamodb:*:*:table/${aws:username}"}]}"#,
            )],
            ..Default::default()
        };
        assert_eq!(
            decide(&set, "s3:GetObject", "arn:aws:s3:::public/k"),
            Decision::Allowed
        );
        assert_eq!(
            decide(&set, "s3:GetObject", "arn:aws:s3:::private/k"),
            Decision::ImplicitDeny
        );
        let ctx = context(&[("aws:username", &["alice"])]);
        let table = "arn:aws:dynamodb:us-east-1:1:table/alice";
        assert_eq!(
            evaluate(&set, &request("dynamodb:GetItem", table, &ctx)).decision,
            Decision::Allowed
        );
        assert_eq!(
            decide(&set, "dynamodb:GetItem", table),
            Decision::ImplicitDeny
        );
    }

    #[test]
    fn boundaries_and_organizations_limit_allows() {
        let mut set = PolicySet {
            identity: vec![policy(
                r#"{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}"#,
            )],
            boundary: Some(vec![policy(S3_READ)]),
            ..Default::default()
        };
        let eval = evaluate(&set, &request("sqs:SendMessage", "*", &[]));
        assert_eq!(
            (eval.decision, eval.allowed_by_boundary),
            (Decision::ImplicitDeny, Some(false))
        );
        let eval = evaluate(&set, &request("s3:GetObject", "arn:aws:s3:::bucket/x", &[]));
        assert_eq!(
            (eval.decision, eval.allowed_by_boundary),
            (Decision::Allowed, Some(true))
        );
        set.boundary = None;
        set.organizations = vec![vec![policy(
            r#"{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*"}}"#,
        )]];
        let eval = evaluate(&set, &request("sqs:SendMessage", "*", &[]));
        assert_eq!(
            (eval.decision, eval.allowed_by_organizations),
            (Decision::ImplicitDeny, Some(false))
        );
    }

    #[test]
    fn resource_policies_allow_named_principals() {
        let resource = Policy::parse(
            r#"{"Statement":{"Effect":"Allow","Principal":{"AWS":"123456789012"},"Action":"sqs:*","Resource":"*"}}"#,
            "ResourcePolicy",
            "resource",
        );
        let mut set = PolicySet {
            resource,
            ..Default::default()
        };
        assert_eq!(
            decide(&set, "sqs:SendMessage", "arn:aws:sqs:us-east-1:1:q"),
            Decision::Allowed
        );
        set.cross_account = true;
        assert_eq!(
            decide(&set, "sqs:SendMessage", "arn:aws:sqs:us-east-1:1:q"),
            Decision::ImplicitDeny
        );
        set.resource = Policy::parse(
            r#"{"Statement":{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::999999999999:root"},"Action":"sqs:*","Resource":"*"}}"#,
            "ResourcePolicy",
            "resource",
        );
        set.cross_account = false;
        assert_eq!(decide(&set, "sqs:SendMessage", "*"), Decision::ImplicitDeny);
    }

    #[test]
    fn condition_operators() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // (operator, the context's values, the policy's values, whether it holds)
        type Case<'a> = (&'a str, Option<&'a [&'a str]>, &'a [&'a str], bool);
        let cases: &[Case] = &[
            ("StringEquals", Some(&["a"]), &["a", "b"], true),
            ("StringEquals", Some(&["A"]), &["a"], false),
            ("StringEqualsIgnoreCase", Some(&["A"]), &["a"], true),
            ("StringNotEquals", Some(&["c"]), &["a", "b"], true),
            ("StringNotEquals", None, &["a"], true),
            ("ForAnyValue:StringNotEquals", None, &["a"], false),
            ("StringNotEqualsIfExists", None, &["a"], true),
            (
                "StringLike",
                Some(&["home/alice/x"]),
                &["home/alice/*"],
                true,
            ),
            (
                "StringNotLike",
                Some(&["home/bob/x"]),
                &["home/alice/*"],
                true,
            ),
            ("NumericLessThan", Some(&["5"]), &["10"], true),
            ("NumericGreaterThanEquals", Some(&["5"]), &["10"], false),
            ("NumericNotEquals", Some(&["5"]), &["5"], false),
            (
                "DateGreaterThan",
                Some(&["2019-04-25T11:00:00Z"]),
                &["2018-08-16T12:00:00Z"],
                true,
            ),
            (
                "DateLessThan",
                Some(&["1500000000"]),
                &["2018-08-16T12:00:00Z"],
                true,
            ),
            ("Bool", Some(&["True"]), &["true"], true),
            ("Bool", None, &["false"], false),
            (
                "IpAddress",
                Some(&["203.0.113.7"]),
                &["203.0.113.0/24"],
                true,
            ),
            (
                "NotIpAddress",
                Some(&["198.51.100.1"]),
                &["203.0.113.0/24"],
                true,
            ),
            (
                "IpAddress",
                Some(&["2001:db8::1"]),
                &["2001:db8::/32"],
                true,
            ),
            (
                "ArnLike",
                Some(&["arn:aws:iam::1:role/app-x"]),
                &["arn:aws:iam::*:role/app-*"],
                true,
            ),
            (
                "ArnNotLike",
                Some(&["arn:aws:iam::1:role/app-x"]),
                &["arn:aws:iam::*:role/app-*"],
                false,
            ),
            ("Null", None, &["true"], true),
            ("Null", Some(&["x"]), &["true"], false),
            ("Null", Some(&["x"]), &["false"], true),
            ("ForAnyValue:StringEquals", Some(&["a", "z"]), &["a"], true),
            (
                "ForAllValues:StringEquals",
                Some(&["a", "z"]),
                &["a"],
                false,
            ),
            (
                "ForAllValues:StringEquals",
                Some(&["a", "b"]),
                &["a", "b"],
                true,
            ),
            ("ForAllValues:StringEquals", None, &["a"], true),
            ("ForAnyValue:StringEquals", None, &["a"], false),
            ("StringSomething", Some(&["a"]), &["a"], false),
        ];
        for (operator, actual, expected, want) in cases {
            let actual = actual.map(s);
            assert_eq!(
                condition_holds(operator, actual.as_deref(), &s(expected)),
                *want,
                "{operator} {actual:?} {expected:?}"
            );
        }
    }

    #[test]
    fn missing_context_keys_are_reported_for_matching_statements_only() {
        let set = PolicySet {
            identity: vec![policy(
                r#"{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"s3:prefix":"home/"},"Bool":{"aws:SecureTransport":"true"}}},
                {"Effect":"Allow","Action":"ec2:*","Resource":"*","Condition":{"StringEquals":{"ec2:Region":"us-east-1"}}}]}"#,
            )],
            ..Default::default()
        };
        let ctx = context(&[("aws:securetransport", &["true"])]);
        let eval = evaluate(&set, &request("s3:ListBucket", "*", &ctx));
        assert_eq!(eval.decision, Decision::ImplicitDeny);
        assert_eq!(eval.missing, ["s3:prefix"]);
    }

    #[test]
    fn context_keys_come_in_order_of_appearance() {
        let p = policy(
            r#"{"Statement":{"Effect":"Allow","Action":"dynamodb:*","Resource":"arn:aws:dynamodb:us-west-2:1:table/${aws:username}","Condition":{"DateGreaterThan":{"aws:CurrentTime":"2015-08-16T12:00:00Z"}}}}"#,
        );
        assert_eq!(p.context_keys(), ["aws:username", "aws:CurrentTime"]);
    }

    #[test]
    fn namespaces_granted_by_allows() {
        let p = policy(
            r#"{"Statement":[{"Effect":"Allow","Action":["s3:Get*","SQS:send*","*:Describe*"],"Resource":"*"},{"Effect":"Deny","Action":"kms:*","Resource":"*"}]}"#,
        );
        assert_eq!(p.named_namespaces(), ["s3", "sqs"]);
        assert!(p.grants_namespace("s3") && p.grants_namespace("ec2"));
        let all_but_iam =
            policy(r#"{"Statement":{"Effect":"Allow","NotAction":"iam:*","Resource":"*"}}"#);
        assert!(all_but_iam.grants_namespace("kms") && !all_but_iam.grants_namespace("iam"));
        let only_s3 = policy(r#"{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*"}}"#);
        assert!(!only_s3.grants_namespace("sqs"));
    }
}
