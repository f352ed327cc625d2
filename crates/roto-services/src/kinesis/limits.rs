//! The per-shard throughput limits, enforced only with `--kinesis-shard-limits`: a shard
//! takes 1 MiB (data and partition keys) and 1,000 records in each second of the server
//! clock, and serves 5 GetRecords calls a second and 2 MiB a second, so a read of more
//! holds the shard's next read back until the bytes are paid for (AWS's "a 10 MiB read
//! throttles the next 5 seconds"). What exceeds a limit is
//! `ProvisionedThroughputExceededException`: the whole call for PutRecord and GetRecords,
//! the record alone in PutRecords. Usage lives in memory, as it does in AWS for a second.

use std::collections::HashMap;
use std::sync::Mutex;

use roto_core::{AwsError, Context};

use super::seq;

/// Bytes a shard takes in a second.
const PUT_BYTES: usize = 1024 * 1024;
/// Records a shard takes in a second.
const PUT_RECORDS: u32 = 1000;
/// GetRecords calls a shard serves in a second.
const READS: u32 = 5;
/// Bytes a shard serves in a second.
const READ_BYTES_PER_SECOND: i64 = 2 * 1024 * 1024;
/// Shards remembered before idle ones are forgotten.
const REMEMBERED: usize = 4096;

/// One shard's use of its current second.
#[derive(Default)]
struct Usage {
    second: i64,
    put_bytes: usize,
    put_records: u32,
    reads: u32,
    /// When the bytes read so far are paid for (epoch milliseconds).
    read_paid_at: i64,
}

impl Usage {
    /// Starts a new second when `now` is in a later one.
    fn at(&mut self, now: i64) -> &mut Usage {
        let second = now.div_euclid(1000);
        if second != self.second {
            self.second = second;
            self.put_bytes = 0;
            self.put_records = 0;
            self.reads = 0;
        }
        self
    }
}

/// A shard: the caller's context, the stream's name and the shard's index.
pub(crate) type ShardOf<'a> = (&'a Context, &'a str, i64);

/// Shard usage by (account, region, stream, shard).
#[derive(Default)]
pub(crate) struct Limits {
    usage: Mutex<HashMap<(String, String, String, i64), Usage>>,
}

impl Limits {
    fn with<T>(
        &self,
        (ctx, stream, shard): ShardOf<'_>,
        now: i64,
        f: impl FnOnce(&mut Usage) -> T,
    ) -> T {
        let mut usage = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        if usage.len() >= REMEMBERED {
            let current = now.div_euclid(1000);
            usage.retain(|_, u| u.second == current || u.read_paid_at > now);
        }
        let key = (
            ctx.account.clone(),
            ctx.region.clone(),
            stream.to_string(),
            shard,
        );
        f(usage.entry(key).or_default().at(now))
    }

    /// Whether the shard takes a record of `bytes` now, counting it if so.
    pub(crate) fn admit_put(&self, shard: ShardOf<'_>, bytes: usize, now: i64) -> bool {
        self.with(shard, now, |u| {
            let fits = u.put_records < PUT_RECORDS && u.put_bytes + bytes <= PUT_BYTES;
            if fits {
                u.put_records += 1;
                u.put_bytes += bytes;
            }
            fits
        })
    }

    /// Whether the shard serves a GetRecords call now, counting it if so.
    pub(crate) fn admit_read(&self, shard: ShardOf<'_>, now: i64) -> bool {
        self.with(shard, now, |u| {
            let fits = u.reads < READS && u.read_paid_at <= now;
            if fits {
                u.reads += 1;
            }
            fits
        })
    }

    /// Charges the bytes a read returned to the shard's read budget.
    pub(crate) fn charge_read(&self, shard: ShardOf<'_>, bytes: usize, now: i64) {
        let millis = i64::try_from(bytes)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000)
            / READ_BYTES_PER_SECOND;
        self.with(shard, now, |u| {
            u.read_paid_at = u.read_paid_at.max(now).saturating_add(millis);
        });
    }
}

/// AWS's message for a shard over its limit.
pub(crate) fn exceeded_message(ctx: &Context, stream: &str, shard: i64) -> String {
    format!(
        "Rate exceeded for shard {} in stream {stream} under account {}.",
        seq::shard_id(shard),
        ctx.account
    )
}

/// `ProvisionedThroughputExceededException` for a shard.
pub(crate) fn exceeded(ctx: &Context, stream: &str, shard: i64) -> AwsError {
    AwsError::new(
        "ProvisionedThroughputExceededException",
        exceeded_message(ctx, stream, shard),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        Context::internal("123456789012", "us-east-1")
    }

    #[test]
    fn a_shard_takes_a_thousand_records_a_second() {
        let limits = Limits::default();
        let admitted = (0..1500)
            .filter(|_| limits.admit_put((&ctx(), "s", 0), 10, 5_000))
            .count();
        assert_eq!(admitted, 1000);
        assert!(
            limits.admit_put((&ctx(), "s", 1), 10, 5_000),
            "another shard has its own"
        );
        assert!(
            limits.admit_put((&ctx(), "s", 0), 10, 6_000),
            "the next second starts afresh"
        );
    }

    #[test]
    fn a_shard_takes_a_mebibyte_a_second() {
        let limits = Limits::default();
        assert!(limits.admit_put((&ctx(), "s", 0), PUT_BYTES - 1, 0));
        assert!(!limits.admit_put((&ctx(), "s", 0), 2, 0));
        assert!(limits.admit_put((&ctx(), "s", 0), 1, 0));
    }

    #[test]
    fn reads_are_five_a_second_and_large_reads_hold_the_next_back() {
        let limits = Limits::default();
        let served = (0..8)
            .filter(|_| limits.admit_read((&ctx(), "s", 0), 1_000))
            .count();
        assert_eq!(served, 5);
        assert!(limits.admit_read((&ctx(), "s", 0), 2_000));
        limits.charge_read((&ctx(), "s", 0), 10 * 1024 * 1024, 2_000);
        assert!(!limits.admit_read((&ctx(), "s", 0), 6_999));
        assert!(limits.admit_read((&ctx(), "s", 0), 7_000));
    }
}
