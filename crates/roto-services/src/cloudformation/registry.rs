//! The CloudFormation registry: the public AWS resource types Roto provisions (its
//! providers' table), and the private types an account registers.
//!
//! A registration completes at once: the type and its new version are recorded (kind
//! `type`, one document per type with its versions; kind `registration` per token), so
//! `DescribeType`, `ListTypes`, `ListTypeVersions` and the default-version and
//! configuration operations work on it. Roto runs no resource handlers, so a stack that
//! uses a private type fails to create that resource; `TestType` records that no contract
//! test passed (so `PublishType` refuses, as AWS refuses an untested type), and progress
//! reports from handlers (`RecordHandlerProgress`) have no operation to report on. Roto's
//! public registry holds AWS's types only: there is no third-party type to activate.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::families::{page, scope};
use super::providers::PROVIDERS;
use super::stacksets::now_seconds;
use super::{Inner, SPEC};
use crate::documents::{document, shaped};
use crate::ids;

const TYPE: &str = "type";
const REGISTRATION: &str = "registration";
const CONFIGURATION: &str = "typeconfig";
const PUBLISHER: &str = "publisher";

fn registry_error(message: impl Into<String>) -> AwsError {
    AwsError::new("CFNRegistryException", message)
}

fn not_found(name: &str) -> AwsError {
    AwsError::new(
        "TypeNotFoundException",
        format!("The type '{name}' cannot be found."),
    )
}

/// `RESOURCE` and `AWS::S3::Bucket` as an ARN's tail: `resource/AWS-S3-Bucket`.
fn arn_tail(kind: &str, name: &str) -> String {
    format!("{}/{}", kind.to_ascii_lowercase(), name.replace("::", "-"))
}

fn public_arn(ctx: &Context, kind: &str, name: &str) -> String {
    format!(
        "arn:aws:cloudformation:{}::type/{}",
        ctx.region,
        arn_tail(kind, name)
    )
}

fn private_arn(ctx: &Context, kind: &str, name: &str) -> String {
    format!(
        "arn:aws:cloudformation:{}:{}:type/{}",
        ctx.region,
        ctx.account,
        arn_tail(kind, name)
    )
}

/// The type and type name a request names, by `Arn` (or `TypeArn`) or by `Type` and
/// `TypeName`.
fn named(input: &Value) -> AwsResult<(String, String)> {
    if let Some(arn) = input.str("Arn").or(input.str("TypeArn")) {
        let tail = arn.split(":type/").nth(1).unwrap_or_default();
        let mut parts = tail.split('/');
        let kind = parts.next().unwrap_or_default().to_ascii_uppercase();
        let name = parts.next().unwrap_or_default().replace('-', "::");
        if kind.is_empty() || name.is_empty() {
            return Err(registry_error(format!("Invalid type ARN {arn}")));
        }
        return Ok((kind, name));
    }
    match input.str("TypeName") {
        Some(name) => Ok((
            input.str("Type").unwrap_or("RESOURCE").to_string(),
            name.to_string(),
        )),
        None => Err(AwsError::new(
            "ValidationError",
            "Either Arn, or TypeName and Type must be specified",
        )
        .with_status(400)),
    }
}

fn is_aws_type(kind: &str, name: &str) -> bool {
    kind == "RESOURCE" && PROVIDERS.iter().any(|p| p.kind == name)
}

/// A public AWS type as the registry describes it.
fn aws_type(ctx: &Context, name: &str) -> Json {
    json!({
        "Arn": public_arn(ctx, "RESOURCE", name),
        "TypeArn": public_arn(ctx, "RESOURCE", name),
        "Type": "RESOURCE",
        "TypeName": name,
        "IsDefaultVersion": true,
        "Visibility": "PUBLIC",
        "ProvisioningType": "FULLY_MUTABLE",
        "DeprecatedStatus": "LIVE",
        "IsActivated": true,
        "PublisherName": "AWS",
        "Description": format!("{name}, provisioned by Roto"),
    })
}

fn key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

fn private_type(inner: &Inner, ctx: &Context, kind: &str, name: &str) -> AwsResult<Option<Json>> {
    inner.documents.get(scope(ctx, TYPE), &key(kind, name))
}

/// The type a request names, private or AWS's.
fn described(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Json> {
    let (kind, name) = named(input)?;
    if let Some(doc) = private_type(inner, ctx, &kind, &name)? {
        let version = input
            .str("VersionId")
            .or(doc["DefaultVersionId"].as_str())
            .unwrap_or_default()
            .to_string();
        let found = versions(&doc)
            .into_iter()
            .find(|v| v["VersionId"] == version);
        let Some(v) = found else {
            return Err(not_found(&name));
        };
        let mut out = doc.clone();
        out["Arn"] = v["Arn"].clone();
        out["IsDefaultVersion"] = (doc["DefaultVersionId"] == version).into();
        out["TimeCreated"] = v["TimeCreated"].clone();
        return Ok(out);
    }
    if is_aws_type(&kind, &name) {
        return Ok(aws_type(ctx, &name));
    }
    Err(not_found(&name))
}

fn versions(doc: &Json) -> Vec<Json> {
    doc["Versions"].as_array().cloned().unwrap_or_default()
}

pub(crate) fn describe_type(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    shaped(
        SPEC.model(),
        "DescribeTypeOutput",
        &described(inner, ctx, input)?,
    )
}

pub(crate) fn list_types(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let filters = input.get("Filters");
    let prefix = filters
        .and_then(|f| f.str("TypeNamePrefix"))
        .unwrap_or_default();
    let category = filters.and_then(|f| f.str("Category"));
    let visibility = input.str("Visibility").unwrap_or("PRIVATE");
    let kind = input.str("Type").unwrap_or("RESOURCE");
    let public = visibility == "PUBLIC" || category == Some("AWS_TYPES");
    let types: Vec<Json> = if public && kind == "RESOURCE" {
        PROVIDERS.iter().map(|p| aws_type(ctx, p.kind)).collect()
    } else if public {
        Vec::new()
    } else {
        inner
            .documents
            .list(scope(ctx, TYPE))?
            .into_iter()
            .filter(|t| t["Type"] == kind)
            .map(|mut t| {
                t["TypeArn"] = t["Arn"].clone();
                t
            })
            .collect()
    };
    let summaries = types
        .iter()
        .filter(|t| {
            t["TypeName"]
                .as_str()
                .unwrap_or_default()
                .starts_with(prefix)
        })
        .map(|t| shaped(SPEC.model(), "TypeSummary", t))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "TypeSummaries")
}

pub(crate) fn register_type(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let kind = input.str("Type").unwrap_or("RESOURCE");
    let name = input.str("TypeName").unwrap_or_default();
    if name.starts_with("AWS::") || name.starts_with("Alexa::") {
        return Err(registry_error(format!(
            "Type name {name} uses a namespace reserved for AWS"
        )));
    }
    let arn = private_arn(ctx, kind, name);
    let mut doc = private_type(inner, ctx, kind, name)?.unwrap_or_else(|| {
        json!({
            "Arn": arn,
            "Type": kind,
            "TypeName": name,
            "Visibility": "PRIVATE",
            "ProvisioningType": "FULLY_MUTABLE",
            "DeprecatedStatus": "LIVE",
            "TypeTestsStatus": "NOT_TESTED",
            "TimeCreated": now_seconds(),
            "Versions": [],
        })
    });
    let version = format!("{:08}", versions(&doc).len() + 1);
    let version_arn = format!("{arn}/{version}");
    let given = document(input);
    for member in ["LoggingConfig", "ExecutionRoleArn"] {
        if let Some(value) = given.get(member) {
            doc[member] = value.clone();
        }
    }
    doc["SourceUrl"] = given["SchemaHandlerPackage"].clone();
    doc["LastUpdated"] = now_seconds();
    if doc["DefaultVersionId"].is_null() {
        doc["DefaultVersionId"] = version.clone().into();
    }
    if let Some(list) = doc["Versions"].as_array_mut() {
        list.push(json!({"VersionId": version, "Arn": version_arn, "TimeCreated": now_seconds()}));
    }
    inner
        .documents
        .put(scope(ctx, TYPE), &key(kind, name), &doc)?;
    let token = ids::uuid();
    let registration = json!({
        "Token": token,
        "TypeKey": key(kind, name),
        "ProgressStatus": "COMPLETE",
        "Description": "Deployment is currently in DEPLOY_STAGE of status COMPLETED; ",
        "TypeArn": arn,
        "TypeVersionArn": version_arn,
    });
    inner
        .documents
        .put(scope(ctx, REGISTRATION), &token, &registration)?;
    Ok(Value::map().with("RegistrationToken", token))
}

pub(crate) fn describe_type_registration(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let token = input.str("RegistrationToken").unwrap_or_default();
    let doc = inner
        .documents
        .get(scope(ctx, REGISTRATION), token)?
        .ok_or_else(|| registry_error(format!("Registration token {token} was not found")))?;
    shaped(SPEC.model(), "DescribeTypeRegistrationOutput", &doc)
}

pub(crate) fn list_type_registrations(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (kind, name) = named(input)?;
    let status = input.str("RegistrationStatusFilter");
    let tokens: Vec<Value> = inner
        .documents
        .list(scope(ctx, REGISTRATION))?
        .into_iter()
        .filter(|r| r["TypeKey"] == key(&kind, &name))
        .filter(|r| status.is_none_or(|s| r["ProgressStatus"] == s))
        .filter_map(|r| r["Token"].as_str().map(Value::from))
        .collect();
    page(tokens, input, "RegistrationTokenList")
}

pub(crate) fn list_type_versions(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let (kind, name) = named(input)?;
    let summaries: Vec<Json> = match private_type(inner, ctx, &kind, &name)? {
        Some(doc) => versions(&doc)
            .into_iter()
            .map(|mut v| {
                v["Type"] = doc["Type"].clone();
                v["TypeName"] = doc["TypeName"].clone();
                v["IsDefaultVersion"] = (doc["DefaultVersionId"] == v["VersionId"]).into();
                v
            })
            .collect(),
        None if is_aws_type(&kind, &name) => vec![aws_type(ctx, &name)],
        None => return Err(not_found(&name)),
    };
    let summaries = summaries
        .iter()
        .map(|v| shaped(SPEC.model(), "TypeVersionSummary", v))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "TypeVersionSummaries")
}

/// The private type a request names, with the version it names (from `VersionId`, or the
/// version ARN in `Arn`).
fn private_version(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<(Json, Option<String>)> {
    let (kind, name) = named(input)?;
    let doc = private_type(inner, ctx, &kind, &name)?.ok_or_else(|| not_found(&name))?;
    let from_arn = input
        .str("Arn")
        .and_then(|a| a.rsplit('/').next())
        .filter(|v| v.len() == 8 && v.bytes().all(|b| b.is_ascii_digit()));
    let version = input.str("VersionId").or(from_arn).map(str::to_string);
    if let Some(v) = &version {
        if !versions(&doc).iter().any(|x| x["VersionId"] == v.as_str()) {
            return Err(not_found(&format!("{name}/{v}")));
        }
    }
    Ok((doc, version))
}

fn put_type(inner: &Inner, ctx: &Context, doc: &Json) -> AwsResult<()> {
    let k = key(
        doc["Type"].as_str().unwrap_or_default(),
        doc["TypeName"].as_str().unwrap_or_default(),
    );
    inner.documents.put(scope(ctx, TYPE), &k, doc)
}

pub(crate) fn set_type_default_version(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (mut doc, version) = private_version(inner, ctx, input)?;
    let version = version.ok_or_else(|| registry_error("A VersionId must be specified"))?;
    doc["DefaultVersionId"] = version.into();
    put_type(inner, ctx, &doc)?;
    Ok(Value::map())
}

pub(crate) fn deregister_type(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let (kind, name) = named(input)?;
    if is_aws_type(&kind, &name) {
        return Err(registry_error(format!("Type {name} is not a private type")));
    }
    let (mut doc, version) = private_version(inner, ctx, input)?;
    let all = versions(&doc);
    match version {
        Some(v) if all.len() > 1 && doc["DefaultVersionId"] == v.as_str() => {
            Err(registry_error(format!(
                "Version {v} is the default version of {name} and cannot be deregistered while other versions exist"
            )))
        }
        Some(v) if all.len() > 1 => {
            doc["Versions"] = Json::Array(all.into_iter().filter(|x| x["VersionId"] != v.as_str()).collect());
            put_type(inner, ctx, &doc)?;
            Ok(Value::map())
        }
        _ => {
            inner.documents.delete(scope(ctx, TYPE), &key(&kind, &name))?;
            Ok(Value::map())
        }
    }
}

pub(crate) fn set_type_configuration(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let described = described(inner, ctx, input)?;
    let alias = input.str("ConfigurationAlias").unwrap_or("default");
    let type_arn = described["Arn"].as_str().unwrap_or_default();
    let type_arn = type_arn
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches('/');
    let arn = format!(
        "arn:aws:cloudformation:{}:{}:type-configuration/{}/{alias}",
        ctx.region,
        ctx.account,
        arn_tail(
            described["Type"].as_str().unwrap_or_default(),
            described["TypeName"].as_str().unwrap_or_default()
        )
    );
    let doc = json!({
        "Arn": arn,
        "Alias": alias,
        "Configuration": input.str("Configuration").unwrap_or_default(),
        "LastUpdated": now_seconds(),
        "TypeArn": type_arn,
        "TypeName": described["TypeName"],
        "IsDefaultConfiguration": alias == "default",
    });
    inner.documents.put(scope(ctx, CONFIGURATION), &arn, &doc)?;
    Ok(Value::map().with("ConfigurationArn", arn))
}

pub(crate) fn batch_describe_type_configurations(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stored = inner.documents.list(scope(ctx, CONFIGURATION))?;
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for id in input
        .get("TypeConfigurationIdentifiers")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let alias = id.str("TypeConfigurationAlias").unwrap_or("default");
        let matching = stored
            .iter()
            .find(|c| match id.str("TypeConfigurationArn") {
                Some(arn) => c["Arn"] == arn,
                None => {
                    c["Alias"] == alias
                        && (id.str("TypeArn").is_some_and(|a| c["TypeArn"] == a)
                            || id.str("TypeName").is_some_and(|n| c["TypeName"] == n))
                }
            });
        match matching {
            Some(c) => found.push(shaped(SPEC.model(), "TypeConfigurationDetails", c)?),
            None => errors.push(
                Value::map()
                    .with("ErrorCode", "TypeConfigurationNotFoundException")
                    .with("ErrorMessage", "The type configuration was not found.")
                    .with("TypeConfigurationIdentifier", id.clone()),
            ),
        }
    }
    Ok(Value::map()
        .with("Errors", errors)
        .with("UnprocessedTypeConfigurations", Vec::<Value>::new())
        .with("TypeConfigurations", found))
}

pub(crate) fn test_type(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let (mut doc, version) = private_version(inner, ctx, input)?;
    let version = version
        .or_else(|| doc["DefaultVersionId"].as_str().map(str::to_string))
        .unwrap_or_default();
    doc["TypeTestsStatus"] = "FAILED".into();
    doc["TypeTestsStatusDescription"] = "Roto runs no contract tests for resource handlers".into();
    put_type(inner, ctx, &doc)?;
    let arn = format!("{}/{version}", doc["Arn"].as_str().unwrap_or_default());
    Ok(Value::map().with("TypeVersionArn", arn))
}

pub(crate) fn publish_type(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let (doc, _) = private_version(inner, ctx, input)?;
    if inner
        .documents
        .get(scope(ctx, PUBLISHER), "self")?
        .is_none()
    {
        return Err(registry_error(
            "You must register as a publisher before publishing an extension",
        ));
    }
    Err(registry_error(format!(
        "Type {} must pass its contract tests before it is published (TypeTestsStatus is {})",
        doc["TypeName"].as_str().unwrap_or_default(),
        doc["TypeTestsStatus"].as_str().unwrap_or("NOT_TESTED")
    )))
}

/// `ActivateType` and `DeactivateType`: Roto's public registry has no third-party types.
pub(crate) fn activate_type(input: &Value) -> AwsResult<Value> {
    let name = input
        .str("TypeName")
        .or(input.str("PublicTypeArn"))
        .or(input.str("Arn"))
        .unwrap_or_default();
    Err(not_found(name))
}

pub(crate) fn register_publisher(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    if let Some(doc) = inner.documents.get(scope(ctx, PUBLISHER), "self")? {
        let id = doc["PublisherId"].as_str().unwrap_or_default();
        return Ok(Value::map().with("PublisherId", id));
    }
    let (provider, status) = match input.str("ConnectionArn") {
        Some(arn) if arn.contains("bitbucket") => ("Bitbucket", "VERIFIED"),
        Some(_) => ("GitHub", "VERIFIED"),
        None => ("AWS_Marketplace", "UNVERIFIED"),
    };
    let id = ids::hex(40);
    let doc = json!({
        "PublisherId": id,
        "PublisherStatus": status,
        "IdentityProvider": provider,
    });
    inner.documents.put(scope(ctx, PUBLISHER), "self", &doc)?;
    Ok(Value::map().with("PublisherId", id))
}

pub(crate) fn describe_publisher(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let own = inner.documents.get(scope(ctx, PUBLISHER), "self")?;
    match (own, input.str("PublisherId")) {
        (Some(doc), None) => shaped(SPEC.model(), "DescribePublisherOutput", &doc),
        (Some(doc), Some(id)) if doc["PublisherId"] == id => {
            shaped(SPEC.model(), "DescribePublisherOutput", &doc)
        }
        (_, Some(id)) => Err(registry_error(format!("Publisher {id} was not found"))),
        (None, None) => Err(registry_error(
            "This account is not registered as a publisher",
        )),
    }
}

/// `RecordHandlerProgress`: bearer tokens come with handler invocations, which Roto never
/// makes.
pub(crate) fn record_handler_progress() -> AwsResult<Value> {
    Err(AwsError::new(
        "OperationStatusCheckFailedException",
        "The bearer token does not belong to a handler operation in progress",
    ))
}
