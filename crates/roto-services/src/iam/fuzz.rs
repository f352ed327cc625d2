//! Entry point for the fuzzer (`crates/roto-fuzz`): a policy document checked as IAM checks
//! it and, once accepted, evaluated as the policy simulator evaluates it. It exists so the
//! fuzzer can reach private modules; nothing in the server calls it.

use super::document;
use super::evaluate::{evaluate, Policy, PolicySet, Request};

/// Checks `text` as identity (managed and inline) and trust policies; evaluates an accepted
/// one against a fixed request, as identity and as resource policy.
pub fn fuzz_policy_document(text: &str) {
    let _ = document::check_trust(text);
    let _ = document::check_identity(text, true);
    if document::check_identity(text, false).is_err() {
        return;
    }
    let Some(policy) = Policy::parse(text, "PolicyInputList.1", "IAM Policy") else {
        return;
    };
    policy.named_namespaces();
    policy.context_keys();
    let context = [
        ("aws:SourceIp".to_string(), vec!["10.1.2.3".to_string()]),
        (
            "s3:prefix".to_string(),
            vec!["home/".to_string(), "x".to_string()],
        ),
        (
            "aws:CurrentTime".to_string(),
            vec!["2026-01-01T00:00:00Z".to_string()],
        ),
    ];
    let request = Request {
        action: "s3:GetObject",
        resource: "arn:aws:s3:::bucket/key",
        caller: Some("arn:aws:iam::123456789012:user/alice"),
        context: &context,
    };
    let set = PolicySet {
        identity: vec![policy.clone()],
        boundary: Some(vec![policy.clone()]),
        resource: Some(policy),
        ..PolicySet::default()
    };
    evaluate(&set, &request);
}
