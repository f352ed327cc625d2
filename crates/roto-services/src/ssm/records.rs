//! The resources SSM keeps whole (documents, maintenance windows with their targets and
//! tasks, patch baselines, OpsItems, ...): one document each in `ssm_items` (see
//! [`crate::documents`]), written as a shaped value and read back by the model's shape the
//! operation answers with, and the paging their Describe and List operations share.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::Ssm;
use crate::documents::Scope;
use crate::paging::page;

/// Where a record lives: its kind and its owner's id (empty for the account's own).
#[derive(Clone, Copy)]
pub(super) struct Kind<'a> {
    pub(super) kind: &'a str,
    pub(super) parent: &'a str,
}

impl<'a> Kind<'a> {
    /// Records of `kind` that belong to the account.
    pub(super) const fn top(kind: &'a str) -> Kind<'a> {
        Kind { kind, parent: "" }
    }

    /// Records of `kind` that belong to `parent`.
    pub(super) const fn under(kind: &'a str, parent: &'a str) -> Kind<'a> {
        Kind { kind, parent }
    }
}

fn scope<'a>(ctx: &'a Context, kind: Kind<'a>) -> Scope<'a> {
    Scope::of(ctx, kind.kind, kind.parent)
}

/// The caller, as SSM records who created or last changed a resource.
pub(super) fn caller(ctx: &Context) -> String {
    format!("arn:aws:iam::{}:root", ctx.account)
}

/// The strings of the list `member` of `value` (a filter's `Values`, a request's ids).
pub(super) fn strings<'a>(value: &'a Value, member: &str) -> Vec<&'a str> {
    value
        .get(member)
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// The map `member` of `record` with the input's `updates` entries set and the keys its
/// `deletes` lists removed (OpsItems' operational data, OpsMetadata's metadata).
pub(super) fn patched_map(
    record: &Value,
    member: &str,
    input: &Value,
    updates: &str,
    deletes: &str,
) -> Value {
    let mut map = record.get(member).cloned().unwrap_or_else(Value::map);
    for (key, value) in input
        .get(updates)
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
    {
        map.insert(key.as_str(), value.clone());
    }
    for key in strings(input, deletes) {
        map.remove(key);
    }
    map
}

/// SSM's `InvalidNextToken`.
pub(super) fn invalid_next_token() -> AwsError {
    AwsError::new("InvalidNextToken", "The specified token is not valid.")
}

impl Ssm {
    /// The record `id`, every member kept, if any.
    pub(super) fn record(
        &self,
        ctx: &Context,
        kind: Kind<'_>,
        id: &str,
    ) -> AwsResult<Option<Value>> {
        self.docs.value(scope(ctx, kind), id)
    }

    /// The record `id` read as the model's `shape`, if any.
    pub(super) fn record_as(
        &self,
        ctx: &Context,
        kind: Kind<'_>,
        id: &str,
        shape: &str,
    ) -> AwsResult<Option<Value>> {
        self.docs
            .value_as(super::SPEC.model(), scope(ctx, kind), id, shape)
    }

    /// Writes the record `id`.
    pub(super) fn save(
        &self,
        ctx: &Context,
        kind: Kind<'_>,
        id: &str,
        value: &Value,
    ) -> AwsResult<()> {
        self.docs.put_value(scope(ctx, kind), id, value)
    }

    /// Removes the record `id`; whether there was one.
    pub(super) fn forget(&self, ctx: &Context, kind: Kind<'_>, id: &str) -> AwsResult<bool> {
        self.docs.delete(scope(ctx, kind), id)
    }

    /// Removes every record that belongs to `parent`.
    pub(super) fn forget_children(&self, ctx: &Context, parent: &str) -> AwsResult<()> {
        self.docs.delete_children(&ctx.account, &ctx.region, parent)
    }

    /// Every record of `kind`, in creation order, read as `shape`.
    pub(super) fn records_as(
        &self,
        ctx: &Context,
        kind: Kind<'_>,
        shape: &str,
    ) -> AwsResult<Vec<Value>> {
        self.docs
            .values_as(super::SPEC.model(), scope(ctx, kind), shape)
    }
}

/// A Describe or List output: one page of `items` as `member`, after the input's
/// `NextToken`, at most its `MaxResults` (else `default_limit`), with the next token.
pub(super) fn paged(
    input: &Value,
    items: Vec<Value>,
    member: &str,
    default_limit: usize,
) -> AwsResult<Value> {
    let limit = input
        .int("MaxResults")
        .map_or(default_limit, |n| n.max(1) as usize);
    let (items, next) = page(items, limit, input.str("NextToken"), invalid_next_token)?;
    Ok(Value::map().with(member, items).with_opt("NextToken", next))
}

/// The record kind behind each taggable resource type other than `Parameter`.
fn tagged_kind(resource_type: &str) -> Option<&'static str> {
    match resource_type {
        "MaintenanceWindow" => Some("window"),
        "PatchBaseline" => Some("baseline"),
        "Document" => Some("document"),
        "OpsItem" => Some("opsitem"),
        _ => None,
    }
}

/// A tag list as `(key, value)` pairs.
pub(super) type Tags = Vec<(String, String)>;

impl Ssm {
    /// The tags of the resource `id` of `resource_type`: `None` when the type is not one
    /// records hold, `Some(None)` when the resource does not exist.
    pub(super) fn record_tags(
        &self,
        ctx: &Context,
        resource_type: &str,
        id: &str,
    ) -> AwsResult<Option<Option<Tags>>> {
        let Some(kind) = tagged_kind(resource_type) else {
            return Ok(None);
        };
        if self.record(ctx, Kind::top(kind), id)?.is_none() {
            return Ok(Some(None));
        }
        let tags = self
            .record(ctx, Kind::under("tags", resource_type), id)?
            .map(|doc| super::queries::tag_pairs(&doc))
            .unwrap_or_default();
        Ok(Some(Some(tags)))
    }

    /// Writes the tags of the resource `id` of `resource_type`.
    pub(super) fn set_record_tags(
        &self,
        ctx: &Context,
        resource_type: &str,
        id: &str,
        tags: &[(String, String)],
    ) -> AwsResult<()> {
        let list: Vec<Value> = tags
            .iter()
            .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
            .collect();
        self.save(
            ctx,
            Kind::under("tags", resource_type),
            id,
            &Value::map().with("Tags", list),
        )
    }

    /// Keeps the `Tags` a Create request carries for the new resource `id`.
    pub(super) fn store_tags(
        &self,
        ctx: &Context,
        resource_type: &str,
        id: &str,
        input: &Value,
    ) -> AwsResult<()> {
        let tags = super::queries::tag_pairs(input);
        if tags.is_empty() {
            return Ok(());
        }
        self.set_record_tags(ctx, resource_type, id, &tags)
    }

    /// Forgets the tags of a deleted resource.
    pub(super) fn drop_tags(&self, ctx: &Context, resource_type: &str, id: &str) -> AwsResult<()> {
        self.forget(ctx, Kind::under("tags", resource_type), id)
            .map(|_| ())
    }
}
