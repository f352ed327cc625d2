//! Log transformers: a transformer's processors run in order over one log event, turning
//! its message into a JSON object, at ingestion (PutLogEvents) and in TestTransformer.
//!
//! The first processor parses the message: a configurable parser (`parseJSON`,
//! `parseKeyValue`, `csv`, `grok`, see `grok.rs`) or a vended-log parser (`vended.rs`);
//! the others change the object: add, copy, move, rename and delete keys, change strings'
//! case, trim, split and substitute them, convert types and dates, and turn a list into a
//! map. Keys name nested fields with dots (`user.id`); `@message` is the raw message. An
//! event a processor cannot handle (a message that is not JSON for `parseJSON`) has no
//! transformed message. `parseToOCSF` is not run: a configuration naming it is refused.

use roto_core::{AwsResult, Value};
use serde_json::{Map, Value as Json};

use super::grok::Grok;
use super::{invalid, vended};

/// The configurable parsers.
const PARSERS: [&str; 4] = ["parseJSON", "parseKeyValue", "csv", "grok"];

/// The processors that change a parsed event.
const MUTATORS: [&str; 13] = [
    "addKeys",
    "copyValue",
    "deleteKeys",
    "renameKeys",
    "moveKeys",
    "lowerCaseString",
    "upperCaseString",
    "trimString",
    "splitString",
    "substituteString",
    "typeConverter",
    "listToMap",
    "dateTimeConverter",
];

/// The most processors a transformer has, and the most parsers among them.
const MAX_PROCESSORS: usize = 20;
const MAX_PARSERS: usize = 5;

/// A transformer configuration, checked: each processor's name and settings, and its
/// compiled grok expression (a transformer has one at most).
pub(super) struct Transformer {
    processors: Vec<(String, Json)>,
    grok: Option<Grok>,
}

impl Transformer {
    /// Checks a `transformerConfig` as PutTransformer and TestTransformer receive it.
    pub(super) fn parse(config: &Value) -> AwsResult<Transformer> {
        let list = config.as_list().unwrap_or_default();
        if list.is_empty() || list.len() > MAX_PROCESSORS {
            return Err(invalid(format!(
                "A transformer must have between 1 and {MAX_PROCESSORS} processors"
            )));
        }
        let mut processors: Vec<(String, Json)> = Vec::with_capacity(list.len());
        let mut grok = None;
        for (i, processor) in list.iter().enumerate() {
            let json = processor.to_json();
            let entries: Vec<(&String, &Json)> = json
                .as_object()
                .map(|o| o.iter().collect())
                .unwrap_or_default();
            let [(name, settings)] = entries.as_slice() else {
                return Err(invalid(
                    "Each processor must set exactly one processor type",
                ));
            };
            let name = name.as_str();
            let vended = vended::PARSERS.contains(&name);
            let parser = vended || PARSERS.contains(&name);
            if i == 0 && !parser {
                return Err(invalid(
                    "The first processor in a transformer must be a parser",
                ));
            }
            if i > 0 && vended {
                return Err(invalid(format!(
                    "Processor {name} may only be the first processor of a transformer"
                )));
            }
            if !parser && !MUTATORS.contains(&name) {
                return Err(invalid(format!("Processor {name} is not supported")));
            }
            let once = ["grok", "addKeys", "copyValue"];
            if once.contains(&name) && processors.iter().any(|(n, _)| n == name) {
                return Err(invalid(format!(
                    "A transformer may include only one {name} processor"
                )));
            }
            if vended && text(settings, "source").is_some_and(|s| s != "@message") {
                return Err(invalid(format!(
                    "The source of {name} can only be @message"
                )));
            }
            if name == "grok" {
                let expression = text(settings, "match").unwrap_or_default();
                grok = Some(Grok::compile(expression).map_err(invalid)?);
            }
            if name == "dateTimeConverter" {
                DateConverter::read(settings).map_err(invalid)?;
            }
            processors.push((name.to_string(), (*settings).clone()));
        }
        let parsers = processors
            .iter()
            .filter(|(n, _)| PARSERS.contains(&n.as_str()) || vended::PARSERS.contains(&n.as_str()))
            .count();
        if parsers > MAX_PARSERS {
            return Err(invalid(format!(
                "A transformer may include at most {MAX_PARSERS} parsers"
            )));
        }
        Ok(Transformer { processors, grok })
    }

    /// The event `message` transformed, or `None` when a processor could not handle it;
    /// `metadata` is what `copyValue` may copy from (none in TestTransformer).
    pub(super) fn apply(&self, message: &str, metadata: Option<&Metadata>) -> Option<Json> {
        let mut event = Json::Object(Map::new());
        for (name, settings) in &self.processors {
            let step = Step {
                settings,
                message,
                metadata,
                grok: self.grok.as_ref(),
            };
            run(name, &step, &mut event)?;
        }
        Some(event)
    }
}

/// What one processor reads besides the event: its settings, the raw message, the
/// event's metadata and the transformer's grok expression.
struct Step<'a> {
    settings: &'a Json,
    message: &'a str,
    metadata: Option<&'a Metadata<'a>>,
    grok: Option<&'a Grok>,
}

/// The event's context, which `copyValue` copies from `@logGroupName`, `@logGroupStream`,
/// `@accountId` and `@regionName`.
pub(super) struct Metadata<'a> {
    pub group: &'a str,
    pub stream: &'a str,
    pub account: &'a str,
    pub region: &'a str,
}

impl Metadata<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        Some(match key {
            "@logGroupName" => self.group,
            "@logGroupStream" => self.stream,
            "@accountId" => self.account,
            "@regionName" => self.region,
            _ => return None,
        })
    }
}

/// The string setting `key` of a processor or entry.
fn text<'a>(settings: &'a Json, key: &str) -> Option<&'a str> {
    settings.get(key).and_then(Json::as_str)
}

/// A setting's entries (`entries`), or its keys (`withKeys`).
fn list<'a>(settings: &'a Json, key: &str) -> &'a [Json] {
    settings
        .get(key)
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The field at a dotted `path`.
fn get<'a>(event: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.').try_fold(event, |v, key| v.get(key))
}

/// The field at a dotted `path`, mutably.
fn get_mut<'a>(event: &'a mut Json, path: &str) -> Option<&'a mut Json> {
    path.split('.').try_fold(event, |v, key| v.get_mut(key))
}

/// Sets the field at a dotted `path`, creating the objects on the way; an existing field is
/// replaced only when `overwrite`.
fn set(event: &mut Json, path: &str, value: Json, overwrite: bool) {
    let mut parts = path.split('.').peekable();
    let mut node = event;
    while let Some(key) = parts.next() {
        let Json::Object(map) = node else { return };
        if parts.peek().is_none() {
            if overwrite || !map.contains_key(key) {
                map.insert(key.to_string(), value);
            }
            return;
        }
        node = map
            .entry(key.to_string())
            .or_insert_with(|| Json::Object(Map::new()));
    }
}

/// Removes the field at a dotted `path`, returning it.
fn take(event: &mut Json, path: &str) -> Option<Json> {
    let (parent, key) = match path.rsplit_once('.') {
        Some((parent, key)) => (get_mut(event, parent)?, key),
        None => (event, path),
    };
    parent.as_object_mut()?.remove(key)
}

/// The text a parser reads: `@message` (the default), or a field of the event.
fn source(settings: &Json, message: &str, event: &Json) -> Option<String> {
    match text(settings, "source").unwrap_or("@message") {
        "@message" => Some(message.to_string()),
        path => get(event, path)?.as_str().map(str::to_string),
    }
}

/// Puts a parser's fields at its `destination`, or at the root.
fn place(event: &mut Json, settings: &Json, fields: Map<String, Json>, overwrite: bool) {
    match text(settings, "destination") {
        Some(destination) => set(event, destination, Json::Object(fields), true),
        None => {
            for (k, v) in fields {
                set(event, &k, v, overwrite);
            }
        }
    }
}

/// Runs one processor; `None` when it cannot handle the event.
fn run(name: &str, step: &Step, event: &mut Json) -> Option<()> {
    let (s, message, metadata) = (step.settings, step.message, step.metadata);
    match name {
        "grok" => {
            let text_in = source(s, message, event)?;
            for (field, value) in step.grok?.captures(&text_in)? {
                set(event, field, Json::from(value), true);
            }
        }
        name if vended::PARSERS.contains(&name) => {
            for (k, v) in vended::parse(name, message)? {
                event.as_object_mut()?.insert(k, v);
            }
        }
        "dateTimeConverter" => {
            let converter = DateConverter::read(s).ok()?;
            let value = get(event, converter.source)?.as_str()?.to_string();
            let converted = converter.convert(&value)?;
            set(event, converter.target, Json::from(converted), true);
        }
        "parseJSON" => {
            let parsed: Json = serde_json::from_str(&source(s, message, event)?).ok()?;
            place(event, s, parsed.as_object()?.clone(), true);
        }
        "parseKeyValue" => {
            let text_in = source(s, message, event)?;
            let fields = key_values(s, &text_in);
            let overwrite = s.get("overwriteIfExists").and_then(Json::as_bool) == Some(true);
            place(event, s, fields, overwrite);
        }
        "csv" => {
            let line = source(s, message, event)?;
            let fields = csv_fields(s, &line);
            place(event, s, fields, true);
        }
        "addKeys" => {
            for e in list(s, "entries") {
                let value = Json::String(text(e, "value")?.to_string());
                set(event, text(e, "key")?, value, overwrites(e));
            }
        }
        "copyValue" | "moveKeys" => {
            for e in list(s, "entries") {
                let from = text(e, "source")?;
                let value = match (name, metadata.and_then(|m| m.get(from))) {
                    ("moveKeys", _) => take(event, from),
                    (_, Some(meta)) => Some(Json::from(meta)),
                    _ => get(event, from).cloned(),
                };
                if let Some(value) = value {
                    set(event, text(e, "target")?, value, overwrites(e));
                }
            }
        }
        "renameKeys" => {
            for e in list(s, "entries") {
                if let Some(value) = take(event, text(e, "key")?) {
                    set(event, text(e, "renameTo")?, value, overwrites(e));
                }
            }
        }
        "deleteKeys" => {
            for key in list(s, "withKeys").iter().filter_map(Json::as_str) {
                take(event, key);
            }
        }
        "lowerCaseString" | "upperCaseString" | "trimString" => {
            for key in list(s, "withKeys").iter().filter_map(Json::as_str) {
                if let Some(Json::String(v)) = get_mut(event, key) {
                    *v = match name {
                        "lowerCaseString" => v.to_lowercase(),
                        "upperCaseString" => v.to_uppercase(),
                        _ => v.trim().to_string(),
                    };
                }
            }
        }
        "splitString" => {
            for e in list(s, "entries") {
                let delimiter = text(e, "delimiter")?;
                if let Some(field) = get_mut(event, text(e, "source")?) {
                    if let Json::String(v) = field {
                        *field = v.split(delimiter).map(Json::from).collect();
                    }
                }
            }
        }
        "substituteString" => {
            for e in list(s, "entries") {
                let from = regex_lite::Regex::new(text(e, "from")?).ok()?;
                if let Some(Json::String(v)) = get_mut(event, text(e, "source")?) {
                    *v = from.replace_all(v, text(e, "to")?).into_owned();
                }
            }
        }
        "typeConverter" => {
            for e in list(s, "entries") {
                let field = get_mut(event, text(e, "key")?)?;
                *field = convert(field, text(e, "type")?)?;
            }
        }
        "listToMap" => list_to_map(s, event)?,
        _ => return None,
    }
    Some(())
}

/// `dateTimeConverter`'s settings: a field's date, read by one of `matchPatterns` in
/// `sourceTimezone`, written to `target` in `targetFormat` and `targetTimezone`. Patterns
/// are Java's (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`), translated to jiff's strftime.
struct DateConverter<'a> {
    source: &'a str,
    target: &'a str,
    patterns: Vec<String>,
    format: String,
    source_zone: jiff::tz::TimeZone,
    target_zone: jiff::tz::TimeZone,
}

impl<'a> DateConverter<'a> {
    fn read(s: &'a Json) -> Result<DateConverter<'a>, String> {
        let required = |key: &str| text(s, key).ok_or(format!("dateTimeConverter needs {key}"));
        let patterns = list(s, "matchPatterns")
            .iter()
            .filter_map(Json::as_str)
            .map(|p| strftime(p, true))
            .collect::<Result<Vec<_>, _>>()?;
        if patterns.is_empty() {
            return Err("dateTimeConverter needs matchPatterns".into());
        }
        let zone = |key: &str| match text(s, key) {
            None | Some("UTC") => Ok(jiff::tz::TimeZone::UTC),
            Some(name) => {
                jiff::tz::TimeZone::get(name).map_err(|_| format!("Invalid {key}: {name}"))
            }
        };
        Ok(DateConverter {
            source: required("source")?,
            target: required("target")?,
            patterns,
            format: strftime(
                text(s, "targetFormat").unwrap_or("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"),
                false,
            )?,
            source_zone: zone("sourceTimezone")?,
            target_zone: zone("targetTimezone")?,
        })
    }

    /// The date in `text` rewritten, or `None` when no pattern reads it.
    fn convert(&self, text: &str) -> Option<String> {
        self.patterns.iter().find_map(|pattern| {
            let parsed = jiff::fmt::strtime::parse(pattern, text).ok()?;
            let instant = match parsed.to_timestamp() {
                Ok(t) => t,
                Err(_) => parsed
                    .to_datetime()
                    .ok()?
                    .to_zoned_datetime(self.source_zone.clone())
                    .ok()?
                    .timestamp(),
            };
            let zoned = instant.to_zoned_datetime(self.target_zone.clone());
            jiff::fmt::strtime::format(&self.format, &zoned).ok()
        })
    }
}

/// A Java date pattern as a strftime format (for parsing when `parse`, where fractions
/// take any number of digits).
fn strftime(pattern: &str, parse: bool) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let end = chars[i + 1..]
                .iter()
                .position(|&q| q == '\'')
                .ok_or(format!("Unterminated quote in date pattern {pattern}"))?;
            let quoted: String = chars[i + 1..i + 1 + end].iter().collect();
            out.push_str(&if quoted.is_empty() {
                "'".into()
            } else {
                quoted.replace('%', "%%")
            });
            i += end + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push_str(if c == '%' { "%%" } else { "" });
            if c != '%' {
                out.push(c);
            }
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&d| d == c).count();
        let fraction = if parse {
            "%f".to_string()
        } else {
            format!("%{n}f")
        };
        out.push_str(match (c, n) {
            ('y' | 'u', 2) => "%y",
            ('y' | 'u', _) => "%Y",
            ('M', 1) => "%-m",
            ('M', 2) => "%m",
            ('M', 3) => "%b",
            ('M', _) => "%B",
            ('d', 1) => "%-d",
            ('d', _) => "%d",
            ('H', 1) => "%-H",
            ('H', _) => "%H",
            ('h', 1) => "%-I",
            ('h', _) => "%I",
            ('m', 1) => "%-M",
            ('m', _) => "%M",
            ('s', 1) => "%-S",
            ('s', _) => "%S",
            ('S', 1..=9) => &fraction,
            ('a', _) => "%p",
            ('E', 4) => "%A",
            ('E', _) => "%a",
            ('Z' | 'x', 1 | 2) | ('X', 2) => "%z",
            ('X', 1) => "%z",
            ('X' | 'x', 3) | ('Z', 5) => "%:z",
            ('z', _) => "%Z",
            ('V', 2) => "%Q",
            _ => return Err(format!("Invalid date pattern {pattern}")),
        });
        i += n;
    }
    Ok(out)
}

/// Whether an entry replaces an existing field (`overwriteIfExists`, false by default).
fn overwrites(entry: &Json) -> bool {
    entry.get("overwriteIfExists").and_then(Json::as_bool) == Some(true)
}

/// `parseKeyValue`'s fields: pairs split by `fieldDelimiter` (`&`) and
/// `keyValueDelimiter` (`=`), keys prefixed with `keyPrefix`, a pair without a delimiter
/// taking `nonMatchValue` (or skipped).
fn key_values(s: &Json, input: &str) -> Map<String, Json> {
    let fields = text(s, "fieldDelimiter").unwrap_or("&");
    let pair = text(s, "keyValueDelimiter").unwrap_or("=");
    let prefix = text(s, "keyPrefix").unwrap_or_default();
    let mut out = Map::new();
    for part in input.split(fields).filter(|p| !p.is_empty()) {
        match part.split_once(pair) {
            Some((k, v)) => {
                out.insert(format!("{prefix}{k}"), Json::from(v));
            }
            None => {
                if let Some(v) = text(s, "nonMatchValue") {
                    out.insert(format!("{prefix}{part}"), Json::from(v));
                }
            }
        }
    }
    out
}

/// `csv`'s fields: the line split by `delimiter` (`,`) outside `quoteCharacter` (`"`),
/// named by `columns` (`column_1`, `column_2`... by default).
fn csv_fields(s: &Json, line: &str) -> Map<String, Json> {
    let delimiter = text(s, "delimiter").unwrap_or(",");
    let delimiter = if delimiter == "\\t" { "\t" } else { delimiter };
    let quote = text(s, "quoteCharacter")
        .and_then(|q| q.chars().next())
        .unwrap_or('"');
    let (mut values, mut current, mut quoted) = (Vec::new(), String::new(), false);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == quote {
            quoted = !quoted;
            rest = &rest[c.len_utf8()..];
        } else if !quoted && rest.starts_with(delimiter) {
            values.push(std::mem::take(&mut current));
            rest = &rest[delimiter.len()..];
        } else {
            current.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    values.push(current);
    let columns: Vec<&str> = list(s, "columns").iter().filter_map(Json::as_str).collect();
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let name = columns
                .get(i)
                .map_or_else(|| format!("column_{}", i + 1), |c| c.to_string());
            (name, Json::from(v))
        })
        .collect()
}

/// `typeConverter`'s conversion of a value to `boolean`, `integer`, `double` or `string`.
fn convert(value: &Json, kind: &str) -> Option<Json> {
    let text = match value {
        Json::String(s) => s.trim().to_string(),
        other => other.to_string(),
    };
    Some(match kind {
        "string" => Json::from(text),
        "integer" => Json::from(text.parse::<i64>().ok()?),
        "double" => serde_json::Number::from_f64(text.parse::<f64>().ok()?).map(Json::Number)?,
        "boolean" => Json::from(match text.to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => return None,
        }),
        _ => return None,
    })
}

/// `listToMap`: a list of objects at `source` as a map keyed by each object's `key`
/// (the whole object, or its `valueKey`), at `target` or the root; `flatten` keeps the
/// `flattenedElement` (`first` or `last`) of a key's values.
fn list_to_map(s: &Json, event: &mut Json) -> Option<()> {
    let items = get(event, text(s, "source")?)?.as_array()?.clone();
    let key = text(s, "key")?;
    let flatten = s.get("flatten").and_then(Json::as_bool) == Some(true);
    let mut map: Map<String, Json> = Map::new();
    for item in &items {
        let Some(k) = item.get(key).and_then(Json::as_str) else {
            continue;
        };
        let mut value = item.clone();
        match text(s, "valueKey") {
            Some(vk) => value = item.get(vk)?.clone(),
            None => {
                value.as_object_mut()?.remove(key);
            }
        }
        match (flatten, map.get_mut(k)) {
            (true, Some(_)) if text(s, "flattenedElement") != Some("last") => {}
            (true, _) => {
                map.insert(k.to_string(), value);
            }
            (false, Some(Json::Array(values))) => values.push(value),
            (false, _) => {
                map.insert(k.to_string(), Json::Array(vec![value]));
            }
        }
    }
    match text(s, "target") {
        Some(target) => set(event, target, Json::Object(map), true),
        None => {
            for (k, v) in map {
                set(event, &k, v, true);
            }
        }
    }
    Some(())
}

/// TestTransformer: each sample message with its transformed version.
pub(super) fn test_transformer(input: &Value) -> AwsResult<Value> {
    let transformer = Transformer::parse(input.get("transformerConfig").unwrap_or(&Value::Null))?;
    let messages = input
        .get("logEventMessages")
        .and_then(Value::as_list)
        .unwrap_or_default();
    if messages.is_empty() || messages.len() > 50 {
        return Err(invalid(
            "logEventMessages must hold between 1 and 50 messages",
        ));
    }
    let logs = messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let message = message.as_str().unwrap_or_default();
            Value::map()
                .with("eventNumber", Value::Integer(i as i64 + 1))
                .with("eventMessage", message)
                .with_opt(
                    "transformedEventMessage",
                    transformer.apply(message, None).map(|t| t.to_string()),
                )
        })
        .collect();
    Ok(Value::map().with("transformedLogs", Value::List(logs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transformer(config: Json) -> Transformer {
        Transformer::parse(&Value::from_json(&config)).unwrap()
    }

    #[test]
    fn processors_run_in_order_over_the_parsed_message() {
        let t = transformer(json!([
            {"parseJSON": {}},
            {"addKeys": {"entries": [{"key": "env", "value": "prod"}]}},
            {"renameKeys": {"entries": [{"key": "lvl", "renameTo": "level"}]}},
            {"upperCaseString": {"withKeys": ["level"]}},
            {"copyValue": {"entries": [{"source": "user.id", "target": "uid"}]}},
            {"typeConverter": {"entries": [{"key": "uid", "type": "integer"}]}},
            {"deleteKeys": {"withKeys": ["user"]}}
        ]));
        let out = t
            .apply(r#"{"lvl":"warn","user":{"id":"42"}}"#, None)
            .unwrap();
        assert_eq!(out, json!({"env": "prod", "level": "WARN", "uid": 42}));
        assert!(t.apply("not json", None).is_none());
    }

    #[test]
    fn key_value_and_csv_parsers() {
        let kv = transformer(
            json!([{"parseKeyValue": {"fieldDelimiter": " ", "keyValueDelimiter": ":"}}]),
        );
        assert_eq!(
            kv.apply("a:1 b:2", None).unwrap(),
            json!({"a": "1", "b": "2"})
        );
        let csv = transformer(json!([{"csv": {"columns": ["x", "y"]}}]));
        assert_eq!(
            csv.apply(r#"1,"a,b",3"#, None).unwrap(),
            json!({"x": "1", "y": "a,b", "column_3": "3"})
        );
    }

    #[test]
    fn grok_dates_and_vended_parsers_run_as_documented() {
        let grok = transformer(json!([
            {"grok": {"match": "%{IP:client.ip} %{WORD:method} %{GREEDYDATA:rest}"}},
            {"csv": {"source": "rest", "delimiter": ";", "columns": ["a", "b"]}},
            {"dateTimeConverter": {"source": "a", "target": "when", "matchPatterns": ["dd/MM/yyyy HH:mm"], "sourceTimezone": "Europe/Paris"}}
        ]));
        let out = grok.apply("10.0.0.1 GET 02/01/2024 09:30;x", None).unwrap();
        assert_eq!(out["client"]["ip"], json!("10.0.0.1"));
        assert_eq!(out["method"], json!("GET"));
        assert_eq!(out["when"], json!("2024-01-02T08:30:00.000Z"));
        assert!(grok.apply("no match here", None).is_none());
        let vpc = transformer(
            json!([{"parseVPC": {}}, {"copyValue": {"entries": [{"source": "@logGroupName", "target": "group"}]}}]),
        );
        let metadata = Metadata {
            group: "g",
            stream: "s",
            account: "123456789012",
            region: "us-east-1",
        };
        let out = vpc
            .apply(
                "2 123456789010 eni-abc123de 192.0.2.0 192.0.2.24 20641 22 6 20 4249 1418530010 1418530070 ACCEPT OK",
                Some(&metadata),
            )
            .unwrap();
        assert_eq!(out["dstport"], json!(22));
        assert_eq!(out["group"], json!("g"));
    }

    #[test]
    fn configurations_start_with_a_parser() {
        for bad in [
            json!([]),
            json!([{"addKeys": {"entries": []}}]),
            json!([{"parseJSON": {}, "csv": {}}]),
            json!([{"parseJSON": {}}, {"parseVPC": {}}]),
            json!([{"grok": {"match": "%{WORD:w}"}}, {"grok": {"match": "%{WORD:w}"}}]),
            json!([{"grok": {"match": "%{NOPE:w}"}}]),
            json!([{"parseVPC": {"source": "other"}}]),
            json!([{"parseToOCSF": {}}]),
            json!([{"parseJSON": {}}, {"dateTimeConverter": {"source": "a", "target": "b"}}]),
            json!([{"parseJSON": {}}, {"dateTimeConverter": {"source": "a", "target": "b", "matchPatterns": ["qq"]}}]),
            json!([{"parseJSON": {}}, {"addKeys": {"entries": []}}, {"addKeys": {"entries": []}}]),
            json!(std::iter::repeat_n(json!({"csv": {}}), 6).collect::<Vec<_>>()),
        ] {
            assert!(
                Transformer::parse(&Value::from_json(&bad)).is_err(),
                "{bad}"
            );
        }
    }
}
