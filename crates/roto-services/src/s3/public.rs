//! Whether a bucket policy is public, as S3 decides it for `GetBucketPolicyStatus` and
//! Block Public Access: some `Allow` statement names every principal (`"*"` or
//! `{"AWS": "*"}`) without a condition that pins one of the keys S3 counts as limiting
//! (the caller's account, organization, user id, source ARN, VPC or endpoint) to fixed
//! values, or `aws:SourceIp` to a range narrower than the whole internet.

use serde_json::Value as Json;

/// The condition keys whose fixed values make a statement non-public.
const LIMITING_KEYS: &[&str] = &[
    "aws:sourcearn",
    "aws:sourcevpc",
    "aws:sourcevpce",
    "aws:sourceaccount",
    "aws:sourceowner",
    "aws:principalaccount",
    "aws:principalorgid",
    "aws:principalarn",
    "aws:userid",
    "s3:dataaccesspointarn",
    "s3:dataaccesspointaccount",
];

/// Whether the policy text grants public access.
pub(crate) fn policy_is_public(text: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<Json>(text) else {
        return false;
    };
    let statements = match doc.get("Statement") {
        Some(Json::Array(items)) => items.iter().collect(),
        Some(one @ Json::Object(_)) => vec![one],
        _ => Vec::new(),
    };
    statements.into_iter().any(statement_is_public)
}

fn statement_is_public(statement: &Json) -> bool {
    statement.get("Effect").and_then(Json::as_str) == Some("Allow")
        && statement.get("Principal").is_some_and(names_everyone)
        && !statement.get("Condition").is_some_and(limits)
}

fn strings(value: &Json) -> Vec<&str> {
    match value {
        Json::String(s) => vec![s.as_str()],
        Json::Array(items) => items.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

fn names_everyone(principal: &Json) -> bool {
    match principal {
        Json::String(s) => s == "*",
        Json::Object(map) => map
            .get("AWS")
            .is_some_and(|aws| strings(aws).contains(&"*")),
        _ => false,
    }
}

/// Whether a condition block pins a limiting key to fixed values.
fn limits(condition: &Json) -> bool {
    let Some(blocks) = condition.as_object() else {
        return false;
    };
    blocks.iter().any(|(operator, block)| {
        let operator = operator.to_ascii_lowercase();
        let negated = operator.contains("not");
        let Some(keys) = block.as_object() else {
            return false;
        };
        !negated
            && keys.iter().any(|(key, values)| {
                let key = key.to_ascii_lowercase();
                let values = strings(values);
                if key == "aws:sourceip" {
                    return operator.starts_with("ipaddress")
                        && !values.is_empty()
                        && values.iter().all(|cidr| narrow(cidr));
                }
                LIMITING_KEYS.contains(&key.as_str())
                    && !values.is_empty()
                    && values.iter().all(|v| !v.contains(['*', '?']))
            })
    })
}

/// Whether a CIDR range is narrower than S3's public threshold (an IPv4 prefix of at least
/// 8 bits, an IPv6 prefix of at least 32).
fn narrow(cidr: &str) -> bool {
    let (address, bits) = cidr.split_once('/').unwrap_or((cidr, "128"));
    let bits: u32 = bits.parse().unwrap_or(0);
    match address.contains(':') {
        true => bits >= 32,
        false => bits >= 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_without_limits_is_public() {
        let public = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}]}"#;
        assert!(policy_is_public(public));
        let aws = r#"{"Statement":{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"*","Resource":"*"}}"#;
        assert!(policy_is_public(aws));
    }

    #[test]
    fn named_principals_denies_and_limiting_conditions_are_not_public() {
        let named = r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"*","Resource":"*"}]}"#;
        assert!(!policy_is_public(named));
        let deny =
            r#"{"Statement":[{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*"}]}"#;
        assert!(!policy_is_public(deny));
        let account = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:SourceAccount":"111111111111"}}}]}"#;
        assert!(!policy_is_public(account));
        let ip = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/24"}}}]}"#;
        assert!(!policy_is_public(ip));
        let wide = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}}]}"#;
        assert!(policy_is_public(wide));
    }
}
