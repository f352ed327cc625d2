//! The PartiQL parser: a statement's tokens to a [`Statement`] over the expression tree.
//!
//! DynamoDB's PartiQL is SELECT, INSERT, UPDATE and DELETE on one table (or, for SELECT, one
//! index), with a WHERE clause of comparisons, `BETWEEN`, `IN`, `IS [NOT] MISSING`/`NULL`/
//! type, the functions `begins_with`, `contains`, `attribute_type` and `size`, joined by
//! `AND`, `OR` and `NOT`. Conditions and updates parse straight into the expression
//! language's [`Condition`] and [`Update`], so the one evaluator runs them. `?`
//! placeholders are bound to the request's `Parameters` as they are read, and literals
//! (`'string'`, numbers, `TRUE`/`FALSE`, `NULL`, `[lists]`, `{'maps': ...}`, `<<sets>>`)
//! become attribute values.
//!
//! Nesting is bounded: literals nest at most 32 levels, as DynamoDB's attributes do, and
//! conditions, `list_append` calls and arithmetic chains at most [`MAX_NESTING`] levels, so
//! that no statement drives the parser, the evaluator or a drop deeper than that.

use roto_core::{AwsError, AwsResult};

use super::super::attr::{Attr, Item};
use super::super::expr::parse::{Comparator, Operand};
use super::super::expr::{Condition, Update};
use super::super::number::Number;
use super::super::projection::{check_overlaps, Path, Step};
use super::lex::{tokenize, Token};

/// What `RETURNING` asks an UPDATE or DELETE for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returning {
    /// `ALL OLD *`
    AllOld,
    /// `MODIFIED OLD *`
    ModifiedOld,
    /// `ALL NEW *`
    AllNew,
    /// `MODIFIED NEW *`
    ModifiedNew,
}

impl Returning {
    /// The `ReturnValues` of the item operation that does the same.
    pub fn return_values(self) -> &'static str {
        match self {
            Returning::AllOld => "ALL_OLD",
            Returning::ModifiedOld => "UPDATED_OLD",
            Returning::AllNew => "ALL_NEW",
            Returning::ModifiedNew => "UPDATED_NEW",
        }
    }

    fn shown(self) -> &'static str {
        match self {
            Returning::AllOld => "ALL OLD *",
            Returning::ModifiedOld => "MODIFIED OLD *",
            Returning::AllNew => "ALL NEW *",
            Returning::ModifiedNew => "MODIFIED NEW *",
        }
    }
}

/// A SELECT (also the body of a transaction's `EXISTS(...)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// The table.
    pub table: String,
    /// The index (`"table"."index"`), if any.
    pub index: Option<String>,
    /// The projected paths; `None` for `*`.
    pub projection: Option<Vec<Path>>,
    /// The WHERE condition.
    pub condition: Option<Condition>,
    /// `ORDER BY` attributes, each with `true` for ascending.
    pub order: Vec<(String, bool)>,
}

/// One parsed statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `SELECT ... FROM ... [WHERE ...] [ORDER BY ...]`
    Select(Select),
    /// `INSERT INTO table VALUE {...}`
    Insert {
        /// The table.
        table: String,
        /// The item.
        item: Item,
    },
    /// `UPDATE table SET ... REMOVE ... WHERE ... [RETURNING ...]`
    Update {
        /// The table.
        table: String,
        /// The actions.
        update: Update,
        /// The WHERE condition.
        condition: Option<Condition>,
        /// What to return.
        returning: Option<Returning>,
    },
    /// `DELETE FROM table WHERE ... [RETURNING ALL OLD *]`
    Delete {
        /// The table.
        table: String,
        /// The WHERE condition.
        condition: Option<Condition>,
        /// What to return.
        returning: Option<Returning>,
    },
    /// `EXISTS(SELECT ...)`: a transaction's condition check.
    Exists(Select),
}

impl Statement {
    /// Whether the statement only reads.
    pub fn is_read(&self) -> bool {
        matches!(self, Statement::Select(_))
    }
}

/// `Statement wasn't well formed, can't be processed: <detail>`.
pub fn malformed(detail: impl AsRef<str>) -> AwsError {
    AwsError::validation(format!(
        "Statement wasn't well formed, can't be processed: {}",
        detail.as_ref()
    ))
}

fn parameter_count() -> AwsError {
    AwsError::validation("Number of parameters in request and statement don't match.")
}

/// Words that stand for syntax, never for an attribute, where they appear bare.
const KEYWORDS: [&str; 27] = [
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "MISSING",
    "BETWEEN",
    "TRUE",
    "FALSE",
    "VALUE",
    "SET",
    "REMOVE",
    "INSERT",
    "INTO",
    "UPDATE",
    "DELETE",
    "RETURNING",
    "ORDER",
    "BY",
    "ASC",
    "DESC",
    "EXISTS",
    "VALUES",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// The deepest nesting of conditions, `list_append` calls and arithmetic a statement may have.
pub const MAX_NESTING: usize = 100;

/// The deepest nesting of literal lists, maps and sets, and the most levels of a document
/// path: DynamoDB's attribute nesting limit.
const MAX_LITERAL_NESTING: usize = 32;

fn too_deep() -> AwsError {
    malformed(format!("Expressions may nest at most {MAX_NESTING} levels"))
}

/// The attribute types `attribute_type` names.
const TYPE_NAMES: [&str; 10] = ["B", "NULL", "SS", "BOOL", "L", "BS", "N", "NS", "S", "M"];

/// Parses `source`, binding its `?` placeholders to `parameters` in order.
pub fn parse(source: &str, parameters: &[Attr]) -> AwsResult<Statement> {
    let tokens = tokenize(source).map_err(malformed)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        parameters,
        used: 0,
        depth: 0,
        literal_depth: 0,
    };
    let statement = parser.statement()?;
    if parser.at < parser.tokens.len() {
        return Err(parser.unexpected());
    }
    if parser.used != parameters.len() {
        return Err(parameter_count());
    }
    Ok(statement)
}

struct Parser<'p> {
    tokens: Vec<Token>,
    at: usize,
    parameters: &'p [Attr],
    used: usize,
    /// How deep the condition or operand being read is nested.
    depth: usize,
    /// How deep the literal being read is nested.
    literal_depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_is(&self, punct: &str) -> bool {
        matches!(self.peek(), Some(Token::Punct(p)) if *p == punct)
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        self.peek().is_some_and(|t| t.is_keyword(keyword))
    }

    /// The error for the token at hand.
    fn unexpected(&self) -> AwsError {
        malformed(match self.peek() {
            None => "Unexpected end of statement",
            Some(Token::Word(w)) if is_keyword(w) => "Unexpected keyword",
            Some(_) => "Unexpected token",
        })
    }

    fn eat(&mut self, punct: &str) -> bool {
        let found = self.peek_is(punct);
        self.at += usize::from(found);
        found
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.peek_keyword(keyword);
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, punct: &str) -> AwsResult<()> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> AwsResult<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// Reads with `read` one level deeper, refusing to go past [`MAX_NESTING`].
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> AwsResult<T>) -> AwsResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(too_deep());
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
    }

    /// Reads a literal's members one level deeper, refusing to pass DynamoDB's 32 levels.
    fn literal_members<T>(&mut self, read: impl FnOnce(&mut Self) -> AwsResult<T>) -> AwsResult<T> {
        if self.literal_depth >= MAX_LITERAL_NESTING {
            return Err(AwsError::validation(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
            ));
        }
        self.literal_depth += 1;
        let out = read(self);
        self.literal_depth -= 1;
        out
    }

    fn parameter(&mut self) -> AwsResult<Attr> {
        let value = self
            .parameters
            .get(self.used)
            .cloned()
            .ok_or_else(parameter_count)?;
        self.used += 1;
        Ok(value)
    }

    // ---------------------------------------------------------------- statements

    fn statement(&mut self) -> AwsResult<Statement> {
        let Some(Token::Word(first)) = self.peek().cloned() else {
            return Err(malformed("Expected data manipulation"));
        };
        self.at += 1;
        match first.to_ascii_uppercase().as_str() {
            "SELECT" => Ok(Statement::Select(self.select()?)),
            "INSERT" => self.insert(),
            "UPDATE" => self.update(),
            "DELETE" => self.delete(),
            "EXISTS" => {
                self.expect("(")?;
                self.expect_keyword("SELECT")?;
                let select = self.select()?;
                self.expect(")")?;
                Ok(Statement::Exists(select))
            }
            _ => Err(malformed("Expected data manipulation")),
        }
    }

    fn identifier(&mut self) -> AwsResult<String> {
        match self.peek().cloned() {
            Some(Token::Quoted(name)) => {
                self.at += 1;
                if name.is_empty() {
                    return Err(AwsError::validation(
                        "Path component cannot be an empty string",
                    ));
                }
                Ok(name)
            }
            Some(Token::Word(name)) if !is_keyword(&name) => {
                self.at += 1;
                Ok(name)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// `table` or `table.index`.
    fn source(&mut self) -> AwsResult<(String, Option<String>)> {
        let table = self.identifier()?;
        if !self.eat(".") {
            return Ok((table, None));
        }
        let index = self.identifier()?;
        if self.peek_is(".") {
            return Err(AwsError::validation(
                "A path may contain at most 2 components in the FROM clause",
            ));
        }
        Ok((table, Some(index)))
    }

    /// A table that a write names (an index is refused).
    fn write_target(&mut self) -> AwsResult<String> {
        match self.source()? {
            (table, None) => Ok(table),
            (_, Some(_)) => Err(AwsError::validation(
                "This operation is not supported on an index",
            )),
        }
    }

    fn select(&mut self) -> AwsResult<Select> {
        let projection = if self.eat("*") {
            if self.peek_is(",") {
                return Err(AwsError::validation(
                    "Other attributes should not be present in the projection when '*' is used.",
                ));
            }
            None
        } else {
            let mut paths = vec![self.path()?];
            while self.eat(",") {
                if self.peek_is("*") {
                    return Err(AwsError::validation(
                        "Other attributes should not be present in the projection when '*' is used.",
                    ));
                }
                paths.push(self.path()?);
            }
            check_overlaps(&paths, "ProjectionExpression")?;
            Some(paths)
        };
        self.expect_keyword("FROM")?;
        let (table, index) = self.source()?;
        let condition = self.where_clause()?;
        let mut order = Vec::new();
        if self.eat_keyword("ORDER") {
            self.expect_keyword("BY")?;
            loop {
                let key = self.identifier()?;
                let ascending = !self.eat_keyword("DESC");
                if ascending {
                    self.eat_keyword("ASC");
                }
                order.push((key, ascending));
                if !self.eat(",") {
                    break;
                }
            }
        }
        Ok(Select {
            table,
            index,
            projection,
            condition,
            order,
        })
    }

    fn where_clause(&mut self) -> AwsResult<Option<Condition>> {
        if self.eat_keyword("WHERE") {
            Ok(Some(self.or()?))
        } else {
            Ok(None)
        }
    }

    fn insert(&mut self) -> AwsResult<Statement> {
        self.expect_keyword("INTO")?;
        let table = self.write_target()?;
        if !self.eat_keyword("VALUE") {
            return Err(if self.peek_keyword("VALUES") {
                AwsError::validation(
                    "Unsupported operation: Inserting multiple items in a single statement is not supported, use \"INSERT INTO tableName VALUE item\" instead",
                )
            } else {
                self.unexpected()
            });
        }
        let item = match self.value()? {
            Attr::M(item) => item,
            _ => {
                return Err(AwsError::validation(
                    "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement.",
                ))
            }
        };
        if self.peek_keyword("RETURNING") {
            return Err(AwsError::validation("RETURNING is not supported in INSERT"));
        }
        Ok(Statement::Insert { table, item })
    }

    fn update(&mut self) -> AwsResult<Statement> {
        let table = self.write_target()?;
        let mut update = Update::default();
        loop {
            if self.eat_keyword("SET") {
                loop {
                    self.assignment(&mut update)?;
                    if !self.eat(",") {
                        break;
                    }
                }
            } else if self.eat_keyword("REMOVE") {
                loop {
                    update.remove.push(self.path()?);
                    if !self.eat(",") {
                        break;
                    }
                }
            } else {
                break;
            }
        }
        if update == Update::default() {
            return Err(self.unexpected());
        }
        let paths: Vec<Path> = update.paths().into_iter().cloned().collect();
        check_overlaps(&paths, "UpdateExpression")?;
        let condition = self.where_clause()?;
        let returning = self.returning()?;
        Ok(Statement::Update {
            table,
            update,
            condition,
            returning,
        })
    }

    fn delete(&mut self) -> AwsResult<Statement> {
        self.expect_keyword("FROM")?;
        let table = self.write_target()?;
        let condition = self.where_clause()?;
        let returning = self.returning()?;
        if let Some(other) = returning.filter(|r| *r != Returning::AllOld) {
            return Err(AwsError::validation(format!(
                "Invalid returning clause: RETURNING {}. Only RETURNING ALL OLD * is allowed in DELETE statements.",
                other.shown()
            )));
        }
        Ok(Statement::Delete {
            table,
            condition,
            returning,
        })
    }

    fn returning(&mut self) -> AwsResult<Option<Returning>> {
        if !self.eat_keyword("RETURNING") {
            return Ok(None);
        }
        let all = if self.eat_keyword("ALL") {
            true
        } else if self.eat_keyword("MODIFIED") {
            false
        } else {
            return Err(self.unexpected());
        };
        let old = if self.eat_keyword("OLD") {
            true
        } else if self.eat_keyword("NEW") {
            false
        } else {
            return Err(self.unexpected());
        };
        if !self.eat("*") {
            return Err(AwsError::validation(
                "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause",
            ));
        }
        Ok(Some(match (all, old) {
            (true, true) => Returning::AllOld,
            (false, true) => Returning::ModifiedOld,
            (true, false) => Returning::AllNew,
            (false, false) => Returning::ModifiedNew,
        }))
    }

    /// `path = value`, `path = path + value`, `path = list_append(...)`,
    /// `path = set_add(path, <<...>>)`, `path = set_delete(path, <<...>>)`.
    fn assignment(&mut self, update: &mut Update) -> AwsResult<()> {
        let target = self.path()?;
        self.expect("=")?;
        for (function, add) in [("SET_ADD", true), ("SET_DELETE", false)] {
            if !self.peek_keyword(function) || !self.next_is("(") {
                continue;
            }
            self.at += 2;
            let mut args = vec![self.set_operand()?];
            while self.eat(",") {
                args.push(self.set_operand()?);
            }
            self.expect(")")?;
            let [first, second] = <[Operand; 2]>::try_from(args).map_err(|_| {
                AwsError::validation(format!("{function} must have exactly two arguments"))
            })?;
            if first != Operand::Path(target.clone()) {
                return Err(AwsError::validation(format!(
                    "The first argument to {function} must equal the assignment value"
                )));
            }
            let set = match second {
                Operand::Value(set @ (Attr::Ss(_) | Attr::Ns(_) | Attr::Bs(_))) => set,
                _ => {
                    return Err(AwsError::validation(format!(
                        "The second argument to {function} must be a value with type SET"
                    )))
                }
            };
            if add {
                update.add.push((target, set));
            } else {
                update.delete.push((target, set));
            }
            return Ok(());
        }
        let mut value = self.set_operand()?;
        let mut terms = 1;
        while self.peek_is("+") || self.peek_is("-") {
            terms += 1;
            if terms > MAX_NESTING {
                return Err(too_deep());
            }
            let plus = self.eat("+");
            if !plus {
                self.at += 1;
            }
            let right = self.set_operand()?;
            value = Operand::Arithmetic(Box::new(value), plus, Box::new(right));
        }
        update.set.push((target, value));
        Ok(())
    }

    fn next_is(&self, punct: &str) -> bool {
        matches!(self.tokens.get(self.at + 1), Some(Token::Punct(p)) if *p == punct)
    }

    /// One operand on the right of a SET: a value, a path or `list_append(a, b)`.
    fn set_operand(&mut self) -> AwsResult<Operand> {
        if self.peek_keyword("LIST_APPEND") && self.next_is("(") {
            self.at += 2;
            return self.nested(|p| {
                let first = p.set_operand()?;
                p.expect(",")?;
                let second = p.set_operand()?;
                p.expect(")")?;
                Ok(Operand::ListAppend(Box::new(first), Box::new(second)))
            });
        }
        if let Some(Token::Word(name)) = self.peek() {
            if self.next_is("(") {
                return Err(AwsError::validation(format!(
                    "Unrecognized function: {}",
                    name.to_ascii_lowercase()
                )));
            }
        }
        self.operand()
    }

    // ---------------------------------------------------------------- paths and values

    /// A document path: `a`, `"a"`, `a.b[2]."c"`, at most 32 levels deep, as in expressions.
    fn path(&mut self) -> AwsResult<Path> {
        let path = self.path_steps()?;
        if path.len() > MAX_LITERAL_NESTING {
            return Err(AwsError::validation(format!(
                "The document path has too many nesting levels; nesting levels: {}",
                path.len()
            )));
        }
        Ok(path)
    }

    fn path_steps(&mut self) -> AwsResult<Path> {
        if self.peek_is("[") {
            return Err(AwsError::validation(
                "A path cannot start with a list index",
            ));
        }
        let mut path = vec![Step::Name(self.identifier()?)];
        loop {
            if self.eat(".") {
                match self.peek() {
                    Some(Token::Quoted(_)) | Some(Token::Word(_)) => path.push(Step::Name(
                        self.identifier()
                            .map_err(|_| malformed("Invalid path dot component"))?,
                    )),
                    _ => return Err(malformed("Invalid path dot component")),
                }
            } else if self.eat("[") {
                let index = match self.peek() {
                    Some(Token::Number(n)) => n.parse::<usize>().ok(),
                    _ => None,
                };
                let Some(index) = index else {
                    return Err(self.unexpected());
                };
                self.at += 1;
                self.expect("]")?;
                path.push(Step::Index(index));
            } else {
                return Ok(path);
            }
        }
    }

    /// A literal or a `?`: strings, numbers, booleans, NULL, lists, maps and sets.
    fn value(&mut self) -> AwsResult<Attr> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.unexpected());
        };
        self.at += 1;
        Ok(match token {
            Token::Punct("?") => self.parameter()?,
            Token::Str(s) => Attr::S(s),
            Token::Number(n) => number(&n)?,
            Token::Punct("-") => match self.peek().cloned() {
                Some(Token::Number(n)) => {
                    self.at += 1;
                    number(&format!("-{n}"))?
                }
                _ => return Err(self.unexpected()),
            },
            Token::Word(w) if w.eq_ignore_ascii_case("TRUE") => Attr::Bool(true),
            Token::Word(w) if w.eq_ignore_ascii_case("FALSE") => Attr::Bool(false),
            Token::Word(w) if w.eq_ignore_ascii_case("NULL") => Attr::Null,
            Token::Word(w) if w.eq_ignore_ascii_case("MISSING") => {
                return Err(AwsError::validation(
                    "MISSING must be compared using IS operator",
                ))
            }
            Token::Punct("[") => Attr::L(self.literal_members(|p| p.sequence("]"))?),
            Token::Punct("<<") => bag(self.literal_members(|p| p.sequence(">>"))?)?,
            Token::Punct("{") => self.literal_members(Parser::map_literal)?,
            _ => {
                self.at -= 1;
                return Err(self.unexpected());
            }
        })
    }

    /// A `{'key': value, ...}` literal's members, after its `{`.
    fn map_literal(&mut self) -> AwsResult<Attr> {
        let mut map = Item::new();
        if self.eat("}") {
            return Ok(Attr::M(map));
        }
        loop {
            let key = match self.value()? {
                Attr::S(key) => key,
                other => {
                    return Err(AwsError::validation(format!(
                        "Tuple keys must be of type String. Actual type: {} under {{}}",
                        other.tag()
                    )))
                }
            };
            self.expect(":")?;
            let value = self.value()?;
            if map.insert(key.clone(), value).is_some() {
                return Err(AwsError::validation(format!(
                    "Duplicate keys in tuple. Key: {key} under {{}}"
                )));
            }
            if !self.eat(",") {
                break;
            }
        }
        self.expect("}")?;
        Ok(Attr::M(map))
    }

    /// Comma-separated values up to `close`.
    fn sequence(&mut self, close: &str) -> AwsResult<Vec<Attr>> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(self.value()?);
            if !self.eat(close) {
                self.expect(",")?;
                continue;
            }
            return Ok(out);
        }
    }

    fn starts_value(&self) -> bool {
        match self.peek() {
            Some(Token::Punct(p)) => ["?", "[", "{", "<<", "-"].contains(p),
            Some(Token::Str(_)) | Some(Token::Number(_)) => true,
            Some(Token::Word(w)) => ["TRUE", "FALSE", "NULL", "MISSING"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k)),
            _ => false,
        }
    }

    /// A value, a path, or `size(path)`.
    fn operand(&mut self) -> AwsResult<Operand> {
        if self.starts_value() {
            return Ok(Operand::Value(self.value()?));
        }
        if self.peek_keyword("SIZE") && self.next_is("(") {
            self.at += 2;
            let path = self.path()?;
            self.expect(")")?;
            return Ok(Operand::Size(path));
        }
        Ok(Operand::Path(self.path()?))
    }

    // ---------------------------------------------------------------- conditions

    fn or(&mut self) -> AwsResult<Condition> {
        let mut left = self.and()?;
        while self.eat_keyword("OR") {
            let right = self.and()?;
            left = Condition::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> AwsResult<Condition> {
        let mut left = self.not()?;
        while self.eat_keyword("AND") {
            let right = self.not()?;
            left = Condition::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> AwsResult<Condition> {
        if self.eat_keyword("NOT") {
            return self.nested(|p| Ok(Condition::Not(Box::new(p.not()?))));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> AwsResult<Condition> {
        if self.eat("(") {
            return self.nested(|p| {
                let inner = p.or()?;
                p.expect(")")?;
                Ok(inner)
            });
        }
        if let Some(Token::Word(word)) = self.peek().cloned() {
            if self.next_is("(") && !word.eq_ignore_ascii_case("SIZE") {
                return self.function(&word);
            }
        }
        let left = self.operand()?;
        let comparator = match self.peek() {
            Some(Token::Punct("=")) => Some(Comparator::Eq),
            Some(Token::Punct("<>" | "!=")) => Some(Comparator::Ne),
            Some(Token::Punct("<")) => Some(Comparator::Lt),
            Some(Token::Punct("<=")) => Some(Comparator::Le),
            Some(Token::Punct(">")) => Some(Comparator::Gt),
            Some(Token::Punct(">=")) => Some(Comparator::Ge),
            _ => None,
        };
        if let Some(comparator) = comparator {
            self.at += 1;
            let right = self.operand()?;
            return Ok(Condition::Compare(left, comparator, right));
        }
        if self.eat_keyword("IS") {
            return self.is(left);
        }
        let negated = self.eat_keyword("NOT");
        let condition = if self.eat_keyword("BETWEEN") {
            let low = self.operand()?;
            self.expect_keyword("AND")?;
            let high = self.operand()?;
            Condition::Between(left, low, high)
        } else if self.eat_keyword("IN") {
            let close = if self.eat("[") {
                "]"
            } else if self.eat("(") {
                ")"
            } else if self.eat("<<") {
                ">>"
            } else {
                return Err(AwsError::validation(
                    "IN operator must have a left hand argument of type Variable Reference and right hand argument of type Seq with at least one member",
                ));
            };
            let list = self.sequence(close)?;
            if list.is_empty() || !matches!(left, Operand::Path(_)) {
                return Err(AwsError::validation(
                    "IN operator must have a left hand argument of type Variable Reference and right hand argument of type Seq with at least one member",
                ));
            }
            Condition::In(left, list.into_iter().map(Operand::Value).collect())
        } else {
            return Err(self.unexpected());
        };
        Ok(if negated {
            Condition::Not(Box::new(condition))
        } else {
            condition
        })
    }

    /// `x IS [NOT] MISSING | NULL | BOOLEAN | STRING | NUMERIC | BLOB | LIST | STRUCT | TUPLE`.
    fn is(&mut self, left: Operand) -> AwsResult<Condition> {
        let Operand::Path(path) = left else {
            return Err(AwsError::validation(
                "The left hand side argument to IS must be a Variable Reference, Literal, or Path",
            ));
        };
        let negated = self.eat_keyword("NOT");
        let Some(Token::Word(kind)) = self.peek().cloned() else {
            return Err(self.unexpected());
        };
        self.at += 1;
        let tag = match kind.to_ascii_uppercase().as_str() {
            "MISSING" => None,
            "NULL" => Some("NULL"),
            "BOOLEAN" => Some("BOOL"),
            "STRING" => Some("S"),
            "NUMERIC" => Some("N"),
            "BLOB" => Some("B"),
            "LIST" => Some("L"),
            "STRUCT" | "TUPLE" => Some("M"),
            other => {
                return Err(AwsError::validation(format!(
                    "Unsupported data type for IS operator: {other}. Supported data types are [MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]"
                )))
            }
        };
        Ok(match (tag, negated) {
            (None, false) => Condition::NotExists(path),
            (None, true) => Condition::Exists(path),
            (Some(tag), false) => Condition::Type(path, tag.into()),
            (Some(tag), true) => Condition::Not(Box::new(Condition::Type(path, tag.into()))),
        })
    }

    /// `begins_with(a, b)`, `contains(a, b)`, `attribute_type(a, 'S')`.
    fn function(&mut self, name: &str) -> AwsResult<Condition> {
        let lower = name.to_ascii_lowercase();
        if !["begins_with", "contains", "attribute_type"].contains(&lower.as_str()) {
            return Err(AwsError::validation(format!(
                "Unrecognized function: {lower}"
            )));
        }
        self.at += 2;
        let first = self.operand()?;
        self.expect(",")?;
        let second = self.operand()?;
        self.expect(")")?;
        Ok(match (lower.as_str(), first, second) {
            ("begins_with", a, b) => Condition::BeginsWith(a, b),
            ("contains", a, b) => Condition::Contains(a, b),
            (_, Operand::Path(path), Operand::Value(Attr::S(kind)))
                if TYPE_NAMES.contains(&kind.as_str()) =>
            {
                Condition::Type(path, kind)
            }
            (_, _, Operand::Value(Attr::S(kind))) if !TYPE_NAMES.contains(&kind.as_str()) => {
                return Err(AwsError::validation(format!(
                    "Invalid attribute type name found; type: {kind}, valid types: {{{}}}",
                    TYPE_NAMES.join(",")
                )))
            }
            _ => return Err(malformed("attribute_type takes a path and a type name")),
        })
    }
}

fn number(text: &str) -> AwsResult<Attr> {
    Number::parse(text)
        .map(Attr::N)
        .map_err(|e| AwsError::validation(e.message(text)))
}

/// A `<<bag>>` as a set: all strings, all numbers or all binaries.
fn bag(members: Vec<Attr>) -> AwsResult<Attr> {
    let unsupported = || {
        AwsError::validation(
            "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags",
        )
    };
    let set = match members.first() {
        None => return Err(AwsError::validation("Empty bags are not supported")),
        Some(Attr::S(_)) => Attr::Ss(
            members
                .into_iter()
                .map(|m| match m {
                    Attr::S(s) => Ok(s),
                    _ => Err(unsupported()),
                })
                .collect::<AwsResult<_>>()?,
        ),
        Some(Attr::N(_)) => Attr::Ns(
            members
                .into_iter()
                .map(|m| match m {
                    Attr::N(n) => Ok(n),
                    _ => Err(unsupported()),
                })
                .collect::<AwsResult<_>>()?,
        ),
        Some(Attr::B(_)) => Attr::Bs(
            members
                .into_iter()
                .map(|m| match m {
                    Attr::B(b) => Ok(b),
                    _ => Err(unsupported()),
                })
                .collect::<AwsResult<_>>()?,
        ),
        Some(_) => return Err(unsupported()),
    };
    // Through the validating constructor, so a set with a repeat is refused as DynamoDB does.
    Attr::from_value(&set.to_value())
}

#[cfg(test)]
mod tests;
