//! ImportApiKeys (a CSV file of keys, as AWS reads it: a header row naming the columns
//! `name`, `key`, `description`, `enabled` and `usageplanIds`, in any order and case) and
//! ImportDocumentationParts (an OpenAPI document's `x-amazon-apigateway-documentation`
//! parts, merged into the API's or replacing them). Each row or part goes through the same
//! create an API call would make; what cannot be read is a warning (a
//! BadRequestException with `failonwarnings`).

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::Value as Json;

use super::super::{bad_request, new_id, ApiGateway};
use super::scope;

/// One CSV line's fields (`"` quotes a field; `""` inside one is a quote).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

/// A key a CSV file describes: the CreateApiKey input, and the usage plans it joins.
type ImportedKey = (Value, Vec<String>);

/// The keys a CSV file describes, and a warning for each line it cannot read.
fn read_keys(csv: &str) -> Result<(Vec<ImportedKey>, Vec<String>), AwsError> {
    let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = fields(lines.next().unwrap_or_default())
        .into_iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let Some(key_column) = column("key") else {
        return Err(bad_request(
            "Invalid API key file: a 'key' column is required",
        ));
    };
    let mut keys = Vec::new();
    let mut warnings = Vec::new();
    for (n, line) in lines.enumerate() {
        let row = fields(line);
        let cell = |name: &str| {
            column(name)
                .and_then(|i| row.get(i))
                .filter(|v| !v.is_empty())
        };
        let Some(value) = row.get(key_column).filter(|v| !v.is_empty()) else {
            warnings.push(format!("Line {}: the API key is missing", n + 2));
            continue;
        };
        let enabled = cell("enabled").is_none_or(|e| e.eq_ignore_ascii_case("true"));
        let input = Value::map()
            .with("value", value.as_str())
            .with("enabled", enabled)
            .with_opt("name", cell("name").map(String::as_str))
            .with_opt("description", cell("description").map(String::as_str));
        let plans = cell("usageplanids")
            .map(|ids| {
                ids.split([';', ' '])
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        keys.push((input, plans));
    }
    Ok((keys, warnings))
}

/// The documentation parts an OpenAPI document carries: each `location` and its
/// `properties` (as the JSON text AWS keeps).
fn read_parts(doc: &Json) -> (Vec<(Json, String)>, Vec<String>) {
    let parts = &doc["x-amazon-apigateway-documentation"]["documentationParts"];
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for (n, part) in parts.as_array().into_iter().flatten().enumerate() {
        if !part["location"]["type"].is_string() {
            warnings.push(format!("Documentation part {n}: its location has no type"));
            continue;
        }
        let properties = match &part["properties"] {
            Json::String(text) => text.clone(),
            other => other.to_string(),
        };
        found.push((part["location"].clone(), properties));
    }
    (found, warnings)
}

/// The ids and warnings an import answers, refused when it warned and was asked not to.
fn imported(ids: Vec<String>, warnings: Vec<String>, input: &Value) -> AwsResult<Value> {
    if !warnings.is_empty() && input.bool("failOnWarnings") == Some(true) {
        return Err(bad_request(format!(
            "Warnings found during import:\n{}",
            warnings.join("\n")
        )));
    }
    Ok(Value::map()
        .with("ids", ids.into_iter().map(Value::from).collect::<Vec<_>>())
        .with(
            "warnings",
            warnings.into_iter().map(Value::from).collect::<Vec<_>>(),
        ))
}

impl ApiGateway {
    /// ImportApiKeys.
    pub(super) fn import_api_keys(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        if input.str("format") != Some("csv") {
            return Err(bad_request("Invalid format: only csv is supported"));
        }
        let body = input
            .get("body")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let (keys, warnings) = read_keys(&String::from_utf8_lossy(body))?;
        let mut ids = Vec::new();
        for (key, plans) in keys {
            let created = self.create_child(ctx, "ApiKey", &key)?;
            let id = created.str("id").unwrap_or_default().to_string();
            for plan in plans {
                let plan_key = Value::map()
                    .with("usagePlanId", plan)
                    .with("keyId", id.as_str())
                    .with("keyType", "API_KEY");
                self.create_child(ctx, "UsagePlanKey", &plan_key)?;
            }
            ids.push(id);
        }
        imported(ids, warnings, input)
    }

    /// ImportDocumentationParts (`mode` `merge`, the default, or `overwrite`).
    pub(super) fn import_documentation_parts(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let body = input
            .get("body")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let doc = super::super::document(&String::from_utf8_lossy(body))
            .map_err(|e| bad_request(format!("Invalid OpenAPI input: {e}")))?;
        let (parts, warnings) = read_parts(&doc);
        let place = scope(ctx, "documentationpart", api);
        let existing = self.store.list(place)?;
        if input.str("mode") == Some("overwrite") {
            for part in &existing {
                self.store
                    .delete(place, part["id"].as_str().unwrap_or_default())?;
            }
        }
        let mut ids = Vec::new();
        for (location, properties) in parts {
            let same_place = existing
                .iter()
                .find(|p| p["location"] == location && input.str("mode") != Some("overwrite"));
            let id = same_place
                .and_then(|p| p["id"].as_str())
                .map_or_else(new_id, str::to_string);
            let part =
                serde_json::json!({"id": id, "location": location, "properties": properties});
            self.store.put(place, &id, &part)?;
            ids.push(id);
        }
        imported(ids, warnings, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_files_name_their_columns_in_any_order() {
        let csv = "Name,key,description,Enabled,usageplanIds\n\
                   first,abcdefghijklmnopqrstuvwxyz,\"a, quoted \"\"key\"\"\",TRUE,p1\n\
                   ,,missing,,\n\
                   second,zyxwvutsrqponmlkjihgfedcba,,false,\n";
        let (keys, warnings) = read_keys(csv).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].0.str("name"), Some("first"));
        assert_eq!(keys[0].0.str("description"), Some("a, quoted \"key\""));
        assert_eq!(keys[0].0.bool("enabled"), Some(true));
        assert_eq!(keys[0].1, ["p1"]);
        assert_eq!(keys[1].0.bool("enabled"), Some(false));
        assert_eq!(warnings.len(), 1);
        assert!(read_keys("name,description\nx,y\n").is_err());
    }

    #[test]
    fn documentation_parts_keep_properties_as_text() {
        let doc = json!({"x-amazon-apigateway-documentation": {"documentationParts": [
            {"location": {"type": "API"}, "properties": {"description": "d"}},
            {"location": {}, "properties": {}}]}});
        let (parts, warnings) = read_parts(&doc);
        assert_eq!(
            parts,
            [(json!({"type": "API"}), r#"{"description":"d"}"#.to_string())]
        );
        assert_eq!(warnings.len(), 1);
    }
}
