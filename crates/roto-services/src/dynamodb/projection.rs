//! Projection expressions: document paths, `#name` substitution, and applying them.
//!
//! A `ProjectionExpression` is a comma-separated list of document paths (`a`, `#n`,
//! `a.b[2].c`). [`Names`] resolves `#placeholders` from `ExpressionAttributeNames` and
//! remembers which were used, so a request can be refused for unused names as DynamoDB
//! does once every expression in it has been read. The expression parser
//! ([`super::expr`]) reads the paths; this module applies them.

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

    /// The name `placeholder` stands for, remembered as used.
    pub fn resolve(&mut self, placeholder: &str, expression: &str) -> AwsResult<String> {
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

/// `[a, b, [2]]`, as DynamoDB shows a path in messages.
pub fn show_path(path: &Path) -> String {
    let steps: Vec<String> = path
        .iter()
        .map(|s| match s {
            Step::Name(n) => n.clone(),
            Step::Index(i) => format!("[{i}]"),
        })
        .collect();
    format!("[{}]", steps.join(", "))
}

/// Refuses two paths of one expression that overlap (`a`, `a.b`) or conflict (`a[0]`, `a.b`).
pub fn check_overlaps(paths: &[Path], expression: &str) -> AwsResult<()> {
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
                show_path(b),
                show_path(a)
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
    use super::super::expr::Placeholders;
    use super::*;

    fn parse(source: &str, names: Option<&Value>) -> AwsResult<Vec<Path>> {
        let input = Value::map()
            .with("ProjectionExpression", source)
            .with_opt("ExpressionAttributeNames", names.cloned());
        let mut placeholders = Placeholders::new(&input)?;
        let paths = placeholders.projection(&input, "ProjectionExpression")?;
        placeholders.check_all_used()?;
        Ok(paths.unwrap_or_default())
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
