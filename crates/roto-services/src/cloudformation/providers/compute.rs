//! Providers of compute types: Lambda functions (inline `ZipFile` or S3 code), versions,
//! aliases, layer versions and their permissions, permissions, event source mappings, URLs,
//! asynchronous invocation settings and code signing configurations, and Step Functions
//! state machines (with their versions and aliases) and activities.

use roto_core::Value;
use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, tag_map, with, Call, Outcome, Provider};
use crate::cloudformation::intrinsics::substitute;

pub(crate) const FUNCTION: Provider = Provider {
    kind: "AWS::Lambda::Function",
    replaces: &["FunctionName", "PackageType"],
    create: |c| Box::pin(function_create(c)),
    update: Some(|c| Box::pin(function_update(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "lambda",
                    "DeleteFunction",
                    json!({"FunctionName": c.physical()}),
                )
                .await,
            )
        })
    },
};

const FUNCTION_CONFIG: [&str; 13] = [
    "Role",
    "Handler",
    "Runtime",
    "Description",
    "Timeout",
    "MemorySize",
    "Environment",
    "Layers",
    "TracingConfig",
    "DeadLetterConfig",
    "EphemeralStorage",
    "LoggingConfig",
    "VpcConfig",
];

/// The function's configuration as Create/UpdateFunctionConfiguration's input: the
/// properties that keep their name, and `KmsKeyArn`, which the API spells `KMSKeyArn`.
fn function_config(c: &Call) -> Json {
    with(
        pick(&c.props, &FUNCTION_CONFIG),
        "KMSKeyArn",
        c.props.get("KmsKeyArn").cloned().unwrap_or_default(),
    )
}

/// The function's code as CreateFunction's `Code`: inline source zipped as `index.<ext>`,
/// or the S3 location or image as given.
fn code(c: &Call) -> Value {
    let code = c.props.get("Code").cloned().unwrap_or_default();
    if let Some(source) = code["ZipFile"].as_str() {
        let runtime = c.str("Runtime").unwrap_or_default();
        let file = if runtime.starts_with("python") {
            "index.py"
        } else {
            "index.js"
        };
        let zip = crate::lambda::zip::stored(&[(file, source.as_bytes())]);
        return Value::map().with("ZipFile", Value::Blob(zip));
    }
    Value::from_json(&pick(
        &code,
        &["S3Bucket", "S3Key", "S3ObjectVersion", "ImageUri"],
    ))
}

async fn function_create(c: &Call) -> Outcome {
    let name = c.name("FunctionName", 64);
    let mut input = function_config(c);
    for extra in ["Architectures", "PackageType"] {
        input = with(
            input,
            extra,
            c.props.get(extra).cloned().unwrap_or_default(),
        );
    }
    input = with(input, "FunctionName", json!(name));
    if c.prop("Tags").is_some() {
        input = with(input, "Tags", tag_map(c.prop("Tags")));
    }
    let code = code(c);
    let out = c
        .api_with("lambda", "CreateFunction", input, |v| {
            v.insert("Code", code)
        })
        .await?;
    Ok(resolved(name, json!({"Arn": out["FunctionArn"]})))
}

async fn function_update(c: &Call) -> Outcome {
    let name = c.physical().to_string();
    let config = with(function_config(c), "FunctionName", json!(name));
    c.api("lambda", "UpdateFunctionConfiguration", config)
        .await?;
    if c.props.get("Code") != c.old_props.get("Code") {
        let code = code(c);
        let code = code.as_map().cloned().unwrap_or_default();
        c.api_with(
            "lambda",
            "UpdateFunctionCode",
            json!({"FunctionName": name}),
            |v| {
                for (k, member) in code {
                    v.insert(k, member);
                }
            },
        )
        .await?;
    }
    Ok(c.previous.clone())
}

pub(crate) const LAYER_VERSION: Provider = Provider {
    kind: "AWS::Lambda::LayerVersion",
    replaces: &[],
    create: |c| Box::pin(layer_create(c)),
    update: None,
    delete: |c| Box::pin(layer_delete(c)),
};

async fn layer_create(c: &Call) -> Outcome {
    let name = c.name("LayerName", 64);
    let input = with(
        pick(
            &c.props,
            &[
                "Description",
                "Content",
                "CompatibleRuntimes",
                "CompatibleArchitectures",
                "LicenseInfo",
            ],
        ),
        "LayerName",
        json!(name),
    );
    let out = c.api("lambda", "PublishLayerVersion", input).await?;
    let arn = out["LayerVersionArn"].as_str().unwrap_or_default();
    Ok(resolved(arn, json!({"LayerVersionArn": arn})))
}

/// The layer name and version number a layer version's ARN
/// (`arn:aws:lambda:<region>:<account>:layer:<name>:<n>`) names.
fn layer_version(arn: &str) -> Option<(&str, i64)> {
    let mut parts = arn.rsplitn(3, ':');
    let (Some(version), Some(name)) = (parts.next(), parts.next()) else {
        return None;
    };
    Some((name, version.parse().ok()?))
}

/// Deletes the version its ARN names.
async fn layer_delete(c: &Call) -> Result<(), String> {
    let Some((name, version)) = layer_version(c.physical()) else {
        return Ok(());
    };
    let input = json!({"LayerName": name, "VersionNumber": version});
    gone_ok(c.api("lambda", "DeleteLayerVersion", input).await)
}

/// A statement of a layer version's policy: `Ref` `<LayerVersionArn>#<statement id>`, as
/// AWS's id, which names everything its delete needs.
pub(crate) const LAYER_VERSION_PERMISSION: Provider = Provider {
    kind: "AWS::Lambda::LayerVersionPermission",
    replaces: &["Action", "LayerVersionArn", "OrganizationId", "Principal"],
    create: |c| Box::pin(layer_permission_create(c)),
    update: None,
    delete: |c| {
        Box::pin(async move {
            let Some((arn, statement)) = c.physical().split_once('#') else {
                return Ok(());
            };
            let Some((name, version)) = layer_version(arn) else {
                return Ok(());
            };
            let input =
                json!({"LayerName": name, "VersionNumber": version, "StatementId": statement});
            gone_ok(c.api("lambda", "RemoveLayerVersionPermission", input).await)
        })
    },
};

async fn layer_permission_create(c: &Call) -> Outcome {
    let arn = c.str("LayerVersionArn").unwrap_or_default();
    let Some((name, version)) = layer_version(arn) else {
        return Err(format!(
            "Properties validation failed for resource {}: LayerVersionArn '{arn}' is not a layer version's ARN",
            c.logical_id
        ));
    };
    let statement = super::generated_name(&c.stack_name, &c.logical_id, 100);
    let mut input = pick(&c.props, &["Action", "Principal", "OrganizationId"]);
    input = with(input, "LayerName", json!(name));
    input = with(input, "VersionNumber", json!(version));
    input = with(input, "StatementId", json!(statement));
    c.api("lambda", "AddLayerVersionPermission", input).await?;
    let id = format!("{arn}#{statement}");
    Ok(resolved(id.as_str(), json!({"Id": id})))
}

pub(crate) const PERMISSION: Provider = Provider {
    kind: "AWS::Lambda::Permission",
    replaces: &[
        "FunctionName",
        "Action",
        "Principal",
        "SourceArn",
        "SourceAccount",
        "EventSourceToken",
        "FunctionUrlAuthType",
        "PrincipalOrgID",
    ],
    create: |c| Box::pin(permission_create(c)),
    update: None,
    delete: |c| {
        Box::pin(async move {
            let function = c.props["FunctionName"].clone();
            gone_ok(
                c.api(
                    "lambda",
                    "RemovePermission",
                    json!({"FunctionName": function, "StatementId": c.physical()}),
                )
                .await,
            )
        })
    },
};

async fn permission_create(c: &Call) -> Outcome {
    let id = super::generated_name(&c.stack_name, &c.logical_id, 100);
    let mut input = pick(
        &c.props,
        &[
            "FunctionName",
            "Action",
            "Principal",
            "SourceArn",
            "SourceAccount",
            "EventSourceToken",
            "FunctionUrlAuthType",
            "PrincipalOrgID",
        ],
    );
    input = with(input, "StatementId", json!(id));
    c.api("lambda", "AddPermission", input).await?;
    Ok(resolved(id, json!({})))
}

const MAPPING_SETTINGS: [&str; 8] = [
    "FunctionName",
    "BatchSize",
    "Enabled",
    "MaximumBatchingWindowInSeconds",
    "FilterCriteria",
    "FunctionResponseTypes",
    "MaximumRetryAttempts",
    "ScalingConfig",
];

pub(crate) const EVENT_SOURCE_MAPPING: Provider = Provider {
    kind: "AWS::Lambda::EventSourceMapping",
    replaces: &[
        "EventSourceArn",
        "StartingPosition",
        "StartingPositionTimestamp",
    ],
    create: |c| Box::pin(mapping_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            let input = with(
                pick(&c.props, &MAPPING_SETTINGS),
                "UUID",
                json!(c.physical()),
            );
            c.api("lambda", "UpdateEventSourceMapping", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "lambda",
                    "DeleteEventSourceMapping",
                    json!({"UUID": c.physical()}),
                )
                .await,
            )
        })
    },
};

async fn mapping_create(c: &Call) -> Outcome {
    let mut input = pick(&c.props, &MAPPING_SETTINGS);
    for extra in [
        "EventSourceArn",
        "StartingPosition",
        "StartingPositionTimestamp",
        "ParallelizationFactor",
        "DestinationConfig",
        "BisectBatchOnFunctionError",
        "MaximumRecordAgeInSeconds",
        "TumblingWindowInSeconds",
    ] {
        input = with(
            input,
            extra,
            c.props.get(extra).cloned().unwrap_or_default(),
        );
    }
    let out = c.api("lambda", "CreateEventSourceMapping", input).await?;
    let id = out["UUID"].as_str().unwrap_or_default();
    Ok(resolved(
        id,
        json!({"Id": id, "EventSourceMappingArn": out["EventSourceMappingArn"]}),
    ))
}

pub(crate) const URL: Provider = Provider {
    kind: "AWS::Lambda::Url",
    replaces: &["TargetFunctionArn", "Qualifier"],
    create: |c| Box::pin(url_put(c, "CreateFunctionUrlConfig")),
    update: Some(|c| Box::pin(url_put(c, "UpdateFunctionUrlConfig"))),
    delete: |c| {
        Box::pin(async move {
            let input = with(
                json!({"FunctionName": c.props["TargetFunctionArn"]}),
                "Qualifier",
                c.props["Qualifier"].clone(),
            );
            gone_ok(c.api("lambda", "DeleteFunctionUrlConfig", input).await)
        })
    },
};

async fn url_put(c: &Call, operation: &str) -> Outcome {
    let mut input = pick(&c.props, &["Qualifier", "AuthType", "Cors", "InvokeMode"]);
    input = with(input, "FunctionName", c.props["TargetFunctionArn"].clone());
    let out = c.api("lambda", operation, input).await?;
    let arn = out["FunctionArn"].as_str().unwrap_or_default();
    Ok(resolved(
        arn,
        json!({"FunctionArn": arn, "FunctionUrl": out["FunctionUrl"]}),
    ))
}

pub(crate) const STATE_MACHINE: Provider = Provider {
    kind: "AWS::StepFunctions::StateMachine",
    replaces: &["StateMachineName", "StateMachineType"],
    create: |c| Box::pin(machine_create(c)),
    update: Some(|c| Box::pin(machine_update(c))),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "stepfunctions",
                    "DeleteStateMachine",
                    json!({"stateMachineArn": c.physical()}),
                )
                .await,
            )
        })
    },
};

/// The definition as a string: `Definition` (an object) or `DefinitionString`, with
/// `DefinitionSubstitutions` put in its `${name}` places.
fn definition(c: &Call) -> Result<String, String> {
    let text =
        match (c.prop("Definition"), c.str("DefinitionString")) {
            (Some(d), _) => d.to_string(),
            (None, Some(s)) => s.to_string(),
            (None, None) => return Err(
                "Properties validation failed: one of Definition or DefinitionString is required"
                    .into(),
            ),
        };
    let subs = c
        .prop("DefinitionSubstitutions")
        .cloned()
        .unwrap_or_default();
    substitute(&text, |name| {
        Ok(match subs.get(name) {
            Some(v) => crate::cloudformation::template::scalar_text(v),
            None => format!("${{{name}}}"),
        })
    })
}

async fn machine_create(c: &Call) -> Outcome {
    let name = c.name("StateMachineName", 80);
    let mut input =
        json!({"name": name, "definition": definition(c)?, "roleArn": c.props["RoleArn"]});
    input = with(input, "type", c.props["StateMachineType"].clone());
    input = with(
        input,
        "loggingConfiguration",
        c.props["LoggingConfiguration"].clone(),
    );
    input = with(
        input,
        "tracingConfiguration",
        c.props["TracingConfiguration"].clone(),
    );
    let tags = lower_tags(c);
    if !tags.is_empty() {
        input = with(input, "tags", Json::Array(tags));
    }
    let out = c.api("stepfunctions", "CreateStateMachine", input).await?;
    let arn = out["StateMachineArn"].as_str().unwrap_or_default();
    Ok(resolved(arn, json!({"Arn": arn, "Name": name})))
}

async fn machine_update(c: &Call) -> Outcome {
    let input = json!({"stateMachineArn": c.physical(), "definition": definition(c)?, "roleArn": c.props["RoleArn"]});
    c.api("stepfunctions", "UpdateStateMachine", input).await?;
    Ok(c.previous.clone())
}

pub(crate) const VERSION: Provider = Provider {
    kind: "AWS::Lambda::Version",
    replaces: &["FunctionName", "Description", "CodeSha256", "RuntimePolicy"],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["FunctionName", "Description", "CodeSha256"]);
            let out = c.api("lambda", "PublishVersion", input).await?;
            let arn = out["FunctionArn"].as_str().unwrap_or_default();
            Ok(resolved(
                arn,
                json!({"FunctionArn": arn, "Version": out["Version"]}),
            ))
        })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |c| {
        Box::pin(async move {
            let Some((function, version)) = c.physical().rsplit_once(':') else {
                return Ok(());
            };
            let input = json!({"FunctionName": function, "Qualifier": version});
            gone_ok(c.api("lambda", "DeleteFunction", input).await)
        })
    },
};

pub(crate) const ALIAS: Provider = Provider {
    kind: "AWS::Lambda::Alias",
    replaces: &["FunctionName", "Name"],
    create: |c| Box::pin(alias_put(c, "CreateAlias")),
    update: Some(|c| Box::pin(alias_put(c, "UpdateAlias"))),
    delete: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["FunctionName", "Name"]);
            gone_ok(c.api("lambda", "DeleteAlias", input).await)
        })
    },
};

/// Creates or updates the alias; the template's routing weights (a list of
/// `{FunctionVersion, FunctionWeight}`) are the API's map of version to weight.
async fn alias_put(c: &Call, operation: &str) -> Outcome {
    let mut input = pick(
        &c.props,
        &["FunctionName", "Name", "FunctionVersion", "Description"],
    );
    if let Some(weights) = c.props["RoutingConfig"]["AdditionalVersionWeights"].as_array() {
        let weights: serde_json::Map<String, Json> = weights
            .iter()
            .filter_map(|w| {
                Some((
                    w["FunctionVersion"].as_str()?.to_string(),
                    w["FunctionWeight"].clone(),
                ))
            })
            .collect();
        input = with(
            input,
            "RoutingConfig",
            json!({"AdditionalVersionWeights": weights}),
        );
    }
    let out = c.api("lambda", operation, input).await?;
    let arn = out["AliasArn"].as_str().unwrap_or_default();
    Ok(resolved(arn, json!({"AliasArn": arn})))
}

pub(crate) const ACTIVITY: Provider = Provider {
    kind: "AWS::StepFunctions::Activity",
    replaces: &["Name"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("Name", 80);
            let mut input = json!({"name": name});
            let tags = lower_tags(c);
            if !tags.is_empty() {
                input = with(input, "tags", Json::Array(tags));
            }
            let out = c.api("stepfunctions", "CreateActivity", input).await?;
            let arn = out["ActivityArn"].as_str().unwrap_or_default();
            Ok(resolved(arn, json!({"Arn": arn, "Name": name})))
        })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"activityArn": c.physical()});
            gone_ok(c.api("stepfunctions", "DeleteActivity", input).await)
        })
    },
};

/// The template's tags as Step Functions' (`[{key, value}]`).
fn lower_tags(c: &Call) -> Vec<Json> {
    c.props["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| json!({"key": t["Key"], "value": t["Value"]}))
        .collect()
}

pub(crate) const EVENT_INVOKE_CONFIG: Provider = Provider {
    kind: "AWS::Lambda::EventInvokeConfig",
    replaces: &["FunctionName", "Qualifier"],
    create: |c| Box::pin(invoke_config_put(c)),
    update: Some(|c| Box::pin(invoke_config_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["FunctionName", "Qualifier"]);
            gone_ok(
                c.api("lambda", "DeleteFunctionEventInvokeConfig", input)
                    .await,
            )
        })
    },
};

/// PutFunctionEventInvokeConfig with the template's properties; `Ref` a generated id.
async fn invoke_config_put(c: &Call) -> Outcome {
    c.api("lambda", "PutFunctionEventInvokeConfig", c.props.clone())
        .await?;
    let id = match c.physical_id.as_deref() {
        Some(id) => id.to_string(),
        None => super::generated_name(&c.stack_name, &c.logical_id, 64),
    };
    Ok(resolved(id, json!({})))
}

pub(crate) const STATE_MACHINE_VERSION: Provider = Provider {
    kind: "AWS::StepFunctions::StateMachineVersion",
    replaces: &["StateMachineArn", "StateMachineRevisionId", "Description"],
    create: |c| {
        Box::pin(async move {
            let mut input = json!({"stateMachineArn": c.props["StateMachineArn"]});
            input = with(
                input,
                "revisionId",
                c.props["StateMachineRevisionId"].clone(),
            );
            input = with(input, "description", c.props["Description"].clone());
            let out = c
                .api("stepfunctions", "PublishStateMachineVersion", input)
                .await?;
            let arn = out["StateMachineVersionArn"].as_str().unwrap_or_default();
            Ok(resolved(arn, json!({"Arn": arn})))
        })
    },
    update: None,
    delete: |c| {
        Box::pin(async move {
            let input = json!({"stateMachineVersionArn": c.physical()});
            gone_ok(
                c.api("stepfunctions", "DeleteStateMachineVersion", input)
                    .await,
            )
        })
    },
};

pub(crate) const STATE_MACHINE_ALIAS: Provider = Provider {
    kind: "AWS::StepFunctions::StateMachineAlias",
    replaces: &["Name"],
    create: |c| Box::pin(machine_alias_put(c)),
    update: Some(|c| Box::pin(machine_alias_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"stateMachineAliasArn": c.physical()});
            gone_ok(
                c.api("stepfunctions", "DeleteStateMachineAlias", input)
                    .await,
            )
        })
    },
};

/// CreateStateMachineAlias, or UpdateStateMachineAlias once it exists, routing as
/// `RoutingConfiguration` says or, with a `DeploymentPreference`, all traffic to its
/// `StateMachineVersionArn` at once; `Ref` the alias's ARN.
async fn machine_alias_put(c: &Call) -> Outcome {
    let routing = match c.prop("DeploymentPreference") {
        Some(p) => json!([{"stateMachineVersionArn": p["StateMachineVersionArn"], "weight": 100}]),
        None => c.props["RoutingConfiguration"].clone(),
    };
    let mut input = json!({"routingConfiguration": routing});
    input = with(input, "description", c.props["Description"].clone());
    let arn = match &c.physical_id {
        Some(arn) => {
            input = with(input, "stateMachineAliasArn", json!(arn));
            c.api("stepfunctions", "UpdateStateMachineAlias", input)
                .await?;
            arn.clone()
        }
        None => {
            input = with(input, "name", json!(c.name("Name", 80)));
            let out = c
                .api("stepfunctions", "CreateStateMachineAlias", input)
                .await?;
            out["StateMachineAliasArn"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        }
    };
    Ok(resolved(arn.as_str(), json!({"Arn": arn})))
}

/// A code signing configuration: `Ref` and `CodeSigningConfigArn` its ARN,
/// `CodeSigningConfigId` its id; publishers, policies, description and tags change in place.
pub(crate) const CODE_SIGNING_CONFIG: Provider = Provider {
    kind: "AWS::Lambda::CodeSigningConfig",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(
                &c.props,
                &["Description", "AllowedPublishers", "CodeSigningPolicies"],
            );
            if c.prop("Tags").is_some() {
                input = with(input, "Tags", tag_map(c.prop("Tags")));
            }
            let out = c.api("lambda", "CreateCodeSigningConfig", input).await?;
            let config = &out["CodeSigningConfig"];
            let arn = config["CodeSigningConfigArn"].as_str().unwrap_or_default();
            Ok(resolved(
                arn,
                json!({"CodeSigningConfigArn": arn, "CodeSigningConfigId": config["CodeSigningConfigId"]}),
            ))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let arn = json!(c.physical());
            let input = pick(
                &c.props,
                &["Description", "AllowedPublishers", "CodeSigningPolicies"],
            );
            let input = with(input, "CodeSigningConfigArn", arn.clone());
            c.api("lambda", "UpdateCodeSigningConfig", input).await?;
            let operations = ("UntagResource", "TagResource");
            super::retag(
                c,
                "lambda",
                operations,
                &json!({"Resource": arn}),
                super::Tags::Map,
            )
            .await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"CodeSigningConfigArn": c.physical()});
            gone_ok(c.api("lambda", "DeleteCodeSigningConfig", input).await)
        })
    },
};
