//! Projection expressions: document paths, `#name` substitution, and applying them.
//!
//! A `ProjectionExpression` is a comma-separated list of document paths (`a`, `#n`,
//! `a.b[2].c`). [`Names`] resolves `#placeholders` from `ExpressionAttributeNames` and
//! remembers which were used, so a request can be refused for unused names as DynamoDB
//! does once every expression in it has been read. The path parser is the piece the
//! condition, update and key-condition expressions will share.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use roto_core::{AwsError, AwsResult, Value};

use super::attr::{Attr, Item};

/// DynamoDB's reserved words (the list AWS publishes), sorted, one per line.
const RESERVED_WORDS: &str = include_str!("reserved_words.txt");

/// Whether `word` is reserved (case-insensitively) and so needs a `#placeholder`.
pub fn is_reserved(word: &str) -> bool {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    let words = WORDS.get_or_init(|| RESERVED_WORDS.lines().collect());
    words
        .binary_search(&word.to_ascii_uppercase().as_str())
        .is_ok()
}

/// One step of a document path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// A map member (or a top-level attribute).
    Name(String),
    /// A list element.
    Index(usize),
}

/// A document path: top-level attribute name first.
pub type Path = Vec<Step>;

/// `ExpressionAttributeNames`, tracking which placeholders an expression used.
pub struct Names<'a> {
    map: Option<&'a BTreeMap<String, Value>>,
    used: BTreeSet<String>,
}

impl<'a> Names<'a> {
    /// The request's `ExpressionAttributeNames` (if given).
    pub fn new(map: Option<&'a Value>) -> Names<'a> {
        Names {
            map: map.and_then(Value::as_map),
            used: BTreeSet::new(),
        }
    }

    fn resolve(&mut self, placeholder: &str, expression: &str) -> AwsResult<String> {
        match self
            .map
            .and_then(|m| m.get(placeholder))
            .and_then(Value::as_str)
        {
            Some(name) => {
                self.used.insert(placeholder.to_string());
                Ok(name.to_string())
            }
            None => Err(AwsError::validation(format!(
                "Invalid {expression}: An expression attribute name used in the document path is not defined; attribute name: {placeholder}"
            ))),
        }
    }

    /// Refuses placeholders no expression used, as DynamoDB does.
    pub fn check_all_used(&self) -> AwsResult<()> {
        let unused: Vec<&str> = self
            .map
            .map(|m| {
                m.keys()
                    .map(String::as_str)
                    .filter(|k| !self.used.contains(*k))
                    .collect()
            })
            .unwrap_or_default();
        if unused.is_empty() {
            return Ok(());
        }
        Err(AwsError::validation(format!(
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {{{}}}",
            unused.join(", ")
        )))
    }
}

/// A token of a path list.
#[derive(Debug, Clone, PartialEq)]
enum Token<'s> {
    Word(&'s str),
    Placeholder(&'s str),
    Number(&'s str),
    Punct(&'s str),
}

impl Token<'_> {
    fn text(&self) -> &str {
        match self {
            Token::Word(s) | Token::Placeholder(s) | Token::Number(s) | Token::Punct(s) => s,
        }
    }
}

fn tokenize(source: &str) -> Vec<(usize, Token<'_>)> {
    let bytes = source.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let token = if b == b'#' {
            i += 1;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            Token::Placeholder(&source[start..i])
        } else if b.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            Token::Number(&source[start..i])
        } else if word(b) {
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            Token::Word(&source[start..i])
        } else {
            i += source[i..].chars().next().map_or(1, char::len_utf8);
            Token::Punct(&source[start..i])
        };
        out.push((start, token));
    }
    out
}

fn syntax_error(
    expression: &str,
    source: &str,
    tokens: &[(usize, Token<'_>)],
    at: usize,
) -> AwsError {
    let Some((offset, token)) = tokens.get(at) else {
        return AwsError::validation(format!(
            "Invalid {expression}: Syntax error; token: \"<EOF>\", near: \"{}\"",
            tokens.last().map(|(_, t)| t.text()).unwrap_or_default()
        ));
    };
    let start = at
        .checked_sub(1)
        .and_then(|p| tokens.get(p))
        .map_or(*offset, |(o, _)| *o);
    let end = tokens
        .get(at + 1)
        .map_or(source.len(), |(o, t)| o + t.text().len());
    AwsError::validation(format!(
        "Invalid {expression}: Syntax error; token: \"{}\", near: \"{}\"",
        token.text(),
        &source[start..end]
    ))
}

/// Parses a comma-separated list of document paths (a `ProjectionExpression`).
pub fn parse_paths(source: &str, names: &mut Names<'_>, expression: &str) -> AwsResult<Vec<Path>> {
    let tokens = tokenize(source);
    if tokens.is_empty() {
        return Err(AwsError::validation(format!(
            "Invalid {expression}: The expression can not be empty;"
        )));
    }
    let mut paths = Vec::new();
    let mut at = 0;
    loop {
        let mut path = Path::new();
        let element = |at: usize, names: &mut Names<'_>| match tokens.get(at).map(|(_, t)| t) {
            Some(Token::Word(w)) if is_reserved(w) => Err(AwsError::validation(format!(
                "Invalid {expression}: Attribute name is a reserved keyword; reserved keyword: {w}"
            ))),
            Some(Token::Word(w)) => Ok(Step::Name((*w).to_string())),
            Some(Token::Placeholder(p)) => Ok(Step::Name(names.resolve(p, expression)?)),
            _ => Err(syntax_error(expression, source, &tokens, at)),
        };
        path.push(element(at, names)?);
        at += 1;
        loop {
            match tokens.get(at).map(|(_, t)| t) {
                Some(Token::Punct(".")) => {
                    path.push(element(at + 1, names)?);
                    at += 2;
                }
                Some(Token::Punct("[")) => {
                    let index = match tokens.get(at + 1).map(|(_, t)| t) {
                        Some(Token::Number(n)) => n
                            .parse::<usize>()
                            .map_err(|_| syntax_error(expression, source, &tokens, at + 1))?,
                        _ => return Err(syntax_error(expression, source, &tokens, at + 1)),
                    };
                    if tokens.get(at + 2).map(|(_, t)| t) != Some(&Token::Punct("]")) {
                        return Err(syntax_error(expression, source, &tokens, at + 2));
                    }
                    path.push(Step::Index(index));
                    at += 3;
                }
                _ => break,
            }
        }
        paths.push(path);
        match tokens.get(at).map(|(_, t)| t) {
            None => break,
            Some(Token::Punct(",")) => at += 1,
            Some(_) => return Err(syntax_error(expression, source, &tokens, at)),
        }
    }
    check_overlaps(&paths, expression)?;
    Ok(paths)
}

fn show(path: &Path) -> String {
    let steps: Vec<String> = path
        .iter()
        .map(|s| match s {
            Step::Name(n) => n.clone(),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect();
    format!("[{}]", steps.join(", "))
}

fn check_overlaps(paths: &[Path], expression: &str) -> AwsResult<()> {
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[..i] {
            let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
            let problem = if common == a.len().min(b.len()) {
                "overlap"
            } else if matches!(
                (&b[common], &a[common]),
                (Step::Name(_), Step::Index(_)) | (Step::Index(_), Step::Name(_))
            ) {
                "conflict"
            } else {
                continue;
            };
            return Err(AwsError::validation(format!(
                "Invalid {expression}: Two document paths {problem} with each other; must remove or rewrite one of these paths; path one: {}, path two: {}",
                show(b),
                show(a)
            )));
        }
    }
    Ok(())
}

/// The selection tree of a set of non-overlapping paths.
#[derive(Default)]
struct Tree(BTreeMap<Step, Tree>);

impl Tree {
    fn of(paths: &[Path]) -> Tree {
        let mut root = Tree::default();
        for path in paths {
            let mut node = &mut root;
            for step in path {
                node = node.0.entry(step.clone()).or_default();
            }
        }
        root
    }

    fn select(&self, attr: &Attr) -> Option<Attr> {
        if self.0.is_empty() {
            return Some(attr.clone());
        }
        match attr {
            Attr::M(m) => {
                let picked = self.select_map(m);
                (!picked.is_empty()).then_some(Attr::M(picked))
            }
            Attr::L(items) => {
                let picked: Vec<Attr> = self
                    .0
                    .iter()
                    .filter_map(|(step, sub)| match step {
                        Step::Index(i) => items.get(*i).and_then(|v| sub.select(v)),
                        Step::Name(_) => None,
                    })
                    .collect();
                (!picked.is_empty()).then_some(Attr::L(picked))
            }
            _ => None,
        }
    }

    fn select_map(&self, item: &Item) -> Item {
        self.0
            .iter()
            .filter_map(|(step, sub)| match step {
                Step::Name(n) => item
                    .get(n)
                    .and_then(|v| sub.select(v))
                    .map(|v| (n.clone(), v)),
                Step::Index(_) => None,
            })
            .collect()
    }
}

/// The parts of `item` that `paths` select.
pub fn project(item: &Item, paths: &[Path]) -> Item {
    Tree::of(paths).select_map(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str, names: Option<&Value>) -> AwsResult<Vec<Path>> {
        let mut n = Names::new(names);
        let paths = parse_paths(source, &mut n, "ProjectionExpression")?;
        n.check_all_used()?;
        Ok(paths)
    }

    #[test]
    fn paths_parse_with_names_members_and_indexes() {
        let names = Value::map().with("#n", "name");
        let paths = parse(" #n , a.b[2].c", Some(&names)).unwrap();
        assert_eq!(paths[0], vec![Step::Name("name".into())]);
        assert_eq!(
            paths[1],
            vec![
                Step::Name("a".into()),
                Step::Name("b".into()),
                Step::Index(2),
                Step::Name("c".into())
            ]
        );
    }

    #[test]
    fn bad_expressions_get_dynamodb_messages() {
        assert_eq!(
            parse("", None).unwrap_err().message,
            "Invalid ProjectionExpression: The expression can not be empty;"
        );
        assert_eq!(
            parse("#x", None).unwrap_err().message,
            "Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"
        );
        let names = Value::map().with("#a", "a").with("#b", "b");
        assert_eq!(
            parse("#a", Some(&names)).unwrap_err().message,
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}"
        );
        assert!(parse("a,,b", None).unwrap_err().message.starts_with(
            "Invalid ProjectionExpression: Syntax error; token: \",\", near: \",,b\""
        ));
        assert_eq!(
            parse("a, a.b", None).unwrap_err().message,
            "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"
        );
        assert!(parse("a[0], a.b", None)
            .unwrap_err()
            .message
            .contains("conflict"));
    }

    #[test]
    fn reserved_words_need_placeholders() {
        assert!(RESERVED_WORDS
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| w[0] < w[1]));
        assert_eq!(RESERVED_WORDS.lines().count(), 573);
        assert!(is_reserved("name") && is_reserved("Status") && !is_reserved("title"));
        assert_eq!(
            parse("id, name", None).unwrap_err().message,
            "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: name"
        );
        let names = Value::map().with("#n", "name");
        assert!(parse("#n", Some(&names)).is_ok());
    }

    #[test]
    fn projection_keeps_only_selected_parts() {
        let item = Item::from([
            (
                "a".into(),
                Attr::M(Item::from([
                    ("b".into(), Attr::Bool(true)),
                    ("c".into(), Attr::Null),
                ])),
            ),
            (
                "l".into(),
                Attr::L(vec![
                    Attr::S("x".into()),
                    Attr::S("y".into()),
                    Attr::S("z".into()),
                ]),
            ),
            ("other".into(), Attr::Null),
        ]);
        let paths = parse("a.b, l[2], l[0], absent", None).unwrap();
        let out = project(&item, &paths);
        assert_eq!(
            out,
            Item::from([
                (
                    "a".into(),
                    Attr::M(Item::from([("b".into(), Attr::Bool(true))]))
                ),
                (
                    "l".into(),
                    Attr::L(vec![Attr::S("x".into()), Attr::S("z".into())])
                ),
            ])
        );
    }
}
