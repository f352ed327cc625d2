//! ImportApi, ReimportApi and ExportApi: HTTP APIs as OpenAPI 3 documents with API
//! Gateway's extensions, as SAM and the Serverless Framework write them
//! (`x-amazon-apigateway-integration`, `-any-method`, `-cors`, and authorizers as security
//! schemes with `x-amazon-apigateway-authorizer`).
//!
//! Documents are read as JSON (serde_json's parser bounds nesting at 128 levels); YAML
//! input is refused with a BadRequestException, since Roto carries no YAML parser. Exports
//! are written in either form.

use serde_json::{json, Map, Value as Json};

use roto_core::{AwsResult, Context, Value};

use super::stages::Deployed;
use super::store::{Key, Kind};
use super::{bad_request, now_iso, ApiGatewayV2};

/// The OpenAPI operations an HTTP API's route methods become.
const METHODS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];
const ANY_METHOD: &str = "x-amazon-apigateway-any-method";
const INTEGRATION: &str = "x-amazon-apigateway-integration";
const AUTHORIZER: &str = "x-amazon-apigateway-authorizer";
const CORS: &str = "x-amazon-apigateway-cors";

/// What an imported document defines, before it is stored.
pub(super) struct Definition {
    api: Value,
    authorizers: Vec<(String, Value)>,
    pub routes: Vec<(Value, Option<Value>)>,
    warnings: Vec<String>,
}

/// `camelCase` members of an extension as the model's `PascalCase` members.
fn pascal(object: &Json) -> Value {
    let mut out = Value::map();
    for (k, v) in object.as_object().into_iter().flatten() {
        let mut name = k.clone();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        out.insert(name, Value::from_json(v));
    }
    out
}

/// The extension's member names as the model names them where they differ.
fn integration_of(extension: &Json) -> Value {
    let mut integration = pascal(extension);
    let renames = [
        ("Type", "IntegrationType"),
        ("Uri", "IntegrationUri"),
        ("HttpMethod", "IntegrationMethod"),
        ("Credentials", "CredentialsArn"),
    ];
    for (from, to) in renames {
        if let Some(v) = integration.remove(from) {
            integration.insert(to, v);
        }
    }
    if let Some(kind) = integration
        .str("IntegrationType")
        .map(str::to_ascii_uppercase)
    {
        integration.insert("IntegrationType", kind);
    }
    integration
        .with(
            "ConnectionType",
            extension["connectionType"].as_str().unwrap_or("INTERNET"),
        )
        .with(
            "PayloadFormatVersion",
            extension["payloadFormatVersion"].as_str().unwrap_or("1.0"),
        )
        .with(
            "TimeoutInMillis",
            extension["timeoutInMillis"].as_i64().unwrap_or(30000),
        )
}

/// An authorizer from a security scheme's extension.
fn authorizer_of(name: &str, extension: &Json) -> Value {
    let mut authorizer = pascal(extension);
    if let Some(kind) = authorizer.remove("Type") {
        let kind = kind.as_str().unwrap_or_default().to_ascii_uppercase();
        authorizer.insert("AuthorizerType", kind);
    }
    let sources: Vec<Value> = match &extension["identitySource"] {
        Json::String(s) => s.split(',').map(|p| Value::from(p.trim())).collect(),
        Json::Array(a) => a.iter().map(Value::from_json).collect(),
        _ => Vec::new(),
    };
    if let Some(jwt) = extension.get("jwtConfiguration") {
        authorizer.insert("JwtConfiguration", pascal(jwt));
    }
    authorizer
        .with("Name", name)
        .with("IdentitySource", sources)
}

/// A route's authorization from an operation's (or the document's) `security`.
fn authorization_of(security: Option<&Json>) -> Option<(String, Vec<Value>)> {
    let requirement = security?.as_array()?.first()?.as_object()?;
    let (name, scopes) = requirement.iter().next()?;
    let scopes = scopes
        .as_array()
        .map(|s| s.iter().map(Value::from_json).collect())
        .unwrap_or_default();
    Some((name.clone(), scopes))
}

/// Reads an OpenAPI document into what the API will hold.
pub(super) fn read_definition(body: &str) -> AwsResult<Definition> {
    let doc = super::super::document(body)
        .map_err(|e| bad_request(format!("Unable to parse the API definition: {e}")))?;
    if doc
        .get("openapi")
        .and_then(Json::as_str)
        .is_none_or(|v| !v.starts_with('3'))
    {
        return Err(bad_request(
            "Unable to import the API definition: only OpenAPI 3.0 documents are supported.",
        ));
    }
    let info = &doc["info"];
    let title = info["title"].as_str().ok_or_else(|| {
        bad_request("Unable to import the API definition: info.title is required.")
    })?;
    let mut definition = Definition {
        api: Value::map()
            .with("Name", title)
            .with_opt("Version", info["version"].as_str())
            .with_opt("Description", info["description"].as_str())
            .with("ProtocolType", "HTTP"),
        authorizers: Vec::new(),
        routes: Vec::new(),
        warnings: Vec::new(),
    };
    if let Some(cors) = doc.get(CORS) {
        definition.api.insert("CorsConfiguration", pascal(cors));
    }
    let schemes = doc["components"]["securitySchemes"].as_object();
    for (name, scheme) in schemes.into_iter().flatten() {
        match scheme.get(AUTHORIZER) {
            Some(extension) => definition
                .authorizers
                .push((name.clone(), authorizer_of(name, extension))),
            None => definition.warnings.push(format!(
                "Security scheme {name} has no x-amazon-apigateway-authorizer and was ignored."
            )),
        }
    }
    read_paths(&doc, &mut definition);
    Ok(definition)
}

fn read_paths(doc: &Json, definition: &mut Definition) {
    let global_security = doc.get("security");
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let verb = match method.as_str() {
                ANY_METHOD => "ANY".to_string(),
                m if METHODS.contains(&m) => m.to_ascii_uppercase(),
                _ => continue,
            };
            let route_key = if path == "/$default" {
                "$default".to_string()
            } else {
                format!("{verb} {path}")
            };
            let mut route = Value::map()
                .with("RouteKey", route_key.as_str())
                .with_opt("OperationName", operation["operationId"].as_str());
            let security = operation.get("security").or(global_security);
            if let Some((name, scopes)) = authorization_of(security) {
                route.insert("AuthorizerName", name);
                route.insert("AuthorizationScopes", scopes);
            }
            let integration = operation.get(INTEGRATION).map(integration_of);
            if integration.is_none() {
                definition
                    .warnings
                    .push(format!("Route {route_key} has no integration."));
            }
            definition.routes.push((route, integration));
        }
    }
}

impl ApiGatewayV2 {
    pub(super) fn import_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let definition = read_definition(input.str("Body").unwrap_or_default())?;
        check_warnings(&definition, input)?;
        let id = self.new_api_id()?;
        let api = definition
            .api
            .clone()
            .with("ApiId", id.as_str())
            .with(
                "ApiEndpoint",
                format!("https://{id}.execute-api.{}.amazonaws.com", ctx.region),
            )
            .with("ApiKeySelectionExpression", "$request.header.x-api-key")
            .with("CreatedDate", now_iso())
            .with("DisableExecuteApiEndpoint", false)
            .with("RouteSelectionExpression", "$request.method $request.path")
            .with("Tags", Value::map())
            .with_opt(
                "Warnings",
                (!definition.warnings.is_empty()).then(|| {
                    definition
                        .warnings
                        .iter()
                        .map(Value::from)
                        .collect::<Vec<_>>()
                }),
            );
        self.save(ctx, Key::of(&id, Kind::Api, &id), &api)?;
        self.store_definition(ctx, &id, &definition)?;
        Ok(api)
    }

    pub(super) fn reimport_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, mut api) = self.api_of(ctx, input)?;
        let definition = read_definition(input.str("Body").unwrap_or_default())?;
        check_warnings(&definition, input)?;
        for kind in [Kind::Route, Kind::Integration, Kind::Authorizer] {
            for doc in self.list(ctx, &id, kind, "")? {
                let child = doc.str(kind.id_member()).unwrap_or_default();
                self.remove(ctx, Key::of(&id, kind, child))?;
            }
        }
        api.remove("CorsConfiguration");
        for (k, v) in definition.api.as_map().into_iter().flatten() {
            api.insert(k.clone(), v.clone());
        }
        self.save(ctx, Key::of(&id, Kind::Api, &id), &api)?;
        self.store_definition(ctx, &id, &definition)?;
        Ok(api)
    }

    /// Stores an imported definition's authorizers, integrations and routes, then deploys
    /// the stages that deploy automatically, once.
    fn store_definition(&self, ctx: &Context, api: &str, definition: &Definition) -> AwsResult<()> {
        let mut authorizer_ids = Vec::new();
        for (name, authorizer) in &definition.authorizers {
            let id = Kind::Authorizer.new_id();
            let doc = authorizer.clone().with("AuthorizerId", id.as_str());
            self.save(ctx, Key::of(api, Kind::Authorizer, &id), &doc)?;
            authorizer_ids.push((name.clone(), id, doc));
        }
        for (route, integration) in &definition.routes {
            let mut route = route.clone();
            if let Some(integration) = integration {
                let id = Kind::Integration.new_id();
                let doc = integration.clone().with("IntegrationId", id.as_str());
                self.save(ctx, Key::of(api, Kind::Integration, &id), &doc)?;
                route.insert("Target", format!("integrations/{id}"));
            }
            let mut authorization = "NONE";
            if let Some(name) = route.remove("AuthorizerName") {
                let found = authorizer_ids
                    .iter()
                    .find(|(n, _, _)| Some(n.as_str()) == name.as_str());
                if let Some((_, id, doc)) = found {
                    authorization = match doc.str("AuthorizerType") {
                        Some("JWT") => "JWT",
                        _ => "CUSTOM",
                    };
                    route.insert("AuthorizerId", id.as_str());
                }
            }
            if authorization != "JWT" {
                route.remove("AuthorizationScopes");
            }
            let id = Kind::Route.new_id();
            let route = route
                .with("RouteId", id.as_str())
                .with("AuthorizationType", authorization)
                .with("ApiKeyRequired", false);
            self.save(ctx, Key::of(api, Kind::Route, &id), &route)?;
        }
        self.changed(ctx, api)
    }

    pub(super) fn export_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, api) = self.api_of(ctx, input)?;
        if input.str("Specification") != Some("OAS30") {
            return Err(bad_request(
                "Unsupported specification: only OAS30 is supported.",
            ));
        }
        let Deployed {
            routes,
            integrations,
            authorizers,
            cors,
            ..
        } = match input.str("StageName") {
            Some(stage) => self.deployed(ctx, &id, stage)?,
            None => self.current(ctx, &id, &api)?,
        };
        let extensions = input.bool("IncludeExtensions") != Some(false);
        let mut doc = json!({
            "openapi": "3.0.1",
            "info": {
                "title": api.str("Name").unwrap_or_default(),
                "version": api.str("Version").unwrap_or(api.str("CreatedDate").unwrap_or_default()),
            },
            "paths": paths(&routes, &integrations, &authorizers, extensions),
        });
        if let Some(description) = api.str("Description") {
            doc["info"]["description"] = description.into();
        }
        if extensions {
            add_extensions(&mut doc, &authorizers, cors.as_ref());
        }
        if let Some(stage) = input.str("StageName") {
            let base = if stage == "$default" { "" } else { stage };
            doc["servers"] = json!([{
                "url": format!("https://{id}.execute-api.{}.amazonaws.com/{{basePath}}", ctx.region),
                "variables": {"basePath": {"default": base}},
            }]);
        }
        let text = match input.str("OutputType") {
            Some("YAML") => yaml(&doc),
            _ => serde_json::to_string_pretty(&doc).unwrap_or_default(),
        };
        Ok(Value::map().with("body", Value::Blob(text.into_bytes())))
    }
}

/// Refuses a definition with warnings when the caller asked to fail on them.
fn check_warnings(definition: &Definition, input: &Value) -> AwsResult<()> {
    if input.bool("FailOnWarnings") == Some(true) && !definition.warnings.is_empty() {
        return Err(bad_request(format!(
            "Warnings found during import:\n\t{}",
            definition.warnings.join("\n\t")
        )));
    }
    Ok(())
}

/// A model document's members in the extensions' `camelCase`.
fn camel(value: &Value) -> Json {
    let mut out = Map::new();
    for (k, v) in value.as_map().into_iter().flatten() {
        let mut name = k.clone();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_lowercase();
        }
        out.insert(name, v.to_json());
    }
    Json::Object(out)
}

/// The `paths` object of an export.
fn paths(
    routes: &[Value],
    integrations: &[Value],
    authorizers: &[Value],
    extensions: bool,
) -> Json {
    let mut paths = Map::new();
    for route in routes {
        let key = route.str("RouteKey").unwrap_or_default();
        let (method, path) = match key.split_once(' ') {
            Some((m, p)) => (m, p),
            None => ("ANY", "/$default"),
        };
        let method = match method {
            "ANY" => ANY_METHOD.to_string(),
            m => m.to_ascii_lowercase(),
        };
        let mut operation = json!({
            "responses": {"default": {"description": format!("Default response for {key}")}},
        });
        let parameters: Vec<Json> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| json!({"name": name.trim_end_matches('+'), "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        if !parameters.is_empty() {
            operation["parameters"] = Json::Array(parameters);
        }
        if let Some(authorizer) = route.str("AuthorizerId").and_then(|id| {
            authorizers
                .iter()
                .find(|a| a.str("AuthorizerId") == Some(id))
        }) {
            let scopes = route
                .get("AuthorizationScopes")
                .map_or(json!([]), Value::to_json);
            operation["security"] = json!([{ authorizer.str("Name").unwrap_or_default(): scopes }]);
        }
        let target = route
            .str("Target")
            .and_then(|t| t.strip_prefix("integrations/"));
        let integration = target.and_then(|id| {
            integrations
                .iter()
                .find(|i| i.str("IntegrationId") == Some(id))
        });
        if let (true, Some(integration)) = (extensions, integration) {
            operation[INTEGRATION] = integration_extension(integration);
        }
        let item = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        item[method] = operation;
    }
    Json::Object(paths)
}

fn integration_extension(integration: &Value) -> Json {
    let mut extension = Map::new();
    let members = [
        ("IntegrationType", "type"),
        ("IntegrationUri", "uri"),
        ("IntegrationMethod", "httpMethod"),
        ("PayloadFormatVersion", "payloadFormatVersion"),
        ("ConnectionType", "connectionType"),
        ("TimeoutInMillis", "timeoutInMillis"),
        ("CredentialsArn", "credentials"),
    ];
    for (member, name) in members {
        if let Some(v) = integration.get(member) {
            let v = match (name, v.as_str()) {
                ("type", Some(t)) => Json::from(t.to_ascii_lowercase()),
                _ => v.to_json(),
            };
            extension.insert(name.to_string(), v);
        }
    }
    Json::Object(extension)
}

fn add_extensions(doc: &mut Json, authorizers: &[Value], cors: Option<&Value>) {
    if let Some(cors) = cors {
        doc[CORS] = camel(cors);
    }
    if !authorizers.is_empty() {
        let mut schemes = Map::new();
        for authorizer in authorizers {
            let mut extension = camel(authorizer);
            if let Some(obj) = extension.as_object_mut() {
                for internal in ["authorizerId", "name"] {
                    obj.remove(internal);
                }
                if let Some(kind) = obj.remove("authorizerType") {
                    obj.insert(
                        "type".into(),
                        kind.as_str()
                            .unwrap_or_default()
                            .to_ascii_lowercase()
                            .into(),
                    );
                }
                if let Some(jwt) = authorizer.get("JwtConfiguration") {
                    obj.insert("jwtConfiguration".into(), camel(jwt));
                }
            }
            let scheme = json!({"type": "oauth2", "flows": {}, AUTHORIZER: extension});
            schemes.insert(
                authorizer.str("Name").unwrap_or_default().to_string(),
                scheme,
            );
        }
        doc["components"] = json!({ "securitySchemes": schemes });
    }
    doc["x-amazon-apigateway-importexport-version"] = "1.0".into();
}

/// A JSON document written as YAML (block style; strings quoted as JSON, which YAML reads).
fn yaml(doc: &Json) -> String {
    let mut out = String::new();
    write_yaml(doc, 0, &mut out);
    out
}

fn write_yaml(value: &Json, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Json::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                out.push_str(&format!("{pad}{}:", Json::from(k.as_str())));
                write_yaml_child(v, indent, out);
            }
        }
        Json::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&format!("{pad}-"));
                write_yaml_child(item, indent, out);
            }
        }
        scalar => out.push_str(&format!("{pad}{scalar}\n")),
    }
}

fn write_yaml_child(value: &Json, indent: usize, out: &mut String) {
    match value {
        Json::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_yaml(value, indent + 2, out);
        }
        Json::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_yaml(value, indent + 2, out);
        }
        scalar => out.push_str(&format!(" {scalar}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAM: &str = r#"{
      "openapi": "3.0.1",
      "info": {"title": "sam-app", "version": "1.0"},
      "x-amazon-apigateway-cors": {"allowOrigins": ["*"], "maxAge": 60},
      "paths": {
        "/items/{id}": {"get": {
          "security": [{"jwt": ["read"]}],
          "x-amazon-apigateway-integration": {"type": "aws_proxy", "httpMethod": "POST",
            "uri": "arn:aws:lambda:us-east-1:000000000000:function:f", "payloadFormatVersion": "2.0"}}},
        "/$default": {"x-amazon-apigateway-any-method": {
          "x-amazon-apigateway-integration": {"type": "http_proxy", "httpMethod": "ANY", "uri": "https://example.com"}}}
      },
      "components": {"securitySchemes": {"jwt": {"type": "oauth2",
        "x-amazon-apigateway-authorizer": {"type": "jwt", "identitySource": "$request.header.Authorization",
          "jwtConfiguration": {"issuer": "https://issuer.example", "audience": ["app"]}}}}}
    }"#;

    #[test]
    fn sam_documents_become_routes_integrations_and_authorizers() {
        let d = read_definition(SAM).unwrap();
        assert_eq!(d.api.str("Name"), Some("sam-app"));
        assert_eq!(
            d.api.get("CorsConfiguration").and_then(|c| c.int("MaxAge")),
            Some(60)
        );
        assert_eq!(d.routes.len(), 2);
        let (route, integration) = d
            .routes
            .iter()
            .find(|(r, _)| r.str("RouteKey") != Some("$default"))
            .unwrap();
        assert_eq!(route.str("RouteKey"), Some("GET /items/{id}"));
        assert_eq!(route.str("AuthorizerName"), Some("jwt"));
        let integration = integration.as_ref().unwrap();
        assert_eq!(integration.str("IntegrationType"), Some("AWS_PROXY"));
        assert_eq!(integration.str("PayloadFormatVersion"), Some("2.0"));
        assert!(d
            .routes
            .iter()
            .any(|(r, _)| r.str("RouteKey") == Some("$default")));
        let (_, authorizer) = &d.authorizers[0];
        assert_eq!(authorizer.str("AuthorizerType"), Some("JWT"));
        assert_eq!(
            authorizer
                .get("JwtConfiguration")
                .and_then(|j| j.str("Issuer")),
            Some("https://issuer.example")
        );
        assert!(read_definition("openapi: 3.0.1").is_err());
        assert!(read_definition("{\"swagger\": \"2.0\"}").is_err());
    }

    #[test]
    fn yaml_exports_nest_by_indentation() {
        let doc = json!({"openapi": "3.0.1", "paths": {"/a": {"get": {}}}, "tags": ["x"]});
        let text = yaml(&doc);
        assert!(text.contains("\"openapi\": \"3.0.1\"\n"));
        assert!(text.contains("\"paths\":\n  \"/a\":\n    \"get\": {}\n"));
        assert!(text.contains("\"tags\":\n  - \"x\"\n"));
    }
}
