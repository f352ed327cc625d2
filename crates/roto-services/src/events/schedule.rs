//! Scheduled rules: their `rate(...)` and `cron(...)` expressions (read by the grammar
//! Scheduler shares, [`crate::cron`]), and the task that fires them.
//!
//! The task wakes every second and asks [`Events::tick`] which enabled scheduled rules are
//! due at the service's clock; a due rule sends AWS's `Scheduled Event` to its targets and
//! records when it fired. Tests drive `tick` with any time, so none waits for a minute.

use std::sync::Weak;
use std::time::Duration;

use roto_core::store::Cached;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult};
use serde_json::json;

use super::put_events::event_time;
use super::rules::{Rule, RULE_COLUMNS};
use super::{new_id, Events};
use crate::cron::{self, Dialect};

const MINUTE: i64 = 60_000;

/// A parsed schedule expression: EventBridge rules take `rate(...)` and `cron(...)`.
pub(super) use crate::cron::Expression as Schedule;

/// Parses a rule's schedule expression, else AWS's `ValidationException`.
pub(super) fn parse(text: &str) -> AwsResult<Schedule> {
    cron::parse(text, Dialect::Rules)
        .ok_or_else(|| AwsError::validation("Parameter ScheduleExpression is not valid."))
}

/// When a rule last fired, or should first be due from (its creation).
fn since(rule: &Rule) -> EpochMillis {
    rule.last_fired.unwrap_or(rule.created)
}

/// The time a rule fires at, if it is due at `now`.
fn due(rule: &Rule, schedule: &Schedule, now: EpochMillis) -> Option<EpochMillis> {
    let since = since(rule);
    match schedule {
        Schedule::Rate(period) => {
            let periods = (now - since) / period;
            (periods >= 1).then(|| since + periods * period)
        }
        Schedule::Cron(fields) => {
            let minute = now - now.rem_euclid(MINUTE);
            (minute > since - since.rem_euclid(MINUTE) && cron::matches_utc(fields, minute))
                .then_some(minute)
        }
        Schedule::At(_) => None,
    }
}

impl Events {
    /// Fires every enabled scheduled rule due at `now`; returns how many fired.
    pub(super) fn tick(&self, now: EpochMillis) -> AwsResult<usize> {
        let rules: Vec<Rule> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {RULE_COLUMNS} FROM events_rules
                 WHERE schedule IS NOT NULL AND state = 'ENABLED'"
            ))?;
            let rows = stmt.query_map([], Rule::from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let mut fired = 0;
        for rule in rules {
            let Some(Ok(schedule)) = rule.schedule.as_deref().map(parse) else {
                continue;
            };
            let Some(at) = due(&rule, &schedule, now) else {
                continue;
            };
            self.env.store.with(|c| {
                c.execute_cached(
                    "UPDATE events_rules SET last_fired = ?5
                     WHERE account = ?1 AND region = ?2 AND bus = ?3 AND name = ?4",
                    rusqlite::params![rule.account, rule.region, rule.bus, rule.name, at],
                )?;
                Ok::<_, AwsError>(())
            })?;
            let event = json!({
                "version": "0",
                "id": new_id(),
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "account": rule.account,
                "time": event_time(at),
                "region": rule.region,
                "resources": [rule.arn()],
                "detail": {},
            });
            self.fire(&rule, &event)?;
            fired += 1;
        }
        Ok(fired)
    }
}

/// Starts the task that ticks every second of the clock (at once when it is advanced)
/// until the service is gone.
pub(super) fn spawn(events: Weak<Events>) {
    tokio::spawn(async move {
        loop {
            roto_core::timestamp::sleep(Duration::from_secs(1)).await;
            let Some(events) = events.upgrade() else {
                return;
            };
            if let Err(e) = events.tick(events.now()) {
                tracing::warn!("scheduled rules: {}", e.message);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use roto_core::store::{Store, StoreMode};
    use roto_core::{Context, Env, Value};
    use std::sync::Arc;

    /// 2026-01-05T00:00:00Z, a Monday.
    const MONDAY: EpochMillis = 1_767_571_200_000;

    fn clock() -> EpochMillis {
        MONDAY
    }

    #[tokio::test]
    async fn tick_fires_rate_rules_once_per_period_and_skips_disabled_ones() {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            100,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        let events = Events {
            docs: crate::documents::Documents::new(
                env.clone(),
                "events_items",
                super::super::ITEMS_SCHEMA,
            ),
            env,
            clock,
            tokens: Default::default(),
        };
        let ctx = Context {
            account: "000000000000".into(),
            region: "us-east-1".into(),
            access_key: None,
            request_id: "r".into(),
            host: String::new(),
        };
        events.env.store.migrate(super::super::SCHEMA).unwrap();
        let rule = |name: &str, expr: &str| {
            Value::map()
                .with("Name", name)
                .with("ScheduleExpression", expr)
        };
        events
            .put_rule(&ctx, &rule("every5", "rate(5 minutes)"))
            .unwrap();
        events
            .put_rule(
                &ctx,
                &rule("off", "rate(1 minute)").with("State", "DISABLED"),
            )
            .unwrap();
        assert_eq!(events.tick(MONDAY + 4 * MINUTE).unwrap(), 0);
        assert_eq!(events.tick(MONDAY + 5 * MINUTE).unwrap(), 1);
        assert_eq!(events.tick(MONDAY + 6 * MINUTE).unwrap(), 0);
        assert_eq!(events.tick(MONDAY + 10 * MINUTE).unwrap(), 1);
    }
}
