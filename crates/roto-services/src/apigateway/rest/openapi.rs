//! ImportRestApi, PutRestApi (overwrite or merge) and GetExport: REST APIs as OpenAPI 3 or
//! Swagger 2 documents with API Gateway's extensions, as SAM and the Serverless Framework
//! write them: `x-amazon-apigateway-integration` (with its `responses`),
//! `-any-method`, `-binary-media-types`, `-api-key-source`, `-request-validators` and
//! `-request-validator`, `-gateway-responses`, `-policy`, and authorizers as security
//! schemes (`securitySchemes` / `securityDefinitions`) carrying
//! `x-amazon-apigateway-authorizer`; an `apiKey` scheme without one marks the methods that
//! name it as needing an API key.
//!
//! Documents are read as JSON (serde_json bounds nesting at 128 levels); YAML is refused
//! with a BadRequestException, as Roto carries no YAML parser. Exports are JSON, from the
//! stage's deployment.

use roto_core::{AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::super::{bad_request, new_id, ApiGateway};
use super::{missing, output, scope};

const METHODS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];
const ANY_METHOD: &str = "x-amazon-apigateway-any-method";
const INTEGRATION: &str = "x-amazon-apigateway-integration";
const AUTHORIZER: &str = "x-amazon-apigateway-authorizer";

/// A document's body, parsed.
fn parse(input: &Value) -> AwsResult<Json> {
    let body = input
        .get("body")
        .and_then(Value::as_blob)
        .unwrap_or_default();
    let text = std::str::from_utf8(body)
        .map_err(|_| bad_request("Invalid OpenAPI input: the document is not UTF-8"))?;
    read_document(text)
}

/// A document's text, read as JSON or YAML; one that names neither `openapi` nor
/// `swagger` is refused.
fn read_document(text: &str) -> AwsResult<Json> {
    let doc = super::super::document(text)
        .map_err(|e| bad_request(format!("Invalid OpenAPI input: {e}")))?;
    if doc.get("openapi").is_none() && doc.get("swagger").is_none() {
        return Err(bad_request(
            "Invalid OpenAPI input: the document names neither openapi nor swagger",
        ));
    }
    Ok(doc)
}

/// The fuzzer's way in: `text` read as ImportRestApi reads a body, what it defines, and
/// each integration written back as GetExport writes it.
pub fn fuzz_definition(text: &str) {
    let Ok(doc) = read_document(text) else {
        return;
    };
    for base in ["", "/v1/"] {
        for (_, methods) in read_definition(&doc, base).paths {
            for (_, method) in methods {
                if method["methodIntegration"].is_object() {
                    integration_extension(&method["methodIntegration"]);
                }
            }
        }
    }
}

/// The model name a `$ref` names (`#/components/schemas/Pet`, `#/definitions/Pet`).
fn model_ref(schema: &Json) -> Option<String> {
    schema["$ref"]
        .as_str()?
        .rsplit('/')
        .next()
        .map(str::to_string)
}

/// The schemes (authorizers and API keys) a document defines.
fn schemes(doc: &Json) -> Map<String, Json> {
    doc["components"]["securitySchemes"]
        .as_object()
        .or_else(|| doc["securityDefinitions"].as_object())
        .cloned()
        .unwrap_or_default()
}

/// An integration as the extension describes it, in the model's members.
fn integration_of(extension: &Json) -> Json {
    let mut integration = extension.clone();
    let object = integration.as_object_mut().expect("an object");
    let responses = object.remove("responses");
    if let Some(kind) = object.get("type").and_then(Json::as_str) {
        let upper = kind.to_ascii_uppercase();
        object.insert("type".into(), upper.into());
    }
    object
        .entry("passthroughBehavior")
        .or_insert("WHEN_NO_MATCH".into());
    object.entry("timeoutInMillis").or_insert(29_000.into());
    let mut mapped = Map::new();
    for (pattern, response) in responses
        .as_ref()
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, response)| response.is_object())
    {
        let mut r = response.clone();
        let status = r["statusCode"]
            .as_str()
            .map(str::to_string)
            .or_else(|| r["statusCode"].as_u64().map(|s| s.to_string()))
            .unwrap_or_else(|| "200".into());
        r["statusCode"] = status.clone().into();
        if pattern != "default" {
            r["selectionPattern"] = pattern.clone().into();
        }
        mapped.insert(status, r);
    }
    object.insert("integrationResponses".into(), Json::Object(mapped));
    integration
}

/// The method one OpenAPI operation defines (`authorizers` by scheme name -> id).
fn method_of(
    doc: &Json,
    http_method: &str,
    operation: &Json,
    authorizers: &Map<String, Json>,
) -> Json {
    let mut method =
        json!({"httpMethod": http_method, "authorizationType": "NONE", "apiKeyRequired": false});
    if let Some(name) = operation["operationId"].as_str() {
        method["operationName"] = name.into();
    }
    let security = operation.get("security").or_else(|| doc.get("security"));
    let defined = schemes(doc);
    for requirement in security.and_then(Json::as_array).into_iter().flatten() {
        for (name, scopes) in requirement.as_object().into_iter().flatten() {
            let scheme = defined.get(name).unwrap_or(&Json::Null);
            if let Some(authorizer) = authorizers.get(name) {
                let cognito = scheme[AUTHORIZER]["type"].as_str() == Some("cognito_user_pools");
                method["authorizationType"] = if cognito {
                    "COGNITO_USER_POOLS"
                } else {
                    "CUSTOM"
                }
                .into();
                method["authorizerId"] = authorizer.clone();
                if cognito && scopes.as_array().is_some_and(|s| !s.is_empty()) {
                    method["authorizationScopes"] = scopes.clone();
                }
            } else if scheme["x-amazon-apigateway-authtype"] == "awsSigv4" {
                method["authorizationType"] = "AWS_IAM".into();
            } else if scheme["type"] == "apiKey" {
                method["apiKeyRequired"] = true.into();
            }
        }
    }
    let mut parameters = Map::new();
    let mut request_models = Map::new();
    for p in operation["parameters"].as_array().into_iter().flatten() {
        let place = match p["in"].as_str() {
            Some("query") => "querystring",
            Some("path") => "path",
            Some("header") => "header",
            Some("body") => {
                if let Some(name) = model_ref(&p["schema"]) {
                    request_models.insert("application/json".into(), name.into());
                }
                continue;
            }
            _ => continue,
        };
        let required = p["required"].as_bool().unwrap_or(place == "path");
        parameters.insert(
            format!(
                "method.request.{place}.{}",
                p["name"].as_str().unwrap_or_default()
            ),
            required.into(),
        );
    }
    for (content_type, media) in operation["requestBody"]["content"]
        .as_object()
        .into_iter()
        .flatten()
    {
        if let Some(name) = model_ref(&media["schema"]) {
            request_models.insert(content_type.clone(), name.into());
        }
    }
    if !parameters.is_empty() {
        method["requestParameters"] = Json::Object(parameters);
    }
    if !request_models.is_empty() {
        method["requestModels"] = Json::Object(request_models);
    }
    let mut responses = Map::new();
    for (status, response) in operation["responses"].as_object().into_iter().flatten() {
        if status == "default" {
            continue;
        }
        let mut r = json!({"statusCode": status});
        let headers: Map<String, Json> = response["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(h, _)| (format!("method.response.header.{h}"), false.into()))
            .collect();
        if !headers.is_empty() {
            r["responseParameters"] = Json::Object(headers);
        }
        let models: Map<String, Json> = response["content"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(ct, m)| Some((ct.clone(), model_ref(&m["schema"])?.into())))
            .chain(
                model_ref(&response["schema"]).map(|m| ("application/json".to_string(), m.into())),
            )
            .collect();
        if !models.is_empty() {
            r["responseModels"] = Json::Object(models);
        }
        responses.insert(status.clone(), r);
    }
    if !responses.is_empty() {
        method["methodResponses"] = Json::Object(responses);
    }
    if let Some(validator) = operation["x-amazon-apigateway-request-validator"]
        .as_str()
        .or_else(|| doc["x-amazon-apigateway-request-validator"].as_str())
    {
        method["requestValidatorName"] = validator.into();
    }
    if let Some(extension) = operation.get(INTEGRATION).filter(|e| e.is_object()) {
        method["methodIntegration"] = integration_of(extension);
    }
    method
}

/// What an OpenAPI or Swagger document defines for a REST API, read without touching the
/// store (new validators and authorizers get their ids here, and methods name them).
#[derive(Debug, Default)]
pub struct Definition {
    /// Members of the API's own document (`binaryMediaTypes`, `apiKeySource`, `policy`,
    /// `minimumCompressionSize`, `version`).
    pub settings: Vec<(&'static str, Json)>,
    /// Models, from `components.schemas` or `definitions`.
    pub models: Vec<Json>,
    /// Request validators.
    pub validators: Vec<Json>,
    /// Authorizers, from the security schemes that carry one.
    pub authorizers: Vec<Json>,
    /// Gateway responses.
    pub gateway_responses: Vec<Json>,
    /// Each path (after `base`) and its methods, by HTTP method.
    pub paths: Vec<(String, Vec<(String, Json)>)>,
}

/// Reads what `doc` defines; paths are put after `base` (a prepended `basePath`).
pub fn read_definition(doc: &Json, base: &str) -> Definition {
    let mut settings = Vec::new();
    for (extension, member) in [
        ("x-amazon-apigateway-binary-media-types", "binaryMediaTypes"),
        ("x-amazon-apigateway-api-key-source", "apiKeySource"),
        ("x-amazon-apigateway-policy", "policy"),
        (
            "x-amazon-apigateway-minimum-compression-size",
            "minimumCompressionSize",
        ),
    ] {
        if let Some(v) = doc.get(extension) {
            let value = if member == "policy" && !v.is_string() {
                v.to_string().into()
            } else {
                v.clone()
            };
            settings.push((member, value));
        }
    }
    if let Some(v) = doc["info"]["version"].as_str() {
        settings.push(("version", v.into()));
    }
    let models = doc["components"]["schemas"]
        .as_object()
        .or_else(|| doc["definitions"].as_object())
        .into_iter()
        .flatten()
        .map(|(name, schema)| json!({"id": new_id(), "name": name, "contentType": "application/json", "schema": schema.to_string()}))
        .collect();
    let mut validator_ids = Map::new();
    let mut validators = Vec::new();
    for (name, v) in doc["x-amazon-apigateway-request-validators"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let vid = new_id();
        validators.push(json!({"id": vid, "name": name,
            "validateRequestBody": v["validateRequestBody"].as_bool().unwrap_or(false),
            "validateRequestParameters": v["validateRequestParameters"].as_bool().unwrap_or(false)}));
        validator_ids.insert(name.clone(), vid.into());
    }
    let (authorizers, authorizer_ids) = read_authorizers(doc);
    let gateway_responses = doc["x-amazon-apigateway-gateway-responses"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, response)| response.is_object())
        .map(|(kind, response)| {
            let mut r = response.clone();
            r["responseType"] = kind.clone().into();
            r["defaultResponse"] = false.into();
            r
        })
        .collect();
    let base = base.trim_end_matches('/');
    let paths = doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(path, item)| {
            let methods = item
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(key, operation)| {
                    let http_method = match key.as_str() {
                        ANY_METHOD => "ANY".to_string(),
                        m if METHODS.contains(&m) => m.to_ascii_uppercase(),
                        _ => return None,
                    };
                    let mut method = method_of(doc, &http_method, operation, &authorizer_ids);
                    if let Some(name) = method
                        .as_object_mut()
                        .and_then(|o| o.remove("requestValidatorName"))
                    {
                        if let Some(vid) = name.as_str().and_then(|n| validator_ids.get(n)) {
                            method["requestValidatorId"] = vid.clone();
                        }
                    }
                    if let Some(integration) = method.get_mut("methodIntegration") {
                        integration
                            .as_object_mut()
                            .map(|o| o.entry("cacheKeyParameters").or_insert(json!([])));
                    }
                    Some((http_method, method))
                })
                .collect();
            (format!("{base}{path}"), methods)
        })
        .collect();
    Definition {
        settings,
        models,
        validators,
        authorizers,
        gateway_responses,
        paths,
    }
}

/// The authorizers a document's security schemes define, and their ids by scheme name.
fn read_authorizers(doc: &Json) -> (Vec<Json>, Map<String, Json>) {
    let mut authorizers = Vec::new();
    let mut ids = Map::new();
    for (name, scheme) in schemes(doc) {
        let Some(extension) = scheme.get(AUTHORIZER).filter(|e| e.is_object()) else {
            continue;
        };
        let aid = new_id();
        let kind = extension["type"]
            .as_str()
            .unwrap_or("token")
            .to_ascii_uppercase();
        let mut authorizer = json!({"id": aid, "name": name, "type": kind,
            "authType": scheme["x-amazon-apigateway-authtype"].as_str().unwrap_or("custom"),
            "authorizerResultTtlInSeconds": extension["authorizerResultTtlInSeconds"].as_i64().unwrap_or(300)});
        for member in [
            "authorizerUri",
            "authorizerCredentials",
            "identitySource",
            "identityValidationExpression",
            "providerARNs",
        ] {
            if let Some(v) = extension.get(member) {
                authorizer[member] = v.clone();
            }
        }
        if authorizer.get("identitySource").is_none() && kind == "TOKEN" {
            let header = scheme["name"].as_str().unwrap_or("Authorization");
            authorizer["identitySource"] = format!("method.request.header.{header}").into();
        }
        authorizers.push(authorizer);
        ids.insert(name, aid.into());
    }
    (authorizers, ids)
}

impl ApiGateway {
    pub(super) fn openapi_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        Some(match operation {
            "ImportRestApi" => self.import_rest_api(ctx, input),
            "PutRestApi" => self.put_rest_api(ctx, input),
            "GetExport" => self.get_export(ctx, input),
            _ => return None,
        })
    }

    fn import_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let doc = parse(input)?;
        let title = doc["info"]["title"]
            .as_str()
            .filter(|t| !t.is_empty())
            .unwrap_or("");
        if title.is_empty() {
            return Err(bad_request("Invalid OpenAPI input: info.title is required"));
        }
        let mut create = Value::map().with("name", title);
        if let Some(d) = doc["info"]["description"].as_str() {
            create.insert("description", d);
        }
        if let Some(types) = input
            .get("parameters")
            .and_then(|p| p.str("endpointConfigurationTypes"))
        {
            create.insert(
                "endpointConfiguration",
                Value::map().with("types", vec![Value::from(types)]),
            );
        }
        let api = self.new_rest_api(ctx, &create)?;
        let id = api["id"].as_str().unwrap_or_default().to_string();
        self.apply_definition(ctx, &id, &doc, input)?;
        Ok(output(&self.rest_api(ctx, &id)?))
    }

    fn put_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, id)?;
        let doc = parse(input)?;
        if input.str("mode") == Some("overwrite") {
            let root = self.root_resource(ctx, id)?;
            for (kind, key) in [
                ("resource", "id"),
                ("model", "name"),
                ("requestvalidator", "id"),
                ("authorizer", "id"),
                ("gatewayresponse", "responseType"),
            ] {
                for item in self.store.list(scope(ctx, kind, id))? {
                    let stored = item[key].as_str().unwrap_or_default();
                    if item["id"] != root["id"] {
                        self.store.delete(scope(ctx, kind, id), stored)?;
                    }
                }
            }
            let mut bare = root;
            bare.as_object_mut().map(|o| o.remove("resourceMethods"));
            self.store.put(
                scope(ctx, "resource", id),
                bare["id"].as_str().unwrap_or_default(),
                &bare,
            )?;
        }
        self.apply_definition(ctx, id, &doc, input)?;
        Ok(output(&self.rest_api(ctx, id)?))
    }

    fn root_resource(&self, ctx: &Context, api: &str) -> AwsResult<Json> {
        self.store
            .list(scope(ctx, "resource", api))?
            .into_iter()
            .find(|r| r.get("parentId").is_none())
            .ok_or_else(|| missing("Resource"))
    }

    /// Stores what a document defines into API `id`.
    fn apply_definition(
        &self,
        ctx: &Context,
        id: &str,
        doc: &Json,
        input: &Value,
    ) -> AwsResult<()> {
        let base = match input.get("parameters").and_then(|p| p.str("basepath")) {
            Some("prepend") => doc["basePath"].as_str().unwrap_or_default(),
            _ => "",
        };
        let definition = read_definition(doc, base);
        let mut api = self.rest_api(ctx, id)?;
        for (member, value) in definition.settings {
            api[member] = value;
        }
        self.store.put(scope(ctx, "restapi", ""), id, &api)?;
        for model in &definition.models {
            let name = model["name"].as_str().unwrap_or_default();
            self.store.put(scope(ctx, "model", id), name, model)?;
        }
        for (kind, list, key) in [
            ("requestvalidator", &definition.validators, "id"),
            ("authorizer", &definition.authorizers, "id"),
            (
                "gatewayresponse",
                &definition.gateway_responses,
                "responseType",
            ),
        ] {
            for item in list {
                let item_id = item[key].as_str().unwrap_or_default();
                self.store.put(scope(ctx, kind, id), item_id, item)?;
            }
        }
        for (path, methods) in definition.paths {
            let resource_id = self.ensure_path(ctx, id, &path)?;
            let mut resource = self
                .store
                .get(scope(ctx, "resource", id), &resource_id)?
                .ok_or_else(|| missing("Resource"))?;
            for (http_method, mut method) in methods {
                if let Some(integration) = method.get_mut("methodIntegration") {
                    integration["cacheNamespace"] = resource_id.clone().into();
                }
                resource["resourceMethods"][&http_method] = method;
            }
            self.store
                .put(scope(ctx, "resource", id), &resource_id, &resource)?;
        }
        Ok(())
    }

    fn get_export(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api_id = input.str("restApiId").unwrap_or_default();
        let api = self.rest_api(ctx, api_id)?;
        let stage_name = input.str("stageName").unwrap_or_default();
        let stage = self
            .store
            .get(scope(ctx, "stage", api_id), stage_name)?
            .ok_or_else(|| missing("Stage"))?;
        let deployment = stage["deploymentId"].as_str().unwrap_or_default();
        let snapshot = self
            .deployed(&ctx.account, &ctx.region, api_id, deployment)?
            .ok_or_else(|| missing("Deployment"))?;
        let extensions = input
            .get("parameters")
            .and_then(|p| p.str("extensions"))
            .unwrap_or_default()
            .to_string();
        let with_integrations =
            extensions.contains("integrations") || extensions.contains("apigateway");
        let swagger = match input.str("exportType") {
            Some("swagger") => true,
            Some("oas30") => false,
            _ => {
                return Err(bad_request(
                    "Invalid export type specified. Valid options are oas30 and swagger",
                ))
            }
        };
        let doc = export(&api, &snapshot, ctx, stage_name, swagger, with_integrations);
        let body = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        Ok(Value::map()
            .with("contentType", "application/octet-stream")
            .with(
                "contentDisposition",
                format!(
                    "attachment; filename=\"{}_{}.json\"",
                    if swagger { "swagger" } else { "oas30" },
                    stage_name
                ),
            )
            .with("body", Value::Blob(body)))
    }
}

/// The OpenAPI 3 or Swagger 2 document of a deployed API.
fn export(
    api: &Json,
    snapshot: &super::Snapshot,
    ctx: &Context,
    stage: &str,
    swagger: bool,
    with_integrations: bool,
) -> Json {
    let host = format!(
        "{}.execute-api.{}.amazonaws.com",
        api["id"].as_str().unwrap_or_default(),
        ctx.region
    );
    let reference = |name: &str| {
        if swagger {
            format!("#/definitions/{name}")
        } else {
            format!("#/components/schemas/{name}")
        }
    };
    let mut paths = Map::new();
    for resource in &snapshot.resources {
        let mut item = Map::new();
        for (http_method, method) in resource["resourceMethods"]
            .as_object()
            .into_iter()
            .flatten()
        {
            let mut operation = Map::new();
            let parameters: Vec<Json> = method["requestParameters"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, required)| {
                    let rest = k.strip_prefix("method.request.")?;
                    let (place, name) = rest.split_once('.')?;
                    let place = if place == "querystring" { "query" } else { place };
                    Some(if swagger {
                        json!({"name": name, "in": place, "required": required, "type": "string"})
                    } else {
                        json!({"name": name, "in": place, "required": required, "schema": {"type": "string"}})
                    })
                })
                .collect();
            if !parameters.is_empty() {
                operation.insert("parameters".into(), Json::Array(parameters));
            }
            let mut responses = Map::new();
            for (status, response) in method["methodResponses"].as_object().into_iter().flatten() {
                let mut r = json!({"description": format!("{status} response")});
                if let Some(model) = response["responseModels"]["application/json"].as_str() {
                    if swagger {
                        r["schema"] = json!({"$ref": reference(model)});
                    } else {
                        r["content"] =
                            json!({"application/json": {"schema": {"$ref": reference(model)}}});
                    }
                }
                responses.insert(status.clone(), r);
            }
            operation.insert("responses".into(), Json::Object(responses));
            if let Some(authorizer) = method["authorizerId"].as_str() {
                if let Some(a) = snapshot.authorizers.iter().find(|a| a["id"] == authorizer) {
                    operation.insert(
                        "security".into(),
                        json!([{ a["name"].as_str().unwrap_or_default(): [] }]),
                    );
                }
            }
            if with_integrations {
                if let Some(integration) = method.get("methodIntegration") {
                    operation.insert(INTEGRATION.into(), integration_extension(integration));
                }
            }
            let key = if http_method == "ANY" {
                ANY_METHOD.to_string()
            } else {
                http_method.to_ascii_lowercase()
            };
            item.insert(key, Json::Object(operation));
        }
        paths.insert(
            resource["path"].as_str().unwrap_or("/").to_string(),
            Json::Object(item),
        );
    }
    let models: Map<String, Json> = snapshot
        .models
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap_or_default().to_string(),
                m["schema"]
                    .as_str()
                    .and_then(|s| serde_json::from_str(s).ok())
                    .unwrap_or_else(|| json!({})),
            )
        })
        .collect();
    let schemes: Map<String, Json> = snapshot
        .authorizers
        .iter()
        .map(|a| {
            let mut extension =
                json!({"type": a["type"].as_str().unwrap_or_default().to_ascii_lowercase()});
            for member in [
                "authorizerUri",
                "identitySource",
                "authorizerResultTtlInSeconds",
                "providerARNs",
                "identityValidationExpression",
            ] {
                if let Some(v) = a.get(member) {
                    extension[member] = v.clone();
                }
            }
            let header = a["identitySource"]
                .as_str()
                .and_then(|s| s.strip_prefix("method.request.header."))
                .unwrap_or("Authorization");
            (
                a["name"].as_str().unwrap_or_default().to_string(),
                json!({"type": "apiKey", "name": header, "in": "header",
                "x-amazon-apigateway-authtype": a["authType"], AUTHORIZER: extension}),
            )
        })
        .collect();
    let info = json!({"title": api["name"], "version": api["version"].as_str().unwrap_or("1.0")});
    let mut doc = if swagger {
        json!({"swagger": "2.0", "info": info, "host": host, "basePath": format!("/{stage}"), "schemes": ["https"], "paths": paths})
    } else {
        json!({"openapi": "3.0.1", "info": info,
            "servers": [{"url": format!("https://{host}/{{basePath}}"), "variables": {"basePath": {"default": stage}}}],
            "paths": paths})
    };
    let (model_key, scheme_key) = if swagger {
        ("definitions", "securityDefinitions")
    } else {
        ("schemas", "securitySchemes")
    };
    if swagger {
        if !models.is_empty() {
            doc[model_key] = Json::Object(models);
        }
        if !schemes.is_empty() {
            doc[scheme_key] = Json::Object(schemes);
        }
    } else if !models.is_empty() || !schemes.is_empty() {
        doc["components"] = json!({});
        if !models.is_empty() {
            doc["components"][model_key] = Json::Object(models);
        }
        if !schemes.is_empty() {
            doc["components"][scheme_key] = Json::Object(schemes);
        }
    }
    if let Some(types) = api["binaryMediaTypes"].as_array().filter(|t| !t.is_empty()) {
        doc["x-amazon-apigateway-binary-media-types"] = Json::Array(types.clone());
    }
    doc
}

/// An integration as the extension writes it (`responses` keyed by selection pattern).
fn integration_extension(integration: &Json) -> Json {
    let mut out = integration.clone();
    let object = out.as_object_mut().expect("an object");
    for internal in [
        "cacheNamespace",
        "cacheKeyParameters",
        "integrationResponses",
    ] {
        object.remove(internal);
    }
    if let Some(kind) = object.get("type").and_then(Json::as_str) {
        let lower = kind.to_ascii_lowercase();
        object.insert("type".into(), lower.into());
    }
    let responses: Map<String, Json> = integration["integrationResponses"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(status, r)| {
            let mut r = r.clone();
            let pattern = r
                .as_object_mut()
                .and_then(|o| o.remove("selectionPattern"))
                .and_then(|p| p.as_str().map(str::to_string));
            (
                pattern.unwrap_or_else(|| {
                    if status.starts_with('2') {
                        "default".into()
                    } else {
                        status.clone()
                    }
                }),
                r,
            )
        })
        .collect();
    if !responses.is_empty() {
        object.insert("responses".into(), Json::Object(responses));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integration_extensions_become_integrations_and_back() {
        let extension = json!({"type": "aws_proxy", "httpMethod": "POST", "uri": "arn:x",
            "responses": {"default": {"statusCode": "200"}, "Bad.*": {"statusCode": 400}}});
        let integration = integration_of(&extension);
        assert_eq!(integration["type"], "AWS_PROXY");
        assert_eq!(
            integration["integrationResponses"]["400"]["selectionPattern"],
            "Bad.*"
        );
        assert!(integration["integrationResponses"]["200"]
            .get("selectionPattern")
            .is_none());
        let back = integration_extension(&integration);
        assert_eq!(back["type"], "aws_proxy");
        assert_eq!(back["responses"]["Bad.*"]["statusCode"], "400");
        assert_eq!(back["responses"]["default"]["statusCode"], "200");
    }
}
