//! OpsCenter's OpsItems and Application Manager's OpsMetadata, stored and answered as SSM
//! does: what Create and Update write, Get and Describe return.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::records::{caller, paged, patched_map, strings, Kind};
use super::windows::merge;
use super::Ssm;
use crate::ids;

const OPS_ITEM: Kind<'static> = Kind::top("opsitem");
const OPS_METADATA: Kind<'static> = Kind::top("opsmetadata");

/// The members an OpsItem keeps from CreateOpsItem and UpdateOpsItem.
const ITEM_MEMBERS: &[&str] = &[
    "Description",
    "OpsItemType",
    "OperationalData",
    "Notifications",
    "Priority",
    "RelatedOpsItems",
    "Status",
    "Title",
    "Source",
    "Category",
    "Severity",
    "ActualStartTime",
    "ActualEndTime",
    "PlannedStartTime",
    "PlannedEndTime",
];

pub(super) fn ops_item_missing(id: &str) -> AwsError {
    AwsError::new(
        "OpsItemNotFoundException",
        format!("OpsItem with id {id} does not exist."),
    )
}

pub(super) fn ops_metadata_missing(arn: &str) -> AwsError {
    AwsError::new(
        "OpsMetadataNotFoundException",
        format!("OpsMetadata object {arn} does not exist."),
    )
}

/// The OpsMetadata ARN of a resource id (`/aws/ssm/MyGroup/appmanager` and the like).
fn ops_metadata_arn(ctx: &Context, resource: &str) -> String {
    let sep = if resource.starts_with('/') { "" } else { "/" };
    format!(
        "arn:aws:ssm:{}:{}:opsmetadata{sep}{resource}",
        ctx.region, ctx.account
    )
}

/// The value an OpsItem shows a DescribeOpsItems filter key, for the keys it filters by.
fn item_field(item: &Value, key: &str) -> Option<String> {
    match key {
        "Status" | "CreatedBy" | "Source" | "Title" | "OpsItemId" | "Category" | "Severity"
        | "OpsItemType" => item.str(key).map(str::to_string),
        "Priority" => item.int(key).map(|p| p.to_string()),
        _ => None,
    }
}

/// Whether an OpsItem passes one `OpsItemFilter` (`Equal` and `Contains` on its fields).
fn item_keeps(item: &Value, filter: &Value) -> bool {
    let key = filter.str("Key").unwrap_or_default();
    let Some(actual) = item_field(item, key) else {
        return false;
    };
    let contains = filter.str("Operator") == Some("Contains");
    strings(filter, "Values").into_iter().any(|v| {
        if contains {
            actual.contains(v)
        } else {
            actual == v
        }
    })
}

impl Ssm {
    fn ops_item(&self, ctx: &Context, id: &str) -> AwsResult<Value> {
        self.record(ctx, OPS_ITEM, id)?
            .ok_or_else(|| ops_item_missing(id))
    }

    pub(super) fn create_ops_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = format!("oi-{}", ids::hex(12));
        let arn = format!("arn:aws:ssm:{}:{}:opsitem/{id}", ctx.region, ctx.account);
        let now = Value::Timestamp(now_millis());
        let mut item = Value::map()
            .with("OpsItemId", id.as_str())
            .with("OpsItemArn", arn.as_str())
            .with("Status", "Open")
            .with("Version", ids::uuid())
            .with("CreatedBy", caller(ctx))
            .with("LastModifiedBy", caller(ctx))
            .with("CreatedTime", now.clone())
            .with("LastModifiedTime", now);
        merge(&mut item, input, ITEM_MEMBERS, &[], false);
        self.save(ctx, OPS_ITEM, &id, &item)?;
        self.store_tags(ctx, "OpsItem", &id, input)?;
        Ok(Value::map().with("OpsItemId", id).with("OpsItemArn", arn))
    }

    pub(super) fn get_ops_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("OpsItemId").unwrap_or_default();
        let item = self
            .record_as(ctx, OPS_ITEM, id, "OpsItem")?
            .ok_or_else(|| ops_item_missing(id))?;
        Ok(Value::map().with("OpsItem", item))
    }

    pub(super) fn update_ops_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("OpsItemId").unwrap_or_default();
        let mut item = self.ops_item(ctx, id)?;
        let data = patched_map(
            &item,
            "OperationalData",
            input,
            "OperationalData",
            "OperationalDataToDelete",
        );
        merge(&mut item, input, ITEM_MEMBERS, &[], false);
        item.insert("OperationalData", data);
        item.insert("Version", ids::uuid());
        item.insert("LastModifiedBy", caller(ctx));
        item.insert("LastModifiedTime", Value::Timestamp(now_millis()));
        self.save(ctx, OPS_ITEM, id, &item)?;
        Ok(Value::map())
    }

    pub(super) fn delete_ops_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("OpsItemId").unwrap_or_default();
        self.forget(ctx, OPS_ITEM, id)?;
        self.drop_tags(ctx, "OpsItem", id)?;
        Ok(Value::map())
    }

    pub(super) fn describe_ops_items(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let filters = input
            .get("OpsItemFilters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let items: Vec<Value> = self
            .records_as(ctx, OPS_ITEM, "OpsItemSummary")?
            .into_iter()
            .filter(|item| filters.iter().all(|f| item_keeps(item, f)))
            .collect();
        paged(input, items, "OpsItemSummaries", 50)
    }

    pub(super) fn create_ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = input.str("ResourceId").unwrap_or_default();
        let arn = ops_metadata_arn(ctx, resource);
        if self.record(ctx, OPS_METADATA, &arn)?.is_some() {
            return Err(AwsError::new(
                "OpsMetadataAlreadyExistsException",
                format!("OpsMetadata object {arn} already exists."),
            ));
        }
        let now = Value::Timestamp(now_millis());
        let metadata = Value::map()
            .with("ResourceId", resource)
            .with("OpsMetadataArn", arn.as_str())
            .with(
                "Metadata",
                input.get("Metadata").cloned().unwrap_or_else(Value::map),
            )
            .with("CreationDate", now.clone())
            .with("LastModifiedDate", now)
            .with("LastModifiedUser", caller(ctx));
        self.save(ctx, OPS_METADATA, &arn, &metadata)?;
        Ok(Value::map().with("OpsMetadataArn", arn))
    }

    fn ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Value)> {
        let arn = input.str("OpsMetadataArn").unwrap_or_default();
        let metadata = self
            .record(ctx, OPS_METADATA, arn)?
            .ok_or_else(|| ops_metadata_missing(arn))?;
        Ok((arn.to_string(), metadata))
    }

    pub(super) fn get_ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, metadata) = self.ops_metadata(ctx, input)?;
        Ok(Value::map()
            .with_opt("ResourceId", metadata.str("ResourceId"))
            .with(
                "Metadata",
                metadata.get("Metadata").cloned().unwrap_or_else(Value::map),
            ))
    }

    pub(super) fn update_ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, mut metadata) = self.ops_metadata(ctx, input)?;
        let entries = patched_map(
            &metadata,
            "Metadata",
            input,
            "MetadataToUpdate",
            "KeysToDelete",
        );
        metadata.insert("Metadata", entries);
        metadata.insert("LastModifiedDate", Value::Timestamp(now_millis()));
        metadata.insert("LastModifiedUser", caller(ctx));
        self.save(ctx, OPS_METADATA, &arn, &metadata)?;
        Ok(Value::map().with("OpsMetadataArn", arn))
    }

    pub(super) fn delete_ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, _) = self.ops_metadata(ctx, input)?;
        self.forget(ctx, OPS_METADATA, &arn)?;
        Ok(Value::map())
    }

    pub(super) fn list_ops_metadata(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let list = self.records_as(ctx, OPS_METADATA, "OpsMetadata")?;
        paged(input, list, "OpsMetadataList", 50)
    }

    pub(super) fn associate_ops_item_related_item(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let item = input.str("OpsItemId").unwrap_or_default();
        self.ops_item(ctx, item)?;
        let kind = Kind::under("opsitem-related", item);
        let uri = input.str("ResourceUri");
        let existing = self.records_as(ctx, kind, "OpsItemRelatedItemSummary")?;
        if existing.iter().any(|r| r.str("ResourceUri") == uri) {
            return Err(AwsError::new(
                "OpsItemRelatedItemAlreadyExistsException",
                format!(
                    "The association between OpsItem {item} and resource {} already exists.",
                    uri.unwrap_or_default()
                ),
            )
            .with_field("ResourceUri", uri.unwrap_or_default())
            .with_field("OpsItemId", item));
        }
        let id = ids::uuid();
        let now = Value::Timestamp(now_millis());
        let identity = Value::map().with("Arn", caller(ctx));
        let mut related = Value::map()
            .with("OpsItemId", item)
            .with("AssociationId", id.as_str())
            .with("CreatedBy", identity.clone())
            .with("LastModifiedBy", identity)
            .with("CreatedTime", now.clone())
            .with("LastModifiedTime", now);
        merge(
            &mut related,
            input,
            &["AssociationType", "ResourceType", "ResourceUri"],
            &[],
            false,
        );
        self.save(ctx, kind, &id, &related)?;
        Ok(Value::map().with("AssociationId", id))
    }

    pub(super) fn disassociate_ops_item_related_item(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let item = input.str("OpsItemId").unwrap_or_default();
        self.ops_item(ctx, item)?;
        let id = input.str("AssociationId").unwrap_or_default();
        if !self.forget(ctx, Kind::under("opsitem-related", item), id)? {
            return Err(AwsError::new(
                "OpsItemRelatedItemAssociationNotFoundException",
                format!("The association {id} does not exist."),
            ));
        }
        Ok(Value::map())
    }

    pub(super) fn list_ops_item_related_items(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let item = input.str("OpsItemId").unwrap_or_default();
        let filters = input
            .get("Filters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let related: Vec<Value> = self
            .records_as(
                ctx,
                Kind::under("opsitem-related", item),
                "OpsItemRelatedItemSummary",
            )?
            .into_iter()
            .filter(|r| {
                filters.iter().all(|f| {
                    let actual = r.str(f.str("Key").unwrap_or_default());
                    strings(f, "Values").into_iter().any(|v| Some(v) == actual)
                })
            })
            .collect();
        paged(input, related, "Summaries", 50)
    }
}
