//! Usage plans on REST APIs' data plane, and the usage they count.
//!
//! Throttles are token buckets ([`super::super::throttle`]); a request past one is refused
//! 429 `Too Many Requests`. A stage's method settings (`{path}/{METHOD}`, else
//! `*/*`) throttle every caller of a method; a usage plan's throttle (per method where its
//! API stage names one, else the plan's) throttles each API key on its own.
//!
//! Quotas count each key's requests by UTC day of the server clock, in a `usage` document
//! under the plan (`{"days": {"2026-12-04": 3}, "extra": {period start: granted}}`). A
//! request once the key has used the plan's quota for the current period (a DAY, a WEEK
//! from the offset's weekday, Sunday 0, or a MONTH from the offset's day, 0 the first) is
//! refused 429 `Limit Exceeded`, and is not counted. GetUsage answers the counts as AWS's
//! `[used, remaining]` per day and key (remaining 0 where the plan has no quota);
//! UpdateUsage (`replace /remaining`) sets what is left of the current period.

use std::sync::Mutex;

use jiff::civil::Date;
use jiff::ToSpan;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::super::throttle::{Buckets, Limits};
use super::super::{bad_request, ApiGateway};
use super::event::Routed;
use super::serve::Refusal;
use super::{missing, output, page_of, scope};

/// A day in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// How many days of counts a key keeps (GetUsage reads no further back).
const KEPT_DAYS: i64 = 100;

/// The throttles' buckets, and the lock that makes a quota's read, check and count one step.
#[derive(Default)]
pub struct Meter {
    buckets: Buckets,
    counting: Mutex<()>,
}

/// A method's key in settings and throttles: its resource path without the leading `/`,
/// and its method (`items/{id}/GET`; the root's methods are `GET`).
fn method_key(resource_path: &str, method: &str) -> String {
    normal_key(&format!("{resource_path}/{method}"))
}

/// A settings key as written (`~1items/GET`, `/items/GET`, `items/GET`), as [`method_key`]
/// writes it.
fn normal_key(key: &str) -> String {
    key.replace("~1", "/").trim_start_matches('/').to_string()
}

/// The entry of `map` (settings by method key) for `key`, if any.
fn entry_for<'m>(map: &'m Json, key: &str) -> Option<(&'m String, &'m Json)> {
    map.as_object()?.iter().find(|(k, _)| normal_key(k) == key)
}

/// AWS's refusal of a throttled request.
pub(super) fn throttled() -> Refusal {
    Refusal::new("THROTTLED", "Too Many Requests")
}

/// Today, in days since the epoch on the server clock.
fn today() -> i64 {
    now_millis().div_euclid(DAY_MS)
}

fn epoch() -> Date {
    jiff::civil::date(1970, 1, 1)
}

/// The date of epoch day `day`.
fn date_of(day: i64) -> Date {
    epoch().checked_add(day.days()).unwrap_or(epoch())
}

/// The epoch day of `2026-12-04`, if it is a date.
fn day_of(text: &str) -> Option<i64> {
    let date: Date = text.parse().ok()?;
    date.since(epoch())
        .ok()
        .map(|span| i64::from(span.get_days()))
}

/// The first day of the quota period holding `day`.
fn period_start(quota: &Json, day: i64) -> i64 {
    let offset = quota["offset"].as_i64().unwrap_or(0);
    match quota["period"].as_str() {
        Some("WEEK") => {
            let weekday = (day + 4).rem_euclid(7);
            day - (weekday - offset).rem_euclid(7)
        }
        Some("MONTH") => {
            let date = date_of(day);
            let first = date.first_of_month();
            let start = if i64::from(date.day()) > offset {
                first
            } else {
                first.checked_sub(1.month()).unwrap_or(first)
            };
            day_of(&start.to_string()).unwrap_or(day) + offset
        }
        _ => day,
    }
}

/// A key's counts: requests by day, and what UpdateUsage granted by period start.
#[derive(Default)]
struct Counts {
    days: Map<String, Json>,
    extra: Map<String, Json>,
}

impl Counts {
    fn read(doc: Option<Json>) -> Counts {
        let doc = doc.unwrap_or_default();
        let map = |k: &str| doc[k].as_object().cloned().unwrap_or_default();
        Counts {
            days: map("days"),
            extra: map("extra"),
        }
    }

    fn to_json(&self) -> Json {
        json!({"days": self.days, "extra": self.extra})
    }

    /// Requests on epoch day `day`.
    fn on(&self, day: i64) -> i64 {
        self.days
            .get(&date_of(day).to_string())
            .and_then(Json::as_i64)
            .unwrap_or(0)
    }

    /// Requests from `from` to `to`, both included.
    fn between(&self, from: i64, to: i64) -> i64 {
        self.days
            .iter()
            .filter(|(d, _)| day_of(d).is_some_and(|d| (from..=to).contains(&d)))
            .filter_map(|(_, n)| n.as_i64())
            .sum()
    }

    /// What is left of `quota` at the end of `day` (0 without a quota).
    fn remaining(&self, quota: &Json, day: i64) -> i64 {
        let Some(limit) = quota["limit"].as_i64() else {
            return 0;
        };
        let start = period_start(quota, day);
        let granted = self
            .extra
            .get(&date_of(start).to_string())
            .and_then(Json::as_i64)
            .unwrap_or(0);
        (limit + granted - self.between(start, day)).max(0)
    }

    /// Counts one request today, forgetting days older than [`KEPT_DAYS`].
    fn count(&mut self, day: i64) {
        let used = self.on(day);
        self.days
            .insert(date_of(day).to_string(), Json::from(used + 1));
        self.days
            .retain(|d, _| day_of(d).is_some_and(|d| day - d < KEPT_DAYS));
    }
}

impl ApiGateway {
    /// Throttles a method by the stage's method settings (every caller together).
    pub(super) fn throttle_stage(
        &self,
        routed: &Routed<'_>,
        stage: &Json,
        method: &Json,
    ) -> Result<(), Refusal> {
        let key = method_key(
            routed.resource_path,
            method["httpMethod"].as_str().unwrap_or(&routed.req.method),
        );
        let settings = &stage["methodSettings"];
        let Some((name, limits)) = entry_for(settings, &key)
            .or_else(|| entry_for(settings, "*/*"))
            .and_then(|(name, s)| {
                Limits::read(s, "throttlingRateLimit", "throttlingBurstLimit").map(|l| (name, l))
            })
        else {
            return Ok(());
        };
        let bucket = format!("stage {}/{} {name}", routed.req.api_id, routed.stage);
        if self.meter.buckets.take(bucket, limits, now_millis()) {
            Ok(())
        } else {
            Err(throttled())
        }
    }

    /// Applies usage plan `plan` to API key `key_id` calling `method`: its throttle, then
    /// its quota, counting the request when both let it through.
    pub(super) fn meter_key(
        &self,
        ctx: &Context,
        routed: &Routed<'_>,
        plan: &Json,
        key_id: &str,
        method: &Json,
    ) -> Result<(), Refusal> {
        let plan_id = plan["id"].as_str().unwrap_or_default();
        let key = method_key(
            routed.resource_path,
            method["httpMethod"].as_str().unwrap_or(&routed.req.method),
        );
        let api_stage = plan["apiStages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["apiId"] == routed.req.api_id.as_str() && s["stage"] == routed.stage);
        let per_method = api_stage
            .and_then(|s| entry_for(&s["throttle"], &key))
            .and_then(|(name, t)| Limits::read(t, "rateLimit", "burstLimit").map(|l| (name, l)));
        let throttle = match per_method {
            Some((name, limits)) => Some((
                format!(
                    "plan {plan_id} {key_id} {}/{} {name}",
                    routed.req.api_id, routed.stage
                ),
                limits,
            )),
            None => Limits::read(&plan["throttle"], "rateLimit", "burstLimit")
                .map(|l| (format!("plan {plan_id} {key_id}"), l)),
        };
        if let Some((bucket, limits)) = throttle {
            if !self.meter.buckets.take(bucket, limits, now_millis()) {
                return Err(throttled());
            }
        }
        self.count_request(ctx, plan, key_id)
    }

    /// Checks the plan's quota for the key and counts the request.
    fn count_request(&self, ctx: &Context, plan: &Json, key_id: &str) -> Result<(), Refusal> {
        let plan_id = plan["id"].as_str().unwrap_or_default();
        let place = scope(ctx, "usage", plan_id);
        let failed = || Refusal::new("API_CONFIGURATION_ERROR", "Internal server error");
        let _counting = self
            .meter
            .counting
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut counts = Counts::read(self.store.get(place, key_id).map_err(|_| failed())?);
        let day = today();
        if plan["quota"]["limit"].is_i64() && counts.remaining(&plan["quota"], day) == 0 {
            return Err(Refusal::new("QUOTA_EXCEEDED", "Limit Exceeded"));
        }
        counts.count(day);
        self.store
            .put(place, key_id, &counts.to_json())
            .map_err(|_| failed())
    }

    /// GetUsage and UpdateUsage.
    pub(super) fn usage_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let plan_id = input.str("usagePlanId").unwrap_or_default();
        let plan = self
            .store
            .get(scope(ctx, "usageplan", ""), plan_id)?
            .ok_or_else(|| missing("Usage Plan"))?;
        let keys: Vec<String> = match input.str("keyId") {
            Some(key) => {
                self.store
                    .get(scope(ctx, "usageplankey", plan_id), key)?
                    .ok_or_else(|| missing("Usage Plan Key"))?;
                vec![key.to_string()]
            }
            None => self
                .store
                .list(scope(ctx, "usageplankey", plan_id))?
                .iter()
                .filter_map(|k| k["id"].as_str().map(str::to_string))
                .collect(),
        };
        if operation == "UpdateUsage" {
            let key = keys.first().map(String::as_str).unwrap_or_default();
            self.update_usage(ctx, &plan, key, input)?;
            let day = today();
            return self.usage(ctx, &plan, &keys, (day, day), input);
        }
        let date = |member: &str| {
            let text = input.str(member).unwrap_or_default();
            day_of(text).ok_or_else(|| bad_request(format!("Invalid {member}: {text}")))
        };
        let (start, end) = (date("startDate")?, date("endDate")?);
        if end < start {
            return Err(bad_request(
                "The end date must not be before the start date",
            ));
        }
        if end - start >= KEPT_DAYS {
            return Err(bad_request(format!(
                "The date range must not exceed {KEPT_DAYS} days"
            )));
        }
        self.usage(ctx, &plan, &keys, (start, end), input)
    }

    /// The usage of `keys` from day `range.0` to `range.1`, one page of keys.
    fn usage(
        &self,
        ctx: &Context,
        plan: &Json,
        keys: &[String],
        (start, end): (i64, i64),
        input: &Value,
    ) -> AwsResult<Value> {
        let plan_id = plan["id"].as_str().unwrap_or_default();
        let names = keys.iter().map(|k| Value::from(k.as_str())).collect();
        let (page, next) = page_of(names, input)?;
        let mut items = Map::new();
        for key in page.iter().filter_map(Value::as_str) {
            let counts = Counts::read(self.store.get(scope(ctx, "usage", plan_id), key)?);
            let days: Vec<Json> = (start..=end)
                .map(|d| json!([counts.on(d), counts.remaining(&plan["quota"], d)]))
                .collect();
            items.insert(key.to_string(), Json::Array(days));
        }
        Ok(output(&json!({
            "usagePlanId": plan_id,
            "startDate": date_of(start).to_string(),
            "endDate": date_of(end).to_string(),
            "items": items,
        }))
        .with_opt("position", next))
    }

    /// UpdateUsage's `replace /remaining`: what is left of the key's current period.
    fn update_usage(&self, ctx: &Context, plan: &Json, key: &str, input: &Value) -> AwsResult<()> {
        let quota = &plan["quota"];
        let Some(limit) = quota["limit"].as_i64() else {
            return Err(bad_request("The usage plan has no quota to update"));
        };
        let plan_id = plan["id"].as_str().unwrap_or_default();
        let place = scope(ctx, "usage", plan_id);
        let _counting = self
            .meter
            .counting
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut counts = Counts::read(self.store.get(place, key)?);
        for op in input
            .get("patchOperations")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let (verb, path) = (
                op.str("op").unwrap_or_default(),
                op.str("path").unwrap_or_default(),
            );
            if verb != "replace" || path != "/remaining" {
                return Err(bad_request(format!(
                    "Invalid patch path '{path}' specified for op '{verb}'"
                )));
            }
            let value = op.str("value").unwrap_or_default();
            let remaining: i64 = value
                .parse()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or_else(|| bad_request(format!("Invalid remaining value: {value}")))?;
            let day = today();
            let start = period_start(quota, day);
            let granted = remaining - (limit - counts.between(start, day));
            counts
                .extra
                .insert(date_of(start).to_string(), Json::from(granted));
        }
        self.store.put(place, key, &counts.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_periods_start_on_the_offset_day() {
        let day = day_of("2026-12-04").unwrap();
        assert_eq!(date_of(day).to_string(), "2026-12-04");
        let start = |period, offset| {
            date_of(period_start(
                &json!({"period": period, "offset": offset}),
                day,
            ))
            .to_string()
        };
        assert_eq!(start("DAY", 0), "2026-12-04");
        assert_eq!(start("WEEK", 0), "2026-11-29");
        assert_eq!(start("WEEK", 5), "2026-12-04");
        assert_eq!(start("WEEK", 6), "2026-11-28");
        assert_eq!(start("MONTH", 0), "2026-12-01");
        assert_eq!(start("MONTH", 3), "2026-12-04");
        assert_eq!(start("MONTH", 10), "2026-11-11");
    }

    #[test]
    fn remaining_counts_the_period_and_what_was_granted() {
        let day = day_of("2026-12-04").unwrap();
        let mut counts = Counts::default();
        counts.count(day - 1);
        counts.count(day);
        counts.count(day);
        let daily = json!({"limit": 5, "period": "DAY"});
        assert_eq!(counts.remaining(&daily, day), 3);
        let weekly = json!({"limit": 5, "period": "WEEK"});
        assert_eq!(counts.remaining(&weekly, day), 2);
        counts.extra.insert("2026-11-29".into(), Json::from(10));
        assert_eq!(counts.remaining(&weekly, day), 12);
        assert_eq!(counts.remaining(&json!({}), day), 0);
        counts.count(day + KEPT_DAYS);
        assert_eq!(counts.between(0, day + KEPT_DAYS), 1);
    }

    #[test]
    fn method_keys_match_however_settings_spell_them() {
        let key = method_key("/items/{id}", "GET");
        assert_eq!(key, "items/{id}/GET");
        for spelled in ["~1items~1{id}/GET", "/items/{id}/GET", "items/{id}/GET"] {
            assert_eq!(normal_key(spelled), key);
        }
        assert_eq!(normal_key("*/*"), "*/*");
    }
}
