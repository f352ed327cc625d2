//! Unit tests of the expression parser and evaluator.

use roto_core::Value;

use super::super::attr::{Attr, Item};
use super::super::number::Number;
use super::{eval, Placeholders};

fn n(text: &str) -> Value {
    Value::map().with("N", text)
}

fn s(text: &str) -> Value {
    Value::map().with("S", text)
}

fn input(member: &str, source: &str, values: Value) -> Value {
    Value::map()
        .with(member, source)
        .with("ExpressionAttributeValues", values)
        .with("ExpressionAttributeNames", Value::map().with("#n", "name"))
}

fn item() -> Item {
    let mut item = Item::new();
    item.insert("name".into(), Attr::S("widget".into()));
    item.insert("price".into(), Attr::N(Number::parse("10.50").unwrap()));
    item.insert("tags".into(), Attr::Ss(vec!["a".into(), "b".into()]));
    item.insert(
        "lst".into(),
        Attr::L(vec![Attr::N(Number::parse("1").unwrap()), Attr::Null]),
    );
    item
}

/// Parses and evaluates a condition over [`item`]; `Err` carries the message.
fn check(source: &str, values: Value) -> Result<bool, String> {
    let input = input("ConditionExpression", source, values);
    let mut p = Placeholders::new(&input).map_err(|e| e.message)?;
    let condition = p
        .condition(&input, "ConditionExpression")
        .map_err(|e| e.message)?
        .expect("a condition");
    Ok(eval::matches(&condition, &item()))
}

fn values() -> Value {
    Value::map()
        .with(":ten", n("10"))
        .with(":eleven", n("11"))
        .with(":w", s("wid"))
        .with(":a", s("a"))
        .with(":t", s("SS"))
}

#[test]
fn conditions_follow_precedence_and_semantics() {
    let cases = [
        ("price > :ten", true),
        ("price BETWEEN :ten AND :eleven", true),
        ("price < :ten OR begins_with(#n, :w)", true),
        ("NOT price < :ten AND contains(tags, :a)", true),
        ("NOT (price > :ten AND contains(tags, :a))", false),
        (
            "price > :ten AND price < :ten OR attribute_exists(lst[1])",
            true,
        ),
        (
            "price > :ten AND (price < :ten OR attribute_exists(lst[2]))",
            false,
        ),
        (
            "attribute_not_exists(absent) AND attribute_type(tags, :t)",
            true,
        ),
        ("absent <> :ten", true),
        ("absent = :ten", false),
        ("absent < :ten", false),
        ("price IN (:eleven, :ten)", false),
        ("size(tags) < :ten AND size(#n) > size(tags)", true),
        ("contains(lst, :a)", false),
        ("#n > price", false),
    ];
    for (source, expected) in cases {
        assert_eq!(check(source, values()), Ok(expected), "{source}");
    }
}

#[test]
fn condition_errors_use_dynamodb_messages() {
    let cases = [
        ("", "Invalid ConditionExpression: The expression can not be empty;"),
        ("price >", "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \">\""),
        ("price = :ten :ten", "Invalid ConditionExpression: Syntax error; token: \":ten\", near: \":ten :ten\""),
        ("price = :nope", "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"),
        ("#x = :ten", "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"),
        ("name = :ten", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: name"),
        ("foo(price)", "Invalid ConditionExpression: Invalid function name; function: foo"),
        ("attribute_exists(price, lst)", "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2"),
        ("attribute_exists(:ten)", "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists"),
        ("begins_with(price, :ten)", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
        ("attribute_type(price, :w)", "Invalid ConditionExpression: Invalid attribute type name found; type: wid, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"),
        ("size(price)", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"),
        ("attribute_exists(price) = :ten", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: attribute_exists"),
        ("price BETWEEN :eleven AND :ten", "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:11}, upper bound operand: AttributeValue: {N:10}"),
        ("price BETWEEN :ten AND :w", "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:10}, upper bound operand: AttributeValue: {S:wid}"),
        ("price = price", "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [price]"),
        ("((price = :ten))", "Invalid ConditionExpression: The expression has redundant parentheses;"),
        ("if_not_exists(price, :ten) = :ten", "Invalid ConditionExpression: The function is not allowed in a condition expression; function: if_not_exists"),
    ];
    for (source, message) in cases {
        assert_eq!(
            check(source, values()),
            Err(message.to_string()),
            "{source}"
        );
    }
}

fn update(source: &str, values: Value) -> Result<Item, String> {
    let input = input("UpdateExpression", source, values);
    let mut p = Placeholders::new(&input).map_err(|e| e.message)?;
    let update = p.update(&input).map_err(|e| e.message)?.expect("an update");
    eval::apply(&update, &item()).map_err(|e| e.message)
}

#[test]
fn updates_read_the_old_item_and_apply_every_section() {
    let values = Value::map()
        .with(":one", n("1"))
        .with(":l", Value::map().with("L", Value::List(vec![s("x")])))
        .with(
            ":ss",
            Value::map().with("SS", Value::List(vec!["a".into(), "c".into()])),
        );
    let out = update(
        "SET price = price + :one, dup = price, lst = list_append(:l, lst), fresh = if_not_exists(nothing, :one) ADD tags :ss",
        values.clone(),
    );
    let out = out.unwrap();
    assert_eq!(out["price"], Attr::N(Number::parse("11.5").unwrap()));
    assert_eq!(out["dup"], Attr::N(Number::parse("10.5").unwrap()));
    assert_eq!(out["fresh"], Attr::N(Number::parse("1").unwrap()));
    assert_eq!(
        out["tags"],
        Attr::Ss(vec!["a".into(), "b".into(), "c".into()])
    );
    assert_eq!(
        out["lst"],
        Attr::L(vec![
            Attr::S("x".into()),
            Attr::N(Number::parse("1").unwrap()),
            Attr::Null
        ])
    );
    let out = update("DELETE tags :ss SET #n = :one", values.clone()).unwrap();
    assert_eq!(out["tags"], Attr::Ss(vec!["b".into()]));
    assert_eq!(out["name"], Attr::N(Number::parse("1").unwrap()));
    let out = update("REMOVE lst[1], lst[0], price", Value::map()).unwrap();
    assert_eq!(out["lst"], Attr::L(vec![]));
    assert!(!out.contains_key("price"));
}

#[test]
fn update_errors_use_dynamodb_messages() {
    let values = || Value::map().with(":one", n("1")).with(":s", s("x"));
    let cases = [
        ("SET a = :one SET b = :one", "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"),
        ("SET a = :one, a.b = :one", "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"),
        ("ADD a :s SET b = :one", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"),
        ("DELETE a :one SET b = :s", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER"),
        ("SET a = size(price), b = :one, c = :s", "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"),
        ("SET a = list_append(:s, :one)", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: S"),
        ("SET a = absent + :one, b = :s", "The provided expression refers to an attribute that does not exist in the item"),
        ("SET a = #n + :one, b = :s", "An operand in the update expression has an incorrect data type"),
        ("SET absent.b = :one, b = :s", "The document path provided in the update expression is invalid for update"),
        ("SET a :one", "Invalid UpdateExpression: Syntax error; token: \":one\", near: \"a :one\""),
        ("PUT a = :one", "Invalid UpdateExpression: Syntax error; token: \"PUT\", near: \"PUT a\""),
    ];
    for (source, message) in cases {
        assert_eq!(
            update(source, values()),
            Err(message.to_string()),
            "{source}"
        );
    }
}

#[test]
fn unused_and_invalid_placeholders_are_refused() {
    let input = input("ConditionExpression", "price = :ten", values());
    let mut p = Placeholders::new(&input).unwrap();
    p.condition(&input, "ConditionExpression").unwrap();
    assert_eq!(
        p.check_all_used().unwrap_err().message,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}"
    );
    let only_values = Value::map()
        .with("ConditionExpression", "price = :ten")
        .with("ExpressionAttributeValues", values());
    let mut p = Placeholders::new(&only_values).unwrap();
    p.condition(&only_values, "ConditionExpression").unwrap();
    assert_eq!(
        p.check_all_used().unwrap_err().message,
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:a, :eleven, :t, :w}"
    );
    let bad = Value::map().with(
        "ExpressionAttributeValues",
        Value::map().with(":x", n("abc")),
    );
    assert_eq!(
        Placeholders::new(&bad).err().map(|e| e.message),
        Some("ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: abc for key :x".to_string())
    );
}

/// Parses an update expression; `Err` carries the message.
fn parse_update(source: &str, values: Value) -> Result<(), String> {
    let input = input("UpdateExpression", source, values);
    let mut p = Placeholders::new(&input).map_err(|e| e.message)?;
    p.update(&input).map(|_| ()).map_err(|e| e.message)
}

#[test]
fn expressions_over_4_kb_are_refused_before_parsing() {
    let long = format!("{} = :ten", "a".repeat(4090));
    assert_eq!(
        check(&long, values()).unwrap_err(),
        "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 4097"
    );
    let huge = vec!["price = :ten"; 5000].join(" AND ");
    assert!(check(&huge, values())
        .unwrap_err()
        .starts_with("Invalid ConditionExpression: Expression size has exceeded"));
    let set = format!("SET {}", vec!["x = if_not_exists(y, "; 5000].concat());
    assert!(parse_update(&set, values())
        .unwrap_err()
        .starts_with("Invalid UpdateExpression: Expression size has exceeded"));
}

#[test]
fn the_301st_operator_is_refused() {
    let nots = |k: usize| format!("{}price = :ten", "NOT ".repeat(k));
    assert!(check(&nots(298), values()).is_ok());
    assert_eq!(
        check(&nots(300), values()).unwrap_err(),
        "Invalid ConditionExpression: The expression contains too many operators; operator count: 301"
    );
    let ands = vec!["a = :ten"; 200].join(" AND ");
    assert!(check(&ands, values())
        .unwrap_err()
        .ends_with("operator count: 301"));
    let sum = format!("SET x = {}", vec!["x"; 400].join(" + "));
    assert_eq!(
        parse_update(&sum, values()).unwrap_err(),
        "Invalid UpdateExpression: The expression contains too many operators; operator count: 301"
    );
}

#[test]
fn parenthesis_runs_read_as_the_recursive_grammar_does() {
    assert_eq!(
        check(&"(".repeat(4096), values()).unwrap_err(),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"(\""
    );
    let deep = format!("{}price = :ten{}", "(".repeat(2000), ")".repeat(2000));
    assert_eq!(
        check(&deep, values()).unwrap_err(),
        "Invalid ConditionExpression: The expression has redundant parentheses;"
    );
    assert_eq!(
        check("((price = :ten) AND #n = :w) OR (tags = :a)", values()),
        Ok(false)
    );
    assert_eq!(
        check(
            "((price > :ten AND (#n = :w OR price > :ten)) OR price = :ten)",
            values()
        ),
        Ok(true)
    );
    assert!(check("(price = :ten))", values()).is_err());
}

#[test]
fn nesting_past_the_bound_is_refused_and_within_it_fits_a_small_stack() {
    let groups = |k: usize| {
        format!(
            "{}price = :ten{}",
            "(price = :ten AND ".repeat(k),
            ")".repeat(k)
        )
    };
    let sizes = |k: usize| format!("{}x{} = :ten", "size(".repeat(k), ")".repeat(k));
    let within = [
        groups(32),
        sizes(32),
        format!("{}price = :ten", "NOT ".repeat(298)),
    ];
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || within.iter().for_each(|s| drop(check(s, values()))))
        .unwrap()
        .join()
        .unwrap();
    for deep in [groups(33), sizes(33)] {
        assert_eq!(
            check(&deep, values()).unwrap_err(),
            "Invalid ConditionExpression: The expression is nested too deeply; maximum depth: 32"
        );
    }
}

#[test]
fn document_paths_deeper_than_32_levels_are_refused() {
    let path = |levels: usize| format!("a{}", ".b".repeat(levels - 1));
    let input = Value::map().with("ProjectionExpression", path(32));
    assert!(Placeholders::new(&input)
        .unwrap()
        .projection(&input, "ProjectionExpression")
        .is_ok());
    let input = Value::map().with("ProjectionExpression", path(33));
    let e = Placeholders::new(&input)
        .unwrap()
        .projection(&input, "ProjectionExpression")
        .unwrap_err();
    assert_eq!(
        e.message,
        "Invalid ProjectionExpression: The document path has too many nesting levels; nesting levels: 33"
    );
    assert!(check(&format!("a{} = :ten", "[0]".repeat(1300)), values())
        .unwrap_err()
        .ends_with("nesting levels: 1301"));
}
