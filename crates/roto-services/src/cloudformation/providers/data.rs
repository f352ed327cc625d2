//! Providers of storage and configuration types: S3 buckets (with their notifications) and
//! bucket policies, DynamoDB
//! tables, SSM parameters, Secrets Manager secrets (with their rotation schedules and
//! resource policies), KMS keys and aliases, Logs groups, Kinesis streams (and their
//! enhanced fan-out consumers and resource policies) and Firehose delivery streams.

use serde_json::{json, Map, Value as Json};

use super::{empty, gone_ok, pick, resolved, retag, tag_map, with, Call, Outcome, Provider, Tags};

pub(crate) const S3_BUCKET: Provider = Provider {
    kind: "AWS::S3::Bucket",
    replaces: &["BucketName"],
    create: |c| Box::pin(bucket_create(c)),
    update: Some(|c| Box::pin(bucket_configure(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("s3", "DeleteBucket", json!({"Bucket": c.physical()}))
                    .await,
            )
        })
    },
};

async fn bucket_create(c: &Call) -> Outcome {
    let name = c.name("BucketName", 63).to_ascii_lowercase();
    let mut input = json!({"Bucket": name});
    if c.ctx.region != "us-east-1" {
        input = with(
            input,
            "CreateBucketConfiguration",
            json!({"LocationConstraint": c.ctx.region}),
        );
    }
    c.api("s3", "CreateBucket", input).await?;
    let call = Call {
        physical_id: Some(name),
        ..c.clone()
    };
    bucket_configure(&call).await
}

/// Applies a bucket's configurations (tags, versioning, encryption, public access block,
/// lifecycle, CORS, ownership controls, policy-free parts) and gives its attributes.
async fn bucket_configure(c: &Call) -> Outcome {
    let bucket = c.physical().to_string();
    if let Some(tags) = c.prop("Tags") {
        let set: Vec<Json> = tags.as_array().cloned().unwrap_or_default();
        c.api(
            "s3",
            "PutBucketTagging",
            json!({"Bucket": bucket, "Tagging": {"TagSet": set}}),
        )
        .await?;
    }
    if let Some(v) = c.prop("VersioningConfiguration") {
        c.api(
            "s3",
            "PutBucketVersioning",
            json!({"Bucket": bucket, "VersioningConfiguration": v}),
        )
        .await?;
    }
    if let Some(v) = c.prop("PublicAccessBlockConfiguration") {
        c.api(
            "s3",
            "PutPublicAccessBlock",
            json!({"Bucket": bucket, "PublicAccessBlockConfiguration": v}),
        )
        .await?;
    }
    if let Some(v) = c.prop("OwnershipControls") {
        c.api(
            "s3",
            "PutBucketOwnershipControls",
            json!({"Bucket": bucket, "OwnershipControls": v}),
        )
        .await?;
    }
    if let Some(rules) = c
        .prop("BucketEncryption")
        .and_then(|e| e["ServerSideEncryptionConfiguration"].as_array())
    {
        let rules: Vec<Json> = rules
            .iter()
            .map(|r| {
                let rule = json!({"ApplyServerSideEncryptionByDefault": r["ServerSideEncryptionByDefault"]});
                with(rule, "BucketKeyEnabled", r["BucketKeyEnabled"].clone())
            })
            .collect();
        c.api(
            "s3",
            "PutBucketEncryption",
            json!({"Bucket": bucket, "ServerSideEncryptionConfiguration": {"Rules": rules}}),
        )
        .await?;
    }
    if let Some(rules) = c
        .prop("LifecycleConfiguration")
        .and_then(|l| l["Rules"].as_array())
    {
        let rules: Vec<Json> = rules.iter().map(lifecycle_rule).collect();
        c.api(
            "s3",
            "PutBucketLifecycleConfiguration",
            json!({"Bucket": bucket, "LifecycleConfiguration": {"Rules": rules}}),
        )
        .await?;
    }
    if let Some(rules) = c
        .prop("CorsConfiguration")
        .and_then(|l| l["CorsRules"].as_array())
    {
        let rules: Vec<Json> = rules.iter().map(cors_rule).collect();
        c.api(
            "s3",
            "PutBucketCors",
            json!({"Bucket": bucket, "CORSConfiguration": {"CORSRules": rules}}),
        )
        .await?;
    }
    let notifications = c.prop("NotificationConfiguration");
    if notifications.is_some() || c.old_props.get("NotificationConfiguration").is_some() {
        let config = notification_configuration(notifications.unwrap_or(&Json::Null));
        let input = json!({"Bucket": bucket, "NotificationConfiguration": config});
        c.api("s3", "PutBucketNotificationConfiguration", input)
            .await?;
    }
    let region = &c.ctx.region;
    Ok(resolved(
        bucket.as_str(),
        json!({
            "Arn": format!("arn:aws:s3:::{bucket}"),
            "DomainName": format!("{bucket}.s3.amazonaws.com"),
            "RegionalDomainName": format!("{bucket}.s3.{region}.amazonaws.com"),
            "DualStackDomainName": format!("{bucket}.s3.dualstack.{region}.amazonaws.com"),
            "WebsiteURL": format!("http://{bucket}.s3-website-{region}.amazonaws.com"),
        }),
    ))
}

/// A template's `NotificationConfiguration` as S3's API writes it: each Lambda, queue and
/// topic configuration with its one event and its key filter rules.
fn notification_configuration(n: &Json) -> Json {
    let list = |member: &str, target: &str, api_member: &str| -> Json {
        let items = n[member].as_array().into_iter().flatten().map(|c| {
            let mut item = Map::new();
            item.insert(api_member.into(), c[target].clone());
            item.insert("Events".into(), json!([c["Event"]]));
            if let Some(rules) = c["Filter"]["S3Key"].get("Rules") {
                item.insert("Filter".into(), json!({"Key": {"FilterRules": rules}}));
            }
            Json::Object(item)
        });
        Json::Array(items.collect())
    };
    let mut config = json!({
        "LambdaFunctionConfigurations": list("LambdaConfigurations", "Function", "LambdaFunctionArn"),
        "QueueConfigurations": list("QueueConfigurations", "Queue", "QueueArn"),
        "TopicConfigurations": list("TopicConfigurations", "Topic", "TopicArn"),
    });
    if n["EventBridgeConfiguration"]["EventBridgeEnabled"] == json!(true) {
        config["EventBridgeConfiguration"] = json!({});
    }
    config
}

/// A template's lifecycle rule as S3's API writes it.
fn lifecycle_rule(r: &Json) -> Json {
    let mut rule = pick(
        r,
        &[
            "Status",
            "NoncurrentVersionExpiration",
            "AbortIncompleteMultipartUpload",
        ],
    );
    rule = with(rule, "ID", r["Id"].clone());
    rule = with(
        rule,
        "Filter",
        json!({"Prefix": r["Prefix"].as_str().unwrap_or_default()}),
    );
    if let Some(days) = r.get("ExpirationInDays") {
        rule = with(rule, "Expiration", json!({"Days": days}));
    }
    if let Some(days) = r.get("NoncurrentVersionExpirationInDays") {
        rule = with(
            rule,
            "NoncurrentVersionExpiration",
            json!({"NoncurrentDays": days}),
        );
    }
    rule
}

fn cors_rule(r: &Json) -> Json {
    let mut rule = pick(r, &["AllowedHeaders", "AllowedMethods", "AllowedOrigins"]);
    rule = with(rule, "ExposeHeaders", r["ExposedHeaders"].clone());
    rule = with(rule, "ID", r["Id"].clone());
    with(rule, "MaxAgeSeconds", r["MaxAge"].clone())
}

pub(crate) const S3_BUCKET_POLICY: Provider = Provider {
    kind: "AWS::S3::BucketPolicy",
    replaces: &["Bucket"],
    create: |c| Box::pin(bucket_policy_put(c)),
    update: Some(|c| Box::pin(bucket_policy_put(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("s3", "DeleteBucketPolicy", json!({"Bucket": c.physical()}))
                    .await,
            )
        })
    },
};

async fn bucket_policy_put(c: &Call) -> Outcome {
    let bucket = c.str("Bucket").unwrap_or_default();
    let policy = c.document("PolicyDocument").unwrap_or_default();
    c.api(
        "s3",
        "PutBucketPolicy",
        json!({"Bucket": bucket, "Policy": policy}),
    )
    .await?;
    Ok(resolved(bucket, empty()))
}

pub(crate) const DYNAMODB_TABLE: Provider = Provider {
    kind: "AWS::DynamoDB::Table",
    replaces: &["TableName", "KeySchema", "LocalSecondaryIndexes"],
    create: |c| Box::pin(table_create(c)),
    update: Some(|c| Box::pin(table_update(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "dynamodb",
                    "DeleteTable",
                    json!({"TableName": c.physical()}),
                )
                .await,
            )
        })
    },
};

async fn table_create(c: &Call) -> Outcome {
    let name = c.name("TableName", 255);
    let mut input = pick(
        &c.props,
        &[
            "AttributeDefinitions",
            "KeySchema",
            "BillingMode",
            "ProvisionedThroughput",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
            "SSESpecification",
            "Tags",
            "TableClass",
            "DeletionProtectionEnabled",
        ],
    );
    input = with(input, "TableName", json!(name));
    if let Some(view) = c
        .prop("StreamSpecification")
        .and_then(|s| s.get("StreamViewType"))
    {
        input = with(
            input,
            "StreamSpecification",
            json!({"StreamEnabled": true, "StreamViewType": view}),
        );
    }
    if let Some(sse) = c.prop("SSESpecification") {
        input = with(
            input,
            "SSESpecification",
            pick(sse, &["SSEEnabled", "SSEType", "KMSMasterKeyId"]),
        );
    }
    let out = c.api("dynamodb", "CreateTable", input).await?;
    table_ttl(c, &name).await?;
    Ok(table_resolved(&name, &out["TableDescription"]))
}

/// Sets a table's Time to Live as `TimeToLiveSpecification` says, when it changed.
pub(super) async fn table_ttl(c: &Call, name: &str) -> Result<(), String> {
    let Some(ttl) = c.prop("TimeToLiveSpecification") else {
        return Ok(());
    };
    if c.old_props.get("TimeToLiveSpecification") == Some(ttl) {
        return Ok(());
    }
    c.api(
        "dynamodb",
        "UpdateTimeToLive",
        json!({"TableName": name, "TimeToLiveSpecification": ttl}),
    )
    .await?;
    Ok(())
}

async fn table_update(c: &Call) -> Outcome {
    let name = c.physical().to_string();
    let changed = |m: &str| c.props.get(m) != c.old_props.get(m);
    if changed("BillingMode") || changed("ProvisionedThroughput") {
        let input = with(
            pick(&c.props, &["BillingMode", "ProvisionedThroughput"]),
            "TableName",
            json!(name),
        );
        c.api("dynamodb", "UpdateTable", input).await?;
    }
    table_ttl(c, &name).await?;
    let out = c
        .api("dynamodb", "DescribeTable", json!({"TableName": name}))
        .await?;
    Ok(table_resolved(&name, &out["Table"]))
}

fn table_resolved(name: &str, description: &Json) -> super::super::intrinsics::Resolved {
    let mut attrs = json!({"Arn": description["TableArn"]});
    attrs = with(attrs, "StreamArn", description["LatestStreamArn"].clone());
    resolved(name, attrs)
}

pub(crate) const SSM_PARAMETER: Provider = Provider {
    kind: "AWS::SSM::Parameter",
    replaces: &["Name"],
    create: |c| Box::pin(parameter_put(c, false)),
    update: Some(|c| Box::pin(parameter_put(c, true))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("ssm", "DeleteParameter", json!({"Name": c.physical()}))
                    .await,
            )
        })
    },
};

async fn parameter_put(c: &Call, overwrite: bool) -> Outcome {
    let name = match c.str("Name") {
        Some(n) => n.to_string(),
        None if overwrite => c.physical().to_string(),
        None => super::generated_name("CFN", &c.logical_id, 128),
    };
    let mut input = pick(
        &c.props,
        &[
            "Type",
            "Value",
            "Description",
            "AllowedPattern",
            "Tier",
            "DataType",
            "Policies",
        ],
    );
    input = with(input, "Name", json!(name));
    if overwrite {
        input = with(input, "Overwrite", json!(true));
    } else if let Some(Json::Object(tags)) = c.prop("Tags") {
        let list: Vec<Json> = tags
            .iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        input = with(input, "Tags", Json::Array(list));
    }
    c.api("ssm", "PutParameter", input).await?;
    Ok(resolved(
        name,
        json!({"Type": c.props["Type"], "Value": c.props["Value"]}),
    ))
}

pub(crate) const SECRET: Provider = Provider {
    kind: "AWS::SecretsManager::Secret",
    replaces: &["Name"],
    create: |c| Box::pin(secret_create(c)),
    update: Some(|c| Box::pin(secret_update(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "secretsmanager",
                    "DeleteSecret",
                    json!({"SecretId": c.physical(), "ForceDeleteWithoutRecovery": true}),
                )
                .await,
            )
        })
    },
};

async fn secret_value(c: &Call) -> Result<Option<String>, String> {
    if let Some(s) = c.str("SecretString") {
        return Ok(Some(s.to_string()));
    }
    let Some(generate) = c.prop("GenerateSecretString") else {
        return Ok(None);
    };
    let options = pick(
        generate,
        &[
            "PasswordLength",
            "ExcludeCharacters",
            "ExcludeNumbers",
            "ExcludePunctuation",
            "ExcludeUppercase",
            "ExcludeLowercase",
            "IncludeSpace",
            "RequireEachIncludedType",
        ],
    );
    let out = c
        .api("secretsmanager", "GetRandomPassword", options)
        .await?;
    let password = out["RandomPassword"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    match (
        generate["SecretStringTemplate"].as_str(),
        generate["GenerateStringKey"].as_str(),
    ) {
        (Some(template), Some(key)) => {
            let mut doc: Map<String, Json> = serde_json::from_str(template).map_err(|_| {
                "Properties validation failed: SecretStringTemplate must be a JSON object"
                    .to_string()
            })?;
            doc.insert(key.to_string(), Json::String(password));
            Ok(Some(Json::Object(doc).to_string()))
        }
        _ => Ok(Some(password)),
    }
}

async fn secret_create(c: &Call) -> Outcome {
    let name = c.name("Name", 256);
    let mut input = pick(&c.props, &["Description", "KmsKeyId", "Tags"]);
    input = with(input, "Name", json!(name));
    input = with(
        input,
        "SecretString",
        secret_value(c).await?.map(Json::String).unwrap_or_default(),
    );
    let out = c.api("secretsmanager", "CreateSecret", input).await?;
    let arn = out["ARN"].as_str().unwrap_or_default();
    Ok(resolved(arn, json!({"Id": arn})))
}

async fn secret_update(c: &Call) -> Outcome {
    let arn = c.physical().to_string();
    let mut input = with(
        pick(&c.props, &["Description", "KmsKeyId"]),
        "SecretId",
        json!(arn),
    );
    if c.props.get("SecretString") != c.old_props.get("SecretString")
        || c.props.get("GenerateSecretString") != c.old_props.get("GenerateSecretString")
    {
        input = with(
            input,
            "SecretString",
            secret_value(c).await?.map(Json::String).unwrap_or_default(),
        );
    }
    c.api("secretsmanager", "UpdateSecret", input).await?;
    Ok(resolved(arn.as_str(), json!({"Id": arn})))
}

pub(crate) const KMS_KEY: Provider = Provider {
    kind: "AWS::KMS::Key",
    replaces: &["KeySpec", "KeyUsage", "MultiRegion"],
    create: |c| Box::pin(key_create(c)),
    update: Some(|c| Box::pin(key_update(c))),
    delete: |c| {
        Box::pin(async move {
            let days = c
                .props
                .get("PendingWindowInDays")
                .cloned()
                .unwrap_or(json!(30));
            gone_ok(
                c.api(
                    "kms",
                    "ScheduleKeyDeletion",
                    json!({"KeyId": c.physical(), "PendingWindowInDays": days}),
                )
                .await,
            )
        })
    },
};

async fn key_create(c: &Call) -> Outcome {
    let mut input = pick(
        &c.props,
        &["Description", "KeyUsage", "KeySpec", "MultiRegion"],
    );
    input = with(
        input,
        "Policy",
        c.document("KeyPolicy")
            .map(Json::String)
            .unwrap_or_default(),
    );
    let tags: Vec<Json> = c
        .prop("Tags")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|t| json!({"TagKey": t["Key"], "TagValue": t["Value"]}))
        .collect();
    if !tags.is_empty() {
        input = with(input, "Tags", Json::Array(tags));
    }
    let out = c.api("kms", "CreateKey", input).await?;
    let id = out["KeyMetadata"]["KeyId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let call = Call {
        physical_id: Some(id),
        ..c.clone()
    };
    key_settings(&call).await?;
    Ok(resolved(
        call.physical(),
        json!({"Arn": out["KeyMetadata"]["Arn"], "KeyId": call.physical()}),
    ))
}

async fn key_settings(c: &Call) -> Result<(), String> {
    let id = c.physical();
    if c.prop("EnableKeyRotation").and_then(Json::as_bool) == Some(true) {
        c.api("kms", "EnableKeyRotation", json!({"KeyId": id}))
            .await?;
    }
    let enabled = c.prop("Enabled").and_then(Json::as_bool).unwrap_or(true);
    let op = if enabled { "EnableKey" } else { "DisableKey" };
    c.api("kms", op, json!({"KeyId": id})).await?;
    Ok(())
}

async fn key_update(c: &Call) -> Outcome {
    let id = c.physical().to_string();
    if let Some(policy) = c.document("KeyPolicy") {
        c.api(
            "kms",
            "PutKeyPolicy",
            json!({"KeyId": id, "PolicyName": "default", "Policy": policy}),
        )
        .await?;
    }
    if let Some(d) = c.str("Description") {
        c.api(
            "kms",
            "UpdateKeyDescription",
            json!({"KeyId": id, "Description": d}),
        )
        .await?;
    }
    key_settings(c).await?;
    Ok(c.previous.clone())
}

pub(crate) const KMS_ALIAS: Provider = Provider {
    kind: "AWS::KMS::Alias",
    replaces: &["AliasName"],
    create: |c| Box::pin(alias_put(c, "CreateAlias")),
    update: Some(|c| Box::pin(alias_put(c, "UpdateAlias"))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("kms", "DeleteAlias", json!({"AliasName": c.physical()}))
                    .await,
            )
        })
    },
};

async fn alias_put(c: &Call, operation: &str) -> Outcome {
    let name = c.str("AliasName").unwrap_or_default();
    c.api(
        "kms",
        operation,
        json!({"AliasName": name, "TargetKeyId": c.props["TargetKeyId"]}),
    )
    .await?;
    Ok(resolved(name, empty()))
}

pub(crate) const LOG_GROUP: Provider = Provider {
    kind: "AWS::Logs::LogGroup",
    replaces: &["LogGroupName"],
    create: |c| Box::pin(log_group_create(c)),
    update: Some(|c| Box::pin(log_group_retention(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "logs",
                    "DeleteLogGroup",
                    json!({"logGroupName": c.physical()}),
                )
                .await,
            )
        })
    },
};

async fn log_group_create(c: &Call) -> Outcome {
    let name = c.name("LogGroupName", 512);
    let mut input = json!({"logGroupName": name});
    input = with(input, "kmsKeyId", c.props["KmsKeyId"].clone());
    if c.prop("Tags").is_some() {
        input = with(input, "tags", tag_map(c.prop("Tags")));
    }
    c.api("logs", "CreateLogGroup", input).await?;
    let call = Call {
        physical_id: Some(name),
        ..c.clone()
    };
    log_group_retention(&call).await
}

async fn log_group_retention(c: &Call) -> Outcome {
    let name = c.physical();
    match c.prop("RetentionInDays") {
        Some(days) => {
            c.api(
                "logs",
                "PutRetentionPolicy",
                json!({"logGroupName": name, "retentionInDays": days}),
            )
            .await?
        }
        None if c.old_props.get("RetentionInDays").is_some() => {
            c.api(
                "logs",
                "DeleteRetentionPolicy",
                json!({"logGroupName": name}),
            )
            .await?
        }
        None => Json::Null,
    };
    Ok(resolved(
        name,
        json!({"Arn": c.arn("logs", &format!("log-group:{name}:*"))}),
    ))
}

pub(crate) const KINESIS_STREAM: Provider = Provider {
    kind: "AWS::Kinesis::Stream",
    replaces: &["Name"],
    create: |c| Box::pin(stream_create(c)),
    update: Some(|c| Box::pin(stream_update(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "kinesis",
                    "DeleteStream",
                    json!({"StreamName": c.physical(), "EnforceConsumerDeletion": true}),
                )
                .await,
            )
        })
    },
};

async fn stream_create(c: &Call) -> Outcome {
    let name = c.name("Name", 128);
    let mut input = with(
        pick(&c.props, &["StreamModeDetails"]),
        "StreamName",
        json!(name),
    );
    if c.prop("StreamModeDetails").is_none() {
        input = with(
            input,
            "ShardCount",
            c.props.get("ShardCount").cloned().unwrap_or(json!(1)),
        );
    }
    c.api("kinesis", "CreateStream", input).await?;
    if let Some(hours) = c
        .prop("RetentionPeriodHours")
        .filter(|h| h.as_i64() != Some(24))
    {
        c.api(
            "kinesis",
            "IncreaseStreamRetentionPeriod",
            json!({"StreamName": name, "RetentionPeriodHours": hours}),
        )
        .await?;
    }
    if c.prop("Tags").is_some() {
        c.api(
            "kinesis",
            "AddTagsToStream",
            json!({"StreamName": name, "Tags": tag_map(c.prop("Tags"))}),
        )
        .await?;
    }
    let arn = c.arn("kinesis", &format!("stream/{name}"));
    Ok(resolved(name, json!({"Arn": arn})))
}

/// Changes the stream's mode, shard count, retention and tags in place, as Kinesis allows.
async fn stream_update(c: &Call) -> Outcome {
    let name = c.physical();
    let changed = |p: &str| c.prop(p).filter(|v| c.old_props.get(p) != Some(*v));
    let arn = c.arn("kinesis", &format!("stream/{name}"));
    let mode = |props: &Json| props["StreamModeDetails"]["StreamMode"].clone();
    if mode(&c.props) != mode(&c.old_props) {
        let details = c
            .prop("StreamModeDetails")
            .cloned()
            .unwrap_or_else(|| json!({"StreamMode": "PROVISIONED"}));
        let input = json!({"StreamARN": arn, "StreamModeDetails": details});
        c.api("kinesis", "UpdateStreamMode", input).await?;
    }
    let on_demand = mode(&c.props).as_str() == Some("ON_DEMAND");
    if let Some(count) = changed("ShardCount").filter(|_| !on_demand) {
        let input = json!({"StreamName": name, "TargetShardCount": count, "ScalingType": "UNIFORM_SCALING"});
        c.api("kinesis", "UpdateShardCount", input).await?;
    }
    let hours = |props: &Json| props["RetentionPeriodHours"].as_i64().unwrap_or(24);
    let (new, old) = (hours(&c.props), hours(&c.old_props));
    if new != old {
        let operation = if new > old {
            "IncreaseStreamRetentionPeriod"
        } else {
            "DecreaseStreamRetentionPeriod"
        };
        let input = json!({"StreamName": name, "RetentionPeriodHours": new});
        c.api("kinesis", operation, input).await?;
    }
    let operations = ("RemoveTagsFromStream", "AddTagsToStream");
    let target = json!({"StreamName": name});
    retag(c, "kinesis", operations, &target, Tags::Map).await?;
    Ok(c.previous.clone())
}

pub(crate) const DELIVERY_STREAM: Provider = Provider {
    kind: "AWS::KinesisFirehose::DeliveryStream",
    replaces: &[
        "DeliveryStreamName",
        "DeliveryStreamType",
        "KinesisStreamSourceConfiguration",
        "MSKSourceConfiguration",
    ],
    create: |c| {
        Box::pin(async move {
            let name = c.name("DeliveryStreamName", 64);
            let input = with(c.props.clone(), "DeliveryStreamName", json!(name));
            let out = c.api("firehose", "CreateDeliveryStream", input).await?;
            Ok(resolved(name, json!({"Arn": out["DeliveryStreamARN"]})))
        })
    },
    update: Some(|c| Box::pin(delivery_stream_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"DeliveryStreamName": c.physical()});
            gone_ok(c.api("firehose", "DeleteDeliveryStream", input).await)
        })
    },
};

/// Applies a changed destination (`XDestinationConfiguration` as `XDestinationUpdate`),
/// encryption and tags to the delivery stream in place.
async fn delivery_stream_update(c: &Call) -> Outcome {
    let name = c.physical();
    let destination = c.props.as_object().into_iter().flatten().find(|(k, v)| {
        k.ends_with("DestinationConfiguration") && c.old_props.get(k.as_str()) != Some(*v)
    });
    if let Some((member, config)) = destination {
        let out = c
            .api(
                "firehose",
                "DescribeDeliveryStream",
                json!({"DeliveryStreamName": name}),
            )
            .await?;
        let description = &out["DeliveryStreamDescription"];
        let update = member.replace("DestinationConfiguration", "DestinationUpdate");
        let mut input = json!({
            "DeliveryStreamName": name,
            "CurrentDeliveryStreamVersionId": description["VersionId"],
            "DestinationId": description["Destinations"][0]["DestinationId"],
        });
        input[update] = config.clone();
        c.api("firehose", "UpdateDestination", input).await?;
    }
    const ENCRYPTION: &str = "DeliveryStreamEncryptionConfigurationInput";
    if c.prop(ENCRYPTION) != c.old_props.get(ENCRYPTION).filter(|v| !v.is_null()) {
        let input = match c.prop(ENCRYPTION) {
            Some(config) => (
                "StartDeliveryStreamEncryption",
                json!({"DeliveryStreamName": name, ENCRYPTION: config}),
            ),
            None => (
                "StopDeliveryStreamEncryption",
                json!({"DeliveryStreamName": name}),
            ),
        };
        c.api("firehose", input.0, input.1).await?;
    }
    let operations = ("UntagDeliveryStream", "TagDeliveryStream");
    let target = json!({"DeliveryStreamName": name});
    retag(c, "firehose", operations, &target, Tags::List).await?;
    Ok(c.previous.clone())
}

pub(crate) const ROTATION_SCHEDULE: Provider = Provider {
    kind: "AWS::SecretsManager::RotationSchedule",
    replaces: &["SecretId"],
    create: |c| Box::pin(rotation_put(c)),
    update: Some(|c| Box::pin(rotation_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"SecretId": c.physical()});
            gone_ok(c.api("secretsmanager", "CancelRotateSecret", input).await)
        })
    },
};

/// RotateSecret with the schedule's function and rules, rotating at once unless
/// `RotateImmediatelyOnUpdate` is false; `Ref` the secret's ARN. Hosted rotation functions
/// (which AWS deploys from the Serverless Application Repository) are not supported.
async fn rotation_put(c: &Call) -> Outcome {
    if c.prop("HostedRotationLambda").is_some() {
        return Err("Roto does not support HostedRotationLambda: give RotationLambdaARN".into());
    }
    let mut input = pick(
        &c.props,
        &["SecretId", "RotationLambdaARN", "RotationRules"],
    );
    let immediately = c
        .prop("RotateImmediatelyOnUpdate")
        .cloned()
        .unwrap_or(json!(true));
    input = with(input, "RotateImmediately", immediately);
    let out = c.api("secretsmanager", "RotateSecret", input).await?;
    Ok(resolved(out["ARN"].as_str().unwrap_or_default(), json!({})))
}

pub(crate) const SECRET_POLICY: Provider = Provider {
    kind: "AWS::SecretsManager::ResourcePolicy",
    replaces: &["SecretId"],
    create: |c| Box::pin(secret_policy_put(c)),
    update: Some(|c| Box::pin(secret_policy_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"SecretId": c.physical()});
            gone_ok(c.api("secretsmanager", "DeleteResourcePolicy", input).await)
        })
    },
};

/// PutResourcePolicy with the policy as a document string; `Ref` the secret's ARN.
async fn secret_policy_put(c: &Call) -> Outcome {
    let mut input = pick(&c.props, &["SecretId", "BlockPublicPolicy"]);
    input = with(input, "ResourcePolicy", json!(c.document("ResourcePolicy")));
    let out = c.api("secretsmanager", "PutResourcePolicy", input).await?;
    Ok(resolved(out["ARN"].as_str().unwrap_or_default(), json!({})))
}

pub(crate) const STREAM_CONSUMER: Provider = Provider {
    kind: "AWS::Kinesis::StreamConsumer",
    replaces: &["ConsumerName", "StreamARN"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["StreamARN", "ConsumerName"]);
            if c.prop("Tags").is_some() {
                input = with(input, "Tags", tag_map(c.prop("Tags")));
            }
            let out = c.api("kinesis", "RegisterStreamConsumer", input).await?;
            let consumer = &out["Consumer"];
            let arn = consumer["ConsumerARN"].as_str().unwrap_or_default();
            Ok(resolved(
                arn,
                json!({
                    "ConsumerARN": arn,
                    "ConsumerName": consumer["ConsumerName"],
                    "ConsumerStatus": consumer["ConsumerStatus"],
                    "ConsumerCreationTimestamp": consumer["ConsumerCreationTimestamp"],
                    "StreamARN": c.props["StreamARN"],
                }),
            ))
        })
    },
    update: None,
    delete: |c| {
        Box::pin(async move {
            let input = json!({"ConsumerARN": c.physical()});
            gone_ok(c.api("kinesis", "DeregisterStreamConsumer", input).await)
        })
    },
};

/// A data stream's or consumer's resource policy: `Ref` the resource's ARN; the policy
/// changes in place.
pub(crate) const KINESIS_RESOURCE_POLICY: Provider = Provider {
    kind: "AWS::Kinesis::ResourcePolicy",
    replaces: &["ResourceArn"],
    create: |c| Box::pin(kinesis_policy_put(c)),
    update: Some(|c| Box::pin(kinesis_policy_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"ResourceARN": c.physical()});
            gone_ok(c.api("kinesis", "DeleteResourcePolicy", input).await)
        })
    },
};

async fn kinesis_policy_put(c: &Call) -> Outcome {
    let arn = c.str("ResourceArn").unwrap_or_default();
    let input = json!({"ResourceARN": arn, "Policy": c.document("ResourcePolicy")});
    c.api("kinesis", "PutResourcePolicy", input).await?;
    Ok(resolved(arn, json!({})))
}
