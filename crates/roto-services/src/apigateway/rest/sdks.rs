//! GetSdkTypes, GetSdkType and GetSdk. The SDK types and their configuration properties
//! are AWS's; Roto generates no client code, so GetSdk answers, for a stage that exists
//! and an SDK type AWS knows, an empty zip archive.

use roto_core::{AwsResult, Context, Value};

use super::super::{bad_request, not_found, ApiGateway};
use super::{missing, page_of, scope};

/// A configuration property: name, friendly name, description, required.
type Property = (&'static str, &'static str, &'static str, bool);

/// An SDK type: id, friendly name, description, configuration properties.
type SdkType = (
    &'static str,
    &'static str,
    &'static str,
    &'static [Property],
);

/// AWS's SDK types.
const SDK_TYPES: &[SdkType] = &[
    (
        "android",
        "Android",
        "Android SDK",
        &[
            ("groupId", "Group ID", "", true),
            ("invokerPackage", "Invoker Package", "", false),
            ("artifactId", "Artifact ID", "", true),
            ("artifactVersion", "Artifact Version", "", true),
        ],
    ),
    ("javascript", "JavaScript", "JavaScript SDK", &[]),
    (
        "ios-objective-c",
        "iOS (Objective-C)",
        "iOS SDK (Objective-C)",
        &[("classPrefix", "Prefix", "", false)],
    ),
    (
        "ios-swift",
        "iOS (Swift)",
        "iOS SDK (Swift)",
        &[("classPrefix", "Prefix", "", false)],
    ),
    (
        "java",
        "Java SDK",
        "Java SDK generator for API Gateway APIs",
        &[
            ("service.name", "Service Name", "Name of the service", true),
            (
                "java.package-name",
                "Java Package Name",
                "Package name for generated classes",
                true,
            ),
            (
                "java.build-system",
                "Java Build System",
                "Build system: maven or gradle",
                false,
            ),
            (
                "java.group-id",
                "Java Group Id",
                "Group id of the generated artifact",
                false,
            ),
            (
                "java.artifact-id",
                "Java Artifact Id",
                "Artifact id of the generated artifact",
                false,
            ),
            (
                "java.artifact-version",
                "Java Artifact Version",
                "Version of the generated artifact",
                false,
            ),
            (
                "java.license-text",
                "Java License Text",
                "License text of the generated code",
                false,
            ),
        ],
    ),
    (
        "ruby",
        "Ruby",
        "Ruby SDK generator for API Gateway APIs",
        &[
            ("service.name", "Service Name", "Name of the service", true),
            (
                "ruby.gem-name",
                "Ruby Gem Name",
                "Name of the generated gem",
                false,
            ),
            (
                "ruby.gem-version",
                "Ruby Gem Version",
                "Version of the generated gem",
                false,
            ),
        ],
    ),
];

/// An empty zip archive (its end-of-central-directory record alone).
const EMPTY_ZIP: [u8; 22] = [
    0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// An SDK type as the model's `SdkType` shape.
fn sdk_type((id, friendly, description, properties): &SdkType) -> Value {
    let properties: Vec<Value> = properties
        .iter()
        .map(|(name, friendly, description, required)| {
            Value::map()
                .with("name", *name)
                .with("friendlyName", *friendly)
                .with("description", *description)
                .with("required", *required)
        })
        .collect();
    Value::map()
        .with("id", *id)
        .with("friendlyName", *friendly)
        .with("description", *description)
        .with("configurationProperties", properties)
}

/// The SDK type `id`, or AWS's NotFoundException.
fn find(
    id: &str,
) -> AwsResult<&'static (
    &'static str,
    &'static str,
    &'static str,
    &'static [Property],
)> {
    SDK_TYPES
        .iter()
        .find(|t| t.0 == id)
        .ok_or_else(|| not_found(format!("Invalid SDK type specified: {id}")))
}

impl ApiGateway {
    /// GetSdkTypes, GetSdkType and GetSdk; `None` for other operations.
    pub(super) fn sdk_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        Some(match operation {
            "GetSdkTypes" => {
                page_of(SDK_TYPES.iter().map(sdk_type).collect(), input).map(|(items, position)| {
                    Value::map()
                        .with("items", Value::List(items))
                        .with_opt("position", position)
                })
            }
            "GetSdkType" => find(input.str("id").unwrap_or_default()).map(sdk_type),
            "GetSdk" => self.sdk(ctx, input),
            _ => return None,
        })
    }

    fn sdk(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let stage = input.str("stageName").unwrap_or_default();
        self.store
            .get(scope(ctx, "stage", api), stage)?
            .ok_or_else(|| missing("Stage"))?;
        let kind = input.str("sdkType").unwrap_or_default();
        let (_, _, _, properties) = find(kind)?;
        let given = input.get("parameters");
        if let Some((name, ..)) = properties
            .iter()
            .find(|(name, _, _, required)| *required && given.and_then(|g| g.str(name)).is_none())
        {
            return Err(bad_request(format!("Missing required parameter: {name}")));
        }
        Ok(Value::map()
            .with("contentType", "application/octet-stream")
            .with(
                "contentDisposition",
                format!("attachment; filename=\"{api}_{stage}_{kind}.zip\""),
            )
            .with("body", Value::Blob(EMPTY_ZIP.to_vec())))
    }
}
