//! Templates: the body read as JSON or YAML (short-form tags mapped to their `Fn::` objects),
//! its sections checked as CloudFormation checks them, and the facts ValidateTemplate and
//! GetTemplateSummary report.

use std::collections::BTreeSet;

use roto_core::{AwsResult, Value};
use serde_json::{json, Map, Value as Json};

use super::validation;

/// The sections a template may hold.
const SECTIONS: [&str; 10] = [
    "AWSTemplateFormatVersion",
    "Description",
    "Metadata",
    "Parameters",
    "Rules",
    "Mappings",
    "Conditions",
    "Transform",
    "Resources",
    "Outputs",
];

/// The largest template body accepted (AWS's limit for a body in S3).
pub(crate) const MAX_BODY: usize = 1_000_000;

/// A template's body as a JSON tree.
pub(crate) fn parse(body: &str) -> AwsResult<Json> {
    if body.len() > MAX_BODY {
        return Err(validation(
            "Template may not exceed 1000000 bytes in size.".to_string(),
        ));
    }
    let doc = if body.trim_start().starts_with('{') {
        serde_json::from_str(body).map_err(|e| {
            validation(format!(
                "Template format error: JSON not well-formed. ({e})"
            ))
        })?
    } else {
        roto_yaml::parse_with(body, short_form).map_err(|e| {
            validation(format!(
                "Template format error: YAML not well-formed. ({e})"
            ))
        })?
    };
    if !doc.is_object() {
        return Err(validation("Template format error: JSON not well-formed."));
    }
    Ok(doc)
}

/// A short-form tag as its long form: `!Ref x` is `{"Ref": x}`, `!GetAtt a.b` is
/// `{"Fn::GetAtt": ["a", "b"]}`, `!Condition c` is `{"Condition": c}`, `!Sub s` is
/// `{"Fn::Sub": s}`.
pub(crate) fn short_form(tag: &str, value: Json) -> Result<Json, String> {
    Ok(match (tag, value) {
        ("Ref", v) => json!({ "Ref": v }),
        ("Condition", v) => json!({ "Condition": v }),
        ("GetAtt", Json::String(s)) => match s.split_once('.') {
            Some((resource, attribute)) => json!({ "Fn::GetAtt": [resource, attribute] }),
            None => return Err(format!("Template error: invalid !GetAtt {s}")),
        },
        (name, v) => {
            let mut map = Map::new();
            map.insert(format!("Fn::{name}"), v);
            Json::Object(map)
        }
    })
}

/// A section of the template as an object (empty when absent).
pub(crate) fn section<'a>(doc: &'a Json, name: &str) -> &'a Map<String, Json> {
    static EMPTY: std::sync::OnceLock<Map<String, Json>> = std::sync::OnceLock::new();
    doc.get(name)
        .and_then(Json::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// Checks the template's structure as CloudFormation does before anything runs.
pub(crate) fn check(doc: &Json) -> AwsResult<()> {
    let top = doc
        .as_object()
        .ok_or_else(|| validation("Template format error: JSON not well-formed."))?;
    for key in top.keys() {
        if !SECTIONS.contains(&key.as_str()) {
            return Err(validation(format!(
                "Template format error: Unrecognized section: {key}"
            )));
        }
    }
    if let Some(version) = top.get("AWSTemplateFormatVersion") {
        if version.as_str() != Some("2010-09-09") {
            return Err(validation(
                "Template format error: Unsupported template version",
            ));
        }
    }
    let resources = section(doc, "Resources");
    if resources.is_empty() {
        return Err(validation(
            "Template format error: At least one Resources member must be defined.",
        ));
    }
    for (name, resource) in resources {
        if resource.get("Type").and_then(Json::as_str).is_none() {
            return Err(validation(format!(
                "Template format error: [/Resources/{name}] Every Resources object must contain a Type member."
            )));
        }
    }
    for (name, output) in section(doc, "Outputs") {
        if output.get("Value").is_none() {
            return Err(validation(format!(
                "Template format error: Every Outputs member must contain a Value object, the Outputs member {name} is missing one."
            )));
        }
    }
    Ok(())
}

/// The transforms the template declares.
pub(crate) fn transforms(doc: &Json) -> Vec<String> {
    match doc.get("Transform") {
        Some(Json::String(s)) => vec![s.clone()],
        Some(Json::Array(items)) => items
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The capabilities the template's resources require, and why.
pub(crate) fn capabilities(doc: &Json) -> (Vec<&'static str>, Option<String>) {
    let mut needed = BTreeSet::new();
    let mut named = Vec::new();
    for (name, resource) in section(doc, "Resources") {
        let kind = resource["Type"].as_str().unwrap_or_default();
        if !kind.starts_with("AWS::IAM::") {
            continue;
        }
        let props = &resource["Properties"];
        let has_name = [
            "RoleName",
            "UserName",
            "GroupName",
            "ManagedPolicyName",
            "InstanceProfileName",
        ]
        .iter()
        .any(|k| props.get(*k).is_some());
        needed.insert(if has_name {
            "CAPABILITY_NAMED_IAM"
        } else {
            "CAPABILITY_IAM"
        });
        named.push(name.clone());
    }
    if needed.contains("CAPABILITY_NAMED_IAM") {
        needed.remove("CAPABILITY_IAM");
    }
    let reason = (!named.is_empty()).then(|| {
        format!(
            "The following resource(s) require capabilities: [{}]",
            types(doc, &named)
        )
    });
    (needed.into_iter().collect(), reason)
}

fn types(doc: &Json, names: &[String]) -> String {
    let resources = section(doc, "Resources");
    let kinds: BTreeSet<&str> = names
        .iter()
        .filter_map(|n| resources.get(n).and_then(|r| r["Type"].as_str()))
        .collect();
    kinds.into_iter().collect::<Vec<_>>().join(", ")
}

/// The Parameters a template declares, as ValidateTemplate lists them.
pub(crate) fn template_parameters(doc: &Json) -> Vec<Value> {
    section(doc, "Parameters")
        .iter()
        .map(|(name, p)| {
            Value::map()
                .with("ParameterKey", name.as_str())
                .with_opt("DefaultValue", p.get("Default").map(scalar_text))
                .with("NoEcho", no_echo(p))
                .with_opt("Description", p["Description"].as_str())
        })
        .collect()
}

/// Whether a parameter declaration hides its value.
pub(crate) fn no_echo(p: &Json) -> bool {
    match &p["NoEcho"] {
        Json::Bool(b) => *b,
        Json::String(s) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// The parameters as GetTemplateSummary declares them.
pub(crate) fn parameter_declarations(doc: &Json) -> Vec<Value> {
    section(doc, "Parameters")
        .iter()
        .map(|(name, p)| {
            let allowed: Option<Vec<Value>> = p["AllowedValues"]
                .as_array()
                .map(|a| a.iter().map(|v| Value::from(scalar_text(v))).collect());
            Value::map()
                .with("ParameterKey", name.as_str())
                .with_opt("DefaultValue", p.get("Default").map(scalar_text))
                .with("ParameterType", p["Type"].as_str().unwrap_or("String"))
                .with("NoEcho", no_echo(p))
                .with_opt("Description", p["Description"].as_str())
                .with(
                    "ParameterConstraints",
                    Value::map().with_opt("AllowedValues", allowed.map(Value::List)),
                )
        })
        .collect()
}

/// A scalar's text as CloudFormation reads it (numbers and booleans as written; lists
/// joined by commas).
pub(crate) fn scalar_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Array(items) => items.iter().map(scalar_text).collect::<Vec<_>>().join(","),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

/// The resource types a template declares, sorted and distinct.
pub(crate) fn resource_types(doc: &Json) -> Vec<Value> {
    let kinds: BTreeSet<&str> = section(doc, "Resources")
        .values()
        .filter_map(|r| r["Type"].as_str())
        .collect();
    kinds.into_iter().map(Value::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_short_forms_become_long_forms() {
        let doc = parse(
            "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Sub '${AWS::StackName}-q'\n      X: !GetAtt B.Arn\n      Y: !If [C, !Ref P, !Ref AWS::NoValue]\n",
        )
        .unwrap();
        let props = &doc["Resources"]["Q"]["Properties"];
        assert_eq!(
            props["QueueName"],
            json!({"Fn::Sub": "${AWS::StackName}-q"})
        );
        assert_eq!(props["X"], json!({"Fn::GetAtt": ["B", "Arn"]}));
        assert_eq!(
            props["Y"],
            json!({"Fn::If": ["C", {"Ref": "P"}, {"Ref": "AWS::NoValue"}]})
        );
        check(&doc).unwrap();
    }

    #[test]
    fn structure_errors_are_aws_messages() {
        let no_resources = parse("{\"Resources\": {}}").unwrap();
        assert!(check(&no_resources)
            .unwrap_err()
            .message
            .contains("At least one Resources member"));
        let bad = parse("Resources:\n  A: {Properties: {}}\n").unwrap();
        assert!(check(&bad).unwrap_err().message.contains("[/Resources/A]"));
        assert!(parse("{ not json")
            .unwrap_err()
            .message
            .contains("JSON not well-formed"));
        assert!(parse("a: [")
            .unwrap_err()
            .message
            .contains("YAML not well-formed"));
    }
}
