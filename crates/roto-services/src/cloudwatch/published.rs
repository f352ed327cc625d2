//! The metrics Roto's services publish about themselves (`roto_core::metrics`), taken into
//! CloudWatch's store off the request path: before each CloudWatch call, before alarms are
//! evaluated, and when many wait. Gauges (SQS queue depths) are read once per minute of
//! the server clock, after it ends (AWS too reports them late), when CloudWatch looks:
//! each minute that ended since the last sample, up to a day (the furthest an alarm
//! evaluation looks back), is read as at its end.

use std::sync::{Arc, Weak};

use roto_core::metrics::{Key, Stat};
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context};

use super::metrics::{MetricKey, StoredDatum};
use super::stats::Agg;
use super::Inner;

const MINUTE_MS: i64 = 60_000;
/// The most minutes one sampling fills.
const MAX_FILL: i64 = 24 * 60;

/// Has CloudWatch take the waiting data into its store once many wait, on a task of its
/// own (the publishing request only spawns it).
pub(super) fn take_when_full(inner: &Arc<Inner>) {
    let weak: Weak<Inner> = Arc::downgrade(inner);
    inner.env.metrics.on_full(Arc::new(move || {
        let Some(inner) = weak.upgrade() else { return };
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(async move {
                if let Err(e) = inner.absorb() {
                    tracing::warn!("cloudwatch: {}", e.message);
                }
            });
        }
    }));
}

impl Inner {
    /// Stores what the services published, and the gauges of the minutes since the last
    /// sample.
    pub(super) fn absorb(&self) -> AwsResult<()> {
        let now = now_millis();
        let mut taken = self.env.metrics.take();
        taken.extend(self.sample_gauges(now));
        if taken.is_empty() {
            return Ok(());
        }
        taken.sort_by(|(a, _), (b, _)| (&a.account, &a.region).cmp(&(&b.account, &b.region)));
        let data: Vec<(Key, MetricKey, Agg)> = taken
            .into_iter()
            .map(|(key, stat)| {
                let metric = MetricKey {
                    namespace: key.namespace.clone(),
                    name: key.name.clone(),
                    dims: key.dims.clone(),
                };
                (key, metric, Agg::published(stat))
            })
            .collect();
        for place in
            data.chunk_by(|(a, ..), (b, ..)| (&a.account, &a.region) == (&b.account, &b.region))
        {
            let stored: Vec<StoredDatum<'_>> = place
                .iter()
                .map(|(key, metric, agg)| StoredDatum {
                    key: metric,
                    at: key.at,
                    unit: &key.unit,
                    high_res: key.high_res,
                    agg,
                })
                .collect();
            let first = &place[0].0;
            self.record(
                &Context::internal(&first.account, &first.region),
                &stored,
                now,
            )?;
        }
        Ok(())
    }

    /// The gauges of each minute that ended since the last sample (only the last one on
    /// the first), read at its end; nothing while that minute is sampled already.
    fn sample_gauges(&self, now: i64) -> Vec<(Key, Stat)> {
        let ended = now - now.rem_euclid(MINUTE_MS) - MINUTE_MS;
        let first = {
            let mut last = self.sampled.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|l| l >= ended) {
                return Vec::new();
            }
            let first = match *last {
                Some(l) => (l + MINUTE_MS).max(ended - (MAX_FILL - 1) * MINUTE_MS),
                None => ended,
            };
            *last = Some(ended);
            first
        };
        (first..=ended)
            .step_by(MINUTE_MS as usize)
            .flat_map(|m| self.env.metrics.sample(m + MINUTE_MS - 1))
            .collect()
    }
}
