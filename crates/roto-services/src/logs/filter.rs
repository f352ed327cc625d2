//! The filter-pattern language of FilterLogEvents, subscription filters and metric filters.
//!
//! Three forms, as CloudWatch Logs has them (both case-sensitive):
//! - terms: `ERROR timeout` (every term), `"quoted phrase"`, `?ERROR ?WARN` (any of the
//!   `?` terms), `-DEBUG` (none of the `-` terms); an empty pattern matches every event.
//! - space-delimited: `[ip, user, ..., status = 404, bytes > 1000]`, fields split on
//!   spaces (`"quoted"` and `[bracketed]` text one field each), `...` for any number.
//! - JSON: `{ $.level = "error" }` over messages that are JSON objects: selectors `$.a.b[0]`,
//!   `=` and `!=` on strings (with `*` wildcards) and numbers, `<`, `<=`, `>`, `>=` on
//!   numbers, `IS NULL`, `IS TRUE`, `IS FALSE`, `NOT EXISTS`, joined by `&&` and `||`
//!   with parentheses.
//!
//! [`Pattern::extract`] also gives the values a match extracts, as TestMetricFilter reports
//! them: each field of a space-delimited match as `$name` (or `$N`, its 1-based position,
//! where the pattern names none), each selector of a JSON pattern as `$.a.b`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

/// A parsed filter pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// A space-delimited pattern: one entry per field, `None` for `...`.
    Fields(Vec<Option<Field>>),
    /// Term matching.
    Terms {
        /// Terms that must all appear.
        all: Vec<String>,
        /// Terms of which one must appear (when there are any).
        any: Vec<String>,
        /// Terms that must not appear.
        none: Vec<String>,
    },
    /// A JSON pattern.
    Json(Expr),
}

/// One field of a space-delimited pattern, with its name and condition if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's name (`None` for an empty entry, as in `[a, b,]`).
    pub name: Option<String>,
    /// The condition on the field's text.
    pub condition: Option<(Op, Literal)>,
}

/// A JSON pattern's expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Both sides hold.
    And(Box<Expr>, Box<Expr>),
    /// Either side holds.
    Or(Box<Expr>, Box<Expr>),
    /// A selected value compared with a literal.
    Compare(Vec<Step>, Op, Literal),
    /// A selected value's state.
    Test(Vec<Step>, Test),
}

/// One step of a selector.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `.name`
    Field(String),
    /// `[n]`
    Index(usize),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// A literal on the right of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A number.
    Number(f64),
    /// A string, where `*` matches any run of characters.
    Text(String),
}

/// A state test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    /// `IS NULL`
    Null,
    /// `IS TRUE`
    True,
    /// `IS FALSE`
    False,
    /// `NOT EXISTS`
    Missing,
}

impl Pattern {
    /// Parses a pattern, or says why it is invalid.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        if let Some(inner) = text.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| "Invalid filter pattern: missing closing ']'".to_string())?;
            if inner.trim().is_empty() {
                return Ok(Pattern::Fields(vec![None]));
            }
            return inner
                .split(',')
                .map(parse_field)
                .collect::<Result<_, _>>()
                .map(Pattern::Fields);
        }
        if let Some(inner) = text.strip_prefix('{') {
            let inner = inner
                .strip_suffix('}')
                .ok_or_else(|| "Invalid filter pattern: missing closing '}'".to_string())?;
            let tokens = tokenize(inner)?;
            let mut parser = Parser {
                tokens,
                at: 0,
                depth: 0,
            };
            let expr = parser.or()?;
            if parser.at != parser.tokens.len() {
                return Err(format!(
                    "Invalid filter pattern: unexpected '{}'",
                    parser.tokens[parser.at]
                ));
            }
            return Ok(Pattern::Json(expr));
        }
        let (mut all, mut any, mut none) = (Vec::new(), Vec::new(), Vec::new());
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
            rest = &rest[start..];
            let (target, body) = match rest.as_bytes()[0] {
                b'?' => (&mut any, &rest[1..]),
                b'-' if rest.len() > 1 => (&mut none, &rest[1..]),
                _ => (&mut all, rest),
            };
            let (term, after) = if let Some(quoted) = body.strip_prefix('"') {
                let end = quoted
                    .find('"')
                    .ok_or_else(|| "Invalid filter pattern: unterminated quote".to_string())?;
                (&quoted[..end], &quoted[end + 1..])
            } else {
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                (&body[..end], &body[end..])
            };
            if !term.is_empty() {
                target.push(term.to_string());
            }
            rest = after;
        }
        Ok(Pattern::Terms { all, any, none })
    }

    /// Whether a message matches.
    pub fn matches(&self, message: &str) -> bool {
        match self {
            Pattern::Terms { all, any, none } => {
                all.iter().all(|t| message.contains(t.as_str()))
                    && (any.is_empty() || any.iter().any(|t| message.contains(t.as_str())))
                    && !none.iter().any(|t| message.contains(t.as_str()))
            }
            Pattern::Fields(pattern) => bind(pattern, &split_fields(message), &mut Vec::new()),
            Pattern::Json(expr) => json_of(message).is_some_and(|json| eval(expr, &json)),
        }
    }

    /// The values a matching message yields (see the module docs), or `None` if it does
    /// not match.
    pub fn extract(&self, message: &str) -> Option<BTreeMap<String, String>> {
        match self {
            Pattern::Terms { .. } => self.matches(message).then(BTreeMap::new),
            Pattern::Fields(pattern) => {
                let fields = split_fields(message);
                let mut bound = Vec::with_capacity(fields.len());
                if !bind(pattern, &fields, &mut bound) {
                    return None;
                }
                Some(
                    fields
                        .iter()
                        .zip(bound)
                        .enumerate()
                        .map(|(i, (text, field))| {
                            let key = match field.and_then(|f| f.name.as_deref()) {
                                Some(name) => format!("${name}"),
                                None => format!("${}", i + 1),
                            };
                            (key, (*text).to_string())
                        })
                        .collect(),
                )
            }
            Pattern::Json(expr) => {
                let json = json_of(message)?;
                if !eval(expr, &json) {
                    return None;
                }
                let mut selectors = Vec::new();
                expr.selectors(&mut selectors);
                Some(
                    selectors
                        .into_iter()
                        .filter_map(|steps| {
                            let text = match select(&json, steps)? {
                                Json::String(s) => s.clone(),
                                other => other.to_string(),
                            };
                            Some((selector_text(steps), text))
                        })
                        .collect(),
                )
            }
        }
    }
}

impl Expr {
    /// The selectors the expression reads, in order.
    fn selectors<'e>(&'e self, out: &mut Vec<&'e [Step]>) {
        match self {
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.selectors(out);
                b.selectors(out);
            }
            Expr::Compare(steps, ..) | Expr::Test(steps, _) => out.push(steps),
        }
    }
}

/// The member a selector (`$.a.b[0]`) names in a JSON message, as text (metric filters'
/// values and dimensions may name members their pattern does not).
pub fn json_member(message: &str, selector: &str) -> Option<String> {
    let steps = parse_selector(selector).ok()?;
    Some(match select(&json_of(message)?, &steps)? {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// A message that is a JSON object or array, parsed.
fn json_of(message: &str) -> Option<Json> {
    match serde_json::from_str::<Json>(message) {
        Ok(json @ (Json::Object(_) | Json::Array(_))) => Some(json),
        _ => None,
    }
}

/// A selector as written: `$.a.b[0]`.
fn selector_text(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// One entry of a space-delimited pattern: `...`, `name`, `name <op> value`, or empty.
fn parse_field(text: &str) -> Result<Option<Field>, String> {
    let text = text.trim();
    if text == "..." {
        return Ok(None);
    }
    let tokens = tokenize(text)?;
    match tokens.as_slice() {
        [] => Ok(Some(Field {
            name: None,
            condition: None,
        })),
        [name] => Ok(Some(Field {
            name: Some(name.clone()),
            condition: None,
        })),
        [name, op, value] => {
            let op = match op.as_str() {
                "=" => Op::Eq,
                "!=" => Op::Ne,
                "<" => Op::Lt,
                "<=" => Op::Le,
                ">" => Op::Gt,
                ">=" => Op::Ge,
                other => {
                    return Err(format!(
                        "Invalid filter pattern: unknown operator '{other}'"
                    ))
                }
            };
            let literal = match value.strip_prefix('"') {
                Some(t) => Literal::Text(t.to_string()),
                None => value
                    .parse::<f64>()
                    .map_or_else(|_| Literal::Text(value.clone()), Literal::Number),
            };
            Ok(Some(Field {
                name: Some(name.clone()),
                condition: Some((op, literal)),
            }))
        }
        _ => Err(format!("Invalid filter pattern: bad field '{text}'")),
    }
}

/// A message's fields: split on spaces, with `"..."` and `[...]` each one field.
fn split_fields(message: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let mut rest = message.trim_start();
    while !rest.is_empty() {
        let close = match rest.as_bytes()[0] {
            b'"' => Some('"'),
            b'[' => Some(']'),
            _ => None,
        };
        let (field, after) = match close.and_then(|c| rest[1..].find(c).map(|i| i + 1)) {
            Some(end) => (&rest[1..end], &rest[end + 1..]),
            None => {
                let end = rest.find(' ').unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        fields.push(field);
        rest = after.trim_start();
    }
    fields
}

fn field_matches(field: &Field, text: &str) -> bool {
    match &field.condition {
        None => true,
        Some((op, Literal::Number(n))) => text.parse::<f64>().is_ok_and(|x| match op {
            Op::Eq => x == *n,
            Op::Ne => x != *n,
            Op::Lt => x < *n,
            Op::Le => x <= *n,
            Op::Gt => x > *n,
            Op::Ge => x >= *n,
        }),
        Some((op, Literal::Text(pattern))) => match op {
            Op::Eq => glob(pattern, text),
            Op::Ne => !glob(pattern, text),
            _ => false,
        },
    }
}

/// Whether fields match a pattern whose `None` entries (`...`) take any number of fields;
/// on a match, `bound` holds, for each message field, the pattern field it matched (`None`
/// where a `...` took it).
///
/// This is glob matching with `...` for `*`, in one pass that backtracks only to the last
/// `...` (each pattern field matches exactly one message field), so many `...`s cost
/// O(fields x pattern) rather than the exponential time of trying every split.
fn bind<'p>(
    pattern: &'p [Option<Field>],
    fields: &[&str],
    bound: &mut Vec<Option<&'p Field>>,
) -> bool {
    bound.clear();
    bound.resize(fields.len(), None);
    let (mut p, mut f) = (0, 0);
    // The pattern index after the last `...` and the first field it has not taken.
    let mut last_ellipsis: Option<(usize, usize)> = None;
    while f < fields.len() {
        match pattern.get(p) {
            Some(None) => {
                last_ellipsis = Some((p + 1, f));
                p += 1;
            }
            Some(Some(field)) if field_matches(field, fields[f]) => {
                bound[f] = Some(field);
                p += 1;
                f += 1;
            }
            _ => match last_ellipsis {
                Some((after, taken)) => {
                    bound[taken] = None;
                    last_ellipsis = Some((after, taken + 1));
                    (p, f) = (after, taken + 1);
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(Option::is_none)
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '"' {
            let mut s = String::from('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                s.push(chars[i]);
                i += 1;
            }
            if i == chars.len() {
                return Err("Invalid filter pattern: unterminated quote".into());
            }
            i += 1;
            tokens.push(s);
        } else if "()".contains(c) {
            tokens.push(c.to_string());
            i += 1;
        } else if let Some(op) = ["&&", "||", "!=", "<=", ">=", "=", "<", ">"]
            .iter()
            .find(|op| chars[i..].starts_with(&op.chars().collect::<Vec<_>>()))
        {
            tokens.push((*op).to_string());
            i += op.len();
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !"()=!<>&|\"".contains(chars[i]) {
                i += 1;
            }
            if start == i {
                return Err(format!("Invalid filter pattern: unexpected '{c}'"));
            }
            tokens.push(chars[start..i].iter().collect());
        }
    }
    Ok(tokens)
}

/// The deepest nesting of parentheses a JSON filter pattern may have; `&&` and `||` chains
/// are balanced trees, so no pattern drives the parser or the matcher deeper than this.
const MAX_NESTING: usize = 32;

struct Parser {
    tokens: Vec<String>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn next(&mut self) -> Result<String, String> {
        let t = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or_else(|| "Invalid filter pattern: unexpected end".to_string())?;
        self.at += 1;
        Ok(t)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut terms = vec![self.and()?];
        while self.peek() == Some("||") {
            self.at += 1;
            terms.push(self.and()?);
        }
        balanced(terms, |a, b| Expr::Or(Box::new(a), Box::new(b)))
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut terms = vec![self.unary()?];
        while self.peek() == Some("&&") {
            self.at += 1;
            terms.push(self.unary()?);
        }
        balanced(terms, |a, b| Expr::And(Box::new(a), Box::new(b)))
    }

    /// A parenthesised expression, one level deeper, refusing to pass [`MAX_NESTING`].
    fn group(&mut self) -> Result<Expr, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!(
                "Invalid filter pattern: parentheses nested more than {MAX_NESTING} levels"
            ));
        }
        self.depth += 1;
        let inner = self.or()?;
        self.depth -= 1;
        if self.next()? != ")" {
            return Err("Invalid filter pattern: missing ')'".into());
        }
        Ok(inner)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some("(") {
            self.at += 1;
            return self.group();
        }
        let selector = parse_selector(&self.next()?)?;
        let op = self.next()?;
        let op = match op.as_str() {
            "=" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "IS" => {
                let test = match self.next()?.as_str() {
                    "NULL" => Test::Null,
                    "TRUE" => Test::True,
                    "FALSE" => Test::False,
                    other => return Err(format!("Invalid filter pattern: IS {other}")),
                };
                return Ok(Expr::Test(selector, test));
            }
            "NOT" if self.next()? == "EXISTS" => return Ok(Expr::Test(selector, Test::Missing)),
            other => {
                return Err(format!(
                    "Invalid filter pattern: unknown operator '{other}'"
                ))
            }
        };
        let value = self.next()?;
        let literal = match value.strip_prefix('"') {
            Some(text) => Literal::Text(text.to_string()),
            None => match value.parse::<f64>() {
                Ok(n) => Literal::Number(n),
                Err(_) => Literal::Text(value),
            },
        };
        if matches!(literal, Literal::Text(_)) && !matches!(op, Op::Eq | Op::Ne) {
            return Err("Invalid filter pattern: only = and != compare strings".into());
        }
        Ok(Expr::Compare(selector, op, literal))
    }
}

/// Joins a chain's terms into a balanced tree (a chain always has one term).
fn balanced(terms: Vec<Expr>, join: impl FnMut(Expr, Expr) -> Expr) -> Result<Expr, String> {
    crate::balance::balanced(terms, join).ok_or_else(|| "Invalid filter pattern".to_string())
}

fn parse_selector(token: &str) -> Result<Vec<Step>, String> {
    let mut rest = token
        .strip_prefix('$')
        .ok_or_else(|| format!("Invalid filter pattern: selector '{token}' must start with $"))?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(format!("Invalid filter pattern: bad selector '{token}'"));
            }
            steps.push(Step::Field(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after
                .find(']')
                .ok_or_else(|| format!("Invalid filter pattern: bad selector '{token}'"))?;
            let index = after[..end]
                .parse()
                .map_err(|_| format!("Invalid filter pattern: bad index in '{token}'"))?;
            steps.push(Step::Index(index));
            rest = &after[end + 1..];
        } else {
            return Err(format!("Invalid filter pattern: bad selector '{token}'"));
        }
    }
    Ok(steps)
}

fn select<'j>(json: &'j Json, steps: &[Step]) -> Option<&'j Json> {
    steps.iter().try_fold(json, |v, step| match step {
        Step::Field(name) => v.get(name),
        Step::Index(i) => v.get(*i),
    })
}

fn eval(expr: &Expr, json: &Json) -> bool {
    match expr {
        Expr::And(a, b) => eval(a, json) && eval(b, json),
        Expr::Or(a, b) => eval(a, json) || eval(b, json),
        Expr::Test(steps, test) => {
            let v = select(json, steps);
            match test {
                Test::Missing => v.is_none(),
                Test::Null => v.is_some_and(Json::is_null),
                Test::True => v == Some(&Json::Bool(true)),
                Test::False => v == Some(&Json::Bool(false)),
            }
        }
        Expr::Compare(steps, op, literal) => {
            let Some(v) = select(json, steps) else {
                return false;
            };
            match literal {
                Literal::Number(n) => {
                    let Some(x) = v.as_f64() else {
                        return false;
                    };
                    match op {
                        Op::Eq => x == *n,
                        Op::Ne => x != *n,
                        Op::Lt => x < *n,
                        Op::Le => x <= *n,
                        Op::Gt => x > *n,
                        Op::Ge => x >= *n,
                    }
                }
                Literal::Text(pattern) => {
                    let text = match v {
                        Json::String(s) => s.clone(),
                        Json::Bool(b) => b.to_string(),
                        Json::Number(n) => n.to_string(),
                        _ => return false,
                    };
                    let equal = glob(pattern, &text);
                    if *op == Op::Eq {
                        equal
                    } else {
                        !equal
                    }
                }
            }
        }
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, message: &str) -> bool {
        Pattern::parse(pattern).unwrap().matches(message)
    }

    #[test]
    fn terms_need_every_plain_term_one_optional_term_and_no_excluded_term() {
        assert!(matches("", "anything"));
        assert!(matches("ERROR timeout", "ERROR: db timeout"));
        assert!(!matches("ERROR timeout", "ERROR: db down"));
        assert!(matches("\"db down\"", "ERROR: db down"));
        assert!(!matches("\"db down\"", "db is down"));
        assert!(matches("?ERROR ?WARN", "WARN slow"));
        assert!(!matches("?ERROR ?WARN", "INFO ok"));
        assert!(matches("ERROR -retry", "ERROR fatal"));
        assert!(!matches("ERROR -retry", "ERROR will retry"));
        assert!(!matches("error", "ERROR"));
    }

    #[test]
    fn json_patterns_compare_selected_values() {
        let msg = r#"{"level":"error","code":503,"user":{"id":"u-17"},"tags":["a","b"],"ok":false,"n":null}"#;
        assert!(matches(r#"{ $.level = "error" }"#, msg));
        assert!(!matches(r#"{ $.level != "error" }"#, msg));
        assert!(matches(r#"{ $.level = err* }"#, msg));
        assert!(matches(r#"{ $.code >= 500 && $.user.id = "u-17" }"#, msg));
        assert!(matches(r#"{ $.code = 404 || $.tags[1] = "b" }"#, msg));
        assert!(matches(
            r#"{ ($.code < 500 || $.ok IS FALSE) && $.n IS NULL }"#,
            msg
        ));
        assert!(matches(r#"{ $.missing NOT EXISTS }"#, msg));
        assert!(!matches(r#"{ $.missing = "x" }"#, msg));
        assert!(!matches(
            r#"{ $.level = "error" }"#,
            "level=error plain text"
        ));
    }

    #[test]
    fn space_delimited_patterns_match_fields_by_position() {
        let line = r#"127.0.0.1 - frank [10/Oct/2000:13:25:15 -0700] "GET /apache_pb.gif HTTP/1.0" 404 1534"#;
        assert!(matches(
            "[ip, user, username, timestamp, request, status_code, bytes]",
            line
        ));
        assert!(matches(
            "[ip, user, username, timestamp, request, status_code = 404, bytes > 1000]",
            line
        ));
        assert!(!matches(
            "[ip, user, username, timestamp, request, status_code = 200, bytes]",
            line
        ));
        assert!(matches("[ip = 127.0.0.*, ...]", line));
        assert!(matches("[..., status_code = 4*, bytes]", line));
        assert!(!matches("[ip, user]", line));
        assert!(matches(r#"[..., request = "GET *", status, size]"#, line));
    }

    #[test]
    fn space_delimited_matches_extract_named_and_numbered_fields() {
        let line = r#"127.0.0.1 - frank [10/Oct/2000:13:25:15 -0700] "GET /apache_pb.gif HTTP/1.0" 200 1534"#;
        let values = Pattern::parse("[..., status_code = 200, size]")
            .unwrap()
            .extract(line)
            .unwrap();
        assert_eq!(values["$1"], "127.0.0.1");
        assert_eq!(values["$4"], "10/Oct/2000:13:25:15 -0700");
        assert_eq!(values["$5"], "GET /apache_pb.gif HTTP/1.0");
        assert_eq!(values["$status_code"], "200");
        assert_eq!(values["$size"], "1534");
        assert_eq!(values.len(), 7);
        let all = Pattern::parse("[]").unwrap().extract(line).unwrap();
        assert_eq!(all["$7"], "1534");
        let trailing = Pattern::parse("[..., request = *.gif*, status = 2*,]")
            .unwrap()
            .extract(line)
            .unwrap();
        assert_eq!(trailing["$request"], "GET /apache_pb.gif HTTP/1.0");
        assert_eq!(trailing["$7"], "1534");
        assert!(Pattern::parse("[..., status = 5*, size]")
            .unwrap()
            .extract(line)
            .is_none());
    }

    #[test]
    fn json_and_term_matches_extract_selectors_or_nothing() {
        let msg = r#"{"level":"error","latency":250,"user":{"id":"u-1"}}"#;
        let values = Pattern::parse(r#"{ $.latency > 100 && $.user.id = "u-*" }"#)
            .unwrap()
            .extract(msg)
            .unwrap();
        assert_eq!(values["$.latency"], "250");
        assert_eq!(values["$.user.id"], "u-1");
        assert!(Pattern::parse("error")
            .unwrap()
            .extract(msg)
            .unwrap()
            .is_empty());
        assert!(Pattern::parse("warn").unwrap().extract(msg).is_none());
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        assert!(Pattern::parse(r#"{ $.level = "error" "#).is_err());
        assert!(Pattern::parse(r#"{ level = "x" }"#).is_err());
        assert!(Pattern::parse(r#"{ $.a > "x" }"#).is_err());
        assert!(Pattern::parse("\"open").is_err());
    }

    #[test]
    fn nesting_is_bounded_and_chains_are_shallow() {
        let parens = |k: usize| format!("{{ {}$.a = 1{} }}", "(".repeat(k), ")".repeat(k));
        assert!(Pattern::parse(&parens(32)).is_ok());
        assert_eq!(
            Pattern::parse(&parens(33)).err().as_deref(),
            Some("Invalid filter pattern: parentheses nested more than 32 levels")
        );
        assert!(Pattern::parse(&parens(1000)).is_err());
        let ellipses = format!("[{}, status = 200, size]", vec!["..."; 120].join(","));
        let line = "a b c d e f g h i j k l m n o p q r s t u v w x y z 404 9";
        assert!(!Pattern::parse(&ellipses).unwrap().matches(line));
        let chain = format!("{{ {} }}", vec!["$.a = 1"; 5000].join(" && "));
        assert!(Pattern::parse(&chain).unwrap().matches(r#"{"a": 1}"#));
    }

    #[test]
    fn wildcards_match_runs_of_characters() {
        assert!(glob("a*c", "abbbc"));
        assert!(glob("*", ""));
        assert!(!glob("a*c", "ab"));
        assert!(glob("a*b*c", "axbyc"));
    }
}
