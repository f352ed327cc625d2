//! EventBridge: event buses, rules, targets and event delivery, over JSON 1.1.
//!
//! - [`buses`]: Create/Describe/Update/Delete/ListEventBuses and the bus policy (Put/
//!   RemovePermission); the `default` bus of every account
//!   and region exists without being created.
//! - [`rules`]: PutRule (event patterns checked by [`crate::pattern`], the matcher SNS
//!   filter policies share; schedule expressions checked by [`schedule`]), Describe/List/
//!   Enable/Disable/DeleteRule, PutTargets/RemoveTargets/ListTargetsByRule,
//!   ListRuleNamesByTarget, and tags on buses and rules.
//! - [`metrics`]: the `AWS/Events` metrics of rules and their targets.
//! - [`put_events`]: PutEvents and TestEventPattern: the event envelope, entry validation,
//!   matching rules, and the input each target receives (Input, InputPath,
//!   InputTransformer).
//! - [`archives`]: Create/Describe/Update/Delete/ListArchives, and StartReplay,
//!   DescribeReplay, CancelReplay, ListReplays.
//! - [`connections`]: Create/Describe/Update/Delete/List/DeauthorizeConnection and
//!   Create/Describe/Update/Delete/ListApiDestinations (stored; credentials never returned).
//! - [`endpoints`]: Create/Describe/Update/Delete/ListEndpoints, global endpoints kept as
//!   configuration (documents of `events_items`).
//! - [`invoke`]: the HTTP request an API destination target receives, with its
//!   connection's authorization (OAuth tokens fetched and cached) and parameters.
//! - [`schedule`]: rate and cron expressions, and the background task that fires due
//!   scheduled rules on the service's clock.
//! - [`fuzz`]: the entry through which `crates/roto-fuzz` reaches schedule expressions.
//!
//! Deliveries go through the event bus: SQS targets are events for `sqs` (payload: a
//! SendMessage input); SNS, Lambda, CloudWatch Logs and other-bus targets are events for
//! `events` itself, whose [`Service::deliver`] makes the calls (`Publish`, `Invoke`,
//! `PutLogEvents`, `PutEvents`) through the dispatcher, so each attempt is traced; API
//! destination targets are events for `events` too, whose attempts are HTTP requests. Other
//! services put events on a bus the same way: S3's EventBridge notifications are events for
//! `events` whose one call is PutEvents.

mod archives;
mod buses;
mod connections;
mod endpoints;
pub mod fuzz;
mod invoke;
mod metrics;
mod put_events;
mod rules;
mod schedule;
mod unmodeled;

use std::io;
use std::sync::{Arc, OnceLock};

use roto_core::dispatch::new_request_id;
use roto_core::events::{DeliveryError, Event};
use roto_core::featureless::{self, Featureless};

use crate::documents::{documents_schema, Documents};
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

/// The document table of global endpoints.
static ITEMS_SCHEMA: &[&str] = &[documents_schema!("events_items")];

static SPEC: ServiceSpec = ServiceSpec {
    name: "events",
    model: "events",
    query_model: None,
    signing_names: &["events"],
    target_prefix: Some("AWSEvents"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS events_buses (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS events_rules (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    bus TEXT NOT NULL,
    name TEXT NOT NULL,
    pattern TEXT,
    schedule TEXT,
    state TEXT NOT NULL,
    description TEXT,
    role_arn TEXT,
    created INTEGER NOT NULL,
    last_fired INTEGER,
    PRIMARY KEY (account, region, bus, name)
);
CREATE TABLE IF NOT EXISTS events_targets (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    bus TEXT NOT NULL,
    rule TEXT NOT NULL,
    id TEXT NOT NULL,
    arn TEXT NOT NULL,
    target TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (account, region, bus, rule, id)
);
CREATE TABLE IF NOT EXISTS events_archives (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    bus TEXT NOT NULL,
    description TEXT,
    pattern TEXT,
    retention INTEGER NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS events_archived (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    archive TEXT NOT NULL,
    time INTEGER NOT NULL,
    event TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events_replays (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    archive TEXT NOT NULL,
    destination TEXT NOT NULL,
    start INTEGER NOT NULL,
    end_time INTEGER NOT NULL,
    started INTEGER NOT NULL,
    last_replayed INTEGER,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS events_policies (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    bus TEXT NOT NULL,
    policy TEXT NOT NULL,
    PRIMARY KEY (account, region, bus)
);
CREATE TABLE IF NOT EXISTS events_connections (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    document TEXT NOT NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS events_api_destinations (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    document TEXT NOT NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS events_tags (
    arn TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (arn, key)
);";

/// The bus every account and region has.
const DEFAULT_BUS: &str = "default";

/// EventBridge: the service the dispatcher holds.
pub struct EventBridge {
    events: Arc<Events>,
    scheduler: OnceLock<()>,
}

/// EventBridge's state and operations, shared with the scheduler task.
struct Events {
    env: Arc<Env>,
    /// Global endpoints.
    docs: Documents,
    clock: fn() -> EpochMillis,
    tokens: invoke::Tokens,
}

impl EventBridge {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<EventBridge> {
        EventBridge::with_clock(env, now_millis)
    }

    /// Creates the service with its own clock, so scheduled rules can be fired in tests
    /// without waiting for real minutes to pass.
    pub fn with_clock(env: Arc<Env>, clock: fn() -> EpochMillis) -> io::Result<EventBridge> {
        env.store.migrate(SCHEMA)?;
        Ok(EventBridge {
            events: Arc::new(Events {
                docs: Documents::new(env.clone(), "events_items", ITEMS_SCHEMA),
                env,
                clock,
                tokens: invoke::Tokens::default(),
            }),
            scheduler: OnceLock::new(),
        })
    }
}

impl Events {
    fn now(&self) -> EpochMillis {
        (self.clock)()
    }
}

impl Service for EventBridge {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn delivery_failed(&self, event: &Event, _error: &str) {
        metrics::failed(&self.events.env, event);
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        // The scheduler starts with the first call, when a runtime surely exists.
        self.scheduler
            .get_or_init(|| schedule::spawn(Arc::downgrade(&self.events)));
        let events = &self.events;
        Box::pin(async move {
            let input = &request.input;
            let output = match operation {
                "CreateEventBus" => events.create_event_bus(ctx, input)?,
                "CreateEndpoint" => events.create_endpoint(ctx, input)?,
                "DescribeEndpoint" => events.describe_endpoint(ctx, input)?,
                "UpdateEndpoint" => events.update_endpoint(ctx, input)?,
                "DeleteEndpoint" => events.delete_endpoint(ctx, input)?,
                "ListEndpoints" => events.list_endpoints(ctx, input)?,
                "DescribeEventBus" => events.describe_event_bus(ctx, input)?,
                "DeleteEventBus" => events.delete_event_bus(ctx, input)?,
                "UpdateEventBus" => events.update_event_bus(ctx, input)?,
                "ListEventBuses" => events.list_event_buses(ctx, input)?,
                "PutPermission" => events.put_permission(ctx, input)?,
                "RemovePermission" => events.remove_permission(ctx, input)?,
                "PutRule" => events.put_rule(ctx, input)?,
                "DescribeRule" => events.describe_rule(ctx, input)?,
                "ListRules" => events.list_rules(ctx, input)?,
                "EnableRule" => events.set_rule_state(ctx, input, "ENABLED")?,
                "DisableRule" => events.set_rule_state(ctx, input, "DISABLED")?,
                "DeleteRule" => events.delete_rule(ctx, input)?,
                "PutTargets" => events.put_targets(ctx, input)?,
                "RemoveTargets" => events.remove_targets(ctx, input)?,
                "ListTargetsByRule" => events.list_targets_by_rule(ctx, input)?,
                "ListRuleNamesByTarget" => events.list_rule_names_by_target(ctx, input)?,
                "TagResource" => events.tag_resource(ctx, input)?,
                "UntagResource" => events.untag_resource(ctx, input)?,
                "ListTagsForResource" => events.list_tags_for_resource(ctx, input)?,
                "PutEvents" => events.put_events(ctx, input)?,
                "CreateArchive" => events.create_archive(ctx, input)?,
                "DescribeArchive" => events.describe_archive(ctx, input)?,
                "UpdateArchive" => events.update_archive(ctx, input)?,
                "DeleteArchive" => events.delete_archive(ctx, input)?,
                "ListArchives" => events.list_archives(ctx, input)?,
                "StartReplay" => events.start_replay(ctx, input)?,
                "DescribeReplay" => events.describe_replay(ctx, input)?,
                "CancelReplay" => events.cancel_replay(ctx, input)?,
                "ListReplays" => events.list_replays(ctx, input)?,
                "CreateConnection" => events.create_connection(ctx, input)?,
                "DescribeConnection" => events.describe_connection(ctx, input)?,
                "UpdateConnection" => events.update_connection(ctx, input)?,
                "DeauthorizeConnection" => events.deauthorize_connection(ctx, input)?,
                "DeleteConnection" => events.delete_connection(ctx, input)?,
                "ListConnections" => events.list_connections(ctx, input)?,
                "CreateApiDestination" => events.create_api_destination(ctx, input)?,
                "DescribeApiDestination" => events.describe_api_destination(ctx, input)?,
                "UpdateApiDestination" => events.update_api_destination(ctx, input)?,
                "DeleteApiDestination" => events.delete_api_destination(ctx, input)?,
                "ListApiDestinations" => events.list_api_destinations(ctx, input)?,
                "TestEventPattern" => put_events::test_event_pattern(input)?,
                other => {
                    return featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input)
                        .map(Response::new)
                }
            };
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(async move {
            if event.payload.get(invoke::API_DESTINATION_CALL).is_some() {
                self.events.call_api_destination(event).await
            } else {
                Ok(self.events.run_calls(event).await?)
            }
        })
    }
}

impl Events {
    /// Runs the calls a delivery carries (`{"Calls": [{Service, Operation, Input,
    /// Tolerate}]}`), in order, as the target's account; an error whose code is the
    /// call's `Tolerate` (a log stream that already exists) is not a failure.
    async fn run_calls(&self, event: &Event) -> Result<(), String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| "the dispatcher is not running".to_string())?;
        let ctx = delivery_context(event);
        let calls = event
            .payload
            .get("Calls")
            .and_then(Value::as_list)
            .unwrap_or(&[]);
        for call in calls {
            let service = call.str("Service").unwrap_or_default();
            let operation = call.str("Operation").unwrap_or_default();
            let input = call.get("Input").cloned().unwrap_or_else(Value::map);
            match dispatcher.call(&ctx, service, operation, input).await {
                Ok(out) => {
                    if let Some(error) = out.str("FunctionError") {
                        return Err(format!("{service} {operation}: {error}"));
                    }
                }
                Err(e) if call.str("Tolerate") == Some(e.code.as_ref()) => {}
                Err(e) => return Err(format!("{service} {operation}: {}: {}", e.code, e.message)),
            }
        }
        Ok(())
    }
}

/// The context a delivery acts in: the target's account and region.
fn delivery_context(event: &Event) -> Context {
    Context {
        account: event.account.clone(),
        region: event.region.clone(),
        access_key: None,
        request_id: new_request_id(),
        host: String::new(),
    }
}

/// `ResourceNotFoundException`.
fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new("ResourceNotFoundException", message).with_status(400)
}

/// The bus a request names (a name or a bus ARN), `default` when absent.
fn bus_name(input: &Value, member: &str) -> String {
    match input.str(member) {
        Some(s) if !s.is_empty() => match s.split_once(":event-bus/") {
            Some((_, name)) if s.starts_with("arn:") => name.to_string(),
            _ => s.to_string(),
        },
        _ => DEFAULT_BUS.to_string(),
    }
}

/// A bus's ARN.
fn bus_arn(ctx: &Context, bus: &str) -> String {
    format!(
        "arn:aws:events:{}:{}:event-bus/{bus}",
        ctx.region, ctx.account
    )
}

/// A rule's ARN: `rule/<name>` on the default bus, `rule/<bus>/<name>` elsewhere.
fn rule_arn(account: &str, region: &str, bus: &str, rule: &str) -> String {
    if bus == DEFAULT_BUS {
        format!("arn:aws:events:{region}:{account}:rule/{rule}")
    } else {
        format!("arn:aws:events:{region}:{account}:rule/{bus}/{rule}")
    }
}

/// A random id in UUID form, as event ids are.
fn new_id() -> String {
    let hex: String = (0..32)
        .map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0'))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_names_come_from_names_or_arns() {
        let named = |s: &str| bus_name(&Value::map().with("EventBusName", s), "EventBusName");
        assert_eq!(named("orders"), "orders");
        assert_eq!(
            named("arn:aws:events:us-east-1:000000000000:event-bus/orders"),
            "orders"
        );
        assert_eq!(bus_name(&Value::map(), "EventBusName"), "default");
    }

    #[test]
    fn rule_arns_name_the_bus_unless_default() {
        assert_eq!(
            rule_arn("1", "r", "default", "x"),
            "arn:aws:events:r:1:rule/x"
        );
        assert_eq!(rule_arn("1", "r", "b", "x"), "arn:aws:events:r:1:rule/b/x");
    }

    #[test]
    fn ids_look_like_uuids() {
        let id = new_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.matches('-').count(), 4);
    }
}
