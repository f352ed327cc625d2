//! The IaC generator: resource scans and generated templates.
//!
//! A scan completes at once and finds the resources of the account's stacks in the region
//! (each managed by its stack, identified by its physical id): Roto reads no service's
//! resources outside CloudFormation, so resources no stack created are not found. A
//! generated template (kind `generated`) keeps the resources it was given and renders them
//! as a template whose resources are retained on deletion and carry their identifiers as
//! properties; the rest of each resource's properties would come from reading it, which
//! Roto's providers do not do.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::families::{page, scope};
use super::stacksets::now_seconds;
use super::{store, Inner, SPEC};
use crate::documents::{document, shaped};
use crate::ids;

const TEMPLATE: &str = "generated";
const SCAN: &str = "scan";
/// How many generated templates an account may keep, as AWS allows.
const MAX_TEMPLATES: usize = 50;
/// How many resources a generated template may hold.
const MAX_RESOURCES: usize = 500;

fn template_not_found(name: &str) -> AwsError {
    AwsError::new(
        "GeneratedTemplateNotFoundException",
        format!("Generated Template with name or ID {name} does not exist"),
    )
}

/// The generated template a request names, by name or by id.
fn load(inner: &Inner, ctx: &Context, named: &str) -> AwsResult<Json> {
    if let Some(doc) = inner.documents.get(scope(ctx, TEMPLATE), named)? {
        return Ok(doc);
    }
    inner
        .documents
        .list(scope(ctx, TEMPLATE))?
        .into_iter()
        .find(|t| t["GeneratedTemplateId"] == named)
        .ok_or_else(|| template_not_found(named))
}

/// A resource definition as the template keeps it.
fn detail(definition: &Json) -> Json {
    let mut detail = definition.clone();
    detail["ResourceStatus"] = "COMPLETE".into();
    detail["Warnings"] = json!([]);
    detail
}

fn with_resources(doc: &mut Json, added: &[Json]) -> AwsResult<()> {
    let resources = doc["Resources"].as_array_mut().expect("stored as a list");
    resources.extend(added.iter().map(detail));
    if resources.len() > MAX_RESOURCES {
        return Err(AwsError::new(
            "LimitExceededException",
            format!("A generated template holds at most {MAX_RESOURCES} resources"),
        ));
    }
    Ok(())
}

pub(crate) fn create_generated_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = input.str("GeneratedTemplateName").unwrap_or_default();
    let existing = inner.documents.list(scope(ctx, TEMPLATE))?;
    if existing.iter().any(|t| t["GeneratedTemplateName"] == name) {
        return Err(AwsError::new(
            "AlreadyExistsException",
            format!("Generated template {name} already exists"),
        ));
    }
    if existing.len() >= MAX_TEMPLATES {
        return Err(AwsError::new(
            "LimitExceededException",
            format!("An account keeps at most {MAX_TEMPLATES} generated templates"),
        ));
    }
    let given = document(input);
    let stack_id = match input.str("StackName") {
        Some(stack) => Some(super::stacks::named(inner, ctx, stack)?.id),
        None => None,
    };
    let id = format!(
        "arn:aws:cloudformation:{}:{}:generatedtemplate/{}",
        ctx.region,
        ctx.account,
        ids::uuid()
    );
    let mut doc = json!({
        "GeneratedTemplateId": id,
        "GeneratedTemplateName": name,
        "Resources": [],
        "Status": "COMPLETE",
        "StatusReason": "All resources complete",
        "CreationTime": now_seconds(),
        "LastUpdatedTime": now_seconds(),
        "StackId": stack_id,
        "TemplateConfiguration": given.get("TemplateConfiguration").cloned()
            .unwrap_or(json!({"DeletionPolicy": "RETAIN", "UpdateReplacePolicy": "RETAIN"})),
        "TotalWarnings": 0,
    });
    let added = given["Resources"].as_array().cloned().unwrap_or_default();
    with_resources(&mut doc, &added)?;
    inner.documents.put(scope(ctx, TEMPLATE), name, &doc)?;
    Ok(Value::map().with("GeneratedTemplateId", id))
}

pub(crate) fn describe_generated_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let mut doc = load(
        inner,
        ctx,
        input.str("GeneratedTemplateName").unwrap_or_default(),
    )?;
    let count = doc["Resources"].as_array().map_or(0, Vec::len);
    doc["Progress"] = json!({
        "ResourcesSucceeded": count,
        "ResourcesFailed": 0,
        "ResourcesProcessing": 0,
        "ResourcesPending": 0,
    });
    shaped(SPEC.model(), "DescribeGeneratedTemplateOutput", &doc)
}

pub(crate) fn list_generated_templates(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let summaries = inner
        .documents
        .list(scope(ctx, TEMPLATE))?
        .into_iter()
        .map(|mut t| {
            t["NumberOfResources"] = t["Resources"].as_array().map_or(0, Vec::len).into();
            shaped(SPEC.model(), "TemplateSummary", &t)
        })
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "Summaries")
}

pub(crate) fn update_generated_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let named = input.str("GeneratedTemplateName").unwrap_or_default();
    let mut doc = load(inner, ctx, named)?;
    let old_name = doc["GeneratedTemplateName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let given = document(input);
    if let Some(removed) = given["RemoveResources"].as_array() {
        if let Some(resources) = doc["Resources"].as_array_mut() {
            resources.retain(|r| !removed.contains(&r["LogicalResourceId"]));
        }
    }
    let added = given["AddResources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    with_resources(&mut doc, &added)?;
    if let Some(configuration) = given.get("TemplateConfiguration") {
        doc["TemplateConfiguration"] = configuration.clone();
    }
    doc["LastUpdatedTime"] = now_seconds();
    let name = match input.str("NewGeneratedTemplateName") {
        Some(new) if new != old_name => {
            if inner.documents.get(scope(ctx, TEMPLATE), new)?.is_some() {
                return Err(AwsError::new(
                    "AlreadyExistsException",
                    format!("Generated template {new} already exists"),
                ));
            }
            inner.documents.delete(scope(ctx, TEMPLATE), &old_name)?;
            doc["GeneratedTemplateName"] = new.into();
            new.to_string()
        }
        _ => old_name,
    };
    inner.documents.put(scope(ctx, TEMPLATE), &name, &doc)?;
    let id = doc["GeneratedTemplateId"].as_str().unwrap_or_default();
    Ok(Value::map().with("GeneratedTemplateId", id))
}

pub(crate) fn delete_generated_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let doc = load(
        inner,
        ctx,
        input.str("GeneratedTemplateName").unwrap_or_default(),
    )?;
    let name = doc["GeneratedTemplateName"].as_str().unwrap_or_default();
    inner.documents.delete(scope(ctx, TEMPLATE), name)?;
    Ok(Value::map())
}

/// `GetGeneratedTemplate`: the template, as JSON (which is also YAML, so both formats
/// read it).
pub(crate) fn get_generated_template(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let doc = load(
        inner,
        ctx,
        input.str("GeneratedTemplateName").unwrap_or_default(),
    )?;
    let policy = |member: &str| match doc["TemplateConfiguration"][member].as_str() {
        Some("DELETE") => "Delete",
        _ => "Retain",
    };
    let mut resources = Map::new();
    for (n, r) in doc["Resources"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let logical = r["LogicalResourceId"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "{}{n}",
                    r["ResourceType"]
                        .as_str()
                        .unwrap_or_default()
                        .replace("::", "")
                )
            });
        resources.insert(
            logical,
            json!({
                "Type": r["ResourceType"],
                "DeletionPolicy": policy("DeletionPolicy"),
                "UpdateReplacePolicy": policy("UpdateReplacePolicy"),
                "Properties": r["ResourceIdentifier"],
            }),
        );
    }
    let template = json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": resources,
    });
    let body = serde_json::to_string_pretty(&template).unwrap_or_default();
    Ok(Value::map()
        .with("Status", doc["Status"].as_str().unwrap_or("COMPLETE"))
        .with("TemplateBody", body))
}

fn scan_not_found(id: &str) -> AwsError {
    AwsError::new(
        "ResourceScanNotFoundException",
        format!("Resource scan {id} does not exist"),
    )
}

/// The resources of the account's stacks in the region, as a scan finds them.
fn scanned(inner: &Inner, ctx: &Context, types: &[String]) -> AwsResult<Vec<Json>> {
    let store = inner.store()?;
    let mut found = Vec::new();
    for stack in store::all_stacks(store, ctx, false)? {
        for r in store::resources(store, &stack.id)? {
            let wanted = types.is_empty()
                || types.iter().any(|t| match t.strip_suffix('*') {
                    Some(prefix) => r.kind.starts_with(prefix),
                    None => r.kind == *t,
                });
            if let (Some(physical), true) = (r.physical_id, wanted) {
                found.push(json!({
                    "ResourceType": r.kind,
                    "ResourceIdentifier": {"PhysicalResourceId": physical},
                    "ManagedByStack": true,
                }));
            }
        }
    }
    Ok(found)
}

pub(crate) fn start_resource_scan(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let given = document(input);
    let types: Vec<String> = given["ScanFilters"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["Types"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    let resources = scanned(inner, ctx, &types)?;
    let id = format!(
        "arn:aws:cloudformation:{}:{}:resourceScan/{}",
        ctx.region,
        ctx.account,
        ids::uuid()
    );
    let mut kinds: Vec<&str> = resources
        .iter()
        .filter_map(|r| r["ResourceType"].as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let doc = json!({
        "ResourceScanId": id,
        "Status": "COMPLETE",
        "StatusReason": "Scan complete",
        "StartTime": now_seconds(),
        "EndTime": now_seconds(),
        "PercentageCompleted": 100.0,
        "ResourceTypes": kinds,
        "ResourcesScanned": resources.len(),
        "ResourcesRead": resources.len(),
        "ScanType": if types.is_empty() { "FULL" } else { "PARTIAL" },
        "ScanFilters": given.get("ScanFilters"),
        "Found": resources,
    });
    inner.documents.put(scope(ctx, SCAN), &id, &doc)?;
    Ok(Value::map().with("ResourceScanId", id))
}

fn load_scan(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Json> {
    let id = input.str("ResourceScanId").unwrap_or_default();
    inner
        .documents
        .get(scope(ctx, SCAN), id)?
        .ok_or_else(|| scan_not_found(id))
}

pub(crate) fn describe_resource_scan(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    shaped(
        SPEC.model(),
        "DescribeResourceScanOutput",
        &load_scan(inner, ctx, input)?,
    )
}

pub(crate) fn list_resource_scans(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let wanted = input.str("ScanTypeFilter");
    let mut scans = inner.documents.list(scope(ctx, SCAN))?;
    scans.reverse();
    let summaries = scans
        .iter()
        .filter(|s| wanted.is_none_or(|w| s["ScanType"] == w))
        .map(|s| shaped(SPEC.model(), "ResourceScanSummary", s))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "ResourceScanSummaries")
}

pub(crate) fn list_resource_scan_resources(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let scan = load_scan(inner, ctx, input)?;
    let prefix = input.str("ResourceTypePrefix").unwrap_or_default();
    let identifier = input.str("ResourceIdentifier");
    let resources = scan["Found"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            r["ResourceType"]
                .as_str()
                .unwrap_or_default()
                .starts_with(prefix)
        })
        .filter(|r| {
            identifier.is_none_or(|i| {
                r["ResourceIdentifier"]["PhysicalResourceId"]
                    .as_str()
                    .is_some_and(|p| p.contains(i))
            })
        })
        .map(|r| shaped(SPEC.model(), "ScannedResource", r))
        .collect::<AwsResult<Vec<_>>>()?;
    page(resources, input, "Resources")
}

/// `ListResourceScanRelatedResources`: a scan records no relationships between resources.
pub(crate) fn list_resource_scan_related_resources(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    load_scan(inner, ctx, input)?;
    Ok(Value::map().with("RelatedResources", Vec::<Value>::new()))
}
