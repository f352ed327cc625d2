//! Global endpoints: a name for a pair of event buses of the same name in two regions,
//! with the routing (a Route 53 health check chooses between primary and secondary) and
//! replication settings, stored and returned as EventBridge keeps them, each with its
//! generated id and URL. Roto evaluates no health check and replicates nothing: the
//! endpoint is configuration, and events still go to the bus `PutEvents` is called on.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::Events;
use crate::documents::{document, shaped, Scope};
use crate::paging;

fn endpoints(ctx: &Context) -> Scope<'_> {
    Scope {
        account: &ctx.account,
        region: &ctx.region,
        kind: "endpoint",
        parent: "",
    }
}

pub(super) fn not_found(name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Endpoint {name} does not exist."),
    )
    .with_status(400)
}

/// The region of an event bus ARN.
fn region_of(arn: &str) -> Option<&str> {
    let parts: Vec<&str> = arn.split(':').collect();
    (parts.len() >= 6 && parts[2] == "events" && parts[5].starts_with("event-bus/"))
        .then(|| parts[3])
}

/// EventBridge's rule for an endpoint's buses: two, of the same name, in two regions.
fn check_buses(buses: &Json) -> AwsResult<()> {
    let arns: Vec<&str> = buses
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["EventBusArn"].as_str())
        .collect();
    let regions: Vec<Option<&str>> = arns.iter().map(|a| region_of(a)).collect();
    let names: Vec<Option<&str>> = arns.iter().map(|a| a.rsplit('/').next()).collect();
    let valid = arns.len() == 2
        && regions.iter().all(Option::is_some)
        && regions[0] != regions[1]
        && names[0] == names[1];
    if valid {
        Ok(())
    } else {
        Err(AwsError::validation(
            "EventBuses must name two event buses of the same name in two different Regions.",
        ))
    }
}

fn random_lower(n: usize) -> String {
    (0..n)
        .map(|_| char::from(b'a' + fastrand::u8(..26)))
        .collect()
}

impl Events {
    fn endpoint(&self, ctx: &Context, name: &str) -> AwsResult<Json> {
        self.docs
            .get(endpoints(ctx), name)?
            .ok_or_else(|| not_found(name))
    }

    pub(super) fn create_endpoint(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        if self.docs.get(endpoints(ctx), name)?.is_some() {
            return Err(AwsError::new(
                "ResourceAlreadyExistsException",
                format!("Endpoint {name} already exists."),
            ));
        }
        let mut doc = document(input);
        check_buses(&doc["EventBuses"])?;
        let id = format!("{}.{}", random_lower(5), random_lower(3));
        let now = self.now() as f64 / 1000.0;
        doc["Arn"] = format!(
            "arn:aws:events:{}:{}:endpoint/{name}",
            ctx.region, ctx.account
        )
        .into();
        doc["EndpointId"] = id.clone().into();
        doc["EndpointUrl"] = format!("https://{id}.endpoint.events.amazonaws.com").into();
        doc["State"] = "ACTIVE".into();
        doc["CreationTime"] = json!(now);
        doc["LastModifiedTime"] = json!(now);
        if doc.get("ReplicationConfig").is_none() {
            doc["ReplicationConfig"] = json!({"State": "ENABLED"});
        }
        self.docs.put(endpoints(ctx), name, &doc)?;
        shaped(super::SPEC.model(), "CreateEndpointResponse", &doc)
    }

    pub(super) fn describe_endpoint(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let doc = self.endpoint(ctx, input.str("Name").unwrap_or_default())?;
        shaped(super::SPEC.model(), "DescribeEndpointResponse", &doc)
    }

    pub(super) fn update_endpoint(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let mut doc = self.endpoint(ctx, name)?;
        let given = document(input);
        if let Some(buses) = given.get("EventBuses") {
            check_buses(buses)?;
        }
        for member in [
            "Description",
            "RoutingConfig",
            "ReplicationConfig",
            "EventBuses",
            "RoleArn",
        ] {
            if let Some(value) = given.get(member) {
                doc[member] = value.clone();
            }
        }
        doc["LastModifiedTime"] = json!(self.now() as f64 / 1000.0);
        self.docs.put(endpoints(ctx), name, &doc)?;
        shaped(super::SPEC.model(), "UpdateEndpointResponse", &doc)
    }

    pub(super) fn delete_endpoint(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        if !self.docs.delete(endpoints(ctx), name)? {
            return Err(not_found(name));
        }
        Ok(Value::map())
    }

    pub(super) fn list_endpoints(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let home = input.str("HomeRegion");
        let listed = self
            .docs
            .list(endpoints(ctx))?
            .iter()
            .filter(|e| e["Name"].as_str().unwrap_or_default().starts_with(prefix))
            .filter(|_| home.is_none_or(|r| r == ctx.region))
            .map(|e| shaped(super::SPEC.model(), "Endpoint", e))
            .collect::<AwsResult<Vec<_>>>()?;
        let limit = input.int("MaxResults").unwrap_or(100).clamp(1, 100) as usize;
        let (page, next) = paging::page(listed, limit, input.str("NextToken"), || {
            AwsError::validation("The NextToken is not valid.")
        })?;
        Ok(Value::map()
            .with("Endpoints", page)
            .with_opt("NextToken", next))
    }
}
