//! Tags on state machines and activities (TagResource, UntagResource,
//! ListTagsForResource), one row per tag in `sfn_tags`.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::arn::{self, Target};
use super::StepFunctions;

/// The most tags a resource may carry.
const MAX_TAGS: usize = 50;

impl StepFunctions {
    /// Adds (or overwrites) the `[{key, value}]` tags of a request on a resource.
    pub(super) fn set_tags(&self, resource: &str, tags: Option<&Value>) -> AwsResult<()> {
        let tags = tags.and_then(Value::as_list).unwrap_or_default();
        if tags.is_empty() {
            return Ok(());
        }
        self.env.store.transaction(|tx| {
            for tag in tags {
                tx.execute_cached(
                    "INSERT OR REPLACE INTO sfn_tags (arn, key, value) VALUES (?1, ?2, ?3)",
                    params![
                        resource,
                        tag.str("key").unwrap_or_default(),
                        tag.str("value").unwrap_or_default()
                    ],
                )?;
            }
            let count: usize = tx.query_row_cached(
                "SELECT COUNT(*) FROM sfn_tags WHERE arn = ?1",
                [resource],
                |r| r.get(0),
            )?;
            if count > MAX_TAGS {
                return Err(AwsError::new(
                    "TooManyTags",
                    format!("Too many tags: a resource can have at most {MAX_TAGS} tags"),
                )
                .with_field("resourceName", resource));
            }
            Ok(())
        })
    }

    /// The resource a tagging call names, or ResourceNotFound.
    fn tagged_resource(&self, ctx: &Context, input: &Value) -> AwsResult<String> {
        let resource = input.str("resourceArn").unwrap_or_default();
        let parsed = arn::parse(resource)?;
        let exists = arn::in_scope(&parsed, ctx)
            && match parsed.target {
                Target::Machine(_) => self.machine(resource)?.is_some(),
                Target::Activity(_) => self.activity_exists(resource)?,
                other => return Err(arn::wrong_kind(other.kind())),
            };
        if !exists {
            return Err(AwsError::new(
                "ResourceNotFound",
                format!("Resource not found: '{resource}'"),
            )
            .with_field("resourceName", resource));
        }
        Ok(resource.to_string())
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = self.tagged_resource(ctx, input)?;
        self.set_tags(&resource, input.get("tags"))?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = self.tagged_resource(ctx, input)?;
        let keys = input
            .get("tagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default();
        self.env.store.transaction(|tx| {
            for key in keys.iter().filter_map(Value::as_str) {
                tx.execute_cached(
                    "DELETE FROM sfn_tags WHERE arn = ?1 AND key = ?2",
                    params![resource, key],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_for_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = self.tagged_resource(ctx, input)?;
        let tags: Vec<Value> = self.env.store.with(|c| {
            let mut stmt =
                c.prepare_cached("SELECT key, value FROM sfn_tags WHERE arn = ?1 ORDER BY key")?;
            let rows = stmt.query_map([&resource], |r| {
                Ok(Value::map()
                    .with("key", r.get::<_, String>(0)?)
                    .with("value", r.get::<_, String>(1)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("tags", tags))
    }
}
