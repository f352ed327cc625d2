//! The expression parser: tokens to a typed tree, with DynamoDB's checks and messages.
//!
//! Conditions (`ConditionExpression`, `FilterExpression`, `KeyConditionExpression`) follow
//! DynamoDB's precedence, loosest first: `OR`, `AND`, `NOT`, then comparisons, `BETWEEN`,
//! `IN` and functions, with parentheses for grouping. Update expressions are sections
//! (`SET`, `REMOVE`, `ADD`, `DELETE`), each at most once. Everything DynamoDB can refuse
//! without reading an item is refused here, in its words: placeholders that are not
//! defined, reserved words used as names, unknown or misused functions, operand counts and
//! the types of literal operands.
//!
//! Every operator and function counts against DynamoDB's limit of 300 ([`MAX_OPERATORS`])
//! as it is read. `AND`/`OR` chains, runs of `NOT` and runs of opening parentheses are read
//! in loops; the only recursion left, into parenthesised groups and function arguments,
//! stops at [`MAX_NESTING`] levels.

use roto_core::{AwsError, AwsResult};

use super::super::attr::Attr;
use super::super::projection::{check_overlaps, is_reserved, show_path, Path, Step};
use super::lex::{tokenize, Kind, Token};
use super::Placeholders;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparator {
    /// `=`
    Eq,
    /// `<>`
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

impl Comparator {
    fn of(token: &Token<'_>) -> Option<Comparator> {
        if token.kind != Kind::Punct {
            return None;
        }
        Some(match token.text {
            "=" => Comparator::Eq,
            "<>" => Comparator::Ne,
            "<" => Comparator::Lt,
            "<=" => Comparator::Le,
            ">" => Comparator::Gt,
            ">=" => Comparator::Ge,
            _ => return None,
        })
    }
}

/// A value in an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// An attribute of the item.
    Path(Path),
    /// An `ExpressionAttributeValues` entry.
    Value(Attr),
    /// `size(path)`.
    Size(Path),
    /// `if_not_exists(path, operand)`.
    IfNotExists(Path, Box<Operand>),
    /// `list_append(a, b)`.
    ListAppend(Box<Operand>, Box<Operand>),
    /// `a + b` (`true`) or `a - b` (`false`).
    Arithmetic(Box<Operand>, bool, Box<Operand>),
}

/// A condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `a OR b`
    Or(Box<Condition>, Box<Condition>),
    /// `a AND b`
    And(Box<Condition>, Box<Condition>),
    /// `NOT a`
    Not(Box<Condition>),
    /// `a <op> b`
    Compare(Operand, Comparator, Operand),
    /// `a BETWEEN b AND c`
    Between(Operand, Operand, Operand),
    /// `a IN (b, c, ...)`
    In(Operand, Vec<Operand>),
    /// `attribute_exists(path)`
    Exists(Path),
    /// `attribute_not_exists(path)`
    NotExists(Path),
    /// `attribute_type(path, :type)`
    Type(Path, String),
    /// `begins_with(a, b)`
    BeginsWith(Operand, Operand),
    /// `contains(a, b)`
    Contains(Operand, Operand),
}

/// An update expression's actions, by section.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    /// `SET path = value`
    pub set: Vec<(Path, Operand)>,
    /// `REMOVE path`
    pub remove: Vec<Path>,
    /// `ADD path :value`
    pub add: Vec<(Path, Attr)>,
    /// `DELETE path :set`
    pub delete: Vec<(Path, Attr)>,
}

impl Update {
    /// Every path the update writes, in the order written.
    pub fn paths(&self) -> Vec<&Path> {
        self.set
            .iter()
            .map(|(p, _)| p)
            .chain(&self.remove)
            .chain(self.add.iter().map(|(p, _)| p))
            .chain(self.delete.iter().map(|(p, _)| p))
            .collect()
    }
}

/// Where an operand appears, which decides the functions it may call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Condition,
    Update,
}

const CONDITION_FUNCTIONS: [&str; 5] = [
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
];
const UPDATE_FUNCTIONS: [&str; 2] = ["if_not_exists", "list_append"];
const TYPE_NAMES: &str = "B,NULL,SS,BOOL,L,BS,N,NS,S,M";

/// The most levels a document path may have: DynamoDB's attribute nesting limit.
pub const MAX_PATH_LEVELS: usize = 32;

/// The most operators and functions one expression may hold.
pub const MAX_OPERATORS: usize = 300;

/// The deepest nesting of parenthesised groups and function calls Roto reads. DynamoDB
/// documents no such limit (its operator limit allows at most 300 levels); Roto stops at
/// this many so that every level's frames fit in a worker thread's stack, even unoptimised.
pub const MAX_NESTING: usize = 32;

/// The long type names DynamoDB uses in messages about `ADD`, `DELETE` and arithmetic.
fn long_type(attr: &Attr) -> &'static str {
    match attr {
        Attr::S(_) => "STRING",
        Attr::N(_) => "NUMBER",
        Attr::B(_) => "BINARY",
        Attr::Ss(_) => "STRING_SET",
        Attr::Ns(_) => "NUMBER_SET",
        Attr::Bs(_) => "BINARY_SET",
        Attr::M(_) => "MAP",
        Attr::L(_) => "LIST",
        Attr::Null => "NULL",
        Attr::Bool(_) => "BOOLEAN",
    }
}

/// `{N:5}`, as DynamoDB shows a literal in BETWEEN messages.
fn show_value(attr: &Attr) -> String {
    let inner = match attr {
        Attr::S(s) => s.clone(),
        Attr::N(n) => n.to_string(),
        other => other.to_json().to_string(),
    };
    format!("{{{}:{inner}}}", attr.tag())
}

/// A parser over one expression of a request.
pub struct Parser<'s, 'p, 'r> {
    source: &'s str,
    tokens: Vec<Token<'s>>,
    /// For each `(` token, the index of its `)`.
    closings: Vec<Option<usize>>,
    at: usize,
    operators: usize,
    depth: usize,
    member: &'static str,
    placeholders: &'p mut Placeholders<'r>,
}

/// For each token, the index of the `)` that closes it when it is a `(`.
fn closings(tokens: &[Token<'_>]) -> Vec<Option<usize>> {
    let mut out = vec![None; tokens.len()];
    let mut open = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.is("(") {
            open.push(i);
        } else if t.is(")") {
            if let Some(o) = open.pop() {
                out[o] = Some(i);
            }
        }
    }
    out
}

impl<'s, 'p, 'r> Parser<'s, 'p, 'r> {
    /// A parser for `source`, the request member `member` (e.g. `ConditionExpression`).
    pub fn new(
        source: &'s str,
        member: &'static str,
        placeholders: &'p mut Placeholders<'r>,
    ) -> Parser<'s, 'p, 'r> {
        let tokens = tokenize(source);
        Parser {
            source,
            closings: closings(&tokens),
            tokens,
            at: 0,
            operators: 0,
            depth: 0,
            member,
            placeholders,
        }
    }

    /// `Invalid <member>: <message>`.
    pub fn invalid(&self, message: impl AsRef<str>) -> AwsError {
        AwsError::validation(format!("Invalid {}: {}", self.member, message.as_ref()))
    }

    fn syntax_error_at(&self, at: usize) -> AwsError {
        let Some(token) = self.tokens.get(at) else {
            let near = self.tokens.last().map(|t| t.text).unwrap_or_default();
            return self.invalid(format!("Syntax error; token: \"<EOF>\", near: \"{near}\""));
        };
        let start = at
            .checked_sub(1)
            .and_then(|p| self.tokens.get(p))
            .map_or(token.offset, |t| t.offset);
        let end = self
            .tokens
            .get(at + 1)
            .map_or(self.source.len(), |t| t.offset + t.text.len());
        self.invalid(format!(
            "Syntax error; token: \"{}\", near: \"{}\"",
            token.text,
            &self.source[start..end]
        ))
    }

    fn syntax_error(&self) -> AwsError {
        self.syntax_error_at(self.at)
    }

    fn peek(&self) -> Option<&Token<'s>> {
        self.tokens.get(self.at)
    }

    fn peek_is(&self, punct: &str) -> bool {
        self.peek().is_some_and(|t| t.is(punct))
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        self.peek().is_some_and(|t| t.is_keyword(keyword))
    }

    fn expect(&mut self, punct: &str) -> AwsResult<()> {
        if self.peek_is(punct) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    /// Counts one operator or function against [`MAX_OPERATORS`].
    fn count_operator(&mut self) -> AwsResult<()> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(self.invalid(format!(
                "The expression contains too many operators; operator count: {}",
                self.operators
            )));
        }
        Ok(())
    }

    fn check_not_empty(&self) -> AwsResult<()> {
        if self.tokens.is_empty() {
            return Err(self.invalid("The expression can not be empty;"));
        }
        Ok(())
    }

    fn expect_end(&self) -> AwsResult<()> {
        if self.at < self.tokens.len() {
            return Err(self.syntax_error());
        }
        Ok(())
    }

    // ------------------------------------------------------------------ paths

    fn path_element(&mut self) -> AwsResult<Step> {
        let Some(token) = self.peek().copied() else {
            return Err(self.syntax_error());
        };
        let step = match token.kind {
            Kind::Word if is_reserved(token.text) => {
                return Err(self.invalid(format!(
                    "Attribute name is a reserved keyword; reserved keyword: {}",
                    token.text
                )))
            }
            Kind::Word => Step::Name(token.text.to_string()),
            Kind::Name => Step::Name(self.placeholders.name(token.text, self.member)?),
            _ => return Err(self.syntax_error()),
        };
        self.at += 1;
        Ok(step)
    }

    /// A document path: `a`, `#n`, `a.b[2].#c`, at most [`MAX_PATH_LEVELS`] levels deep.
    fn path(&mut self) -> AwsResult<Path> {
        let path = self.path_steps()?;
        if path.len() > MAX_PATH_LEVELS {
            return Err(self.invalid(format!(
                "The document path has too many nesting levels; nesting levels: {}",
                path.len()
            )));
        }
        Ok(path)
    }

    fn path_steps(&mut self) -> AwsResult<Path> {
        let mut path = vec![self.path_element()?];
        loop {
            if self.peek_is(".") {
                self.at += 1;
                path.push(self.path_element()?);
            } else if self.peek_is("[") {
                self.at += 1;
                let index = match self.peek() {
                    Some(t) if t.kind == Kind::Digits => t.text.parse::<usize>().ok(),
                    _ => None,
                };
                let Some(index) = index else {
                    return Err(self.syntax_error());
                };
                self.at += 1;
                self.expect("]")?;
                path.push(Step::Index(index));
            } else {
                return Ok(path);
            }
        }
    }

    /// A comma-separated list of paths (a `ProjectionExpression`), without overlaps.
    pub fn projection(mut self) -> AwsResult<Vec<Path>> {
        self.check_not_empty()?;
        let mut paths = vec![self.path()?];
        while self.peek_is(",") {
            self.at += 1;
            paths.push(self.path()?);
        }
        self.expect_end()?;
        check_overlaps(&paths, self.member)?;
        Ok(paths)
    }

    // --------------------------------------------------------------- operands

    fn is_call(&self) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Word)
            && self.tokens.get(self.at + 1).is_some_and(|t| t.is("("))
    }

    fn arguments(&mut self, context: Context) -> AwsResult<Vec<Operand>> {
        self.expect("(")?;
        let mut args = vec![self.operand(context)?];
        while self.peek_is(",") {
            self.at += 1;
            args.push(self.operand(context)?);
        }
        self.expect(")")?;
        Ok(args)
    }

    fn arity(&self, function: &str, args: &[Operand], count: usize) -> AwsResult<()> {
        if args.len() != count {
            return Err(self.invalid(format!(
                "Incorrect number of operands for operator or function; operator or function: {function}, number of operands: {}",
                args.len()
            )));
        }
        Ok(())
    }

    fn require_path(&self, function: &str, operand: Operand) -> AwsResult<Path> {
        match operand {
            Operand::Path(p) => Ok(p),
            _ => Err(self.invalid(format!(
                "Operator or function requires a document path; operator or function: {function}"
            ))),
        }
    }

    fn operand_type_error(&self, function: &str, attr: &Attr) -> AwsError {
        self.invalid(format!(
            "Incorrect operand type for operator or function; operator or function: {function}, operand type: {}",
            attr.tag()
        ))
    }

    fn distinct(&self, operator: &str, first: &Operand, rest: &[&Operand]) -> AwsResult<()> {
        if let Operand::Path(p) = first {
            if rest.iter().any(|o| matches!(o, Operand::Path(q) if q == p)) {
                return Err(self.invalid(format!(
                    "The first operand must be distinct from the remaining operands for this operator or function; operator: {operator}, first operand: {}",
                    show_path(p)
                )));
            }
        }
        Ok(())
    }

    fn misused(&self, function: &str) -> AwsError {
        self.invalid(format!(
            "The function is not allowed to be used this way in an expression; function: {function}"
        ))
    }

    /// One operand, in a condition or on the right of an update's `SET`.
    fn operand(&mut self, context: Context) -> AwsResult<Operand> {
        let Some(token) = self.peek().copied() else {
            return Err(self.syntax_error());
        };
        if token.kind == Kind::Value {
            self.at += 1;
            return Ok(Operand::Value(
                self.placeholders.value(token.text, self.member)?,
            ));
        }
        if !self.is_call() {
            return Ok(Operand::Path(self.path()?));
        }
        self.nested(|p| p.call(context, token.text))
    }

    /// Reads with `read` one level of nesting deeper, refusing to pass [`MAX_NESTING`].
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> AwsResult<T>) -> AwsResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(self.invalid(format!(
                "The expression is nested too deeply; maximum depth: {MAX_NESTING}"
            )));
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
    }

    /// A function call operand, from its name.
    fn call(&mut self, context: Context, function: &'s str) -> AwsResult<Operand> {
        self.at += 1;
        let known = CONDITION_FUNCTIONS.contains(&function)
            || UPDATE_FUNCTIONS.contains(&function)
            || function == "size";
        if !known {
            return Err(self.invalid(format!("Invalid function name; function: {function}")));
        }
        self.count_operator()?;
        match (context, function) {
            (Context::Condition, "size") => {
                let mut args = self.arguments(context)?;
                self.arity(function, &args, 1)?;
                Ok(Operand::Size(self.require_path(function, args.remove(0))?))
            }
            (Context::Update, "if_not_exists") => {
                let mut args = self.arguments(context)?;
                self.arity(function, &args, 2)?;
                let fallback = args.remove(1);
                let path = self.require_path(function, args.remove(0))?;
                Ok(Operand::IfNotExists(path, Box::new(fallback)))
            }
            (Context::Update, "list_append") => {
                let mut args = self.arguments(context)?;
                self.arity(function, &args, 2)?;
                for arg in &args {
                    if let Operand::Value(v) = arg {
                        if !matches!(v, Attr::L(_)) {
                            return Err(self.operand_type_error(function, v));
                        }
                    }
                }
                let second = args.remove(1);
                Ok(Operand::ListAppend(
                    Box::new(args.remove(0)),
                    Box::new(second),
                ))
            }
            (Context::Update, _) => Err(self.invalid(format!(
                "The function is not allowed in an update expression; function: {function}"
            ))),
            (Context::Condition, f) if UPDATE_FUNCTIONS.contains(&f) => Err(self.invalid(format!(
                "The function is not allowed in a condition expression; function: {f}"
            ))),
            (Context::Condition, f) => Err(self.misused(f)),
        }
    }

    // ------------------------------------------------------------- conditions

    /// A whole condition expression.
    pub fn condition(mut self) -> AwsResult<Condition> {
        self.check_not_empty()?;
        let condition = self.or()?;
        self.expect_end()?;
        Ok(condition)
    }

    fn or(&mut self) -> AwsResult<Condition> {
        let left = self.and()?;
        self.or_from(left)
    }

    /// The rest of an `OR` chain whose first operand is `left`.
    fn or_from(&mut self, mut left: Condition) -> AwsResult<Condition> {
        while self.peek_keyword("OR") {
            self.at += 1;
            self.count_operator()?;
            let right = self.and()?;
            left = Condition::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> AwsResult<Condition> {
        let left = self.not()?;
        self.and_from(left)
    }

    /// The rest of an `AND` chain whose first operand is `left`.
    fn and_from(&mut self, mut left: Condition) -> AwsResult<Condition> {
        while self.peek_keyword("AND") {
            self.at += 1;
            self.count_operator()?;
            let right = self.not()?;
            left = Condition::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// A run of `NOT`s (read in one frame) and the condition they negate.
    fn not(&mut self) -> AwsResult<Condition> {
        let mut nots = 0;
        while self.peek_keyword("NOT") {
            self.at += 1;
            self.count_operator()?;
            nots += 1;
        }
        let mut condition = self.primary()?;
        for _ in 0..nots {
            condition = Condition::Not(Box::new(condition));
        }
        Ok(condition)
    }

    /// The index of the `)` closing the `(` at `open`.
    fn closing(&self, open: usize) -> Option<usize> {
        self.closings.get(open).copied().flatten()
    }

    /// A run of `(` and the conditions they group, read in one frame however long the run
    /// is: each level's content is the innermost condition continued by that level's `AND`
    /// and `OR` operands, exactly as the recursive reading would find them.
    fn parenthesised(&mut self) -> AwsResult<Condition> {
        let mut opens = 0usize;
        while self.peek_is("(") {
            let open = self.at;
            if self.tokens.get(open + 1).is_some_and(|t| t.is("("))
                && self
                    .closing(open)
                    .is_some_and(|close| self.closing(open + 1) == Some(close - 1))
            {
                return Err(self.invalid("The expression has redundant parentheses;"));
            }
            self.at += 1;
            opens += 1;
        }
        let mut inner = self.or()?;
        self.expect(")")?;
        for _ in 1..opens {
            let continued = self.and_from(inner)?;
            inner = self.or_from(continued)?;
            self.expect(")")?;
        }
        Ok(inner)
    }

    /// A parenthesised condition or a predicate. Kept apart from [`Parser::predicate`] so
    /// that the frames nested parentheses stack stay small.
    fn primary(&mut self) -> AwsResult<Condition> {
        if self.peek_is("(") {
            self.nested(Parser::parenthesised)
        } else {
            self.predicate()
        }
    }

    /// A comparison, `BETWEEN`, `IN` or condition function.
    fn predicate(&mut self) -> AwsResult<Condition> {
        if self.is_call() {
            let function = self.peek().map(|t| t.text).unwrap_or_default();
            if CONDITION_FUNCTIONS.contains(&function) {
                self.at += 1;
                self.count_operator()?;
                let condition = self.function_condition(function)?;
                if self.peek().is_some_and(|t| {
                    Comparator::of(t).is_some() || t.is_keyword("BETWEEN") || t.is_keyword("IN")
                }) {
                    return Err(self.misused(function));
                }
                return Ok(condition);
            }
        }
        let left = self.operand(Context::Condition)?;
        let Some(token) = self.peek().copied() else {
            return Err(self.bare_operand(&left));
        };
        if let Some(comparator) = Comparator::of(&token) {
            self.at += 1;
            self.count_operator()?;
            let right = self.operand(Context::Condition)?;
            self.distinct(token.text, &left, &[&right])?;
            if !matches!(comparator, Comparator::Eq | Comparator::Ne) {
                self.orderable(token.text, &[&left, &right])?;
            }
            return Ok(Condition::Compare(left, comparator, right));
        }
        if token.is_keyword("BETWEEN") {
            self.at += 1;
            self.count_operator()?;
            let low = self.operand(Context::Condition)?;
            if !self.peek_keyword("AND") {
                return Err(self.syntax_error());
            }
            self.at += 1;
            let high = self.operand(Context::Condition)?;
            self.orderable("BETWEEN", &[&left, &low, &high])?;
            self.check_bounds(&low, &high)?;
            return Ok(Condition::Between(left, low, high));
        }
        if token.is_keyword("IN") {
            self.at += 1;
            self.count_operator()?;
            let list = self.arguments(Context::Condition)?;
            if list.len() > 100 {
                return Err(self.invalid(format!(
                    "The IN operator is provided with too many operands; number of operands: {}",
                    list.len()
                )));
            }
            return Ok(Condition::In(left, list));
        }
        Err(self.bare_operand(&left))
    }

    /// An operand standing where a condition belongs.
    fn bare_operand(&self, operand: &Operand) -> AwsError {
        match operand {
            Operand::Size(_) => self.misused("size"),
            _ => self.syntax_error(),
        }
    }

    /// Refuses a constant an ordering operator cannot compare (only strings, numbers and
    /// binaries have an order); attributes of other types just fail the comparison.
    fn orderable(&self, operator: &str, operands: &[&Operand]) -> AwsResult<()> {
        for operand in operands {
            if let Operand::Value(attr) = operand {
                if !matches!(attr, Attr::S(_) | Attr::N(_) | Attr::B(_)) {
                    return Err(self.operand_type_error(operator, attr));
                }
            }
        }
        Ok(())
    }

    fn check_bounds(&self, low: &Operand, high: &Operand) -> AwsResult<()> {
        let (Operand::Value(l), Operand::Value(h)) = (low, high) else {
            return Ok(());
        };
        let shown = format!(
            "lower bound operand: AttributeValue: {}, upper bound operand: AttributeValue: {}",
            show_value(l),
            show_value(h)
        );
        if l.tag() != h.tag() {
            return Err(self.invalid(format!(
                "The BETWEEN operator requires same data type for lower and upper bounds; {shown}"
            )));
        }
        if super::eval::compare(l, h) == Some(std::cmp::Ordering::Greater) {
            return Err(self.invalid(format!(
                "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; {shown}"
            )));
        }
        Ok(())
    }

    fn function_condition(&mut self, function: &str) -> AwsResult<Condition> {
        let mut args = self.arguments(Context::Condition)?;
        match function {
            "attribute_exists" | "attribute_not_exists" => {
                self.arity(function, &args, 1)?;
                let path = self.require_path(function, args.remove(0))?;
                Ok(if function == "attribute_exists" {
                    Condition::Exists(path)
                } else {
                    Condition::NotExists(path)
                })
            }
            "attribute_type" => {
                self.arity(function, &args, 2)?;
                let kind = match &args[1] {
                    Operand::Value(Attr::S(s)) => s.clone(),
                    Operand::Value(other) => return Err(self.operand_type_error(function, other)),
                    _ => {
                        return Err(self.invalid(format!(
                            "Incorrect operand type for operator or function; operator or function: {function}, operand type: {{{TYPE_NAMES}}}"
                        )))
                    }
                };
                if !TYPE_NAMES.split(',').any(|t| t == kind) {
                    return Err(self.invalid(format!(
                        "Invalid attribute type name found; type: {kind}, valid types: {{{TYPE_NAMES}}}"
                    )));
                }
                let path = self.require_path(function, args.remove(0))?;
                Ok(Condition::Type(path, kind))
            }
            _ => {
                self.arity(function, &args, 2)?;
                self.distinct(function, &args[0], &[&args[1]])?;
                if function == "begins_with" {
                    for arg in &args {
                        if let Operand::Value(v) = arg {
                            if !matches!(v, Attr::S(_) | Attr::B(_)) {
                                return Err(self.operand_type_error(function, v));
                            }
                        }
                    }
                }
                let second = args.remove(1);
                let first = args.remove(0);
                Ok(if function == "begins_with" {
                    Condition::BeginsWith(first, second)
                } else {
                    Condition::Contains(first, second)
                })
            }
        }
    }

    // ----------------------------------------------------------------- update

    /// A whole update expression.
    pub fn update(mut self) -> AwsResult<Update> {
        self.check_not_empty()?;
        let mut update = Update::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(token) = self.peek().copied() {
            let section = ["SET", "REMOVE", "ADD", "DELETE"]
                .into_iter()
                .find(|s| token.is_keyword(s))
                .ok_or_else(|| self.syntax_error())?;
            if seen.contains(&section) {
                return Err(self.invalid(format!(
                    "The \"{section}\" section can only be used once in an update expression;"
                )));
            }
            seen.push(section);
            self.at += 1;
            loop {
                self.action(section, &mut update)?;
                if !self.peek_is(",") {
                    break;
                }
                self.at += 1;
            }
        }
        let paths: Vec<Path> = update.paths().into_iter().cloned().collect();
        check_overlaps(&paths, self.member)?;
        Ok(update)
    }

    fn action(&mut self, section: &str, update: &mut Update) -> AwsResult<()> {
        let path = self.path()?;
        match section {
            "SET" => {
                self.expect("=")?;
                let value = self.set_value()?;
                update.set.push((path, value));
            }
            "REMOVE" => update.remove.push(path),
            _ => {
                let Some(token) = self.peek().copied().filter(|t| t.kind == Kind::Value) else {
                    return Err(self.syntax_error());
                };
                self.at += 1;
                let value = self.placeholders.value(token.text, self.member)?;
                let fits = match section {
                    "ADD" => matches!(value, Attr::N(_) | Attr::Ss(_) | Attr::Ns(_) | Attr::Bs(_)),
                    _ => matches!(value, Attr::Ss(_) | Attr::Ns(_) | Attr::Bs(_)),
                };
                if !fits {
                    return Err(self.invalid(format!(
                        "Incorrect operand type for operator or function; operator: {section}, operand type: {}",
                        long_type(&value)
                    )));
                }
                if section == "ADD" {
                    update.add.push((path, value));
                } else {
                    update.delete.push((path, value));
                }
            }
        }
        Ok(())
    }

    fn set_value(&mut self) -> AwsResult<Operand> {
        let mut value = self.operand(Context::Update)?;
        while self.peek_is("+") || self.peek_is("-") {
            let plus = self.peek_is("+");
            self.at += 1;
            self.count_operator()?;
            let right = self.operand(Context::Update)?;
            for side in [&value, &right] {
                if let Operand::Value(v) = side {
                    if !matches!(v, Attr::N(_)) {
                        return Err(self.operand_type_error(if plus { "+" } else { "-" }, v));
                    }
                }
            }
            value = Operand::Arithmetic(Box::new(value), plus, Box::new(right));
        }
        Ok(value)
    }
}
