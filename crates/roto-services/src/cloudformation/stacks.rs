//! The stack operations: templates read (body or S3 URL) and prepared (parameters,
//! conditions, rules, capabilities), stacks created, updated and deleted on background
//! tasks, and their descriptions, events, resources, outputs and exports.

use std::sync::{Arc, Mutex};

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Dispatcher, Request, Value};
use serde_json::Value as Json;

use super::deploy::{self, Job};
use super::intrinsics::{Pseudo, Scope};
use super::parameters::{self, ParameterValue};
use super::stack_policy::StackPolicy;
use super::store::{self, Meta, Stack};
use super::template::{self, section};
use super::watchdog;
use super::{graph, no_stack, sam, validation, Inner};
use crate::paging;

/// Statuses in which a stack can be updated.
const UPDATABLE: [&str; 4] = [
    "CREATE_COMPLETE",
    "UPDATE_COMPLETE",
    "UPDATE_ROLLBACK_COMPLETE",
    "IMPORT_COMPLETE",
];

/// The template a request gives, as text: `TemplateBody`, or `TemplateURL` read from S3.
pub(crate) async fn template_text(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<String> {
    match (input.str("TemplateBody"), input.str("TemplateURL")) {
        (Some(body), None) => Ok(body.to_string()),
        (None, Some(url)) => {
            let bytes = fetch(inner, ctx, url, "TemplateURL").await?;
            if bytes.len() > template::MAX_BODY {
                return Err(validation("Template may not exceed 1000000 bytes in size."));
            }
            String::from_utf8(bytes)
                .map_err(|_| validation("Template format error: the template is not UTF-8"))
        }
        (Some(_), Some(_)) => Err(validation(
            "Specify exactly one of TemplateBody or TemplateURL.",
        )),
        (None, None) => Err(validation(
            "Either Template URL or Template Body must be specified.",
        )),
    }
}

/// The bucket and key an S3 URL names (virtual-hosted or path style, AWS's or Roto's host).
pub(crate) fn s3_location(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let (host, path) = rest.split_once('/')?;
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?
        .into_owned();
    let host = host.split(':').next().unwrap_or_default();
    let virtual_bucket = host
        .find(".s3.")
        .or_else(|| host.find(".s3-"))
        .map(|i| &host[..i]);
    match virtual_bucket {
        Some(bucket) if !bucket.is_empty() => Some((bucket.to_string(), decoded)),
        _ => {
            let (bucket, key) = decoded.split_once('/')?;
            (!bucket.is_empty() && !key.is_empty()).then(|| (bucket.to_string(), key.to_string()))
        }
    }
}

/// The object an S3 URL given as the request's `member` names.
async fn fetch(inner: &Inner, ctx: &Context, url: &str, member: &str) -> AwsResult<Vec<u8>> {
    let (bucket, key) =
        s3_location(url).ok_or_else(|| validation(format!("{member} must be a supported URL.")))?;
    s3_object(&*inner.dispatcher()?, ctx, &bucket, &key, None)
        .await
        .map_err(|e| validation(format!("S3 error: {}", e.message)))
}

/// An object's bytes from Roto's S3 (templates, and the documents resources name by their
/// S3 location).
pub(crate) async fn s3_object(
    dispatcher: &Dispatcher,
    ctx: &Context,
    bucket: &str,
    key: &str,
    version: Option<&str>,
) -> AwsResult<Vec<u8>> {
    let input = Value::map()
        .with("Bucket", bucket)
        .with("Key", key)
        .with_opt("VersionId", version);
    let response = dispatcher
        .call_request(ctx, "s3", "GetObject", Request::new(input))
        .await?;
    response.into_payload().await
}

/// A template read and checked as CloudFormation checks one before it runs anything.
pub(crate) fn prepare(body: &str) -> AwsResult<Json> {
    let mut doc = template::parse(body)?;
    for t in template::transforms(&doc) {
        match t.as_str() {
            "AWS::LanguageExtensions" => {}
            sam::SAM => doc = sam::expand(doc).map_err(validation)?,
            _ => return Err(validation(format!("Transform {t} is not supported"))),
        }
    }
    template::check(&doc)?;
    let resources = section(&doc, "Resources");
    let graph = graph::dependencies(resources, section(&doc, "Parameters")).map_err(validation)?;
    graph::waves(&graph).map_err(validation)?;
    Ok(doc)
}

/// The parameters' values (SSM-typed ones resolved through SSM), checked with the
/// template's rules and capabilities.
pub(crate) async fn settle(
    inner: &Inner,
    ctx: &Context,
    doc: &Json,
    input: &Value,
    previous: &[ParameterValue],
    stack_name: &str,
) -> AwsResult<Vec<ParameterValue>> {
    let supplied = input
        .get("Parameters")
        .and_then(Value::as_list)
        .unwrap_or_default();
    let mut values = parameters::values(doc, supplied, previous)?;
    resolve_ssm(inner, ctx, doc, &mut values).await?;
    let pseudo = Pseudo {
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        stack_name: stack_name.to_string(),
        stack_id: String::new(),
        notification_arns: Vec::new(),
    };
    let scope_params = parameters::scope_values(doc, &values);
    let (no_conditions, no_resources, no_exports) = Default::default();
    let scope = Scope {
        pseudo: &pseudo,
        parameters: &scope_params,
        mappings: section(doc, "Mappings"),
        conditions: &no_conditions,
        resources: &no_resources,
        exports: &no_exports,
    };
    let conditions = parameters::conditions(doc, &scope).map_err(validation)?;
    let scope = Scope {
        conditions: &conditions,
        ..scope
    };
    parameters::check_rules(doc, &scope).map_err(validation)?;
    check_capabilities(doc, input)?;
    Ok(values)
}

async fn resolve_ssm(
    inner: &Inner,
    ctx: &Context,
    doc: &Json,
    values: &mut [ParameterValue],
) -> AwsResult<()> {
    for v in values.iter_mut() {
        let kind = parameters::declared(doc, &v.key)
            .and_then(|d| d.get("Type"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        if parameters::ssm_type(kind).is_none() {
            continue;
        }
        let input = Value::map()
            .with("Name", v.value.as_str())
            .with("WithDecryption", true);
        let out = inner
            .dispatcher()?
            .call(ctx, "ssm", "GetParameter", input)
            .await
            .map_err(|_| {
                validation(format!(
                    "Unable to fetch parameters [{}] from parameter store for this account.",
                    v.value
                ))
            })?;
        v.resolved = out
            .get("Parameter")
            .and_then(|p| p.str("Value"))
            .map(str::to_string);
    }
    Ok(())
}

fn check_capabilities(doc: &Json, input: &Value) -> AwsResult<()> {
    let given = capabilities(input);
    let (needed, _) = template::capabilities(doc);
    let satisfied = |c: &&str| {
        given.contains(c) || (*c == "CAPABILITY_IAM" && given.contains(&"CAPABILITY_NAMED_IAM"))
    };
    let missing: Vec<&str> = needed.into_iter().filter(|c| !satisfied(c)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(insufficient(&missing))
}

/// CreateStack and UpdateStack run a template's transforms (macros, SAM's among them) only
/// when the caller acknowledges `CAPABILITY_AUTO_EXPAND`; a change set needs no such
/// acknowledgement, since its caller reviews the processed template first.
fn check_auto_expand(doc: &Json, input: &Value) -> AwsResult<()> {
    const AUTO_EXPAND: &str = "CAPABILITY_AUTO_EXPAND";
    if template::transforms(doc).is_empty() || capabilities(input).contains(&AUTO_EXPAND) {
        return Ok(());
    }
    Err(insufficient(&[AUTO_EXPAND]))
}

/// The capabilities a request acknowledges.
fn capabilities(input: &Value) -> Vec<&str> {
    input
        .get("Capabilities")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

fn insufficient(missing: &[&str]) -> AwsError {
    AwsError::new(
        "InsufficientCapabilitiesException",
        format!("Requires capabilities : [{}]", missing.join(", ")),
    )
    .with_status(400)
}

fn tags(input: &Value) -> Vec<(String, String)> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t.str("Key").unwrap_or_default().to_string(),
                t.str("Value").unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A stack's settings from a create request (or a change set's).
pub(crate) fn meta(input: &Value, doc: Json, parameters: Vec<ParameterValue>) -> Meta {
    Meta {
        parameters,
        tags: tags(input),
        capabilities: input.strings("Capabilities"),
        description: doc["Description"].as_str().map(str::to_string),
        disable_rollback: input.bool("DisableRollback").unwrap_or(false)
            || input.str("OnFailure") == Some("DO_NOTHING"),
        termination_protection: input.bool("EnableTerminationProtection").unwrap_or(false),
        notification_arns: input.strings("NotificationARNs"),
        role_arn: input.str("RoleARN").map(str::to_string),
        outputs: Vec::new(),
        timeout: input.int("TimeoutInMinutes"),
        change_set_id: None,
        policy: None,
        alias: None,
        processed: doc,
        rollback: None,
        requests: Vec::new(),
    }
}

/// A new stack id.
pub(crate) fn stack_id(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:cloudformation:{}:{}:stack/{name}/{}",
        ctx.region,
        ctx.account,
        crate::ids::uuid()
    )
}

/// The live stack a request names, or AWS's ValidationError.
pub(crate) fn named(inner: &Inner, ctx: &Context, name: &str) -> AwsResult<Stack> {
    store::find_stack(inner.store()?, ctx, name)?
        .filter(|s| s.deleted.is_none() || name.starts_with("arn:"))
        .ok_or_else(|| no_stack(name))
}

/// Starts the background task of the stack operation `input` asks for.
pub(crate) fn spawn<F, Fut>(
    inner: &Arc<Inner>,
    ctx: &Context,
    stack: &Stack,
    input: &Value,
    run: F,
) -> AwsResult<()>
where
    F: FnOnce(Arc<Job>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    start(job(inner, ctx, stack, input)?, run);
    Ok(())
}

/// The job of the stack operation `input` asks for (its events carry the request's
/// `ClientRequestToken`), not cancellable and skipping nothing, not yet started.
pub(crate) fn job(
    inner: &Arc<Inner>,
    ctx: &Context,
    stack: &Stack,
    input: &Value,
) -> AwsResult<Job> {
    Ok(Job {
        inner: inner.clone(),
        dispatcher: inner.dispatcher()?,
        ctx: ctx.clone(),
        stack_id: stack.id.clone(),
        stack_name: stack.name.clone(),
        notification_arns: stack.meta.notification_arns.clone(),
        cancel: Default::default(),
        skip: Default::default(),
        token: input.str("ClientRequestToken").map(str::to_string),
        stopped: Default::default(),
    })
}

/// Whether `input` repeats the stack's latest operation, `operation` with the same
/// `ClientRequestToken` (a retry, which has nothing more to do); a token an earlier,
/// different operation used is AWS's TokenAlreadyExistsException.
pub(crate) fn repeated(stack: &Stack, operation: &str, input: &Value) -> AwsResult<bool> {
    let Some(token) = input.str("ClientRequestToken") else {
        return Ok(false);
    };
    let requests = &stack.meta.requests;
    if requests
        .last()
        .is_some_and(|(op, t)| op == operation && t == token)
    {
        return Ok(true);
    }
    if requests.iter().any(|(_, t)| t == token) {
        return Err(AwsError::new(
            "TokenAlreadyExistsException",
            "A client request token already exists.",
        )
        .with_status(400));
    }
    Ok(false)
}

/// Records `operation` and its request's `ClientRequestToken` (empty without one) among
/// the stack's operations.
pub(crate) fn record(meta: &mut Meta, operation: &str, input: &Value) {
    let token = input.str("ClientRequestToken").unwrap_or_default();
    meta.requests
        .push((operation.to_string(), token.to_string()));
}

/// Starts a job's background task.
pub(crate) fn start<F, Fut>(job: Job, run: F)
where
    F: FnOnce(Arc<Job>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    tokio::spawn(run(Arc::new(job)));
}

pub(crate) async fn create_stack(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = input.str("StackName").unwrap_or_default();
    if let Some(existing) = store::find_stack(inner.store()?, ctx, name)? {
        if repeated(&existing, "CreateStack", input)? {
            return Ok(Value::map().with("StackId", existing.id));
        }
        return Err(AwsError::new(
            "AlreadyExistsException",
            format!("Stack [{name}] already exists"),
        )
        .with_status(400));
    }
    let body = template_text(inner, ctx, input).await?;
    check_auto_expand(&template::parse(&body)?, input)?;
    let doc = prepare(&body)?;
    let values = settle(inner, ctx, &doc, input, &[], name).await?;
    let policy = stack_policy(inner, ctx, input, "StackPolicy").await?;
    let mut meta = meta(input, doc, values);
    meta.policy = policy;
    meta.rollback = watchdog::parse(input)?;
    record(&mut meta, "CreateStack", input);
    let now = now_millis();
    let stack = Stack {
        id: stack_id(ctx, name),
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        name: name.to_string(),
        status: "CREATE_IN_PROGRESS".into(),
        reason: Some("User Initiated".into()),
        created: now,
        updated: None,
        deleted: None,
        body,
        meta,
    };
    store::put_stack(inner.store()?, &stack)?;
    let created = stack.clone();
    spawn(inner, ctx, &stack, input, |job| {
        deploy::run_create(job, created)
    })?;
    Ok(Value::map().with("StackId", stack.id))
}

pub(crate) async fn update_stack(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = input.str("StackName").unwrap_or_default();
    let old = named(inner, ctx, name)?;
    if repeated(&old, "UpdateStack", input)? {
        return Ok(Value::map().with("StackId", old.id));
    }
    if !UPDATABLE.contains(&old.status.as_str()) {
        return Err(validation(format!(
            "Stack:{} is in {} state and can not be updated.",
            old.id, old.status
        )));
    }
    let body = if input.bool("UsePreviousTemplate") == Some(true) {
        old.body.clone()
    } else {
        template_text(inner, ctx, input).await?
    };
    check_auto_expand(&template::parse(&body)?, input)?;
    let doc = prepare(&body)?;
    let values = settle(inner, ctx, &doc, input, &old.meta.parameters, &old.name).await?;
    let during = stack_policy(inner, ctx, input, "StackPolicyDuringUpdate").await?;
    let policy = stack_policy(inner, ctx, input, "StackPolicy").await?;
    let mut new = old.clone();
    if policy.is_some() {
        new.meta.policy = policy;
    }
    new.body = body;
    new.meta.parameters = values;
    new.meta.processed = doc;
    new.meta.description = new.meta.processed["Description"]
        .as_str()
        .map(str::to_string);
    if input.get("Tags").is_some() {
        new.meta.tags = tags(input);
    }
    if let Some(rollback) = watchdog::parse(input)? {
        new.meta.rollback = Some(rollback);
    }
    if new.meta.processed == old.meta.processed
        && new.meta.parameters == old.meta.parameters
        && new.meta.tags == old.meta.tags
        && new.meta.rollback == old.meta.rollback
    {
        return Err(validation("No updates are to be performed."));
    }
    let during = during.map(|text| StackPolicy::parse(&text)).transpose()?;
    record(&mut new.meta, "UpdateStack", input);
    begin_update(inner, ctx, old, new, during, input)?;
    Ok(Value::map().with("StackId", name_or_id(inner, ctx, name)?))
}

fn name_or_id(inner: &Inner, ctx: &Context, name: &str) -> AwsResult<String> {
    Ok(named(inner, ctx, name)?.id)
}

/// Stores the stack's new template and starts the update `input` asks for, under the
/// policy `during` overrides for this update, else the stack's own.
pub(crate) fn begin_update(
    inner: &Arc<Inner>,
    ctx: &Context,
    old: Stack,
    mut new: Stack,
    during: Option<StackPolicy>,
    input: &Value,
) -> AwsResult<()> {
    let policy = match (during, &old.meta.policy) {
        (Some(during), _) => Some(during),
        (None, Some(text)) => Some(StackPolicy::parse(text)?),
        (None, None) => None,
    };
    new.status = "UPDATE_IN_PROGRESS".into();
    new.updated = Some(now_millis());
    store::put_stack(inner.store()?, &new)?;
    let mut update = job(inner, ctx, &new, input)?;
    update.cancel = Mutex::new(Some(inner.updates.register(&new.id)));
    start(update, |job| {
        deploy::run_update(job, old, new, policy.map(Arc::new))
    });
    Ok(())
}

pub(crate) fn delete_stack(inner: &Arc<Inner>, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let name = input.str("StackName").unwrap_or_default();
    let Some(mut stack) =
        store::find_stack(inner.store()?, ctx, name)?.filter(|s| s.deleted.is_none())
    else {
        return Ok(Value::map());
    };
    if repeated(&stack, "DeleteStack", input)? {
        return Ok(Value::map());
    }
    if stack.meta.termination_protection {
        return Err(validation(format!(
            "Stack [{}] cannot be deleted while TerminationProtection is enabled",
            stack.name
        )));
    }
    if stack.status == "DELETE_IN_PROGRESS"
        || stack.status.ends_with("_IN_PROGRESS") && stack.status != "REVIEW_IN_PROGRESS"
    {
        return Ok(Value::map());
    }
    record(&mut stack.meta, "DeleteStack", input);
    store::put_stack(inner.store()?, &stack)?;
    let deleting = stack.clone();
    spawn(inner, ctx, &stack, input, |job| {
        deploy::run_delete(job, deleting)
    })?;
    store::set_status(
        inner.store()?,
        &stack.id,
        "DELETE_IN_PROGRESS",
        Some("User Initiated"),
    )?;
    Ok(Value::map())
}

fn timestamp(millis: i64) -> Value {
    Value::Timestamp(millis)
}

/// A stack as DescribeStacks shows it.
fn describe(s: &Stack) -> Value {
    let m = &s.meta;
    let outputs: Vec<Value> = m
        .outputs
        .iter()
        .map(|o| {
            Value::map()
                .with("OutputKey", o.key.as_str())
                .with("OutputValue", o.value.as_str())
                .with_opt("Description", o.description.as_deref())
                .with_opt("ExportName", o.export.as_deref())
        })
        .collect();
    let tags: Vec<Value> = m
        .tags
        .iter()
        .map(|(k, v)| {
            Value::map()
                .with("Key", k.as_str())
                .with("Value", v.as_str())
        })
        .collect();
    Value::map()
        .with("StackId", s.id.as_str())
        .with("StackName", s.name.as_str())
        .with_opt("AliasName", m.alias.as_deref())
        .with_opt("ChangeSetId", m.change_set_id.as_deref())
        .with_opt("Description", m.description.as_deref())
        .with(
            "Parameters",
            Value::List(m.parameters.iter().map(ParameterValue::describe).collect()),
        )
        .with("CreationTime", timestamp(s.created))
        .with_opt("LastUpdatedTime", s.updated.map(timestamp))
        .with_opt("DeletionTime", s.deleted.map(timestamp))
        .with("StackStatus", s.status.as_str())
        .with_opt("StackStatusReason", s.reason.as_deref())
        .with("DisableRollback", m.disable_rollback)
        .with(
            "NotificationARNs",
            Value::List(
                m.notification_arns
                    .iter()
                    .map(|a| Value::from(a.as_str()))
                    .collect(),
            ),
        )
        .with_opt("TimeoutInMinutes", m.timeout)
        .with_opt(
            "RollbackConfiguration",
            m.rollback.as_ref().map(watchdog::describe),
        )
        .with(
            "Capabilities",
            Value::List(
                m.capabilities
                    .iter()
                    .map(|c| Value::from(c.as_str()))
                    .collect(),
            ),
        )
        .with("Outputs", Value::List(outputs))
        .with_opt("RoleARN", m.role_arn.as_deref())
        .with("Tags", Value::List(tags))
        .with("EnableTerminationProtection", m.termination_protection)
        .with(
            "DriftInformation",
            Value::map().with("StackDriftStatus", "NOT_CHECKED"),
        )
}

pub(crate) fn describe_stacks(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let stacks = match input.str("StackName") {
        Some(name) => vec![named(inner, ctx, name)?],
        None => store::all_stacks(inner.store()?, ctx, false)?,
    };
    let items = stacks.iter().map(describe).collect();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("Stacks", Value::List(page))
        .with_opt("NextToken", next))
}

pub(crate) fn list_stacks(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let filter = input.strings("StackStatusFilter");
    let items = store::all_stacks(inner.store()?, ctx, true)?
        .into_iter()
        .filter(|s| filter.is_empty() || filter.contains(&s.status))
        .map(|s| {
            Value::map()
                .with("StackId", s.id.as_str())
                .with("StackName", s.name.as_str())
                .with_opt("TemplateDescription", s.meta.description.as_deref())
                .with("CreationTime", timestamp(s.created))
                .with_opt("LastUpdatedTime", s.updated.map(timestamp))
                .with_opt("DeletionTime", s.deleted.map(timestamp))
                .with("StackStatus", s.status.as_str())
                .with_opt("StackStatusReason", s.reason.as_deref())
                .with(
                    "DriftInformation",
                    Value::map().with("StackDriftStatus", "NOT_CHECKED"),
                )
        })
        .collect();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("StackSummaries", Value::List(page))
        .with_opt("NextToken", next))
}

pub(crate) fn describe_stack_events(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let items = store::events(inner.store()?, &stack.id)?
        .into_iter()
        .map(|e| {
            Value::map()
                .with("StackId", stack.id.as_str())
                .with("EventId", e.event_id)
                .with("StackName", stack.name.as_str())
                .with("LogicalResourceId", e.logical_id)
                .with_opt("PhysicalResourceId", e.physical_id)
                .with("ResourceType", e.kind)
                .with("Timestamp", timestamp(e.at))
                .with("ResourceStatus", e.status)
                .with_opt("ResourceStatusReason", e.reason)
                .with_opt("ResourceProperties", e.props)
                .with_opt("ClientRequestToken", e.token)
        })
        .collect();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("StackEvents", Value::List(page))
        .with_opt("NextToken", next))
}

fn resource_value(
    stack: &Stack,
    r: &store::ResourceRow,
    time_member: &str,
    with_stack: bool,
) -> Value {
    let v = Value::map()
        .with("LogicalResourceId", r.logical_id.as_str())
        .with_opt("PhysicalResourceId", r.physical_id.as_deref())
        .with("ResourceType", r.kind.as_str())
        .with(time_member, timestamp(r.updated))
        .with("ResourceStatus", r.status.as_str())
        .with_opt("ResourceStatusReason", r.reason.as_deref())
        .with(
            "DriftInformation",
            Value::map().with("StackResourceDriftStatus", "NOT_CHECKED"),
        );
    if with_stack {
        v.with("StackName", stack.name.as_str())
            .with("StackId", stack.id.as_str())
    } else {
        v
    }
}

pub(crate) fn describe_stack_resources(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = match (input.str("StackName"), input.str("PhysicalResourceId")) {
        (Some(name), _) => named(inner, ctx, name)?,
        (None, Some(physical)) => store::all_stacks(inner.store()?, ctx, false)?
            .into_iter()
            .find(|s| {
                deploy::state_of(inner, &s.id)
                    .values()
                    .any(|r| r.physical_id.as_deref() == Some(physical))
            })
            .ok_or_else(|| validation(format!("Stack for {physical} does not exist")))?,
        (None, None) => {
            return Err(validation(
                "Either StackName or PhysicalResourceId must be specified.",
            ))
        }
    };
    let logical = input.str("LogicalResourceId");
    let items = store::resources(inner.store()?, &stack.id)?
        .iter()
        .filter(|r| logical.is_none_or(|l| l == r.logical_id))
        .map(|r| resource_value(&stack, r, "Timestamp", true))
        .collect();
    Ok(Value::map().with("StackResources", Value::List(items)))
}

pub(crate) fn describe_stack_resource(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let logical = input.str("LogicalResourceId").unwrap_or_default();
    let row = store::resource(inner.store()?, &stack, logical)?;
    let detail = resource_value(&stack, &row, "LastUpdatedTimestamp", true).with("Metadata", "{}");
    Ok(Value::map().with("StackResourceDetail", detail))
}

pub(crate) fn list_stack_resources(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let items = store::resources(inner.store()?, &stack.id)?
        .iter()
        .map(|r| resource_value(&stack, r, "LastUpdatedTimestamp", false))
        .collect();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("StackResourceSummaries", Value::List(page))
        .with_opt("NextToken", next))
}

pub(crate) fn list_exports(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let items = store::exports(inner.store()?, &ctx.account, &ctx.region)?
        .into_iter()
        .map(|(name, value, stack)| {
            Value::map()
                .with("ExportingStackId", stack)
                .with("Name", name)
                .with("Value", value)
        })
        .collect();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("Exports", Value::List(page))
        .with_opt("NextToken", next))
}

pub(crate) fn list_imports(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let export = input.str("ExportName").unwrap_or_default();
    let importers: Vec<Value> = store::all_stacks(inner.store()?, ctx, false)?
        .into_iter()
        .filter(|s| s.body.contains("ImportValue") && s.body.contains(export))
        .map(|s| Value::from(s.name.as_str()))
        .collect();
    if importers.is_empty() {
        return Err(validation(format!(
            "Export '{export}' is not imported by any stack."
        )));
    }
    Ok(Value::map().with("Imports", Value::List(importers)))
}

pub(crate) fn get_template(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let name = input.str("StackName").unwrap_or_default();
    let body = match input.str("ChangeSetName") {
        Some(cs) => super::changesets::find(inner, ctx, cs, Some(name))?.body,
        None => {
            let stack = named(inner, ctx, name)?;
            if input.str("TemplateStage") == Some("Processed") {
                stack.meta.processed.to_string()
            } else {
                stack.body
            }
        }
    };
    let stages = Value::List(vec![Value::from("Original"), Value::from("Processed")]);
    Ok(Value::map()
        .with("TemplateBody", body)
        .with("StagesAvailable", stages))
}

pub(crate) async fn validate_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let body = template_text(inner, ctx, input).await?;
    let doc = prepare(&body)?;
    let (capabilities, reason) = template::capabilities(&doc);
    let transforms: Vec<Value> = template::transforms(&doc)
        .into_iter()
        .map(Value::from)
        .collect();
    Ok(Value::map()
        .with(
            "Parameters",
            Value::List(template::template_parameters(&doc)),
        )
        .with_opt("Description", doc["Description"].as_str())
        .with(
            "Capabilities",
            Value::List(capabilities.into_iter().map(Value::from).collect()),
        )
        .with_opt("CapabilitiesReason", reason)
        .with("DeclaredTransforms", Value::List(transforms)))
}

pub(crate) async fn get_template_summary(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let body = match input.str("StackName") {
        Some(name) => named(inner, ctx, name)?.body,
        None => template_text(inner, ctx, input).await?,
    };
    let doc = prepare(&body)?;
    let (capabilities, reason) = template::capabilities(&doc);
    let transforms: Vec<Value> = template::transforms(&doc)
        .into_iter()
        .map(Value::from)
        .collect();
    let metadata = doc.get("Metadata").map(Json::to_string);
    Ok(Value::map()
        .with(
            "Parameters",
            Value::List(template::parameter_declarations(&doc)),
        )
        .with_opt("Description", doc["Description"].as_str())
        .with(
            "Capabilities",
            Value::List(capabilities.into_iter().map(Value::from).collect()),
        )
        .with_opt("CapabilitiesReason", reason)
        .with("ResourceTypes", Value::List(template::resource_types(&doc)))
        .with(
            "Version",
            doc["AWSTemplateFormatVersion"]
                .as_str()
                .unwrap_or("2010-09-09"),
        )
        .with_opt("Metadata", metadata)
        .with("DeclaredTransforms", Value::List(transforms)))
}

pub(crate) fn update_termination_protection(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let mut stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    stack.meta.termination_protection = input.bool("EnableTerminationProtection").unwrap_or(false);
    store::put_stack(inner.store()?, &stack)?;
    Ok(Value::map().with("StackId", stack.id))
}

/// The stack policy a request gives as `<prefix>Body` or `<prefix>URL` (read from S3),
/// checked; `None` when it gives neither.
async fn stack_policy(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
    prefix: &str,
) -> AwsResult<Option<String>> {
    let (body_member, url_member) = (format!("{prefix}Body"), format!("{prefix}URL"));
    let text = match (input.str(&body_member), input.str(&url_member)) {
        (Some(_), Some(_)) => {
            return Err(validation(format!(
                "You cannot specify both {url_member} and {body_member}"
            )))
        }
        (Some(body), None) => body.to_string(),
        (None, Some(url)) => String::from_utf8(fetch(inner, ctx, url, &url_member).await?)
            .map_err(|_| validation("Error validating stack policy: Invalid stack policy"))?,
        (None, None) => return Ok(None),
    };
    StackPolicy::parse(&text)?;
    Ok(Some(text))
}

pub(crate) async fn set_stack_policy(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let mut stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let policy = stack_policy(inner, ctx, input, "StackPolicy")
        .await?
        .ok_or_else(|| validation("Either StackPolicyBody or StackPolicyURL must be specified."))?;
    stack.meta.policy = Some(policy);
    store::put_stack(inner.store()?, &stack)?;
    Ok(Value::map())
}

pub(crate) fn get_stack_policy(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    Ok(Value::map().with_opt("StackPolicyBody", stack.meta.policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_urls_name_their_bucket_and_key() {
        let cases = [
            ("https://b.s3.amazonaws.com/k/t.json", ("b", "k/t.json")),
            (
                "https://b.s3.us-west-2.amazonaws.com/t.yaml",
                ("b", "t.yaml"),
            ),
            (
                "https://s3.amazonaws.com/b/dir/t%20x.json",
                ("b", "dir/t x.json"),
            ),
            (
                "http://127.0.0.1:4566/b/t.json?versionId=1",
                ("b", "t.json"),
            ),
        ];
        for (url, (bucket, key)) in cases {
            assert_eq!(
                s3_location(url),
                Some((bucket.to_string(), key.to_string())),
                "{url}"
            );
        }
        assert_eq!(s3_location("ftp://x/y"), None);
        assert_eq!(s3_location("https://s3.amazonaws.com/onlybucket"), None);
    }
}
