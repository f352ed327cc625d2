//! An authorizer's policy document judged against the method (REST) or route (HTTP API)
//! ARN being invoked: the statements whose actions cover `execute-api:Invoke` and whose
//! resources match the ARN decide, an explicit Deny winning, as API Gateway reads them for
//! both API kinds.

use serde_json::Value as Json;

use crate::glob::glob;

/// The policy's verdict on `arn`: `Some(true)` allowed, `Some(false)` explicitly denied,
/// `None` not allowed.
pub fn verdict(policy: &Json, arn: &str) -> Option<bool> {
    let list = |v: &Json| -> Vec<String> {
        match v {
            Json::String(s) => vec![s.clone()],
            Json::Array(a) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let statements = match &policy["Statement"] {
        Json::Array(a) => a.clone(),
        single @ Json::Object(_) => vec![single.clone()],
        _ => Vec::new(),
    };
    let mut allowed = None;
    for statement in statements {
        let invokes = list(&statement["Action"])
            .iter()
            .any(|a| glob(&a.to_ascii_lowercase(), "execute-api:invoke", false));
        let covers = list(&statement["Resource"])
            .iter()
            .any(|r| glob(r, arn, false));
        if !(invokes && covers) {
            continue;
        }
        match statement["Effect"].as_str() {
            Some("Deny") => return Some(false),
            Some("Allow") => allowed = Some(true),
            _ => {}
        }
    }
    allowed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn policies_allow_deny_or_say_nothing_about_an_arn() {
        let arn = "arn:aws:execute-api:us-east-1:000000000000:abc/prod/GET/items/7";
        let allow = json!({"Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "arn:aws:execute-api:us-east-1:000000000000:abc/*/GET/*"}]});
        assert_eq!(verdict(&allow, arn), Some(true));
        let deny = json!({"Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "*"},
            {"Action": "execute-api:*", "Effect": "Deny", "Resource": [arn]}]});
        assert_eq!(verdict(&deny, arn), Some(false));
        let other = json!({"Statement": {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "arn:aws:execute-api:*:*:abc/prod/POST/*"}});
        assert_eq!(verdict(&other, arn), None);
        assert!(glob("a*b?d", "axxbcd", false) && !glob("a*b", "axxc", false));
    }

    #[test]
    fn policies_allow_matching_resources_unless_denied() {
        let arn = "arn:aws:execute-api:us-east-1:1:abc/$default/GET/items";
        let allow = json!({"Version": "2012-10-17", "Statement": [
            {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": ["arn:aws:execute-api:us-east-1:1:abc/*/GET/*"]}]});
        assert_eq!(verdict(&allow, arn), Some(true));
        assert_ne!(
            verdict(
                &allow,
                "arn:aws:execute-api:us-east-1:1:abc/$default/POST/items"
            ),
            Some(true)
        );
        let deny = json!({"Statement": [
            {"Action": "execute-api:*", "Effect": "Allow", "Resource": "*"},
            {"Action": "execute-api:Invoke", "Effect": "Deny", "Resource": arn}]});
        assert_ne!(verdict(&deny, arn), Some(true));
        assert_ne!(verdict(&Json::Null, arn), Some(true));
        assert!(glob("a?c*", "abcdef", false) && !glob("a?c", "abcd", false));
    }
}
