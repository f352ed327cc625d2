//! Dashboards: PutDashboard with the body checked as AWS checks it (a JSON object with a
//! `widgets` array, each widget of a known type, in the grid, with the properties its type
//! requires), GetDashboard, ListDashboards and DeleteDashboards. Dashboards are global, as
//! in AWS: one set per account, whatever the region of the call.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};

use super::{invalid_value, list, missing, required_str, Inner};
use crate::paging;

/// The longest dashboard name.
const MAX_NAME: usize = 255;
/// The most widgets on one dashboard.
const MAX_WIDGETS: usize = 500;
/// The most dashboards one DeleteDashboards may name.
const MAX_DELETE: usize = 100;
/// ListDashboards' page size.
const PAGE: usize = 1000;
const WIDGET_TYPES: &[&str] = &["metric", "text", "log", "alarm", "explorer", "custom"];

/// `InvalidParameterInput` (DashboardInvalidInputError).
fn invalid_input(message: impl Into<String>) -> AwsError {
    AwsError::new("DashboardInvalidInputError", message)
}

fn check_name(name: &str) -> AwsResult<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        return Ok(());
    }
    Err(invalid_input(
        "The value for field DashboardName contains invalid characters. It can only contain \
         alphanumerics, dash (-) and underscore (_).",
    ))
}

/// What is wrong with a dashboard body, as (data path, message) pairs.
fn body_problems(body: &Json) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut problem = |path: String, message: String| out.push((path, message));
    let Some(object) = body.as_object() else {
        problem(String::new(), "Should be object".into());
        return out;
    };
    let Some(widgets) = object.get("widgets") else {
        problem(
            String::new(),
            "Should have required property 'widgets'".into(),
        );
        return out;
    };
    let Some(widgets) = widgets.as_array() else {
        problem("/widgets".into(), "Should be array".into());
        return out;
    };
    if widgets.len() > MAX_WIDGETS {
        problem(
            "/widgets".into(),
            format!("Should NOT have more than {MAX_WIDGETS} items"),
        );
    }
    for (i, widget) in widgets.iter().enumerate() {
        widget_problems(widget, &format!("/widgets/{i}"), &mut problem);
    }
    out
}

fn widget_problems(widget: &Json, at: &str, problem: &mut dyn FnMut(String, String)) {
    let Some(w) = widget.as_object() else {
        problem(at.to_string(), "Should be object".into());
        return;
    };
    for (field, min, max) in [
        ("x", 0, 23),
        ("y", 0, i64::MAX),
        ("width", 1, 24),
        ("height", 1, 1000),
    ] {
        match w.get(field) {
            None => {}
            Some(v) => match v.as_i64() {
                Some(n) if n < min => {
                    problem(format!("{at}/{field}"), format!("Should be >= {min}"))
                }
                Some(n) if n > max => {
                    problem(format!("{at}/{field}"), format!("Should be <= {max}"))
                }
                Some(_) => {}
                None => problem(format!("{at}/{field}"), "Should be integer".into()),
            },
        }
    }
    let Some(kind) = w.get("type") else {
        problem(
            at.to_string(),
            "Should have required property 'type'".into(),
        );
        return;
    };
    let Some(kind) = kind.as_str().filter(|k| WIDGET_TYPES.contains(k)) else {
        problem(
            format!("{at}/type"),
            "Should be equal to one of the allowed values".into(),
        );
        return;
    };
    let required: &[&str] = match kind {
        "text" => &["markdown"],
        "metric" => &["region"],
        "log" => &["query", "region"],
        "alarm" => &["alarms"],
        _ => &[],
    };
    if required.is_empty() {
        return;
    }
    let Some(properties) = w.get("properties") else {
        problem(
            at.to_string(),
            "Should have required property 'properties'".into(),
        );
        return;
    };
    let Some(properties) = properties.as_object() else {
        problem(format!("{at}/properties"), "Should be object".into());
        return;
    };
    for name in required {
        if !properties.contains_key(*name) {
            problem(
                format!("{at}/properties"),
                format!("Should have required property '{name}'"),
            );
        }
    }
    for array in ["metrics", "alarms"] {
        if properties.get(array).is_some_and(|v| !v.is_array()) {
            problem(format!("{at}/properties/{array}"), "Should be array".into());
        }
    }
}

/// The InvalidParameterInput of a body with problems, its messages as AWS lists them.
fn body_error(problems: &[(String, String)]) -> AwsError {
    let listed: Vec<Json> = problems
        .iter()
        .map(|(path, message)| json!({"dataPath": path, "message": message}))
        .collect();
    let text = serde_json::to_string_pretty(&listed).unwrap_or_default();
    let messages: Vec<Value> = problems
        .iter()
        .map(|(path, message)| {
            Value::map()
                .with("DataPath", path.as_str())
                .with("Message", message.as_str())
        })
        .collect();
    invalid_input(format!(
        "The dashboard body is invalid, there are {} validation errors:\n{text}",
        problems.len()
    ))
    .with_field("dashboardValidationMessages", Value::List(messages))
}

fn dashboard_arn(account: &str, name: &str) -> String {
    format!("arn:aws:cloudwatch::{account}:dashboard/{name}")
}

impl Inner {
    pub(super) fn put_dashboard(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "DashboardName", "DashboardName")?;
        check_name(name)?;
        let body = required_str(input, "DashboardBody", "DashboardBody")?;
        let parsed: Json = serde_json::from_str(body).map_err(|_| {
            invalid_input("The field DashboardBody must be a valid JSON object").with_field(
                "dashboardValidationMessages",
                Value::List(vec![Value::map().with("DataPath", "").with(
                    "Message",
                    "The field DashboardBody must be a valid JSON object",
                )]),
            )
        })?;
        let problems = body_problems(&parsed);
        if !problems.is_empty() {
            return Err(body_error(&problems));
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO cw_dashboards (account, name, body, modified)
                 VALUES (?1, ?2, ?3, ?4)",
                params![ctx.account, name, body, now_millis()],
            )
        })?;
        Ok(Value::map().with("DashboardValidationMessages", Value::List(Vec::new())))
    }

    pub(super) fn get_dashboard(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "DashboardName", "DashboardName")?;
        let body: Option<String> = self.store()?.read(|c| {
            c.query_row_cached(
                "SELECT body FROM cw_dashboards WHERE account = ?1 AND name = ?2",
                params![ctx.account, name],
                |r| r.get(0),
            )
            .optional()
        })?;
        let body = body.ok_or_else(|| {
            AwsError::new(
                "DashboardNotFoundError",
                format!("Dashboard {name} does not exist"),
            )
        })?;
        Ok(Value::map()
            .with("DashboardArn", dashboard_arn(&ctx.account, name))
            .with("DashboardBody", body)
            .with("DashboardName", name))
    }

    pub(super) fn list_dashboards(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("DashboardNamePrefix").unwrap_or_default();
        let entries: Vec<Value> = self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, modified, length(CAST(body AS BLOB)) FROM cw_dashboards
                 WHERE account = ?1 AND substr(name, 1, length(?2)) = ?2 ORDER BY name",
            )?;
            let rows = stmt.query_map(params![ctx.account, prefix], |r| {
                let name: String = r.get(0)?;
                Ok(Value::map()
                    .with("DashboardArn", dashboard_arn(&ctx.account, &name))
                    .with("LastModified", Value::Timestamp(r.get(1)?))
                    .with("Size", r.get::<_, i64>(2)?)
                    .with("DashboardName", name))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let (page, next) = paging::page(entries, PAGE, input.str("NextToken"), || {
            invalid_value("The value for parameter NextToken is invalid.")
        })?;
        Ok(Value::map()
            .with("DashboardEntries", Value::List(page))
            .with_opt("NextToken", next))
    }

    pub(super) fn delete_dashboards(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let names: Vec<&str> = list(input, "DashboardNames")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if names.is_empty() {
            return Err(missing("DashboardNames"));
        }
        if names.len() > MAX_DELETE {
            return Err(invalid_value(format!(
                "The collection DashboardNames must not have a size greater than {MAX_DELETE}."
            )));
        }
        self.store()?.with(|c| {
            let mut unknown = Vec::new();
            for name in &names {
                let found = c
                    .query_row_cached(
                        "SELECT 1 FROM cw_dashboards WHERE account = ?1 AND name = ?2",
                        params![ctx.account, name],
                        |_| Ok(()),
                    )
                    .optional()?;
                if found.is_none() {
                    unknown.push(*name);
                }
            }
            if !unknown.is_empty() {
                return Err(AwsError::new(
                    "DashboardNotFoundError",
                    format!(
                        "The specified dashboard does not exist. [{}]",
                        unknown.join(", ")
                    ),
                ));
            }
            for name in &names {
                c.execute_cached(
                    "DELETE FROM cw_dashboards WHERE account = ?1 AND name = ?2",
                    params![ctx.account, name],
                )?;
            }
            Ok(())
        })?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_checked_widget_by_widget() {
        let ok = json!({"widgets": [
            {"type": "text", "x": 0, "y": 0, "width": 24, "height": 2, "properties": {"markdown": "# Hi"}},
            {"type": "metric", "properties": {"region": "us-east-1", "metrics": [["App", "Errors"]]}},
        ]});
        assert!(body_problems(&ok).is_empty());
        assert_eq!(
            body_problems(&json!({})),
            vec![(
                String::new(),
                "Should have required property 'widgets'".to_string()
            )]
        );
        let bad = json!({"widgets": [
            {"type": "text", "properties": {}},
            {"type": "chart"},
            {"type": "metric", "width": 30, "properties": {"region": "r", "metrics": 1}},
        ]});
        let problems = body_problems(&bad);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert_eq!(problems[0].0, "/widgets/0/properties");
        assert_eq!(problems[1].0, "/widgets/1/type");
        assert_eq!(
            problems[2],
            (
                "/widgets/2/width".to_string(),
                "Should be <= 24".to_string()
            )
        );
        assert_eq!(problems[3].0, "/widgets/2/properties/metrics");
    }

    #[test]
    fn names_are_alphanumerics_dashes_and_underscores() {
        assert!(check_name("ops-Main_1").is_ok());
        assert!(check_name("a b").is_err() && check_name("").is_err());
        assert!(check_name(&"a".repeat(256)).is_err());
    }
}
