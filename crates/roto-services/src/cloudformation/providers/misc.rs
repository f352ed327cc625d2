//! Providers of CloudFormation's own types (nested stacks, custom resources backed by
//! Lambda or SNS, wait condition handles and wait conditions), of the CDK's `AWS::CDK::Metadata` (which every
//! CDK stack carries and which creates nothing), of ECR repositories (CDK's bootstrap
//! template declares one) with their lifecycle policy, policy and settings, and the
//! registry's policy, replication, scanning and pull through cache rules; of the
//! CodeDeploy application and deployment group SAM's `DeploymentPreference` generates,
//! and deployment configurations (kept as configuration).
//!
//! Custom resources and wait conditions answer through a URL Roto serves: an object in the
//! S3 bucket `cfn-responses-<account>-<region>`, which the function (or the signaller) PUTs
//! as it would to AWS's presigned URL, and which the provider reads back through the
//! dispatcher, waiting on the server clock.

use std::time::Duration;

use roto_core::timestamp::now_millis;
use serde_json::{json, Map, Value as Json};

use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};
use crate::cloudformation::template::scalar_text;

pub(crate) const ECR_REPOSITORY: Provider = Provider {
    kind: "AWS::ECR::Repository",
    replaces: &["RepositoryName", "EncryptionConfiguration"],
    create: |c| Box::pin(repository_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            repository_settings(c).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let force = c.prop("EmptyOnDelete").cloned().unwrap_or(json!(false));
            let input = json!({"repositoryName": c.physical(), "force": force});
            gone_ok(c.api("ecr", "DeleteRepository", input).await)
        })
    },
};

async fn repository_create(c: &Call) -> Outcome {
    let name = c.name("RepositoryName", 256).to_ascii_lowercase();
    let mut input = pick(
        &c.props,
        &[
            "ImageTagMutability",
            "ImageScanningConfiguration",
            "EncryptionConfiguration",
            "Tags",
        ],
    );
    input = with(input, "repositoryName", json!(name));
    let out = c.api("ecr", "CreateRepository", input).await?;
    let call = Call {
        physical_id: Some(name.clone()),
        old_props: Json::Null,
        ..c.clone()
    };
    repository_settings(&call).await?;
    let repository = &out["Repository"];
    Ok(resolved(
        name.as_str(),
        json!({"Arn": repository["RepositoryArn"], "RepositoryUri": repository["RepositoryUri"]}),
    ))
}

/// Puts the repository's lifecycle policy, policy, tag mutability and scanning settings
/// where they differ from the old properties'.
async fn repository_settings(c: &Call) -> Result<(), String> {
    let name = c.physical();
    let changed = |p: &str| c.prop(p).filter(|v| c.old_props.get(p) != Some(*v));
    if let Some(text) = changed("LifecyclePolicy").map(|l| l["LifecyclePolicyText"].clone()) {
        let input = json!({"repositoryName": name, "lifecyclePolicyText": text});
        c.api("ecr", "PutLifecyclePolicy", input).await?;
    }
    if changed("RepositoryPolicyText").is_some() {
        let text = c.document("RepositoryPolicyText").unwrap_or_default();
        let input = json!({"repositoryName": name, "policyText": text});
        c.api("ecr", "SetRepositoryPolicy", input).await?;
    }
    if !c.old_props.is_null() {
        if let Some(mutability) = changed("ImageTagMutability") {
            let input = json!({"repositoryName": name, "imageTagMutability": mutability});
            c.api("ecr", "PutImageTagMutability", input).await?;
        }
        if let Some(scanning) = changed("ImageScanningConfiguration") {
            let input = json!({"repositoryName": name, "imageScanningConfiguration": scanning});
            c.api("ecr", "PutImageScanningConfiguration", input).await?;
        }
    }
    Ok(())
}

/// The registry's permissions policy: `Ref` the registry id (the account); the policy
/// changes in place.
pub(crate) const ECR_REGISTRY_POLICY: Provider = Provider {
    kind: "AWS::ECR::RegistryPolicy",
    replaces: &[],
    create: |c| Box::pin(registry_policy_put(c)),
    update: Some(|c| Box::pin(registry_policy_put(c))),
    delete: |c| {
        Box::pin(async move { gone_ok(c.api("ecr", "DeleteRegistryPolicy", json!({})).await) })
    },
};

async fn registry_policy_put(c: &Call) -> Outcome {
    let input = json!({"policyText": c.document("PolicyText")});
    let out = c.api("ecr", "PutRegistryPolicy", input).await?;
    let id = out["RegistryId"].as_str().unwrap_or_default();
    Ok(resolved(id, json!({"RegistryId": id})))
}

/// A pull through cache rule: `Ref` its repository prefix; every property replaces it.
pub(crate) const ECR_PULL_THROUGH_CACHE_RULE: Provider = Provider {
    kind: "AWS::ECR::PullThroughCacheRule",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let settings = [
                "EcrRepositoryPrefix",
                "UpstreamRegistryUrl",
                "UpstreamRegistry",
                "CredentialArn",
                "CustomRoleArn",
                "UpstreamRepositoryPrefix",
            ];
            let out = c
                .api(
                    "ecr",
                    "CreatePullThroughCacheRule",
                    pick(&c.props, &settings),
                )
                .await?;
            let prefix = out["EcrRepositoryPrefix"].as_str().unwrap_or_default();
            Ok(resolved(prefix, json!({})))
        })
    },
    update: None,
    delete: |c| {
        Box::pin(async move {
            let input = json!({"ecrRepositoryPrefix": c.physical()});
            gone_ok(c.api("ecr", "DeletePullThroughCacheRule", input).await)
        })
    },
};

/// The registry's replication rules: `Ref` the registry id; put again on update, emptied
/// on delete.
pub(crate) const ECR_REPLICATION_CONFIGURATION: Provider = Provider {
    kind: "AWS::ECR::ReplicationConfiguration",
    replaces: &[],
    create: |c| {
        Box::pin(registry_put(
            c,
            "PutReplicationConfiguration",
            pick(&c.props, &["ReplicationConfiguration"]),
        ))
    },
    update: Some(|c| {
        Box::pin(registry_put(
            c,
            "PutReplicationConfiguration",
            pick(&c.props, &["ReplicationConfiguration"]),
        ))
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"replicationConfiguration": {"rules": []}});
            registry_put(c, "PutReplicationConfiguration", input)
                .await
                .map(|_| ())
        })
    },
};

/// The registry's scanning configuration: `Ref` the registry id; put again on update,
/// back to basic scanning without rules on delete.
pub(crate) const ECR_REGISTRY_SCANNING: Provider = Provider {
    kind: "AWS::ECR::RegistryScanningConfiguration",
    replaces: &[],
    create: |c| {
        Box::pin(registry_put(
            c,
            "PutRegistryScanningConfiguration",
            pick(&c.props, &["ScanType", "Rules"]),
        ))
    },
    update: Some(|c| {
        Box::pin(registry_put(
            c,
            "PutRegistryScanningConfiguration",
            pick(&c.props, &["ScanType", "Rules"]),
        ))
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"scanType": "BASIC", "rules": []});
            registry_put(c, "PutRegistryScanningConfiguration", input)
                .await
                .map(|_| ())
        })
    },
};

/// One of the registry's settings put by `operation`: `Ref` and `RegistryId` the registry
/// (the account).
async fn registry_put(c: &Call, operation: &str, input: Json) -> Outcome {
    c.api("ecr", operation, input).await?;
    let id = c.ctx.account.as_str();
    Ok(resolved(id, json!({"RegistryId": id})))
}

pub(crate) const CDK_METADATA: Provider = Provider {
    kind: "AWS::CDK::Metadata",
    replaces: &[],
    create: |_| Box::pin(async { Ok(resolved(crate::ids::uuid(), json!({}))) }),
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |_| Box::pin(async { Ok(()) }),
};

/// CodeDeploy's Lambda application, kept as configuration (Roto serves no CodeDeploy):
/// `Ref` its name.
pub(crate) const CODEDEPLOY_APPLICATION: Provider = Provider {
    kind: "AWS::CodeDeploy::Application",
    replaces: &["ApplicationName", "ComputePlatform"],
    create: |c| Box::pin(async move { Ok(resolved(c.name("ApplicationName", 100), json!({}))) }),
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |_| Box::pin(async { Ok(()) }),
};

/// A CodeDeploy deployment group, kept as configuration (a SAM function's alias moves to
/// its new version at once): `Ref` its name.
pub(crate) const CODEDEPLOY_DEPLOYMENT_GROUP: Provider = Provider {
    kind: "AWS::CodeDeploy::DeploymentGroup",
    replaces: &["ApplicationName", "DeploymentGroupName"],
    create: |c| {
        Box::pin(async move { Ok(resolved(c.name("DeploymentGroupName", 100), json!({}))) })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |_| Box::pin(async { Ok(()) }),
};

/// A CodeDeploy deployment configuration, kept as configuration: `Ref` its name (every
/// property replaces it, as AWS's do).
pub(crate) const CODEDEPLOY_DEPLOYMENT_CONFIG: Provider = Provider {
    kind: "AWS::CodeDeploy::DeploymentConfig",
    replaces: &[],
    create: |c| {
        Box::pin(async move { Ok(resolved(c.name("DeploymentConfigName", 100), json!({}))) })
    },
    update: None,
    delete: |_| Box::pin(async { Ok(()) }),
};

pub(crate) const NESTED_STACK: Provider = Provider {
    kind: "AWS::CloudFormation::Stack",
    replaces: &[],
    create: |c| Box::pin(nested_create(c)),
    update: Some(|c| Box::pin(nested_update(c))),
    delete: |c| Box::pin(nested_delete(c)),
};

/// The nested stack's template, parameters and settings as CreateStack's and UpdateStack's
/// input; a nested stack may create what its parent may, so it has every capability.
fn nested_input(c: &Call, stack: &str) -> Json {
    let parameters: Vec<Json> = c
        .prop("Parameters")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| json!({"ParameterKey": k, "ParameterValue": scalar_text(v)}))
        .collect();
    let mut input = json!({
        "StackName": stack,
        "TemplateURL": c.str("TemplateURL").unwrap_or_default(),
        "Parameters": parameters,
        "Capabilities": ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"],
    });
    for member in ["NotificationARNs", "Tags", "TimeoutInMinutes"] {
        if let Some(v) = c.prop(member) {
            input[member] = v.clone();
        }
    }
    input
}

async fn nested_create(c: &Call) -> Outcome {
    let name = super::generated_name(&c.stack_name, &c.logical_id, 128);
    let out = c
        .api("cloudformation", "CreateStack", nested_input(c, &name))
        .await?;
    let id = out["StackId"].as_str().unwrap_or_default().to_string();
    nested_settled(c, &id, "CREATE_COMPLETE", "created").await
}

async fn nested_update(c: &Call) -> Outcome {
    let id = c.physical().to_string();
    match c
        .api("cloudformation", "UpdateStack", nested_input(c, &id))
        .await
    {
        Err(e) if e.contains("No updates are to be performed") => {}
        other => {
            other?;
        }
    }
    nested_settled(c, &id, "UPDATE_COMPLETE", "updated").await
}

async fn nested_delete(c: &Call) -> Result<(), String> {
    let id = c.physical();
    let input = json!({"StackName": id});
    gone_ok(c.api("cloudformation", "DeleteStack", input).await)?;
    nested_settled(c, id, "DELETE_COMPLETE", "deleted")
        .await
        .map(|_| ())
}

/// Waits (on the server clock) for the nested stack's operation to end: its id and its
/// outputs as `Outputs.<key>` attributes when it ends in `done`, else AWS's reason.
async fn nested_settled(c: &Call, id: &str, done: &str, verb: &str) -> Outcome {
    loop {
        let out = c
            .api("cloudformation", "DescribeStacks", json!({"StackName": id}))
            .await?;
        let stack = &out["Stacks"][0];
        let status = stack["StackStatus"].as_str().unwrap_or_default();
        if status.ends_with("_IN_PROGRESS") {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        if status != done && !(done == "UPDATE_COMPLETE" && status == "CREATE_COMPLETE") {
            return Err(format!(
                "Embedded stack {id} was not successfully {verb}: the stack is {status}"
            ));
        }
        let mut attributes = Map::new();
        for o in stack["Outputs"].as_array().into_iter().flatten() {
            if let (Some(k), Some(v)) = (o["OutputKey"].as_str(), o.get("OutputValue")) {
                attributes.insert(format!("Outputs.{k}"), v.clone());
            }
        }
        return Ok(resolved(id, Json::Object(attributes)));
    }
}

/// The bucket responses are PUT to.
fn response_bucket(c: &Call) -> String {
    format!("cfn-responses-{}-{}", c.ctx.account, c.ctx.region)
}

/// A URL Roto serves for a response: the bucket's object `key`, path-style on Roto's port.
async fn response_url(c: &Call, key: &str) -> Result<String, String> {
    let bucket = response_bucket(c);
    let created = c.api("s3", "CreateBucket", json!({"Bucket": bucket})).await;
    if let Err(e) = created {
        if !e.contains("BucketAlreadyOwnedByYou") {
            return Err(e);
        }
    }
    let endpoint = c
        .dispatcher
        .env
        .endpoint()
        .unwrap_or("http://localhost:4566");
    Ok(format!("{endpoint}/{bucket}/{key}"))
}

/// Waits (on the server clock) for the object `key` to be PUT, up to `timeout_ms`.
async fn await_response(c: &Call, key: &str, timeout_ms: i64) -> Result<Option<Vec<u8>>, String> {
    let deadline = now_millis() + timeout_ms;
    let bucket = response_bucket(c);
    loop {
        let input = roto_core::Value::map()
            .with("Bucket", bucket.as_str())
            .with("Key", key);
        let request = roto_core::Request::new(input);
        if let Ok(response) = c
            .dispatcher
            .call_request(&c.ctx, "s3", "GetObject", request)
            .await
        {
            let body = response.into_payload().await.map_err(|e| e.message)?;
            let _ = c
                .api("s3", "DeleteObject", json!({"Bucket": bucket, "Key": key}))
                .await;
            return Ok(Some(body));
        }
        if now_millis() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) const CUSTOM_RESOURCE: Provider = Provider {
    kind: "AWS::CloudFormation::CustomResource",
    replaces: &["ServiceToken"],
    create: |c| Box::pin(custom(c, "Create")),
    update: Some(|c| Box::pin(custom(c, "Update"))),
    delete: |c| Box::pin(async move { custom(c, "Delete").await.map(|_| ()) }),
};

/// Sends the custom resource's request to its Lambda function (invoked asynchronously) or
/// SNS topic (published as the message), and reads its answer.
async fn custom(c: &Call, request_type: &str) -> Outcome {
    let token = c.str("ServiceToken").unwrap_or_default().to_string();
    let service = token.split(':').nth(2).unwrap_or_default();
    if !token.starts_with("arn:") || !matches!(service, "lambda" | "sns") {
        return Err(format!("Invalid service token {token}: a custom resource's ServiceToken is a Lambda function's or an SNS topic's ARN"));
    }
    let request_id = roto_core::dispatch::new_request_id();
    let key = format!("{}/{}/{request_id}", c.stack_name, c.logical_id);
    let url = response_url(c, &key).await?;
    let mut properties = c.props.clone();
    if let Json::Object(p) = &mut properties {
        p.insert("ServiceToken".into(), Json::String(token.clone()));
    }
    let mut event = json!({
        "RequestType": request_type,
        "ServiceToken": token,
        "ResponseURL": url,
        "StackId": c.stack_id,
        "RequestId": request_id,
        "LogicalResourceId": c.logical_id,
        "ResourceType": c.kind,
        "ResourceProperties": properties,
    });
    if let Some(physical) = &c.physical_id {
        event["PhysicalResourceId"] = json!(physical);
    }
    if request_type == "Update" {
        event["OldResourceProperties"] = c.old_props.clone();
    }
    if service == "sns" {
        let input = json!({"TopicArn": token, "Subject": "AWS CloudFormation custom resource request", "Message": event.to_string()});
        c.api("sns", "Publish", input).await?;
    } else {
        let input =
            json!({"FunctionName": token, "InvocationType": "Event", "Payload": event.to_string()});
        c.api("lambda", "Invoke", input).await?;
    }
    let body = await_response(c, &key, 3_600_000)
        .await?
        .ok_or("CloudFormation did not receive a response from your Custom Resource. Please check your logs for requestId [".to_string() + &request_id + "].")?;
    let answer: Json = serde_json::from_slice(&body)
        .map_err(|_| "Invalid response object: the response is not JSON".to_string())?;
    if answer["Status"].as_str() != Some("SUCCESS") {
        let reason = answer["Reason"]
            .as_str()
            .unwrap_or("See the details in CloudWatch Log Stream");
        return Err(format!(
            "Received response status [FAILED] from custom resource. Message returned: {reason}"
        ));
    }
    let physical = answer["PhysicalResourceId"]
        .as_str()
        .map(str::to_string)
        .or_else(|| c.physical_id.clone())
        .unwrap_or(request_id);
    let data = answer["Data"].as_object().cloned().unwrap_or_default();
    Ok(resolved(physical, Json::Object(data)))
}

pub(crate) const WAIT_CONDITION_HANDLE: Provider = Provider {
    kind: "AWS::CloudFormation::WaitConditionHandle",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let key = format!("{}/{}/signal", c.stack_name, c.logical_id);
            Ok(resolved(response_url(c, &key).await?, json!({})))
        })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |_| Box::pin(async { Ok(()) }),
};

pub(crate) const WAIT_CONDITION: Provider = Provider {
    kind: "AWS::CloudFormation::WaitCondition",
    replaces: &["Handle", "Timeout", "Count"],
    create: |c| Box::pin(wait_condition(c)),
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |_| Box::pin(async { Ok(()) }),
};

/// Waits for a signal PUT to the handle's URL (the first one completes the condition).
async fn wait_condition(c: &Call) -> Outcome {
    let id = super::generated_name(&c.stack_name, &c.logical_id, 128);
    let Some(handle) = c.str("Handle") else {
        return Ok(resolved(id, json!({"Data": "{}"})));
    };
    let key = handle.splitn(5, '/').nth(4).unwrap_or_default().to_string();
    let timeout = c
        .prop("Timeout")
        .map(crate::cloudformation::template::scalar_text)
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(43_200);
    let Some(body) = await_response(c, &key, timeout * 1000).await? else {
        return Err("WaitCondition timed out. Received 0 conditions when expecting 1".into());
    };
    let signal: Json = serde_json::from_slice(&body).unwrap_or_default();
    if signal["Status"].as_str() == Some("FAILURE") {
        return Err(format!(
            "WaitCondition received failed message: '{}' for uniqueId: {}",
            signal["Reason"].as_str().unwrap_or_default(),
            signal["UniqueId"].as_str().unwrap_or_default()
        ));
    }
    let mut data = Map::new();
    data.insert(
        signal["UniqueId"].as_str().unwrap_or("1").to_string(),
        signal["Data"].clone(),
    );
    Ok(resolved(
        id,
        json!({"Data": Json::Object(data).to_string()}),
    ))
}
