//! Providers of API Gateway's REST API types (`AWS::ApiGateway::*`): APIs (from properties
//! or an OpenAPI `Body`/`BodyS3Location`), resources, methods with their integration and
//! responses, deployments, stages, authorizers, API keys, usage plans and their keys,
//! request validators, models, gateway responses, custom domain names with their base path
//! mappings, client certificates, documentation parts and versions, and VPC links.
//!
//! The REST API's operations name members in lower camel case and the templates' properties
//! in upper camel case; the dispatcher's input matching ignores the case of the first
//! letter, so most properties pass through as they are. Changes the API takes as patch
//! operations (names, descriptions, a stage's deployment and variables) are patched.

use serde_json::{json, Map, Value as Json};

use super::{gone_ok, pick, resolved, tag_map, with, Call, Outcome, Provider, Tags};
use crate::cloudformation::template::scalar_text;

const SERVICE: &str = "apigateway";

/// A patch operation replacing `path` with `value` (a string, as the API takes them;
/// an object in the API's lower camel case member names, as JSON text).
fn replace(path: &str, value: &Json) -> Json {
    let value = match value {
        Json::String(s) => s.clone(),
        Json::Object(_) => api_members(value).to_string(),
        other => other.to_string(),
    };
    json!({"op": "replace", "path": path, "value": value})
}

/// An object's members renamed from the template's upper camel case to the API's lower
/// camel case, at every depth.
fn api_members(value: &Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(k, v)| (lower_first(k), api_members(v)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(api_members).collect()),
        other => other.clone(),
    }
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The patch operations that bring the members named in `paths` (property, patch path)
/// from their old values to their new ones: a member unset is removed, a list gains and
/// loses elements, anything else is replaced.
fn changes(c: &Call, paths: &[(&str, &str)]) -> Vec<Json> {
    let mut patches = Vec::new();
    for (p, path) in paths {
        let (new, old) = (c.prop(p), c.old_props.get(*p).filter(|v| !v.is_null()));
        match (new, old) {
            (a, b) if a == b => {}
            (None, Some(_)) => patches.push(json!({"op": "remove", "path": path})),
            (Some(Json::Array(new)), old) => {
                let old = old.and_then(Json::as_array).cloned().unwrap_or_default();
                let text = |v: &Json| v.as_str().map_or_else(|| v.to_string(), str::to_string);
                for gone in old.iter().filter(|v| !new.contains(v)) {
                    patches.push(json!({"op": "remove", "path": path, "value": text(gone)}));
                }
                for added in new.iter().filter(|v| !old.contains(v)) {
                    patches.push(json!({"op": "add", "path": path, "value": text(added)}));
                }
            }
            (Some(v), _) => patches.push(replace(path, v)),
            (None, None) => {}
        }
    }
    patches
}

pub(crate) const REST_API: Provider = Provider {
    kind: "AWS::ApiGateway::RestApi",
    replaces: &[],
    create: |c| Box::pin(rest_api_create(c)),
    update: Some(|c| Box::pin(rest_api_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"restApiId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteRestApi", input).await)
        })
    },
};

/// The properties that patch an API after its document is imported.
const REST_API_PATCHES: [(&str, &str); 2] = [("Name", "/name"), ("Description", "/description")];

async fn rest_api_create(c: &Call) -> Outcome {
    let api = match c.api_document().await? {
        Some(body) => {
            let input = pick(&c.props, &["FailOnWarnings", "Parameters"]);
            let api = c
                .api_with(SERVICE, "ImportRestApi", input, |v| {
                    v.insert("body", roto_core::Value::Blob(body))
                })
                .await?;
            let patches: Vec<Json> = REST_API_PATCHES
                .iter()
                .filter_map(|(p, path)| c.prop(p).map(|v| replace(path, v)))
                .collect();
            if !patches.is_empty() {
                let input = json!({"restApiId": api["Id"], "patchOperations": patches});
                c.api(SERVICE, "UpdateRestApi", input).await?;
            }
            api
        }
        None => {
            let mut input = pick(
                &c.props,
                &[
                    "Description",
                    "BinaryMediaTypes",
                    "MinimumCompressionSize",
                    "EndpointConfiguration",
                    "DisableExecuteApiEndpoint",
                    "CloneFrom",
                ],
            );
            input = with(input, "name", json!(c.name("Name", 255)));
            input = with(
                input,
                "apiKeySource",
                c.props.get("ApiKeySourceType").cloned().unwrap_or_default(),
            );
            input = with(
                input,
                "policy",
                c.document("Policy").map(Json::String).unwrap_or_default(),
            );
            if c.prop("Tags").is_some() {
                input = with(input, "tags", tag_map(c.prop("Tags")));
            }
            c.api(SERVICE, "CreateRestApi", input).await?
        }
    };
    let id = api["Id"].as_str().unwrap_or_default();
    Ok(resolved(
        id,
        json!({"RestApiId": id, "RootResourceId": api["RootResourceId"]}),
    ))
}

/// A new document replaces the API's definition (`Mode`, `overwrite` unless given); the
/// name and description are patched.
async fn rest_api_update(c: &Call) -> Outcome {
    let id = c.physical();
    if let Some(body) = c.api_document().await? {
        let mut input = pick(&c.props, &["FailOnWarnings", "Parameters"]);
        input = with(input, "restApiId", json!(id));
        input = with(
            input,
            "mode",
            c.props.get("Mode").cloned().unwrap_or(json!("overwrite")),
        );
        c.api_with(SERVICE, "PutRestApi", input, |v| {
            v.insert("body", roto_core::Value::Blob(body))
        })
        .await?;
    }
    let patches = changes(c, &REST_API_PATCHES);
    if !patches.is_empty() {
        let input = json!({"restApiId": id, "patchOperations": patches});
        c.api(SERVICE, "UpdateRestApi", input).await?;
    }
    Ok(c.previous.clone())
}

pub(crate) const RESOURCE: Provider = Provider {
    kind: "AWS::ApiGateway::Resource",
    replaces: &["RestApiId"],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["RestApiId", "ParentId", "PathPart"]);
            let out = c.api(SERVICE, "CreateResource", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"ResourceId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(c, &[("ParentId", "/parentId"), ("PathPart", "/pathPart")]);
            let input = json!({"restApiId": c.props["RestApiId"], "resourceId": c.physical(), "patchOperations": patches});
            c.api(SERVICE, "UpdateResource", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"restApiId": c.props["RestApiId"], "resourceId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteResource", input).await)
        })
    },
};

pub(crate) const METHOD: Provider = Provider {
    kind: "AWS::ApiGateway::Method",
    replaces: &["RestApiId"],
    create: |c| Box::pin(method_put(c)),
    update: Some(|c| {
        Box::pin(async move {
            let old = Call {
                props: c.old_props.clone(),
                ..c.clone()
            };
            method_delete(&old).await?;
            method_put(c).await
        })
    }),
    delete: |c| Box::pin(method_delete(c)),
};

/// The method's address: its API, resource and HTTP method.
fn method_key(props: &Json) -> Json {
    pick(props, &["RestApiId", "ResourceId", "HttpMethod"])
}

/// Puts the method, its integration with the integration's responses, and its
/// responses; the method is known by `API|resource|METHOD`, as Cloud Control names it.
async fn method_put(c: &Call) -> Outcome {
    let key = method_key(&c.props);
    let mut input = key.clone();
    for (name, value) in pick(
        &c.props,
        &[
            "AuthorizerId",
            "ApiKeyRequired",
            "OperationName",
            "RequestParameters",
            "RequestModels",
            "RequestValidatorId",
            "AuthorizationScopes",
        ],
    )
    .as_object()
    .into_iter()
    .flatten()
    {
        input = with(input, name, value.clone());
    }
    input = with(
        input,
        "authorizationType",
        c.props
            .get("AuthorizationType")
            .cloned()
            .unwrap_or(json!("NONE")),
    );
    c.api(SERVICE, "PutMethod", input).await?;
    if let Some(integration) = c.prop("Integration") {
        let input = merged(&key, integration, &["IntegrationResponses"]);
        c.api(SERVICE, "PutIntegration", input).await?;
        for response in integration["IntegrationResponses"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let input = merged(&key, response, &[]);
            c.api(SERVICE, "PutIntegrationResponse", input).await?;
        }
    }
    for response in c.props["MethodResponses"].as_array().into_iter().flatten() {
        let input = merged(&key, response, &[]);
        c.api(SERVICE, "PutMethodResponse", input).await?;
    }
    let id = format!(
        "{}|{}|{}",
        c.str("RestApiId").unwrap_or_default(),
        c.str("ResourceId").unwrap_or_default(),
        c.str("HttpMethod").unwrap_or_default()
    );
    Ok(resolved(id, json!({})))
}

/// `key`'s members and `part`'s, but those named in `leave`.
fn merged(key: &Json, part: &Json, leave: &[&str]) -> Json {
    let mut out: Map<String, Json> = key.as_object().cloned().unwrap_or_default();
    for (name, value) in part.as_object().into_iter().flatten() {
        if !leave.contains(&name.as_str()) {
            out.insert(name.clone(), value.clone());
        }
    }
    Json::Object(out)
}

async fn method_delete(c: &Call) -> Result<(), String> {
    gone_ok(c.api(SERVICE, "DeleteMethod", method_key(&c.props)).await)
}

pub(crate) const DEPLOYMENT: Provider = Provider {
    kind: "AWS::ApiGateway::Deployment",
    replaces: &["RestApiId", "DeploymentCanarySettings"],
    create: |c| Box::pin(deployment_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(c, &[("Description", "/description")]);
            if !patches.is_empty() {
                let input = json!({"restApiId": c.props["RestApiId"], "deploymentId": c.physical(), "patchOperations": patches});
                c.api(SERVICE, "UpdateDeployment", input).await?;
            }
            Ok(c.previous.clone())
        })
    }),
    delete: |c| Box::pin(deployment_delete(c)),
};

/// Creates the deployment, and the stage `StageName` on it with `StageDescription`'s
/// settings.
async fn deployment_create(c: &Call) -> Outcome {
    let mut input = pick(&c.props, &["RestApiId", "Description", "StageName"]);
    let stage = &c.props["StageDescription"];
    input = with(input, "stageDescription", stage["Description"].clone());
    for member in [
        "Variables",
        "TracingEnabled",
        "CacheClusterEnabled",
        "CacheClusterSize",
    ] {
        input = with(input, member, stage[member].clone());
    }
    let out = c.api(SERVICE, "CreateDeployment", input).await?;
    let id = out["Id"].as_str().unwrap_or_default();
    Ok(resolved(id, json!({"DeploymentId": id})))
}

/// Deletes the stage the deployment made, if it still serves this deployment, then the
/// deployment.
async fn deployment_delete(c: &Call) -> Result<(), String> {
    let api = &c.props["RestApiId"];
    if let Some(stage) = c.str("StageName") {
        let key = json!({"restApiId": api, "stageName": stage});
        let current = c.api(SERVICE, "GetStage", key.clone()).await;
        if current.is_ok_and(|s| s["DeploymentId"].as_str() == Some(c.physical())) {
            gone_ok(c.api(SERVICE, "DeleteStage", key).await)?;
        }
    }
    let input = json!({"restApiId": api, "deploymentId": c.physical()});
    gone_ok(c.api(SERVICE, "DeleteDeployment", input).await)
}

pub(crate) const STAGE: Provider = Provider {
    kind: "AWS::ApiGateway::Stage",
    replaces: &["RestApiId", "StageName"],
    create: |c| Box::pin(stage_create(c)),
    update: Some(|c| Box::pin(stage_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"restApiId": c.props["RestApiId"], "stageName": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteStage", input).await)
        })
    },
};

async fn stage_create(c: &Call) -> Outcome {
    let mut input = pick(
        &c.props,
        &[
            "RestApiId",
            "DeploymentId",
            "Description",
            "CacheClusterEnabled",
            "CacheClusterSize",
            "Variables",
            "DocumentationVersion",
            "TracingEnabled",
        ],
    );
    let name = c.name("StageName", 128);
    input = with(input, "stageName", json!(name));
    if c.prop("Tags").is_some() {
        input = with(input, "tags", tag_map(c.prop("Tags")));
    }
    c.api(SERVICE, "CreateStage", input).await?;
    Ok(resolved(name, json!({})))
}

/// Patches the deployment, description and variables that changed.
async fn stage_update(c: &Call) -> Outcome {
    let mut patches = changes(
        c,
        &[
            ("DeploymentId", "/deploymentId"),
            ("Description", "/description"),
            ("TracingEnabled", "/tracingEnabled"),
        ],
    );
    let variables = |props: &Json| props["Variables"].as_object().cloned().unwrap_or_default();
    let (new, old) = (variables(&c.props), variables(&c.old_props));
    for (k, v) in &new {
        if old.get(k) != Some(v) {
            patches.push(replace(&format!("/variables/{k}"), v));
        }
    }
    for k in old.keys().filter(|k| !new.contains_key(*k)) {
        patches.push(json!({"op": "remove", "path": format!("/variables/{k}")}));
    }
    if !patches.is_empty() {
        let input = json!({"restApiId": c.props["RestApiId"], "stageName": c.physical(), "patchOperations": patches});
        c.api(SERVICE, "UpdateStage", input).await?;
    }
    Ok(c.previous.clone())
}

pub(crate) const AUTHORIZER: Provider = Provider {
    kind: "AWS::ApiGateway::Authorizer",
    replaces: &["RestApiId"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &AUTHORIZER_MEMBERS.map(|(p, _)| p));
            input = with(input, "RestApiId", c.props["RestApiId"].clone());
            input = with(input, "name", json!(c.name("Name", 128)));
            let out = c.api(SERVICE, "CreateAuthorizer", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"AuthorizerId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let mut patches = changes(c, &AUTHORIZER_MEMBERS);
            patches.extend(changes(c, &[("Name", "/name")]));
            let input = json!({"restApiId": c.props["RestApiId"], "authorizerId": c.physical(), "patchOperations": patches});
            c.api(SERVICE, "UpdateAuthorizer", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"restApiId": c.props["RestApiId"], "authorizerId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteAuthorizer", input).await)
        })
    },
};

/// An authorizer's properties (besides its API and name) and their patch paths.
const AUTHORIZER_MEMBERS: [(&str, &str); 8] = [
    ("Type", "/type"),
    ("ProviderARNs", "/providerARNs"),
    ("AuthType", "/authType"),
    ("AuthorizerUri", "/authorizerUri"),
    ("AuthorizerCredentials", "/authorizerCredentials"),
    ("IdentitySource", "/identitySource"),
    (
        "IdentityValidationExpression",
        "/identityValidationExpression",
    ),
    (
        "AuthorizerResultTtlInSeconds",
        "/authorizerResultTtlInSeconds",
    ),
];

pub(crate) const API_KEY: Provider = Provider {
    kind: "AWS::ApiGateway::ApiKey",
    replaces: &["Name", "Value", "GenerateDistinctId"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(
                &c.props,
                &[
                    "Description",
                    "Enabled",
                    "GenerateDistinctId",
                    "Value",
                    "StageKeys",
                    "CustomerId",
                ],
            );
            input = with(input, "name", json!(c.name("Name", 128)));
            if c.prop("Tags").is_some() {
                input = with(input, "tags", tag_map(c.prop("Tags")));
            }
            let out = c.api(SERVICE, "CreateApiKey", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"APIKeyId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(
                c,
                &[
                    ("Description", "/description"),
                    ("Enabled", "/enabled"),
                    ("CustomerId", "/customerId"),
                ],
            );
            if !patches.is_empty() {
                let input = json!({"apiKey": c.physical(), "patchOperations": patches});
                c.api(SERVICE, "UpdateApiKey", input).await?;
            }
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"apiKey": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteApiKey", input).await)
        })
    },
};

pub(crate) const USAGE_PLAN: Provider = Provider {
    kind: "AWS::ApiGateway::UsagePlan",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["Description", "ApiStages", "Throttle", "Quota"]);
            input = with(input, "name", json!(c.name("UsagePlanName", 128)));
            if c.prop("Tags").is_some() {
                input = with(input, "tags", tag_map(c.prop("Tags")));
            }
            let out = c.api(SERVICE, "CreateUsagePlan", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"Id": id})))
        })
    },
    update: Some(|c| Box::pin(usage_plan_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"usagePlanId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteUsagePlan", input).await)
        })
    },
};

/// Patches the plan's name, description, limits and stages (each stage as `api:stage`),
/// and its tags.
async fn usage_plan_update(c: &Call) -> Outcome {
    let stages = |props: &Json| -> Json {
        let list = props["ApiStages"].as_array().into_iter().flatten();
        let named = list.map(|s| {
            json!(format!(
                "{}:{}",
                scalar_text(&s["ApiId"]),
                scalar_text(&s["Stage"])
            ))
        });
        Json::Array(named.collect())
    };
    let staged = Call {
        props: with(c.props.clone(), "ApiStages", stages(&c.props)),
        old_props: with(c.old_props.clone(), "ApiStages", stages(&c.old_props)),
        ..c.clone()
    };
    let patches = changes(
        &staged,
        &[
            ("UsagePlanName", "/name"),
            ("Description", "/description"),
            ("Throttle", "/throttle"),
            ("Quota", "/quota"),
            ("ApiStages", "/apiStages"),
        ],
    );
    if !patches.is_empty() {
        let input = json!({"usagePlanId": c.physical(), "patchOperations": patches});
        c.api(SERVICE, "UpdateUsagePlan", input).await?;
    }
    retag(c, &format!("/usageplans/{}", c.physical())).await?;
    Ok(c.previous.clone())
}

/// Tags and untags the resource at `path` (`/usageplans/<id>`) as its `Tags` changed.
async fn retag(c: &Call, path: &str) -> Result<(), String> {
    let arn = format!("arn:aws:apigateway:{}::{path}", c.ctx.region);
    let target = json!({"resourceArn": arn});
    let operations = ("UntagResource", "TagResource");
    super::retag(c, SERVICE, operations, &target, Tags::Map).await
}

pub(crate) const USAGE_PLAN_KEY: Provider = Provider {
    kind: "AWS::ApiGateway::UsagePlanKey",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["UsagePlanId", "KeyId", "KeyType"]);
            c.api(SERVICE, "CreateUsagePlanKey", input).await?;
            let id = format!(
                "{}:{}",
                c.str("KeyId").unwrap_or_default(),
                c.str("UsagePlanId").unwrap_or_default()
            );
            Ok(resolved(id.as_str(), json!({"Id": id})))
        })
    },
    update: None,
    delete: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["UsagePlanId", "KeyId"]);
            gone_ok(c.api(SERVICE, "DeleteUsagePlanKey", input).await)
        })
    },
};

pub(crate) const REQUEST_VALIDATOR: Provider = Provider {
    kind: "AWS::ApiGateway::RequestValidator",
    replaces: &["RestApiId"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(
                &c.props,
                &[
                    "RestApiId",
                    "ValidateRequestBody",
                    "ValidateRequestParameters",
                ],
            );
            input = with(input, "name", json!(c.name("Name", 128)));
            let out = c.api(SERVICE, "CreateRequestValidator", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"RequestValidatorId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(c, &VALIDATOR_MEMBERS);
            let input = json!({"restApiId": c.props["RestApiId"], "requestValidatorId": c.physical(), "patchOperations": patches});
            c.api(SERVICE, "UpdateRequestValidator", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input =
                json!({"restApiId": c.props["RestApiId"], "requestValidatorId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteRequestValidator", input).await)
        })
    },
};

/// A request validator's properties and their patch paths.
const VALIDATOR_MEMBERS: [(&str, &str); 3] = [
    ("Name", "/name"),
    ("ValidateRequestBody", "/validateRequestBody"),
    ("ValidateRequestParameters", "/validateRequestParameters"),
];

pub(crate) const MODEL: Provider = Provider {
    kind: "AWS::ApiGateway::Model",
    replaces: &["RestApiId", "Name", "ContentType"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("Name", 64).replace('-', "");
            let mut input = pick(&c.props, &["RestApiId", "Description", "ContentType"]);
            input = with(input, "name", json!(name));
            input = with(input, "schema", json!(c.document("Schema")));
            input = with(
                input,
                "contentType",
                json!(c.str("ContentType").unwrap_or("application/json")),
            );
            c.api(SERVICE, "CreateModel", input).await?;
            Ok(resolved(name, json!({})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let mut patches = changes(c, &[("Description", "/description")]);
            if c.prop("Schema") != c.old_props.get("Schema") {
                patches.push(
                    json!({"op": "replace", "path": "/schema", "value": c.document("Schema")}),
                );
            }
            let input = json!({"restApiId": c.props["RestApiId"], "modelName": c.physical(), "patchOperations": patches});
            c.api(SERVICE, "UpdateModel", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"restApiId": c.props["RestApiId"], "modelName": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteModel", input).await)
        })
    },
};

pub(crate) const GATEWAY_RESPONSE: Provider = Provider {
    kind: "AWS::ApiGateway::GatewayResponse",
    replaces: &["RestApiId", "ResponseType"],
    create: |c| Box::pin(gateway_response_put(c)),
    update: Some(|c| Box::pin(gateway_response_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["RestApiId", "ResponseType"]);
            gone_ok(c.api(SERVICE, "DeleteGatewayResponse", input).await)
        })
    },
};

/// PutGatewayResponse with the template's properties; `Ref` a generated id.
async fn gateway_response_put(c: &Call) -> Outcome {
    c.api(SERVICE, "PutGatewayResponse", c.props.clone())
        .await?;
    let id = match c.physical_id.as_deref() {
        Some(id) => id.to_string(),
        None => super::generated_name(&c.stack_name, &c.logical_id, 64),
    };
    Ok(resolved(id, json!({})))
}

/// The settings of a custom domain name CreateDomainName takes as they are.
const DOMAIN_SETTINGS: [&str; 8] = [
    "CertificateArn",
    "RegionalCertificateArn",
    "EndpointConfiguration",
    "SecurityPolicy",
    "EndpointAccessMode",
    "MutualTlsAuthentication",
    "OwnershipVerificationCertificateArn",
    "RoutingMode",
];

/// A custom domain name: `Ref` the name; its regional and edge names and zones, and its
/// ARN, as attributes. Certificates, endpoint types, the security policy, the routing
/// mode and tags are patched in place.
pub(crate) const DOMAIN_NAME: Provider = Provider {
    kind: "AWS::ApiGateway::DomainName",
    replaces: &["DomainName"],
    create: |c| Box::pin(domain_create(c)),
    update: Some(|c| Box::pin(domain_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"domainName": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteDomainName", input).await)
        })
    },
};

async fn domain_create(c: &Call) -> Outcome {
    let mut input = pick(&c.props, &DOMAIN_SETTINGS);
    input = with(input, "domainName", c.props["DomainName"].clone());
    if c.prop("Tags").is_some() {
        input = with(input, "tags", tag_map(c.prop("Tags")));
    }
    let out = c.api(SERVICE, "CreateDomainName", input).await?;
    let name = out["DomainName"].as_str().unwrap_or_default();
    Ok(resolved(
        name,
        json!({
            "DistributionDomainName": out["DistributionDomainName"],
            "DistributionHostedZoneId": out["DistributionHostedZoneId"],
            "RegionalDomainName": out["RegionalDomainName"],
            "RegionalHostedZoneId": out["RegionalHostedZoneId"],
            "DomainNameArn": out["DomainNameArn"],
        }),
    ))
}

async fn domain_update(c: &Call) -> Outcome {
    let types = |props: &Json| props["EndpointConfiguration"]["Types"].clone();
    let typed = Call {
        props: with(c.props.clone(), "EndpointTypes", types(&c.props)),
        old_props: with(c.old_props.clone(), "EndpointTypes", types(&c.old_props)),
        ..c.clone()
    };
    let patches = changes(
        &typed,
        &[
            ("CertificateArn", "/certificateArn"),
            ("RegionalCertificateArn", "/regionalCertificateArn"),
            ("SecurityPolicy", "/securityPolicy"),
            ("EndpointAccessMode", "/endpointAccessMode"),
            (
                "OwnershipVerificationCertificateArn",
                "/ownershipVerificationCertificateArn",
            ),
            ("RoutingMode", "/routingMode"),
            ("EndpointTypes", "/endpointConfiguration/types"),
        ],
    );
    if !patches.is_empty() {
        let input = json!({"domainName": c.physical(), "patchOperations": patches});
        c.api(SERVICE, "UpdateDomainName", input).await?;
    }
    retag(c, &format!("/domainnames/{}", c.physical())).await?;
    Ok(c.previous.clone())
}

/// A base path of a custom domain name mapped to a REST API's stage: `Ref`
/// `<domain>|<base path>` (its identifiers); the API and stage patched in place.
pub(crate) const BASE_PATH_MAPPING: Provider = Provider {
    kind: "AWS::ApiGateway::BasePathMapping",
    replaces: &["DomainName", "BasePath"],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["DomainName", "BasePath", "RestApiId", "Stage"]);
            let out = c.api(SERVICE, "CreateBasePathMapping", input).await?;
            let domain = c.str("DomainName").unwrap_or_default();
            let base = out["BasePath"].as_str().unwrap_or_default();
            Ok(resolved(format!("{domain}|{base}"), json!({})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(c, &[("RestApiId", "/restApiId"), ("Stage", "/stage")]);
            if !patches.is_empty() {
                let input = json!({"domainName": c.props["DomainName"], "basePath": mapped_base(c), "patchOperations": patches});
                c.api(SERVICE, "UpdateBasePathMapping", input).await?;
            }
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"domainName": c.props["DomainName"], "basePath": mapped_base(c)});
            gone_ok(c.api(SERVICE, "DeleteBasePathMapping", input).await)
        })
    },
};

/// The base path a mapping's id (`<domain>|<base path>`) names.
fn mapped_base(c: &Call) -> &str {
    c.physical()
        .rsplit_once('|')
        .map_or("(none)", |(_, base)| base)
}

/// A client certificate API Gateway generates: `Ref` its id; description and tags change
/// in place.
pub(crate) const CLIENT_CERTIFICATE: Provider = Provider {
    kind: "AWS::ApiGateway::ClientCertificate",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["Description"]);
            if c.prop("Tags").is_some() {
                input = with(input, "tags", tag_map(c.prop("Tags")));
            }
            let out = c.api(SERVICE, "GenerateClientCertificate", input).await?;
            let id = out["ClientCertificateId"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let id = c.physical();
            let patches = changes(c, &[("Description", "/description")]);
            if !patches.is_empty() {
                let input = json!({"clientCertificateId": id, "patchOperations": patches});
                c.api(SERVICE, "UpdateClientCertificate", input).await?;
            }
            retag(c, &format!("/clientcertificates/{id}")).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"clientCertificateId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteClientCertificate", input).await)
        })
    },
};

/// A snapshot of a REST API's documentation: `Ref` the version; its description is
/// patched in place.
pub(crate) const DOCUMENTATION_VERSION: Provider = Provider {
    kind: "AWS::ApiGateway::DocumentationVersion",
    replaces: &["DocumentationVersion", "RestApiId"],
    create: |c| {
        Box::pin(async move {
            let input = pick(
                &c.props,
                &["RestApiId", "DocumentationVersion", "Description"],
            );
            c.api(SERVICE, "CreateDocumentationVersion", input).await?;
            let version = c.str("DocumentationVersion").unwrap_or_default();
            Ok(resolved(version, json!({})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patches = changes(c, &[("Description", "/description")]);
            let input = json!({"restApiId": c.props["RestApiId"], "documentationVersion": c.physical(), "patchOperations": patches});
            c.api(SERVICE, "UpdateDocumentationVersion", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input =
                json!({"restApiId": c.props["RestApiId"], "documentationVersion": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteDocumentationVersion", input).await)
        })
    },
};

/// A documentation part of a REST API: `Ref` and `DocumentationPartId` its id; its
/// properties (an object or JSON text) are patched in place.
pub(crate) const DOCUMENTATION_PART: Provider = Provider {
    kind: "AWS::ApiGateway::DocumentationPart",
    replaces: &["Location", "RestApiId"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["RestApiId", "Location"]);
            input = with(input, "properties", json!(c.document("Properties")));
            let out = c.api(SERVICE, "CreateDocumentationPart", input).await?;
            let id = out["Id"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"DocumentationPartId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let patch =
                json!({"op": "replace", "path": "/properties", "value": c.document("Properties")});
            let input = json!({"restApiId": c.props["RestApiId"], "documentationPartId": c.physical(), "patchOperations": [patch]});
            c.api(SERVICE, "UpdateDocumentationPart", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input =
                json!({"restApiId": c.props["RestApiId"], "documentationPartId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteDocumentationPart", input).await)
        })
    },
};

/// A VPC link to network load balancers (kept as configuration: nothing is reached through
/// it): `Ref` its id; name, description and tags change in place.
pub(crate) const VPC_LINK: Provider = Provider {
    kind: "AWS::ApiGateway::VpcLink",
    replaces: &["TargetArns"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["Name", "Description", "TargetArns"]);
            if c.prop("Tags").is_some() {
                input = with(input, "tags", tag_map(c.prop("Tags")));
            }
            let out = c.api(SERVICE, "CreateVpcLink", input).await?;
            Ok(resolved(out["Id"].as_str().unwrap_or_default(), json!({})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let id = c.physical();
            let patches = changes(c, &[("Name", "/name"), ("Description", "/description")]);
            if !patches.is_empty() {
                let input = json!({"vpcLinkId": id, "patchOperations": patches});
                c.api(SERVICE, "UpdateVpcLink", input).await?;
            }
            retag(c, &format!("/vpclinks/{id}")).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"vpcLinkId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteVpcLink", input).await)
        })
    },
};
