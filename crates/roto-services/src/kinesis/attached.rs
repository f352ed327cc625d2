//! What queues and channels share: each reads one stream, has an ARN ending in a random
//! identifier (`queue/<id>`, `channel/<id>`) and a row keyed by that identifier holding its
//! name, its stream and its tags; each is listed with a stream filter and paged, tagged by
//! its ARN, and keeps its stream from being deleted or made provisioned.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::records::timestamp_of;
use super::streams::tag_map;
use super::{invalid_argument, name_from_arn, not_found, stream_arn, Kinesis, Stream};
use crate::tags;

/// The list operations' default (and largest) page.
const MAX_PAGE: usize = 100;
/// The most tags a queue or a channel may carry.
pub(crate) const MAX_TAGS: usize = 50;

/// A kind of resource attached to a stream.
pub(crate) struct Kind {
    /// Its table, whose rows have `id`, `name`, `stream` and `tags` columns.
    pub table: &'static str,
    /// Its ARN's resource type (`queue`).
    pub arn_type: &'static str,
    /// Its name in messages (`Queue`).
    pub label: &'static str,
}

pub(crate) const QUEUES: Kind = Kind {
    table: "kinesis_queues",
    arn_type: "queue",
    label: "Queue",
};

pub(crate) const CHANNELS: Kind = Kind {
    table: "kinesis_channels",
    arn_type: "channel",
    label: "Channel",
};

impl Kind {
    /// The ARN of the resource `id`.
    pub fn arn(&self, ctx: &Context, id: &str) -> String {
        format!(
            "arn:aws:kinesis:{}:{}:{}/{id}",
            ctx.region, ctx.account, self.arn_type
        )
    }

    /// ResourceNotFoundException for `arn`.
    pub fn missing(&self, ctx: &Context, arn: &str) -> AwsError {
        AwsError::new(
            "ResourceNotFoundException",
            format!(
                "{} {arn} under account {} not found.",
                self.label, ctx.account
            ),
        )
    }

    /// InvalidArgumentException for more than [`MAX_TAGS`] tags on `name`.
    pub fn too_many_tags(&self, name: &str) -> AwsError {
        let kind = self.arn_type;
        invalid_argument(format!(
            "Failed to tag {kind} {name} because a {kind} cannot have more than {MAX_TAGS} tags."
        ))
    }
}

/// The kind of resource a tagging request's `ResourceARN` names, unless it names a stream.
pub(crate) fn named_kind(input: &Value) -> Option<&'static Kind> {
    let resource = input.str("ResourceARN")?.split(':').nth(5)?;
    [&QUEUES, &CHANNELS].into_iter().find(|kind| {
        resource
            .strip_prefix(kind.arn_type)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Whether a resource reading `stream` (created at `created`) passes a list request's
/// `StreamFilter` (none passes everything).
pub(crate) fn passes_filter(ctx: &Context, input: &Value, stream: &str, created: i64) -> bool {
    let filters = input
        .get("StreamFilter")
        .and_then(Value::as_list)
        .unwrap_or_default();
    filters.is_empty()
        || filters.iter().any(|f| {
            f.str("StreamARN") == Some(stream_arn(ctx, stream).as_str())
                && f.get("StreamCreationTimestamp")
                    .and_then(timestamp_of)
                    .is_none_or(|t| t / 1000 == created / 1000)
        })
}

/// One page of a list operation's `summaries` (as `member`), by `MaxResults` and
/// `NextToken`.
pub(crate) fn list_page(input: &Value, summaries: Vec<Value>, member: &str) -> AwsResult<Value> {
    let limit = input
        .int("MaxResults")
        .map_or(MAX_PAGE, |n| (n.max(1) as usize).min(MAX_PAGE));
    let token = input.str("NextToken");
    let (page, next) = crate::paging::page(summaries, limit, token, || {
        invalid_argument(format!("Invalid NextToken: {}", token.unwrap_or_default()))
    })?;
    Ok(Value::map()
        .with(member, Value::List(page))
        .with_opt("NextToken", next))
}

impl Kinesis {
    /// The row of the resource of `kind` an ARN names, read by `from_row` over `columns`.
    pub(crate) fn find_attached<T>(
        &self,
        ctx: &Context,
        kind: &Kind,
        arn: &str,
        columns: &str,
        from_row: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> AwsResult<Option<T>> {
        let Some(id) = arn.strip_prefix(&kind.arn(ctx, "")) else {
            return Ok(None);
        };
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {columns} FROM {} WHERE account = ?1 AND region = ?2 AND id = ?3",
                kind.table
            ))?
            .query_row([&ctx.account, &ctx.region, id], from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Every resource of `kind` in the account and region, by name.
    pub(crate) fn all_attached<T>(
        &self,
        ctx: &Context,
        kind: &Kind,
        columns: &str,
        from_row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> AwsResult<Vec<T>> {
        self.store()?.read(|c| {
            let rows = c
                .prepare_cached(&format!(
                    "SELECT {columns} FROM {} WHERE account = ?1 AND region = ?2 ORDER BY name",
                    kind.table
                ))?
                .query_map([&ctx.account, &ctx.region], from_row)?
                .collect::<rusqlite::Result<Vec<_>>>();
            rows.map_err(AwsError::from)
        })
    }

    /// The on-demand stream that a CreateQueue or CreateChannel stream configuration names.
    pub(crate) fn on_demand_source(
        &self,
        ctx: &Context,
        kind: &Kind,
        config: &Value,
    ) -> AwsResult<Stream> {
        let arn = config.str("StreamARN").unwrap_or_default();
        let name = name_from_arn(ctx, arn)?;
        let stream = self.find(ctx, name)?.ok_or_else(|| not_found(ctx, name))?;
        if stream.mode != "ON_DEMAND" {
            return Err(AwsError::validation(format!(
                "{}s are supported only on data streams in on-demand capacity mode. Stream {name} is in {} mode.",
                kind.label, stream.mode
            )));
        }
        Ok(stream)
    }

    /// ResourceInUseException when a resource of `kind` of that name exists.
    pub(crate) fn check_name_free(&self, ctx: &Context, kind: &Kind, name: &str) -> AwsResult<()> {
        let taken = self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT 1 FROM {} WHERE account = ?1 AND region = ?2 AND name = ?3",
                kind.table
            ))?
            .exists([&ctx.account, &ctx.region, name])
            .map_err(AwsError::from)
        })?;
        match taken {
            false => Ok(()),
            true => Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "{} {name} under account {} already exists.",
                    kind.label, ctx.account
                ),
            )),
        }
    }

    /// How many resources of `kind` read a stream.
    pub(crate) fn attached_count(
        &self,
        ctx: &Context,
        kind: &Kind,
        stream: &str,
    ) -> AwsResult<i64> {
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT COUNT(*) FROM {} WHERE account = ?1 AND region = ?2 AND stream = ?3",
                kind.table
            ))?
            .query_row([&ctx.account, &ctx.region, stream], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    /// ResourceInUseException when queues or channels read the stream (DeleteStream, and
    /// switching it to provisioned capacity, need none).
    pub(crate) fn check_nothing_attached(&self, ctx: &Context, stream: &str) -> AwsResult<()> {
        for kind in [&QUEUES, &CHANNELS] {
            let n = self.attached_count(ctx, kind, stream)?;
            if n > 0 {
                return Err(AwsError::new(
                    "ResourceInUseException",
                    format!(
                        "Stream {stream} under account {} has {n} {}(s). Delete its {}s first.",
                        ctx.account, kind.arn_type, kind.arn_type
                    ),
                ));
            }
        }
        Ok(())
    }

    /// TagResource, UntagResource and ListTagsForResource on a queue or a channel.
    pub(crate) fn attached_tags(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let kind = named_kind(input).ok_or_else(|| invalid_argument("Invalid ResourceARN"))?;
        let arn = input.str("ResourceARN").unwrap_or_default();
        let (id, name, stored): (String, String, String) = self
            .find_attached(ctx, kind, arn, "id, name, tags", |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .ok_or_else(|| kind.missing(ctx, arn))?;
        let mut tags = tags::from_stored(&stored);
        match operation {
            "TagResource" => tags.extend(tag_map(input.get("Tags"))),
            "UntagResource" => tags::remove(&mut tags, input, "TagKeys"),
            _ => return Ok(Value::map().with("Tags", tags::to_list(&tags))),
        }
        if tags.len() > MAX_TAGS {
            return Err(kind.too_many_tags(&name));
        }
        self.store()?.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE {} SET tags = ?4 WHERE account = ?1 AND region = ?2 AND id = ?3",
                    kind.table
                ),
                params![ctx.account, ctx.region, id, tags::store_text(&tags)],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }
}
