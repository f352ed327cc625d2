//! Policy document checks, in the order and words of IAM's own parser.
//!
//! IAM stores documents verbatim but refuses, with `MalformedPolicyDocument`, ones it
//! cannot parse: first the grammar ("Syntax errors in policy."), then the version (managed
//! policies need `2012-10-17`), then the case-sensitive legacy parse, then the statement
//! rules (unique Sids, an action and a resource each, ARN-shaped resources, vendor-prefixed
//! actions). Trust policies are only checked to be JSON, as IAM says "This policy contains
//! invalid Json" before anything else there. Nothing here evaluates a policy.

use roto_core::{AwsError, AwsResult};
use serde_json::{Map, Value as Json};

use super::store::Kind;

fn malformed(message: impl Into<String>) -> AwsError {
    AwsError::new("MalformedPolicyDocumentException", message)
}

const TOP_LEVEL: &[&str] = &["Version", "Id", "Statement"];
const STATEMENT: &[&str] = &[
    "Sid",
    "Effect",
    "Action",
    "NotAction",
    "Resource",
    "NotResource",
    "Condition",
];
const VERSIONS: &[&str] = &["2008-10-17", "2012-10-17"];

/// Checks a trust (assume-role) policy: a JSON object.
pub(super) fn check_trust(document: &str) -> AwsResult<()> {
    match serde_json::from_str::<Json>(document) {
        Ok(Json::Object(_)) => check_size(size(document), "ACLSizePerRole", 2048),
        _ => Err(malformed("This policy contains invalid Json")),
    }
}

/// A document's size as IAM counts it against its quotas: white space is free.
pub(super) fn size(document: &str) -> usize {
    document.chars().filter(|c| !c.is_whitespace()).count()
}

/// `LimitExceeded` when `size` is over the quota `name`.
pub(super) fn check_size(size: usize, name: &str, limit: usize) -> AwsResult<()> {
    if size > limit {
        return Err(AwsError::new(
            "LimitExceededException",
            format!("Cannot exceed quota for {name}: {limit}"),
        ));
    }
    Ok(())
}

/// The quota on the inline policies of one entity of `kind`, all together.
pub(super) fn inline_quota(kind: Kind) -> (&'static str, usize) {
    match kind {
        Kind::User => ("UserPolicySize", 2048),
        Kind::Group => ("GroupPolicySize", 5120),
        _ => ("RolePolicySize", 10240),
    }
}

/// Checks an identity policy (managed when `managed`, else inline).
pub(super) fn check_identity(document: &str, managed: bool) -> AwsResult<()> {
    let syntax = || malformed("Syntax errors in policy.");
    let Ok(Json::Object(top)) = serde_json::from_str::<Json>(document) else {
        return Err(syntax());
    };
    let statements = statements(&top).ok_or_else(syntax)?;
    if statements
        .iter()
        .any(|s| s.contains_key("Principal") || s.contains_key("NotPrincipal"))
    {
        return Err(malformed("Policy document should not specify a principal."));
    }
    if !top.keys().all(|k| TOP_LEVEL.contains(&k.as_str()))
        || !statements.iter().all(|s| statement_syntax_ok(s))
        || top.get("Id").is_some_and(|id| !id.is_string())
        || top
            .get("Version")
            .is_some_and(|v| !v.as_str().is_some_and(|v| VERSIONS.contains(&v)))
    {
        return Err(syntax());
    }
    if managed && top.get("Version").and_then(Json::as_str) != Some("2012-10-17") {
        return Err(malformed(
            "Policy document must be version 2012-10-17 or greater.",
        ));
    }
    if statements.iter().any(|s| {
        !matches!(
            s.get("Effect").and_then(Json::as_str),
            Some("Allow" | "Deny")
        )
    }) {
        return Err(malformed("The policy failed legacy parsing"));
    }
    let mut sids: Vec<&str> = Vec::new();
    for sid in statements
        .iter()
        .filter_map(|s| s.get("Sid").and_then(Json::as_str))
    {
        if !sid.is_empty() && sids.contains(&sid) {
            return Err(malformed(
                "Statement IDs (SID) in a single policy must be unique.",
            ));
        }
        sids.push(sid);
    }
    if managed {
        check_size(size(document), "PolicySize", 6144)?;
    }
    if !statements.iter().all(|s| present(s, "Action", "NotAction")) {
        return Err(malformed("Policy statement must contain actions."));
    }
    if !statements
        .iter()
        .all(|s| present(s, "Resource", "NotResource"))
    {
        return Err(malformed("Policy statement must contain resources."));
    }
    for s in &statements {
        for resource in strings(s, "Resource").chain(strings(s, "NotResource")) {
            if resource != "*" && !resource.contains(':') {
                return Err(malformed(format!(
                    "Resource {resource} must be in ARN format or \"*\"."
                )));
            }
        }
    }
    for s in &statements {
        for action in strings(s, "Action").chain(strings(s, "NotAction")) {
            check_action(action)?;
        }
    }
    Ok(())
}

/// The statements: one object, or a non-empty list of objects.
fn statements(top: &Map<String, Json>) -> Option<Vec<&Map<String, Json>>> {
    match top.get("Statement")? {
        Json::Object(s) => Some(vec![s]),
        Json::Array(list) if !list.is_empty() => list.iter().map(Json::as_object).collect(),
        _ => None,
    }
}

fn string_or_strings(value: &Json) -> bool {
    match value {
        Json::String(_) => true,
        Json::Array(items) => items.iter().all(Json::is_string),
        _ => false,
    }
}

fn statement_syntax_ok(s: &Map<String, Json>) -> bool {
    let keys_ok = s.keys().all(|k| STATEMENT.contains(&k.as_str()));
    let both = |a: &str, b: &str| s.contains_key(a) && s.contains_key(b);
    let exclusive = !both("Action", "NotAction") && !both("Resource", "NotResource");
    let effect_ok = s
        .get("Effect")
        .and_then(Json::as_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("allow") || e.eq_ignore_ascii_case("deny"));
    let lists_ok = ["Action", "NotAction", "Resource", "NotResource"]
        .iter()
        .all(|k| s.get(*k).is_none_or(string_or_strings));
    let sid_ok = s.get("Sid").is_none_or(Json::is_string);
    let condition_ok = s.get("Condition").is_none_or(|c| {
        c.as_object().is_some_and(|ops| {
            ops.values().all(|keys| {
                keys.as_object()
                    .is_some_and(|keys| keys.values().all(|v| !v.is_object() && !v.is_null()))
            })
        })
    });
    keys_ok && exclusive && effect_ok && lists_ok && sid_ok && condition_ok
}

/// Whether a statement has `key` or `not_key`, and not as an empty list.
fn present(s: &Map<String, Json>, key: &str, not_key: &str) -> bool {
    match s.get(key).or_else(|| s.get(not_key)) {
        Some(Json::Array(items)) => !items.is_empty(),
        Some(_) => true,
        None => false,
    }
}

fn strings<'a>(s: &'a Map<String, Json>, key: &str) -> impl Iterator<Item = &'a str> {
    let items: Vec<&'a str> = match s.get(key) {
        Some(Json::String(one)) => vec![one.as_str()],
        Some(Json::Array(many)) => many.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    items.into_iter()
}

fn check_action(action: &str) -> AwsResult<()> {
    if action == "*" {
        return Ok(());
    }
    let mut parts = action.split(':');
    let vendor = parts.next().unwrap_or_default();
    match (parts.next(), parts.next()) {
        (None, _) => Err(malformed(
            "Actions/Conditions must be prefaced by a vendor, e.g., iam, sdb, ec2, etc.",
        )),
        (Some(_), Some(_)) => Err(malformed("Actions/Condition can contain only one colon.")),
        (Some(_), None)
            if vendor
                .chars()
                .any(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '.')) =>
        {
            Err(malformed(format!("Vendor {vendor} is not valid")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(doc: &str, managed: bool) -> String {
        match check_identity(doc, managed) {
            Ok(()) => String::new(),
            Err(e) => e.message,
        }
    }

    const GOOD: &str = r#"{"Version":"2012-10-17","Statement":[{"Sid":"a","Effect":"Allow","Action":["s3:GetObject"],"Resource":"arn:aws:s3:::b/*","Condition":{"Bool":{"aws:SecureTransport":"true"}}}]}"#;

    #[test]
    fn well_formed_policies_pass() {
        assert_eq!(message(GOOD, true), "");
        let single = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny","NotAction":"iam:*","NotResource":"*"}}"#;
        assert_eq!(message(single, true), "");
    }

    #[test]
    fn each_rule_reports_iam_wording() {
        let cases = [
            ("{", "Syntax errors in policy."),
            (r#"{"Version":"2012-10-17"}"#, "Syntax errors in policy."),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Maybe","Action":"s3:*","Resource":"*"}]}"#,
                "Syntax errors in policy.",
            ),
            (
                r#"{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#,
                "Policy document must be version 2012-10-17 or greater.",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"allow","Action":"s3:*","Resource":"*"}]}"#,
                "The policy failed legacy parsing",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Sid":"x","Effect":"Allow","Action":"s3:*","Resource":"*"},{"Sid":"x","Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#,
                "Statement IDs (SID) in a single policy must be unique.",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Resource":"*"}]}"#,
                "Policy statement must contain actions.",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*"}]}"#,
                "Policy statement must contain resources.",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"bucket"}]}"#,
                "Resource bucket must be in ARN format or \"*\".",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"GetObject","Resource":"*"}]}"#,
                "Actions/Conditions must be prefaced by a vendor, e.g., iam, sdb, ec2, etc.",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}]}"#,
                "Policy document should not specify a principal.",
            ),
        ];
        for (doc, expected) in cases {
            assert_eq!(message(doc, true), expected, "{doc}");
        }
    }

    #[test]
    fn inline_policies_may_omit_the_version() {
        let doc = r#"{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#;
        assert_eq!(message(doc, false), "");
    }

    #[test]
    fn trust_policies_need_only_be_json_objects() {
        assert!(check_trust(r#"{"Statement":[]}"#).is_ok());
        assert_eq!(
            check_trust("[]").unwrap_err().message,
            "This policy contains invalid Json"
        );
    }
}
