//! Entry points for the fuzzer (`crates/roto-fuzz`): each reads one input through the
//! parsers and evaluators a request's text reaches, with fixed placeholders, schema and
//! item, and throws every result away. They exist so the fuzzer can reach private modules;
//! nothing in the server calls them.

use roto_core::Value;
use serde_json::json;

use super::attr::{Attr, Item};
use super::expr::{eval, Placeholders};
use super::key::KeySchema;
use super::number::Number;
use super::partiql::parse::{parse, Statement};
use super::queries::key_condition;

/// `ExpressionAttributeValues` of every type, and the names `#a`, `#b`, `#n`.
fn placeholders_input() -> Value {
    let attr = |tag: &str, v: Value| Value::map().with(tag, v);
    Value::map()
        .with(
            "ExpressionAttributeNames",
            Value::map()
                .with("#a", "a")
                .with("#b", "b")
                .with("#n", "name"),
        )
        .with(
            "ExpressionAttributeValues",
            Value::map()
                .with(":s", attr("S", "x".into()))
                .with(":n", attr("N", "1".into()))
                .with(":b", attr("B", Value::Blob(vec![1, 2])))
                .with(":t", attr("BOOL", true.into()))
                .with(":z", attr("NULL", true.into()))
                .with(":l", attr("L", vec![attr("N", "2".into())].into()))
                .with(
                    ":m",
                    attr("M", Value::map().with("k", attr("S", "v".into()))),
                )
                .with(":ss", attr("SS", vec![Value::from("x")].into()))
                .with(":ns", attr("NS", vec![Value::from("3")].into())),
        )
}

fn item() -> Item {
    let number = |n: &str| Number::parse(n).map(Attr::N).unwrap_or(Attr::Null);
    let mut item = Item::new();
    item.insert("a".into(), Attr::S("x".into()));
    item.insert("b".into(), number("1"));
    item.insert("l".into(), Attr::L(vec![number("1"), Attr::S("y".into())]));
    item.insert("m".into(), Attr::M(Item::from([("k".into(), number("2"))])));
    item.insert("ss".into(), Attr::Ss(vec!["x".into()]));
    item
}

/// Reads `text` as a condition, key condition, filter, projection and update expression,
/// evaluating what parses over a fixed item.
pub fn fuzz_expressions(text: &str) {
    let item = item();
    let schema = KeySchema::from_json(
        &json!([{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}]),
        &json!([{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "N"}]),
    );
    for member in [
        "ConditionExpression",
        "KeyConditionExpression",
        "FilterExpression",
    ] {
        let input = placeholders_input().with(member, text);
        let Ok(mut placeholders) = Placeholders::new(&input) else {
            return;
        };
        if let Ok(Some(condition)) = placeholders.condition(&input, member) {
            eval::matches(&condition, &item);
            if let Some(schema) = &schema {
                let _ = key_condition(schema, &condition);
            }
        }
        let _ = placeholders.check_all_used();
    }
    let input = placeholders_input()
        .with("ProjectionExpression", text)
        .with("UpdateExpression", text);
    if let Ok(mut placeholders) = Placeholders::new(&input) {
        let _ = placeholders.projection(&input, "ProjectionExpression");
        if let Ok(Some(update)) = placeholders.update(&input) {
            let _ = eval::apply(&update, &item);
        }
    }
}

/// Parses `text` as a PartiQL statement with two parameters, evaluating a SELECT's,
/// UPDATE's or DELETE's condition and an UPDATE's changes over a fixed item.
pub fn fuzz_partiql(text: &str) {
    let parameters = [Attr::S("x".into()), Attr::Bool(true)];
    let item = item();
    for count in 0..=parameters.len() {
        let Ok(statement) = parse(text, &parameters[..count]) else {
            continue;
        };
        let condition = match statement {
            Statement::Select(select) | Statement::Exists(select) => select.condition,
            Statement::Update {
                update, condition, ..
            } => {
                let _ = eval::apply(&update, &item);
                condition
            }
            Statement::Delete { condition, .. } => condition,
            Statement::Insert { .. } => None,
        };
        if let Some(condition) = condition {
            eval::matches(&condition, &item);
        }
    }
}
