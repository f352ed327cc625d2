//! Providers of CloudWatch Logs' account-level types: saved query definitions, resource
//! policies and cross-account destinations (with their access policy).

use serde_json::json;

use super::{gone_ok, pick, resolved, tag_map, with, Call, Outcome, Provider};

/// A saved Logs Insights query: `Ref` and `QueryDefinitionId` its id; every property
/// changes in place (PutQueryDefinition with the id).
pub(crate) const QUERY_DEFINITION: Provider = Provider {
    kind: "AWS::Logs::QueryDefinition",
    replaces: &[],
    create: |c| Box::pin(query_put(c)),
    update: Some(|c| Box::pin(query_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"queryDefinitionId": c.physical()});
            gone_ok(c.api("logs", "DeleteQueryDefinition", input).await)
        })
    },
};

async fn query_put(c: &Call) -> Outcome {
    let mut input = pick(
        &c.props,
        &[
            "Name",
            "QueryString",
            "LogGroupNames",
            "QueryLanguage",
            "Parameters",
        ],
    );
    if let Some(id) = &c.physical_id {
        input = with(input, "queryDefinitionId", json!(id));
    }
    let out = c.api("logs", "PutQueryDefinition", input).await?;
    let id = out["QueryDefinitionId"].as_str().unwrap_or_default();
    Ok(resolved(id, json!({"QueryDefinitionId": id})))
}

/// An account's resource policy for Logs: `Ref` its name; the document changes in place.
pub(crate) const RESOURCE_POLICY: Provider = Provider {
    kind: "AWS::Logs::ResourcePolicy",
    replaces: &["PolicyName"],
    create: |c| Box::pin(policy_put(c)),
    update: Some(|c| Box::pin(policy_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"policyName": c.physical()});
            gone_ok(c.api("logs", "DeleteResourcePolicy", input).await)
        })
    },
};

async fn policy_put(c: &Call) -> Outcome {
    let name = c.str("PolicyName").unwrap_or_default();
    let input = json!({"policyName": name, "policyDocument": c.document("PolicyDocument")});
    c.api("logs", "PutResourcePolicy", input).await?;
    Ok(resolved(name, json!({})))
}

/// A destination other accounts' subscription filters deliver to: `Ref` its name, `Arn`;
/// its target, role and access policy change in place.
pub(crate) const DESTINATION: Provider = Provider {
    kind: "AWS::Logs::Destination",
    replaces: &["DestinationName"],
    create: |c| Box::pin(destination_put(c)),
    update: Some(|c| Box::pin(destination_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"destinationName": c.physical()});
            gone_ok(c.api("logs", "DeleteDestination", input).await)
        })
    },
};

async fn destination_put(c: &Call) -> Outcome {
    let name = c.str("DestinationName").unwrap_or_default();
    let mut input = with(
        pick(&c.props, &["TargetArn", "RoleArn"]),
        "destinationName",
        json!(name),
    );
    if c.physical_id.is_none() && c.prop("Tags").is_some() {
        input = with(input, "tags", tag_map(c.prop("Tags")));
    }
    let out = c.api("logs", "PutDestination", input).await?;
    if let Some(policy) = c.document("DestinationPolicy") {
        let input = json!({"destinationName": name, "accessPolicy": policy});
        c.api("logs", "PutDestinationPolicy", input).await?;
    }
    Ok(resolved(name, json!({"Arn": out["Destination"]["Arn"]})))
}
