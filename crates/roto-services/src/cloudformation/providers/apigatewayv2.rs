//! Providers of API Gateway v2 types (`AWS::ApiGatewayV2::*`): HTTP and WebSocket APIs
//! (from properties, quick-create `Target`/`RouteKey`, or an OpenAPI
//! `Body`/`BodyS3Location`), and their routes, integrations, authorizers, deployments and
//! stages.
//!
//! The v2 API names its members as the templates name their properties, so an API child
//! is one table row: its operations, the member its id travels in, and the properties its
//! create and update take ([`Child`]).

use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};

const SERVICE: &str = "apigatewayv2";

const API_SETTINGS: [&str; 9] = [
    "ApiKeySelectionExpression",
    "CorsConfiguration",
    "CredentialsArn",
    "Description",
    "DisableSchemaValidation",
    "DisableExecuteApiEndpoint",
    "RouteSelectionExpression",
    "Version",
    "Name",
];

pub(crate) const API: Provider = Provider {
    kind: "AWS::ApiGatewayV2::Api",
    replaces: &["ProtocolType"],
    create: |c| Box::pin(api_create(c)),
    update: Some(|c| Box::pin(api_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"ApiId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteApi", input).await)
        })
    },
};

/// The OpenAPI document `Body` holds or `BodyS3Location` names, as text.
async fn document(c: &Call) -> Result<Option<String>, String> {
    match c.api_document().await? {
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| "The API definition is not UTF-8".to_string()),
        None => Ok(None),
    }
}

/// The settings UpdateApi applies after an import (the properties set beside `Body`).
fn import_settings(c: &Call, id: &str) -> Option<Json> {
    let settings = pick(&c.props, &API_SETTINGS);
    let empty = settings.as_object().is_some_and(|o| o.is_empty());
    (!empty).then(|| with(settings, "ApiId", json!(id)))
}

async fn api_create(c: &Call) -> Outcome {
    let api = match document(c).await? {
        Some(body) => {
            let input = with(
                pick(&c.props, &["Basepath", "FailOnWarnings"]),
                "Body",
                json!(body),
            );
            let api = c.api(SERVICE, "ImportApi", input).await?;
            let id = api["ApiId"].as_str().unwrap_or_default();
            if let Some(input) = import_settings(c, id) {
                c.api(SERVICE, "UpdateApi", input).await?;
            }
            api
        }
        None => {
            let mut input = pick(
                &c.props,
                &[
                    &API_SETTINGS[..],
                    &["ProtocolType", "Target", "RouteKey", "Tags"],
                ]
                .concat(),
            );
            input = with(input, "Name", json!(c.name("Name", 128)));
            c.api(SERVICE, "CreateApi", input).await?
        }
    };
    let id = api["ApiId"].as_str().unwrap_or_default();
    Ok(resolved(
        id,
        json!({"ApiId": id, "ApiEndpoint": api["ApiEndpoint"]}),
    ))
}

async fn api_update(c: &Call) -> Outcome {
    let id = c.physical();
    match document(c).await? {
        Some(body) => {
            let input = pick(&c.props, &["Basepath", "FailOnWarnings"]);
            let input = with(with(input, "Body", json!(body)), "ApiId", json!(id));
            c.api(SERVICE, "ReimportApi", input).await?;
            if let Some(input) = import_settings(c, id) {
                c.api(SERVICE, "UpdateApi", input).await?;
            }
        }
        None => {
            let input = pick(
                &c.props,
                &[&API_SETTINGS[..], &["Target", "RouteKey"]].concat(),
            );
            c.api(SERVICE, "UpdateApi", with(input, "ApiId", json!(id)))
                .await?;
        }
    }
    Ok(c.previous.clone())
}

/// One kind of an API's children.
struct Child {
    /// The noun of its operations (`Create<noun>`, `Update<noun>`, `Delete<noun>`).
    noun: &'static str,
    /// The member its id travels in, and the attribute (and `Ref`) that gives it.
    id: &'static str,
    /// The properties Create and Update take.
    settings: &'static [&'static str],
}

const ROUTE: Child = Child {
    noun: "Route",
    id: "RouteId",
    settings: &[
        "ApiKeyRequired",
        "AuthorizationScopes",
        "AuthorizationType",
        "AuthorizerId",
        "ModelSelectionExpression",
        "OperationName",
        "RequestModels",
        "RequestParameters",
        "RouteKey",
        "RouteResponseSelectionExpression",
        "Target",
    ],
};

const INTEGRATION: Child = Child {
    noun: "Integration",
    id: "IntegrationId",
    settings: &[
        "ConnectionId",
        "ConnectionType",
        "ContentHandlingStrategy",
        "CredentialsArn",
        "Description",
        "IntegrationMethod",
        "IntegrationSubtype",
        "IntegrationType",
        "IntegrationUri",
        "PassthroughBehavior",
        "PayloadFormatVersion",
        "RequestParameters",
        "RequestTemplates",
        "TemplateSelectionExpression",
        "TimeoutInMillis",
        "TlsConfig",
    ],
};

const AUTHORIZER: Child = Child {
    noun: "Authorizer",
    id: "AuthorizerId",
    settings: &[
        "AuthorizerCredentialsArn",
        "AuthorizerPayloadFormatVersion",
        "AuthorizerResultTtlInSeconds",
        "AuthorizerType",
        "AuthorizerUri",
        "EnableSimpleResponses",
        "IdentitySource",
        "IdentityValidationExpression",
        "JwtConfiguration",
        "Name",
    ],
};

const DEPLOYMENT: Child = Child {
    noun: "Deployment",
    id: "DeploymentId",
    settings: &["Description", "StageName"],
};

/// A stage is known by its name, which its create takes and its update cannot change.
const STAGE: Child = Child {
    noun: "Stage",
    id: "StageName",
    settings: &[
        "AccessLogSettings",
        "AutoDeploy",
        "ClientCertificateId",
        "DefaultRouteSettings",
        "DeploymentId",
        "Description",
        "RouteSettings",
        "StageVariables",
    ],
};

/// Which [`Child`] a provider's type is.
fn child(c: &Call) -> &'static Child {
    match c.kind.rsplit("::").next() {
        Some("Route") => &ROUTE,
        Some("Integration") => &INTEGRATION,
        Some("Authorizer") => &AUTHORIZER,
        Some("Deployment") => &DEPLOYMENT,
        _ => &STAGE,
    }
}

async fn child_create(c: &Call) -> Outcome {
    let kind = child(c);
    let mut input = with(
        pick(&c.props, kind.settings),
        "ApiId",
        c.props["ApiId"].clone(),
    );
    if kind.id == "StageName" {
        input = with(input, "StageName", c.props["StageName"].clone());
        input = with(input, "Tags", c.props["Tags"].clone());
    }
    let out = c
        .api(SERVICE, &format!("Create{}", kind.noun), input)
        .await?;
    let id = out[kind.id].as_str().unwrap_or_default();
    Ok(resolved(id, json!({kind.id: id})))
}

async fn child_update(c: &Call) -> Outcome {
    let kind = child(c);
    let mut input = with(
        pick(&c.props, kind.settings),
        "ApiId",
        c.props["ApiId"].clone(),
    );
    input = with(input, kind.id, json!(c.physical()));
    c.api(SERVICE, &format!("Update{}", kind.noun), input)
        .await?;
    Ok(c.previous.clone())
}

async fn child_delete(c: &Call) -> Result<(), String> {
    let kind = child(c);
    let input = json!({"ApiId": c.props["ApiId"], kind.id: c.physical()});
    gone_ok(c.api(SERVICE, &format!("Delete{}", kind.noun), input).await)
}

/// The provider of one kind of child.
const fn child_provider(kind: &'static str, replaces: &'static [&'static str]) -> Provider {
    Provider {
        kind,
        replaces,
        create: |c| Box::pin(child_create(c)),
        update: Some(|c| Box::pin(child_update(c))),
        delete: |c| Box::pin(child_delete(c)),
    }
}

pub(crate) const ROUTES: Provider = child_provider("AWS::ApiGatewayV2::Route", &["ApiId"]);
pub(crate) const INTEGRATIONS: Provider =
    child_provider("AWS::ApiGatewayV2::Integration", &["ApiId"]);
pub(crate) const AUTHORIZERS: Provider =
    child_provider("AWS::ApiGatewayV2::Authorizer", &["ApiId"]);
pub(crate) const DEPLOYMENTS: Provider =
    child_provider("AWS::ApiGatewayV2::Deployment", &["ApiId"]);
pub(crate) const STAGES: Provider =
    child_provider("AWS::ApiGatewayV2::Stage", &["ApiId", "StageName"]);
