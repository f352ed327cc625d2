//! The DynamoDB expression language: condition, filter, key-condition, projection and
//! update expressions.
//!
//! [`lex`] splits an expression into tokens, [`parse`] builds a typed tree with DynamoDB's
//! precedence and refuses what DynamoDB refuses before reading an item, and [`eval`] runs
//! conditions and updates over items with exact numbers. [`Placeholders`] holds a
//! request's `ExpressionAttributeNames` and `ExpressionAttributeValues` across all its
//! expressions, so that names or values none of them used are refused as DynamoDB does.

use std::collections::{BTreeMap, BTreeSet};

use roto_core::{AwsError, AwsResult, Value};

use super::attr::Attr;
use super::projection::{Names, Path};

pub mod eval;
mod lex;
pub mod parse;

pub use parse::{Condition, Update};

/// The longest expression DynamoDB accepts, in bytes of the string as sent.
pub const MAX_EXPRESSION_BYTES: usize = 4096;

/// Refuses an expression longer than [`MAX_EXPRESSION_BYTES`], before it is parsed.
fn check_size(source: &str, member: &str) -> AwsResult<()> {
    if source.len() > MAX_EXPRESSION_BYTES {
        return Err(AwsError::validation(format!(
            "Invalid {member}: Expression size has exceeded the maximum allowed size; expression size: {}",
            source.len()
        )));
    }
    Ok(())
}

/// Joins conditions pairwise with `join` (`Condition::And` or `Condition::Or`) into a
/// balanced tree, so that however many a request lists, the tree stays shallow.
pub fn balanced(
    conditions: Vec<Condition>,
    join: fn(Box<Condition>, Box<Condition>) -> Condition,
) -> Option<Condition> {
    crate::balance::balanced(conditions, |a, b| join(Box::new(a), Box::new(b)))
}

/// A request's expression placeholders, and which of them its expressions used.
pub struct Placeholders<'a> {
    names: Names<'a>,
    values: BTreeMap<String, Attr>,
    used_values: BTreeSet<String>,
}

impl<'a> Placeholders<'a> {
    /// Reads (and validates) the request's `ExpressionAttributeNames` and `Values`.
    pub fn new(input: &'a Value) -> AwsResult<Placeholders<'a>> {
        let mut values = BTreeMap::new();
        if let Some(map) = input
            .get("ExpressionAttributeValues")
            .and_then(Value::as_map)
        {
            for (key, value) in map {
                let attr = Attr::from_value(value).map_err(|e| {
                    AwsError::validation(format!(
                        "ExpressionAttributeValues contains invalid value: {} for key {key}",
                        e.message
                    ))
                })?;
                values.insert(key.clone(), attr);
            }
        }
        Ok(Placeholders {
            names: Names::new(input.get("ExpressionAttributeNames")),
            values,
            used_values: BTreeSet::new(),
        })
    }

    /// The attribute name `#placeholder` stands for.
    pub fn name(&mut self, placeholder: &str, member: &str) -> AwsResult<String> {
        self.names.resolve(placeholder, member)
    }

    /// The value `:placeholder` stands for.
    pub fn value(&mut self, placeholder: &str, member: &str) -> AwsResult<Attr> {
        match self.values.get(placeholder) {
            Some(v) => {
                self.used_values.insert(placeholder.to_string());
                Ok(v.clone())
            }
            None => Err(AwsError::validation(format!(
                "Invalid {member}: An expression attribute value used in expression is not defined; attribute value: {placeholder}"
            ))),
        }
    }

    /// Refuses names and values that no expression of the request used.
    pub fn check_all_used(&self) -> AwsResult<()> {
        self.names.check_all_used()?;
        let unused: Vec<&str> = self
            .values
            .keys()
            .map(String::as_str)
            .filter(|k| !self.used_values.contains(*k))
            .collect();
        if unused.is_empty() {
            return Ok(());
        }
        Err(AwsError::validation(format!(
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{}}}",
            unused.join(", ")
        )))
    }

    /// Parses the condition in `member`, if the request has one.
    pub fn condition(
        &mut self,
        input: &Value,
        member: &'static str,
    ) -> AwsResult<Option<Condition>> {
        input
            .str(member)
            .map(|source| {
                check_size(source, member)?;
                parse::Parser::new(source, member, self).condition()
            })
            .transpose()
    }

    /// Parses the projection in `member`, if the request has one.
    pub fn projection(
        &mut self,
        input: &Value,
        member: &'static str,
    ) -> AwsResult<Option<Vec<Path>>> {
        input
            .str(member)
            .map(|source| {
                check_size(source, member)?;
                parse::Parser::new(source, member, self).projection()
            })
            .transpose()
    }

    /// Parses the `UpdateExpression`, if the request has one.
    pub fn update(&mut self, input: &Value) -> AwsResult<Option<Update>> {
        input
            .str("UpdateExpression")
            .map(|source| {
                check_size(source, "UpdateExpression")?;
                parse::Parser::new(source, "UpdateExpression", self).update()
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests;
