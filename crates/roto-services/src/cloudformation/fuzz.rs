//! The fuzzer's entry into template reading: a body parsed (JSON or YAML with short-form
//! tags), checked, its dependency graph ordered, its parameters given their defaults, and
//! its conditions, rules, resources' properties and outputs evaluated.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::intrinsics::{Pseudo, Scope};
use super::template::section;
use super::{graph, parameters, stacks, template};

/// Reads `text` as a template the way CreateStack does, then evaluates everything in it.
pub fn fuzz_template(text: &str) {
    let Ok(doc) = stacks::prepare(text) else {
        return;
    };
    let _ = template::capabilities(&doc);
    let _ = template::parameter_declarations(&doc);
    let _ = graph::dependencies(section(&doc, "Resources"), section(&doc, "Parameters"))
        .and_then(|g| graph::waves(&g));
    let Ok(values) = parameters::values(&doc, &[], &[]) else {
        return;
    };
    let pseudo = Pseudo {
        account: "000000000000".into(),
        region: "us-east-1".into(),
        stack_name: "fuzz".into(),
        stack_id: "arn:aws:cloudformation:us-east-1:000000000000:stack/fuzz/1".into(),
        notification_arns: Vec::new(),
    };
    let scope_params = parameters::scope_values(&doc, &values);
    let (no_conditions, no_resources, no_exports) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let scope = Scope {
        pseudo: &pseudo,
        parameters: &scope_params,
        mappings: section(&doc, "Mappings"),
        conditions: &no_conditions,
        resources: &no_resources,
        exports: &no_exports,
    };
    let Ok(conditions) = parameters::conditions(&doc, &scope) else {
        return;
    };
    let scope = Scope {
        conditions: &conditions,
        ..scope
    };
    let _ = parameters::check_rules(&doc, &scope);
    for resource in section(&doc, "Resources").values() {
        let _ = scope.eval(&resource["Properties"]);
    }
    for output in section(&doc, "Outputs").values() {
        let _ = scope.eval(output.get("Value").unwrap_or(&Json::Null));
    }
}
