//! Rules, their targets, and tags on buses and rules.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::buses::{bad_token, no_bus};
use super::{bus_arn, bus_name, not_found, rule_arn, schedule, Events, DEFAULT_BUS};
use crate::paging;
use crate::pattern::{Dialect, Pattern};

/// How many targets a rule may have.
const MAX_TARGETS: usize = 5;

/// A stored rule.
pub(super) struct Rule {
    pub(super) account: String,
    pub(super) region: String,
    pub(super) bus: String,
    pub(super) name: String,
    pub(super) pattern: Option<String>,
    pub(super) schedule: Option<String>,
    pub(super) state: String,
    pub(super) description: Option<String>,
    pub(super) role_arn: Option<String>,
    pub(super) created: i64,
    pub(super) last_fired: Option<i64>,
}

/// The columns [`Rule::from_row`] reads.
pub(super) const RULE_COLUMNS: &str =
    "account, region, bus, name, pattern, schedule, state, description, role_arn, created, last_fired";

impl Rule {
    pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Rule> {
        Ok(Rule {
            account: r.get(0)?,
            region: r.get(1)?,
            bus: r.get(2)?,
            name: r.get(3)?,
            pattern: r.get(4)?,
            schedule: r.get(5)?,
            state: r.get(6)?,
            description: r.get(7)?,
            role_arn: r.get(8)?,
            created: r.get(9)?,
            last_fired: r.get(10)?,
        })
    }

    pub(super) fn arn(&self) -> String {
        rule_arn(&self.account, &self.region, &self.bus, &self.name)
    }

    fn value(&self) -> Value {
        Value::map()
            .with("Name", self.name.as_str())
            .with("Arn", self.arn())
            .with_opt("EventPattern", self.pattern.as_deref())
            .with_opt("ScheduleExpression", self.schedule.as_deref())
            .with("State", self.state.as_str())
            .with_opt("Description", self.description.as_deref())
            .with_opt("RoleArn", self.role_arn.as_deref())
            .with("EventBusName", self.bus.as_str())
    }
}

/// `ResourceNotFoundException` for a rule.
fn no_rule(rule: &str, bus: &str) -> AwsError {
    not_found(format!("Rule {rule} does not exist on EventBus {bus}."))
}

/// `InvalidEventPatternException` in AWS's words.
pub(super) fn invalid_pattern(reason: &str) -> AwsError {
    AwsError::new(
        "InvalidEventPatternException",
        format!("Event pattern is not valid. Reason: {reason}"),
    )
    .with_status(400)
}

/// Parses an event pattern as EventBridge does.
pub(super) fn parse_pattern(text: &str) -> AwsResult<Pattern> {
    Pattern::parse(text, Dialect::EventBridge).map_err(|e| invalid_pattern(&e.reason))
}

/// The `Tags` member as key/value pairs.
fn tag_pairs(input: &Value) -> Vec<(String, String)> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|t| Some((t.str("Key")?.to_string(), t.str("Value")?.to_string())))
        .collect()
}

impl Events {
    /// The rule named in `input` (`Name` or `Rule`) on its bus.
    pub(super) fn find_rule(&self, ctx: &Context, bus: &str, name: &str) -> AwsResult<Rule> {
        self.env
            .store
            .with(|c| {
                c.prepare_cached(&format!(
                    "SELECT {RULE_COLUMNS} FROM events_rules
                     WHERE account = ?1 AND region = ?2 AND bus = ?3 AND name = ?4"
                ))?
                .query_row([&ctx.account, &ctx.region, bus, name], Rule::from_row)
                .optional()
                .map_err(AwsError::from)
            })?
            .ok_or_else(|| no_rule(name, bus))
    }

    /// The enabled rules of a bus.
    pub(super) fn bus_rules(&self, account: &str, region: &str, bus: &str) -> AwsResult<Vec<Rule>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {RULE_COLUMNS} FROM events_rules
                 WHERE account = ?1 AND region = ?2 AND bus = ?3 ORDER BY name"
            ))?;
            let rows = stmt.query_map([account, region, bus], Rule::from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    /// The targets of a rule, in the order they were first put.
    pub(super) fn targets(&self, rule: &Rule) -> AwsResult<Vec<Value>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT target FROM events_targets
                 WHERE account = ?1 AND region = ?2 AND bus = ?3 AND rule = ?4 ORDER BY seq, id",
            )?;
            let rows = stmt
                .query_map([&rule.account, &rule.region, &rule.bus, &rule.name], |r| {
                    r.get::<_, String>(0)
                })?;
            let mut targets = Vec::new();
            for row in rows {
                let json: serde_json::Value = serde_json::from_str(&row?).unwrap_or_default();
                targets.push(Value::from_json(&json));
            }
            Ok(targets)
        })
    }

    pub(super) fn put_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let bus = bus_name(input, "EventBusName");
        let pattern = input.str("EventPattern").filter(|s| !s.is_empty());
        let schedule_expr = input.str("ScheduleExpression").filter(|s| !s.is_empty());
        if pattern.is_none() && schedule_expr.is_none() {
            return Err(AwsError::validation(
                "Parameter(s) EventPattern or ScheduleExpression must be specified.",
            ));
        }
        if let Some(p) = pattern {
            parse_pattern(p)?;
        }
        if let Some(s) = schedule_expr {
            if bus != DEFAULT_BUS {
                return Err(AwsError::validation(
                    "ScheduleExpression is supported only on the default event bus.",
                ));
            }
            schedule::parse(s)?;
        }
        if !self.bus_exists(ctx, &bus)? {
            return Err(no_bus(&bus));
        }
        let state = input.str("State").unwrap_or("ENABLED");
        let now = self.now();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO events_rules
                 (account, region, bus, name, pattern, schedule, state, description, role_arn, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (account, region, bus, name) DO UPDATE SET
                 pattern = ?5, schedule = ?6, state = ?7, description = ?8, role_arn = ?9",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    bus,
                    name,
                    pattern,
                    schedule_expr,
                    state,
                    input.str("Description"),
                    input.str("RoleArn"),
                    now
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        let arn = rule_arn(&ctx.account, &ctx.region, &bus, name);
        self.set_tags(&arn, input)?;
        Ok(Value::map().with("RuleArn", arn))
    }

    pub(super) fn describe_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let rule = self.find_rule(ctx, &bus, input.str("Name").unwrap_or_default())?;
        Ok(rule.value().with("CreatedBy", ctx.account.as_str()))
    }

    pub(super) fn list_rules(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        if !self.bus_exists(ctx, &bus)? {
            return Err(no_bus(&bus));
        }
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let items = self
            .bus_rules(&ctx.account, &ctx.region, &bus)?
            .iter()
            .filter(|r| r.name.starts_with(prefix))
            .map(Rule::value)
            .collect();
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map().with("Rules", page).with_opt("NextToken", next))
    }

    pub(super) fn set_rule_state(
        &self,
        ctx: &Context,
        input: &Value,
        state: &str,
    ) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let rule = self.find_rule(ctx, &bus, input.str("Name").unwrap_or_default())?;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE events_rules SET state = ?5
                 WHERE account = ?1 AND region = ?2 AND bus = ?3 AND name = ?4",
                [&ctx.account, &ctx.region, &bus, &rule.name, state],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn delete_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let Ok(rule) = self.find_rule(ctx, &bus, input.str("Name").unwrap_or_default()) else {
            return Ok(Value::map());
        };
        let force = input.bool("Force").unwrap_or(false);
        if !force && !self.targets(&rule)?.is_empty() {
            return Err(AwsError::validation(
                "Rule can't be deleted since it has targets.",
            ));
        }
        let arn = rule.arn();
        self.env.store.transaction(|tx| {
            for table in ["events_rules", "events_targets"] {
                let column = if table == "events_rules" { "name" } else { "rule" };
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND bus = ?3 AND {column} = ?4"
                    ),
                    [&ctx.account, &ctx.region, &bus, &rule.name],
                )?;
            }
            tx.execute_cached("DELETE FROM events_tags WHERE arn = ?1", [&arn])?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn put_targets(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let rule = self.find_rule(ctx, &bus, input.str("Rule").unwrap_or_default())?;
        let targets = input.get("Targets").and_then(Value::as_list).unwrap_or(&[]);
        for target in targets {
            check_target(target)?;
        }
        let existing: Vec<String> = self
            .targets(&rule)?
            .iter()
            .filter_map(|t| t.str("Id").map(str::to_string))
            .collect();
        let mut ids = existing.clone();
        for target in targets {
            let id = target.str("Id").unwrap_or_default().to_string();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.len() > MAX_TARGETS {
            return Err(AwsError::new(
                "LimitExceededException",
                "The requested resource exceeds the maximum number allowed.",
            )
            .with_status(400));
        }
        self.env.store.transaction(|tx| {
            for target in targets {
                let id = target.str("Id").unwrap_or_default();
                let seq = ids.iter().position(|i| i == id).unwrap_or(0) as i64;
                tx.execute_cached(
                    "INSERT INTO events_targets (account, region, bus, rule, id, arn, target, seq)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT (account, region, bus, rule, id) DO UPDATE SET arn = ?6, target = ?7",
                    rusqlite::params![
                        ctx.account,
                        ctx.region,
                        bus,
                        rule.name,
                        id,
                        target.str("Arn").unwrap_or_default(),
                        target.to_json().to_string(),
                        seq
                    ],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("FailedEntryCount", 0i64)
            .with("FailedEntries", Vec::<Value>::new()))
    }

    pub(super) fn remove_targets(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let rule = self.find_rule(ctx, &bus, input.str("Rule").unwrap_or_default())?;
        let ids = input.get("Ids").and_then(Value::as_list).unwrap_or(&[]);
        self.env.store.transaction(|tx| {
            for id in ids.iter().filter_map(Value::as_str) {
                tx.execute_cached(
                    "DELETE FROM events_targets
                     WHERE account = ?1 AND region = ?2 AND bus = ?3 AND rule = ?4 AND id = ?5",
                    [&ctx.account, &ctx.region, &bus, &rule.name, id],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("FailedEntryCount", 0i64)
            .with("FailedEntries", Vec::<Value>::new()))
    }

    pub(super) fn list_targets_by_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let rule = self.find_rule(ctx, &bus, input.str("Rule").unwrap_or_default())?;
        let (page, next) = paging::page(
            self.targets(&rule)?,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("Targets", page)
            .with_opt("NextToken", next))
    }

    pub(super) fn list_rule_names_by_target(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        let arn = input.str("TargetArn").unwrap_or_default();
        let names: Vec<Value> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT rule FROM events_targets
                 WHERE account = ?1 AND region = ?2 AND bus = ?3 AND arn = ?4 ORDER BY rule",
            )?;
            let rows = stmt.query_map([&ctx.account, &ctx.region, &bus, arn], |r| {
                r.get::<_, String>(0)
            })?;
            rows.map(|r| r.map(Value::String))
                .collect::<Result<Vec<_>, _>>()
                .map_err(AwsError::from)
        })?;
        let (page, next) = paging::page(
            names,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("RuleNames", page)
            .with_opt("NextToken", next))
    }

    /// Stores the `Tags` of `input` on `arn`.
    pub(super) fn set_tags(&self, arn: &str, input: &Value) -> AwsResult<()> {
        let tags = tag_pairs(input);
        self.env.store.transaction(|tx| {
            for (k, v) in &tags {
                tx.execute_cached(
                    "INSERT INTO events_tags (arn, key, value) VALUES (?1, ?2, ?3)
                     ON CONFLICT (arn, key) DO UPDATE SET value = ?3",
                    [arn, k, v],
                )?;
            }
            Ok::<_, AwsError>(())
        })
    }

    /// Checks that a bus or rule ARN names something that exists.
    fn check_resource(&self, ctx: &Context, arn: &str) -> AwsResult<()> {
        let resource = arn.splitn(6, ':').nth(5).unwrap_or_default();
        if let Some(bus) = resource.strip_prefix("event-bus/") {
            if bus_arn(ctx, bus) == arn && self.bus_exists(ctx, bus)? {
                return Ok(());
            }
            return Err(no_bus(bus));
        }
        if let Some(path) = resource.strip_prefix("rule/") {
            let (bus, name) = path.rsplit_once('/').unwrap_or((DEFAULT_BUS, path));
            let rule = self.find_rule(ctx, bus, name)?;
            if rule.arn() == arn {
                return Ok(());
            }
            return Err(no_rule(name, bus));
        }
        Err(not_found(format!("Resource {arn} does not exist.")))
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceARN").unwrap_or_default();
        self.check_resource(ctx, arn)?;
        self.set_tags(arn, input)?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceARN").unwrap_or_default();
        self.check_resource(ctx, arn)?;
        let keys = input.get("TagKeys").and_then(Value::as_list).unwrap_or(&[]);
        self.env.store.transaction(|tx| {
            for key in keys.iter().filter_map(Value::as_str) {
                tx.execute_cached(
                    "DELETE FROM events_tags WHERE arn = ?1 AND key = ?2",
                    [arn, key],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_for_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceARN").unwrap_or_default();
        self.check_resource(ctx, arn)?;
        let tags: Vec<Value> = self.env.store.with(|c| {
            let mut stmt =
                c.prepare_cached("SELECT key, value FROM events_tags WHERE arn = ?1 ORDER BY key")?;
            let rows = stmt.query_map([arn], |r| {
                Ok(Value::map()
                    .with("Key", r.get::<_, String>(0)?)
                    .with("Value", r.get::<_, String>(1)?))
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        Ok(Value::map().with("Tags", tags))
    }
}

/// Checks one target of PutTargets as AWS does before storing any.
fn check_target(target: &Value) -> AwsResult<()> {
    let arn = target.str("Arn").unwrap_or_default();
    if !arn.starts_with("arn:") || arn.split(':').count() < 6 {
        return Err(AwsError::validation(format!(
            "Parameter {arn} is not valid. Reason: Provided Arn is not in correct format."
        )));
    }
    if arn.starts_with("arn:aws:sqs:")
        && arn.ends_with(".fifo")
        && target
            .get("SqsParameters")
            .and_then(|p| p.str("MessageGroupId"))
            .is_none()
    {
        return Err(AwsError::validation(format!(
            "Parameter(s) SqsParameters must be specified for target: {}.",
            target.str("Id").unwrap_or_default()
        )));
    }
    let forms = ["Input", "InputPath", "InputTransformer"]
        .iter()
        .filter(|m| target.get(m).is_some())
        .count();
    if forms > 1 {
        return Err(AwsError::validation(
            "Only one of Input, InputPath, or InputTransformer must be provided.",
        ));
    }
    if let Some(text) = target.str("Input") {
        if serde_json::from_str::<serde_json::Value>(text).is_err() {
            return Err(AwsError::validation("Input is not a valid JSON text."));
        }
    }
    if let Some(path) = target.str("InputPath") {
        if super::put_events::parse_path(path).is_none() {
            return Err(AwsError::validation(format!(
                "Parameter InputPath is not valid. Reason: {path} is not a valid JsonPath."
            )));
        }
    }
    if let Some(paths) = target
        .get("InputTransformer")
        .and_then(|t| t.get("InputPathsMap"))
        .and_then(Value::as_map)
    {
        for (key, path) in paths {
            let path = path.as_str().unwrap_or_default();
            if super::put_events::parse_path(path).is_none() {
                return Err(AwsError::validation(format!(
                    "Input transformer path {path} for key {key} is not a valid JsonPath."
                )));
            }
        }
    }
    Ok(())
}
