//! API Gateway's `patchOperations`, the one way every `Update*` of REST APIs changes a
//! resource, applied once here to any stored document.
//!
//! An operation is `{op, path, value, from}`: `op` is `add`, `remove`, `replace`, `move` or
//! `copy`; `path` names a member (`/description`), a map entry (`/variables/env`), a nested
//! member (`/endpointConfiguration/types/0`), or a list element by value or index
//! (`/binaryMediaTypes/image~1png`: `~1` is `/`, `~0` is `~`). Values arrive as strings and
//! are typed by the resource's shape in the model (`"true"` becomes a boolean where the
//! member is one), so the stored document keeps the types the output encodes. A path the
//! shape does not have is AWS's `BadRequestException`.

use roto_core::model::{model, Shape, ShapeKind};
use roto_core::{AwsError, AwsResult, Value};
use serde_json::{Map, Value as Json};

/// Members no patch may change (they are the resource's identity or history).
const READ_ONLY: &[&str] = &["id", "createdDate", "lastUpdatedDate", "rootResourceId"];

/// Applies `operations` (the request's `patchOperations`) to `doc`, a document of model
/// shape `shape_name`.
pub fn apply(doc: &mut Json, shape_name: &str, operations: Option<&Value>) -> AwsResult<()> {
    let shape = model("apigateway").shape(shape_name);
    for op in operations.and_then(Value::as_list).unwrap_or_default() {
        apply_one(doc, shape, op)?;
    }
    Ok(())
}

/// One patch operation's parts.
struct Op<'a> {
    op: &'a str,
    path: &'a str,
    value: Option<&'a str>,
}

fn invalid_path(op: &Op<'_>) -> AwsError {
    super::bad_request(format!(
        "Invalid patch path '{}' specified for op '{}'",
        op.path, op.op
    ))
}

/// A path's segments, unescaped (`/a/b~1c` is `["a", "b/c"]`).
fn segments(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

fn apply_one(doc: &mut Json, shape: &Shape, op: &Value) -> AwsResult<()> {
    let parts = Op {
        op: op.str("op").unwrap_or_default(),
        path: op.str("path").unwrap_or_default(),
        value: op.str("value"),
    };
    let segs = segments(parts.path)
        .filter(|s| {
            s.first()
                .is_some_and(|f| !f.is_empty() && !READ_ONLY.contains(&f.as_str()))
        })
        .ok_or_else(|| invalid_path(&parts))?;
    match parts.op {
        "add" | "remove" | "replace" => patch_at(doc, shape, &segs, &parts),
        "copy" | "move" => {
            let from = op.str("from").and_then(segments).ok_or_else(|| {
                super::bad_request(format!("Invalid from path for op '{}'", parts.op))
            })?;
            let found = lookup(doc, &from).cloned().ok_or_else(|| {
                super::bad_request(format!(
                    "Invalid from path '{}'",
                    op.str("from").unwrap_or_default()
                ))
            })?;
            if parts.op == "move" {
                remove_at(doc, &from);
            }
            set_at(doc, &segs, found);
            Ok(())
        }
        other => Err(super::bad_request(format!(
            "Invalid patch operation specified: {other}"
        ))),
    }
}

fn lookup<'j>(doc: &'j Json, segs: &[String]) -> Option<&'j Json> {
    segs.iter()
        .try_fold(doc, |node, seg| node.get(seg.as_str()))
}

fn remove_at(doc: &mut Json, segs: &[String]) {
    if let Some((last, parents)) = segs.split_last() {
        let parent = parents
            .iter()
            .try_fold(&mut *doc, |node, seg| node.get_mut(seg.as_str()));
        if let Some(Json::Object(o)) = parent {
            o.remove(last);
        }
    }
}

fn set_at(doc: &mut Json, segs: &[String], value: Json) {
    let mut node = doc;
    for seg in segs {
        if !node.is_object() {
            *node = Json::Object(Map::new());
        }
        node = node
            .as_object_mut()
            .map(|o| o.entry(seg.clone()).or_insert(Json::Null))
            .expect("an object");
    }
    *node = value;
}

/// Applies an operation at `segs` below `node`, whose shape is `shape`.
fn patch_at(node: &mut Json, shape: &Shape, segs: &[String], op: &Op<'_>) -> AwsResult<()> {
    let apigw = model("apigateway");
    let Some((key, rest)) = segs.split_first() else {
        return Err(invalid_path(op));
    };
    let child = match shape.kind {
        ShapeKind::Structure => shape.members.get(key),
        ShapeKind::Map => shape.value.as_deref(),
        _ => None,
    }
    .map(|r| apigw.resolve(r))
    .ok_or_else(|| invalid_path(op))?;
    if !node.is_object() {
        *node = Json::Object(Map::new());
    }
    let object = node.as_object_mut().expect("an object");
    if child.kind == ShapeKind::List && rest.len() <= 1 {
        let list = object
            .entry(key.clone())
            .or_insert_with(|| Json::Array(Vec::new()));
        return patch_list(list, child, rest.first().map(String::as_str), op);
    }
    if rest.is_empty() {
        match op.op {
            "remove" => {
                object.remove(key);
            }
            _ => {
                object.insert(key.clone(), typed(child, op.value.unwrap_or_default(), op)?);
            }
        }
        return Ok(());
    }
    let entry = object.entry(key.clone()).or_insert(Json::Null);
    patch_at(entry, child, rest, op)
}

/// An operation on a list member: `element` is the path's last segment (an element's value
/// or index), else the operation's value names it.
fn patch_list(list: &mut Json, shape: &Shape, element: Option<&str>, op: &Op<'_>) -> AwsResult<()> {
    let apigw = model("apigateway");
    let member = shape
        .member
        .as_deref()
        .map(|r| apigw.resolve(r))
        .ok_or_else(|| invalid_path(op))?;
    if !list.is_array() {
        *list = Json::Array(Vec::new());
    }
    let items = list.as_array_mut().expect("an array");
    let named = element.or(op.value).unwrap_or_default();
    let position = |items: &Vec<Json>| {
        let by_value = typed(member, named, op).ok();
        items
            .iter()
            .position(|i| Some(i) == by_value.as_ref())
            .or_else(|| named.parse::<usize>().ok().filter(|n| *n < items.len()))
    };
    match op.op {
        "add" => {
            let item = typed(member, named, op)?;
            if !items.contains(&item) {
                items.push(item);
            }
        }
        "remove" => {
            if let Some(i) = position(items) {
                items.remove(i);
            }
        }
        _ => {
            let replacement = typed(member, op.value.unwrap_or_default(), op)?;
            match position(items) {
                Some(i) => items[i] = replacement,
                None if element.is_none() => *items = vec![replacement],
                None => return Err(invalid_path(op)),
            }
        }
    }
    Ok(())
}

/// A patch value typed by its member's shape.
fn typed(shape: &Shape, text: &str, op: &Op<'_>) -> AwsResult<Json> {
    let invalid = || {
        super::bad_request(format!(
            "Invalid value '{text}' for patch path '{}'",
            op.path
        ))
    };
    Ok(match shape.kind {
        ShapeKind::Boolean => Json::Bool(text.parse().map_err(|_| invalid())?),
        ShapeKind::Integer | ShapeKind::Long => {
            Json::from(text.parse::<i64>().map_err(|_| invalid())?)
        }
        ShapeKind::Float | ShapeKind::Double => {
            Json::from(text.parse::<f64>().map_err(|_| invalid())?)
        }
        ShapeKind::Structure if shape.members.get("apiId").is_some() => {
            let (api, stage) = text.split_once(':').ok_or_else(invalid)?;
            serde_json::json!({ "apiId": api, "stage": stage })
        }
        ShapeKind::Structure | ShapeKind::Map | ShapeKind::List => {
            serde_json::from_str(text).map_err(|_| invalid())?
        }
        _ => Json::String(text.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(list: &[(&str, &str, Option<&str>)]) -> Value {
        Value::List(
            list.iter()
                .map(|(op, path, value)| {
                    Value::map()
                        .with("op", *op)
                        .with("path", *path)
                        .with_opt("value", *value)
                })
                .collect(),
        )
    }

    #[test]
    fn members_maps_and_lists_are_patched_with_the_shape_types() {
        let mut api = json!({"id": "a1", "name": "old", "binaryMediaTypes": ["image/png"],
            "endpointConfiguration": {"types": ["EDGE"]}});
        let patch = ops(&[
            ("replace", "/name", Some("new")),
            ("add", "/binaryMediaTypes/application~1octet-stream", None),
            ("remove", "/binaryMediaTypes/image~1png", None),
            (
                "replace",
                "/endpointConfiguration/types/0",
                Some("REGIONAL"),
            ),
            ("replace", "/disableExecuteApiEndpoint", Some("true")),
            ("replace", "/minimumCompressionSize", Some("1024")),
        ]);
        apply(&mut api, "RestApi", Some(&patch)).unwrap();
        assert_eq!(api["name"], "new");
        assert_eq!(api["binaryMediaTypes"], json!(["application/octet-stream"]));
        assert_eq!(api["endpointConfiguration"]["types"], json!(["REGIONAL"]));
        assert_eq!(api["disableExecuteApiEndpoint"], true);
        assert_eq!(api["minimumCompressionSize"], 1024);
        let mut stage = json!({"stageName": "prod", "variables": {"a": "1"}});
        let patch = ops(&[
            ("replace", "/variables/b", Some("2")),
            ("remove", "/variables/a", None),
            ("copy", "/description", None),
        ]);
        let err = apply(&mut stage, "Stage", Some(&patch)).unwrap_err();
        assert_eq!(err.code, "BadRequestException");
        assert_eq!(stage["variables"], json!({"b": "2"}));
    }

    #[test]
    fn unknown_and_read_only_paths_are_bad_requests() {
        let mut api = json!({"id": "a1"});
        for (op, path) in [
            ("replace", "/nope"),
            ("replace", "/id"),
            ("replace", "name"),
            ("jump", "/name"),
        ] {
            let err = apply(&mut api, "RestApi", Some(&ops(&[(op, path, Some("x"))]))).unwrap_err();
            assert_eq!(err.code, "BadRequestException", "{op} {path}");
        }
        let err = apply(
            &mut api,
            "RestApi",
            Some(&ops(&[("replace", "/minimumCompressionSize", Some("x"))])),
        );
        assert!(err.is_err());
    }

    #[test]
    fn usage_plan_stages_are_added_and_removed_as_api_colon_stage() {
        let mut plan = json!({"id": "p"});
        apply(
            &mut plan,
            "UsagePlan",
            Some(&ops(&[
                ("add", "/apiStages", Some("abc:prod")),
                ("add", "/apiStages", Some("abc:dev")),
            ])),
        )
        .unwrap();
        assert_eq!(
            plan["apiStages"],
            json!([{"apiId": "abc", "stage": "prod"}, {"apiId": "abc", "stage": "dev"}])
        );
        apply(
            &mut plan,
            "UsagePlan",
            Some(&ops(&[
                ("remove", "/apiStages", Some("abc:prod")),
                ("replace", "/throttle/rateLimit", Some("5.5")),
            ])),
        )
        .unwrap();
        assert_eq!(plan["apiStages"], json!([{"apiId": "abc", "stage": "dev"}]));
        assert_eq!(plan["throttle"]["rateLimit"], 5.5);
    }
}
