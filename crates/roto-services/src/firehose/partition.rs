//! Dynamic partitioning's metadata extraction queries: the part of jq that
//! `MetadataExtractionQuery` uses in practice, an object of keys and paths.
//!
//! Served: `{key: .path, "key two": .a.b[0]."c d"["e"], k: .a // .b // "default"}`: an
//! object (keys bare or quoted) whose values are paths, string literals, or alternatives of
//! them joined by jq's `//` (the first that is neither null nor false). A path is `.`
//! followed by `.name`, `."name"`, `["name"]` and `[index]` steps. A key's value is a
//! string as is, or a number or boolean as JSON writes it; a value that is missing, null,
//! false, an object or an array fails the record's extraction, as AWS does. Other jq
//! (pipes, functions, string interpolation, arithmetic, conditionals) is refused with
//! InvalidArgumentException when the stream is created or updated. The reader is one loop
//! over the query's characters: it keeps no stack, whatever the query.

use serde_json::Value as Json;

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Index(usize),
}

/// One alternative of a key's value: a path into the record, or a string literal.
#[derive(Debug, Clone, PartialEq)]
enum Term {
    Path(Vec<Step>),
    Literal(String),
}

/// A parsed query: each partition key and its alternatives.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    keys: Vec<(String, Vec<Term>)>,
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.chars.peek().is_some_and(|c| c.is_whitespace()) {
            self.chars.next();
        }
    }

    fn expect(&mut self, wanted: char) -> Result<(), String> {
        self.skip_space();
        match self.chars.next() {
            Some(c) if c == wanted => Ok(()),
            Some(c) => Err(format!("expected {wanted} but found {c}")),
            None => Err(format!("expected {wanted} at the end of the query")),
        }
    }

    fn identifier(&mut self) -> Result<String, String> {
        let mut out = String::new();
        while let Some(&c) = self.chars.peek() {
            if !(c.is_ascii_alphanumeric() || c == '_') {
                break;
            }
            out.push(c);
            self.chars.next();
        }
        match out.is_empty() {
            true => Err("expected a name".into()),
            false => Ok(out),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            match self.chars.next() {
                Some('"') => return Ok(out),
                Some('\\') => match self.chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(c) => out.push(c),
                    None => return Err("unterminated string".into()),
                },
                Some(c) => out.push(c),
                None => return Err("unterminated string".into()),
            }
        }
    }

    fn key(&mut self) -> Result<String, String> {
        self.skip_space();
        match self.chars.peek() {
            Some('"') => self.string(),
            _ => self.identifier(),
        }
    }

    fn bracket(&mut self) -> Result<Step, String> {
        self.skip_space();
        let step = match self.chars.peek() {
            Some('"') => Step::Member(self.string()?),
            _ => {
                let mut digits = String::new();
                while let Some(&c) = self.chars.peek().filter(|c| c.is_ascii_digit()) {
                    digits.push(c);
                    self.chars.next();
                }
                Step::Index(
                    digits
                        .parse()
                        .map_err(|_| "expected an index or a string")?,
                )
            }
        };
        self.expect(']')?;
        Ok(step)
    }

    fn path(&mut self) -> Result<Vec<Step>, String> {
        self.expect('.')?;
        let mut steps = Vec::new();
        let mut after_dot = true;
        loop {
            match self.chars.peek() {
                Some('"') if after_dot => steps.push(Step::Member(self.string()?)),
                Some(c) if after_dot && (c.is_ascii_alphabetic() || *c == '_') => {
                    steps.push(Step::Member(self.identifier()?))
                }
                Some('[') => {
                    self.chars.next();
                    steps.push(self.bracket()?);
                }
                Some('.') => {
                    self.chars.next();
                    after_dot = true;
                    continue;
                }
                _ => return Ok(steps),
            }
            after_dot = false;
        }
    }

    /// A key's value: terms joined by `//`.
    fn alternatives(&mut self) -> Result<Vec<Term>, String> {
        let mut terms = Vec::new();
        loop {
            self.skip_space();
            terms.push(match self.chars.peek() {
                Some('"') => Term::Literal(self.string()?),
                _ => Term::Path(self.path()?),
            });
            self.skip_space();
            if self.chars.peek() != Some(&'/') {
                return Ok(terms);
            }
            self.chars.next();
            self.expect('/')?;
        }
    }
}

impl Query {
    /// Parses a query, else says what is wrong with it.
    pub fn parse(text: &str) -> Result<Query, String> {
        let mut r = Reader {
            chars: text.chars().peekable(),
        };
        r.expect('{')?;
        let mut keys = Vec::new();
        loop {
            let key = r.key()?;
            r.expect(':')?;
            keys.push((key, r.alternatives()?));
            r.skip_space();
            match r.chars.next() {
                Some(',') => continue,
                Some('}') => break,
                Some(c) => return Err(format!("expected , or }} but found {c}")),
                None => return Err("expected } at the end of the query".into()),
            }
        }
        r.skip_space();
        match r.chars.next() {
            None => Ok(Query { keys }),
            Some(c) => Err(format!("unexpected {c} after the query")),
        }
    }

    /// The partition keys of one record (JSON), or why they cannot be extracted.
    pub fn extract(&self, record: &[u8]) -> Result<Vec<(String, String)>, String> {
        let doc: Json = serde_json::from_slice(record)
            .map_err(|e| format!("The record is not valid JSON: {e}"))?;
        self.keys
            .iter()
            .map(|(key, terms)| {
                let found = terms.iter().find_map(|term| match term {
                    Term::Literal(text) => Some(Json::String(text.clone())),
                    Term::Path(path) => path
                        .iter()
                        .try_fold(&doc, |node, step| match step {
                            Step::Member(m) => node.get(m.as_str()),
                            Step::Index(i) => node.get(*i),
                        })
                        .filter(|v| !matches!(v, Json::Null | Json::Bool(false)))
                        .cloned(),
                });
                match found {
                    Some(Json::String(s)) => Ok((key.clone(), s)),
                    Some(v @ (Json::Number(_) | Json::Bool(_))) => Ok((key.clone(), v.to_string())),
                    _ => Err(format!("The query found no value for the key {key}.")),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_of_paths_extract_keys() {
        let q = Query::parse(r#"{customer_id: .customer.id, "day": .ts[0], kind:."a b"["c"]}"#)
            .unwrap();
        let keys = q
            .extract(br#"{"customer":{"id":42},"ts":["2026-12-02"],"a b":{"c":true}}"#)
            .unwrap();
        assert_eq!(
            keys,
            vec![
                ("customer_id".to_string(), "42".to_string()),
                ("day".to_string(), "2026-12-02".to_string()),
                ("kind".to_string(), "true".to_string()),
            ]
        );
        assert!(q.extract(br#"{"customer":{}}"#).is_err());
        assert!(q.extract(b"not json").is_err());
        let q = Query::parse(r#"{k: .a // .b.c // "none", j: .x//.y}"#).unwrap();
        let keys = |doc: &[u8]| {
            q.extract(doc)
                .map(|k| k.into_iter().map(|(_, v)| v).collect::<Vec<_>>())
        };
        assert_eq!(keys(br#"{"a": "1", "x": 2}"#).unwrap(), ["1", "2"]);
        assert_eq!(
            keys(br#"{"a": null, "b": {"c": false}, "y": true}"#).unwrap(),
            ["none", "true"]
        );
        assert!(keys(br#"{"a": 1}"#).is_err());
    }

    #[test]
    fn other_jq_is_refused() {
        for bad in [
            "",
            ".a",
            "{a: .a | length}",
            "{a: .a",
            "{a .a}",
            "{a: .a} x",
            "{a: .[}",
            "{a: .a / .b}",
            "{a: .a // }",
            r#"{a: .a | "k=\(.)"}"#,
            "{a: if .a then .b else .c end}",
        ] {
            assert!(Query::parse(bad).is_err(), "{bad}");
        }
    }
}
