//! Queries over many parameters: GetParametersByPath and DescribeParameters with their
//! `ParameterFilters` (and DescribeParameters' older `Filters`), plus the tags the
//! `tag:` filters read.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::parameters::{metadata, Version};
use super::Ssm;
use crate::paging::page;

/// InvalidNextToken for a token this service did not issue.
pub(super) fn bad_token() -> AwsError {
    AwsError::new("InvalidNextToken", "The specified token isn't valid.")
}

/// The `Tags` of a request as pairs.
pub(super) fn tag_pairs(input: &Value) -> Vec<(String, String)> {
    input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t.str("Key").unwrap_or_default().to_string(),
                t.str("Value").unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Tags as stored.
pub(super) fn tags_json(tags: &[(String, String)]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

/// One `ParameterStringFilter`, checked once.
struct Filter {
    key: String,
    option: String,
    values: Vec<String>,
}

fn options_for(key: &str) -> &'static [&'static str] {
    match key {
        "Name" => &["Equals", "BeginsWith", "Contains"],
        "Path" => &["OneLevel", "Recursive"],
        k if k.starts_with("tag:") => &["Equals"],
        _ => &["Equals", "BeginsWith"],
    }
}

fn parse_filters(input: &Value, by_path: bool) -> AwsResult<Vec<Filter>> {
    let mut out = Vec::new();
    for f in input
        .get("ParameterFilters")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let key = f.str("Key").unwrap_or_default();
        let known = ["Name", "Type", "KeyId", "Path", "Label", "Tier", "DataType"].contains(&key)
            || (key.starts_with("tag:") && key.len() > 4);
        if !known || (by_path && (key == "Name" || key == "Path")) {
            let valid = if by_path {
                "[Type, KeyId, Label, tag, Tier, DataType]"
            } else {
                "[Name, Type, KeyId, Path, Label, tag, Tier, DataType]"
            };
            return Err(AwsError::new(
                "InvalidFilterKey",
                format!("The following filter key is not valid: {key}. Valid filter keys include: {valid}."),
            ));
        }
        let options = options_for(key);
        let option = f.str("Option").unwrap_or(options[0]);
        if !options.contains(&option) {
            return Err(AwsError::new(
                "InvalidFilterOption",
                format!(
                    "The following filter option is not valid: {option}. Valid options include: [{}].",
                    options.join(", ")
                ),
            ));
        }
        let values: Vec<String> = f
            .get("Values")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if values.is_empty() && !key.starts_with("tag:") {
            return Err(AwsError::new(
                "InvalidFilterValue",
                format!("The following filter values are missing : null for filter key {key}."),
            ));
        }
        out.push(Filter {
            key: key.to_string(),
            option: option.to_string(),
            values,
        });
    }
    Ok(out)
}

/// The older `Filters` of DescribeParameters, as the equivalent `ParameterFilters`.
fn legacy_filters(input: &Value) -> Vec<Filter> {
    input
        .get("Filters")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|f| Filter {
            key: f.str("Key").unwrap_or_default().to_string(),
            option: "BeginsWith".into(),
            values: f
                .get("Values")
                .and_then(Value::as_list)
                .unwrap_or_default()
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        })
        .collect()
}

fn text_matches(option: &str, candidate: &str, value: &str) -> bool {
    match option {
        "BeginsWith" => candidate.starts_with(value),
        "Contains" => candidate.contains(value),
        _ => candidate == value,
    }
}

/// Whether `name` is under `path`, directly or (recursively) at any depth.
fn under_path(name: &str, path: &str, recursive: bool) -> bool {
    let prefix = if path == "/" {
        "/".to_string()
    } else {
        format!("{}/", path.trim_end_matches('/'))
    };
    match name.strip_prefix(&prefix) {
        Some(rest) => !rest.is_empty() && (recursive || !rest.contains('/')),
        None => false,
    }
}

fn filter_matches(f: &Filter, v: &Version, tags: &[(String, String)]) -> bool {
    let any = |candidate: &str| {
        f.values
            .iter()
            .any(|value| text_matches(&f.option, candidate, value))
    };
    match f.key.as_str() {
        "Name" => {
            let name = v.name.as_str();
            f.values.iter().any(|value| {
                text_matches(&f.option, name, value)
                    || (!value.starts_with('/')
                        && text_matches(&f.option, name, &format!("/{value}")))
            })
        }
        "Path" => f
            .values
            .iter()
            .any(|p| under_path(&v.name, p, f.option == "Recursive")),
        "Type" => any(&v.kind),
        "KeyId" => v.key_id.as_deref().is_some_and(any),
        "Label" => v.labels.iter().any(|l| any(l)),
        "Tier" => any(&v.tier),
        "DataType" => any(&v.data_type),
        key => key.strip_prefix("tag:").is_some_and(|tag| {
            tags.iter()
                .any(|(k, value)| k == tag && (f.values.is_empty() || f.values.contains(value)))
        }),
    }
}

impl Ssm {
    fn tags_of(&self, ctx: &Context, name: &str) -> AwsResult<Option<Vec<(String, String)>>> {
        let json: Option<String> = self.env.store.with(|c| {
            rusqlite::OptionalExtension::optional(c.query_row_cached(
                "SELECT tags FROM ssm_parameters WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
                |r| r.get(0),
            ))
            .map_err(AwsError::from)
        })?;
        Ok(json.map(|j| serde_json::from_str(&j).unwrap_or_default()))
    }

    /// The latest versions that pass every filter, by name.
    fn filtered(&self, ctx: &Context, filters: &[Filter]) -> AwsResult<Vec<Version>> {
        let needs_tags = filters.iter().any(|f| f.key.starts_with("tag:"));
        let mut out = Vec::new();
        for v in self.latest_versions(ctx)? {
            let tags = if needs_tags {
                self.tags_of(ctx, &v.name)?.unwrap_or_default()
            } else {
                Vec::new()
            };
            if filters.iter().all(|f| filter_matches(f, &v, &tags)) {
                out.push(v);
            }
        }
        Ok(out)
    }

    pub(super) async fn get_parameters_by_path(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let path = input.str("Path").unwrap_or_default();
        if !path.starts_with('/') {
            return Err(AwsError::validation(
                "The parameter doesn't meet the parameter name requirements. The parameter name must begin with a forward slash \"/\". It can't be prefixed with \"aws\" or \"ssm\" (case-insensitive). It must use only letters, numbers, or the following symbols: . (period), - (hyphen), _ (underscore). Special characters are not allowed. All sub-paths, if specified, must use the forward slash symbol \"/\". Valid example: /get/parameters2-/by1./path0_.",
            ));
        }
        let recursive = input.bool("Recursive").unwrap_or(false);
        let filters = parse_filters(input, true)?;
        let decrypt = input.bool("WithDecryption").unwrap_or(false);
        let matching: Vec<Value> = self
            .filtered(ctx, &filters)?
            .into_iter()
            .filter(|v| under_path(&v.name, path, recursive))
            .map(|v| Value::from(v.name))
            .collect();
        let limit = usize::try_from(input.int("MaxResults").unwrap_or(10)).unwrap_or(10);
        let (names, next) = page(matching, limit, input.str("NextToken"), bad_token)?;
        let latest = self.latest_versions(ctx)?;
        let mut parameters = Vec::new();
        for name in names.iter().filter_map(Value::as_str) {
            if let Some(v) = latest.iter().find(|v| v.name == name) {
                parameters.push(self.parameter(ctx, v, None, decrypt).await?);
            }
        }
        Ok(Value::map()
            .with("Parameters", Value::List(parameters))
            .with_opt("NextToken", next))
    }

    pub(super) fn describe_parameters(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        if input.get("Filters").is_some() && input.get("ParameterFilters").is_some() {
            return Err(AwsError::validation(
                "You can use either Filters or ParameterFilters in a single request.",
            ));
        }
        let mut filters = parse_filters(input, false)?;
        filters.extend(legacy_filters(input));
        let entries = self
            .filtered(ctx, &filters)?
            .iter()
            .map(|v| metadata(ctx, v))
            .collect();
        let limit = usize::try_from(input.int("MaxResults").unwrap_or(10)).unwrap_or(10);
        let (entries, next) = page(entries, limit, input.str("NextToken"), bad_token)?;
        Ok(Value::map()
            .with("Parameters", Value::List(entries))
            .with_opt("NextToken", next))
    }

    /// The resource a tagging request names (its type and id), with its tags.
    fn tagged(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(String, String, super::records::Tags)> {
        let kind = input.str("ResourceType").unwrap_or_default();
        let id = input.str("ResourceId").unwrap_or_default();
        let tags = if kind == "Parameter" {
            self.tags_of(ctx, id)?
        } else {
            self.record_tags(ctx, kind, id)?.ok_or_else(|| {
                AwsError::new(
                    "InvalidResourceType",
                    format!("Roto's SSM does not tag resources of type {kind}."),
                )
            })?
        };
        let tags = tags.ok_or_else(|| AwsError::new("InvalidResourceId", ""))?;
        Ok((kind.to_string(), id.to_string(), tags))
    }

    fn set_tags(
        &self,
        ctx: &Context,
        kind: &str,
        name: &str,
        tags: &[(String, String)],
    ) -> AwsResult<()> {
        if kind != "Parameter" {
            return self.set_record_tags(ctx, kind, name, tags);
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE ssm_parameters SET tags = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, name, tags_json(tags)],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }

    pub(super) fn add_tags_to_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (kind, name, mut tags) = self.tagged(ctx, input)?;
        for (k, v) in tag_pairs(input) {
            match tags.iter_mut().find(|(existing, _)| *existing == k) {
                Some(slot) => slot.1 = v,
                None => tags.push((k, v)),
            }
        }
        self.set_tags(ctx, &kind, &name, &tags)?;
        Ok(Value::map())
    }

    pub(super) fn remove_tags_from_resource(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (kind, name, mut tags) = self.tagged(ctx, input)?;
        let remove: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        tags.retain(|(k, _)| !remove.contains(&k.as_str()));
        self.set_tags(ctx, &kind, &name, &tags)?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_for_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, _, tags) = self.tagged(ctx, input)?;
        Ok(Value::map().with(
            "TagList",
            Value::List(
                tags.into_iter()
                    .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
                    .collect(),
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_one_level_or_recursively() {
        assert!(under_path("/app/db", "/app", false));
        assert!(under_path("/app/db", "/app/", false));
        assert!(!under_path("/app/db/url", "/app", false));
        assert!(under_path("/app/db/url", "/app", true));
        assert!(!under_path("/application/x", "/app", true));
        assert!(under_path("/top", "/", false));
        assert!(!under_path("/app", "/app", true));
    }
}
