//! Layers: versioned zips a function adds to its runtime.
//!
//! PublishLayerVersion stores the zip as a blob, like function code. Functions name layer
//! versions by ARN; the process executor unpacks them, in order, into the instance's `opt`
//! directory and puts its `python`, `nodejs/node_modules`, `bin` and `lib` directories on
//! the runtime's search paths, where Lambda's `/opt` layout puts them.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{params, OptionalExtension};

use super::{from_json_text, invalid_parameter, Lambda};

fn layer_arn(ctx: &Context, name: &str) -> String {
    format!("arn:aws:lambda:{}:{}:layer:{name}", ctx.region, ctx.account)
}

fn layer_not_found() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The resource you requested does not exist.",
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// The name and version of `arn:aws:lambda:<region>:<account>:layer:<name>:<version>`.
fn parse_version_arn(arn: &str) -> Option<(&str, &str, &str, i64)> {
    let parts: Vec<&str> = arn.split(':').collect();
    match parts.as_slice() {
        ["arn", _, "lambda", region, account, "layer", name, version] => {
            Some((region, account, name, version.parse().ok()?))
        }
        _ => None,
    }
}

/// The layer name a `LayerName` member gives (a name or a layer ARN).
pub(super) fn name_of(given: &str) -> &str {
    given.rsplit(':').next().unwrap_or(given)
}

/// The blob of the layer version an ARN names, if it exists.
pub(super) fn layer_blob(env: &Env, arn: &str) -> Option<String> {
    let (region, account, name, version) = parse_version_arn(arn)?;
    env.store
        .with(|c| {
            c.prepare_cached(
                "SELECT code_blob FROM lambda_layers WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
            )?
            .query_row(params![account, region, name, version], |r| r.get(0))
            .optional()
        })
        .ok()
        .flatten()
}

impl Lambda {
    fn layer(
        &self,
        account: &str,
        region: &str,
        name: &str,
        version: i64,
    ) -> AwsResult<Option<(Value, String)>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config, code_blob FROM lambda_layers WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
            )?
            .query_row(params![account, region, name, version], |r| {
                Ok((from_json_text(&r.get::<_, String>(0)?), r.get(1)?))
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The `Layers` of a function configuration, checking that every version exists.
    pub(super) fn function_layers(&self, input: &Value) -> AwsResult<Option<Value>> {
        let Some(arns) = input.get("Layers").and_then(Value::as_list) else {
            return Ok(None);
        };
        let mut layers = Vec::new();
        for arn in arns.iter().filter_map(Value::as_str) {
            let found = parse_version_arn(arn)
                .and_then(|(r, a, n, v)| self.layer(a, r, n, v).ok().flatten())
                .ok_or_else(|| invalid_parameter(format!("Layer version {arn} does not exist.")))?;
            let size = found
                .0
                .get("Content")
                .and_then(|c| c.int("CodeSize"))
                .unwrap_or(0);
            layers.push(Value::map().with("Arn", arn).with("CodeSize", size));
        }
        Ok(Some(Value::List(layers)))
    }

    pub(super) async fn publish_layer_version(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = name_of(input.str("LayerName").unwrap_or_default()).to_string();
        let content = input.get("Content").cloned().unwrap_or_else(Value::map);
        let (blob, size, sha) = self.store_code(ctx, &content).await?;
        let version: i64 = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM lambda_layers WHERE account = ?1 AND region = ?2 AND name = ?3",
                params![ctx.account, ctx.region, name],
                |r| r.get(0),
            )
            .map_err(AwsError::from)
        })?;
        let arn = layer_arn(ctx, &name);
        let mut config = Value::map()
            .with(
                "Content",
                Value::map()
                    .with(
                        "Location",
                        format!(
                            "http://{}/_roto/lambda/layers/{name}/{version}.zip",
                            ctx.host
                        ),
                    )
                    .with("CodeSha256", sha)
                    .with("CodeSize", size),
            )
            .with("LayerVersionArn", format!("{arn}:{version}"))
            .with("LayerArn", arn)
            .with("Description", input.str("Description").unwrap_or_default())
            .with(
                "CreatedDate",
                super::functions::last_modified_at(now_millis()),
            )
            .with("Version", version);
        for member in [
            "CompatibleRuntimes",
            "CompatibleArchitectures",
            "LicenseInfo",
        ] {
            if let Some(v) = input.get(member) {
                config.insert(member, v.clone());
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO lambda_layers (account, region, name, version, config, code_blob) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![ctx.account, ctx.region, name, version, config.to_json().to_string(), blob],
            )
            .map_err(AwsError::from)
        })?;
        Ok(config)
    }

    pub(super) fn get_layer_version(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = name_of(input.str("LayerName").unwrap_or_default());
        let version = input.int("VersionNumber").unwrap_or_default();
        self.layer(&ctx.account, &ctx.region, name, version)?
            .map(|(c, _)| c)
            .ok_or_else(layer_not_found)
    }

    pub(super) fn get_layer_version_by_arn(&self, input: &Value) -> AwsResult<Value> {
        let arn = input.str("Arn").unwrap_or_default();
        let (region, account, name, version) = parse_version_arn(arn).ok_or_else(|| {
            AwsError::validation(format!(
                "1 validation error detected: Value '{arn}' at 'arn' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:[a-zA-Z0-9-]+:lambda:[a-zA-Z0-9-]+:\\d{{12}}:layer:[a-zA-Z0-9-_]+:[0-9]+"
            ))
        })?;
        self.layer(account, region, name, version)?
            .map(|(c, _)| c)
            .ok_or_else(layer_not_found)
    }

    fn layer_versions(&self, ctx: &Context, name: Option<&str>) -> AwsResult<Vec<Value>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_layers WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR name = ?3)
                 ORDER BY name, version DESC",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, name], |r| r.get::<_, String>(0))?;
            rows.map(|r| r.map(|t| from_json_text(&t)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// A version as the list operations show it (without its content).
    fn list_item(version: &Value) -> Value {
        let mut item = version.clone();
        item.remove("Content");
        item.remove("LayerArn");
        item
    }

    fn compatible(version: &Value, input: &Value) -> bool {
        let has = |member: &str, wanted: Option<&str>| {
            wanted.is_none_or(|w| {
                version
                    .get(member)
                    .and_then(Value::as_list)
                    .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(w)))
            })
        };
        has("CompatibleRuntimes", input.str("CompatibleRuntime"))
            && has(
                "CompatibleArchitectures",
                input.str("CompatibleArchitecture"),
            )
    }

    pub(super) fn list_layer_versions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = name_of(input.str("LayerName").unwrap_or_default());
        let rows = self
            .layer_versions(ctx, Some(name))?
            .iter()
            .filter(|v| Self::compatible(v, input))
            .map(Self::list_item)
            .collect();
        Self::page_of(rows, input, "LayerVersions")
    }

    pub(super) fn list_layers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut layers: Vec<Value> = Vec::new();
        for version in self
            .layer_versions(ctx, None)?
            .iter()
            .filter(|v| Self::compatible(v, input))
        {
            let arn = version.str("LayerArn").unwrap_or_default();
            if layers.last().and_then(|l| l.str("LayerArn")) == Some(arn) {
                continue;
            }
            layers.push(
                Value::map()
                    .with("LayerName", arn.rsplit(':').next().unwrap_or_default())
                    .with("LayerArn", arn)
                    .with("LatestMatchingVersion", Self::list_item(version)),
            );
        }
        Self::page_of(layers, input, "Layers")
    }

    pub(super) fn delete_layer_version(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = name_of(input.str("LayerName").unwrap_or_default());
        let version = input.int("VersionNumber").unwrap_or_default();
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_layers WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
                params![ctx.account, ctx.region, name, version],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_version_arns_parse() {
        assert_eq!(
            parse_version_arn("arn:aws:lambda:us-east-1:123456789012:layer:deps:3"),
            Some(("us-east-1", "123456789012", "deps", 3))
        );
        assert_eq!(
            parse_version_arn("arn:aws:lambda:us-east-1:123456789012:layer:deps"),
            None
        );
    }
}
