//! Unit tests for SNS's pure parts: filter-policy wording and page cutting.

use super::subscriptions::check_filter_policy;
use super::*;

#[test]
fn filter_policy_errors_carry_sns_wording() {
    let err = check_filter_policy(r#"{"a": [{"foo": 1}]}"#, None).unwrap_err();
    assert_eq!(err.code, "InvalidParameterException");
    assert_eq!(
        err.message,
        "Invalid parameter: FilterPolicy: Unrecognized match type foo"
    );
    let err = check_filter_policy(r#"{"a": [{"numeric": ["<", "1"]}]}"#, None).unwrap_err();
    assert!(err
        .message
        .starts_with("Invalid parameter: Attributes Reason: FilterPolicy: Value of < must be numeric\n at [Source: "));
    let nested = r#"{"a": {"b": ["x"]}}"#;
    assert!(check_filter_policy(nested, None).is_err());
    assert!(check_filter_policy(nested, Some(&"MessageBody".to_string())).is_ok());
}

#[test]
fn pages_cut_at_the_limit_and_name_the_last_item() {
    let (items, token) = page(vec!["a", "b", "c"], 2, |s| s);
    assert_eq!(items, ["a", "b"]);
    assert_eq!(token.as_deref(), Some("b"));
    let (items, token) = page(vec!["a"], 2, |s| s);
    assert_eq!(items, ["a"]);
    assert_eq!(token, None);
}
