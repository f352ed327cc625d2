//! Event buses: the implicit `default` bus and custom buses.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::{json, Value as Json};

use super::{bus_arn, bus_name, not_found, Events, DEFAULT_BUS};
use crate::paging;

/// What a bus listing and description show.
struct Bus {
    name: String,
    description: Option<String>,
    created: Option<i64>,
}

impl Bus {
    fn value(&self, ctx: &Context) -> Value {
        Value::map()
            .with("Name", self.name.as_str())
            .with("Arn", bus_arn(ctx, &self.name))
            .with_opt("Description", self.description.as_deref())
            .with_opt("CreationTime", self.created.map(Value::Timestamp))
            .with_opt("LastModifiedTime", self.created.map(Value::Timestamp))
    }
}

/// `ResourceNotFoundException` for a bus.
pub(super) fn no_bus(bus: &str) -> AwsError {
    not_found(format!("Event bus {bus} does not exist."))
}

impl Events {
    /// Whether a bus exists in the caller's account and region.
    pub(super) fn bus_exists(&self, ctx: &Context, bus: &str) -> AwsResult<bool> {
        Ok(bus == DEFAULT_BUS || self.find_bus(ctx, bus)?.is_some())
    }

    fn find_bus(&self, ctx: &Context, bus: &str) -> AwsResult<Option<Bus>> {
        if bus == DEFAULT_BUS {
            return Ok(Some(Bus {
                name: DEFAULT_BUS.into(),
                description: None,
                created: None,
            }));
        }
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT description, created FROM events_buses
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, bus], |r| {
                Ok(Bus {
                    name: bus.to_string(),
                    description: r.get(0)?,
                    created: r.get(1)?,
                })
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    pub(super) fn create_event_bus(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        if name.contains('/') && input.str("EventSourceName").is_none() {
            return Err(AwsError::validation(format!(
                "Event bus name must not contain '/'. Name: {name}"
            )));
        }
        if self.bus_exists(ctx, name)? {
            return Err(AwsError::new(
                "ResourceAlreadyExistsException",
                format!("Event bus {name} already exists."),
            )
            .with_status(400));
        }
        let now = self.now();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO events_buses (account, region, name, description, created)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![ctx.account, ctx.region, name, input.str("Description"), now],
            )?;
            Ok::<_, AwsError>(())
        })?;
        let arn = bus_arn(ctx, name);
        self.set_tags(&arn, input)?;
        Ok(Value::map()
            .with("EventBusArn", arn)
            .with_opt("Description", input.str("Description")))
    }

    pub(super) fn describe_event_bus(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = bus_name(input, "Name");
        let bus = self.find_bus(ctx, &name)?.ok_or_else(|| no_bus(&name))?;
        let policy = self.policy(ctx, &name)?.map(|p| p.to_string());
        Ok(bus.value(ctx).with_opt("Policy", policy))
    }

    /// A bus's resource policy, if it has one.
    fn policy(&self, ctx: &Context, bus: &str) -> AwsResult<Option<Json>> {
        let text: Option<String> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT policy FROM events_policies WHERE account = ?1 AND region = ?2 AND bus = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, bus], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Stores a bus's policy; one without statements is removed.
    fn set_policy(&self, ctx: &Context, bus: &str, policy: &Json) -> AwsResult<()> {
        let empty = policy["Statement"].as_array().is_none_or(Vec::is_empty);
        self.env.store.with(|c| {
            if empty {
                c.execute_cached(
                    "DELETE FROM events_policies WHERE account = ?1 AND region = ?2 AND bus = ?3",
                    [&ctx.account, &ctx.region, bus],
                )?;
            } else {
                c.execute_cached(
                    "INSERT INTO events_policies (account, region, bus, policy) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (account, region, bus) DO UPDATE SET policy = ?4",
                    [&ctx.account, &ctx.region, bus, &policy.to_string()],
                )?;
            }
            Ok::<_, AwsError>(())
        })
    }

    pub(super) fn put_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        if !self.bus_exists(ctx, &bus)? {
            return Err(no_bus(&bus));
        }
        if let Some(text) = input.str("Policy") {
            let policy: Json = serde_json::from_str(text)
                .map_err(|_| AwsError::validation("Policy is not a valid JSON text."))?;
            self.set_policy(ctx, &bus, &policy)?;
            return Ok(Value::map());
        }
        let (Some(sid), Some(principal)) = (input.str("StatementId"), input.str("Principal"))
        else {
            return Err(AwsError::validation(
                "One of the following parameters must be specified: Policy, or (StatementId, Principal, Action).",
            ));
        };
        let action = input.str("Action").unwrap_or("events:PutEvents");
        let principal_json = if principal == "*" {
            json!("*")
        } else {
            json!({"AWS": format!("arn:aws:iam::{principal}:root")})
        };
        let mut statement = json!({
            "Sid": sid,
            "Effect": "Allow",
            "Principal": principal_json,
            "Action": action,
            "Resource": bus_arn(ctx, &bus),
        });
        if let Some(condition) = input.get("Condition") {
            statement["Condition"] = json!({"StringEquals": {
                condition.str("Key").unwrap_or_default(): condition.str("Value").unwrap_or_default()
            }});
        }
        let mut policy = self
            .policy(ctx, &bus)?
            .unwrap_or_else(|| json!({"Version": "2012-10-17", "Statement": []}));
        let statements = policy["Statement"].as_array().cloned().unwrap_or_default();
        let mut kept: Vec<Json> = statements.into_iter().filter(|s| s["Sid"] != sid).collect();
        kept.push(statement);
        policy["Statement"] = Json::Array(kept);
        self.set_policy(ctx, &bus, &policy)?;
        Ok(Value::map())
    }

    pub(super) fn remove_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let bus = bus_name(input, "EventBusName");
        if !self.bus_exists(ctx, &bus)? {
            return Err(no_bus(&bus));
        }
        let Some(mut policy) = self.policy(ctx, &bus)? else {
            return Err(not_found("EventBus does not have a policy."));
        };
        if input.bool("RemoveAllPermissions").unwrap_or(false) {
            self.set_policy(ctx, &bus, &json!({}))?;
            return Ok(Value::map());
        }
        let sid = input.str("StatementId").unwrap_or_default();
        let statements = policy["Statement"].as_array().cloned().unwrap_or_default();
        let before = statements.len();
        let kept: Vec<Json> = statements.into_iter().filter(|s| s["Sid"] != sid).collect();
        if kept.len() == before {
            return Err(not_found("Statement with the provided id does not exist."));
        }
        policy["Statement"] = Json::Array(kept);
        self.set_policy(ctx, &bus, &policy)?;
        Ok(Value::map())
    }

    pub(super) fn update_event_bus(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = bus_name(input, "Name");
        let bus = self.find_bus(ctx, &name)?.ok_or_else(|| no_bus(&name))?;
        let description = input.str("Description").or(bus.description.as_deref());
        if name != DEFAULT_BUS {
            self.env.store.with(|c| {
                c.execute_cached(
                    "UPDATE events_buses SET description = ?4
                     WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![ctx.account, ctx.region, name, description],
                )?;
                Ok::<_, AwsError>(())
            })?;
        }
        Ok(Value::map()
            .with("Arn", bus_arn(ctx, &name))
            .with("Name", name.as_str())
            .with_opt("Description", description))
    }

    pub(super) fn delete_event_bus(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        if name == DEFAULT_BUS {
            return Err(AwsError::validation("Cannot delete event bus default."));
        }
        if !self.bus_rules(&ctx.account, &ctx.region, name)?.is_empty() {
            return Err(AwsError::validation(
                "EventBus can't be deleted since it has rules.",
            ));
        }
        let arn = bus_arn(ctx, name);
        self.env.store.transaction(|tx| {
            tx.execute_cached(
                "DELETE FROM events_buses WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
            )?;
            tx.execute_cached(
                "DELETE FROM events_policies WHERE account = ?1 AND region = ?2 AND bus = ?3",
                [&ctx.account, &ctx.region, name],
            )?;
            tx.execute_cached("DELETE FROM events_tags WHERE arn = ?1", [&arn])?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_event_buses(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let mut buses = vec![Bus {
            name: DEFAULT_BUS.into(),
            description: None,
            created: None,
        }];
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, description, created FROM events_buses
                 WHERE account = ?1 AND region = ?2 ORDER BY name",
            )?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], |r| {
                Ok(Bus {
                    name: r.get(0)?,
                    description: r.get(1)?,
                    created: r.get(2)?,
                })
            })?;
            for row in rows {
                buses.push(row?);
            }
            Ok::<_, AwsError>(())
        })?;
        let items = buses
            .iter()
            .filter(|b| b.name.starts_with(prefix))
            .map(|b| b.value(ctx))
            .collect();
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("EventBuses", page)
            .with_opt("NextToken", next))
    }
}

/// The error for a `NextToken` this service never issued.
pub(super) fn bad_token() -> AwsError {
    AwsError::validation("The NextToken provided is invalid.")
}
