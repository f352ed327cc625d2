//! Vended-log deliveries: delivery sources (a resource's logs of one type), delivery
//! destinations (S3, Logs, Firehose or X-Ray) with their policies, and the deliveries that
//! join one to the other, stored and answered as CloudWatch Logs does (`logs_items`).
//! Roto's services vend no such logs, so nothing flows through a delivery.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{bad_token, Logs, DEFAULT_PAGE, SPEC};
use crate::documents::Scope;
use crate::ids;
use crate::paging::page;

const SOURCE: &str = "delivery-source";
const DESTINATION: &str = "delivery-destination";
const DESTINATION_POLICY: &str = "delivery-destination-policy";
const DELIVERY: &str = "delivery";

fn not_found(what: &str, name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("{what} {name} does not exist."),
    )
    .with_status(400)
}

fn conflict(message: String) -> AwsError {
    AwsError::new("ConflictException", message).with_status(400)
}

fn arn(ctx: &Context, kind: &str, name: &str) -> String {
    format!("arn:aws:logs:{}:{}:{kind}:{name}", ctx.region, ctx.account)
}

/// The service part of an ARN (`arn:aws:SERVICE:...`).
fn service_of(arn: &str) -> &str {
    arn.split(':').nth(2).unwrap_or_default()
}

/// The kind of destination a resource ARN names.
fn destination_type(resource: &str) -> &'static str {
    match service_of(resource) {
        "s3" => "S3",
        "firehose" => "FH",
        _ => "CWL",
    }
}

/// One page of `items` after the input's `nextToken`, at most its `limit`, as `member`.
fn paged(input: &Value, items: Vec<Value>, member: &str) -> AwsResult<Value> {
    let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
    let (items, next) = page(items, limit, input.str("nextToken"), bad_token)?;
    Ok(Value::map().with(member, items).with_opt("nextToken", next))
}

impl Logs {
    fn item(&self, ctx: &Context, kind: &str, id: &str) -> AwsResult<Option<Value>> {
        self.docs.value(Scope::of(ctx, kind, ""), id)
    }

    fn items(&self, ctx: &Context, kind: &str, shape: &str) -> AwsResult<Vec<Value>> {
        self.docs
            .values_as(SPEC.model(), Scope::of(ctx, kind, ""), shape)
    }

    fn deliveries(&self, ctx: &Context) -> AwsResult<Vec<Value>> {
        self.items(ctx, DELIVERY, "Delivery")
    }

    pub(super) fn put_delivery_source(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let resource = input.str("resourceArn").unwrap_or_default();
        let log_type = input.str("logType").unwrap_or_default();
        if let Some(existing) = self.item(ctx, SOURCE, name)? {
            let same_resource = existing
                .get("resourceArns")
                .and_then(Value::as_list)
                .and_then(<[Value]>::first)
                .and_then(Value::as_str)
                == Some(resource);
            if !same_resource || existing.str("logType") != Some(log_type) {
                return Err(conflict(format!(
                    "Delivery source {name} already exists for another resource or log type."
                )));
            }
        }
        let source = Value::map()
            .with("name", name)
            .with("arn", arn(ctx, SOURCE, name))
            .with("resourceArns", vec![Value::from(resource)])
            .with("service", service_of(resource))
            .with("logType", log_type)
            .with_opt("tags", input.get("tags").cloned())
            .with_opt(
                "deliverySourceConfiguration",
                input.get("deliverySourceConfiguration").cloned(),
            );
        self.docs
            .put_value(Scope::of(ctx, SOURCE, ""), name, &source)?;
        Ok(Value::map().with("deliverySource", source))
    }

    pub(super) fn get_delivery_source(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let source = self
            .docs
            .value_as(
                SPEC.model(),
                Scope::of(ctx, SOURCE, ""),
                name,
                "DeliverySource",
            )?
            .ok_or_else(|| not_found("Delivery source", name))?;
        Ok(Value::map().with("deliverySource", source))
    }

    pub(super) fn describe_delivery_sources(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let wanted: Vec<&Value> = input
            .get("resourceArns")
            .and_then(Value::as_list)
            .map(|l| l.iter().collect())
            .unwrap_or_default();
        let sources: Vec<Value> = self
            .items(ctx, SOURCE, "DeliverySource")?
            .into_iter()
            .filter(|s| {
                let arns = s
                    .get("resourceArns")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                wanted.is_empty() || arns.iter().any(|a| wanted.contains(&a))
            })
            .collect();
        paged(input, sources, "deliverySources")
    }

    pub(super) fn delete_delivery_source(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        if self.item(ctx, SOURCE, name)?.is_none() {
            return Err(not_found("Delivery source", name));
        }
        if self
            .deliveries(ctx)?
            .iter()
            .any(|d| d.str("deliverySourceName") == Some(name))
        {
            return Err(conflict(format!(
                "Delivery source {name} is used by a delivery; delete the delivery first."
            )));
        }
        self.docs.delete(Scope::of(ctx, SOURCE, ""), name)?;
        Ok(Value::map())
    }

    pub(super) fn put_delivery_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let config = input.get("deliveryDestinationConfiguration");
        let resource = config.and_then(|c| c.str("destinationResourceArn"));
        let kind = match (input.str("deliveryDestinationType"), resource) {
            (Some(t), _) => t,
            (None, Some(r)) => destination_type(r),
            (None, None) => {
                return Err(AwsError::validation(
                    "deliveryDestinationConfiguration is required unless the type is XRAY.",
                ))
            }
        };
        let destination = Value::map()
            .with("name", name)
            .with("arn", arn(ctx, DESTINATION, name))
            .with("deliveryDestinationType", kind)
            .with_opt("outputFormat", input.str("outputFormat"))
            .with_opt("deliveryDestinationConfiguration", config.cloned())
            .with_opt("roleArn", input.str("roleArn"))
            .with_opt("tags", input.get("tags").cloned());
        self.docs
            .put_value(Scope::of(ctx, DESTINATION, ""), name, &destination)?;
        Ok(Value::map().with("deliveryDestination", destination))
    }

    fn delivery_destination(&self, ctx: &Context, name: &str) -> AwsResult<Value> {
        self.docs
            .value_as(
                SPEC.model(),
                Scope::of(ctx, DESTINATION, ""),
                name,
                "DeliveryDestination",
            )?
            .ok_or_else(|| not_found("Delivery destination", name))
    }

    pub(super) fn get_delivery_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        Ok(Value::map().with("deliveryDestination", self.delivery_destination(ctx, name)?))
    }

    pub(super) fn describe_delivery_destinations(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let destinations = self.items(ctx, DESTINATION, "DeliveryDestination")?;
        paged(input, destinations, "deliveryDestinations")
    }

    pub(super) fn delete_delivery_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let destination = self.delivery_destination(ctx, name)?;
        if self
            .deliveries(ctx)?
            .iter()
            .any(|d| d.str("deliveryDestinationArn") == destination.str("arn"))
        {
            return Err(conflict(format!(
                "Delivery destination {name} is used by a delivery; delete the delivery first."
            )));
        }
        self.docs.delete(Scope::of(ctx, DESTINATION, ""), name)?;
        self.docs
            .delete(Scope::of(ctx, DESTINATION_POLICY, ""), name)?;
        Ok(Value::map())
    }

    pub(super) fn put_delivery_destination_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("deliveryDestinationName").unwrap_or_default();
        self.delivery_destination(ctx, name)?;
        let text = input.str("deliveryDestinationPolicy").unwrap_or_default();
        if !matches!(
            serde_json::from_str::<serde_json::Value>(text),
            Ok(serde_json::Value::Object(_))
        ) {
            return Err(AwsError::validation(
                "deliveryDestinationPolicy is not a valid JSON policy document.",
            ));
        }
        let policy = Value::map().with("deliveryDestinationPolicy", text);
        self.docs
            .put_value(Scope::of(ctx, DESTINATION_POLICY, ""), name, &policy)?;
        Ok(Value::map().with("policy", policy))
    }

    pub(super) fn get_delivery_destination_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("deliveryDestinationName").unwrap_or_default();
        self.delivery_destination(ctx, name)?;
        let policy = self
            .item(ctx, DESTINATION_POLICY, name)?
            .unwrap_or_else(Value::map);
        Ok(Value::map().with("policy", policy))
    }

    pub(super) fn delete_delivery_destination_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("deliveryDestinationName").unwrap_or_default();
        self.delivery_destination(ctx, name)?;
        if !self
            .docs
            .delete(Scope::of(ctx, DESTINATION_POLICY, ""), name)?
        {
            return Err(not_found("Policy of delivery destination", name));
        }
        Ok(Value::map())
    }

    pub(super) fn create_delivery(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let source = input.str("deliverySourceName").unwrap_or_default();
        if self.item(ctx, SOURCE, source)?.is_none() {
            return Err(not_found("Delivery source", source));
        }
        let destination_arn = input.str("deliveryDestinationArn").unwrap_or_default();
        let destination_name = destination_arn.rsplit(':').next().unwrap_or_default();
        let destination = self.delivery_destination(ctx, destination_name)?;
        if self.deliveries(ctx)?.iter().any(|d| {
            d.str("deliverySourceName") == Some(source)
                && d.str("deliveryDestinationArn") == Some(destination_arn)
        }) {
            return Err(conflict(format!(
                "A delivery from {source} to {destination_arn} already exists."
            )));
        }
        let id = ids::hex(16);
        let delivery = Value::map()
            .with("id", id.as_str())
            .with("arn", arn(ctx, DELIVERY, &id))
            .with("deliverySourceName", source)
            .with("deliveryDestinationArn", destination_arn)
            .with_opt(
                "deliveryDestinationType",
                destination.str("deliveryDestinationType"),
            )
            .with_opt("recordFields", input.get("recordFields").cloned())
            .with_opt("fieldDelimiter", input.str("fieldDelimiter"))
            .with_opt(
                "s3DeliveryConfiguration",
                input.get("s3DeliveryConfiguration").cloned(),
            )
            .with_opt("tags", input.get("tags").cloned());
        self.docs
            .put_value(Scope::of(ctx, DELIVERY, ""), &id, &delivery)?;
        Ok(Value::map().with("delivery", delivery))
    }

    fn delivery(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Value)> {
        let id = input.str("id").unwrap_or_default();
        let delivery = self
            .item(ctx, DELIVERY, id)?
            .ok_or_else(|| not_found("Delivery", id))?;
        Ok((id.to_string(), delivery))
    }

    pub(super) fn get_delivery(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, _) = self.delivery(ctx, input)?;
        let delivery = self
            .docs
            .value_as(SPEC.model(), Scope::of(ctx, DELIVERY, ""), &id, "Delivery")?
            .ok_or_else(|| not_found("Delivery", &id))?;
        Ok(Value::map().with("delivery", delivery))
    }

    pub(super) fn update_delivery_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (id, mut delivery) = self.delivery(ctx, input)?;
        for member in ["recordFields", "fieldDelimiter", "s3DeliveryConfiguration"] {
            if let Some(v) = input.get(member) {
                delivery.insert(member, v.clone());
            }
        }
        self.docs
            .put_value(Scope::of(ctx, DELIVERY, ""), &id, &delivery)?;
        Ok(Value::map())
    }

    pub(super) fn delete_delivery(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, _) = self.delivery(ctx, input)?;
        self.docs.delete(Scope::of(ctx, DELIVERY, ""), &id)?;
        Ok(Value::map())
    }

    pub(super) fn describe_deliveries(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let names: Vec<&str> = input
            .get("deliverySourceNames")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let deliveries: Vec<Value> = self
            .deliveries(ctx)?
            .into_iter()
            .filter(|d| {
                names.is_empty() || names.contains(&d.str("deliverySourceName").unwrap_or(""))
            })
            .collect();
        paged(input, deliveries, "deliveries")
    }
}
