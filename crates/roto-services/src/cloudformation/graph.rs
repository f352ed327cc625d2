//! The dependency graph of a template's resources: what each one references (`Ref`,
//! `Fn::GetAtt`, `Fn::Sub` variables, `DependsOn`), the waves in which they can be created
//! (each wave's resources depend only on earlier waves, so a wave runs in parallel), and
//! AWS's refusal of cycles and of references to nothing.
//!
//! References are collected with an explicit stack, so a deep template costs no stack.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json};

use super::intrinsics::substitute;

const PSEUDO: [&str; 8] = [
    "AWS::AccountId",
    "AWS::Region",
    "AWS::StackName",
    "AWS::StackId",
    "AWS::Partition",
    "AWS::URLSuffix",
    "AWS::NotificationARNs",
    "AWS::NoValue",
];

/// Each resource's dependencies on other resources, checked: every name referenced is a
/// resource, a parameter or a pseudo parameter.
pub(crate) fn dependencies(
    resources: &Map<String, Json>,
    parameters: &Map<String, Json>,
) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut graph = BTreeMap::new();
    for (name, resource) in resources {
        let mut deps = BTreeSet::new();
        for r in references(resource) {
            if resources.contains_key(&r) {
                deps.insert(r);
            } else if !parameters.contains_key(&r) && !PSEUDO.contains(&r.as_str()) {
                return Err(unresolved(&r));
            }
        }
        match resource.get("DependsOn") {
            Some(Json::String(d)) => {
                deps.insert(d.clone());
            }
            Some(Json::Array(list)) => {
                deps.extend(list.iter().filter_map(|d| d.as_str().map(str::to_string)))
            }
            _ => {}
        }
        if let Some(missing) = deps.iter().find(|d| !resources.contains_key(*d)) {
            return Err(unresolved(missing));
        }
        graph.insert(name.clone(), deps);
    }
    Ok(graph)
}

fn unresolved(name: &str) -> String {
    format!(
        "Template format error: Unresolved resource dependencies [{name}] in the Resources block of the template"
    )
}

/// The names a value references through `Ref`, `Fn::GetAtt` and `Fn::Sub`.
pub(crate) fn references(value: &Json) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Json::Object(map) => {
                if map.len() == 1 {
                    let (k, arg) = map.iter().next().expect("one entry");
                    collect_function(k, arg, &mut found);
                }
                pending.extend(map.values());
            }
            Json::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    found
}

fn collect_function(name: &str, arg: &Json, found: &mut BTreeSet<String>) {
    match (name, arg) {
        ("Ref", Json::String(r)) => {
            found.insert(r.clone());
        }
        ("Fn::GetAtt", Json::Array(items)) => {
            if let Some(r) = items.first().and_then(Json::as_str) {
                found.insert(r.to_string());
            }
        }
        ("Fn::GetAtt", Json::String(s)) => {
            found.insert(s.split('.').next().unwrap_or_default().to_string());
        }
        ("Fn::Sub", Json::String(text)) => sub_names(text, &BTreeSet::new(), found),
        ("Fn::Sub", Json::Array(items)) => {
            let local: BTreeSet<String> = items
                .get(1)
                .and_then(Json::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            if let Some(text) = items.first().and_then(Json::as_str) {
                sub_names(text, &local, found);
            }
        }
        _ => {}
    }
}

fn sub_names(text: &str, local: &BTreeSet<String>, found: &mut BTreeSet<String>) {
    let _ = substitute(text, |name| {
        if !local.contains(name) {
            let head = if PSEUDO.contains(&name) {
                name
            } else {
                name.split('.').next().unwrap_or(name)
            };
            found.insert(head.to_string());
        }
        Ok(String::new())
    });
}

/// The resources in waves of creation, or AWS's message naming a cycle.
pub(crate) fn waves(
    graph: &BTreeMap<String, BTreeSet<String>>,
) -> Result<Vec<Vec<String>>, String> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut waves = Vec::new();
    while done.len() < graph.len() {
        let wave: Vec<String> = graph
            .iter()
            .filter(|(name, deps)| {
                !done.contains(name.as_str()) && deps.iter().all(|d| done.contains(d.as_str()))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if wave.is_empty() {
            let cycle: Vec<&str> = graph
                .keys()
                .map(String::as_str)
                .filter(|n| !done.contains(n))
                .collect();
            return Err(format!(
                "Circular dependency between resources: [{}]",
                cycle.join(", ")
            ));
        }
        for name in &wave {
            done.insert(
                graph
                    .get_key_value(name)
                    .map(|(k, _)| k.as_str())
                    .unwrap_or_default(),
            );
        }
        waves.push(wave);
    }
    Ok(waves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn waves_follow_references_and_cycles_are_refused() {
        let resources = json!({
            "A": {"Type": "T"},
            "B": {"Type": "T", "Properties": {"X": {"Fn::Sub": "${A.Arn}-${AWS::Region}"}}},
            "C": {"Type": "T", "DependsOn": "B", "Properties": {"Y": {"Ref": "P"}}},
        });
        let params = json!({"P": {"Type": "String"}});
        let graph =
            dependencies(resources.as_object().unwrap(), params.as_object().unwrap()).unwrap();
        assert_eq!(
            waves(&graph).unwrap(),
            vec![vec!["A"], vec!["B"], vec!["C"]]
        );
        let cyclic = json!({
            "A": {"Type": "T", "Properties": {"X": {"Ref": "B"}}},
            "B": {"Type": "T", "Properties": {"X": {"Fn::GetAtt": ["A", "Arn"]}}},
        });
        let graph = dependencies(cyclic.as_object().unwrap(), &Map::new()).unwrap();
        assert_eq!(
            waves(&graph).unwrap_err(),
            "Circular dependency between resources: [A, B]"
        );
        let dangling = json!({"A": {"Type": "T", "Properties": {"X": {"Ref": "Nope"}}}});
        assert!(dependencies(dangling.as_object().unwrap(), &Map::new())
            .unwrap_err()
            .contains("[Nope]"));
    }
}
