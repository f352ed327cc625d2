//! Expression trees back to expression text, so a PartiQL write is an ordinary item request.
//!
//! A PartiQL INSERT, UPDATE or DELETE becomes the PutItem, UpdateItem, DeleteItem (or
//! TransactWriteItems) request that does the same, and runs through that operation's own
//! handler: its validation, its conditions, its index rows and whatever follows a write.
//! Every attribute name is written as a `#nN` placeholder and every value as `:vN`, so
//! names that are reserved words and values of any type survive the round trip exactly.

use std::collections::BTreeMap;

use roto_core::Value;

use super::super::attr::Attr;
use super::super::expr::parse::{Comparator, Operand};
use super::super::expr::{Condition, Update};
use super::super::projection::{Path, Step};

/// The placeholders one request's expressions use.
#[derive(Default)]
pub struct Rendering {
    names: Vec<String>,
    values: Vec<Attr>,
}

fn comparator(op: Comparator) -> &'static str {
    match op {
        Comparator::Eq => "=",
        Comparator::Ne => "<>",
        Comparator::Lt => "<",
        Comparator::Le => "<=",
        Comparator::Gt => ">",
        Comparator::Ge => ">=",
    }
}

impl Rendering {
    fn name(&mut self, name: &str) -> String {
        let index = match self.names.iter().position(|n| n == name) {
            Some(index) => index,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        };
        format!("#n{index}")
    }

    fn value(&mut self, value: &Attr) -> String {
        self.values.push(value.clone());
        format!(":v{}", self.values.len() - 1)
    }

    fn path(&mut self, path: &Path) -> String {
        let mut out = String::new();
        for step in path {
            match step {
                Step::Name(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&self.name(name));
                }
                Step::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }

    fn operand(&mut self, operand: &Operand) -> String {
        match operand {
            Operand::Path(path) => self.path(path),
            Operand::Value(value) => self.value(value),
            Operand::Size(path) => format!("size({})", self.path(path)),
            Operand::IfNotExists(path, fallback) => {
                let path = self.path(path);
                format!("if_not_exists({path}, {})", self.operand(fallback))
            }
            Operand::ListAppend(a, b) => {
                let a = self.operand(a);
                format!("list_append({a}, {})", self.operand(b))
            }
            Operand::Arithmetic(a, plus, b) => {
                let a = self.operand(a);
                let sign = if *plus { "+" } else { "-" };
                format!("{a} {sign} {}", self.operand(b))
            }
        }
    }

    /// A condition as `ConditionExpression` text.
    pub fn condition(&mut self, condition: &Condition) -> String {
        match condition {
            Condition::Or(a, b) | Condition::And(a, b) => {
                let joiner = if matches!(condition, Condition::Or(..)) {
                    "OR"
                } else {
                    "AND"
                };
                let a = self.condition(a);
                format!("({a}) {joiner} ({})", self.condition(b))
            }
            Condition::Not(a) => format!("NOT ({})", self.condition(a)),
            Condition::Compare(a, op, b) => {
                let a = self.operand(a);
                format!("{a} {} {}", comparator(*op), self.operand(b))
            }
            Condition::Between(x, low, high) => {
                let x = self.operand(x);
                let low = self.operand(low);
                format!("{x} BETWEEN {low} AND {}", self.operand(high))
            }
            Condition::In(x, list) => {
                let x = self.operand(x);
                let list: Vec<String> = list.iter().map(|o| self.operand(o)).collect();
                format!("{x} IN ({})", list.join(", "))
            }
            Condition::Exists(path) => format!("attribute_exists({})", self.path(path)),
            Condition::NotExists(path) => format!("attribute_not_exists({})", self.path(path)),
            Condition::Type(path, kind) => {
                let path = self.path(path);
                format!(
                    "attribute_type({path}, {})",
                    self.value(&Attr::S(kind.clone()))
                )
            }
            Condition::BeginsWith(a, b) | Condition::Contains(a, b) => {
                let function = if matches!(condition, Condition::BeginsWith(..)) {
                    "begins_with"
                } else {
                    "contains"
                };
                let a = self.operand(a);
                format!("{function}({a}, {})", self.operand(b))
            }
        }
    }

    /// An update as `UpdateExpression` text.
    pub fn update(&mut self, update: &Update) -> String {
        let mut sections = Vec::new();
        let set: Vec<String> = update
            .set
            .iter()
            .map(|(path, value)| {
                let path = self.path(path);
                format!("{path} = {}", self.operand(value))
            })
            .collect();
        let remove: Vec<String> = update.remove.iter().map(|p| self.path(p)).collect();
        let mut with_value = |actions: &[(Path, Attr)]| -> Vec<String> {
            actions
                .iter()
                .map(|(path, value)| {
                    let path = self.path(path);
                    format!("{path} {}", self.value(value))
                })
                .collect()
        };
        let add = with_value(&update.add);
        let delete = with_value(&update.delete);
        for (keyword, actions) in [
            ("SET", set),
            ("REMOVE", remove),
            ("ADD", add),
            ("DELETE", delete),
        ] {
            if !actions.is_empty() {
                sections.push(format!("{keyword} {}", actions.join(", ")));
            }
        }
        sections.join(" ")
    }

    /// `request` with the placeholders' `ExpressionAttributeNames` and `Values`.
    pub fn finish(self, mut request: Value) -> Value {
        if !self.names.is_empty() {
            let names: BTreeMap<String, Value> = self
                .names
                .into_iter()
                .enumerate()
                .map(|(i, n)| (format!("#n{i}"), Value::String(n)))
                .collect();
            request.insert("ExpressionAttributeNames", Value::Map(names));
        }
        if !self.values.is_empty() {
            let values: BTreeMap<String, Value> = self
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!(":v{i}"), v.to_value()))
                .collect();
            request.insert("ExpressionAttributeValues", Value::Map(values));
        }
        request
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::attr::Item;
    use super::super::super::expr::{eval, Placeholders};
    use super::super::parse::{parse, Statement};
    use super::*;

    /// Renders the WHERE of `SELECT * FROM t WHERE <source>`, parses it back as a
    /// `ConditionExpression` and checks both trees agree on `item`.
    fn round_trip(source: &str, item: &Item) -> bool {
        let Statement::Select(select) =
            parse(&format!("SELECT * FROM t WHERE {source}"), &[]).unwrap()
        else {
            unreachable!()
        };
        let condition = select.condition.unwrap();
        let mut rendering = Rendering::default();
        let text = rendering.condition(&condition);
        let request = rendering.finish(Value::map().with("ConditionExpression", text));
        let mut placeholders = Placeholders::new(&request).unwrap();
        let parsed = placeholders
            .condition(&request, "ConditionExpression")
            .unwrap()
            .unwrap();
        placeholders.check_all_used().unwrap();
        assert_eq!(parsed, condition);
        eval::matches(&parsed, item)
    }

    #[test]
    fn conditions_survive_rendering() {
        let item = Attr::item(
            &Value::map()
                .with("name", Value::map().with("S", "widget"))
                .with("size", Value::map().with("N", "3")),
        )
        .unwrap();
        assert!(round_trip(
            "name = 'widget' AND (size > 2 OR NOT size IN [1, 2])",
            &item
        ));
        assert!(round_trip(
            "begins_with(name, 'wid') AND size BETWEEN 1 AND 3",
            &item
        ));
        assert!(round_trip(
            "gone IS MISSING AND size IS NUMERIC AND size(name) = 6",
            &item
        ));
        assert!(!round_trip(
            "contains(name, 'x') OR \"value\" = name",
            &item
        ));
    }

    #[test]
    fn updates_render_every_section() {
        let Statement::Update { update, .. } = parse(
            "UPDATE t SET a = 1, b = b + 2, l = list_append(l, [1]) SET s = set_add(s, <<'x'>>) \
             SET d = set_delete(d, <<1>>) REMOVE r WHERE pk = 'k'",
            &[],
        )
        .unwrap() else {
            unreachable!()
        };
        let mut rendering = Rendering::default();
        let text = rendering.update(&update);
        assert_eq!(
            text,
            "SET #n0 = :v0, #n1 = #n1 + :v1, #n2 = list_append(#n2, :v2) REMOVE #n3 ADD #n4 :v3 DELETE #n5 :v4"
        );
        let request = rendering.finish(Value::map().with("UpdateExpression", text));
        let mut placeholders = Placeholders::new(&request).unwrap();
        assert_eq!(placeholders.update(&request).unwrap(), Some(update));
    }
}
