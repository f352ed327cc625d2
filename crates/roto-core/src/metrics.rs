//! The metrics services publish about themselves, as AWS publishes them in its `AWS/*`
//! namespaces (Lambda's Invocations, SQS's NumberOfMessagesSent) and as CloudWatch Logs
//! derives them from log events (metric filters, the Embedded Metric Format).
//!
//! A service records a datum with [`Metrics::put`]: one short lock that merges it into the
//! aggregate of its metric, unit and minute (or second, at high resolution), and nothing
//! more on the request's path. CloudWatch takes the aggregates into its store off that path
//! ([`Metrics::take`]): when it is called, before it evaluates alarms, and when
//! [`FLUSH_AT`] aggregates wait (the hook it sets with [`Metrics::on_full`]). Gauges (a
//! queue's depth) are read by the service that owns them when CloudWatch samples them
//! ([`Metrics::sample`]), so no request pays for them. A server whose services publish
//! nothing holds nothing here; one whose CloudWatch is never called holds at most
//! [`FLUSH_AT`] aggregates before they go to the store.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

/// How many aggregates wait before the `on_full` hook runs.
pub const FLUSH_AT: usize = 1024;
/// The most distinct values an aggregate keeps for percentiles.
const MAX_VALUES: usize = 1000;

/// What identifies an aggregate: the metric, its unit and its time bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub account: String,
    pub region: String,
    pub namespace: String,
    pub name: String,
    /// Dimensions as (name, value), sorted by name.
    pub dims: Vec<(String, String)>,
    pub unit: String,
    /// The bucket's start, in milliseconds of the server clock.
    pub at: i64,
    /// Whether the bucket is a second (StorageResolution 1) rather than a minute.
    pub high_res: bool,
}

/// The aggregate of the values put in one bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    pub count: f64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// The distinct values and their counts, while there are at most [`MAX_VALUES`].
    pub values: Option<Vec<(f64, f64)>>,
}

impl Stat {
    fn of(value: f64, count: f64) -> Stat {
        Stat {
            count,
            sum: value * count,
            min: value,
            max: value,
            values: Some(vec![(value, count)]),
        }
    }

    fn add(&mut self, value: f64, count: f64) {
        self.count += count;
        self.sum += value * count;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        if let Some(values) = &mut self.values {
            match values.binary_search_by(|(v, _)| v.total_cmp(&value)) {
                Ok(i) => values[i].1 += count,
                Err(i) if values.len() < MAX_VALUES => values.insert(i, (value, count)),
                Err(_) => self.values = None,
            }
        }
    }
}

/// One datum a service publishes.
#[derive(Debug, Clone)]
pub struct Datum<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    /// Dimensions as (name, value), in any order.
    pub dims: &'a [(&'a str, &'a str)],
    pub value: f64,
    /// How many times the value was seen (1 for a single value).
    pub count: f64,
    pub unit: &'a str,
    /// When, in milliseconds of the server clock.
    pub at: i64,
    pub high_res: bool,
}

impl<'a> Datum<'a> {
    /// One value of a metric, now, at one-minute resolution.
    pub fn new(
        namespace: &'a str,
        name: &'a str,
        dims: &'a [(&'a str, &'a str)],
        value: f64,
        unit: &'a str,
    ) -> Datum<'a> {
        Datum {
            namespace,
            name,
            dims,
            value,
            count: 1.0,
            unit,
            at: crate::timestamp::now_millis(),
            high_res: false,
        }
    }
}

/// A service's reading of its gauges at a time, put into the given [`Metrics`].
pub type Sampler = Arc<dyn Fn(&Metrics, i64) + Send + Sync>;
/// What runs when [`FLUSH_AT`] aggregates wait.
pub type Hook = Arc<dyn Fn() + Send + Sync>;

/// The aggregates waiting for CloudWatch, and the gauges it samples.
#[derive(Default)]
pub struct Metrics {
    pending: Mutex<Pending>,
    samplers: Mutex<Vec<Sampler>>,
    on_full: Mutex<Option<Hook>>,
}

/// The waiting aggregates, found by the hash of their key's parts so that a datum for an
/// aggregate that exists is merged without building (allocating) its key.
#[derive(Default)]
struct Pending {
    /// The hash of a key, to the position of its aggregate in `aggs`. Of two keys with one
    /// hash (rare) only the first is here; the other is found by scanning `aggs`.
    index: HashMap<u64, usize, BuildHasherDefault<Prehashed>>,
    aggs: Vec<(Key, Stat)>,
}

impl Pending {
    /// Merges a datum whose key hashes to `hash`; tells how many aggregates wait.
    fn merge(&mut self, hash: u64, place: (&str, &str), d: &Datum<'_>, at: i64) -> usize {
        let same = |key: &Key| key.matches(place, d, at);
        let found = match self.index.get(&hash) {
            Some(&i) if same(&self.aggs[i].0) => Some(i),
            Some(_) => self.aggs.iter().position(|(key, _)| same(key)),
            None => None,
        };
        match found {
            Some(i) => self.aggs[i].1.add(d.value, d.count),
            None => {
                self.index.entry(hash).or_insert(self.aggs.len());
                self.aggs
                    .push((Key::of(place, d, at), Stat::of(d.value, d.count)));
            }
        }
        self.aggs.len()
    }
}

impl Key {
    fn of((account, region): (&str, &str), d: &Datum<'_>, at: i64) -> Key {
        let mut dims: Vec<(String, String)> = d
            .dims
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        dims.sort();
        Key {
            account: account.to_string(),
            region: region.to_string(),
            namespace: d.namespace.to_string(),
            name: d.name.to_string(),
            dims,
            unit: d.unit.to_string(),
            at,
            high_res: d.high_res,
        }
    }

    /// Whether this is the key of `d` (dimensions in any order) in its bucket at `at`.
    fn matches(&self, (account, region): (&str, &str), d: &Datum<'_>, at: i64) -> bool {
        self.at == at
            && self.high_res == d.high_res
            && self.name == d.name
            && self.namespace == d.namespace
            && self.unit == d.unit
            && self.account == account
            && self.region == region
            && self.dims.len() == d.dims.len()
            && d.dims.iter().all(|(n, v)| {
                self.dims
                    .binary_search_by(|(sn, _)| sn.as_str().cmp(n))
                    .is_ok_and(|i| self.dims[i].1 == *v)
            })
    }
}

/// The hash of a datum's key: FxHash's multiply-rotate over its parts, without
/// allocating; the dimensions are combined so that their order does not matter.
fn hash_key((account, region): (&str, &str), d: &Datum<'_>, at: i64) -> u64 {
    let mut h = fx_str(0, account);
    for part in [region, d.namespace, d.name, d.unit] {
        h = fx_str(h, part);
    }
    let dims = d.dims.iter().fold(0u64, |acc, (n, v)| {
        acc.wrapping_add(fx_str(fx_str(0, n), v))
    });
    h = fx(h, dims);
    h = fx(h, at as u64 ^ u64::from(d.high_res));
    // The high bits choose the table's control bytes: fold the well-mixed ones down too.
    h ^ (h >> 29)
}

fn fx(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// FxHash of a string: eight bytes a word, the rest in one more, then the length.
fn fx_str(mut h: u64, s: &str) -> u64 {
    let mut words = s.as_bytes().chunks_exact(8);
    for word in &mut words {
        h = fx(h, <[u8; 8]>::try_from(word).map_or(0, u64::from_le_bytes));
    }
    let rest = words
        .remainder()
        .iter()
        .rev()
        .fold(0u64, |w, &b| (w << 8) | u64::from(b));
    fx(fx(h, rest), s.len() as u64)
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// Merges a datum into its bucket's aggregate. Only the first datum of an aggregate
    /// allocates (its key); the rest hash the datum's parts and add to the numbers.
    pub fn put(&self, account: &str, region: &str, d: &Datum<'_>) {
        let bucket = if d.high_res { 1000 } else { 60_000 };
        let at = d.at - d.at.rem_euclid(bucket);
        let place = (account, region);
        let hash = hash_key(place, d, at);
        let waiting = locked(&self.pending).merge(hash, place, d, at);
        if waiting == FLUSH_AT {
            if let Some(hook) = locked(&self.on_full).clone() {
                hook();
            }
        }
    }

    /// Takes every waiting aggregate.
    pub fn take(&self) -> Vec<(Key, Stat)> {
        let mut pending = locked(&self.pending);
        pending.index.clear();
        std::mem::take(&mut pending.aggs)
    }

    /// Drops every waiting aggregate (the server's reset).
    pub fn clear(&self) {
        *locked(&self.pending) = Pending::default();
    }

    /// Sets what runs when [`FLUSH_AT`] aggregates wait.
    pub fn on_full(&self, hook: Hook) {
        *locked(&self.on_full) = Some(hook);
    }

    /// Adds a service's gauges to those [`Metrics::sample`] reads.
    pub fn add_sampler(&self, sampler: Sampler) {
        locked(&self.samplers).push(sampler);
    }

    /// Reads every gauge as it is at `at`, into a new set of aggregates.
    pub fn sample(&self, at: i64) -> Vec<(Key, Stat)> {
        let samplers = locked(&self.samplers).clone();
        let out = Metrics::default();
        for sampler in samplers {
            sampler(&out, at);
        }
        out.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datum<'a>(dims: &'a [(&'a str, &'a str)], value: f64, at: i64) -> Datum<'a> {
        Datum {
            at,
            ..Datum::new("AWS/SQS", "NumberOfMessagesSent", dims, value, "Count")
        }
    }

    #[test]
    fn data_of_one_metric_and_minute_merge_into_one_aggregate() {
        let m = Metrics::default();
        m.put("1", "r", &datum(&[("QueueName", "q")], 1.0, 60_000));
        m.put("1", "r", &datum(&[("QueueName", "q")], 3.0, 119_999));
        m.put("1", "r", &datum(&[("QueueName", "q")], 2.0, 120_000));
        let mut taken = m.take();
        taken.sort_by_key(|(k, _)| k.at);
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].0.at, 60_000);
        assert_eq!(
            (
                taken[0].1.count,
                taken[0].1.sum,
                taken[0].1.min,
                taken[0].1.max
            ),
            (2.0, 4.0, 1.0, 3.0)
        );
        assert_eq!(taken[0].1.values, Some(vec![(1.0, 1.0), (3.0, 1.0)]));
        assert!(m.take().is_empty());
    }

    #[test]
    fn dimensions_are_sorted_so_their_order_does_not_matter() {
        let m = Metrics::default();
        m.put("1", "r", &datum(&[("b", "2"), ("a", "1")], 1.0, 0));
        m.put("1", "r", &datum(&[("a", "1"), ("b", "2")], 1.0, 0));
        assert_eq!(m.take().len(), 1);
    }

    #[test]
    fn keys_of_one_hash_keep_their_own_aggregates() {
        let mut pending = Pending::default();
        let (a, b) = (
            datum(&[("QueueName", "a")], 1.0, 0),
            datum(&[("QueueName", "b")], 2.0, 0),
        );
        for d in [&a, &b, &a, &b, &b] {
            pending.merge(7, ("1", "r"), d, 0);
        }
        let counts: Vec<(String, f64)> = pending
            .aggs
            .iter()
            .map(|(k, s)| (k.dims[0].1.clone(), s.count))
            .collect();
        assert_eq!(counts, [("a".to_string(), 2.0), ("b".to_string(), 3.0)]);
    }

    #[test]
    fn the_hook_runs_once_flush_at_aggregates_wait() {
        let m = Metrics::default();
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = runs.clone();
        m.on_full(Arc::new(move || {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }));
        for i in 0..FLUSH_AT as i64 + 5 {
            m.put("1", "r", &datum(&[], 1.0, i * 60_000));
        }
        assert_eq!(runs.load(std::sync::atomic::Ordering::Relaxed), 1);
    }

    #[test]
    fn samplers_report_into_their_own_set() {
        let m = Metrics::default();
        m.add_sampler(Arc::new(|out: &Metrics, at| {
            out.put("1", "r", &datum(&[("QueueName", "q")], 5.0, at));
        }));
        let sampled = m.sample(60_000);
        assert_eq!(sampled.len(), 1);
        assert!(m.take().is_empty());
    }
}
