//! Providers of EventBridge's types beyond rules, buses and archives: a bus's policy
//! statements (`AWS::Events::EventBusPolicy`), connections, API destinations and global
//! endpoints.
//!
//! A connection's and an API destination's ARN ends in a generated id
//! (`connection/<name>/<uuid>`); `ArnForPolicy` is the ARN without it, as IAM policies name
//! them.

use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};

/// One statement of a bus's resource policy, added by PutPermission under its
/// `StatementId` (from `Action`/`Principal`/`Condition`, or the `Statement` itself): `Ref`
/// the statement id.
pub(crate) const EVENT_BUS_POLICY: Provider = Provider {
    kind: "AWS::Events::EventBusPolicy",
    replaces: &["EventBusName", "StatementId"],
    create: |c| Box::pin(bus_policy_put(c)),
    update: Some(|c| Box::pin(bus_policy_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = with(
                json!({"StatementId": c.physical()}),
                "EventBusName",
                c.props["EventBusName"].clone(),
            );
            gone_ok(c.api("events", "RemovePermission", input).await)
        })
    },
};

/// Held while a bus policy statement is put: a `Statement` is merged into the policy
/// read before (PutPermission takes a whole policy), so the statements of one template,
/// put in parallel, must not interleave.
static BUS_POLICY_WRITE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn bus_policy_put(c: &Call) -> Outcome {
    let _writing = BUS_POLICY_WRITE.lock().await;
    let sid = c.str("StatementId").unwrap_or_default().to_string();
    let bus = c.props["EventBusName"].clone();
    let input = match c.prop("Statement") {
        Some(statement) => {
            let policy = bus_policy_with(c, &bus, &sid, statement).await?;
            json!({"Policy": policy.to_string()})
        }
        None => with(
            pick(&c.props, &["Action", "Principal", "Condition"]),
            "StatementId",
            json!(sid),
        ),
    };
    c.api("events", "PutPermission", with(input, "EventBusName", bus))
        .await?;
    Ok(resolved(sid, json!({})))
}

/// The bus's policy with `statement` (given the `Sid`) in place of any statement of that id.
async fn bus_policy_with(
    c: &Call,
    bus: &Json,
    sid: &str,
    statement: &Json,
) -> Result<Json, String> {
    let statement = match statement {
        Json::String(text) => serde_json::from_str(text).map_err(|_| {
            format!(
                "Properties validation failed for resource {}: Statement is not valid JSON",
                c.logical_id
            )
        })?,
        other => other.clone(),
    };
    let out = c
        .api(
            "events",
            "DescribeEventBus",
            with(json!({}), "Name", bus.clone()),
        )
        .await?;
    let mut policy = out["Policy"]
        .as_str()
        .and_then(|p| serde_json::from_str::<Json>(p).ok())
        .unwrap_or_else(|| json!({"Version": "2012-10-17", "Statement": []}));
    let mut statements: Vec<Json> = policy["Statement"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["Sid"] != sid)
        .cloned()
        .collect();
    statements.push(with(statement, "Sid", json!(sid)));
    policy["Statement"] = Json::Array(statements);
    Ok(policy)
}

/// `arn` without its last segment, the generated id (`.../connection/<name>/<uuid>`).
fn arn_for_policy(arn: &Json) -> Json {
    let arn = arn.as_str().unwrap_or_default();
    json!(arn.rsplit_once('/').map_or(arn, |(head, _)| head))
}

const CONNECTION_SETTINGS: [&str; 5] = [
    "AuthorizationType",
    "AuthParameters",
    "Description",
    "InvocationConnectivityParameters",
    "KmsKeyIdentifier",
];

/// A connection: `Ref` its name, `Arn`, `ArnForPolicy` and `SecretArn` (the secret
/// EventBridge keeps its credentials in).
pub(crate) const CONNECTION: Provider = Provider {
    kind: "AWS::Events::Connection",
    replaces: &["Name"],
    create: |c| Box::pin(connection_put(c, "CreateConnection")),
    update: Some(|c| Box::pin(connection_put(c, "UpdateConnection"))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("events", "DeleteConnection", input).await)
        })
    },
};

async fn connection_put(c: &Call, operation: &str) -> Outcome {
    let name = c.name("Name", 64);
    let input = with(pick(&c.props, &CONNECTION_SETTINGS), "Name", json!(name));
    c.api("events", operation, input).await?;
    let out = c
        .api("events", "DescribeConnection", json!({"Name": name}))
        .await?;
    let arn = &out["ConnectionArn"];
    Ok(resolved(
        name,
        json!({"Arn": arn, "ArnForPolicy": arn_for_policy(arn), "SecretArn": out["SecretArn"]}),
    ))
}

const DESTINATION_SETTINGS: [&str; 5] = [
    "ConnectionArn",
    "Description",
    "HttpMethod",
    "InvocationEndpoint",
    "InvocationRateLimitPerSecond",
];

/// An API destination: `Ref` its name, `Arn` and `ArnForPolicy`.
pub(crate) const API_DESTINATION: Provider = Provider {
    kind: "AWS::Events::ApiDestination",
    replaces: &["Name"],
    create: |c| Box::pin(destination_put(c, "CreateApiDestination")),
    update: Some(|c| Box::pin(destination_put(c, "UpdateApiDestination"))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("events", "DeleteApiDestination", input).await)
        })
    },
};

async fn destination_put(c: &Call, operation: &str) -> Outcome {
    let name = c.name("Name", 64);
    let input = with(pick(&c.props, &DESTINATION_SETTINGS), "Name", json!(name));
    let out = c.api("events", operation, input).await?;
    let arn = &out["ApiDestinationArn"];
    Ok(resolved(
        name,
        json!({"Arn": arn, "ArnForPolicy": arn_for_policy(arn)}),
    ))
}

const ENDPOINT_SETTINGS: [&str; 5] = [
    "Description",
    "RoutingConfig",
    "ReplicationConfig",
    "EventBuses",
    "RoleArn",
];

/// A global endpoint: `Ref` its name; `Arn`, `EndpointId`, `EndpointUrl`, `State` and
/// `StateReason` as DescribeEndpoint answers them. Everything but the name changes in place.
pub(crate) const ENDPOINT: Provider = Provider {
    kind: "AWS::Events::Endpoint",
    replaces: &["Name"],
    create: |c| Box::pin(endpoint_put(c, "CreateEndpoint")),
    update: Some(|c| Box::pin(endpoint_put(c, "UpdateEndpoint"))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("events", "DeleteEndpoint", input).await)
        })
    },
};

async fn endpoint_put(c: &Call, operation: &str) -> Outcome {
    let name = c.name("Name", 64);
    let input = with(pick(&c.props, &ENDPOINT_SETTINGS), "Name", json!(name));
    c.api("events", operation, input).await?;
    let out = c
        .api("events", "DescribeEndpoint", json!({"Name": name}))
        .await?;
    let attributes = pick(
        &out,
        &["Arn", "EndpointId", "EndpointUrl", "State", "StateReason"],
    );
    Ok(resolved(name, attributes))
}
