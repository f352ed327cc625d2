//! One test per operator, its edge cases, and the validation errors.

use serde_json::json;

use super::*;

fn matches(pattern: Json, document: Json) -> bool {
    Pattern::from_json(&pattern, Dialect::EventBridge)
        .unwrap()
        .matches(&document)
}

fn refused(pattern: Json, dialect: Dialect) -> PatternError {
    Pattern::from_json(&pattern, dialect).unwrap_err()
}

#[test]
fn exact_values_match_by_type_and_numbers_numerically() {
    let p = json!({"colour": ["red", "blue"], "size": [3]});
    assert!(matches(p.clone(), json!({"colour": "blue", "size": 3.0})));
    assert!(!matches(p.clone(), json!({"colour": "green", "size": 3})));
    assert!(!matches(p.clone(), json!({"colour": "red", "size": "3"})));
    assert!(!matches(p, json!({"colour": "red"})));
    assert!(matches(json!({"on": [true]}), json!({"on": true})));
    assert!(matches(json!({"gone": [null]}), json!({"gone": null})));
    assert!(!matches(json!({"gone": [null]}), json!({})));
}

#[test]
fn nested_fields_and_arrays_are_flattened() {
    let p = json!({"detail": {"state": ["running"]}});
    assert!(matches(p.clone(), json!({"detail": {"state": "running"}})));
    assert!(matches(
        p.clone(),
        json!({"detail": [{"state": "x"}, {"state": "running"}]})
    ));
    assert!(matches(
        p.clone(),
        json!({"detail": {"state": ["stopped", "running"]}})
    ));
    assert!(!matches(
        p.clone(),
        json!({"detail": {"state": {"running": 1}}})
    ));
    assert!(!matches(p, json!({"detail": "running"})));
}

#[test]
fn prefix_and_suffix_with_and_without_case() {
    assert!(matches(
        json!({"k": [{"prefix": "ab"}]}),
        json!({"k": "abc"})
    ));
    assert!(!matches(
        json!({"k": [{"prefix": "ab"}]}),
        json!({"k": "ABc"})
    ));
    assert!(!matches(json!({"k": [{"prefix": "1"}]}), json!({"k": 12})));
    let ci = json!({"k": [{"prefix": {"equals-ignore-case": "ab"}}]});
    assert!(matches(ci, json!({"k": "ABc"})));
    assert!(matches(
        json!({"k": [{"suffix": ".png"}]}),
        json!({"k": "a.png"})
    ));
    assert!(!matches(
        json!({"k": [{"suffix": ".png"}]}),
        json!({"k": "a.jpg"})
    ));
    let ci = json!({"k": [{"suffix": {"equals-ignore-case": ".PNG"}}]});
    assert!(matches(ci, json!({"k": "a.png"})));
}

#[test]
fn equals_ignore_case() {
    let p = json!({"k": [{"equals-ignore-case": "Alice"}]});
    assert!(matches(p.clone(), json!({"k": "aLiCe"})));
    assert!(!matches(p, json!({"k": "alicia"})));
}

#[test]
fn anything_but_values_lists_and_forms() {
    let p = json!({"k": [{"anything-but": ["a", "b"]}]});
    assert!(matches(p.clone(), json!({"k": "c"})));
    assert!(!matches(p.clone(), json!({"k": "a"})));
    assert!(!matches(p, json!({})), "anything-but needs the field");
    assert!(matches(
        json!({"n": [{"anything-but": 5}]}),
        json!({"n": 6})
    ));
    assert!(!matches(
        json!({"n": [{"anything-but": 5}]}),
        json!({"n": 5.0})
    ));
    let prefix = json!({"k": [{"anything-but": {"prefix": "init"}}]});
    assert!(matches(prefix.clone(), json!({"k": "done"})));
    assert!(!matches(prefix, json!({"k": "initial"})));
    let suffix = json!({"k": [{"anything-but": {"suffix": ".tmp"}}]});
    assert!(!matches(suffix, json!({"k": "x.tmp"})));
    let ci = json!({"k": [{"anything-but": {"equals-ignore-case": ["A", "b"]}}]});
    assert!(!matches(ci.clone(), json!({"k": "B"})));
    assert!(matches(ci, json!({"k": "c"})));
    let wild = json!({"k": [{"anything-but": {"wildcard": "*.tmp"}}]});
    assert!(!matches(wild.clone(), json!({"k": "a.tmp"})));
    assert!(matches(wild, json!({"k": "a.txt"})));
}

#[test]
fn numeric_ranges() {
    let p = json!({"n": [{"numeric": [">", 0, "<=", 5]}]});
    assert!(matches(p.clone(), json!({"n": 5})));
    assert!(matches(p.clone(), json!({"n": 0.5})));
    assert!(!matches(p.clone(), json!({"n": 0})));
    assert!(!matches(p.clone(), json!({"n": "3"})));
    assert!(matches(
        json!({"n": [{"numeric": ["=", 3.0]}]}),
        json!({"n": 3})
    ));
    assert!(matches(
        json!({"n": [{"numeric": ["<", 0]}]}),
        json!({"n": -1e3})
    ));
    assert!(matches(
        json!({"n": [{"numeric": [">=", 10]}]}),
        json!({"n": [1, 10]})
    ));
}

#[test]
fn exists_true_and_false() {
    let yes = json!({"k": [{"exists": true}]});
    assert!(matches(yes.clone(), json!({"k": "anything"})));
    assert!(!matches(yes.clone(), json!({})));
    assert!(
        !matches(yes, json!({"k": {"nested": 1}})),
        "objects are not leaves"
    );
    let no = json!({"k": [{"exists": false}]});
    assert!(matches(no.clone(), json!({"other": 1})));
    assert!(!matches(no, json!({"k": 0})));
}

#[test]
fn or_joins_sub_patterns() {
    let p = json!({"source": ["app"], "$or": [{"a": [1]}, {"b": [{"prefix": "x"}]}]});
    assert!(matches(p.clone(), json!({"source": "app", "a": 1})));
    assert!(matches(p.clone(), json!({"source": "app", "b": "xy"})));
    assert!(!matches(
        p.clone(),
        json!({"source": "app", "a": 2, "b": "y"})
    ));
    assert!(!matches(p, json!({"source": "other", "a": 1})));
    let nested = json!({"d": {"$or": [{"a": [1]}, {"b": [2]}]}});
    assert!(matches(nested, json!({"d": {"b": 2}})));
}

#[test]
fn cidr_for_ipv4_and_ipv6() {
    let p = json!({"ip": [{"cidr": "10.0.0.0/24"}]});
    assert!(matches(p.clone(), json!({"ip": "10.0.0.255"})));
    assert!(!matches(p.clone(), json!({"ip": "10.0.1.1"})));
    assert!(!matches(p, json!({"ip": "not an ip"})));
    let v6 = json!({"ip": [{"cidr": "2001:db8::/32"}]});
    assert!(matches(v6.clone(), json!({"ip": "2001:db8:1::1"})));
    assert!(!matches(v6, json!({"ip": "2001:db9::1"})));
    assert!(matches(
        json!({"ip": [{"cidr": "0.0.0.0/0"}]}),
        json!({"ip": "8.8.8.8"})
    ));
}

#[test]
fn wildcards_with_escapes() {
    let m = |p: &str, s: &str| wildcard(p, s);
    assert!(m("*.png", "dir/a.png"));
    assert!(m("a*b*c", "aXbYc"));
    assert!(m("a*b*c", "abc"));
    assert!(!m("a*b*c", "acb"));
    assert!(m("a\\*b", "a*b"));
    assert!(!m("a\\*b", "aXb"));
    assert!(m("*", ""));
    assert!(!m("abc", "abcd"));
    assert!(matches(
        json!({"k": [{"wildcard": "us-*-1"}]}),
        json!({"k": "us-west-1"})
    ));
}

#[test]
fn sns_rejects_wildcards_and_nesting_in_attribute_scope() {
    let err = refused(json!({"k": [{"wildcard": "*"}]}), Dialect::SnsBody);
    assert_eq!(err.reason, "Unrecognized match type wildcard");
    let err = refused(json!({"a": {"b": ["x"]}}), Dialect::SnsAttributes);
    assert_eq!(
        err.reason,
        "Filter policy scope MessageAttributes does not support nested filter policy"
    );
    assert!(Pattern::from_json(&json!({"a": {"b": ["x"]}}), Dialect::SnsBody).is_ok());
}

#[test]
fn sns_limits_keys_and_combinations() {
    let six = json!({"a": [1], "b": [1], "c": [1], "d": [1], "e": [1], "f": [1]});
    assert_eq!(
        refused(six, Dialect::SnsAttributes).reason,
        "Filter policy can not have more than 5 keys"
    );
    let values: Vec<i64> = (0..13).collect();
    let big = json!({"a": values, "b": values});
    assert_eq!(
        refused(big, Dialect::SnsAttributes).reason,
        "Filter policy is too complex"
    );
}

#[test]
fn malformed_rules_get_aws_reasons() {
    let cases = [
        (
            json!({"k": "x"}),
            "\"k\" must be an object or an array",
            false,
        ),
        (
            json!({"k": [["x"]]}),
            "Match value must be String, number, true, false, or null",
            false,
        ),
        (
            json!({"k": [{"foo": 1}]}),
            "Unrecognized match type foo",
            false,
        ),
        (
            json!({"k": [{"prefix": 1}]}),
            "prefix match pattern must be a string",
            false,
        ),
        (
            json!({"k": [{"exists": "yes"}]}),
            "exists match pattern must be either true or false.",
            false,
        ),
        (
            json!({"k": [{"prefix": "a", "suffix": "b"}]}),
            "Only one key allowed in match expression",
            false,
        ),
        (
            json!({"k": [{"anything-but": {"foo": "a"}}]}),
            "Unsupported anything-but pattern: foo",
            false,
        ),
        (
            json!({"k": [{"numeric": ["<", "100"]}]}),
            "Value of < must be numeric",
            true,
        ),
        (
            json!({"k": [{"numeric": [">", 50, "<=", "100"]}]}),
            "Value of <= must be numeric",
            true,
        ),
        (
            json!({"k": [{"numeric": []}]}),
            "Invalid member in numeric match: ]",
            true,
        ),
        (
            json!({"k": [{"numeric": ["!", 1]}]}),
            "Unrecognized numeric range operator: !",
            true,
        ),
        (
            json!({"k": [{"numeric": ["<", 1, ">", 0]}]}),
            "Too many elements in numeric expression",
            true,
        ),
        (
            json!({"k": [{"numeric": [">", 1, ">", 0]}]}),
            "Bad numeric range operator: >",
            true,
        ),
        (
            json!({"k": [{"numeric": [">", 5, "<", 1]}]}),
            "Bottom must be less than top",
            true,
        ),
        (
            json!({"k": [{"cidr": "10.0.0.0"}]}),
            "Malformed CIDR, one '/' required: 10.0.0.0",
            false,
        ),
    ];
    for (pattern, reason, syntax) in cases {
        let err = refused(pattern.clone(), Dialect::SnsBody);
        assert_eq!(err.reason, reason, "{pattern}");
        assert_eq!(err.syntax, syntax, "{pattern}");
    }
}

#[test]
fn text_that_is_not_json_is_refused() {
    assert!(Pattern::parse("{not json", Dialect::EventBridge).is_err());
    assert!(Pattern::parse("[]", Dialect::EventBridge).is_err());
    assert!(Pattern::parse(r#"{"a": ["b"]}"#, Dialect::EventBridge).is_ok());
}
