//! Resharding: SplitShard, MergeShards and UpdateShardCount close parent shards and open
//! their children in one transaction.
//!
//! A closed shard keeps its records (readable to their end, where GetRecords answers no
//! NextShardIterator and names the children) and takes no more writes; its
//! `EndingSequenceNumber` is the counter it stopped at. The stream passes through
//! `UPDATING` as AWS's does, but the change is complete when the call answers, so the
//! first read after it shows the stream `ACTIVE` with its new shards (waiters finish at
//! once), as Roto's other status transitions do.
//!
//! UpdateShardCount (UNIFORM_SCALING) closes every open shard and opens the target count
//! with even hash key ranges; each child names the open shards its range overlaps as its
//! parent and adjacent parent (the first two, where AWS's chain of intermediate splits and
//! merges would name them through shards of its own).

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, Connection};

use super::seq::{self, even_ranges, stored_hash};
use super::streams::Shard;
use super::{invalid_argument, stream_arn, Kinesis, Stream};

/// The most shards one stream may have.
const MAX_STREAM_SHARDS: i64 = 10_000;
/// How many times UpdateShardCount may run per stream in a rolling day.
const SCALINGS_PER_DAY: usize = 10;
const DAY_MS: i64 = 86_400_000;

/// A shard to open: its hash key range and parents.
struct NewShard {
    start: u128,
    end: u128,
    parent: i64,
    adjacent_parent: Option<i64>,
}

fn shard_missing(ctx: &Context, stream: &str, shard: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!(
            "Could not find shard {shard} in stream {stream} under account {}.",
            ctx.account
        ),
    )
}

fn hash_of(shard: &Shard, end: bool) -> u128 {
    let text = if end {
        &shard.end_hash
    } else {
        &shard.start_hash
    };
    text.parse().unwrap_or_default()
}

/// Closes `shards` and opens `children` after the stream's last shard index.
fn reshard(
    tx: &Connection,
    ctx: &Context,
    stream: &str,
    closing: &[&Shard],
    children: &[NewShard],
) -> AwsResult<()> {
    let now = now_millis();
    for shard in closing {
        tx.execute_cached(
            "UPDATE kinesis_shards SET closed_seq = next_seq, closed_at = ?5
             WHERE account = ?1 AND region = ?2 AND stream = ?3 AND shard = ?4",
            params![ctx.account, ctx.region, stream, shard.index, now],
        )?;
    }
    let next: i64 = tx.query_row_cached(
        "SELECT next_shard FROM kinesis_streams WHERE account = ?1 AND region = ?2 AND name = ?3",
        [&ctx.account, &ctx.region, stream],
        |r| r.get(0),
    )?;
    for (offset, child) in children.iter().enumerate() {
        tx.execute_cached(
            "INSERT INTO kinesis_shards (account, region, stream, shard, start_hash, end_hash,
             parent, adjacent_parent, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                ctx.account,
                ctx.region,
                stream,
                next + offset as i64,
                stored_hash(child.start),
                stored_hash(child.end),
                child.parent,
                child.adjacent_parent,
                now
            ],
        )?;
    }
    tx.execute_cached(
        "UPDATE kinesis_streams SET next_shard = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
        params![ctx.account, ctx.region, stream, next + children.len() as i64],
    )?;
    Ok(())
}

impl Kinesis {
    /// The open shard a resharding request names by `member`.
    fn open_shard(
        &self,
        ctx: &Context,
        stream: &Stream,
        shards: &[Shard],
        id: &str,
    ) -> AwsResult<Shard> {
        let index = seq::shard_index(id);
        let shard = shards
            .iter()
            .find(|s| Some(s.index) == index)
            .ok_or_else(|| shard_missing(ctx, &stream.name, id))?;
        if shard.closed_seq.is_some() {
            return Err(invalid_argument(format!(
                "Shard {id} in stream {} under account {} has already been merged or split, and thus is not eligible for merging or splitting.",
                stream.name, ctx.account
            )));
        }
        Ok(shard.clone())
    }

    pub(crate) fn split_shard(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let shards = self.shards(ctx, &stream.name)?;
        let id = input.str("ShardToSplit").unwrap_or_default();
        let shard = self.open_shard(ctx, &stream, &shards, id)?;
        let text = input.str("NewStartingHashKey").unwrap_or_default();
        let (start, end) = (hash_of(&shard, false), hash_of(&shard, true));
        let key = text
            .parse::<u128>()
            .ok()
            .filter(|k| text.bytes().all(|b| b.is_ascii_digit()) && *k > start + 1 && *k < end);
        let Some(key) = key else {
            return Err(invalid_argument(format!(
                "NewStartingHashKey {text} used in SplitShard() on shard {id} in stream {} under account {} is not both greater than one plus the shard's StartingHashKey {start} and less than the shard's EndingHashKey {end}.",
                stream.name, ctx.account
            )));
        };
        self.check_shard_limit(ctx, 1)?;
        let children = [(start, key - 1), (key, end)].map(|(start, end)| NewShard {
            start,
            end,
            parent: shard.index,
            adjacent_parent: None,
        });
        self.store()?
            .transaction(|tx| reshard(tx, ctx, &stream.name, &[&shard], &children))?;
        self.appended.notify_waiters();
        Ok(Value::map())
    }

    pub(crate) fn merge_shards(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let shards = self.shards(ctx, &stream.name)?;
        let (first_id, second_id) = (
            input.str("ShardToMerge").unwrap_or_default(),
            input.str("AdjacentShardToMerge").unwrap_or_default(),
        );
        let first = self.open_shard(ctx, &stream, &shards, first_id)?;
        let second = self.open_shard(ctx, &stream, &shards, second_id)?;
        let (low, high) = match hash_of(&first, true).checked_add(1) {
            Some(next) if next == hash_of(&second, false) => (&first, &second),
            _ if hash_of(&second, true).checked_add(1) == Some(hash_of(&first, false)) => {
                (&second, &first)
            }
            _ => {
                return Err(invalid_argument(format!(
                    "Shards {first_id} and {second_id} in stream {} under account {} are not an adjacent pair of shards eligible for merging",
                    stream.name, ctx.account
                )));
            }
        };
        let child = NewShard {
            start: hash_of(low, false),
            end: hash_of(high, true),
            parent: first.index,
            adjacent_parent: Some(second.index),
        };
        self.store()?
            .transaction(|tx| reshard(tx, ctx, &stream.name, &[low, high], &[child]))?;
        self.appended.notify_waiters();
        Ok(Value::map())
    }

    pub(crate) fn update_shard_count(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let shards = self.shards(ctx, &stream.name)?;
        let open: Vec<&Shard> = shards.iter().filter(|s| s.closed_seq.is_none()).collect();
        let current = open.len() as i64;
        let target = input.int("TargetShardCount").unwrap_or_default();
        self.check_scaling(ctx, &stream, current, target)?;
        let now = now_millis();
        let mut scalings: Vec<i64> = stream
            .scalings
            .iter()
            .copied()
            .filter(|t| now - t < DAY_MS)
            .collect();
        scalings.push(now);
        let children = uniform_children(&open, target);
        self.store()?.transaction(|tx| {
            reshard(tx, ctx, &stream.name, &open, &children)?;
            tx.execute_cached(
                "UPDATE kinesis_streams SET scalings = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                params![ctx.account, ctx.region, stream.name, serde_json::to_string(&scalings).unwrap_or_default()],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("StreamName", stream.name.as_str())
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("CurrentShardCount", current)
            .with("TargetShardCount", target))
    }

    /// UpdateShardCount's limits: at most double and at least half the open shards, at
    /// most 10,000 per stream, the account's quota, and ten scalings a rolling day.
    fn check_scaling(
        &self,
        ctx: &Context,
        stream: &Stream,
        current: i64,
        target: i64,
    ) -> AwsResult<()> {
        let refuse = |why: &str| {
            Err(invalid_argument(format!(
                "UpdateShardCount request failed for stream {} under account {} because {why}",
                stream.name, ctx.account
            )))
        };
        if stream.mode == "ON_DEMAND" {
            return Err(AwsError::new(
                "ValidationException",
                format!(
                    "UpdateShardCount is not supported for stream {} under account {} in On-Demand mode.",
                    stream.name, ctx.account
                ),
            ));
        }
        if target > current * 2 {
            return refuse(&format!("the target shard count {target} is more than double the current open shard count {current}."));
        }
        if target * 2 < current {
            return refuse(&format!("the target shard count {target} is less than half the current open shard count {current}."));
        }
        if target > MAX_STREAM_SHARDS {
            return refuse(&format!(
                "the target shard count {target} exceeds the maximum of {MAX_STREAM_SHARDS} shards per stream."
            ));
        }
        let now = now_millis();
        let recent = stream
            .scalings
            .iter()
            .filter(|t| now - **t < DAY_MS)
            .count();
        if recent >= SCALINGS_PER_DAY {
            return Err(AwsError::new(
                "LimitExceededException",
                format!(
                    "Exceeded the limit of {SCALINGS_PER_DAY} UpdateShardCount calls in a rolling 24-hour period for stream {} under account {}.",
                    stream.name, ctx.account
                ),
            ));
        }
        self.check_shard_limit(ctx, (target - current).max(0))
    }
}

/// `target` shards with even ranges, each naming the open shards its range overlaps.
fn uniform_children(open: &[&Shard], target: i64) -> Vec<NewShard> {
    even_ranges(target.max(1) as u128)
        .into_iter()
        .map(|(start, end)| {
            let mut parents = open
                .iter()
                .filter(|s| hash_of(s, false) <= end && start <= hash_of(s, true))
                .map(|s| s.index);
            NewShard {
                start,
                end,
                parent: parents.next().unwrap_or_default(),
                adjacent_parent: parents.next(),
            }
        })
        .collect()
}
