//! Log groups (with retention and tags) and log streams.

use std::collections::BTreeMap;

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{
    group_arn, group_of, invalid, like_prefix, name_of_arn, name_of_token, no_group, no_stream,
    token_of, Logs, DEFAULT_PAGE,
};

/// The retention periods PutRetentionPolicy accepts, in days.
const RETENTION_DAYS: &[i64] = &[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
];

/// One log group row.
pub(super) struct Group {
    pub name: String,
    pub created: i64,
    pub retention: Option<i64>,
    pub kms_key: Option<String>,
    pub class: String,
    pub deletion_protection: bool,
}

/// The columns [`Group::from_row`] reads.
const GROUP_COLUMNS: &str = "name, created, retention, kms_key, class, deletion_protection";

impl Group {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Group> {
        Ok(Group {
            name: r.get(0)?,
            created: r.get(1)?,
            retention: r.get(2)?,
            kms_key: r.get(3)?,
            class: r.get(4)?,
            deletion_protection: r.get(5)?,
        })
    }
}

/// The error for an operation the group's log class does not offer.
fn standard_class_only() -> AwsError {
    AwsError::new(
        "ValidationException",
        "This operation is only supported on the Standard log class.",
    )
    .with_status(400)
}

/// The error for deleting what deletion protection guards.
fn deletion_protected() -> AwsError {
    AwsError::new(
        "ValidationException",
        "Cannot delete log group with deletion protection enabled. Disable deletion protection first.",
    )
    .with_status(400)
}

/// Whether a name matches a ListLogGroups pattern: `|`-separated alternatives, each a
/// case-sensitive substring, or a prefix when it starts with `^`.
fn matches_list_pattern(pattern: &str, name: &str) -> bool {
    pattern.split('|').any(|alt| match alt.strip_prefix('^') {
        Some(prefix) => name.starts_with(prefix),
        None => name.contains(alt),
    })
}

fn tags_of(input: &Value, member: &str) -> BTreeMap<String, String> {
    input
        .get(member)
        .and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn tags_value(tags: &BTreeMap<String, String>) -> Value {
    Value::Map(
        tags.iter()
            .map(|(k, v)| (k.clone(), Value::from(v)))
            .collect(),
    )
}

impl Logs {
    /// The group `name`, if it exists.
    pub(super) fn group(&self, ctx: &Context, name: &str) -> AwsResult<Option<Group>> {
        self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT {GROUP_COLUMNS} FROM logs_groups
                 WHERE account = ?1 AND region = ?2 AND name = ?3"
            ))?
            .query_row(params![ctx.account, ctx.region, name], Group::from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The group `name`, or `ResourceNotFoundException`.
    pub(super) fn existing_group(&self, ctx: &Context, name: &str) -> AwsResult<Group> {
        self.group(ctx, name)?.ok_or_else(no_group)
    }

    /// The group `name` if it is of the Standard class, which alone has metric and
    /// subscription filters.
    pub(super) fn standard_group(&self, ctx: &Context, name: &str) -> AwsResult<Group> {
        let group = self.existing_group(ctx, name)?;
        if group.class != "STANDARD" {
            return Err(standard_class_only());
        }
        Ok(group)
    }

    /// Whether stream `stream` of group `group` exists.
    pub(super) fn stream_exists(
        &self,
        ctx: &Context,
        group: &str,
        stream: &str,
    ) -> AwsResult<bool> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT 1 FROM logs_streams WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4",
            )?
            .exists(params![ctx.account, ctx.region, group, stream])
            .map_err(AwsError::from)
        })
    }

    pub(super) fn create_log_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("logGroupName").unwrap_or_default();
        let tags = serde_json::to_string(&tags_of(input, "tags")).unwrap_or_else(|_| "{}".into());
        let class = input.str("logGroupClass").unwrap_or("STANDARD");
        let protected = input.bool("deletionProtectionEnabled").unwrap_or(false);
        let inserted = self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO logs_groups
                    (account, region, name, created, kms_key, class, deletion_protection, tags)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    ctx.account,
                    ctx.region,
                    name,
                    self.now(),
                    input.str("kmsKeyId"),
                    class,
                    protected,
                    tags
                ],
            )
            .map_err(AwsError::from)
        })?;
        if inserted == 0 {
            return Err(AwsError::new(
                "ResourceAlreadyExistsException",
                "The specified log group already exists",
            )
            .with_status(400));
        }
        Ok(Value::map())
    }

    pub(super) fn delete_log_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("logGroupName").unwrap_or_default();
        if self.existing_group(ctx, name)?.deletion_protection {
            return Err(deletion_protected());
        }
        let deleted = self.env.store.transaction(|tx| {
            let n = tx.execute_cached(
                "DELETE FROM logs_groups WHERE account = ?1 AND region = ?2 AND name = ?3",
                params![ctx.account, ctx.region, name],
            )?;
            tx.execute_cached(
                "DELETE FROM logs_resource_policies
                 WHERE account = ?1 AND region = ?2 AND scope = 'RESOURCE' AND key = ?3",
                params![ctx.account, ctx.region, group_arn(ctx, name)],
            )?;
            for table in [
                "logs_streams",
                "logs_events",
                "logs_subscriptions",
                "logs_metric_filters",
            ] {
                tx.execute_cached(
                    &format!("DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND grp = ?3"),
                    params![ctx.account, ctx.region, name],
                )?;
            }
            Ok::<_, AwsError>(n)
        })?;
        if deleted == 0 {
            return Err(no_group());
        }
        self.delete_group_settings(ctx, name)?;
        Ok(Value::map())
    }

    /// The groups whose names start with `prefix`, after `after`, in name order.
    fn groups_after(&self, ctx: &Context, prefix: &str, after: &str) -> AwsResult<Vec<Group>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {GROUP_COLUMNS} FROM logs_groups
                 WHERE account = ?1 AND region = ?2 AND name LIKE ?3 ESCAPE '\\' AND name > ?4
                 ORDER BY name"
            ))?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, like_prefix(prefix), after],
                Group::from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// A page of the groups `wanted` keeps, with the token of the next page.
    fn group_page(
        &self,
        ctx: &Context,
        input: &Value,
        prefix: &str,
        limit: i64,
        wanted: impl Fn(&Group) -> bool,
    ) -> AwsResult<(Vec<Group>, Option<String>)> {
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let accounts: Option<Vec<&str>> = input
            .get("accountIdentifiers")
            .and_then(Value::as_list)
            .filter(|l| !l.is_empty())
            .map(|l| l.iter().filter_map(Value::as_str).collect());
        if accounts.is_some_and(|a| !a.contains(&ctx.account.as_str())) {
            return Ok((Vec::new(), None));
        }
        let class = input.str("logGroupClass");
        let rows = self.groups_after(ctx, prefix, after.as_deref().unwrap_or_default())?;
        let mut matching = rows
            .into_iter()
            .filter(|g| class.is_none_or(|c| g.class == c) && wanted(g));
        let page: Vec<Group> = matching.by_ref().take(limit.max(1) as usize).collect();
        let token = match (matching.next(), page.last()) {
            (Some(_), Some(last)) => Some(token_of(&last.name)),
            _ => None,
        };
        Ok((page, token))
    }

    pub(super) fn describe_log_groups(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("logGroupNamePrefix");
        let pattern = input.str("logGroupNamePattern");
        if prefix.is_some() && pattern.is_some() {
            return Err(invalid(
                "LogGroup name prefix and LogGroup name pattern are mutually exclusive parameters.",
            ));
        }
        let identifiers: Option<Vec<String>> = input
            .get("logGroupIdentifiers")
            .and_then(Value::as_list)
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(|id| name_of_arn(id).unwrap_or(id).to_string())
                    .collect()
            });
        if identifiers.is_some() && (prefix.is_some() || pattern.is_some()) {
            return Err(invalid(
                "logGroupIdentifiers cannot be specified with logGroupNamePrefix or logGroupNamePattern.",
            ));
        }
        let pattern = pattern.map(str::to_lowercase);
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE);
        let (page, token) =
            self.group_page(ctx, input, prefix.unwrap_or_default(), limit, |g| {
                pattern
                    .as_ref()
                    .is_none_or(|p| g.name.to_lowercase().contains(p.as_str()))
                    && identifiers.as_ref().is_none_or(|ids| ids.contains(&g.name))
            })?;
        let groups: Vec<Value> = page
            .iter()
            .map(|g| self.group_value(ctx, g))
            .collect::<AwsResult<_>>()?;
        Ok(Value::map()
            .with("logGroups", groups)
            .with_opt("nextToken", token))
    }

    pub(super) fn list_log_groups(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let pattern = input.str("logGroupNamePattern");
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE);
        let (page, token) = self.group_page(ctx, input, "", limit, |g| {
            pattern.is_none_or(|p| matches_list_pattern(p, &g.name))
        })?;
        let groups: Vec<Value> = page
            .iter()
            .map(|g| {
                Value::map()
                    .with("logGroupName", g.name.as_str())
                    .with("logGroupArn", group_arn(ctx, &g.name))
                    .with("logGroupClass", g.class.as_str())
            })
            .collect();
        Ok(Value::map()
            .with("logGroups", groups)
            .with_opt("nextToken", token))
    }

    fn group_value(&self, ctx: &Context, g: &Group) -> AwsResult<Value> {
        let arn = group_arn(ctx, &g.name);
        Ok(Value::map()
            .with("logGroupName", g.name.as_str())
            .with("creationTime", g.created)
            .with_opt("retentionInDays", g.retention)
            .with("metricFilterCount", self.metric_filter_count(ctx, &g.name)?)
            .with("arn", format!("{arn}:*"))
            .with("logGroupArn", arn)
            .with("storedBytes", 0i64)
            .with_opt("kmsKeyId", g.kms_key.as_deref())
            .with("logGroupClass", g.class.as_str())
            .with("deletionProtectionEnabled", g.deletion_protection)
            .with(
                "bearerTokenAuthenticationEnabled",
                self.bearer_token_enabled(ctx, &g.name)?,
            ))
    }

    pub(super) fn put_retention_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("logGroupName").unwrap_or_default();
        let days = input.int("retentionInDays").unwrap_or_default();
        if !RETENTION_DAYS.contains(&days) {
            let allowed: Vec<String> = RETENTION_DAYS.iter().map(i64::to_string).collect();
            return Err(invalid(format!(
                "1 validation error detected: Value '{days}' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                allowed.join(", ")
            )));
        }
        self.set_retention(ctx, name, Some(days))
    }

    pub(super) fn delete_retention_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.set_retention(ctx, input.str("logGroupName").unwrap_or_default(), None)
    }

    fn set_retention(&self, ctx: &Context, name: &str, days: Option<i64>) -> AwsResult<Value> {
        self.update_group(ctx, name, "retention", days)
    }

    pub(super) fn create_log_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let stream = input.str("logStreamName").unwrap_or_default();
        self.existing_group(ctx, group)?;
        let inserted = self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO logs_streams (account, region, grp, name, created)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![ctx.account, ctx.region, group, stream, self.now()],
            )
            .map_err(AwsError::from)
        })?;
        if inserted == 0 {
            return Err(AwsError::new(
                "ResourceAlreadyExistsException",
                "The specified log stream already exists",
            )
            .with_status(400));
        }
        Ok(Value::map())
    }

    pub(super) fn delete_log_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let stream = input.str("logStreamName").unwrap_or_default();
        if self.existing_group(ctx, group)?.deletion_protection {
            return Err(deletion_protected());
        }
        let deleted = self.env.store.transaction(|tx| {
            let n = tx.execute_cached(
                "DELETE FROM logs_streams WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4",
                params![ctx.account, ctx.region, group, stream],
            )?;
            tx.execute_cached(
                "DELETE FROM logs_events WHERE account = ?1 AND region = ?2 AND grp = ?3 AND stream = ?4",
                params![ctx.account, ctx.region, group, stream],
            )?;
            Ok::<_, AwsError>(n)
        })?;
        if deleted == 0 {
            return Err(no_stream());
        }
        Ok(Value::map())
    }

    pub(super) fn describe_log_streams(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_of(input)?;
        let prefix = input.str("logStreamNamePrefix");
        let by_time = input.str("orderBy") == Some("LastEventTime");
        if by_time && prefix.is_some() {
            return Err(invalid(
                "Cannot order by LastEventTime with a logStreamNamePrefix.",
            ));
        }
        let descending = input.bool("descending").unwrap_or(false);
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
        let offset = match input.str("nextToken") {
            Some(t) => name_of_token(t)?
                .parse::<usize>()
                .map_err(|_| super::bad_token())?,
            None => 0,
        };
        self.existing_group(ctx, &group)?;
        let order = match (by_time, descending) {
            (false, false) => "name ASC",
            (false, true) => "name DESC",
            (true, false) => "COALESCE(last_event, 0) ASC, name ASC",
            (true, true) => "COALESCE(last_event, 0) DESC, name DESC",
        };
        let streams: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare(&format!(
                "SELECT name, created, first_event, last_event, last_ingestion FROM logs_streams
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name LIKE ?4 ESCAPE '\\'
                 ORDER BY {order} LIMIT ?5 OFFSET ?6"
            ))?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    group,
                    like_prefix(prefix.unwrap_or_default()),
                    (limit + 1) as i64,
                    offset as i64
                ],
                |r| {
                    let name: String = r.get(0)?;
                    Ok(Value::map()
                        .with(
                            "arn",
                            format!("{}:log-stream:{name}", group_arn(ctx, &group)),
                        )
                        .with("logStreamName", name)
                        .with("creationTime", r.get::<_, i64>(1)?)
                        .with_opt("firstEventTimestamp", r.get::<_, Option<i64>>(2)?)
                        .with_opt("lastEventTimestamp", r.get::<_, Option<i64>>(3)?)
                        .with_opt("lastIngestionTime", r.get::<_, Option<i64>>(4)?)
                        .with("storedBytes", 0i64))
                },
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let more = streams.len() > limit;
        let page: Vec<Value> = streams.into_iter().take(limit).collect();
        let mut out = Value::map().with("logStreams", page);
        if more {
            out.insert("nextToken", token_of(&(offset + limit).to_string()));
        }
        Ok(out)
    }

    pub(super) fn put_log_group_deletion_protection(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = group_of(input)?;
        let protected = input.bool("deletionProtectionEnabled").unwrap_or(false);
        self.update_group(ctx, &group, "deletion_protection", protected)
    }

    /// AssociateKmsKey and DisassociateKmsKey (`kms_key` `None`): the group comes from
    /// `logGroupName` or a log-group `resourceIdentifier`.
    pub(super) fn set_kms_key(
        &self,
        ctx: &Context,
        input: &Value,
        kms_key: Option<&str>,
    ) -> AwsResult<Value> {
        let group = match (input.str("logGroupName"), input.str("resourceIdentifier")) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "logGroupName and resourceIdentifier are mutually exclusive parameters.",
                ))
            }
            (Some(name), None) => name,
            (None, Some(arn)) => name_of_arn(arn)
                .ok_or_else(|| invalid(format!("Invalid resourceIdentifier: {arn}")))?,
            (None, None) => {
                return Err(invalid(
                    "Either logGroupName or resourceIdentifier must be specified.",
                ))
            }
        };
        self.update_group(ctx, group, "kms_key", kms_key)
    }

    /// Sets one column of a group, or `ResourceNotFoundException`.
    fn update_group(
        &self,
        ctx: &Context,
        group: &str,
        column: &str,
        value: impl rusqlite::ToSql,
    ) -> AwsResult<Value> {
        let n = self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE logs_groups SET {column} = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3"
                ),
                params![ctx.account, ctx.region, group, value],
            )
            .map_err(AwsError::from)
        })?;
        if n == 0 {
            return Err(no_group());
        }
        Ok(Value::map())
    }

    /// The tags of a tagged resource, or its `ResourceNotFoundException`.
    fn tags(&self, ctx: &Context, resource: &Tagged) -> AwsResult<BTreeMap<String, String>> {
        let tags: Option<String> = self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT tags FROM {} WHERE account = ?1 AND region = ?2 AND name = ?3",
                resource.table()
            ))?
            .query_row(params![ctx.account, ctx.region, resource.name()], |r| {
                r.get(0)
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        let tags = tags.ok_or_else(|| resource.missing())?;
        Ok(serde_json::from_str(&tags).unwrap_or_default())
    }

    fn update_tags(
        &self,
        ctx: &Context,
        resource: &Tagged,
        change: impl FnOnce(&mut BTreeMap<String, String>),
    ) -> AwsResult<Value> {
        let mut tags = self.tags(ctx, resource)?;
        change(&mut tags);
        let tags = serde_json::to_string(&tags).unwrap_or_else(|_| "{}".into());
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE {} SET tags = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                    resource.table()
                ),
                params![ctx.account, ctx.region, resource.name(), tags],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    fn add_tags(
        &self,
        ctx: &Context,
        resource: &Tagged,
        tags: BTreeMap<String, String>,
    ) -> AwsResult<Value> {
        self.update_tags(ctx, resource, |t| t.extend(tags))
    }

    fn remove_tags(&self, ctx: &Context, resource: &Tagged, keys: &Value) -> AwsResult<Value> {
        let keys: Vec<&str> = keys
            .as_list()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.update_tags(ctx, resource, |t| {
            t.retain(|k, _| !keys.contains(&k.as_str()))
        })
    }

    fn list_tags(&self, ctx: &Context, resource: &Tagged) -> AwsResult<Value> {
        Ok(Value::map().with("tags", tags_value(&self.tags(ctx, resource)?)))
    }

    pub(super) fn tag_log_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = Tagged::Group(input.str("logGroupName").unwrap_or_default());
        self.add_tags(ctx, &group, tags_of(input, "tags"))
    }

    pub(super) fn untag_log_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = Tagged::Group(input.str("logGroupName").unwrap_or_default());
        self.remove_tags(ctx, &group, input.get("tags").unwrap_or(&Value::Null))
    }

    pub(super) fn list_tags_log_group(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = Tagged::Group(input.str("logGroupName").unwrap_or_default());
        self.list_tags(ctx, &group)
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.add_tags(ctx, &Tagged::of_arn(input)?, tags_of(input, "tags"))
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let keys = input.get("tagKeys").unwrap_or(&Value::Null);
        self.remove_tags(ctx, &Tagged::of_arn(input)?, keys)
    }

    pub(super) fn list_tags_for_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.list_tags(ctx, &Tagged::of_arn(input)?)
    }
}

/// The tag operations' refusal of a log group's `arn` (the one ending `:*` that
/// DescribeLogGroups returns beside `logGroupArn`), which the Logs front end answers in its
/// own words before the model's pattern.
pub(super) fn check_tag_arn(operation: &str, input: &Value) -> AwsResult<()> {
    let tagging = matches!(
        operation,
        "ListTagsForResource" | "TagResource" | "UntagResource"
    );
    match input.str("resourceArn") {
        Some(arn) if tagging && arn.ends_with(":*") => {
            Err(AwsError::validation("Invalid resourceArn"))
        }
        _ => Ok(()),
    }
}

/// A resource that carries tags: a log group or a destination, by name.
pub(super) enum Tagged<'a> {
    Group(&'a str),
    Destination(&'a str),
}

impl<'a> Tagged<'a> {
    /// The resource a `resourceArn` names.
    fn of_arn(input: &'a Value) -> AwsResult<Tagged<'a>> {
        let arn = input.str("resourceArn").unwrap_or_default();
        let resource = arn
            .strip_prefix("arn:")
            .and_then(|rest| rest.splitn(5, ':').nth(4));
        match resource.and_then(|r| r.split_once(':')) {
            Some(("log-group", _)) => name_of_arn(arn).map(Tagged::Group),
            Some(("destination", name)) => Some(Tagged::Destination(name)),
            _ => None,
        }
        .ok_or_else(|| invalid(format!("Invalid resource ARN: {arn}")))
    }

    fn table(&self) -> &'static str {
        match self {
            Tagged::Group(_) => "logs_groups",
            Tagged::Destination(_) => "logs_destinations",
        }
    }

    fn name(&self) -> &str {
        match self {
            Tagged::Group(name) | Tagged::Destination(name) => name,
        }
    }

    fn missing(&self) -> AwsError {
        match self {
            Tagged::Group(_) => no_group(),
            Tagged::Destination(_) => super::destinations::no_destination(),
        }
    }
}
