//! Aliases: a name for a version, optionally splitting traffic with a second version by
//! weight (`RoutingConfig.AdditionalVersionWeights`).

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{
    conflict, from_json_text, function_arn, function_not_found, invalid_parameter, revision_id,
    revision_mismatch, target_of, Lambda,
};

/// The version number of a version name (`$LATEST` is 0), if it is one.
fn version_number(name: &str) -> Option<i64> {
    match name {
        "$LATEST" => Some(0),
        n => n.parse().ok().filter(|v| *v > 0),
    }
}

/// The version an invocation through `alias` runs: the alias's own, or with probability
/// equal to its weight the additional version, when `route` is set.
pub(super) fn pick_version(alias: &Value, route: bool) -> i64 {
    let primary = alias
        .str("FunctionVersion")
        .and_then(version_number)
        .unwrap_or(0);
    if !route {
        return primary;
    }
    let weights = alias
        .get("RoutingConfig")
        .and_then(|r| r.get("AdditionalVersionWeights"))
        .and_then(Value::as_map);
    let roll = fastrand::f64();
    let mut cumulative = 0.0;
    for (version, weight) in weights.into_iter().flatten() {
        cumulative += match weight {
            Value::Float(f) => *f,
            Value::Integer(i) => *i as f64,
            _ => 0.0,
        };
        if roll < cumulative {
            return version_number(version).unwrap_or(primary);
        }
    }
    primary
}

fn alias_not_found(ctx: &Context, function: &str, name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!(
            "Cannot find alias arn: {}:{name}",
            function_arn(ctx, function)
        ),
    )
    .with_status(404)
    .with_field("Type", "User")
}

impl Lambda {
    /// Alias `name` of `function`.
    pub(super) fn alias(
        &self,
        ctx: &Context,
        function: &str,
        name: &str,
    ) -> AwsResult<Option<Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM lambda_aliases WHERE account = ?1 AND region = ?2 AND function = ?3 AND name = ?4",
            )?
            .query_row(params![ctx.account, ctx.region, function, name], |r| r.get::<_, String>(0))
            .optional()
            .map(|c| c.map(|text| from_json_text(&text)))
            .map_err(AwsError::from)
        })
    }

    fn aliases(&self, ctx: &Context, function: &str) -> AwsResult<Vec<Value>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_aliases WHERE account = ?1 AND region = ?2 AND function = ?3 ORDER BY name",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, function], |r| r.get::<_, String>(0))?;
            rows.map(|r| r.map(|text| from_json_text(&text)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// The names of the aliases that route to `version`.
    pub(super) fn aliases_of_version(
        &self,
        ctx: &Context,
        function: &str,
        version: &str,
    ) -> AwsResult<Vec<String>> {
        Ok(self
            .aliases(ctx, function)?
            .into_iter()
            .filter(|a| {
                a.str("FunctionVersion") == Some(version)
                    || a.get("RoutingConfig")
                        .and_then(|r| r.get("AdditionalVersionWeights"))
                        .and_then(|w| w.get(version))
                        .is_some()
            })
            .filter_map(|a| a.str("Name").map(str::to_string))
            .collect())
    }

    fn save_alias(&self, ctx: &Context, function: &str, alias: &Value) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_aliases (account, region, function, name, config)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    ctx.account,
                    ctx.region,
                    function,
                    alias.str("Name").unwrap_or_default(),
                    alias.to_json().to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Checks that a version an alias names exists.
    fn check_version(&self, ctx: &Context, function: &str, version: &str) -> AwsResult<()> {
        let arn = format!("{}:{version}", function_arn(ctx, function));
        let number = version_number(version).ok_or_else(|| function_not_found(&arn))?;
        self.function(ctx, function, number)?
            .map(|_| ())
            .ok_or_else(|| function_not_found(&arn))
    }

    /// Checks a routing configuration's versions and weights.
    fn check_routing(
        &self,
        ctx: &Context,
        function: &str,
        primary: &str,
        routing: Option<&Value>,
    ) -> AwsResult<()> {
        let weights = routing
            .and_then(|r| r.get("AdditionalVersionWeights"))
            .and_then(Value::as_map);
        for version in weights.into_iter().flatten().map(|(v, _)| v) {
            if version == primary || primary == "$LATEST" || version == "$LATEST" {
                return Err(invalid_parameter(
                    "Invalid function version for routing config. $LATEST and the alias's own version cannot be used.",
                ));
            }
            self.check_version(ctx, function, version)?;
        }
        Ok(())
    }

    pub(super) fn create_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (function, _) = target_of(input)?;
        let name = input.str("Name").unwrap_or_default();
        if name.bytes().all(|b| b.is_ascii_digit())
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(AwsError::validation(format!(
                "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: (?!^[0-9]+$)([a-zA-Z0-9-_]+)"
            )));
        }
        self.latest(ctx, &function)?;
        let version = input.str("FunctionVersion").unwrap_or_default();
        self.check_version(ctx, &function, version)?;
        self.check_routing(ctx, &function, version, input.get("RoutingConfig"))?;
        let arn = format!("{}:{name}", function_arn(ctx, &function));
        if self.alias(ctx, &function, name)?.is_some() {
            return Err(conflict(format!("Alias already exists: {arn}")));
        }
        let alias = Value::map()
            .with("AliasArn", arn)
            .with("Name", name)
            .with("FunctionVersion", version)
            .with("Description", input.str("Description").unwrap_or_default())
            .with_opt("RoutingConfig", input.get("RoutingConfig").cloned())
            .with("RevisionId", revision_id());
        self.save_alias(ctx, &function, &alias)?;
        Ok(alias)
    }

    pub(super) fn get_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (function, _) = target_of(input)?;
        let name = input.str("Name").unwrap_or_default();
        self.latest(ctx, &function)?;
        self.alias(ctx, &function, name)?
            .ok_or_else(|| alias_not_found(ctx, &function, name))
    }

    pub(super) fn update_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut alias = self.get_alias(ctx, input)?;
        let (function, _) = target_of(input)?;
        if let Some(rev) = input.str("RevisionId") {
            if alias.str("RevisionId") != Some(rev) {
                return Err(revision_mismatch("GetFunction or the GetAlias"));
            }
        }
        if let Some(version) = input.str("FunctionVersion") {
            self.check_version(ctx, &function, version)?;
            alias.insert("FunctionVersion", version);
        }
        if let Some(description) = input.str("Description") {
            alias.insert("Description", description);
        }
        if let Some(routing) = input.get("RoutingConfig") {
            let primary = alias.str("FunctionVersion").unwrap_or_default().to_string();
            self.check_routing(ctx, &function, &primary, Some(routing))?;
            let empty = routing
                .get("AdditionalVersionWeights")
                .and_then(Value::as_map)
                .is_none_or(|m| m.is_empty());
            if empty {
                alias.remove("RoutingConfig");
            } else {
                alias.insert("RoutingConfig", routing.clone());
            }
        }
        alias.insert("RevisionId", revision_id());
        self.save_alias(ctx, &function, &alias)?;
        Ok(alias)
    }

    pub(super) fn delete_alias(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.get_alias(ctx, input)?;
        let (function, _) = target_of(input)?;
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_aliases WHERE account = ?1 AND region = ?2 AND function = ?3 AND name = ?4",
                params![ctx.account, ctx.region, function, input.str("Name").unwrap_or_default()],
            )
            .map_err(AwsError::from)
        })?;
        self.forget_urls(ctx, &function, input.str("Name"))?;
        Ok(Value::map())
    }

    pub(super) fn list_aliases(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (function, _) = target_of(input)?;
        self.latest(ctx, &function)?;
        let version = input.str("FunctionVersion");
        let rows = self
            .aliases(ctx, &function)?
            .into_iter()
            .filter(|a| version.is_none_or(|v| a.str("FunctionVersion") == Some(v)))
            .collect();
        Self::page_of(rows, input, "Aliases")
    }
}
