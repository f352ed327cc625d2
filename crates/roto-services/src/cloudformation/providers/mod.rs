//! Resource providers: for each resource type, how CloudFormation creates, updates and
//! deletes one through the owning service's operations, and what it offers to `Ref` and
//! `Fn::GetAtt`.
//!
//! [`PROVIDERS`] is the table; a type's provider is three small functions over a [`Call`],
//! whose [`Call::api`] sends an operation through the dispatcher with its input written as
//! JSON in the API's member names (fitted to the operation's input shape by the model), so
//! each call is traced and validated as any other. A type absent from the table fails its
//! resource with a clear reason. `update: None` means every change replaces the resource.

use std::sync::Arc;

use roto_core::model::{Model, Shape, ShapeKind};
use roto_core::{BoxFuture, Context, Dispatcher, Value};
use serde_json::{json, Map, Value as Json};

use super::intrinsics::Resolved;
use crate::sdk;

mod apigateway;
mod apigatewayv2;
mod compute;
mod data;
mod events;
mod global_tables;
mod iam;
mod logs;
mod messaging;
mod misc;
mod monitoring;
mod ssm;

/// A provider's answer: what the resource now offers, or why it failed.
pub(crate) type Outcome = Result<Resolved, String>;

type Step = for<'a> fn(&'a Call) -> BoxFuture<'a, Outcome>;
type Removal = for<'a> fn(&'a Call) -> BoxFuture<'a, Result<(), String>>;

/// One resource type's provider.
pub(crate) struct Provider {
    /// The type, `AWS::Service::Resource`.
    pub kind: &'static str,
    /// The properties whose change replaces the resource (AWS's "Update requires:
    /// Replacement").
    pub replaces: &'static [&'static str],
    pub create: Step,
    pub update: Option<Step>,
    pub delete: Removal,
}

/// Every supported resource type.
pub(crate) const PROVIDERS: &[Provider] = &[
    data::S3_BUCKET,
    data::S3_BUCKET_POLICY,
    data::DYNAMODB_TABLE,
    global_tables::DYNAMODB_GLOBAL_TABLE,
    data::SSM_PARAMETER,
    data::SECRET,
    data::KMS_KEY,
    data::KMS_ALIAS,
    data::LOG_GROUP,
    data::ROTATION_SCHEDULE,
    data::SECRET_POLICY,
    data::KINESIS_STREAM,
    data::DELIVERY_STREAM,
    data::STREAM_CONSUMER,
    data::KINESIS_RESOURCE_POLICY,
    iam::ROLE,
    iam::POLICY,
    iam::ROLE_POLICY,
    iam::USER_POLICY,
    iam::GROUP_POLICY,
    iam::USER_TO_GROUP_ADDITION,
    iam::MANAGED_POLICY,
    iam::USER,
    iam::GROUP,
    iam::INSTANCE_PROFILE,
    iam::ACCESS_KEY,
    iam::OIDC_PROVIDER,
    iam::SERVICE_LINKED_ROLE,
    compute::FUNCTION,
    compute::VERSION,
    compute::ALIAS,
    compute::LAYER_VERSION,
    compute::LAYER_VERSION_PERMISSION,
    compute::PERMISSION,
    compute::EVENT_SOURCE_MAPPING,
    compute::URL,
    compute::STATE_MACHINE,
    compute::STATE_MACHINE_VERSION,
    compute::STATE_MACHINE_ALIAS,
    compute::EVENT_INVOKE_CONFIG,
    compute::ACTIVITY,
    compute::CODE_SIGNING_CONFIG,
    apigateway::REST_API,
    apigateway::RESOURCE,
    apigateway::METHOD,
    apigateway::DEPLOYMENT,
    apigateway::STAGE,
    apigateway::AUTHORIZER,
    apigateway::API_KEY,
    apigateway::USAGE_PLAN,
    apigateway::USAGE_PLAN_KEY,
    apigateway::REQUEST_VALIDATOR,
    apigateway::MODEL,
    apigateway::GATEWAY_RESPONSE,
    apigateway::DOMAIN_NAME,
    apigateway::BASE_PATH_MAPPING,
    apigateway::CLIENT_CERTIFICATE,
    apigateway::DOCUMENTATION_VERSION,
    apigateway::DOCUMENTATION_PART,
    apigateway::VPC_LINK,
    apigatewayv2::API,
    apigatewayv2::ROUTES,
    apigatewayv2::INTEGRATIONS,
    apigatewayv2::AUTHORIZERS,
    apigatewayv2::DEPLOYMENTS,
    apigatewayv2::STAGES,
    apigatewayv2::MODELS,
    apigatewayv2::ROUTE_RESPONSES,
    apigatewayv2::INTEGRATION_RESPONSES,
    apigatewayv2::DOMAIN_NAME,
    apigatewayv2::API_MAPPINGS,
    apigatewayv2::VPC_LINK,
    monitoring::ALARM,
    monitoring::COMPOSITE_ALARM,
    monitoring::DASHBOARD,
    monitoring::SCHEDULE,
    monitoring::SCHEDULE_GROUP,
    monitoring::LOG_STREAM,
    monitoring::METRIC_FILTER,
    monitoring::SUBSCRIPTION_FILTER,
    monitoring::METRIC_STREAM,
    logs::QUERY_DEFINITION,
    logs::RESOURCE_POLICY,
    logs::DESTINATION,
    messaging::QUEUE,
    messaging::QUEUE_POLICY,
    messaging::QUEUE_INLINE_POLICY,
    messaging::TOPIC,
    messaging::SUBSCRIPTION,
    messaging::TOPIC_POLICY,
    messaging::TOPIC_INLINE_POLICY,
    messaging::RULE,
    messaging::EVENT_BUS,
    messaging::EVENT_ARCHIVE,
    events::EVENT_BUS_POLICY,
    events::CONNECTION,
    events::API_DESTINATION,
    events::ENDPOINT,
    ssm::DOCUMENT,
    ssm::MAINTENANCE_WINDOW,
    ssm::MAINTENANCE_WINDOW_TARGET,
    misc::ECR_REPOSITORY,
    misc::ECR_REGISTRY_POLICY,
    misc::ECR_PULL_THROUGH_CACHE_RULE,
    misc::ECR_REPLICATION_CONFIGURATION,
    misc::ECR_REGISTRY_SCANNING,
    misc::CDK_METADATA,
    misc::CODEDEPLOY_APPLICATION,
    misc::CODEDEPLOY_DEPLOYMENT_GROUP,
    misc::CODEDEPLOY_DEPLOYMENT_CONFIG,
    misc::NESTED_STACK,
    misc::WAIT_CONDITION_HANDLE,
    misc::WAIT_CONDITION,
    misc::CUSTOM_RESOURCE,
];

/// The provider of a type (custom resources, `Custom::*`, share one).
pub(crate) fn provider(kind: &str) -> Option<&'static Provider> {
    let kind = if kind.starts_with("Custom::") {
        "AWS::CloudFormation::CustomResource"
    } else {
        kind
    };
    PROVIDERS.iter().find(|p| p.kind == kind)
}

/// One resource operation's facts.
#[derive(Clone)]
pub(crate) struct Call {
    pub dispatcher: Arc<Dispatcher>,
    pub ctx: Context,
    pub stack_name: String,
    pub stack_id: String,
    pub logical_id: String,
    pub kind: String,
    /// The properties, evaluated.
    pub props: Json,
    /// The current physical id (updates and deletes).
    pub physical_id: Option<String>,
    /// What the resource offered before (updates and deletes).
    pub previous: Resolved,
    /// The properties before (updates and deletes).
    pub old_props: Json,
}

impl Call {
    /// Calls `service`'s `operation` with a JSON input in the API's member names, giving its
    /// output as JSON (members capitalised), or the error as a resource's failure reason.
    pub(crate) async fn api(
        &self,
        service: &str,
        operation: &str,
        input: Json,
    ) -> Result<Json, String> {
        self.api_with(service, operation, input, |_| ()).await
    }

    /// [`Call::api`], with the shaped input finished by `finish` (for members JSON cannot
    /// carry, such as binary blobs).
    pub(crate) async fn api_with(
        &self,
        service: &str,
        operation: &str,
        input: Json,
        finish: impl FnOnce(&mut Value),
    ) -> Result<Json, String> {
        let svc = self
            .dispatcher
            .service(service)
            .ok_or_else(|| format!("No service named {service}"))?;
        let model = svc.spec().model();
        let op = model
            .operation(operation)
            .ok_or_else(|| format!("{service} has no operation {operation}"))?;
        let shape = op
            .input
            .as_ref()
            .map(|r| model.resolve(r))
            .ok_or_else(|| format!("{service}'s {operation} takes no input"))?;
        let input = typed(model, shape, input, 0);
        let mut value = sdk::to_value(model, shape, &input, 0).map_err(|e| {
            format!(
                "Properties validation failed for resource {}: {e}",
                self.logical_id
            )
        })?;
        finish(&mut value);
        let output = self
            .dispatcher
            .call(&self.ctx, service, operation, value)
            .await
            .map_err(|e| {
                format!(
                    "Resource handler returned message: \"{}\" (Service: {service}, Status Code: {}, Request ID: {}, HandlerErrorCode: {})",
                    e.message,
                    e.status.unwrap_or(400),
                    self.ctx.request_id,
                    e.code
                )
            })?;
        let output_shape = op.output.as_ref().map(|r| model.resolve(r));
        Ok(sdk::to_json(model, output_shape, &output, 0))
    }

    /// The bytes of the object in Roto's S3 that a location property (`{Bucket, Key,
    /// Version}`) names.
    pub(crate) async fn s3_object(&self, location: &Json) -> Result<Vec<u8>, String> {
        let text = |member: &str| location.get(member).and_then(Json::as_str);
        let (Some(bucket), Some(key)) = (text("Bucket"), text("Key")) else {
            return Err(format!(
                "Properties validation failed for resource {}: the S3 location needs a Bucket and a Key",
                self.logical_id
            ));
        };
        super::stacks::s3_object(&self.dispatcher, &self.ctx, bucket, key, text("Version"))
            .await
            .map_err(|e| format!("Unable to read s3://{bucket}/{key}: {}", e.message))
    }

    /// The OpenAPI document of an API: `Body` (an object, or text) or the object
    /// `BodyS3Location` names.
    pub(crate) async fn api_document(&self) -> Result<Option<Vec<u8>>, String> {
        if let Some(body) = self.prop("Body") {
            return Ok(Some(match body {
                Json::String(s) => s.clone().into_bytes(),
                other => other.to_string().into_bytes(),
            }));
        }
        match self.prop("BodyS3Location") {
            Some(location) => self.s3_object(location).await.map(Some),
            None => Ok(None),
        }
    }

    /// A property as a string.
    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        self.props.get(name).and_then(Json::as_str)
    }

    /// A property, if set.
    pub(crate) fn prop(&self, name: &str) -> Option<&Json> {
        self.props.get(name).filter(|v| !v.is_null())
    }

    /// The physical id, for updates and deletes.
    pub(crate) fn physical(&self) -> &str {
        self.physical_id.as_deref().unwrap_or_default()
    }

    /// The name a resource takes: the property `member`, else one generated as AWS does
    /// (`stack-Logical-RANDOM`, at most `max` characters).
    pub(crate) fn name(&self, member: &str, max: usize) -> String {
        if let Some(name) = self.str(member) {
            return name.to_string();
        }
        if let Some(previous) = self
            .physical_id
            .as_deref()
            .filter(|_| self.old_props.get(member).is_none())
        {
            return previous.to_string();
        }
        generated_name(&self.stack_name, &self.logical_id, max)
    }

    /// The property named `member` as a JSON-document string (policies written as
    /// objects in templates, as strings in the APIs).
    pub(crate) fn document(&self, member: &str) -> Option<String> {
        self.prop(member).map(|v| match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// The account and region's ARN prefix for `service` (`arn:aws:sqs:us-east-1:1234:`).
    pub(crate) fn arn(&self, service: &str, rest: &str) -> String {
        format!(
            "arn:aws:{service}:{}:{}:{rest}",
            self.ctx.region, self.ctx.account
        )
    }
}

/// How deep [`typed`] follows a value.
const MAX_DEPTH: usize = 64;

/// `json` with the strings that stand where `shape` wants a boolean or a number converted,
/// as CloudFormation converts a template's `"true"` or `"5"` to the property's type
/// (templates quote them often; SAM's managed stack does). Anything else stays as it is,
/// for the conversion to the shape to judge.
fn typed(model: &Model, shape: &Shape, json: Json, depth: usize) -> Json {
    if depth > MAX_DEPTH || shape.document {
        return json;
    }
    match (shape.kind, json) {
        (ShapeKind::Structure, Json::Object(obj)) => Json::Object(
            obj.into_iter()
                .map(|(key, v)| {
                    let member = shape
                        .members
                        .iter()
                        .find(|(name, _)| sdk::same_member(name, &key));
                    let v = match member {
                        Some((_, m)) => typed(model, model.resolve(m), v, depth + 1),
                        None => v,
                    };
                    (key, v)
                })
                .collect(),
        ),
        (ShapeKind::List, Json::Array(items)) => match shape.member.as_deref() {
            Some(m) => {
                let member = model.resolve(m);
                Json::Array(
                    items
                        .into_iter()
                        .map(|i| typed(model, member, i, depth + 1))
                        .collect(),
                )
            }
            None => Json::Array(items),
        },
        (ShapeKind::Map, Json::Object(obj)) => match shape.value.as_deref() {
            Some(v) => {
                let value = model.resolve(v);
                Json::Object(
                    obj.into_iter()
                        .map(|(k, v)| (k, typed(model, value, v, depth + 1)))
                        .collect(),
                )
            }
            None => Json::Object(obj),
        },
        (ShapeKind::Boolean, Json::String(s)) if s == "true" || s == "false" => {
            Json::Bool(s == "true")
        }
        (ShapeKind::Integer | ShapeKind::Long, Json::String(s)) => match s.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => Json::String(s),
        },
        (ShapeKind::Float | ShapeKind::Double, Json::String(s)) => match s.parse::<f64>() {
            Ok(n) => json!(n),
            Err(_) => Json::String(s),
        },
        (_, other) => other,
    }
}

/// A generated physical name: `stack-Logical-RANDOM`, cut to `max` characters.
pub(crate) fn generated_name(stack: &str, logical: &str, max: usize) -> String {
    let suffix: String = (0..13)
        .map(|_| {
            let n = fastrand::usize(..36);
            char::from_digit(n as u32, 36)
                .unwrap_or('0')
                .to_ascii_uppercase()
        })
        .collect();
    let room = max.saturating_sub(suffix.len() + 2);
    let head: String = format!("{stack}-{logical}").chars().take(room).collect();
    format!("{head}-{suffix}")
}

/// What a resource offers: `Ref` and its attributes.
pub(crate) fn resolved(reference: impl Into<String>, attributes: Json) -> Resolved {
    Resolved {
        reference: reference.into(),
        attributes: match attributes {
            Json::Object(map) => map,
            _ => Map::new(),
        },
    }
}

/// CloudFormation's tag list (`[{Key, Value}]`) as a map (a map, as some types take their
/// tags, as it is).
pub(crate) fn tag_map(tags: Option<&Json>) -> Json {
    if let Some(Json::Object(map)) = tags {
        return Json::Object(map.clone());
    }
    let mut map = Map::new();
    for t in tags.and_then(Json::as_array).into_iter().flatten() {
        if let (Some(k), Some(v)) = (t["Key"].as_str(), t.get("Value")) {
            map.insert(k.to_string(), Json::String(super::template::scalar_text(v)));
        }
    }
    Json::Object(map)
}

/// What an update does to the resource's `Tags`: the tags it adds or changes (as a map),
/// and the keys it removes.
pub(crate) fn tag_changes(c: &Call) -> (Map<String, Json>, Vec<String>) {
    let map = |tags: Option<&Json>| match tag_map(tags) {
        Json::Object(map) => map,
        _ => Map::new(),
    };
    let (new, old) = (map(c.prop("Tags")), map(c.old_props.get("Tags")));
    let removed = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .cloned()
        .collect();
    let changed = new
        .into_iter()
        .filter(|(k, v)| old.get(k) != Some(v))
        .collect();
    (changed, removed)
}

/// How a service's operations take tags: as a `{Key, Value}` list, or as a map.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Tags {
    List,
    Map,
}

/// Applies the change of the resource's `Tags` through `service`'s `untag` and `tag`
/// operations, each given `target`'s members (which name the resource) beside `TagKeys`
/// or `Tags`.
pub(crate) async fn retag(
    c: &Call,
    service: &str,
    (untag, tag): (&str, &str),
    target: &Json,
    form: Tags,
) -> Result<(), String> {
    let (tags, removed) = tag_changes(c);
    if !removed.is_empty() {
        let input = with(target.clone(), "TagKeys", json!(removed));
        c.api(service, untag, input).await?;
    }
    if !tags.is_empty() {
        let tags = match form {
            Tags::Map => Json::Object(tags),
            Tags::List => tags
                .into_iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect(),
        };
        c.api(service, tag, with(target.clone(), "Tags", tags))
            .await?;
    }
    Ok(())
}

/// The members of `props` named in `names` that are set, as an object.
pub(crate) fn pick(props: &Json, names: &[&str]) -> Json {
    let mut out = Map::new();
    for n in names {
        if let Some(v) = props.get(*n).filter(|v| !v.is_null()) {
            out.insert((*n).to_string(), v.clone());
        }
    }
    Json::Object(out)
}

/// Adds `value` under `key` to a JSON object (null is taken for an empty one).
pub(crate) fn with(mut object: Json, key: &str, value: Json) -> Json {
    if object.is_null() {
        object = empty();
    }
    if let Json::Object(map) = &mut object {
        if !value.is_null() {
            map.insert(key.to_string(), value);
        }
    }
    object
}

/// A delete that tolerates the resource being gone already.
pub(crate) fn gone_ok(result: Result<Json, String>) -> Result<(), String> {
    match result {
        Ok(_) => Ok(()),
        Err(e)
            if e.contains("NotFound") || e.contains("NoSuch") || e.contains("does not exist") =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// An empty JSON object.
pub(crate) fn empty() -> Json {
    json!({})
}
