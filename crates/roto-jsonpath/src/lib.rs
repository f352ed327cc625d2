//! JSONPath as Step Functions and API Gateway read it, over `serde_json` values.
//!
//! # Why this crate exists
//!
//! Step Functions' `InputPath`, `Parameters` (`"x.$": "$.a"`), `ResultSelector`,
//! `ResultPath` and `OutputPath`, and API Gateway's `$input.path()` and `$input.json()` in
//! mapping templates, all read JSONPath the way the Java library Jayway JsonPath does. Both
//! services need the same reader, so it lives here, apart from them; this crate knows nothing
//! of Roto.
//!
//! # How to use it
//!
//! Parse once with [`Path::parse`], then:
//! - [`Path::select`] gives every match, as references into the document;
//! - [`Path::get`] gives the single match of a definite path ([`Path::is_definite`]);
//! - [`Path::evaluate`] gives what Step Functions gives: the value of a definite path, the
//!   array of matches of an indefinite one, and the results of functions such as `length()`;
//! - [`Path::set`] writes a value at a definite reference path (Step Functions' `ResultPath`).
//!
//! ```
//! use roto_jsonpath::Path;
//! use serde_json::json;
//!
//! let doc = json!({"book": [{"price": 8}, {"price": 12}]});
//! let cheap = Path::parse("$.book[?(@.price < 10)]").expect("a path");
//! assert_eq!(cheap.evaluate(&doc), Some(json!([{"price": 8}])));
//! ```
//!
//! # Bounds and differences
//!
//! A path is at most [`MAX_PATH_LEN`] bytes and [`MAX_STEPS`] steps, and nests filters and parentheses at most
//! [`MAX_DEPTH`] deep. An evaluation visits at most [`MAX_WORK`] nodes and stops there (a
//! path such as `$..*..*..*` otherwise grows with the cube of the document). Objects are
//! `serde_json` maps, which keep their members sorted by name, so `.*` and `..` list members
//! in name order where Jayway lists them in document order. Slices take an optional step
//! (`[::2]`, as RFC 9535 reads it), which Jayway lacks. Filters read Jayway's operators:
//! `==`, `!=`, `<`, `<=`, `>`, `>=`, `=~ /regex/i` (a whole-string match, patterns of at
//! most [`MAX_REGEX_LEN`] bytes), `in`, `nin`, `subsetof`, `anyof`, `noneof`, `size`, `empty`.

mod eval;
mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::{Map, Value};

/// The longest path text [`Path::parse`] reads, in bytes.
pub const MAX_PATH_LEN: usize = 16 * 1024;
/// How deep filters, parentheses and negations nest in one path.
pub const MAX_DEPTH: usize = 32;
/// How many steps one path has at most (a value [`Path::set`] builds, and so its depth,
/// stays within this).
pub const MAX_STEPS: usize = 256;
/// The longest `=~` pattern (the regex engine's stack use grows with its size).
pub const MAX_REGEX_LEN: usize = 1024;
/// How many nodes one evaluation visits at most.
pub const MAX_WORK: usize = 4_000_000;

/// A parsed JSONPath.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    text: String,
    context: bool,
    steps: Vec<Step>,
    function: Option<Function>,
}

/// One step of a path: a selector applied to the current nodes or to all their descendants.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Child(Selector),
    Descend(Selector),
}

/// What a step picks out of a node.
#[derive(Debug, Clone, PartialEq)]
enum Selector {
    Name(String),
    Names(Vec<String>),
    Index(i64),
    Indexes(Vec<i64>),
    Wildcard,
    Slice(Slice),
    Filter(Box<Filter>),
}

/// `[start:end:step]`, each part optional.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slice {
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
}

/// The test of a `[?(...)]` filter.
#[derive(Debug, Clone, PartialEq)]
enum Filter {
    Or(Vec<Filter>),
    And(Vec<Filter>),
    Not(Box<Filter>),
    Exists(Operand),
    Compare(Operand, Comparison, Operand),
    /// `@.name =~ /regex/flags`: the whole string matches, as Java's `matches()`.
    Matches(Operand, Pattern),
}

/// A compiled `=~` pattern, compared by its text.
#[derive(Debug, Clone)]
struct Pattern(regex_lite::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// A side of a filter comparison.
#[derive(Debug, Clone, PartialEq)]
enum Operand {
    /// `@...`, relative to the node under test.
    Current(Path),
    /// `$...`, relative to the document.
    Root(Path),
    Literal(Value),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Comparison {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Nin,
    SubsetOf,
    AnyOf,
    NoneOf,
    Size,
    Empty,
}

/// The functions Jayway applies at the end of a path (`$.list.length()`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Function {
    Length,
    Min,
    Max,
    Avg,
    Sum,
    Keys,
    First,
    Last,
}

/// Why a path does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset in the path text where reading stopped.
    pub position: usize,
    /// What was wrong there.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at position {}", self.reason, self.position)
    }
}

impl std::error::Error for ParseError {}

/// Why [`Path::set`] could not write its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetError {
    /// What stood in the way (Step Functions reports it as `States.ResultPathMatchFailure`).
    pub reason: String,
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for SetError {}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Path {
    /// Reads a path starting with `$` (or `$$`, Step Functions' context object).
    pub fn parse(text: &str) -> Result<Path, ParseError> {
        parse::parse(text)
    }

    /// The text the path was read from.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the path names at most one node: only member names and indexes, no
    /// wildcards, slices, unions, filters or descendants.
    pub fn is_definite(&self) -> bool {
        steps_definite(&self.steps)
    }

    /// Whether the path starts with `$$` (the caller passes the context object as the root).
    pub fn is_context(&self) -> bool {
        self.context
    }

    /// Every node the path matches, in the order Jayway gives them.
    ///
    /// Results of a trailing function (`length()`) are computed rather than found, so a path
    /// ending in one selects nothing here; use [`Path::evaluate`].
    pub fn select<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        if self.function.is_some() {
            return Vec::new();
        }
        eval::Walker::new(root).steps(root, &self.steps)
    }

    /// The node a definite path names; `None` when a member or index is missing, or when the
    /// path is not definite or ends in a function.
    pub fn get<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        if !self.is_definite() {
            return None;
        }
        self.select(root).into_iter().next()
    }

    /// What Step Functions makes of the path: the value of a definite path (`None` when it
    /// is missing), the array of matches of an indefinite one, the result of a function,
    /// and for a trailing member union (`$['a','b']`) the objects of those members.
    pub fn evaluate(&self, root: &Value) -> Option<Value> {
        eval::Walker::new(root)
            .resolve(self, root)
            .map(|v| v.into_owned())
    }

    /// Writes `value` where the definite path points: `$` replaces the root, missing
    /// intermediate objects are created, an existing member is replaced.
    ///
    /// Fails when the path is not a definite reference path (context paths, functions,
    /// wildcards...), when a step meets a value that is not an object (for a name) or not an
    /// array (for an index), or when an index is beyond the array.
    pub fn set(&self, root: &mut Value, value: Value) -> Result<(), SetError> {
        if self.context || self.function.is_some() || !self.is_definite() {
            return Err(SetError {
                reason: format!("{} is not a reference path", self.text),
            });
        }
        let mut probe = Some(&*root);
        for step in &self.steps {
            probe = settable(probe, step)?;
        }
        let mut node = root;
        for (at, step) in self.steps.iter().enumerate() {
            node = step_mut(node, step, at + 1 < self.steps.len())?;
        }
        *node = value;
        Ok(())
    }
}

fn steps_definite(steps: &[Step]) -> bool {
    steps.iter().all(|step| {
        matches!(
            step,
            Step::Child(Selector::Name(_)) | Step::Child(Selector::Index(_))
        )
    })
}

/// Checks that `step` can be written under `node` (`None`: a member about to be created),
/// so that a failing [`Path::set`] leaves the document as it was.
fn settable<'v>(node: Option<&'v Value>, step: &Step) -> Result<Option<&'v Value>, SetError> {
    match (step, node) {
        (Step::Child(Selector::Name(name)), Some(Value::Object(members))) => Ok(members.get(name)),
        (Step::Child(Selector::Name(_)), None) => Ok(None),
        (Step::Child(Selector::Index(index)), Some(Value::Array(items))) => {
            match eval::resolve_index(*index, items.len()) {
                Some(at) => Ok(items.get(at)),
                None => Err(beyond(*index, items.len())),
            }
        }
        (Step::Child(Selector::Index(index)), None) => Err(not_array(*index)),
        (Step::Child(Selector::Name(name)), Some(_)) => Err(not_object(name)),
        (Step::Child(Selector::Index(index)), Some(_)) => Err(not_array(*index)),
        _ => Err(SetError {
            reason: "not a reference path".to_string(),
        }),
    }
}

fn beyond(index: i64, len: usize) -> SetError {
    SetError {
        reason: format!("index {index} is beyond an array of {len}"),
    }
}

fn not_object(name: &str) -> SetError {
    SetError {
        reason: format!("cannot set member '{name}' of a value that is not an object"),
    }
}

fn not_array(index: i64) -> SetError {
    SetError {
        reason: format!("cannot set index {index} of a value that is not an array"),
    }
}

/// The slot a definite step names under `node`, created when it is a missing member.
/// Intermediate members start as empty objects.
fn step_mut<'v>(
    node: &'v mut Value,
    step: &Step,
    intermediate: bool,
) -> Result<&'v mut Value, SetError> {
    match step {
        Step::Child(Selector::Name(name)) => {
            let Value::Object(members) = node else {
                return Err(not_object(name));
            };
            let fresh = if intermediate {
                Value::Object(Map::new())
            } else {
                Value::Null
            };
            Ok(members.entry(name.clone()).or_insert(fresh))
        }
        Step::Child(Selector::Index(index)) => {
            let Value::Array(items) = node else {
                return Err(not_array(*index));
            };
            let len = items.len();
            eval::resolve_index(*index, len)
                .and_then(|at| items.get_mut(at))
                .ok_or_else(|| beyond(*index, len))
        }
        _ => Err(SetError {
            reason: "not a reference path".to_string(),
        }),
    }
}
