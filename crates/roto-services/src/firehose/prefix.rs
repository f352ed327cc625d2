//! Object keys as Firehose names them: `<evaluated prefix><stream>-<version>-<yyyy-MM-dd-HH-
//! mm-ss>-<uuid><extension>`, and custom prefixes with their `!{namespace:value}`
//! expressions.
//!
//! Namespaces: `timestamp` (a Java `DateTimeFormatter` pattern: the letters `y M d H h m s S
//! a`, `'quoted'` text, other characters as they are), `firehose` (`error-output-type`,
//! `random-string`), `partitionKeyFromQuery` and `partitionKeyFromLambda` (dynamic
//! partitioning's keys). Every timestamp is the approximate arrival time of the oldest
//! record the object holds, in UTC. A prefix without expressions is followed by the default
//! `yyyy/MM/dd/HH/`, as AWS does; the default error prefix is `<error-output-type>/yyyy/MM/
//! dd/HH/`. Templates are read in one pass over their characters (no recursion).

use std::collections::BTreeMap;

use roto_core::timestamp::{format, TimestampFormat};
use roto_core::value::EpochMillis;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Timestamp(Vec<Field>),
    ErrorOutputType,
    RandomString,
    PartitionKey(String),
}

/// One element of a timestamp pattern.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Text(String),
    /// A pattern letter and how many times it is repeated.
    Letter(char, usize),
}

/// A parsed prefix.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// What expressions evaluate to for one object.
pub struct Facts<'a> {
    /// The approximate arrival time of the object's oldest record.
    pub time: EpochMillis,
    /// `!{firehose:error-output-type}`, for error prefixes.
    pub error_output_type: Option<&'a str>,
    /// The partition keys of the object's records.
    pub partition_keys: &'a BTreeMap<String, String>,
}

/// Whether a prefix holds any `!{...}` expression.
pub fn has_expressions(prefix: &str) -> bool {
    prefix.contains("!{")
}

impl Template {
    /// Parses a prefix, else says what is wrong with it.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("!{") {
            if at > 0 {
                pieces.push(Piece::Text(rest[..at].to_string()));
            }
            let body_start = at + 2;
            let end = rest[body_start..]
                .find('}')
                .ok_or_else(|| format!("The expression in {text} is not closed with }}."))?;
            let body = &rest[body_start..body_start + end];
            pieces.push(expression(body)?);
            rest = &rest[body_start + end + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Template { pieces })
    }

    /// Whether the template uses the partition key `name`'s namespace.
    pub fn partition_keys(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::PartitionKey(k) => Some(k.as_str()),
            _ => None,
        })
    }

    /// The template evaluated for one object.
    pub fn evaluate(&self, facts: &Facts<'_>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Timestamp(fields) => out.push_str(&timestamp(fields, facts.time)),
                Piece::ErrorOutputType => out.push_str(facts.error_output_type.unwrap_or("")),
                Piece::RandomString => out.push_str(&random_string(11)),
                Piece::PartitionKey(k) => out.push_str(
                    facts
                        .partition_keys
                        .get(k)
                        .map(String::as_str)
                        .unwrap_or(""),
                ),
            }
        }
        out
    }
}

fn expression(body: &str) -> Result<Piece, String> {
    let (namespace, value) = body
        .split_once(':')
        .ok_or_else(|| format!("The expression !{{{body}}} has no namespace."))?;
    match (namespace, value) {
        ("timestamp", pattern) => pattern_fields(pattern).map(Piece::Timestamp),
        ("firehose", "error-output-type") => Ok(Piece::ErrorOutputType),
        ("firehose", "random-string") => Ok(Piece::RandomString),
        ("partitionKeyFromQuery" | "partitionKeyFromLambda", key) if !key.is_empty() => {
            Ok(Piece::PartitionKey(key.to_string()))
        }
        _ => Err(format!(
            "The expression !{{{body}}} is not valid: the namespace {namespace} does not accept {value}."
        )),
    }
}

/// A Java `DateTimeFormatter` pattern's fields.
fn pattern_fields(pattern: &str) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            let mut text = String::new();
            loop {
                match chars.next() {
                    Some('\'') if chars.peek() == Some(&'\'') => {
                        chars.next();
                        text.push('\'');
                    }
                    Some('\'') => break,
                    Some(other) => text.push(other),
                    None => {
                        return Err(format!(
                            "The timestamp pattern {pattern} has an unclosed quote."
                        ))
                    }
                }
            }
            if text.is_empty() {
                text.push('\'');
            }
            fields.push(Field::Text(text));
        } else if c.is_ascii_alphabetic() {
            if !"yuMdHhmsSa".contains(c) {
                return Err(format!(
                    "The timestamp pattern {pattern} uses the unsupported letter {c}."
                ));
            }
            let mut count = 1;
            while chars.peek() == Some(&c) {
                chars.next();
                count += 1;
            }
            fields.push(Field::Letter(c, count));
        } else {
            fields.push(Field::Text(c.to_string()));
        }
    }
    Ok(fields)
}

/// The parts of a UTC time: year, month, day, hour, minute, second, millisecond.
fn parts(time: EpochMillis) -> [i64; 7] {
    let iso = format(time, TimestampFormat::Iso8601);
    let n = |from: usize, to: usize| iso.get(from..to).and_then(|s| s.parse().ok()).unwrap_or(0);
    [
        n(0, 4),
        n(5, 7),
        n(8, 10),
        n(11, 13),
        n(14, 16),
        n(17, 19),
        n(20, 23),
    ]
}

fn timestamp(fields: &[Field], time: EpochMillis) -> String {
    let [year, month, day, hour, minute, second, milli] = parts(time);
    let mut out = String::new();
    for field in fields {
        match field {
            Field::Text(t) => out.push_str(t),
            Field::Letter('y' | 'u', 2) => out.push_str(&format!("{:02}", year % 100)),
            Field::Letter('y' | 'u', n) => out.push_str(&format!("{year:0n$}")),
            Field::Letter('M', n) => out.push_str(&format!("{month:0n$}")),
            Field::Letter('d', n) => out.push_str(&format!("{day:0n$}")),
            Field::Letter('H', n) => out.push_str(&format!("{hour:0n$}")),
            Field::Letter('h', n) => out.push_str(&format!("{:0n$}", (hour + 11) % 12 + 1)),
            Field::Letter('m', n) => out.push_str(&format!("{minute:0n$}")),
            Field::Letter('s', n) => out.push_str(&format!("{second:0n$}")),
            Field::Letter('S', n) => {
                let digits = format!("{milli:03}000000000");
                out.push_str(&digits[..(*n).min(9)]);
            }
            Field::Letter('a', _) => out.push_str(if hour < 12 { "AM" } else { "PM" }),
            Field::Letter(_, _) => {}
        }
    }
    out
}

/// `n` random lower-case letters and digits.
pub fn random_string(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
}

/// `yyyy/MM/dd/HH/`, the default time prefix.
fn hour_path(time: EpochMillis) -> String {
    let [y, m, d, h, ..] = parts(time);
    format!("{y:04}/{m:02}/{d:02}/{h:02}/")
}

/// The evaluated prefix of an object: `prefix` (a parsed template), or the default.
pub fn evaluated(prefix: &str, facts: &Facts<'_>) -> String {
    match Template::parse(prefix) {
        _ if prefix.is_empty() => match facts.error_output_type {
            Some(kind) => format!("{kind}/{}", hour_path(facts.time)),
            None => hour_path(facts.time),
        },
        Ok(template) if has_expressions(prefix) => template.evaluate(facts),
        _ => format!("{prefix}{}", hour_path(facts.time)),
    }
}

/// The file name Firehose gives an object: `<stream>-<version>-<yyyy-MM-dd-HH-mm-ss>-<uuid>`.
pub fn file_name(stream: &str, version: i64, time: EpochMillis) -> String {
    let [y, mo, d, h, mi, s, _] = parts(time);
    format!(
        "{stream}-{version}-{y:04}-{mo:02}-{d:02}-{h:02}-{mi:02}-{s:02}-{}",
        crate::ids::uuid()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: EpochMillis = 1_796_230_800_123; // 2026-12-02T17:00:00.123Z

    fn facts(keys: &BTreeMap<String, String>) -> Facts<'_> {
        Facts {
            time: T,
            error_output_type: Some("processing-failed"),
            partition_keys: keys,
        }
    }

    #[test]
    fn default_and_literal_prefixes_get_the_hour_path() {
        let keys = BTreeMap::new();
        let f = Facts {
            error_output_type: None,
            ..facts(&keys)
        };
        assert_eq!(evaluated("", &f), "2026/12/02/17/");
        assert_eq!(evaluated("logs/", &f), "logs/2026/12/02/17/");
        assert_eq!(
            evaluated("", &facts(&keys)),
            "processing-failed/2026/12/02/17/"
        );
    }

    #[test]
    fn expressions_are_evaluated() {
        let keys = BTreeMap::from([("customer".to_string(), "42".to_string())]);
        let t = Template::parse(
            "dt=!{timestamp:yyyy'-'MM'-'dd}/h=!{timestamp:HH}/c=!{partitionKeyFromQuery:customer}/!{firehose:error-output-type}/",
        )
        .unwrap();
        assert_eq!(
            t.evaluate(&facts(&keys)),
            "dt=2026-12-02/h=17/c=42/processing-failed/"
        );
        let r = Template::parse("!{firehose:random-string}").unwrap();
        assert_eq!(r.evaluate(&facts(&keys)).len(), 11);
    }

    #[test]
    fn bad_expressions_are_refused() {
        assert!(Template::parse("!{timestamp:yyyy").is_err());
        assert!(Template::parse("!{nope:x}").is_err());
        assert!(Template::parse("!{firehose:other}").is_err());
        assert!(Template::parse("!{timestamp:'open}").is_err());
        assert!(Template::parse("!{timestamp:QQ}").is_err());
    }

    #[test]
    fn file_names_follow_aws() {
        let name = file_name("s", 3, T);
        assert!(name.starts_with("s-3-2026-12-02-17-00-00-"), "{name}");
        assert_eq!(name.len(), "s-3-2026-12-02-17-00-00-".len() + 36);
    }
}
