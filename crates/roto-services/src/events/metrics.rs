//! EventBridge's metrics in `AWS/Events`, as AWS publishes them per rule (dimension
//! `RuleName`, with `EventBusName` on a custom bus) and for the account (no dimension):
//! TriggeredRules and MatchedEvents as a rule fires, Invocations for each target it sends
//! to, and FailedInvocations as the event bus reports a delivery failed for good.

use roto_core::events::Event;
use roto_core::metrics::Datum;
use roto_core::Env;

use super::rules::Rule;

const NAMESPACE: &str = "AWS/Events";

/// Publishes `value` of `name` for the rule and for the account.
fn put(
    env: &Env,
    (account, region): (&str, &str),
    (bus, rule): (&str, &str),
    name: &str,
    value: f64,
) {
    let named = [("RuleName", rule)];
    let on_bus = [("EventBusName", bus), ("RuleName", rule)];
    let dims: &[(&str, &str)] = if bus == "default" { &named } else { &on_bus };
    for dims in [dims, &[]] {
        let datum = Datum::new(NAMESPACE, name, dims, value, "Count");
        env.metrics.put(account, region, &datum);
    }
}

/// A rule that fired, sending the event to `invocations` targets.
pub(super) fn fired(env: &Env, rule: &Rule, invocations: usize) {
    let at = (rule.account.as_str(), rule.region.as_str());
    let named = (rule.bus.as_str(), rule.name.as_str());
    put(env, at, named, "TriggeredRules", 1.0);
    if rule.pattern.is_some() {
        put(env, at, named, "MatchedEvents", 1.0);
    }
    put(env, at, named, "Invocations", invocations as f64);
}

/// A delivery to a rule's target that failed for good.
pub(super) fn failed(env: &Env, event: &Event) {
    // arn:aws:events:{region}:{account}:rule/[{bus}/]{name}
    let parts: Vec<&str> = event.source.splitn(6, ':').collect();
    let [_, _, _, region, account, resource] = parts[..] else {
        return;
    };
    let path = resource.strip_prefix("rule/").unwrap_or(resource);
    let (bus, rule) = path.rsplit_once('/').unwrap_or(("default", path));
    put(
        env,
        (account, region),
        (bus, rule),
        "FailedInvocations",
        1.0,
    );
}
