//! Dynamic partitioning's metadata extraction queries (`MetadataExtractionQuery`), which AWS
//! runs with jq 1.6, run here by jaq (jaq-core with jaq-std's and jaq-json's definitions).
//!
//! A query is checked before jaq sees it, so that what the query controls stays bounded:
//! at most [`MAX_NESTING`] levels of brackets, parentheses, braces and string
//! interpolations and at most [`MAX_TOKENS`] tokens (jaq's lexer, parser and evaluator
//! recurse on nesting and on chains of operators), and none of the
//! words that reach outside the record or need not end: user definitions (`def`), the
//! unbounded loops (`repeat`, `while`, `until`, `recurse`, `range`, `combinations`), the
//! process and its environment (`env`, `halt`, `halt_error`, `input`, `inputs`, `debug`,
//! `stderr`), and modules. Such a query, and one jaq cannot parse or compile, is refused
//! when the delivery stream is created or updated.
//!
//! A record's first output must be an object; each of its values is a partition key, a
//! string as is and a number or boolean as JSON writes it. A record that is not JSON, a
//! query that fails on it or yields nothing, and a value that is null, an object or an
//! array fail the record's extraction, as AWS fails it.

use jaq_core::data::JustLut;
use jaq_core::load::lex::{Lexer, StrPart, Tok, Token};
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{unwrap_valr, Compiler, Ctx, Vars};
use jaq_json::Val;
use serde_json::Value as Json;

/// The deepest nesting a query may have.
pub const MAX_NESTING: usize = 32;

/// The most tokens (names, operators, literals, brackets) a query may have.
pub const MAX_TOKENS: usize = 200;

/// The words a query may not use (see the module's documentation).
const REFUSED_WORDS: &[&str] = &[
    "def",
    "import",
    "include",
    "env",
    "halt",
    "halt_error",
    "input",
    "inputs",
    "debug",
    "stderr",
    "repeat",
    "while",
    "until",
    "recurse",
    "range",
    "combinations",
];

/// A compiled query.
pub struct Query {
    filter: jaq_core::Filter<JustLut<Val>>,
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Query")
    }
}

/// The deepest nesting of `text`, counting brackets, parentheses, braces and string
/// interpolations; stops counting past [`MAX_NESTING`].
fn nesting(text: &str) -> usize {
    // Each entry is what is open: '"' a string, anything else a bracket.
    let mut open: Vec<char> = Vec::new();
    let mut deepest = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (open.last() == Some(&'"'), c) {
            // An escape: `\(` opens an interpolation; any other escaped character is skipped.
            (true, '\\') if chars.next() == Some('(') => open.push('('),
            (true, '"') => {
                open.pop();
            }
            (true, _) => {}
            (false, '"' | '(' | '[' | '{') => open.push(c),
            (false, ')' | ']' | '}') => {
                open.pop();
            }
            (false, '#') => {
                chars.by_ref().find(|&c| c == '\n');
            }
            _ => {}
        }
        deepest = deepest.max(open.len());
        if deepest > MAX_NESTING {
            break;
        }
    }
    deepest
}

/// How many tokens `tokens` hold, strings' interpolations and blocks' contents included.
fn token_count(tokens: &[Token<&str>]) -> usize {
    tokens
        .iter()
        .map(|Token(_, tok)| match tok {
            Tok::Block(inner) => 1 + token_count(inner),
            Tok::Str(parts) => parts
                .iter()
                .map(|part| match part {
                    StrPart::Term(term) => token_count(std::slice::from_ref(term)),
                    _ => 0,
                })
                .sum::<usize>()
                .max(1),
            _ => 1,
        })
        .sum()
}

/// The first refused word among `tokens` (strings' interpolations included).
fn refused_word<'a>(tokens: &[Token<&'a str>]) -> Option<&'a str> {
    tokens.iter().find_map(|Token(text, tok)| match tok {
        Tok::Word if REFUSED_WORDS.contains(text) => Some(*text),
        Tok::Block(inner) => refused_word(inner),
        Tok::Str(parts) => parts.iter().find_map(|part| match part {
            StrPart::Term(term) => refused_word(std::slice::from_ref(term)),
            _ => None,
        }),
        _ => None,
    })
}

/// Where jaq's loader stopped, in words a message can carry.
fn load_error(error: &load::Error<&str>) -> String {
    let at = |rest: &str| match rest.chars().take(20).collect::<String>() {
        s if s.is_empty() => "at the end of the query".to_string(),
        s => format!("at \"{s}\""),
    };
    match error {
        load::Error::Lex(errors) => errors
            .first()
            .map(|(expect, rest)| format!("expected {} {}", expect.as_str(), at(rest))),
        load::Error::Parse(errors) => errors
            .first()
            .map(|(expect, rest)| format!("expected {} {}", expect.as_str(), at(rest))),
        load::Error::Io(errors) => errors.first().map(|(_, message)| message.clone()),
    }
    .unwrap_or_else(|| "the query cannot be parsed".into())
}

impl Query {
    /// Checks and compiles a query, else says what is wrong with it.
    pub fn parse(text: &str) -> Result<Query, String> {
        if nesting(text) > MAX_NESTING {
            return Err(format!("it nests deeper than {MAX_NESTING} levels"));
        }
        let tokens = Lexer::new(text)
            .lex()
            .map_err(|errors| load_error(&load::Error::Lex(errors)))?;
        let count = token_count(&tokens);
        if count > MAX_TOKENS {
            return Err(format!(
                "it has {count} tokens, more than the {MAX_TOKENS} a partitioning query may have"
            ));
        }
        if let Some(word) = refused_word(&tokens) {
            return Err(format!("{word} is not available in partitioning queries"));
        }
        let arena = Arena::default();
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs());
        let loader = Loader::new(defs);
        let modules = loader
            .load(
                &arena,
                File {
                    code: text,
                    path: (),
                },
            )
            .map_err(|errors| {
                errors.first().map_or_else(
                    || "the query cannot be parsed".into(),
                    |(_, e)| load_error(e),
                )
            })?;
        let filter = Compiler::default()
            .with_funs(
                jaq_core::funs()
                    .chain(jaq_std::funs())
                    .chain(jaq_json::funs()),
            )
            .compile(modules)
            .map_err(|errors| {
                let undefined = errors.iter().flat_map(|(_, e)| e).next();
                match undefined {
                    Some((name, kind)) => format!("{} {name} is not defined", kind.as_str()),
                    None => "the query cannot be compiled".into(),
                }
            })?;
        Ok(Query { filter })
    }

    /// The partition keys of one record (JSON), or why they cannot be extracted.
    pub fn extract(&self, record: &[u8]) -> Result<Vec<(String, String)>, String> {
        let doc: Val = serde_json::from_slice(record)
            .map_err(|e| format!("The record is not valid JSON: {e}"))?;
        let ctx = Ctx::<JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        let first = self.filter.id.run((ctx, doc)).map(unwrap_valr).next();
        let output = match first {
            Some(Ok(value)) => serde_json::from_str::<Json>(&value.to_string())
                .map_err(|e| format!("The query yielded a value that is not JSON: {e}."))?,
            Some(Err(e)) => return Err(format!("The query failed on the record: {e}.")),
            None => return Err("The query yielded no value for the record.".into()),
        };
        let Json::Object(keys) = output else {
            return Err(format!("The query yielded {output}, not an object."));
        };
        keys.into_iter()
            .map(|(key, value)| match value {
                Json::String(s) => Ok((key, s)),
                v @ (Json::Number(_) | Json::Bool(_)) => Ok((key, v.to_string())),
                _ => Err(format!("The query found no value for the key {key}.")),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(query: &str, record: &str) -> Result<Vec<(String, String)>, String> {
        Query::parse(query).unwrap().extract(record.as_bytes())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn jq_queries_extract_keys() {
        let record =
            r#"{"customer":{"id":42},"ts":["2026-12-02"],"a b":{"c":true},"t":1796230800}"#;
        assert_eq!(
            keys(
                r#"{customer_id: .customer.id, "day": .ts[0], kind:."a b"["c"]}"#,
                record
            )
            .unwrap(),
            pairs(&[
                ("customer_id", "42"),
                ("day", "2026-12-02"),
                ("kind", "true")
            ])
        );
        assert_eq!(
            keys(
                r#"{id: .customer.id | tostring, year: .t | strftime("%Y")}"#,
                record
            )
            .unwrap(),
            pairs(&[("id", "42"), ("year", "2026")])
        );
        assert_eq!(
            keys(
                r#"{k: .missing // "none", u: .ts[0] | ascii_upcase}"#,
                record
            )
            .unwrap(),
            pairs(&[("k", "none"), ("u", "2026-12-02")])
        );
        assert_eq!(
            keys(r#"{k: (.legacy.type // "other")}"#, record).unwrap(),
            pairs(&[("k", "other")])
        );
        assert!(keys("{k: .customer}", record).is_err());
        assert!(keys("{k: .nothing}", record).is_err());
        assert!(keys(".customer.id", record).is_err());
        assert!(keys("empty", record).is_err());
        assert!(keys("{k: .ts.x}", record).is_err());
        assert!(Query::parse("{k: .a}")
            .unwrap()
            .extract(b"not json")
            .is_err());
    }

    #[test]
    fn bad_and_unbounded_queries_are_refused() {
        for bad in [
            "",
            "{a: .a",
            "{a .a}",
            "{a: .[}",
            "{a: nosuchfunction}",
            "{a: $undefined}",
            "def f: f; f",
            "{a: [repeat(1)]}",
            "{a: env.HOME}",
            "{a: \"\\(halt)\"}",
            "{a: last(range(1e18))}",
            "import \"x\" as x; .",
        ] {
            assert!(Query::parse(bad).is_err(), "{bad}");
        }
        let deep = format!("{}.{}", "[".repeat(40), "]".repeat(40));
        assert!(Query::parse(&deep).unwrap_err().contains("deeper than 32"));
        let deep = format!("\"{}\"", "\\(\"".repeat(40));
        assert!(Query::parse(&deep).is_err());
        // The longest chains of operators a query may have parse and run on a 2 MiB stack.
        let record = br#"{"a": 1}"#;
        for op in [" | .", " + .a", " // .a", " and .a", ", .a", " - .a"] {
            let chain = |n: usize| format!("{{a: (.a{})}}", op.repeat(n));
            let (mut longest, mut refused) = (1, MAX_TOKENS);
            while refused - longest > 1 {
                let n = (longest + refused) / 2;
                match Query::parse(&chain(n)) {
                    Ok(_) => longest = n,
                    Err(_) => refused = n,
                }
            }
            assert!(longest >= 40, "{op}: {longest}");
            let _ = Query::parse(&chain(longest)).unwrap().extract(record);
            assert!(Query::parse(&chain(longest + 1))
                .unwrap_err()
                .contains("tokens"));
        }
    }
}
