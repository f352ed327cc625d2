//! Throttles as API Gateway applies them: token buckets that hold at most `burstLimit`
//! requests and refill at `rateLimit` a second on the server clock (so `/_roto/clock`
//! refills them); a request takes a token or is refused 429. Buckets live in memory; a full
//! bucket is the same as none, so those are what a crowded map forgets.
//!
//! The account's own throttle (`GetAccount`'s `throttleSettings`, 10,000 requests a second
//! with a burst of 5,000 unless `UpdateAccount` changed them) covers every REST and HTTP
//! API of an account in a region together; [`AccountThrottle`] keeps each account's
//! limits in memory, read from the account document once and forgotten when it changes.

use std::collections::HashMap;
use std::sync::Mutex;

use roto_core::timestamp::now_millis;
use roto_core::AwsResult;
use serde_json::{json, Value as Json};

use super::store::{Scope, Store};

/// How many buckets a map holds before it forgets the full ones.
const MAX_BUCKETS: usize = 4096;

/// A throttle: tokens a second, and the bucket's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Tokens a second.
    pub rate: f64,
    /// The bucket's size.
    pub burst: f64,
}

impl Limits {
    /// The limits in `doc`'s members `rate` and `burst`, if it sets either (one alone
    /// stands for both).
    pub fn read(doc: &Json, rate: &str, burst: &str) -> Option<Limits> {
        match (doc[rate].as_f64(), doc[burst].as_f64()) {
            (None, None) => None,
            (r, b) => Some(Limits {
                rate: r.or(b).unwrap_or_default(),
                burst: b.or(r.map(f64::ceil)).unwrap_or_default(),
            }),
        }
    }

    /// The bucket's tokens `elapsed` milliseconds after it held `tokens`.
    fn refilled(self, tokens: f64, elapsed: i64) -> f64 {
        (tokens + self.rate * elapsed.max(0) as f64 / 1000.0).min(self.burst)
    }
}

/// A token bucket: its size and rate, its tokens when last taken from, and when (epoch
/// milliseconds).
struct Bucket {
    limits: Limits,
    tokens: f64,
    at: i64,
}

/// Token buckets by name.
#[derive(Default)]
pub struct Buckets(Mutex<HashMap<String, Bucket>>);

impl Buckets {
    /// Takes a token from bucket `name`, which `limits` size; false when it has none.
    pub fn take(&self, name: String, limits: Limits, now: i64) -> bool {
        let mut buckets = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(&name) {
            buckets.retain(|_, b| b.limits.refilled(b.tokens, now - b.at) < b.limits.burst);
        }
        let bucket = buckets.entry(name).or_insert(Bucket {
            limits,
            tokens: limits.burst,
            at: now,
        });
        bucket.limits = limits;
        bucket.tokens = limits.refilled(bucket.tokens, now - bucket.at);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The account document as AWS answers it before any change.
pub fn default_account() -> Json {
    json!({"throttleSettings": {"burstLimit": 5000, "rateLimit": 10000.0},
        "features": ["UsagePlans"], "apiKeyVersion": "4"})
}

/// The account-level throttle of every API of an account and region.
#[derive(Default)]
pub struct AccountThrottle {
    buckets: Buckets,
    /// Each account's limits (by `account region`), as its document last said.
    limits: Mutex<HashMap<String, Limits>>,
}

impl AccountThrottle {
    /// Takes a token from the account's bucket; false when the account is throttled.
    pub fn admit(&self, store: &Store, account: &str, region: &str) -> AwsResult<bool> {
        let name = format!("{account} {region}");
        let known = self
            .limits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&name)
            .copied();
        let limits = match known {
            Some(limits) => limits,
            None => {
                let doc = store
                    .get(account_scope(account, region), "account")?
                    .unwrap_or_else(default_account);
                let limits = Limits::read(&doc["throttleSettings"], "rateLimit", "burstLimit")
                    .unwrap_or(Limits {
                        rate: 10_000.0,
                        burst: 5_000.0,
                    });
                self.limits
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(name.clone(), limits);
                limits
            }
        };
        Ok(self.buckets.take(name, limits, now_millis()))
    }

    /// Forgets the account's limits (its document changed).
    pub fn forget(&self, account: &str, region: &str) {
        self.limits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&format!("{account} {region}"));
    }
}

/// Where the account document lives.
fn account_scope<'a>(account: &'a str, region: &'a str) -> Scope<'a> {
    Scope {
        account,
        region,
        kind: "account",
        parent: "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_the_burst_and_refill_at_the_rate() {
        let buckets = Buckets::default();
        let limits = Limits {
            rate: 2.0,
            burst: 3.0,
        };
        let takes = |at| buckets.take("b".into(), limits, at);
        assert!(takes(0) && takes(0) && takes(0));
        assert!(!takes(0));
        assert!(!takes(400));
        assert!(takes(500));
        assert!(takes(10_000) && takes(10_000) && takes(10_000) && !takes(10_000));
        let closed = Limits {
            rate: 0.0,
            burst: 0.0,
        };
        assert!(!buckets.take("closed".into(), closed, 0));
    }

    #[test]
    fn limits_read_either_member_for_both() {
        let both = Limits::read(&json!({"r": 2.5, "b": 4}), "r", "b").unwrap();
        assert_eq!((both.rate, both.burst), (2.5, 4.0));
        let rate_only = Limits::read(&json!({"r": 2.5}), "r", "b").unwrap();
        assert_eq!((rate_only.rate, rate_only.burst), (2.5, 3.0));
        assert!(Limits::read(&json!({}), "r", "b").is_none());
    }
}
