//! The content-filtering language SNS filter policies and EventBridge event patterns share.
//!
//! Both match a JSON document (an event, a message body, or a message's attributes laid out
//! as an object) against a pattern: an object whose keys name fields and whose leaves are
//! arrays of alternatives. Every field must match (AND); any alternative of a field may
//! (OR); `$or` joins whole sub-patterns. A field's values are all the leaves its path
//! reaches, descending through arrays, so `{"a": {"b": [1]}}` matches `{"a": [{"b": 1}]}`.
//!
//! The alternatives: exact values (strings, numbers compared as numbers, `true`, `false`,
//! `null`), `prefix`, `suffix` (both optionally `{"equals-ignore-case": ...}`),
//! `equals-ignore-case`, `anything-but` (a value, a list, or a `prefix`/`suffix`/
//! `equals-ignore-case`/`wildcard` form), `numeric` ranges, `exists`, `cidr` and
//! `wildcard`. [`Dialect`] selects what each service accepts and its limits; errors carry
//! AWS's reason text and each service wraps it in its own message.

use std::net::IpAddr;

use serde_json::{Map, Value as Json};

#[cfg(test)]
mod tests;

/// Which service's rules a pattern follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// An SNS filter policy over message attributes: flat keys only.
    SnsAttributes,
    /// An SNS filter policy over the message body: nesting allowed.
    SnsBody,
    /// An EventBridge event pattern.
    EventBridge,
}

impl Dialect {
    fn is_sns(self) -> bool {
        matches!(self, Dialect::SnsAttributes | Dialect::SnsBody)
    }
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// AWS's reason (`Unrecognized match type foo`).
    pub reason: String,
    /// Whether AWS reports it as a parse error of the JSON with a source position (the
    /// numeric-range errors), rather than as a policy-level error.
    pub syntax: bool,
}

impl PatternError {
    fn policy(reason: impl Into<String>) -> PatternError {
        PatternError {
            reason: reason.into(),
            syntax: false,
        }
    }

    fn syntax(reason: impl Into<String>) -> PatternError {
        PatternError {
            reason: reason.into(),
            syntax: true,
        }
    }
}

type Parsed<T> = Result<T, PatternError>;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
enum Rule {
    /// The leaves at `path` must match one of the matchers.
    Field {
        path: Vec<String>,
        matchers: Vec<Matcher>,
    },
    /// One of the sub-patterns must match.
    Or(Vec<Pattern>),
}

#[derive(Debug, Clone)]
enum Matcher {
    Exact(Json),
    Prefix { text: String, ignore_case: bool },
    Suffix { text: String, ignore_case: bool },
    EqualsIgnoreCase(String),
    AnythingBut(Box<Matcher>),
    AnyOf(Vec<Matcher>),
    Numeric(Vec<(Comparison, f64)>),
    Exists(bool),
    Cidr { network: IpAddr, bits: u8 },
    Wildcard(String),
}

#[derive(Debug, Clone, Copy)]
enum Comparison {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

/// The most top-level keys an SNS filter policy may have.
const SNS_MAX_KEYS: usize = 5;

/// The most value combinations an SNS filter policy may have.
const SNS_MAX_COMBINATIONS: usize = 150;

impl Pattern {
    /// Parses and validates a pattern's JSON text.
    pub fn parse(text: &str, dialect: Dialect) -> Parsed<Pattern> {
        let json: Json = serde_json::from_str(text)
            .map_err(|e| PatternError::syntax(format!("Unexpected character in JSON: {e}")))?;
        Pattern::from_json(&json, dialect)
    }

    /// Validates a pattern already parsed as JSON.
    pub fn from_json(json: &Json, dialect: Dialect) -> Parsed<Pattern> {
        let Json::Object(object) = json else {
            return Err(PatternError::policy("Filter policy must be a JSON object"));
        };
        if dialect.is_sns() && object.keys().filter(|k| *k != "$or").count() > SNS_MAX_KEYS {
            return Err(PatternError::policy(format!(
                "Filter policy can not have more than {SNS_MAX_KEYS} keys"
            )));
        }
        let pattern = compile(object, &[], dialect)?;
        if dialect.is_sns() && pattern.combinations() > SNS_MAX_COMBINATIONS {
            return Err(PatternError::policy("Filter policy is too complex"));
        }
        Ok(pattern)
    }

    /// Whether a document matches.
    pub fn matches(&self, document: &Json) -> bool {
        self.rules.iter().all(|rule| match rule {
            Rule::Field { path, matchers } => {
                let mut leaves = Vec::new();
                collect_leaves(document, path, &mut leaves);
                matchers.iter().any(|m| m.matches_field(&leaves))
            }
            Rule::Or(alternatives) => alternatives.iter().any(|p| p.matches(document)),
        })
    }

    /// How many value combinations the pattern spans (SNS's complexity measure).
    fn combinations(&self) -> usize {
        self.rules
            .iter()
            .map(|rule| match rule {
                Rule::Field { matchers, .. } => matchers.len().max(1),
                Rule::Or(alternatives) => alternatives.iter().map(Pattern::combinations).sum(),
            })
            .fold(1usize, usize::saturating_mul)
    }
}

fn compile(object: &Map<String, Json>, prefix: &[String], dialect: Dialect) -> Parsed<Pattern> {
    let mut rules = Vec::new();
    for (key, value) in object {
        let mut path = prefix.to_vec();
        if key == "$or" {
            let Json::Array(alternatives) = value else {
                return Err(PatternError::policy(
                    "Or relationship must be an array of objects",
                ));
            };
            if alternatives.len() < 2 {
                return Err(PatternError::policy(
                    "Or relationship must have at least two elements",
                ));
            }
            let compiled = alternatives
                .iter()
                .map(|a| match a {
                    Json::Object(o) => compile(o, prefix, dialect),
                    _ => Err(PatternError::policy(
                        "Or relationship must be an array of objects",
                    )),
                })
                .collect::<Parsed<Vec<_>>>()?;
            rules.push(Rule::Or(compiled));
            continue;
        }
        path.push(key.clone());
        match value {
            Json::Object(nested) => {
                if dialect == Dialect::SnsAttributes {
                    return Err(PatternError::policy(
                        "Filter policy scope MessageAttributes does not support nested filter policy",
                    ));
                }
                rules.extend(compile(nested, &path, dialect)?.rules);
            }
            Json::Array(alternatives) => {
                if alternatives.is_empty() {
                    return Err(PatternError::policy(format!(
                        "Empty arrays are not allowed for \"{key}\""
                    )));
                }
                let matchers = alternatives
                    .iter()
                    .map(|a| matcher(a, dialect))
                    .collect::<Parsed<Vec<_>>>()?;
                rules.push(Rule::Field { path, matchers });
            }
            _ => {
                return Err(PatternError::policy(format!(
                    "\"{key}\" must be an object or an array"
                )))
            }
        }
    }
    Ok(Pattern { rules })
}

fn scalar(value: &Json) -> Parsed<Matcher> {
    match value {
        Json::String(_) | Json::Number(_) | Json::Bool(_) | Json::Null => {
            Ok(Matcher::Exact(value.clone()))
        }
        _ => Err(PatternError::policy(
            "Match value must be String, number, true, false, or null",
        )),
    }
}

fn string_of(operator: &str, value: &Json) -> Parsed<String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PatternError::policy(format!("{operator} match pattern must be a string")))
}

/// `prefix`/`suffix`: a string, or `{"equals-ignore-case": string}`.
fn affix(operator: &str, value: &Json) -> Parsed<(String, bool)> {
    match value {
        Json::Object(o) if o.len() == 1 && o.contains_key("equals-ignore-case") => {
            Ok((string_of(operator, &o["equals-ignore-case"])?, true))
        }
        _ => Ok((string_of(operator, value)?, false)),
    }
}

fn matcher(value: &Json, dialect: Dialect) -> Parsed<Matcher> {
    let Json::Object(object) = value else {
        return scalar(value);
    };
    if object.len() != 1 {
        return Err(PatternError::policy(
            "Only one key allowed in match expression",
        ));
    }
    let Some((operator, operand)) = object.iter().next() else {
        return Err(PatternError::policy(
            "Only one key allowed in match expression",
        ));
    };
    match operator.as_str() {
        "prefix" => {
            let (text, ignore_case) = affix(operator, operand)?;
            Ok(Matcher::Prefix { text, ignore_case })
        }
        "suffix" => {
            let (text, ignore_case) = affix(operator, operand)?;
            Ok(Matcher::Suffix { text, ignore_case })
        }
        "equals-ignore-case" => Ok(Matcher::EqualsIgnoreCase(string_of(operator, operand)?)),
        "anything-but" => anything_but(operand, dialect),
        "exists" => match operand {
            Json::Bool(b) => Ok(Matcher::Exists(*b)),
            _ => Err(PatternError::policy(
                "exists match pattern must be either true or false.",
            )),
        },
        "numeric" => numeric(operand),
        "cidr" => cidr(operand),
        "wildcard" if dialect == Dialect::EventBridge => {
            Ok(Matcher::Wildcard(string_of(operator, operand)?))
        }
        other => Err(PatternError::policy(format!(
            "Unrecognized match type {other}"
        ))),
    }
}

fn anything_but(operand: &Json, dialect: Dialect) -> Parsed<Matcher> {
    let inner = match operand {
        Json::Array(values) if values.is_empty() => {
            return Err(PatternError::policy(
                "Empty arrays are not allowed in anything-but",
            ))
        }
        Json::Array(values) => Matcher::AnyOf(
            values
                .iter()
                .map(|v| match v {
                    Json::String(_) | Json::Number(_) => scalar(v),
                    _ => Err(PatternError::policy(
                        "Inside anything but list, start|null|boolean is not supported.",
                    )),
                })
                .collect::<Parsed<_>>()?,
        ),
        Json::Object(o) => {
            let Some((op, value)) = o.iter().next().filter(|_| o.len() == 1) else {
                return Err(PatternError::policy(
                    "Only one key allowed in match expression",
                ));
            };
            match op.as_str() {
                "prefix" => Matcher::Prefix {
                    text: string_of(op, value)?,
                    ignore_case: false,
                },
                "suffix" => Matcher::Suffix {
                    text: string_of(op, value)?,
                    ignore_case: false,
                },
                "equals-ignore-case" => match value {
                    Json::Array(items) => Matcher::AnyOf(
                        items
                            .iter()
                            .map(|i| string_of(op, i).map(Matcher::EqualsIgnoreCase))
                            .collect::<Parsed<_>>()?,
                    ),
                    _ => Matcher::EqualsIgnoreCase(string_of(op, value)?),
                },
                "wildcard" if dialect == Dialect::EventBridge => match value {
                    Json::Array(items) => Matcher::AnyOf(
                        items
                            .iter()
                            .map(|i| string_of(op, i).map(Matcher::Wildcard))
                            .collect::<Parsed<_>>()?,
                    ),
                    _ => Matcher::Wildcard(string_of(op, value)?),
                },
                other => {
                    return Err(PatternError::policy(format!(
                        "Unsupported anything-but pattern: {other}"
                    )))
                }
            }
        }
        Json::String(_) | Json::Number(_) => scalar(operand)?,
        _ => {
            return Err(PatternError::policy(
                "Value of anything-but must be an array or single string/number value.",
            ))
        }
    };
    Ok(Matcher::AnythingBut(Box::new(inner)))
}

fn comparison(token: &Json) -> Option<Comparison> {
    Some(match token.as_str()? {
        "<" => Comparison::Lt,
        "<=" => Comparison::Le,
        "=" => Comparison::Eq,
        ">=" => Comparison::Ge,
        ">" => Comparison::Gt,
        _ => return None,
    })
}

fn numeric(operand: &Json) -> Parsed<Matcher> {
    let Json::Array(items) = operand else {
        return Err(PatternError::syntax("Value of numeric must be an array."));
    };
    let token_text = |t: &Json| t.as_str().map_or_else(|| t.to_string(), str::to_string);
    let number = |op: &Json, value: Option<&Json>| -> Parsed<f64> {
        value.and_then(Json::as_f64).ok_or_else(|| {
            PatternError::syntax(format!("Value of {} must be numeric", token_text(op)))
        })
    };
    let Some(first) = items.first() else {
        return Err(PatternError::syntax("Invalid member in numeric match: ]"));
    };
    if !first.is_string() {
        return Err(PatternError::syntax(format!(
            "Invalid member in numeric match: {}",
            token_text(first)
        )));
    }
    let op = comparison(first).ok_or_else(|| {
        PatternError::syntax(format!(
            "Unrecognized numeric range operator: {}",
            token_text(first)
        ))
    })?;
    let bottom = number(first, items.get(1))?;
    let mut conditions = vec![(op, bottom)];
    if items.len() > 2 {
        if !matches!(op, Comparison::Gt | Comparison::Ge) {
            return Err(PatternError::syntax(
                "Too many elements in numeric expression",
            ));
        }
        let second = &items[2];
        let top_op = match comparison(second) {
            Some(c @ (Comparison::Lt | Comparison::Le)) => c,
            _ => {
                return Err(PatternError::syntax(format!(
                    "Bad numeric range operator: {}",
                    token_text(second)
                )))
            }
        };
        let top = number(second, items.get(3))?;
        if items.len() > 4 {
            return Err(PatternError::syntax(
                "Too many elements in numeric expression",
            ));
        }
        if top <= bottom {
            return Err(PatternError::syntax("Bottom must be less than top"));
        }
        conditions.push((top_op, top));
    }
    Ok(Matcher::Numeric(conditions))
}

fn cidr(operand: &Json) -> Parsed<Matcher> {
    let text = operand
        .as_str()
        .ok_or_else(|| PatternError::policy("prefix match pattern must be a string"))?;
    let malformed = || PatternError::policy(format!("Malformed CIDR, one '/' required: {text}"));
    let (address, bits) = text.split_once('/').ok_or_else(malformed)?;
    let network: IpAddr = address
        .parse()
        .map_err(|_| PatternError::policy(format!("Nonstandard IP address: {address}")))?;
    let max = if network.is_ipv4() { 32 } else { 128 };
    let bits: u8 = bits
        .parse()
        .ok()
        .filter(|b| *b <= max)
        .ok_or_else(|| PatternError::policy(format!("Invalid CIDR bits: {bits}")))?;
    Ok(Matcher::Cidr { network, bits })
}

/// Every leaf the path reaches: arrays are descended at each step and flattened at the end;
/// objects are not leaves.
fn collect_leaves<'a>(value: &'a Json, path: &[String], out: &mut Vec<&'a Json>) {
    match (value, path.split_first()) {
        (Json::Array(items), _) => {
            for item in items {
                collect_leaves(item, path, out);
            }
        }
        (Json::Object(object), Some((key, rest))) => {
            if let Some(next) = object.get(key) {
                collect_leaves(next, rest, out);
            }
        }
        (Json::Object(_), None) | (_, Some(_)) => {}
        (leaf, None) => out.push(leaf),
    }
}

fn numbers_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn to_lower(s: &str) -> String {
    s.to_lowercase()
}

impl Matcher {
    /// Whether a field whose leaves are `leaves` (none when absent) matches.
    fn matches_field(&self, leaves: &[&Json]) -> bool {
        match self {
            Matcher::Exists(wanted) => leaves.is_empty() != *wanted,
            _ => leaves.iter().any(|leaf| self.matches_value(leaf)),
        }
    }

    fn matches_value(&self, value: &Json) -> bool {
        match self {
            Matcher::Exact(expected) => numbers_equal(expected, value),
            Matcher::Prefix { text, ignore_case } => value.as_str().is_some_and(|s| {
                if *ignore_case {
                    to_lower(s).starts_with(&to_lower(text))
                } else {
                    s.starts_with(text.as_str())
                }
            }),
            Matcher::Suffix { text, ignore_case } => value.as_str().is_some_and(|s| {
                if *ignore_case {
                    to_lower(s).ends_with(&to_lower(text))
                } else {
                    s.ends_with(text.as_str())
                }
            }),
            Matcher::EqualsIgnoreCase(text) => value
                .as_str()
                .is_some_and(|s| to_lower(s) == to_lower(text)),
            Matcher::AnythingBut(inner) => match inner.as_ref() {
                Matcher::AnyOf(_) | Matcher::Exact(_) => !inner.matches_value(value),
                _ => value.is_string() && !inner.matches_value(value),
            },
            Matcher::AnyOf(options) => options.iter().any(|o| o.matches_value(value)),
            Matcher::Numeric(conditions) => value.as_f64().is_some_and(|n| {
                conditions.iter().all(|(op, bound)| match op {
                    Comparison::Lt => n < *bound,
                    Comparison::Le => n <= *bound,
                    Comparison::Eq => n == *bound,
                    Comparison::Ge => n >= *bound,
                    Comparison::Gt => n > *bound,
                })
            }),
            Matcher::Exists(_) => true,
            Matcher::Cidr { network, bits } => value
                .as_str()
                .and_then(|s| s.parse::<IpAddr>().ok())
                .is_some_and(|ip| in_network(ip, *network, *bits)),
            Matcher::Wildcard(pattern) => value.as_str().is_some_and(|s| wildcard(pattern, s)),
        }
    }
}

fn in_network(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    let mask = |width: u32| -> u128 {
        match u32::from(bits) {
            0 => 0,
            b => u128::MAX << (width - b.min(width)),
        }
    };
    match (ip, network) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let m = mask(32) as u32;
            u32::from(a) & m == u32::from(n) & m
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let m = mask(128);
            u128::from(a) & m == u128::from(n) & m
        }
        _ => false,
    }
}

/// Glob matching: `*` stands for any run of characters, `\*` for a star, `\\` for a
/// backslash.
fn wildcard(pattern: &str, text: &str) -> bool {
    enum Token {
        Char(char),
        Star,
    }
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => tokens.push(Token::Char(chars.next().unwrap_or('\\'))),
            '*' => tokens.push(Token::Star),
            c => tokens.push(Token::Char(c)),
        }
    }
    let text: Vec<char> = text.chars().collect();
    // Classic two-pointer glob with backtracking to the last star.
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            Some(Token::Star) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(|t| matches!(t, Token::Star))
}
