//! The Logs Insights query language, the subset StartQuery runs.
//!
//! A query is commands joined by `|`, run in order over the records of the time range:
//! - `fields a, b, expr as name`: the fields shown (computed ones added to each record);
//!   `display a, b` replaces the list. Without either, rows show `@timestamp` and `@message`.
//! - `filter expr`: comparisons (`=`, `!=`, `<`, `<=`, `>`, `>=`, numbers compared as
//!   numbers), `like "substring"`, `like /regex/` and `=~ /regex/`, `in [...]`, `not`, `and`,
//!   `or`, parentheses, and the functions `ispresent`, `isempty`, `isblank`, `tolower`,
//!   `toupper`, `strlen`, `concat`, `abs`, `floor`, `ceil`.
//! - `parse field "text * text" as a, b` (each `*` one field) or `parse field /(?<a>..)/`.
//! - `stats count(*), count(f), count_distinct(f), sum(f), avg(f), min(f), max(f) [as name]
//!   [by expr, bin(5m), ...]`.
//! - `sort key [asc|desc], ...` and `limit n`.
//!
//! A record's fields are `@timestamp`, `@message`, `@logStream`, `@log`, `@ingestionTime`,
//! `@ptr` and, for a message that is a JSON object, its members flattened as `a.b`.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use regex_lite::Regex;

/// A field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// Text.
    Str(String),
    /// A number.
    Num(f64),
    /// A time, in epoch milliseconds (shown as `2024-01-02 03:04:05.006`).
    Time(i64),
    /// A truth value (from functions such as `ispresent`).
    Bool(bool),
}

impl Datum {
    /// The value as a result row shows it.
    pub fn text(&self) -> String {
        match self {
            Datum::Str(s) => s.clone(),
            Datum::Num(n) => number_text(*n),
            Datum::Time(ms) => time_text(*ms),
            Datum::Bool(b) => u8::from(*b).to_string(),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Datum::Num(n) => Some(*n),
            Datum::Time(ms) => Some(*ms as f64),
            Datum::Str(s) => s.trim().parse().ok(),
            Datum::Bool(b) => Some(f64::from(u8::from(*b))),
        }
    }
}

/// A number as Insights shows it: integers without a fraction.
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// A time as Insights shows it: `2024-01-02 03:04:05.006`.
pub fn time_text(ms: i64) -> String {
    roto_core::timestamp::format(ms, roto_core::timestamp::TimestampFormat::Iso8601)
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// One record: its fields by name.
pub type Record = BTreeMap<String, Datum>;

/// A query that does not parse: the message and the offending characters' offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryError {
    /// What is wrong.
    pub message: String,
    /// The first offending character.
    pub start: usize,
    /// One past the last offending character.
    pub end: usize,
}

/// A parsed query.
#[derive(Debug)]
pub struct Query {
    commands: Vec<Command>,
}

#[derive(Debug)]
enum Command {
    Fields(Vec<(Expr, String)>),
    Display(Vec<String>),
    Filter(Expr),
    Parse {
        source: String,
        pattern: Regex,
        names: Vec<String>,
    },
    Stats {
        aggregates: Vec<(Aggregate, Option<Expr>, String)>,
        by: Vec<(Expr, String)>,
    },
    Sort(Vec<(Expr, String, bool)>),
    Limit(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    Count,
    CountDistinct,
    Sum,
    Avg,
    Min,
    Max,
}

#[derive(Debug)]
enum Expr {
    Field(String),
    Literal(Datum),
    Duration(i64),
    Star,
    Compare(Box<Expr>, Cmp, Box<Expr>),
    Matches(Box<Expr>, Matcher),
    In(Box<Expr>, Vec<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug)]
enum Matcher {
    Substring(String),
    Regex(Regex),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str(String),
    Num(f64),
    Regex(String),
    Duration(i64),
    Sym(&'static str),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

const SYMBOLS: &[&str] = &[
    "=~", "!=", "<=", ">=", "|", ",", "(", ")", "[", "]", "*", "=", "<", ">",
];

fn error(message: impl Into<String>, start: usize, end: usize) -> QueryError {
    QueryError {
        message: message.into(),
        start,
        end,
    }
}

/// A duration's milliseconds, from a number and a unit (`ms`, `s`, `m`, `h`, `d`).
fn duration_ms(value: f64, unit: &str) -> Option<i64> {
    let scale = match unit {
        "ms" => 1.0,
        "s" | "sec" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" | "hr" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    Some((value * scale) as i64)
}

fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    let is_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'@' | b'$');
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let tok = if c == b'"' || c == b'\'' {
            let mut value = String::new();
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return Err(error("unterminated string", start, text.len())),
                    Some(&b) if b == c => break,
                    Some(b'\\') if i + 1 < bytes.len() => {
                        let ch = text[i + 1..].chars().next().unwrap_or_default();
                        value.push(ch);
                        i += 1 + ch.len_utf8();
                        continue;
                    }
                    Some(_) => {
                        let ch = text[i..].chars().next().unwrap_or_default();
                        value.push(ch);
                        i += ch.len_utf8();
                        continue;
                    }
                }
            }
            i += 1;
            Tok::Str(value)
        } else if c == b'/' {
            let close = text[i + 1..]
                .find('/')
                .ok_or_else(|| error("unterminated regular expression", start, text.len()))?;
            i += close + 2;
            Tok::Regex(text[start + 1..i - 1].to_string())
        } else if c == b'`' {
            let close = text[i + 1..]
                .find('`')
                .ok_or_else(|| error("unterminated field name", start, text.len()))?;
            i += close + 2;
            Tok::Name(text[start + 1..i - 1].to_string())
        } else if c.is_ascii_digit()
            || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            let value: f64 = text[start..i]
                .parse()
                .map_err(|_| error(format!("invalid number {}", &text[start..i]), start, i))?;
            let unit_end = (i..bytes.len())
                .find(|&j| !bytes[j].is_ascii_alphabetic())
                .unwrap_or(bytes.len());
            match duration_ms(value, &text[i..unit_end]) {
                Some(ms) if unit_end > i => {
                    i = unit_end;
                    Tok::Duration(ms)
                }
                _ if unit_end > i => {
                    while i < bytes.len() && is_name(bytes[i]) {
                        i += 1;
                    }
                    Tok::Name(text[start..i].to_string())
                }
                _ => Tok::Num(value),
            }
        } else if is_name(c) {
            while i < bytes.len() && is_name(bytes[i]) {
                i += 1;
            }
            Tok::Name(text[start..i].to_string())
        } else if let Some(sym) = SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            i += sym.len();
            Tok::Sym(sym)
        } else {
            let ch = text[i..].chars().next().unwrap_or_default();
            return Err(error(
                format!("unexpected symbol found {ch} at position {start}"),
                start,
                start + ch.len_utf8(),
            ));
        };
        tokens.push(Token { tok, start, end: i });
    }
    Ok(tokens)
}

/// The deepest nesting of parentheses, `not`s and function calls a query may have; `and`
/// and `or` chains are balanced trees, so no query drives the parser or the evaluator
/// deeper than this.
const MAX_NESTING: usize = 32;

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    fn at_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(n)) if n.eq_ignore_ascii_case(word))
    }

    fn at_sym(&self, sym: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(s)) if *s == sym)
    }

    fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.at_keyword(word);
        self.at += usize::from(found);
        found
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        let found = self.at_sym(sym);
        self.at += usize::from(found);
        found
    }

    /// Where the next token starts (the text's end past the last).
    fn offset(&self) -> usize {
        self.tokens
            .get(self.at)
            .map_or(self.text.len(), |t| t.start)
    }

    fn unexpected(&self) -> QueryError {
        match self.tokens.get(self.at) {
            Some(t) => error(
                format!(
                    "unexpected symbol found {} at position {}",
                    &self.text[t.start..t.end],
                    t.start
                ),
                t.start,
                t.end,
            ),
            None => error("unexpected end of query", self.text.len(), self.text.len()),
        }
    }

    fn expect_sym(&mut self, sym: &str) -> Result<(), QueryError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn name(&mut self) -> Result<String, QueryError> {
        match self.peek() {
            Some(Tok::Name(n)) => {
                let n = n.clone();
                self.at += 1;
                Ok(n)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// The source text from `start` to the end of the last token read.
    fn text_since(&self, start: usize) -> String {
        let end = self.tokens[..self.at].last().map_or(start, |t| t.end);
        self.text[start..end.max(start)].trim().to_string()
    }

    fn query(&mut self) -> Result<Query, QueryError> {
        let mut commands = Vec::new();
        loop {
            if self.peek().is_none() {
                if commands.is_empty() {
                    break;
                }
                return Err(self.unexpected());
            }
            commands.push(self.command()?);
            if self.peek().is_none() {
                break;
            }
            self.expect_sym("|")?;
        }
        Ok(Query { commands })
    }

    fn command(&mut self) -> Result<Command, QueryError> {
        let start = self.offset();
        let word = self.name()?.to_ascii_lowercase();
        let command = match word.as_str() {
            "fields" => Command::Fields(self.projections()?),
            "display" => Command::Display(
                self.projections()?
                    .into_iter()
                    .map(|(_, name)| name)
                    .collect(),
            ),
            "filter" => Command::Filter(self.or()?),
            "parse" => self.parse_command()?,
            "stats" => self.stats()?,
            "sort" => {
                let mut keys = Vec::new();
                loop {
                    let key_start = self.offset();
                    let expr = self.operand()?;
                    let text = self.text_since(key_start);
                    let descending = if self.eat_keyword("desc") {
                        true
                    } else {
                        self.eat_keyword("asc");
                        false
                    };
                    keys.push((expr, text, descending));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                Command::Sort(keys)
            }
            "limit" => match self.peek() {
                Some(Tok::Num(n)) if *n >= 1.0 && n.fract() == 0.0 => {
                    let n = *n as usize;
                    self.at += 1;
                    Command::Limit(n)
                }
                _ => return Err(self.unexpected()),
            },
            other => {
                return Err(error(
                    format!("unexpected symbol found {other} at position {start}"),
                    start,
                    start + other.len(),
                ))
            }
        };
        Ok(command)
    }

    /// `expr [as name], ...`
    fn projections(&mut self) -> Result<Vec<(Expr, String)>, QueryError> {
        let mut out = Vec::new();
        loop {
            let start = self.offset();
            let expr = self.or()?;
            let mut name = match &expr {
                Expr::Field(n) => n.clone(),
                _ => self.text_since(start),
            };
            if self.eat_keyword("as") {
                name = self.name()?;
            }
            out.push((expr, name));
            if !self.eat_sym(",") {
                return Ok(out);
            }
        }
    }

    fn parse_command(&mut self) -> Result<Command, QueryError> {
        let source = match self.peek() {
            Some(Tok::Name(_)) => self.name()?,
            _ => "@message".to_string(),
        };
        let start = self.offset();
        let (pattern, names) = match self.peek().cloned() {
            Some(Tok::Str(glob)) => {
                self.at += 1;
                if !self.eat_keyword("as") {
                    return Err(self.unexpected());
                }
                let mut names = vec![self.name()?];
                while self.eat_sym(",") {
                    names.push(self.name()?);
                }
                let parts: Vec<&str> = glob.split('*').collect();
                if parts.len() - 1 != names.len() {
                    return Err(error(
                        format!(
                            "parse pattern has {} wildcards but {} fields",
                            parts.len() - 1,
                            names.len()
                        ),
                        start,
                        self.offset(),
                    ));
                }
                let mut re = String::new();
                for (i, part) in parts.iter().enumerate() {
                    re.push_str(&regex_lite::escape(part));
                    if i + 2 < parts.len() {
                        re.push_str("(.*?)");
                    } else if i + 2 == parts.len() {
                        re.push_str("(.*)");
                    }
                }
                (re, names)
            }
            Some(Tok::Regex(re)) => {
                self.at += 1;
                let names = Regex::new(&re)
                    .map_err(|e| error(e.to_string(), start, self.offset()))?
                    .capture_names()
                    .flatten()
                    .map(str::to_string)
                    .collect::<Vec<_>>();
                if names.is_empty() {
                    return Err(error(
                        "parse regular expression has no named group",
                        start,
                        self.offset(),
                    ));
                }
                (re, names)
            }
            _ => return Err(self.unexpected()),
        };
        let pattern =
            Regex::new(&pattern).map_err(|e| error(e.to_string(), start, self.offset()))?;
        Ok(Command::Parse {
            source,
            pattern,
            names,
        })
    }

    fn stats(&mut self) -> Result<Command, QueryError> {
        let mut aggregates = Vec::new();
        loop {
            let start = self.offset();
            let function = self.name()?;
            let aggregate = match function.to_ascii_lowercase().as_str() {
                "count" => Aggregate::Count,
                "count_distinct" => Aggregate::CountDistinct,
                "sum" => Aggregate::Sum,
                "avg" => Aggregate::Avg,
                "min" => Aggregate::Min,
                "max" => Aggregate::Max,
                _ => {
                    return Err(error(
                        format!("unknown aggregate function {function}"),
                        start,
                        self.offset(),
                    ))
                }
            };
            self.expect_sym("(")?;
            let arg = if self.eat_sym("*") {
                if aggregate != Aggregate::Count {
                    return Err(error(
                        format!("{function}(*) is not supported"),
                        start,
                        self.offset(),
                    ));
                }
                None
            } else {
                Some(self.or()?)
            };
            self.expect_sym(")")?;
            let mut name = self.text_since(start);
            if self.eat_keyword("as") {
                name = self.name()?;
            }
            aggregates.push((aggregate, arg, name));
            if !self.eat_sym(",") {
                break;
            }
        }
        let by = if self.eat_keyword("by") {
            self.projections()?
        } else {
            Vec::new()
        };
        Ok(Command::Stats { aggregates, by })
    }

    /// Reads with `read` one level deeper, refusing to pass [`MAX_NESTING`].
    fn nested<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, QueryError>,
    ) -> Result<T, QueryError> {
        if self.depth >= MAX_NESTING {
            // The token that opened the level: a `(` or a `not`, already consumed.
            let (start, end) = self
                .at
                .checked_sub(1)
                .and_then(|i| self.tokens.get(i))
                .map_or((0, 0), |t| (t.start, t.end));
            return Err(error(
                format!(
                    "expression nested more than {MAX_NESTING} levels deep at position {start}"
                ),
                start,
                end,
            ));
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
    }

    fn or(&mut self) -> Result<Expr, QueryError> {
        let mut terms = vec![self.and()?];
        while self.eat_keyword("or") {
            terms.push(self.and()?);
        }
        Ok(balanced(terms, |a, b| Expr::Or(Box::new(a), Box::new(b))))
    }

    fn and(&mut self) -> Result<Expr, QueryError> {
        let mut terms = vec![self.not()?];
        while self.eat_keyword("and") {
            terms.push(self.not()?);
        }
        Ok(balanced(terms, |a, b| Expr::And(Box::new(a), Box::new(b))))
    }

    fn not(&mut self) -> Result<Expr, QueryError> {
        if self.eat_keyword("not") {
            return self.nested(|p| Ok(Expr::Not(Box::new(p.not()?))));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, QueryError> {
        let left = self.operand()?;
        let cmp = match self.peek() {
            Some(Tok::Sym("=")) => Some(Cmp::Eq),
            Some(Tok::Sym("!=")) => Some(Cmp::Ne),
            Some(Tok::Sym("<")) => Some(Cmp::Lt),
            Some(Tok::Sym("<=")) => Some(Cmp::Le),
            Some(Tok::Sym(">")) => Some(Cmp::Gt),
            Some(Tok::Sym(">=")) => Some(Cmp::Ge),
            _ => None,
        };
        if let Some(cmp) = cmp {
            self.at += 1;
            let right = self.operand()?;
            return Ok(Expr::Compare(Box::new(left), cmp, Box::new(right)));
        }
        if self.eat_sym("=~") {
            let matcher = self.matcher()?;
            return Ok(Expr::Matches(Box::new(left), matcher));
        }
        let negated = self.at_keyword("not")
            && matches!(self.tokens.get(self.at + 1).map(|t| &t.tok),
                Some(Tok::Name(n)) if n.eq_ignore_ascii_case("like") || n.eq_ignore_ascii_case("in"));
        if negated {
            self.at += 1;
        }
        let expr = if self.eat_keyword("like") {
            Expr::Matches(Box::new(left), self.matcher()?)
        } else if self.eat_keyword("in") {
            self.expect_sym("[")?;
            let mut items = vec![self.operand()?];
            while self.eat_sym(",") {
                items.push(self.operand()?);
            }
            self.expect_sym("]")?;
            Expr::In(Box::new(left), items)
        } else {
            return Ok(left);
        };
        Ok(if negated {
            Expr::Not(Box::new(expr))
        } else {
            expr
        })
    }

    fn matcher(&mut self) -> Result<Matcher, QueryError> {
        let start = self.offset();
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.at += 1;
                Ok(Matcher::Substring(s))
            }
            Some(Tok::Regex(re)) => {
                self.at += 1;
                Regex::new(&re)
                    .map(Matcher::Regex)
                    .map_err(|e| error(e.to_string(), start, self.offset()))
            }
            _ => Err(self.unexpected()),
        }
    }

    /// A call's arguments, after its `(`, up to and including its `)`.
    fn arguments(&mut self) -> Result<Vec<Expr>, QueryError> {
        let mut args = Vec::new();
        if self.eat_sym(")") {
            return Ok(args);
        }
        loop {
            if self.eat_sym("*") {
                args.push(Expr::Star);
            } else {
                args.push(self.or()?);
            }
            if self.eat_sym(")") {
                return Ok(args);
            }
            self.expect_sym(",")?;
        }
    }

    fn operand(&mut self) -> Result<Expr, QueryError> {
        let Some(token) = self.tokens.get(self.at).cloned() else {
            return Err(self.unexpected());
        };
        self.at += 1;
        match token.tok {
            Tok::Str(s) => Ok(Expr::Literal(Datum::Str(s))),
            Tok::Num(n) => Ok(Expr::Literal(Datum::Num(n))),
            Tok::Duration(ms) => Ok(Expr::Duration(ms)),
            Tok::Sym("(") => self.nested(|p| {
                let inner = p.or()?;
                p.expect_sym(")")?;
                Ok(inner)
            }),
            Tok::Name(name) if self.at_sym("(") => {
                self.at += 1;
                let args = self.nested(Parser::arguments)?;
                let function = name.to_ascii_lowercase();
                if !SCALAR_FUNCTIONS.contains(&function.as_str()) {
                    return Err(error(
                        format!("unknown function {name}"),
                        token.start,
                        token.end,
                    ));
                }
                Ok(Expr::Call(function, args))
            }
            Tok::Name(name) => Ok(Expr::Field(name)),
            _ => {
                self.at -= 1;
                Err(self.unexpected())
            }
        }
    }
}

/// Joins a chain's terms into a balanced tree (a chain always has one term).
fn balanced(terms: Vec<Expr>, join: impl FnMut(Expr, Expr) -> Expr) -> Expr {
    crate::balance::balanced(terms, join).unwrap_or(Expr::Star)
}

const SCALAR_FUNCTIONS: &[&str] = &[
    "ispresent",
    "isempty",
    "isblank",
    "tolower",
    "toupper",
    "strlen",
    "concat",
    "abs",
    "floor",
    "ceil",
    "bin",
];

fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    match (a, b) {
        (Datum::Str(x), Datum::Str(y)) => Some(x.cmp(y)),
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => Some(a.text().cmp(&b.text())),
        },
    }
}

fn truthy(value: Option<Datum>) -> bool {
    match value {
        None => false,
        Some(Datum::Bool(b)) => b,
        Some(Datum::Num(n)) => n != 0.0,
        Some(Datum::Str(s)) => !s.is_empty(),
        Some(Datum::Time(_)) => true,
    }
}

fn eval(expr: &Expr, record: &Record) -> Option<Datum> {
    let boolean = |b: bool| Some(Datum::Bool(b));
    match expr {
        Expr::Field(name) => record.get(name).cloned(),
        Expr::Literal(d) => Some(d.clone()),
        Expr::Duration(ms) => Some(Datum::Num(*ms as f64)),
        Expr::Star => None,
        Expr::Compare(a, cmp, b) => {
            let (a, b) = (eval(a, record)?, eval(b, record)?);
            let order = compare(&a, &b)?;
            boolean(match cmp {
                Cmp::Eq => order == Ordering::Equal,
                Cmp::Ne => order != Ordering::Equal,
                Cmp::Lt => order == Ordering::Less,
                Cmp::Le => order != Ordering::Greater,
                Cmp::Gt => order == Ordering::Greater,
                Cmp::Ge => order != Ordering::Less,
            })
        }
        Expr::Matches(value, matcher) => {
            let text = eval(value, record)?.text();
            boolean(match matcher {
                Matcher::Substring(s) => text.contains(s.as_str()),
                Matcher::Regex(re) => re.is_match(&text),
            })
        }
        Expr::In(value, items) => {
            let value = eval(value, record)?;
            boolean(items.iter().any(|item| {
                eval(item, record).and_then(|i| compare(&value, &i)) == Some(Ordering::Equal)
            }))
        }
        Expr::And(a, b) => boolean(truthy(eval(a, record)) && truthy(eval(b, record))),
        Expr::Or(a, b) => boolean(truthy(eval(a, record)) || truthy(eval(b, record))),
        Expr::Not(a) => boolean(!truthy(eval(a, record))),
        Expr::Call(function, args) => call(function, args, record),
    }
}

fn call(function: &str, args: &[Expr], record: &Record) -> Option<Datum> {
    let arg = |i: usize| args.get(i).and_then(|a| eval(a, record));
    let number = |i: usize| arg(i).and_then(|d| d.number());
    match function {
        "ispresent" => Some(Datum::Bool(arg(0).is_some())),
        "isempty" => Some(Datum::Bool(arg(0).is_none_or(|d| d.text().is_empty()))),
        "isblank" => Some(Datum::Bool(
            arg(0).is_none_or(|d| d.text().trim().is_empty()),
        )),
        "tolower" => Some(Datum::Str(arg(0)?.text().to_lowercase())),
        "toupper" => Some(Datum::Str(arg(0)?.text().to_uppercase())),
        "strlen" => Some(Datum::Num(arg(0)?.text().chars().count() as f64)),
        "concat" => Some(Datum::Str(
            (0..args.len())
                .filter_map(|i| arg(i).map(|d| d.text()))
                .collect(),
        )),
        "abs" => Some(Datum::Num(number(0)?.abs())),
        "floor" => Some(Datum::Num(number(0)?.floor())),
        "ceil" => Some(Datum::Num(number(0)?.ceil())),
        "bin" => {
            let period = number(0)? as i64;
            let Some(Datum::Time(ms)) = record.get("@timestamp") else {
                return None;
            };
            (period > 0).then(|| Datum::Time(ms - ms.rem_euclid(period)))
        }
        _ => None,
    }
}

/// What running a query gives.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rows: each shown field present in the record, with its value.
    pub rows: Vec<Vec<(String, String)>>,
    /// How many records passed the query's filters.
    pub matched: usize,
}

impl Query {
    /// Parses a query string.
    pub fn parse(text: &str) -> Result<Query, QueryError> {
        let tokens = lex(text)?;
        Parser {
            text,
            tokens,
            at: 0,
            depth: 0,
        }
        .query()
    }

    /// Runs the query over records (newest first, the order rows come in without a `sort`),
    /// returning at most `limit` rows.
    pub fn run(&self, mut records: Vec<Record>, limit: usize) -> Outcome {
        let mut shown: Option<Vec<String>> = None;
        let mut aggregated = false;
        let mut matched = records.len();
        for command in &self.commands {
            match command {
                Command::Fields(projections) => {
                    for record in &mut records {
                        for (expr, name) in projections {
                            if !matches!(expr, Expr::Field(f) if f == name) {
                                if let Some(value) = eval(expr, record) {
                                    record.insert(name.clone(), value);
                                }
                            }
                        }
                    }
                    shown
                        .get_or_insert_with(Vec::new)
                        .extend(projections.iter().map(|(_, name)| name.clone()));
                }
                Command::Display(names) => shown = Some(names.clone()),
                Command::Filter(expr) => {
                    records.retain(|r| truthy(eval(expr, r)));
                    matched = records.len();
                }
                Command::Parse {
                    source,
                    pattern,
                    names,
                } => {
                    for record in &mut records {
                        let Some(text) = record.get(source).map(Datum::text) else {
                            continue;
                        };
                        let Some(captures) = pattern.captures(&text) else {
                            continue;
                        };
                        for (i, name) in names.iter().enumerate() {
                            let group = captures.name(name).or_else(|| captures.get(i + 1));
                            if let Some(m) = group {
                                record.insert(name.clone(), Datum::Str(m.as_str().to_string()));
                            }
                        }
                    }
                }
                Command::Stats { aggregates, by } => {
                    matched = records.len();
                    records = stats(&records, aggregates, by);
                    shown = Some(
                        by.iter()
                            .map(|(_, name)| name)
                            .chain(aggregates.iter().map(|(_, _, name)| name))
                            .cloned()
                            .collect(),
                    );
                    aggregated = true;
                }
                Command::Sort(keys) => records.sort_by(|a, b| {
                    keys.iter()
                        .map(|(expr, text, descending)| {
                            let key = |r: &Record| r.get(text).cloned().or_else(|| eval(expr, r));
                            let order = match (key(a), key(b)) {
                                (Some(x), Some(y)) => compare(&x, &y).unwrap_or(Ordering::Equal),
                                (Some(_), None) => return Ordering::Less,
                                (None, Some(_)) => return Ordering::Greater,
                                (None, None) => Ordering::Equal,
                            };
                            if *descending {
                                order.reverse()
                            } else {
                                order
                            }
                        })
                        .find(|o| *o != Ordering::Equal)
                        .unwrap_or(Ordering::Equal)
                }),
                Command::Limit(n) => records.truncate(*n),
            }
        }
        let mut names =
            shown.unwrap_or_else(|| vec!["@timestamp".to_string(), "@message".to_string()]);
        if !aggregated && !names.iter().any(|n| n == "@ptr") {
            names.push("@ptr".to_string());
        }
        records.truncate(limit);
        let rows = records
            .iter()
            .map(|record| {
                names
                    .iter()
                    .filter_map(|name| record.get(name).map(|v| (name.clone(), v.text())))
                    .collect()
            })
            .collect();
        Outcome { rows, matched }
    }
}

/// One aggregate's running state.
enum State {
    Count(u64),
    Distinct(HashSet<String>),
    Sum(f64),
    Avg(f64, u64),
    Extreme(Option<Datum>),
}

fn stats(
    records: &[Record],
    aggregates: &[(Aggregate, Option<Expr>, String)],
    by: &[(Expr, String)],
) -> Vec<Record> {
    let mut groups: Vec<(Record, Vec<State>)> = Vec::new();
    let mut index: HashMap<Vec<Option<String>>, usize> = HashMap::new();
    for record in records {
        let keys: Vec<Option<Datum>> = by.iter().map(|(e, _)| eval(e, record)).collect();
        let id: Vec<Option<String>> = keys.iter().map(|k| k.as_ref().map(Datum::text)).collect();
        let slot = *index.entry(id).or_insert_with(|| {
            let key_record = by
                .iter()
                .zip(&keys)
                .filter_map(|((_, name), k)| Some((name.clone(), k.clone()?)))
                .collect();
            let states = aggregates
                .iter()
                .map(|(a, _, _)| match a {
                    Aggregate::Count => State::Count(0),
                    Aggregate::CountDistinct => State::Distinct(HashSet::new()),
                    Aggregate::Sum => State::Sum(0.0),
                    Aggregate::Avg => State::Avg(0.0, 0),
                    Aggregate::Min | Aggregate::Max => State::Extreme(None),
                })
                .collect();
            groups.push((key_record, states));
            groups.len() - 1
        });
        for ((aggregate, arg, _), state) in aggregates.iter().zip(&mut groups[slot].1) {
            let value = arg.as_ref().map(|a| eval(a, record));
            match (state, value) {
                (State::Count(n), None) => *n += 1,
                (State::Count(n), Some(Some(_))) => *n += 1,
                (State::Distinct(seen), Some(Some(v))) => {
                    seen.insert(v.text());
                }
                (State::Sum(total), Some(Some(v))) => *total += v.number().unwrap_or(0.0),
                (State::Avg(total, n), Some(Some(v))) => {
                    if let Some(x) = v.number() {
                        *total += x;
                        *n += 1;
                    }
                }
                (State::Extreme(best), Some(Some(v))) => {
                    let wanted = if *aggregate == Aggregate::Min {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    };
                    if best.as_ref().is_none_or(|b| compare(&v, b) == Some(wanted)) {
                        *best = Some(v);
                    }
                }
                _ => {}
            }
        }
    }
    groups
        .into_iter()
        .map(|(mut record, states)| {
            for ((_, _, name), state) in aggregates.iter().zip(states) {
                let value = match state {
                    State::Count(n) => Some(Datum::Num(n as f64)),
                    State::Distinct(seen) => Some(Datum::Num(seen.len() as f64)),
                    State::Sum(total) => Some(Datum::Num(total)),
                    State::Avg(total, n) => (n > 0).then(|| Datum::Num(total / n as f64)),
                    State::Extreme(best) => best,
                };
                if let Some(value) = value {
                    record.insert(name.clone(), value);
                }
            }
            record
        })
        .collect()
}

/// Adds the members of a JSON object message to a record, flattened as `a.b` and `a.0`.
pub fn add_json_fields(record: &mut Record, message: &str) {
    fn walk(record: &mut Record, prefix: &str, value: &serde_json::Value) {
        match value {
            serde_json::Value::Object(members) => {
                for (k, v) in members {
                    let name = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(record, &name, v);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(record, &format!("{prefix}.{i}"), v);
                }
            }
            serde_json::Value::Number(n) => {
                record.insert(
                    prefix.to_string(),
                    Datum::Num(n.as_f64().unwrap_or_default()),
                );
            }
            serde_json::Value::String(s) => {
                record.insert(prefix.to_string(), Datum::Str(s.clone()));
            }
            serde_json::Value::Bool(b) => {
                record.insert(prefix.to_string(), Datum::Str(b.to_string()));
            }
            serde_json::Value::Null => {}
        }
    }
    if let Ok(json @ serde_json::Value::Object(_)) = serde_json::from_str(message) {
        walk(record, "", &json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ts: i64, message: &str) -> Record {
        let mut r = Record::new();
        r.insert("@timestamp".into(), Datum::Time(ts));
        r.insert("@message".into(), Datum::Str(message.into()));
        r.insert("@ptr".into(), Datum::Str(format!("p{ts}")));
        add_json_fields(&mut r, message);
        r
    }

    fn sample() -> Vec<Record> {
        vec![
            record(4000, r#"{"level":"error","code":503,"user":{"id":"u1"}}"#),
            record(3000, r#"{"level":"info","code":200,"user":{"id":"u2"}}"#),
            record(2000, r#"{"level":"error","code":500,"user":{"id":"u1"}}"#),
            record(1000, "plain text Exception raised"),
        ]
    }

    fn run(query: &str) -> Outcome {
        Query::parse(query).unwrap().run(sample(), 10_000)
    }

    fn column(outcome: &Outcome, field: &str) -> Vec<String> {
        outcome
            .rows
            .iter()
            .filter_map(|row| row.iter().find(|(f, _)| f == field).map(|(_, v)| v.clone()))
            .collect()
    }

    #[test]
    fn an_empty_query_shows_timestamp_message_and_pointer() {
        let out = run("");
        assert_eq!(out.rows.len(), 4);
        let fields: Vec<&str> = out.rows[0].iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["@timestamp", "@message", "@ptr"]);
        assert_eq!(out.rows[0][0].1, "1970-01-01 00:00:04.000");
    }

    #[test]
    fn filters_compare_numbers_strings_and_patterns() {
        assert_eq!(
            column(&run(r#"filter level = "error""#), "@ptr"),
            ["p4000", "p2000"]
        );
        assert_eq!(
            column(&run("filter code >= 500 and code < 503"), "@ptr"),
            ["p2000"]
        );
        assert_eq!(
            column(&run("filter @message like /Exc.ption/"), "@ptr"),
            ["p1000"]
        );
        assert_eq!(
            column(&run(r#"filter @message like "raised""#), "@ptr"),
            ["p1000"]
        );
        assert_eq!(
            column(&run(r#"filter @message not like "level""#), "@ptr"),
            ["p1000"]
        );
        assert_eq!(column(&run("filter @message =~ /info/"), "@ptr"), ["p3000"]);
        assert_eq!(
            column(&run(r#"filter `user.id` in ["u2", "u9"]"#), "@ptr"),
            ["p3000"]
        );
        assert_eq!(
            column(
                &run(r#"filter not ispresent(level) or (level = "info" and code = 200)"#),
                "@ptr"
            ),
            ["p3000", "p1000"]
        );
        assert_eq!(run("filter level = \"error\"").matched, 2);
    }

    #[test]
    fn fields_sort_and_limit_shape_the_rows() {
        let out = run(
            "fields code, toupper(level) as lvl | filter ispresent(code) | sort code asc | limit 2",
        );
        assert_eq!(column(&out, "code"), ["200", "500"]);
        assert_eq!(column(&out, "lvl"), ["INFO", "ERROR"]);
        let fields: Vec<&str> = out.rows[0].iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["code", "lvl", "@ptr"]);
        assert_eq!(out.matched, 3);
        let displayed = run("fields code | display level");
        assert_eq!(
            displayed.rows[0]
                .iter()
                .map(|(f, _)| f.as_str())
                .collect::<Vec<_>>(),
            ["level", "@ptr"]
        );
    }

    #[test]
    fn stats_aggregate_by_groups_and_time_bins() {
        let out = run("stats count(*) as n, avg(code), max(code) by level | sort n desc");
        assert_eq!(column(&out, "level"), ["error", "info"]);
        assert_eq!(column(&out, "n"), ["2", "1", "1"]);
        assert_eq!(column(&out, "avg(code)"), ["501.5", "200"]);
        assert_eq!(column(&out, "max(code)"), ["503", "200"]);
        assert!(out.rows[0].iter().all(|(f, _)| f != "@ptr"));
        let bins = run("stats count(*) by bin(2s)");
        assert_eq!(
            column(&bins, "bin(2s)"),
            [
                "1970-01-01 00:00:04.000",
                "1970-01-01 00:00:02.000",
                "1970-01-01 00:00:00.000"
            ]
        );
        assert_eq!(column(&bins, "count(*)"), ["1", "2", "1"]);
        assert_eq!(
            column(&run("stats count_distinct(`user.id`) as users"), "users"),
            ["2"]
        );
    }

    #[test]
    fn parse_extracts_fields_with_globs_and_named_groups() {
        let out = run(
            r#"parse @message "plain * *" as kind, rest | filter ispresent(kind) | fields kind, rest"#,
        );
        assert_eq!(column(&out, "kind"), ["text"]);
        assert_eq!(column(&out, "rest"), ["Exception raised"]);
        let named =
            run(r"parse @message /(?P<word>\w+) raised/ | filter ispresent(word) | fields word");
        assert_eq!(column(&named, "word"), ["Exception"]);
    }

    #[test]
    fn malformed_queries_say_where() {
        let e = Query::parse("fields @message | frobnicate x").unwrap_err();
        assert_eq!((e.start, e.end), (18, 28));
        assert!(e.message.contains("frobnicate"));
        assert!(Query::parse("filter level =").is_err());
        assert!(Query::parse("fields a |").is_err());
        assert!(Query::parse("stats median(x)").is_err());
        assert!(Query::parse(r#"filter @message like "open"#).is_err());
        assert!(Query::parse("limit 0").is_err());
        assert!(Query::parse(r#"parse @message "a * b * c" as one"#).is_err());
        assert!(Query::parse("filter nosuch(x)").is_err());
    }

    #[test]
    fn nesting_is_bounded_and_chains_are_shallow() {
        let parens = |k: usize| format!("filter {}a = 1{}", "(".repeat(k), ")".repeat(k));
        assert!(Query::parse(&parens(32)).is_ok());
        let e = Query::parse(&parens(33)).unwrap_err();
        assert!(
            e.message
                .starts_with("expression nested more than 32 levels"),
            "{}",
            e.message
        );
        assert!(Query::parse(&format!("filter {}a = 1", "not ".repeat(2500))).is_err());
        assert!(Query::parse(&format!(
            "filter x = {}1{}",
            "abs(".repeat(40),
            ")".repeat(40)
        ))
        .is_err());
        let chain = format!("filter {}", vec!["a = 1"; 1200].join(" and "));
        let outcome = Query::parse(&chain).unwrap().run(sample(), 10);
        assert_eq!(outcome.rows.len(), 0);
    }
}
