//! Functions: create, read, update, delete, list; versions; tags; reserved concurrency.
//!
//! Each function is one row per version (`0` is `$LATEST`) holding its configuration as
//! the `FunctionConfiguration` document the API returns, and the id of its code blob
//! (versions share the blob of the `$LATEST` they were published from). Tags and reserved
//! concurrency live on the `$LATEST` row. A function is stored `Active`/`Successful`: the
//! create and update responses say `Pending`/`InProgress`, as AWS's do, and the next read
//! finds the function ready, so the SDK waiters (`function_active`, `function_updated`)
//! pass on their first poll.

use std::collections::BTreeMap;

use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Request, Value};
use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};

use super::{
    conflict, from_json_text, function_arn, function_not_found, invalid_parameter, revision_id,
    revision_mismatch, split_function_name, target_of, zip, Lambda,
};

/// Environment variables Lambda sets itself and refuses from callers.
const RESERVED_ENV: &[&str] = &[
    "_HANDLER",
    "_X_AMZN_TRACE_ID",
    "AWS_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_DEFAULT_REGION",
    "AWS_EXECUTION_ENV",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_LOG_GROUP_NAME",
    "AWS_LAMBDA_LOG_STREAM_NAME",
    "AWS_LAMBDA_RUNTIME_API",
    "AWS_REGION",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "AWS_SESSION_TOKEN",
    "LAMBDA_RUNTIME_DIR",
    "LAMBDA_TASK_ROOT",
];

/// The configuration members a version freezes (everything but identity and timestamps),
/// compared to decide whether PublishVersion has anything new to publish.
const VOLATILE: &[&str] = &[
    "Version",
    "FunctionArn",
    "RevisionId",
    "LastModified",
    "Description",
];

/// The concurrent executions an account may run (AWS's default quota).
const ACCOUNT_CONCURRENCY: i64 = 1000;
/// The concurrency reservations must leave to the functions that have none.
const MIN_UNRESERVED: i64 = 100;

/// The configuration member holding a container-image function's `ImageUri` (not a member
/// of `FunctionConfiguration`, so the codec never answers it; GetFunction's `Code` does).
pub(super) const IMAGE_URI: &str = "ImageUri";

/// The page size list operations use when the caller names none.
const DEFAULT_PAGE: i64 = 50;

/// One stored version of a function.
pub(super) struct Function {
    pub name: String,
    pub version: i64,
    pub config: Value,
    pub code_blob: String,
    pub tags: BTreeMap<String, String>,
    pub reserved: Option<i64>,
}

impl Function {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Function> {
        let config: String = r.get(2)?;
        let tags: String = r.get(4)?;
        Ok(Function {
            name: r.get(0)?,
            version: r.get(1)?,
            config: from_json_text(&config),
            code_blob: r.get(3)?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            reserved: r.get(5)?,
        })
    }

    /// The version as the API spells it.
    pub fn version_name(&self) -> String {
        version_name(self.version)
    }
}

/// `$LATEST` for version 0, else the number.
pub(super) fn version_name(version: i64) -> String {
    if version == 0 {
        "$LATEST".into()
    } else {
        version.to_string()
    }
}

const SELECT: &str =
    "SELECT name, version, config, code_blob, tags, reserved FROM lambda_functions";

/// `LastModified` in Lambda's form: `2024-01-01T00:00:00.000+0000`.
fn last_modified() -> String {
    last_modified_at(now_millis())
}

/// A time in Lambda's form: `2024-01-01T00:00:00.000+0000`.
pub(super) fn last_modified_at(millis: i64) -> String {
    let iso = timestamp::format(millis, TimestampFormat::Iso8601);
    format!("{}+0000", iso.trim_end_matches('Z'))
}

fn validation(message: String) -> AwsError {
    AwsError::validation(message)
}

fn check_name(name: &str) -> AwsResult<()> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        return Ok(());
    }
    Err(validation(format!(
        "1 validation error detected: Value '{name}' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{{2}}(-gov)?-[a-z]+-\\d{{1}}:)?(\\d{{12}}:)?(function:)?([a-zA-Z0-9-_]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?"
    )))
}

fn check_environment(input: &Value) -> AwsResult<()> {
    let Some(vars) = input
        .get("Environment")
        .and_then(|e| e.get("Variables"))
        .and_then(Value::as_map)
    else {
        return Ok(());
    };
    let reserved: Vec<&str> = vars
        .keys()
        .filter(|k| RESERVED_ENV.contains(&k.as_str()))
        .map(String::as_str)
        .collect();
    if !reserved.is_empty() {
        return Err(invalid_parameter(format!(
            "Lambda was unable to configure your environment variables because the environment variables you have provided contains reserved keys that are currently not supported for modification. Reserved keys used in this request: {}",
            reserved.join(", ")
        )));
    }
    Ok(())
}

/// Applies the configuration members of a Create or UpdateFunctionConfiguration input.
fn apply_settings(config: &mut Value, input: &Value) {
    for member in ["Role", "Handler", "Description", "Runtime", "KMSKeyArn"] {
        if let Some(v) = input.str(member) {
            config.insert(member, v);
        }
    }
    for member in ["Timeout", "MemorySize"] {
        if let Some(v) = input.int(member) {
            config.insert(member, v);
        }
    }
    if let Some(env) = input.get("Environment") {
        let vars = env.get("Variables").cloned().unwrap_or_else(Value::map);
        config.insert("Environment", Value::map().with("Variables", vars));
    }
    for member in [
        "TracingConfig",
        "DeadLetterConfig",
        "EphemeralStorage",
        "VpcConfig",
    ] {
        if let Some(v) = input.get(member) {
            config.insert(member, v.clone());
        }
    }
    if let Some(image_config) = input.get("ImageConfig") {
        config.insert(
            "ImageConfigResponse",
            Value::map().with("ImageConfig", image_config.clone()),
        );
    }
    if let Some(logging) = input.get("LoggingConfig") {
        let mut merged = config
            .get("LoggingConfig")
            .cloned()
            .unwrap_or_else(Value::map);
        for (k, v) in logging.as_map().into_iter().flatten() {
            merged.insert(k.clone(), v.clone());
        }
        config.insert("LoggingConfig", merged);
    }
}

/// What a create or update response says of a change.
enum Change {
    Created,
    Updated,
}

/// The configuration as a create or update answers it: AWS's responses catch the function
/// mid-change (`Pending`, `InProgress`), though the stored one is ready.
fn as_answered(mut config: Value, change: Change) -> Value {
    let (status, status_member) = match change {
        Change::Created => ("Pending", "State"),
        Change::Updated => ("InProgress", "LastUpdateStatus"),
    };
    config.insert(status_member, status);
    config.insert(
        format!("{status_member}Reason"),
        "The function is being created.",
    );
    config.insert(format!("{status_member}ReasonCode"), "Creating");
    config
}

/// A container-image function's `CodeSha256`: Lambda answers the image's digest, which a
/// local image need not have; the digest of its URI stands in for it.
fn image_sha256(uri: &str) -> String {
    Sha256::digest(uri.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What GetFunction's `Code` says of a container-image function.
fn image_location(uri: &str) -> Value {
    let repository = uri.split('@').next().unwrap_or(uri);
    let repository = match repository.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => repository,
    };
    Value::map()
        .with("RepositoryType", "ECR")
        .with("ImageUri", uri)
        .with(
            "ResolvedImageUri",
            format!("{repository}@sha256:{}", image_sha256(uri)),
        )
}

/// Refuses what a container-image function cannot have, as Lambda does.
fn check_image_function(input: &Value, code: &Value) -> AwsResult<String> {
    if ["Handler", "Runtime", "Layers"]
        .iter()
        .any(|m| input.get(m).is_some())
    {
        return Err(invalid_parameter(
            "Please don't provide Handler or Runtime or Layer when the intended function PackageType is Image.",
        ));
    }
    code.str("ImageUri")
        .map(str::to_string)
        .ok_or_else(|| invalid_parameter("Please provide a source for function code."))
}

fn sha256_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(bytes))
}

impl Lambda {
    /// The stored version `version` of function `name`.
    pub(super) fn function(
        &self,
        ctx: &Context,
        name: &str,
        version: i64,
    ) -> AwsResult<Option<Function>> {
        self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "{SELECT} WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4"
            ))?
            .query_row(
                params![ctx.account, ctx.region, name, version],
                Function::from_row,
            )
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// `$LATEST` of function `name`, or `ResourceNotFoundException`.
    pub(super) fn latest(&self, ctx: &Context, name: &str) -> AwsResult<Function> {
        self.function(ctx, name, 0)?
            .ok_or_else(|| function_not_found(&function_arn(ctx, name)))
    }

    /// The version a qualifier names: none or `$LATEST`, a number, or an alias (resolved
    /// to its version, with its weighted routing applied when `route` is set).
    pub(super) fn resolve(
        &self,
        ctx: &Context,
        name: &str,
        qualifier: Option<&str>,
        route: bool,
    ) -> AwsResult<Function> {
        let arn = match qualifier {
            Some(q) => format!("{}:{q}", function_arn(ctx, name)),
            None => function_arn(ctx, name),
        };
        let version = match qualifier {
            None | Some("$LATEST") => 0,
            Some(q) => match q.parse::<i64>() {
                Ok(n) if n > 0 => n,
                _ => {
                    self.latest(ctx, name)?;
                    let alias = self
                        .alias(ctx, name, q)?
                        .ok_or_else(|| function_not_found(&arn))?;
                    super::aliases::pick_version(&alias, route)
                }
            },
        };
        self.function(ctx, name, version)?
            .ok_or_else(|| function_not_found(&arn))
    }

    /// The zip a `Code` (or UpdateFunctionCode input) names: inline, or read from S3
    /// through the dispatcher.
    async fn code_bytes(&self, ctx: &Context, code: &Value) -> AwsResult<Vec<u8>> {
        if let Some(zip) = code.get("ZipFile").and_then(Value::as_blob) {
            return Ok(zip.to_vec());
        }
        let (Some(bucket), Some(key)) = (code.str("S3Bucket"), code.str("S3Key")) else {
            return Err(invalid_parameter(
                "Please provide a source for function code.",
            ));
        };
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let input = Value::map()
            .with("Bucket", bucket)
            .with("Key", key)
            .with_opt("VersionId", code.str("S3ObjectVersion"));
        let response = dispatcher
            .call_request(ctx, "s3", "GetObject", Request::new(input))
            .await
            .map_err(|e| {
                invalid_parameter(format!(
                    "Error occurred while GetObject. S3 Error Code: {}. S3 Error Message: {}",
                    e.code, e.message
                ))
            })?;
        response.into_payload().await
    }

    /// Reads, checks and stores a zip; returns its blob id, size and digest (the check, the
    /// write and the hash of a package of up to 50 MB run on a blocking thread).
    pub(super) async fn store_code(
        &self,
        ctx: &Context,
        code: &Value,
    ) -> AwsResult<(String, usize, String)> {
        let bytes = self.code_bytes(ctx, code).await?;
        let env = self.env.clone();
        crate::blocking::run(move || {
            zip::check(&bytes).map_err(|_| {
                invalid_parameter(
                    "Could not unzip uploaded file. Please check your file, then try to upload again.",
                )
            })?;
            let mut blob = env.store.create_blob()?;
            blob.write(&bytes)?;
            Ok((blob.finish()?, bytes.len(), sha256_base64(&bytes)))
        })
        .await
    }

    /// Removes a code blob no version references any more.
    fn release_blob(&self, blob: &str) -> AwsResult<()> {
        if blob.is_empty() {
            return Ok(());
        }
        let used: bool = self.env.store.with(|c| {
            c.prepare_cached("SELECT 1 FROM lambda_functions WHERE code_blob = ?1")?
                .exists([blob])
                .map_err(AwsError::from)
        })?;
        if !used {
            self.env.store.remove_blob(blob);
        }
        Ok(())
    }

    fn save(&self, ctx: &Context, f: &Function) -> AwsResult<()> {
        let tags = serde_json::to_string(&f.tags).unwrap_or_else(|_| "{}".into());
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_functions
                 (account, region, name, version, config, code_blob, tags, reserved)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    ctx.account,
                    ctx.region,
                    f.name,
                    f.version,
                    f.config.to_json().to_string(),
                    f.code_blob,
                    tags,
                    f.reserved
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) async fn create_function(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, _) = split_function_name(input.str("FunctionName").unwrap_or_default());
        check_name(&name)?;
        let package = input.str("PackageType").unwrap_or("Zip");
        if package == "Zip" && (input.str("Runtime").is_none() || input.str("Handler").is_none()) {
            return Err(invalid_parameter(
                "Runtime and Handler are mandatory parameters for functions created with deployment packages.",
            ));
        }
        super::runtimes::check_runtime(input)?;
        check_environment(input)?;
        if self.function(ctx, &name, 0)?.is_some() {
            return Err(conflict(format!("Function already exist: {name}")));
        }
        let code = input.get("Code").cloned().unwrap_or_else(Value::map);
        let image = match package {
            "Image" => Some(check_image_function(input, &code)?),
            _ => None,
        };
        let (blob, size, sha) = match &image {
            Some(uri) => (String::new(), 0, image_sha256(uri)),
            None => self.store_code(ctx, &code).await?,
        };
        let mut config = Value::map()
            .with("FunctionName", name.as_str())
            .with("FunctionArn", function_arn(ctx, &name))
            .with("Timeout", 3i64)
            .with("MemorySize", 128i64)
            .with("Description", "")
            .with("Version", "$LATEST")
            .with("PackageType", package)
            .with("State", "Active")
            .with("LastUpdateStatus", "Successful")
            .with("TracingConfig", Value::map().with("Mode", "PassThrough"))
            .with("EphemeralStorage", Value::map().with("Size", 512i64))
            .with(
                "SnapStart",
                Value::map()
                    .with("ApplyOn", "None")
                    .with("OptimizationStatus", "Off"),
            )
            .with(
                "LoggingConfig",
                Value::map()
                    .with("LogFormat", "Text")
                    .with("LogGroup", format!("/aws/lambda/{name}")),
            )
            .with(
                "Architectures",
                input
                    .get("Architectures")
                    .cloned()
                    .unwrap_or_else(|| Value::List(vec!["x86_64".into()])),
            )
            .with("CodeSize", size)
            .with("CodeSha256", sha)
            .with("LastModified", last_modified())
            .with("RevisionId", revision_id());
        apply_settings(&mut config, input);
        if let Some(layers) = self.function_layers(input)? {
            config.insert("Layers", layers);
        }
        if let Some(uri) = image {
            config.insert(IMAGE_URI, uri);
        }
        let function = Function {
            name: name.clone(),
            version: 0,
            config,
            code_blob: blob,
            tags: tags_of(input.get("Tags")),
            reserved: None,
        };
        self.save(ctx, &function)?;
        if input.bool("Publish") == Some(true) {
            return self.publish(ctx, &name, None);
        }
        Ok(as_answered(function.config, Change::Created))
    }

    pub(super) fn get_function(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = target_of(input)?;
        let function = self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        let latest = self.latest(ctx, &name)?;
        let location = format!(
            "http://{}/_roto/lambda/{}/{}/code.zip",
            ctx.host,
            name,
            function.version_name()
        );
        let code = match function.config.str(IMAGE_URI) {
            Some(uri) => image_location(uri),
            None => Value::map()
                .with("RepositoryType", "S3")
                .with("Location", location),
        };
        let mut out = Value::map()
            .with("Configuration", function.config)
            .with("Code", code);
        if !latest.tags.is_empty() {
            out.insert("Tags", tags_value(&latest.tags));
        }
        if let Some(reserved) = latest.reserved {
            out.insert(
                "Concurrency",
                Value::map().with("ReservedConcurrentExecutions", reserved),
            );
        }
        Ok(out)
    }

    pub(super) fn get_function_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, qualifier) = target_of(input)?;
        Ok(self
            .resolve(ctx, &name, qualifier.as_deref(), false)?
            .config)
    }

    /// The `$LATEST` an update names, after its `RevisionId` check.
    fn for_update(&self, ctx: &Context, input: &Value) -> AwsResult<Function> {
        let (name, _) = target_of(input)?;
        let function = self.latest(ctx, &name)?;
        if let Some(rev) = input.str("RevisionId") {
            if function.config.str("RevisionId") != Some(rev) {
                return Err(revision_mismatch("GetFunction or the GetAlias"));
            }
        }
        Ok(function)
    }

    pub(super) async fn update_function_code(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut function = self.for_update(ctx, input)?;
        let is_image = function.config.str("PackageType") == Some("Image");
        let (blob, size, sha) =
            match (is_image, input.str("ImageUri")) {
                (true, Some(uri)) => (String::new(), 0, image_sha256(uri)),
                (true, None) => {
                    return Err(invalid_parameter(
                        "Please provide ImageUri when updating a function with packageType Image.",
                    ))
                }
                (false, Some(_)) => return Err(invalid_parameter(
                    "Please don't provide ImageUri when updating a function with packageType Zip.",
                )),
                (false, None) => self.store_code(ctx, input).await?,
            };
        let mut config = function.config.clone();
        if let Some(uri) = input.str("ImageUri") {
            config.insert(IMAGE_URI, uri);
        }
        config.insert("CodeSize", size);
        config.insert("CodeSha256", sha);
        config.insert("LastModified", last_modified());
        config.insert("RevisionId", revision_id());
        config.insert("LastUpdateStatus", "Successful");
        if input.bool("DryRun") == Some(true) {
            self.release_blob(&blob)?;
            return Ok(config);
        }
        let old_blob = std::mem::replace(&mut function.code_blob, blob);
        function.config = config;
        self.save(ctx, &function)?;
        self.release_blob(&old_blob)?;
        self.executor
            .retire(&self.instance_prefix(ctx, &function.name));
        if input.bool("Publish") == Some(true) {
            return self.publish(ctx, &function.name, None);
        }
        Ok(as_answered(function.config, Change::Updated))
    }

    pub(super) fn update_function_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut function = self.for_update(ctx, input)?;
        super::runtimes::check_runtime(input)?;
        check_environment(input)?;
        apply_settings(&mut function.config, input);
        if let Some(layers) = self.function_layers(input)? {
            function.config.insert("Layers", layers);
        }
        function.config.insert("LastModified", last_modified());
        function.config.insert("RevisionId", revision_id());
        function.config.insert("LastUpdateStatus", "Successful");
        self.save(ctx, &function)?;
        self.executor
            .retire(&self.instance_prefix(ctx, &function.name));
        Ok(as_answered(function.config, Change::Updated))
    }

    pub(super) fn delete_function(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = target_of(input)?;
        let latest = self.latest(ctx, &name)?;
        let blobs: Vec<String> = match qualifier.as_deref() {
            Some("$LATEST") => {
                return Err(invalid_parameter(
                    "$LATEST version cannot be deleted without deleting the function.",
                ))
            }
            Some(q) => {
                let version = q.parse::<i64>().map_err(|_| {
                    invalid_parameter(
                        "Deletion of aliases is not supported by DeleteFunction; use DeleteAlias.",
                    )
                })?;
                let function = self.function(ctx, &name, version)?.ok_or_else(|| {
                    function_not_found(&format!("{}:{q}", function_arn(ctx, &name)))
                })?;
                let users = self.aliases_of_version(ctx, &name, q)?;
                if !users.is_empty() {
                    return Err(conflict(format!(
                        "Unable to delete version because the following aliases reference it: [{}]",
                        users.join(", ")
                    )));
                }
                self.env.store.with(|c| {
                    c.execute_cached(
                        "DELETE FROM lambda_functions WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
                        params![ctx.account, ctx.region, name, version],
                    )
                    .map_err(AwsError::from)
                })?;
                vec![function.code_blob]
            }
            None => {
                let blobs = self.env.store.transaction(|tx| {
                    let blobs: Vec<String> = tx
                        .prepare_cached(
                            "SELECT DISTINCT code_blob FROM lambda_functions WHERE account = ?1 AND region = ?2 AND name = ?3",
                        )?
                        .query_map(params![ctx.account, ctx.region, name], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    for table in ["lambda_functions WHERE account = ?1 AND region = ?2 AND name = ?3",
                                  "lambda_aliases WHERE account = ?1 AND region = ?2 AND function = ?3"] {
                        tx.execute_cached(&format!("DELETE FROM {table}"), params![ctx.account, ctx.region, name])?;
                    }
                    Ok::<_, AwsError>(blobs)
                })?;
                self.executor
                    .retire(&self.instance_prefix(ctx, &latest.name));
                self.forget_settings(ctx, &latest.name)?;
                self.forget_urls(ctx, &latest.name, None)?;
                blobs
            }
        };
        for blob in blobs {
            self.release_blob(&blob)?;
        }
        Ok(Value::map().with("StatusCode", 204i64))
    }

    /// One page of configurations from rows in order.
    pub(super) fn page_of(rows: Vec<Value>, input: &Value, member: &str) -> AwsResult<Value> {
        let offset = match input.str("Marker") {
            Some(m) => m
                .parse::<usize>()
                .map_err(|_| invalid_parameter(format!("Invalid marker: {m}")))?,
            None => 0,
        };
        let size = usize::try_from(input.int("MaxItems").unwrap_or(DEFAULT_PAGE)).unwrap_or(1);
        let more = rows.len() > offset + size;
        let page: Vec<Value> = rows.into_iter().skip(offset).take(size).collect();
        let mut out = Value::map().with(member, page);
        if more {
            out.insert("NextMarker", (offset + size).to_string());
        }
        Ok(out)
    }

    fn rows(
        &self,
        ctx: &Context,
        name: Option<&str>,
        all_versions: bool,
    ) -> AwsResult<Vec<Function>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "{SELECT} WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR name = ?3)
                   AND (?4 OR version = 0) ORDER BY name, version"
            ))?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, name, all_versions],
                Function::from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    pub(super) fn list_functions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let all = input.str("FunctionVersion") == Some("ALL");
        let rows = self
            .rows(ctx, None, all)?
            .into_iter()
            .map(|f| f.config)
            .collect();
        Self::page_of(rows, input, "Functions")
    }

    pub(super) fn list_versions_by_function(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = target_of(input)?;
        self.latest(ctx, &name)?;
        let rows = self
            .rows(ctx, Some(&name), true)?
            .into_iter()
            .map(|f| f.config)
            .collect();
        Self::page_of(rows, input, "Versions")
    }

    /// Publishes `$LATEST` as a new version, unless the newest version already has its code
    /// and configuration.
    fn publish(&self, ctx: &Context, name: &str, description: Option<&str>) -> AwsResult<Value> {
        let latest = self.latest(ctx, name)?;
        let newest = self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "{SELECT} WHERE account = ?1 AND region = ?2 AND name = ?3 ORDER BY version DESC LIMIT 1"
            ))?
            .query_row(params![ctx.account, ctx.region, name], Function::from_row)
            .map_err(AwsError::from)
        })?;
        let frozen = |config: &Value| {
            let mut c = config.clone();
            for member in VOLATILE {
                c.remove(member);
            }
            c
        };
        if newest.version > 0 && frozen(&newest.config) == frozen(&latest.config) {
            return Ok(newest.config);
        }
        let version = newest.version + 1;
        let mut config = latest.config.clone();
        config.insert("Version", version.to_string());
        config.insert(
            "FunctionArn",
            format!("{}:{version}", function_arn(ctx, name)),
        );
        config.insert("RevisionId", revision_id());
        if let Some(d) = description {
            config.insert("Description", d);
        }
        self.save(
            ctx,
            &Function {
                name: name.to_string(),
                version,
                config: config.clone(),
                code_blob: latest.code_blob,
                tags: BTreeMap::new(),
                reserved: None,
            },
        )?;
        Ok(config)
    }

    pub(super) fn publish_version(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let latest = self.for_update(ctx, input)?;
        if let Some(sha) = input.str("CodeSha256") {
            let current = latest.config.str("CodeSha256").unwrap_or_default();
            if sha != current {
                return Err(invalid_parameter(format!(
                    "CodeSHA256 ({sha}) is different from current CodeSHA256 in $LATEST ({current}). Please try again."
                )));
            }
        }
        self.publish(ctx, &latest.name, input.str("Description"))
    }

    /// The function a taggable resource ARN names.
    fn tagged(&self, ctx: &Context, input: &Value) -> AwsResult<Function> {
        let arn = input.str("Resource").unwrap_or_default();
        let (name, qualifier) = split_function_name(arn);
        if qualifier.is_some() {
            return Err(invalid_parameter(format!(
                "Tags are not supported on function versions or aliases: {arn}"
            )));
        }
        self.function(ctx, &name, 0)?
            .ok_or_else(|| function_not_found(arn))
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let given = tags_of(input.get("Tags"));
        self.edit_tags(ctx, input, |tags| tags.extend(given))?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let keys: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.edit_tags(ctx, input, |tags| {
            tags.retain(|k, _| !keys.contains(&k.as_str()))
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("Resource").unwrap_or_default();
        let tags = if is_function_arn(arn) {
            self.tagged(ctx, input)?.tags
        } else {
            self.resource_tags(ctx, arn)?
        };
        Ok(Value::map().with("Tags", tags_value(&tags)))
    }

    /// Changes the tags of the resource an input names: a function, an event source
    /// mapping or a code signing configuration.
    fn edit_tags(
        &self,
        ctx: &Context,
        input: &Value,
        edit: impl FnOnce(&mut BTreeMap<String, String>),
    ) -> AwsResult<()> {
        let arn = input.str("Resource").unwrap_or_default();
        if is_function_arn(arn) {
            let mut f = self.tagged(ctx, input)?;
            edit(&mut f.tags);
            return self.save(ctx, &f);
        }
        let mut tags = self.resource_tags(ctx, arn)?;
        edit(&mut tags);
        self.save_resource_tags(arn, &tags)
    }

    pub(super) fn put_function_concurrency(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = target_of(input)?;
        let mut f = self.latest(ctx, &name)?;
        let reserved = input
            .int("ReservedConcurrentExecutions")
            .unwrap_or_default();
        let others: i64 = self.reserved_by_others(ctx, &name)?;
        if ACCOUNT_CONCURRENCY - others - reserved < MIN_UNRESERVED {
            return Err(invalid_parameter(format!(
                "Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [{MIN_UNRESERVED}]."
            )));
        }
        f.reserved = Some(reserved);
        self.save(ctx, &f)?;
        Ok(Value::map().with("ReservedConcurrentExecutions", reserved))
    }

    /// The concurrency the account's other functions reserve.
    fn reserved_by_others(&self, ctx: &Context, name: &str) -> AwsResult<i64> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT COALESCE(SUM(reserved), 0) FROM lambda_functions
                 WHERE account = ?1 AND region = ?2 AND version = 0 AND name != ?3",
            )?
            .query_row(params![ctx.account, ctx.region, name], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    pub(super) fn get_account_settings(&self, ctx: &Context) -> AwsResult<Value> {
        let (functions, code_size): (i64, i64) =
            self.env.store.with(|c| {
                c.prepare_cached(
                "SELECT COUNT(DISTINCT name), COALESCE(SUM(json_extract(config, '$.CodeSize')), 0)
                 FROM lambda_functions WHERE account = ?1 AND region = ?2",
            )?
            .query_row(params![ctx.account, ctx.region], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(AwsError::from)
            })?;
        let reserved = self.reserved_by_others(ctx, "")?;
        Ok(Value::map()
            .with(
                "AccountLimit",
                Value::map()
                    .with("TotalCodeSize", 80_530_636_800i64)
                    .with("CodeSizeUnzipped", 262_144_000i64)
                    .with("CodeSizeZipped", 52_428_800i64)
                    .with("ConcurrentExecutions", ACCOUNT_CONCURRENCY)
                    .with(
                        "UnreservedConcurrentExecutions",
                        ACCOUNT_CONCURRENCY - reserved,
                    ),
            )
            .with(
                "AccountUsage",
                Value::map()
                    .with("TotalCodeSize", code_size)
                    .with("FunctionCount", functions),
            ))
    }

    pub(super) fn get_function_concurrency(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = target_of(input)?;
        let f = self.latest(ctx, &name)?;
        Ok(Value::map().with_opt("ReservedConcurrentExecutions", f.reserved))
    }

    pub(super) fn delete_function_concurrency(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = target_of(input)?;
        let mut f = self.latest(ctx, &name)?;
        f.reserved = None;
        self.save(ctx, &f)?;
        Ok(Value::map())
    }
}

/// Whether a taggable ARN names a function (rather than an event source mapping or a
/// code signing configuration).
fn is_function_arn(arn: &str) -> bool {
    !arn.contains(":event-source-mapping:") && !arn.contains(":code-signing-config:")
}

pub(super) fn tags_of(tags: Option<&Value>) -> BTreeMap<String, String> {
    tags.and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn tags_value(tags: &BTreeMap<String, String>) -> Value {
    Value::Map(
        tags.iter()
            .map(|(k, v)| (k.clone(), Value::from(v)))
            .collect(),
    )
}
