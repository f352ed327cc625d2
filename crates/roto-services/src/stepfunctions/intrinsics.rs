//! The eighteen `States.*` intrinsic functions of JSONPath states (`"x.$":
//! "States.Format('Hello {}', $.name)"`): their argument parser and their evaluation.
//!
//! The parser reads user input, so it is bounded: calls nest at most [`MAX_DEPTH`] deep
//! (a counter, not the stack's size) and a call takes at most [`MAX_ARGS`] arguments.
//! String literals are quoted with `'`; `\'`, `\\`, `\{` and `\}` are their escapes.

use base64::Engine;
use serde_json::{json, Value as Json};
use sha2::Digest;

/// How deep calls may nest in each other's arguments.
pub const MAX_DEPTH: usize = 10;

/// The most arguments one call takes.
pub const MAX_ARGS: usize = 256;

/// The longest array States.ArrayRange builds.
const MAX_RANGE: usize = 1000;

/// An argument of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A string literal, with `\{` and `\}` kept (States.Format reads them).
    Str(String),
    /// A number, boolean or null literal.
    Literal(Json),
    /// A path (`$.a`, `$$.Execution.Id`), evaluated by the caller.
    Path(String),
    /// A nested call.
    Call(Call),
}

/// A parsed call: `States.Name(args...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function's name (`States.Format`).
    pub name: String,
    /// Its arguments.
    pub args: Vec<Arg>,
}

/// Parses a whole intrinsic function call.
pub fn parse(text: &str) -> Result<Call, String> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
    };
    let call = reader.call(0)?;
    reader.skip_space();
    if reader.at != reader.chars.len() {
        return Err(format!(
            "Unexpected text after the call at position {}",
            reader.at
        ));
    }
    Ok(call)
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("Expected '{c}' at position {}", self.at))
        }
    }

    fn call(&mut self, depth: usize) -> Result<Call, String> {
        if depth >= MAX_DEPTH {
            return Err(format!("Intrinsic functions nest at most {MAX_DEPTH} deep"));
        }
        self.skip_space();
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        {
            self.at += 1;
        }
        let name: String = self.chars[start..self.at].iter().collect();
        if !name.starts_with("States.") {
            return Err(format!("Unknown function at position {start}"));
        }
        self.expect('(')?;
        let mut args = Vec::new();
        self.skip_space();
        if self.peek() == Some(')') {
            self.at += 1;
            return Ok(Call { name, args });
        }
        loop {
            if args.len() >= MAX_ARGS {
                return Err(format!("A call takes at most {MAX_ARGS} arguments"));
            }
            args.push(self.arg(depth)?);
            self.skip_space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some(')') => {
                    self.at += 1;
                    return Ok(Call { name, args });
                }
                _ => return Err(format!("Expected ',' or ')' at position {}", self.at)),
            }
        }
    }

    fn arg(&mut self, depth: usize) -> Result<Arg, String> {
        self.skip_space();
        match self.peek() {
            Some('\'') => self.string().map(Arg::Str),
            Some('$') => Ok(Arg::Path(self.path())),
            Some('S') => self.call(depth + 1).map(Arg::Call),
            Some(_) => self.literal(),
            None => Err("Unexpected end of the call".into()),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err("Unterminated string literal".into()),
                Some('\'') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(c @ ('{' | '}')) => {
                            out.push('\\');
                            out.push(c);
                        }
                        Some(c) => out.push(c),
                        None => return Err("Unterminated string literal".into()),
                    }
                    self.at += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// A path runs to the `,` or `)` that is outside its brackets and quotes.
    fn path(&mut self) -> String {
        let start = self.at;
        let (mut depth, mut quote) = (0usize, None);
        while let Some(c) = self.peek() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '(') => depth += 1,
                (None, ']' | ')') if depth > 0 => depth -= 1,
                (None, ',' | ')') => break,
                _ => {}
            }
            self.at += 1;
        }
        self.chars[start..self.at]
            .iter()
            .collect::<String>()
            .trim_end()
            .to_string()
    }

    fn literal(&mut self) -> Result<Arg, String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c != ',' && c != ')' && !c.is_whitespace())
        {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        match serde_json::from_str::<Json>(&text) {
            Ok(v @ (Json::Number(_) | Json::Bool(_) | Json::Null)) => Ok(Arg::Literal(v)),
            _ => Err(format!("Invalid argument '{text}' at position {start}")),
        }
    }
}

/// Removes the `\{`/`\}` escapes a string literal keeps.
fn unescape(raw: &str) -> String {
    raw.replace("\\{", "{").replace("\\}", "}")
}

/// Evaluates a call; `resolve` reads a path argument (or fails as the state fails).
pub fn evaluate(
    call: &Call,
    resolve: &dyn Fn(&str) -> Result<Json, String>,
) -> Result<Json, String> {
    let mut values = Vec::with_capacity(call.args.len());
    for arg in &call.args {
        values.push(match arg {
            Arg::Str(raw) => Json::String(unescape(raw)),
            Arg::Literal(v) => v.clone(),
            Arg::Path(p) => resolve(p)?,
            Arg::Call(c) => evaluate(c, resolve)?,
        });
    }
    let name = call.name.as_str();
    let bad = || format!("Invalid arguments in {name}");
    match name {
        "States.Format" => format(call, &values).ok_or_else(bad),
        "States.StringToJson" => match values.as_slice() {
            [Json::String(s)] => serde_json::from_str(s).map_err(|_| bad()),
            _ => Err(bad()),
        },
        "States.JsonToString" => match values.as_slice() {
            [v] => Ok(Json::String(v.to_string())),
            _ => Err(bad()),
        },
        "States.Array" => Ok(Json::Array(values)),
        "States.UUID" if values.is_empty() => {
            Ok(Json::String(roto_core::dispatch::new_request_id()))
        }
        _ => arrays(name, &values)
            .or_else(|| strings(name, &values))
            .or_else(|| math(name, &values))
            .ok_or_else(bad),
    }
}

fn format(call: &Call, values: &[Json]) -> Option<Json> {
    let template = match call.args.first()? {
        Arg::Str(raw) => raw.clone(),
        _ => values.first()?.as_str()?.to_string(),
    };
    let mut args = values[1..].iter();
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('{' | '}')) => out.push(chars.next()?),
            '{' if chars.peek() == Some(&'}') => {
                chars.next();
                match args.next()? {
                    Json::String(s) => out.push_str(s),
                    v @ (Json::Number(_) | Json::Bool(_) | Json::Null) => {
                        out.push_str(&v.to_string())
                    }
                    _ => return None,
                }
            }
            c => out.push(c),
        }
    }
    args.next().is_none().then_some(Json::String(out))
}

fn arrays(name: &str, values: &[Json]) -> Option<Json> {
    match (name, values) {
        ("States.ArrayPartition", [Json::Array(items), size]) => {
            let size = usize::try_from(size.as_u64().filter(|n| *n > 0)?).ok()?;
            Some(Json::Array(
                items
                    .chunks(size)
                    .map(|c| Json::Array(c.to_vec()))
                    .collect(),
            ))
        }
        ("States.ArrayContains", [Json::Array(items), v]) => Some(Json::Bool(items.contains(v))),
        ("States.ArrayRange", [start, end, step]) => {
            let (start, end, step) = (start.as_i64()?, end.as_i64()?, step.as_i64()?);
            if step == 0 {
                return None;
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i <= end) || (step < 0 && i >= end) {
                if out.len() >= MAX_RANGE {
                    return None;
                }
                out.push(json!(i));
                i = i.checked_add(step)?;
            }
            Some(Json::Array(out))
        }
        ("States.ArrayGetItem", [Json::Array(items), index]) => {
            items.get(usize::try_from(index.as_u64()?).ok()?).cloned()
        }
        ("States.ArrayLength", [Json::Array(items)]) => Some(json!(items.len())),
        ("States.ArrayUnique", [Json::Array(items)]) => {
            let mut out: Vec<Json> = Vec::new();
            for item in items {
                if !out.contains(item) {
                    out.push(item.clone());
                }
            }
            Some(Json::Array(out))
        }
        ("States.JsonMerge", [Json::Object(a), Json::Object(b), Json::Bool(false)]) => {
            let mut merged = a.clone();
            merged.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(Json::Object(merged))
        }
        _ => None,
    }
}

fn strings(name: &str, values: &[Json]) -> Option<Json> {
    let engine = base64::engine::general_purpose::STANDARD;
    match (name, values) {
        ("States.Base64Encode", [Json::String(s)]) if s.len() <= 10_000 => {
            Some(Json::String(engine.encode(s)))
        }
        ("States.Base64Decode", [Json::String(s)]) if s.len() <= 10_000 => {
            String::from_utf8(engine.decode(s).ok()?)
                .ok()
                .map(Json::String)
        }
        ("States.Hash", [data, Json::String(algorithm)]) => {
            let text = match data {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            hash(text.as_bytes(), algorithm).map(Json::String)
        }
        ("States.StringSplit", [Json::String(s), Json::String(delimiters)]) => {
            let parts = s
                .split(|c| delimiters.contains(c))
                .filter(|p| !p.is_empty())
                .map(|p| Json::String(p.to_string()));
            Some(Json::Array(parts.collect()))
        }
        _ => None,
    }
}

fn hash(data: &[u8], algorithm: &str) -> Option<String> {
    Some(match algorithm {
        "MD5" => hex::encode(md5::Md5::digest(data)),
        "SHA-1" => hex::encode(sha1::Sha1::digest(data)),
        "SHA-256" => hex::encode(sha2::Sha256::digest(data)),
        "SHA-384" => hex::encode(sha2::Sha384::digest(data)),
        "SHA-512" => hex::encode(sha2::Sha512::digest(data)),
        _ => return None,
    })
}

fn math(name: &str, values: &[Json]) -> Option<Json> {
    match (name, values) {
        ("States.MathAdd", [a, b]) => Some(json!(a.as_i64()?.checked_add(b.as_i64()?)?)),
        ("States.MathRandom", [start, end, ..]) if values.len() <= 3 => {
            let (start, end) = (start.as_i64()?, end.as_i64()?);
            let mut rng = match values.get(2) {
                Some(seed) => fastrand::Rng::with_seed(seed.as_u64()?),
                None => fastrand::Rng::new(),
            };
            (start < end).then(|| json!(rng.i64(start..end)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Json, String> {
        let input = json!({"name": "Ada", "items": [1, 2, 2, 3], "n": 5});
        let call = parse(text)?;
        evaluate(&call, &|p| {
            roto_jsonpath::Path::parse(p)
                .ok()
                .and_then(|p| p.evaluate(&input))
                .ok_or_else(|| format!("no {p}"))
        })
    }

    #[test]
    fn every_function_evaluates() {
        assert_eq!(
            run("States.Format('Hi {}, \\{x\\} {}', $.name, $.n)").unwrap(),
            json!("Hi Ada, {x} 5")
        );
        assert_eq!(
            run("States.StringToJson('{\"a\":1}')").unwrap(),
            json!({"a": 1})
        );
        assert_eq!(
            run("States.JsonToString($.items)").unwrap(),
            json!("[1,2,2,3]")
        );
        assert_eq!(
            run("States.Array(1, 'a', true, null)").unwrap(),
            json!([1, "a", true, null])
        );
        assert_eq!(
            run("States.ArrayPartition($.items, 3)").unwrap(),
            json!([[1, 2, 2], [3]])
        );
        assert_eq!(
            run("States.ArrayContains($.items, 3)").unwrap(),
            json!(true)
        );
        assert_eq!(run("States.ArrayRange(1, 9, 3)").unwrap(), json!([1, 4, 7]));
        assert_eq!(run("States.ArrayGetItem($.items, 3)").unwrap(), json!(3));
        assert_eq!(run("States.ArrayLength($.items)").unwrap(), json!(4));
        assert_eq!(
            run("States.ArrayUnique($.items)").unwrap(),
            json!([1, 2, 3])
        );
        assert_eq!(run("States.Base64Encode('Ada')").unwrap(), json!("QWRh"));
        assert_eq!(run("States.Base64Decode('QWRh')").unwrap(), json!("Ada"));
        assert_eq!(
            run("States.Hash('abc', 'SHA-1')").unwrap(),
            json!("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(
            run("States.JsonMerge(States.StringToJson('{\"a\":1}'), States.StringToJson('{\"b\":2}'), false)").unwrap(),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(run("States.MathAdd($.n, -2)").unwrap(), json!(3));
        let r = run("States.MathRandom(1, 3)").unwrap().as_i64().unwrap();
        assert!((1..3).contains(&r));
        assert_eq!(
            run("States.StringSplit('a,b;c', ',;')").unwrap(),
            json!(["a", "b", "c"])
        );
        assert_eq!(run("States.UUID()").unwrap().as_str().unwrap().len(), 36);
    }

    #[test]
    fn bad_calls_are_errors_not_panics() {
        for text in [
            "States.Format(",
            "States.Nope()",
            "States.ArrayGetItem($.items, 9)",
            "x",
            "States.Format('{}')",
        ] {
            assert!(run(text).is_err(), "{text}");
        }
        let deep = format!("{}1{}", "States.Array(".repeat(50), ")".repeat(50));
        assert!(parse(&deep).is_err());
    }
}
