//! Evaluating S3 Select expressions over one record, and the aggregates over many.
//!
//! A record is a [`Datum`]: CSV records are structs of strings (named by the header when
//! `FileHeaderInfo` is `USE`, else `_1`, `_2`...), JSON records whatever the document
//! holds, in its order. Comparisons and arithmetic coerce a numeric string to a number,
//! as S3 does with CSV's untyped fields; NULL and MISSING propagate, and a WHERE clause
//! keeps a record only when it is true.

use std::cmp::Ordering;

use roto_core::AwsError;

use super::sql::error;
use super::sql::{Aggregate, BinaryOp, CastType, Expr, Literal, Step, TrimSide, UnaryOp};
use super::time::{parse_failure, Timestamp};

/// A value in a record or computed from one.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Missing,
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Timestamp(Timestamp),
    List(Vec<Datum>),
    /// Fields in the document's order.
    Struct(Vec<(String, Datum)>),
}

impl Datum {
    fn is_absent(&self) -> bool {
        matches!(self, Datum::Missing | Datum::Null)
    }

    /// The field `name` of a struct (`exact` matches case too).
    pub fn field(&self, name: &str, exact: bool) -> Datum {
        let Datum::Struct(fields) = self else {
            return Datum::Missing;
        };
        fields
            .iter()
            .find(|(k, _)| k == name)
            .or_else(|| {
                (!exact)
                    .then(|| fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
                    .flatten()
            })
            .map_or(Datum::Missing, |(_, v)| v.clone())
    }

    /// The step applied to this value (a wildcard leaves it whole; the FROM path expands
    /// wildcards itself).
    pub fn step(&self, step: &Step) -> Datum {
        match step {
            Step::Field { name, exact } => self.field(name, *exact),
            Step::Index(i) => match self {
                Datum::List(items) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .unwrap_or(Datum::Missing),
                _ => Datum::Missing,
            },
            Step::Wildcard => self.clone(),
        }
    }

    /// The number a value stands for, reading numeric strings.
    fn number(&self) -> Option<Number> {
        match self {
            Datum::Int(n) => Some(Number::Int(*n)),
            Datum::Float(f) => Some(Number::Float(*f)),
            Datum::Str(s) => parse_number(s.trim()),
            _ => None,
        }
    }

    /// The text of a scalar, as CSV output writes it.
    pub fn text(&self) -> String {
        match self {
            Datum::Missing | Datum::Null => String::new(),
            Datum::Bool(b) => b.to_string(),
            Datum::Int(n) => n.to_string(),
            Datum::Float(f) => format_float(*f),
            Datum::Str(s) => s.clone(),
            Datum::Timestamp(t) => t.text(),
            Datum::List(_) | Datum::Struct(_) => {
                let mut out = String::new();
                self.write_json(&mut out);
                out
            }
        }
    }

    /// Appends the value as JSON (MISSING as null), structs in their fields' order.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Datum::Missing | Datum::Null => out.push_str("null"),
            Datum::Bool(_) | Datum::Int(_) => out.push_str(&self.text()),
            Datum::Float(f) if f.is_finite() => out.push_str(&self.text()),
            Datum::Float(_) => out.push_str("null"),
            Datum::Str(s) => out.push_str(&serde_json::Value::from(s.as_str()).to_string()),
            Datum::Timestamp(t) => out.push_str(&serde_json::Value::from(t.text()).to_string()),
            Datum::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Datum::Struct(fields) => {
                out.push('{');
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(name.as_str()).to_string());
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// A float as S3 writes it: integral values keep one decimal.
fn format_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

#[derive(Debug, Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn float(self) -> f64 {
        match self {
            Number::Int(n) => n as f64,
            Number::Float(f) => f,
        }
    }

    fn datum(self) -> Datum {
        match self {
            Number::Int(n) => Datum::Int(n),
            Number::Float(f) => Datum::Float(f),
        }
    }
}

fn parse_number(s: &str) -> Option<Number> {
    if let Ok(n) = s.parse::<i64>() {
        return Some(Number::Int(n));
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(Number::Float(f))
}

/// What an expression sees: the record and the name it goes by.
pub struct Scope<'a> {
    pub record: &'a Datum,
    pub alias: Option<&'a str>,
    /// When the query started, in epoch milliseconds (`UTCNOW()`).
    pub now: i64,
}

impl Scope<'_> {
    /// A path: from the record when it starts with the alias, else from the record's
    /// field; `s._N` also names the Nth field of a CSV record whose header named it.
    fn path(&self, head: &str, exact: bool, steps: &[Step]) -> Result<Datum, AwsError> {
        let is_alias = self.alias.is_some_and(|a| {
            if exact {
                a == head
            } else {
                a.eq_ignore_ascii_case(head)
            }
        });
        let (mut value, steps) = match (is_alias, steps.split_first()) {
            (true, Some((Step::Field { name, exact }, rest))) => (self.column(name, *exact)?, rest),
            (true, _) => (self.record.clone(), steps),
            (false, _) => (self.column(head, exact)?, steps),
        };
        for step in steps {
            value = value.step(step);
        }
        Ok(value)
    }

    fn column(&self, name: &str, exact: bool) -> Result<Datum, AwsError> {
        let value = self.record.field(name, exact);
        let Some(n) = name.strip_prefix('_').and_then(|n| n.parse::<usize>().ok()) else {
            return Ok(value);
        };
        if n == 0 {
            return Err(error(
                "InvalidColumnIndex",
                "The column index at line 1 is invalid. Column index must be a positive integer.",
            ));
        }
        Ok(match (value, self.record) {
            (Datum::Missing, Datum::Struct(fields)) => {
                fields.get(n - 1).map_or(Datum::Missing, |(_, v)| v.clone())
            }
            (value, _) => value,
        })
    }
}

/// Evaluates `expr` over one record (aggregates are evaluated by [`Accumulator`]).
pub fn eval(expr: &Expr, scope: &Scope) -> Result<Datum, AwsError> {
    Ok(match expr {
        Expr::Literal(l) => literal(l),
        Expr::Path { head, exact, steps } => scope.path(head, *exact, steps)?,
        Expr::Unary(UnaryOp::Not, e) => match truth(&eval(e, scope)?) {
            Some(b) => Datum::Bool(!b),
            None => Datum::Null,
        },
        Expr::Unary(UnaryOp::Neg, e) => {
            let v = eval(e, scope)?;
            match v.number() {
                _ if v.is_absent() => Datum::Null,
                Some(Number::Int(n)) => Datum::Int(n.checked_neg().ok_or_else(overflow)?),
                Some(Number::Float(f)) => Datum::Float(-f),
                None => return Err(type_error("-")),
            }
        }
        Expr::Binary(op, a, b) => binary(*op, eval(a, scope)?, || eval(b, scope))?,
        Expr::Like {
            value,
            pattern,
            escape,
            negated,
        } => {
            let v = eval(value, scope)?;
            let p = eval(pattern, scope)?;
            let e = escape.as_ref().map(|e| eval(e, scope)).transpose()?;
            match (v, p) {
                (Datum::Str(v), Datum::Str(p)) => {
                    let escape = match e {
                        Some(Datum::Str(e)) => Some(single_char(&e)?),
                        _ => None,
                    };
                    Datum::Bool(like(&v, &p, escape)? != *negated)
                }
                _ => Datum::Null,
            }
        }
        Expr::Between {
            value,
            low,
            high,
            negated,
        } => {
            let v = eval(value, scope)?;
            let lo = compare(&v, &eval(low, scope)?);
            let hi = compare(&v, &eval(high, scope)?);
            match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    Datum::Bool((lo != Ordering::Less && hi != Ordering::Greater) != *negated)
                }
                _ => Datum::Null,
            }
        }
        Expr::In {
            value,
            list,
            negated,
        } => {
            let v = eval(value, scope)?;
            if v.is_absent() {
                return Ok(Datum::Null);
            }
            let mut found = false;
            for item in list {
                if compare(&v, &eval(item, scope)?) == Some(Ordering::Equal) {
                    found = true;
                    break;
                }
            }
            Datum::Bool(found != *negated)
        }
        Expr::Is {
            value,
            missing,
            negated,
        } => {
            let v = eval(value, scope)?;
            let is = if *missing {
                v == Datum::Missing
            } else {
                v.is_absent()
            };
            Datum::Bool(is != *negated)
        }
        Expr::Cast(e, kind) => cast(eval(e, scope)?, *kind)?,
        Expr::Call(name, args) => {
            let values = args
                .iter()
                .map(|a| eval(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, values, scope.now)?
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            let operand = operand.as_ref().map(|o| eval(o, scope)).transpose()?;
            for (when, then) in whens {
                let when = eval(when, scope)?;
                let hit = match &operand {
                    Some(operand) => compare(operand, &when) == Some(Ordering::Equal),
                    None => truth(&when) == Some(true),
                };
                if hit {
                    return eval(then, scope);
                }
            }
            match otherwise {
                Some(e) => eval(e, scope)?,
                None => Datum::Null,
            }
        }
        Expr::DateAdd(part, quantity, value) => {
            let quantity = eval(quantity, scope)?;
            match timestamp_arg("DATE_ADD", eval(value, scope)?)? {
                Some(t) if !quantity.is_absent() => {
                    Datum::Timestamp(t.add(*part, integer_arg("DATE_ADD", &quantity)?)?)
                }
                _ => Datum::Null,
            }
        }
        Expr::DateDiff(part, from, to) => {
            let from = timestamp_arg("DATE_DIFF", eval(from, scope)?)?;
            match (from, timestamp_arg("DATE_DIFF", eval(to, scope)?)?) {
                (Some(from), Some(to)) => Datum::Int(from.diff(*part, &to)?),
                _ => Datum::Null,
            }
        }
        Expr::Extract(part, value) => match timestamp_arg("EXTRACT", eval(value, scope)?)? {
            Some(t) => {
                let n = t.extract(*part);
                if n.fract() == 0.0 {
                    Datum::Int(n as i64)
                } else {
                    Datum::Float(n)
                }
            }
            None => Datum::Null,
        },
        Expr::Trim { value, chars, side } => {
            let v = eval(value, scope)?;
            let chars = chars.as_ref().map(|c| eval(c, scope)).transpose()?;
            trim(v, chars, *side)?
        }
        Expr::Aggregate(..) => {
            return Err(error(
                "UnsupportedSqlStructure",
                "Aggregate functions are not allowed outside the SELECT list.",
            ))
        }
    })
}

fn literal(l: &Literal) -> Datum {
    match l {
        Literal::Null => Datum::Null,
        Literal::Missing => Datum::Missing,
        Literal::Bool(b) => Datum::Bool(*b),
        Literal::Int(n) => Datum::Int(*n),
        Literal::Float(f) => Datum::Float(*f),
        Literal::Str(s) => Datum::Str(s.clone()),
        Literal::Timestamp(t) => Datum::Timestamp(t.clone()),
    }
}

/// Whether a value is true, false or unknown.
pub fn truth(value: &Datum) -> Option<bool> {
    match value {
        Datum::Bool(b) => Some(*b),
        Datum::Str(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Datum::Str(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

fn overflow() -> AwsError {
    error(
        "IntegerOverflow",
        "Int overflow or underflow in the SQL expression.",
    )
}

fn type_error(op: &str) -> AwsError {
    error(
        "InvalidDataType",
        format!("The SQL expression contains an invalid data type for the operator {op}."),
    )
}

fn single_char(s: &str) -> Result<char, AwsError> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(bad_escape()),
    }
}

fn bad_escape() -> AwsError {
    error(
        "EvaluatorLikePatternInvalidEscapeSequence",
        "Invalid escape sequence in the LIKE pattern.",
    )
}

fn binary(
    op: BinaryOp,
    a: Datum,
    b: impl FnOnce() -> Result<Datum, AwsError>,
) -> Result<Datum, AwsError> {
    match op {
        BinaryOp::And => {
            let left = truth(&a);
            if left == Some(false) {
                return Ok(Datum::Bool(false));
            }
            Ok(match (left, truth(&b()?)) {
                (_, Some(false)) => Datum::Bool(false),
                (Some(true), Some(true)) => Datum::Bool(true),
                _ => Datum::Null,
            })
        }
        BinaryOp::Or => {
            let left = truth(&a);
            if left == Some(true) {
                return Ok(Datum::Bool(true));
            }
            Ok(match (left, truth(&b()?)) {
                (_, Some(true)) => Datum::Bool(true),
                (Some(false), Some(false)) => Datum::Bool(false),
                _ => Datum::Null,
            })
        }
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let Some(order) = compare(&a, &b()?) else {
                return Ok(Datum::Null);
            };
            Ok(Datum::Bool(match op {
                BinaryOp::Eq => order == Ordering::Equal,
                BinaryOp::Ne => order != Ordering::Equal,
                BinaryOp::Lt => order == Ordering::Less,
                BinaryOp::Le => order != Ordering::Greater,
                BinaryOp::Gt => order == Ordering::Greater,
                _ => order != Ordering::Less,
            }))
        }
        BinaryOp::Concat => {
            let b = b()?;
            if a.is_absent() || b.is_absent() {
                return Ok(Datum::Null);
            }
            Ok(Datum::Str(a.text() + &b.text()))
        }
        _ => arithmetic(op, a, b()?),
    }
}

fn arithmetic(op: BinaryOp, a: Datum, b: Datum) -> Result<Datum, AwsError> {
    if a.is_absent() || b.is_absent() {
        return Ok(Datum::Null);
    }
    let symbol = match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        _ => "%",
    };
    let (Some(x), Some(y)) = (a.number(), b.number()) else {
        return Err(type_error(symbol));
    };
    if let (Number::Int(x), Number::Int(y)) = (x, y) {
        let result = match op {
            BinaryOp::Add => x.checked_add(y),
            BinaryOp::Sub => x.checked_sub(y),
            BinaryOp::Mul => x.checked_mul(y),
            _ if y == 0 => return Err(division_by_zero()),
            BinaryOp::Div => x.checked_div(y),
            _ => x.checked_rem(y),
        };
        return result.map(Datum::Int).ok_or_else(overflow);
    }
    let (x, y) = (x.float(), y.float());
    if matches!(op, BinaryOp::Div | BinaryOp::Mod) && y == 0.0 {
        return Err(division_by_zero());
    }
    Ok(Datum::Float(match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        _ => x % y,
    }))
}

fn division_by_zero() -> AwsError {
    error(
        "ExternalEvalException",
        "The query cannot be evaluated: division by zero.",
    )
}

/// How two values order: numbers numerically (a numeric string counts as a number),
/// strings and booleans among themselves; `None` when either is absent or they differ
/// in kind.
pub fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    match (a, b) {
        (Datum::Str(x), Datum::Str(y)) => Some(x.cmp(y)),
        (Datum::Bool(x), Datum::Bool(y)) => Some(x.cmp(y)),
        (Datum::Bool(x), Datum::Str(_)) => truth(b).map(|y| x.cmp(&y)),
        (Datum::Str(_), Datum::Bool(y)) => truth(a).map(|x| x.cmp(y)),
        (Datum::Timestamp(x), Datum::Timestamp(y)) => Some(x.cmp_instant(y)),
        _ if a.is_absent() || b.is_absent() => None,
        _ => match (a.number()?, b.number()?) {
            (Number::Int(x), Number::Int(y)) => Some(x.cmp(&y)),
            (x, y) => x.float().partial_cmp(&y.float()),
        },
    }
}

/// SQL LIKE: `%` any run, `_` any one character, `escape` making the next literal.
fn like(value: &str, pattern: &str, escape: Option<char>) -> Result<bool, AwsError> {
    enum Part {
        Any,
        One,
        Char(char),
    }
    let mut parts = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        parts.push(match c {
            c if Some(c) == escape => match chars.next() {
                Some(next) => Part::Char(next),
                None => return Err(bad_escape()),
            },
            '%' => Part::Any,
            '_' => Part::One,
            c => Part::Char(c),
        });
    }
    // Iterative matching with one backtrack point for the last `%` (no recursion).
    let text: Vec<char> = value.chars().collect();
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match parts.get(p) {
            Some(Part::Any) => {
                star = Some((p, t));
                p += 1;
            }
            Some(Part::One) => {
                t += 1;
                p += 1;
            }
            Some(Part::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return Ok(false),
            },
        }
    }
    Ok(parts[p..].iter().all(|part| matches!(part, Part::Any)))
}

fn cast_failed() -> AwsError {
    error(
        "CastFailed",
        "Attempt to convert from one data type to another using CAST failed in the SQL expression.",
    )
}

fn cast(value: Datum, kind: CastType) -> Result<Datum, AwsError> {
    if value.is_absent() {
        return Ok(value);
    }
    Ok(match kind {
        CastType::String => Datum::Str(value.text()),
        CastType::Timestamp => match value {
            Datum::Timestamp(_) => value,
            Datum::Str(s) => Datum::Timestamp(Timestamp::parse(s.trim()).ok_or_else(cast_failed)?),
            _ => return Err(cast_failed()),
        },
        CastType::Bool => match (&value, truth(&value)) {
            (_, Some(b)) => Datum::Bool(b),
            (Datum::Int(n), _) => Datum::Bool(*n != 0),
            _ => return Err(cast_failed()),
        },
        CastType::Int => match value {
            Datum::Bool(b) => Datum::Int(i64::from(b)),
            Datum::Float(f) if f.is_finite() && f.abs() < 9.2e18 => Datum::Int(f.trunc() as i64),
            Datum::Int(n) => Datum::Int(n),
            Datum::Str(s) => match parse_number(s.trim()) {
                Some(Number::Int(n)) => Datum::Int(n),
                Some(Number::Float(f)) if f.abs() < 9.2e18 => Datum::Int(f.trunc() as i64),
                _ => return Err(cast_failed()),
            },
            _ => return Err(cast_failed()),
        },
        CastType::Float | CastType::Decimal => match value.number() {
            Some(n) => Datum::Float(n.float()),
            None => match value {
                Datum::Bool(b) => Datum::Float(f64::from(u8::from(b))),
                _ => return Err(cast_failed()),
            },
        },
    })
}

fn arity(
    name: &str,
    args: &[Datum],
    range: std::ops::RangeInclusive<usize>,
) -> Result<(), AwsError> {
    if range.contains(&args.len()) {
        return Ok(());
    }
    Err(error(
        "EvaluatorInvalidArguments",
        format!("Incorrect number of arguments in the function call {name} in the SQL expression."),
    ))
}

fn string_arg(name: &str, value: &Datum) -> Result<Option<String>, AwsError> {
    match value {
        Datum::Missing | Datum::Null => Ok(None),
        Datum::Str(s) => Ok(Some(s.clone())),
        _ => Err(argument_type(name)),
    }
}

fn argument_type(name: &str) -> AwsError {
    error(
        "IncorrectSqlFunctionArgumentType",
        format!("Incorrect type of arguments in the function call {name} in the SQL expression."),
    )
}

/// A timestamp argument (`None` for NULL or MISSING).
fn timestamp_arg(name: &str, value: Datum) -> Result<Option<Timestamp>, AwsError> {
    match value {
        Datum::Missing | Datum::Null => Ok(None),
        Datum::Timestamp(t) => Ok(Some(t)),
        _ => Err(argument_type(name)),
    }
}

/// An integer argument (a numeric string counts).
fn integer_arg(name: &str, value: &Datum) -> Result<i64, AwsError> {
    match value.number() {
        Some(Number::Int(n)) => Ok(n),
        _ => Err(argument_type(name)),
    }
}

fn call(name: &str, args: Vec<Datum>, now: i64) -> Result<Datum, AwsError> {
    match name {
        "UTCNOW" => {
            arity(name, &args, 0..=0)?;
            Ok(Datum::Timestamp(Timestamp::from_millis(now)))
        }
        "TO_STRING" => {
            arity(name, &args, 2..=2)?;
            let pattern = string_arg(name, &args[1])?;
            match (timestamp_arg(name, args[0].clone())?, pattern) {
                (Some(t), Some(pattern)) => Ok(Datum::Str(t.format(&pattern)?)),
                _ => Ok(Datum::Null),
            }
        }
        "TO_TIMESTAMP" => {
            arity(name, &args, 1..=2)?;
            if let Datum::Timestamp(_) = &args[0] {
                return Ok(args[0].clone());
            }
            let Some(text) = string_arg(name, &args[0])? else {
                return Ok(Datum::Null);
            };
            let parsed = match args.get(1) {
                Some(pattern) => match string_arg(name, pattern)? {
                    Some(pattern) => Timestamp::parse_with(&text, &pattern)?,
                    None => return Ok(Datum::Null),
                },
                None => Timestamp::parse(text.trim()).ok_or_else(parse_failure)?,
            };
            Ok(Datum::Timestamp(parsed))
        }
        "LOWER" | "UPPER" => {
            arity(name, &args, 1..=1)?;
            Ok(match string_arg(name, &args[0])? {
                Some(s) if name == "LOWER" => Datum::Str(s.to_lowercase()),
                Some(s) => Datum::Str(s.to_uppercase()),
                None => Datum::Null,
            })
        }
        "CHAR_LENGTH" | "CHARACTER_LENGTH" => {
            arity(name, &args, 1..=1)?;
            Ok(match string_arg(name, &args[0])? {
                Some(s) => Datum::Int(s.chars().count() as i64),
                None => Datum::Null,
            })
        }
        "SUBSTRING" => {
            arity(name, &args, 2..=3)?;
            let Some(s) = string_arg(name, &args[0])? else {
                return Ok(Datum::Null);
            };
            let number = |d: &Datum| {
                match d.number() {
                Some(Number::Int(n)) => Ok(n),
                _ => Err(error(
                    "IncorrectSqlFunctionArgumentType",
                    "Incorrect type of arguments in the function call SUBSTRING in the SQL expression.",
                )),
            }
            };
            // SQL's 1-based start; characters before position 1 count against the length.
            let start = number(&args[1])?;
            let end = match args.get(2) {
                Some(len) => start.saturating_add(number(len)?.max(0)),
                None => i64::MAX,
            };
            let from = usize::try_from(start.max(1) - 1).unwrap_or(0);
            let to = usize::try_from(end.max(1) - 1).unwrap_or(usize::MAX);
            Ok(Datum::Str(
                s.chars().skip(from).take(to.saturating_sub(from)).collect(),
            ))
        }
        "COALESCE" => Ok(args
            .into_iter()
            .find(|a| !a.is_absent())
            .unwrap_or(Datum::Null)),
        "NULLIF" => {
            arity(name, &args, 2..=2)?;
            Ok(if compare(&args[0], &args[1]) == Some(Ordering::Equal) {
                Datum::Null
            } else {
                args[0].clone()
            })
        }
        _ => Err(error(
            "UnsupportedFunction",
            format!("Encountered an unsupported SQL function: {name}."),
        )),
    }
}

fn trim(value: Datum, chars: Option<Datum>, side: TrimSide) -> Result<Datum, AwsError> {
    let Some(s) = string_arg("TRIM", &value)? else {
        return Ok(Datum::Null);
    };
    let set: Vec<char> = match &chars {
        Some(c) => match string_arg("TRIM", c)? {
            Some(c) => c.chars().collect(),
            None => return Ok(Datum::Null),
        },
        None => vec![' '],
    };
    let strip = |c: char| set.contains(&c);
    Ok(Datum::Str(match side {
        TrimSide::Leading => s.trim_start_matches(strip).to_string(),
        TrimSide::Trailing => s.trim_end_matches(strip).to_string(),
        TrimSide::Both => s.trim_matches(strip).to_string(),
    }))
}

/// The running state of one aggregate over the records that pass the WHERE clause.
#[derive(Debug, Clone)]
pub struct Accumulator {
    kind: Aggregate,
    count: i64,
    sum: Option<Number>,
    best: Option<Datum>,
}

impl Accumulator {
    pub fn new(kind: Aggregate) -> Accumulator {
        Accumulator {
            kind,
            count: 0,
            sum: None,
            best: None,
        }
    }

    /// Adds one record's value (`None` for `COUNT(*)`).
    pub fn add(&mut self, value: Option<Datum>) -> Result<(), AwsError> {
        let Some(value) = value else {
            self.count += 1;
            return Ok(());
        };
        if value.is_absent() {
            return Ok(());
        }
        self.count += 1;
        match self.kind {
            Aggregate::Count => {}
            Aggregate::Sum | Aggregate::Avg => {
                let n = value.number().ok_or_else(|| type_error("SUM"))?;
                self.sum = Some(match (self.sum, n) {
                    (None, n) => n,
                    (Some(Number::Int(a)), Number::Int(b)) => {
                        Number::Int(a.checked_add(b).ok_or_else(overflow)?)
                    }
                    (Some(a), b) => Number::Float(a.float() + b.float()),
                });
            }
            Aggregate::Min | Aggregate::Max => {
                let wanted = if self.kind == Aggregate::Min {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                let replace = match &self.best {
                    None => true,
                    Some(best) => compare(&value, best) == Some(wanted),
                };
                if replace {
                    self.best = Some(value);
                }
            }
        }
        Ok(())
    }

    /// The aggregate's value.
    pub fn finish(&self) -> Datum {
        match self.kind {
            Aggregate::Count => Datum::Int(self.count),
            Aggregate::Sum => self.sum.map_or(Datum::Null, Number::datum),
            Aggregate::Avg => match self.sum {
                Some(sum) if self.count > 0 => Datum::Float(sum.float() / self.count as f64),
                _ => Datum::Null,
            },
            Aggregate::Min | Aggregate::Max => self.best.clone().unwrap_or(Datum::Null),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sql::parse;
    use super::*;

    fn record() -> Datum {
        Datum::Struct(vec![
            ("name".into(), Datum::Str("Alice".into())),
            ("age".into(), Datum::Str("31".into())),
            ("tags".into(), Datum::List(vec![Datum::Str("a".into())])),
        ])
    }

    fn run(where_clause: &str) -> Datum {
        let q = parse(&format!("SELECT * FROM S3Object s WHERE {where_clause}")).unwrap();
        let r = record();
        eval(
            &q.filter.unwrap(),
            &Scope {
                record: &r,
                alias: Some("s"),
                now: 0,
            },
        )
        .unwrap()
    }

    #[test]
    fn comparisons_coerce_numeric_strings() {
        assert_eq!(run("s.age > 30"), Datum::Bool(true));
        assert_eq!(run("age = 31.0"), Datum::Bool(true));
        assert_eq!(run("s.age + 1 = 32"), Datum::Bool(true));
        assert_eq!(
            run("CAST(s.age AS INT) BETWEEN 30 AND 31"),
            Datum::Bool(true)
        );
        assert_eq!(run("s.name IN ('Bob', 'Alice')"), Datum::Bool(true));
        assert_eq!(
            run("s.missing IS MISSING AND s.name IS NOT NULL"),
            Datum::Bool(true)
        );
        assert_eq!(run("s.missing = 1"), Datum::Null);
        assert_eq!(run("NOT (s.missing = 1)"), Datum::Null);
        assert_eq!(run("s.tags[0] = 'a'"), Datum::Bool(true));
    }

    #[test]
    fn like_matches_wildcards_and_escapes() {
        assert!(like("Alice", "A%e", None).unwrap());
        assert!(like("Alice", "_lic_", None).unwrap());
        assert!(!like("Alice", "A%x", None).unwrap());
        assert!(like("50%", "50!%", Some('!')).unwrap());
        assert!(!like("500", "50!%", Some('!')).unwrap());
        assert!(like("", "%", None).unwrap());
        assert!(like("abcabc", "%abc", None).unwrap());
    }

    /// The value of the first SELECT item of `SELECT {sql} FROM S3Object s` over the
    /// test record.
    fn item(sql: &str) -> Result<Datum, AwsError> {
        let q = parse(&format!("SELECT {sql} FROM S3Object s")).unwrap();
        let r = record();
        let scope = Scope {
            record: &r,
            alias: Some("s"),
            now: 0,
        };
        eval(&q.items.unwrap()[0].expr, &scope)
    }

    #[test]
    fn string_functions_follow_sql() {
        let f = |sql: &str| item(sql).unwrap();
        assert_eq!(f("LOWER(s.name)"), Datum::Str("alice".into()));
        assert_eq!(f("UPPER(name) || '!'"), Datum::Str("ALICE!".into()));
        assert_eq!(
            f("SUBSTRING(s.name FROM 2 FOR 3)"),
            Datum::Str("lic".into())
        );
        assert_eq!(f("SUBSTRING('123456', 0, 3)"), Datum::Str("12".into()));
        assert_eq!(f("TRIM(BOTH 'x' FROM 'xxhixx')"), Datum::Str("hi".into()));
        assert_eq!(f("TRIM('  hi ')"), Datum::Str("hi".into()));
        assert_eq!(f("CHAR_LENGTH(s.name)"), Datum::Int(5));
        assert_eq!(f("CAST('2.5' AS FLOAT) * 2"), Datum::Float(5.0));
        assert_eq!(f("7 % 4"), Datum::Int(3));
    }

    #[test]
    fn evaluation_errors_carry_s3s_codes() {
        let f = |sql: &str| item(sql).unwrap_err().code;
        assert_eq!(f("CAST(s.name AS INT)"), "CastFailed");
        assert_eq!(f("FOO(1)"), "UnsupportedFunction");
        assert_eq!(f("LOWER(1, 2)"), "EvaluatorInvalidArguments");
        assert_eq!(f("9223372036854775807 + 1"), "IntegerOverflow");
        assert_eq!(f("s.name * 2"), "InvalidDataType");
        assert_eq!(f("s._0"), "InvalidColumnIndex");
    }

    #[test]
    fn case_and_date_functions_evaluate_as_s3_documents() {
        let f = |sql: &str| item(sql).unwrap();
        let text = |s: &str| Datum::Str(s.into());
        assert_eq!(
            f("CASE WHEN s.age > 30 THEN 'old' ELSE 'young' END"),
            text("old")
        );
        assert_eq!(
            f("CASE s.name WHEN 'Bob' THEN 1 WHEN 'Alice' THEN 2 END"),
            Datum::Int(2)
        );
        assert_eq!(f("CASE WHEN s.age < 0 THEN 1 END"), Datum::Null);
        assert_eq!(
            f("DATE_DIFF(day, `2010-01-01T`, TO_TIMESTAMP('2010-01-31T'))"),
            Datum::Int(30)
        );
        assert_eq!(
            f("EXTRACT(YEAR FROM DATE_ADD(year, 5, `2010-01-01T`))"),
            Datum::Int(2015)
        );
        assert_eq!(
            f("TO_STRING(`1969-07-20T20:18Z`, 'MMMM d, y')"),
            text("July 20, 1969")
        );
        assert_eq!(
            f("CAST('2010-01-01T' AS TIMESTAMP) < `2011T`"),
            Datum::Bool(true)
        );
        assert_eq!(
            f("UTCNOW() = `1970-01-01T00:00:00.000Z`"),
            Datum::Bool(true)
        );
        assert_eq!(
            f("CAST(TO_TIMESTAMP('07/20/1969', 'MM/dd/y') AS STRING)"),
            text("1969-07-20")
        );
        assert_eq!(f("EXTRACT(YEAR FROM s.missing)"), Datum::Null);
        let code = |sql: &str| item(sql).unwrap_err().code;
        assert_eq!(code("TO_TIMESTAMP('nope')"), "ValueParseFailure");
        assert_eq!(
            code("EXTRACT(YEAR FROM s.name)"),
            "IncorrectSqlFunctionArgumentType"
        );
        assert_eq!(
            code("DATE_ADD(year, 'x', `2010T`)"),
            "IncorrectSqlFunctionArgumentType"
        );
        assert_eq!(code("CAST('x' AS TIMESTAMP)"), "CastFailed");
        assert_eq!(code("UTCNOW(1)"), "EvaluatorInvalidArguments");
        assert_eq!(
            code("TO_STRING(`2010T`, 'q')"),
            "EvaluatorInvalidTimestampFormatPatternSymbol"
        );
    }

    #[test]
    fn aggregates_skip_nulls_and_sum_numbers() {
        let mut sum = Accumulator::new(Aggregate::Sum);
        let mut avg = Accumulator::new(Aggregate::Avg);
        let mut max = Accumulator::new(Aggregate::Max);
        let mut count = Accumulator::new(Aggregate::Count);
        for v in [
            Datum::Str("1".into()),
            Datum::Int(2),
            Datum::Null,
            Datum::Float(3.5),
        ] {
            sum.add(Some(v.clone())).unwrap();
            avg.add(Some(v.clone())).unwrap();
            max.add(Some(v.clone())).unwrap();
            count.add(Some(v)).unwrap();
        }
        assert_eq!(sum.finish(), Datum::Float(6.5));
        assert_eq!(avg.finish(), Datum::Float(6.5 / 3.0));
        assert_eq!(max.finish(), Datum::Float(3.5));
        assert_eq!(count.finish(), Datum::Int(3));
    }
}
