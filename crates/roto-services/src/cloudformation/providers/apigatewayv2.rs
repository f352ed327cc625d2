//! Providers of API Gateway v2 types (`AWS::ApiGatewayV2::*`): HTTP and WebSocket APIs
//! (from properties, quick-create `Target`/`RouteKey`, or an OpenAPI
//! `Body`/`BodyS3Location`), and their routes, integrations, authorizers, deployments,
//! stages, models, route and integration responses; custom domain names and their API
//! mappings; VPC links.
//!
//! The v2 API names its members as the templates name their properties, so an API child
//! is one table row: its operations, the member its id travels in, and the properties its
//! create and update take ([`Child`]).

use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, retag, with, Call, Outcome, Provider, Tags};

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
    /// The members naming what it belongs to, which every operation on it takes.
    parents: &'static [&'static str],
    /// The properties Create and Update take.
    settings: &'static [&'static str],
}

const ROUTE: Child = Child {
    noun: "Route",
    id: "RouteId",
    parents: &["ApiId"],
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
    parents: &["ApiId"],
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
    parents: &["ApiId"],
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
    parents: &["ApiId"],
    settings: &["Description", "StageName"],
};

/// A stage is known by its name, which its create takes and its update cannot change.
const STAGE: Child = Child {
    noun: "Stage",
    id: "StageName",
    parents: &["ApiId"],
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

/// A model's schema is an object in templates and text in the API.
const MODEL: Child = Child {
    noun: "Model",
    id: "ModelId",
    parents: &["ApiId"],
    settings: &["ContentType", "Description", "Name", "Schema"],
};

const ROUTE_RESPONSE: Child = Child {
    noun: "RouteResponse",
    id: "RouteResponseId",
    parents: &["ApiId", "RouteId"],
    settings: &[
        "ModelSelectionExpression",
        "ResponseModels",
        "ResponseParameters",
        "RouteResponseKey",
    ],
};

const INTEGRATION_RESPONSE: Child = Child {
    noun: "IntegrationResponse",
    id: "IntegrationResponseId",
    parents: &["ApiId", "IntegrationId"],
    settings: &[
        "ContentHandlingStrategy",
        "IntegrationResponseKey",
        "ResponseParameters",
        "ResponseTemplates",
        "TemplateSelectionExpression",
    ],
};

/// An API mapping belongs to its custom domain name; the API and stage it maps to may change.
const API_MAPPING: Child = Child {
    noun: "ApiMapping",
    id: "ApiMappingId",
    parents: &["DomainName"],
    settings: &["ApiId", "ApiMappingKey", "Stage"],
};

/// Which [`Child`] a provider's type is.
fn child(c: &Call) -> &'static Child {
    match c.kind.rsplit("::").next() {
        Some("Route") => &ROUTE,
        Some("Integration") => &INTEGRATION,
        Some("Authorizer") => &AUTHORIZER,
        Some("Deployment") => &DEPLOYMENT,
        Some("Model") => &MODEL,
        Some("RouteResponse") => &ROUTE_RESPONSE,
        Some("IntegrationResponse") => &INTEGRATION_RESPONSE,
        Some("ApiMapping") => &API_MAPPING,
        _ => &STAGE,
    }
}

/// The child's settings and the members naming its parents, as its create and update
/// take them.
fn child_input(c: &Call, kind: &Child) -> Json {
    let mut input = pick(&c.props, kind.settings);
    for parent in kind.parents {
        input = with(input, parent, c.props[*parent].clone());
    }
    if let Some(schema) = c.document("Schema") {
        input = with(input, "Schema", json!(schema));
    }
    input
}

async fn child_create(c: &Call) -> Outcome {
    let kind = child(c);
    let mut input = child_input(c, kind);
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
    let input = with(child_input(c, kind), kind.id, json!(c.physical()));
    c.api(SERVICE, &format!("Update{}", kind.noun), input)
        .await?;
    Ok(c.previous.clone())
}

async fn child_delete(c: &Call) -> Result<(), String> {
    let kind = child(c);
    let mut input = json!({kind.id: c.physical()});
    for parent in kind.parents {
        input = with(input, parent, c.props[*parent].clone());
    }
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
pub(crate) const MODELS: Provider = child_provider("AWS::ApiGatewayV2::Model", &["ApiId"]);
pub(crate) const ROUTE_RESPONSES: Provider =
    child_provider("AWS::ApiGatewayV2::RouteResponse", &["ApiId", "RouteId"]);
pub(crate) const INTEGRATION_RESPONSES: Provider = child_provider(
    "AWS::ApiGatewayV2::IntegrationResponse",
    &["ApiId", "IntegrationId"],
);
pub(crate) const API_MAPPINGS: Provider =
    child_provider("AWS::ApiGatewayV2::ApiMapping", &["DomainName"]);

/// A custom domain name: `Ref` the name; `RegionalDomainName` and `RegionalHostedZoneId`
/// (its first configuration's) and `DomainNameArn`. Configurations, mutual TLS, routing
/// mode and tags change in place.
pub(crate) const DOMAIN_NAME: Provider = Provider {
    kind: "AWS::ApiGatewayV2::DomainName",
    replaces: &["DomainName"],
    create: |c| Box::pin(domain_put(c, "CreateDomainName")),
    update: Some(|c| Box::pin(domain_put(c, "UpdateDomainName"))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"DomainName": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteDomainName", input).await)
        })
    },
};

async fn domain_put(c: &Call, operation: &str) -> Outcome {
    let settings = [
        "DomainName",
        "DomainNameConfigurations",
        "MutualTlsAuthentication",
        "RoutingMode",
    ];
    let mut input = pick(&c.props, &settings);
    let creating = operation == "CreateDomainName";
    if creating {
        input = with(input, "Tags", c.props["Tags"].clone());
    }
    let out = c.api(SERVICE, operation, input).await?;
    let arn = out["DomainNameArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if !creating {
        retag_arn(c, &arn).await?;
    }
    let first = &out["DomainNameConfigurations"][0];
    Ok(resolved(
        c.str("DomainName").unwrap_or_default(),
        json!({
            "RegionalDomainName": first["ApiGatewayDomainName"],
            "RegionalHostedZoneId": first["HostedZoneId"],
            "DomainNameArn": arn,
        }),
    ))
}

/// Tags and untags the resource `arn` as its `Tags` changed.
async fn retag_arn(c: &Call, arn: &str) -> Result<(), String> {
    let operations = ("UntagResource", "TagResource");
    retag(
        c,
        SERVICE,
        operations,
        &json!({"ResourceArn": arn}),
        Tags::Map,
    )
    .await
}

/// A VPC link for private integrations (kept as configuration: nothing is reached through
/// it): `Ref` and `VpcLinkId` its id; name and tags change in place.
pub(crate) const VPC_LINK: Provider = Provider {
    kind: "AWS::ApiGatewayV2::VpcLink",
    replaces: &["SecurityGroupIds", "SubnetIds"],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["Name", "SecurityGroupIds", "SubnetIds", "Tags"]);
            let out = c.api(SERVICE, "CreateVpcLink", input).await?;
            let id = out["VpcLinkId"].as_str().unwrap_or_default();
            Ok(resolved(id, json!({"VpcLinkId": id})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let input = with(pick(&c.props, &["Name"]), "VpcLinkId", json!(c.physical()));
            let out = c.api(SERVICE, "UpdateVpcLink", input).await?;
            let arn = format!(
                "arn:aws:apigateway:{}::/vpclinks/{}",
                c.ctx.region,
                out["VpcLinkId"].as_str().unwrap_or_default()
            );
            retag_arn(c, &arn).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"VpcLinkId": c.physical()});
            gone_ok(c.api(SERVICE, "DeleteVpcLink", input).await)
        })
    },
};
