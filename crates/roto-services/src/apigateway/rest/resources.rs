//! Resources, and nested in each (as `GetResources?embed=methods` answers them) its
//! methods, method responses, integration and integration responses.
//!
//! A path part is literal (`a-zA-Z0-9._-`), a parameter (`{id}`) or greedy (`{proxy+}`);
//! siblings may not repeat a part nor hold two parameters, and a greedy resource has no
//! children, as AWS enforces. A resource's `path` is its parent's plus its part.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::super::{bad_request, conflict, patch, ApiGateway};
use super::{document, missing, output, page, scope};

/// The HTTP methods a method may have.
const METHODS: &[&str] = &[
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "ANY",
];

/// The members that address a method's parts rather than describe them.
const ADDRESS: &[&str] = &[
    "restApiId",
    "resourceId",
    "httpMethod",
    "statusCode",
    "patchOperations",
];

/// Whether a path part is one AWS accepts.
fn valid_path_part(part: &str) -> bool {
    let literal = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
    };
    match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
        Some(name) => literal(name.strip_suffix('+').unwrap_or(name)),
        None => literal(part),
    }
}

fn is_variable(part: &str) -> bool {
    part.starts_with('{')
}

/// Which part of a method an operation addresses.
#[derive(Clone, Copy)]
enum Part {
    Method,
    MethodResponse,
    Integration,
    IntegrationResponse,
}

impl Part {
    fn of(operation: &str) -> Option<(Part, &str)> {
        let (verb, rest) = ["Put", "Get", "Update", "Delete"]
            .iter()
            .find_map(|v| operation.strip_prefix(v).map(|r| (*v, r)))?;
        let part = match rest {
            "Method" => Part::Method,
            "MethodResponse" => Part::MethodResponse,
            "Integration" => Part::Integration,
            "IntegrationResponse" => Part::IntegrationResponse,
            _ => return None,
        };
        Some((part, verb))
    }

    fn shape(self) -> &'static str {
        match self {
            Part::Method => "Method",
            Part::MethodResponse => "MethodResponse",
            Part::Integration => "Integration",
            Part::IntegrationResponse => "IntegrationResponse",
        }
    }

    fn missing(self) -> AwsError {
        match self {
            Part::Method => missing("Method"),
            Part::Integration => missing("Integration"),
            Part::MethodResponse | Part::IntegrationResponse => {
                super::super::not_found("Invalid Response status code specified")
            }
        }
    }
}

impl ApiGateway {
    pub(super) fn resource_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        if let Some((part, verb)) = Part::of(operation) {
            return Some(self.method_part(ctx, input, part, verb));
        }
        Some(match operation {
            "CreateResource" => self.create_resource(ctx, input),
            "GetResource" => self.get_resource(ctx, input),
            "GetResources" => self.get_resources(ctx, input),
            "UpdateResource" => self.update_resource(ctx, input),
            "DeleteResource" => self.delete_resource(ctx, input),
            _ => return None,
        })
    }

    /// Every resource of an API (after checking it exists).
    pub(super) fn resources(&self, ctx: &Context, api: &str) -> AwsResult<Vec<Json>> {
        self.rest_api(ctx, api)?;
        self.store.list(scope(ctx, "resource", api))
    }

    fn resource(&self, ctx: &Context, api: &str, id: &str) -> AwsResult<Json> {
        self.rest_api(ctx, api)?;
        self.store
            .get(scope(ctx, "resource", api), id)?
            .ok_or_else(|| missing("Resource"))
    }

    /// Checks a new part under `parent` against its siblings and its parent.
    fn check_path_part(
        siblings: &[Json],
        parent: &Json,
        part: &str,
        own: Option<&str>,
    ) -> AwsResult<()> {
        if !valid_path_part(part) {
            return Err(bad_request(
                "Resource's path part only allow a-zA-Z0-9._- and curly braces at the beginning and the end and an optional plus sign before the closing brace.",
            ));
        }
        if parent["pathPart"]
            .as_str()
            .is_some_and(|p| p.ends_with("+}"))
        {
            return Err(bad_request(format!(
                "Cannot create a child of a resource with a greedy path variable: {}",
                parent["pathPart"].as_str().unwrap_or_default()
            )));
        }
        let parent_id = parent["id"].as_str();
        for sibling in siblings
            .iter()
            .filter(|s| s["parentId"].as_str() == parent_id && s["id"].as_str() != own)
        {
            let other = sibling["pathPart"].as_str().unwrap_or_default();
            if other == part {
                return Err(conflict(format!(
                    "Another resource with the same parent already has this name: {part}"
                )));
            }
            if is_variable(other) && is_variable(part) {
                return Err(bad_request(format!(
                    "A sibling ({other}) of this resource already has a variable path part -- only one is allowed"
                )));
            }
        }
        Ok(())
    }

    fn create_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let parent_id = input.str("parentId").unwrap_or_default();
        let part = input.str("pathPart").unwrap_or_default();
        let resources = self.resources(ctx, api)?;
        let parent = resources
            .iter()
            .find(|r| r["id"] == parent_id)
            .ok_or_else(|| missing("Resource"))?;
        Self::check_path_part(&resources, parent, part, None)?;
        let id = super::super::new_id();
        let base = parent["path"].as_str().unwrap_or("/").trim_end_matches('/');
        let doc = json!({"id": id, "parentId": parent_id, "pathPart": part, "path": format!("{base}/{part}")});
        self.store.put(scope(ctx, "resource", api), &id, &doc)?;
        Ok(output(&doc))
    }

    /// Adds a new resource for `path` (and any missing ancestors) to an API; the id of the
    /// resource at `path`. Imports build their tree with it.
    pub(super) fn ensure_path(&self, ctx: &Context, api: &str, path: &str) -> AwsResult<String> {
        let resources = self.resources(ctx, api)?;
        let mut current = resources
            .iter()
            .find(|r| r["path"] == "/")
            .cloned()
            .ok_or_else(|| missing("Resource"))?;
        let mut known = resources;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            let base = current["path"]
                .as_str()
                .unwrap_or("/")
                .trim_end_matches('/');
            let wanted = format!("{base}/{part}");
            if let Some(found) = known.iter().find(|r| r["path"] == wanted.as_str()) {
                current = found.clone();
                continue;
            }
            Self::check_path_part(&known, &current, part, None)?;
            let id = super::super::new_id();
            let doc =
                json!({"id": id, "parentId": current["id"], "pathPart": part, "path": wanted});
            self.store.put(scope(ctx, "resource", api), &id, &doc)?;
            known.push(doc.clone());
            current = doc;
        }
        Ok(current["id"].as_str().unwrap_or_default().to_string())
    }

    fn get_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let doc = self.resource(ctx, api, input.str("resourceId").unwrap_or_default())?;
        Ok(output(&doc))
    }

    fn get_resources(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let embed = input
            .get("embed")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .any(|e| e.as_str() == Some("methods"));
        let mut resources = self.resources(ctx, api)?;
        if !embed {
            for r in &mut resources {
                if let Some(Json::Object(methods)) = r.get_mut("resourceMethods") {
                    for method in methods.values_mut() {
                        *method = json!({});
                    }
                }
            }
        }
        page(resources, input)
    }

    fn update_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let id = input.str("resourceId").unwrap_or_default();
        let mut resources = self.resources(ctx, api)?;
        let index = resources
            .iter()
            .position(|r| r["id"] == id)
            .ok_or_else(|| missing("Resource"))?;
        let mut doc = resources[index].clone();
        patch::apply(&mut doc, "Resource", input.get("patchOperations"))?;
        let part = doc["pathPart"].as_str().unwrap_or_default().to_string();
        let parent = resources
            .iter()
            .find(|r| r["id"] == doc["parentId"])
            .cloned()
            .ok_or_else(|| missing("Resource"))?;
        Self::check_path_part(&resources, &parent, &part, Some(id))?;
        resources[index] = doc;
        repath(&mut resources);
        for r in &resources {
            self.store.put(
                scope(ctx, "resource", api),
                r["id"].as_str().unwrap_or_default(),
                r,
            )?;
        }
        Ok(output(&resources[index]))
    }

    fn delete_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let id = input.str("resourceId").unwrap_or_default();
        let resources = self.resources(ctx, api)?;
        let doc = resources
            .iter()
            .find(|r| r["id"] == id)
            .ok_or_else(|| missing("Resource"))?;
        if doc.get("parentId").is_none() {
            return Err(bad_request("Cannot delete root resource"));
        }
        let mut doomed = vec![id.to_string()];
        let mut i = 0;
        while let Some(current) = doomed.get(i).cloned() {
            doomed.extend(
                resources
                    .iter()
                    .filter(|r| r["parentId"] == current.as_str())
                    .filter_map(|r| r["id"].as_str().map(str::to_string)),
            );
            i += 1;
        }
        for gone in doomed {
            self.store.delete(scope(ctx, "resource", api), &gone)?;
        }
        Ok(Value::map())
    }

    /// Put/Get/Update/Delete of a method or one of its parts, inside its resource's document.
    fn method_part(
        &self,
        ctx: &Context,
        input: &Value,
        part: Part,
        verb: &str,
    ) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let resource_id = input.str("resourceId").unwrap_or_default();
        let mut resource = self.resource(ctx, api, resource_id)?;
        let method = input
            .str("httpMethod")
            .unwrap_or_default()
            .to_ascii_uppercase();
        if verb == "Put" && matches!(part, Part::Method) && !METHODS.contains(&method.as_str()) {
            return Err(bad_request(format!(
                "Invalid HttpMethod specified. Valid options are {}",
                METHODS.join(",")
            )));
        }
        let status = input.str("statusCode").unwrap_or_default().to_string();
        let (container, key) = part_slot(&mut resource, part, &method, &status)?;
        let answer = match verb {
            "Get" => container.get(&key).cloned().ok_or_else(|| part.missing())?,
            "Delete" => {
                container.remove(&key).ok_or_else(|| part.missing())?;
                json!({})
            }
            "Update" => {
                let doc = container.get_mut(&key).ok_or_else(|| part.missing())?;
                patch::apply(doc, part.shape(), input.get("patchOperations"))?;
                doc.clone()
            }
            _ => {
                if matches!(part, Part::Method) && container.contains_key(&key) {
                    return Err(conflict("Method already exists for this resource"));
                }
                let doc = new_part(input, part, &method, resource_id)?;
                container.insert(key.clone(), doc.clone());
                doc
            }
        };
        self.store
            .put(scope(ctx, "resource", api), resource_id, &resource)?;
        Ok(output(&answer))
    }
}

/// The object holding the addressed part, and its key there.
fn part_slot<'r>(
    resource: &'r mut Json,
    part: Part,
    method: &str,
    status: &str,
) -> AwsResult<(&'r mut Map<String, Json>, String)> {
    if !resource["resourceMethods"].is_object() {
        resource["resourceMethods"] = json!({});
    }
    let methods = resource["resourceMethods"]
        .as_object_mut()
        .expect("an object");
    if matches!(part, Part::Method) {
        return Ok((methods, method.to_string()));
    }
    let method_doc = methods.get_mut(method).ok_or_else(|| missing("Method"))?;
    let (holder, member, key) = match part {
        Part::MethodResponse => (method_doc, "methodResponses", status),
        Part::Integration => {
            return Ok((
                method_doc.as_object_mut().expect("an object"),
                "methodIntegration".into(),
            ))
        }
        _ => (
            method_doc
                .get_mut("methodIntegration")
                .ok_or_else(|| missing("Integration"))?,
            "integrationResponses",
            status,
        ),
    };
    if !holder[member].is_object() {
        holder[member] = json!({});
    }
    Ok((
        holder[member].as_object_mut().expect("an object"),
        key.to_string(),
    ))
}

/// A new method, method response, integration or integration response from its Put.
fn new_part(input: &Value, part: Part, method: &str, resource_id: &str) -> AwsResult<Json> {
    let mut doc = document(input, ADDRESS, &[("integrationHttpMethod", "httpMethod")]);
    match part {
        Part::Method => {
            doc["httpMethod"] = method.into();
            if doc.get("apiKeyRequired").is_none() {
                doc["apiKeyRequired"] = false.into();
            }
        }
        Part::MethodResponse | Part::IntegrationResponse => {
            doc["statusCode"] = input.str("statusCode").unwrap_or_default().into();
        }
        Part::Integration => check_integration(&mut doc, resource_id)?,
    }
    Ok(doc)
}

/// AWS's checks and defaults of a new integration.
fn check_integration(doc: &mut Json, resource_id: &str) -> AwsResult<()> {
    let kind = doc["type"].as_str().unwrap_or_default().to_string();
    if !["HTTP", "HTTP_PROXY", "AWS", "AWS_PROXY", "MOCK"].contains(&kind.as_str()) {
        return Err(bad_request("Invalid integration type specified"));
    }
    if kind != "MOCK" {
        if doc["uri"].as_str().is_none_or(str::is_empty) {
            return Err(bad_request(
                "Enumeration value for Integration Type must be non-empty",
            ));
        }
        if doc["httpMethod"].as_str().is_none_or(str::is_empty) {
            return Err(bad_request(
                "Enumeration value for HttpMethod must be non-empty",
            ));
        }
    }
    if kind.starts_with("HTTP")
        && !doc["uri"]
            .as_str()
            .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"))
    {
        return Err(bad_request("Invalid HTTP endpoint specified for URI"));
    }
    if kind.starts_with("AWS")
        && !doc["uri"]
            .as_str()
            .is_some_and(|u| u.starts_with("arn:aws:apigateway:"))
    {
        return Err(bad_request(
            "AWS ARN for integration must contain path or action",
        ));
    }
    let defaults = json!({
        "passthroughBehavior": "WHEN_NO_MATCH",
        "timeoutInMillis": 29000,
        "cacheNamespace": resource_id,
        "cacheKeyParameters": [],
    });
    for (k, v) in defaults.as_object().into_iter().flatten() {
        if doc.get(k).is_none() {
            doc[k] = v.clone();
        }
    }
    if doc["timeoutInMillis"]
        .as_i64()
        .is_some_and(|t| !(50..=29_000).contains(&t))
    {
        return Err(bad_request("Timeout should be between 50 ms and 29000 ms"));
    }
    Ok(())
}

/// Recomputes every resource's `path` from its parent chain.
fn repath(resources: &mut [Json]) {
    for _ in 0..resources.len() {
        let paths: Map<String, Json> = resources
            .iter()
            .filter_map(|r| Some((r["id"].as_str()?.to_string(), r["path"].clone())))
            .collect();
        for r in resources.iter_mut() {
            let Some(parent) = r["parentId"].as_str().and_then(|p| paths.get(p)) else {
                continue;
            };
            let base = parent.as_str().unwrap_or("/").trim_end_matches('/');
            r["path"] = format!("{base}/{}", r["pathPart"].as_str().unwrap_or_default()).into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts_follow_aws_rules() {
        for ok in ["items", "{id}", "{proxy+}", "v1.2", "a_b-c"] {
            assert!(valid_path_part(ok), "{ok}");
        }
        for bad in ["", "a/b", "{}", "{a", "a}", "{+}", "sp ace", "{a+b}"] {
            assert!(!valid_path_part(bad), "{bad}");
        }
    }

    #[test]
    fn paths_follow_renamed_and_moved_parents() {
        let mut tree = vec![
            json!({"id": "r", "path": "/"}),
            json!({"id": "a", "parentId": "r", "pathPart": "renamed", "path": "/old"}),
            json!({"id": "b", "parentId": "a", "pathPart": "{id}", "path": "/old/{id}"}),
        ];
        repath(&mut tree);
        assert_eq!(tree[2]["path"], "/renamed/{id}");
    }
}
