//! Schedule groups: Create/Get/List/DeleteScheduleGroup, and the tags AWS keeps on them
//! (TagResource, UntagResource, ListTagsForResource name a group's ARN; schedules carry no
//! tags).
//!
//! The `default` group of every account and region exists without a row and cannot be
//! created or deleted. Deleting a group deletes its schedules with it; AWS shows such a
//! group as `DELETING` until its schedules are gone, and here they are gone before the call
//! answers, as Roto's other status transitions complete at once.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::{check_name, conflict, group_arn, invalid, not_found, Inner, DEFAULT_GROUP};
use crate::paging;
use crate::tags::{self, Tags};

/// The most tags a group may carry.
const MAX_TAGS: usize = 200;

/// A group as stored (`default` has no row, so no dates).
struct Group {
    name: String,
    created: Option<i64>,
    modified: Option<i64>,
    tags: Tags,
}

/// The error for a group that does not exist.
pub(super) fn no_group(name: &str) -> roto_core::AwsError {
    not_found(format!("Schedule group {name} does not exist."))
}

fn refuse_default(name: &str) -> AwsResult<()> {
    if name == DEFAULT_GROUP {
        return Err(invalid(format!(
            "This operation cannot be performed on schedule group {name}."
        )));
    }
    Ok(())
}

impl Group {
    fn describe(&self, ctx: &Context) -> Value {
        Value::map()
            .with("Arn", group_arn(&ctx.account, &ctx.region, &self.name))
            .with("Name", self.name.as_str())
            .with("State", "ACTIVE")
            .with_opt("CreationDate", self.created.map(Value::Timestamp))
            .with_opt("LastModificationDate", self.modified.map(Value::Timestamp))
    }
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Group> {
    let text: String = r.get(3)?;
    Ok(Group {
        name: r.get(0)?,
        created: Some(r.get(1)?),
        modified: Some(r.get(2)?),
        tags: tags::from_stored(&text),
    })
}

impl Inner {
    /// The group `name`, if it exists.
    fn find_group(&self, ctx: &Context, name: &str) -> AwsResult<Option<Group>> {
        if name == DEFAULT_GROUP {
            return Ok(Some(Group {
                name: name.to_string(),
                created: None,
                modified: None,
                tags: Tags::new(),
            }));
        }
        self.read(|c| {
            c.prepare_cached(
                "SELECT name, created, modified, tags FROM scheduler_groups
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, name], from_row)
            .optional()
        })
    }

    /// Whether the group `name` exists.
    pub(super) fn group_exists(&self, ctx: &Context, name: &str) -> AwsResult<bool> {
        Ok(self.find_group(ctx, name)?.is_some())
    }

    pub(super) fn create_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name, "name")?;
        refuse_default(name)?;
        let tags = tags::from_input(input, "Tags");
        if self.find_group(ctx, name)?.is_some() {
            return Err(conflict(format!("Schedule group {name} already exists.")));
        }
        let now = now_millis();
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT INTO scheduler_groups (account, region, name, created, modified, tags)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![ctx.account, ctx.region, name, now, tags::store_text(&tags)],
            )
        })?;
        Ok(Value::map().with(
            "ScheduleGroupArn",
            group_arn(&ctx.account, &ctx.region, name),
        ))
    }

    pub(super) fn get_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name, "name")?;
        let group = self.find_group(ctx, name)?.ok_or_else(|| no_group(name))?;
        Ok(group.describe(ctx))
    }

    pub(super) fn list_groups(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        check_name_prefix(input)?;
        let mut groups: Vec<Group> = self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, created, modified, tags FROM scheduler_groups
                 WHERE account = ?1 AND region = ?2 ORDER BY name",
            )?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        if let Some(default) = self.find_group(ctx, DEFAULT_GROUP)? {
            groups.push(default);
        }
        groups.sort_by(|a, b| a.name.cmp(&b.name));
        let items: Vec<Value> = groups
            .iter()
            .filter(|g| g.name.starts_with(prefix))
            .map(|g| g.describe(ctx))
            .collect();
        let (page, next) = page(items, input)?;
        Ok(Value::map()
            .with("ScheduleGroups", Value::List(page))
            .with_opt("NextToken", next))
    }

    pub(super) fn delete_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name, "name")?;
        refuse_default(name)?;
        if self.find_group(ctx, name)?.is_none() {
            return Err(no_group(name));
        }
        self.store()?.transaction(|c| {
            let key = rusqlite::params![ctx.account, ctx.region, name];
            c.execute_cached(
                "DELETE FROM scheduler_schedules WHERE account = ?1 AND region = ?2 AND grp = ?3",
                key,
            )?;
            c.execute_cached(
                "DELETE FROM scheduler_groups WHERE account = ?1 AND region = ?2 AND name = ?3",
                key,
            )
        })?;
        self.clock.wake();
        Ok(Value::map())
    }

    /// The group a tagging call's ARN names (only groups carry tags).
    fn tagged_group(&self, ctx: &Context, input: &Value) -> AwsResult<Group> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let prefix = group_arn(&ctx.account, &ctx.region, "");
        let name = arn
            .strip_prefix(&prefix)
            .filter(|n| !n.is_empty() && !n.contains('/'))
            .ok_or_else(|| invalid(format!("Invalid ARN: {arn}")))?;
        self.find_group(ctx, name)?.ok_or_else(|| no_group(name))
    }

    fn save_tags(&self, ctx: &Context, group: &Group) -> AwsResult<Value> {
        refuse_default(&group.name)?;
        if group.tags.len() > MAX_TAGS {
            return Err(invalid(format!(
                "A resource can have at most {MAX_TAGS} tags."
            )));
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE scheduler_groups SET tags = ?4
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    group.name,
                    tags::store_text(&group.tags)
                ],
            )
        })?;
        Ok(Value::map())
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut group = self.tagged_group(ctx, input)?;
        group.tags.extend(tags::from_input(input, "Tags"));
        self.save_tags(ctx, &group)
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut group = self.tagged_group(ctx, input)?;
        tags::remove(&mut group.tags, input, "TagKeys");
        self.save_tags(ctx, &group)
    }

    pub(super) fn list_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = self.tagged_group(ctx, input)?;
        Ok(Value::map().with("Tags", tags::to_list(&group.tags)))
    }
}

/// Checks a list call's `NamePrefix` against the model's pattern.
pub(super) fn check_name_prefix(input: &Value) -> AwsResult<()> {
    match input.str("NamePrefix") {
        Some(p) => check_name(p, "namePrefix"),
        None => Ok(()),
    }
}

/// One page of a list call's items, by its `MaxResults` and `NextToken`.
pub(super) fn page(items: Vec<Value>, input: &Value) -> AwsResult<(Vec<Value>, Option<String>)> {
    let limit = input.int("MaxResults").unwrap_or(100).clamp(1, 100) as usize;
    paging::page(items, limit, input.str("NextToken"), || {
        invalid("The NextToken provided is invalid.")
    })
}
