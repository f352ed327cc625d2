//! Unit tests of the PartiQL parser.

use super::super::super::attr::{Attr, Item};
use super::super::super::expr::eval;
use super::super::super::number::Number;
use super::*;

fn n(text: &str) -> Attr {
    Attr::N(Number::parse(text).unwrap())
}

fn s(text: &str) -> Attr {
    Attr::S(text.into())
}

fn name(text: &str) -> Path {
    vec![Step::Name(text.into())]
}

fn err(source: &str, parameters: &[Attr]) -> String {
    parse(source, parameters).unwrap_err().message
}

fn select(source: &str) -> Select {
    match parse(source, &[]).unwrap() {
        Statement::Select(select) => select,
        other => panic!("not a select: {other:?}"),
    }
}

fn item() -> Item {
    Item::from([
        ("pk".into(), s("a")),
        ("n".into(), n("5")),
        ("tags".into(), Attr::Ss(vec!["x".into()])),
        (
            "m".into(),
            Attr::M(Item::from([("deep".into(), Attr::Null)])),
        ),
    ])
}

/// Whether the WHERE of `SELECT * FROM t WHERE <condition>` holds for [`item`].
fn holds(condition: &str, parameters: &[Attr]) -> bool {
    let statement = parse(&format!("SELECT * FROM t WHERE {condition}"), parameters).unwrap();
    let Statement::Select(select) = statement else {
        unreachable!()
    };
    eval::matches(&select.condition.unwrap(), &item())
}

#[test]
fn select_reads_projection_source_where_and_order() {
    let parsed = select(r#"SELECT a, "b".c[2] FROM "Tbl"."Idx" WHERE pk = 'x' ORDER BY sk DESC"#);
    assert_eq!(parsed.table, "Tbl");
    assert_eq!(parsed.index.as_deref(), Some("Idx"));
    assert_eq!(
        parsed.projection,
        Some(vec![
            name("a"),
            vec![
                Step::Name("b".into()),
                Step::Name("c".into()),
                Step::Index(2)
            ]
        ])
    );
    assert_eq!(parsed.order, vec![("sk".to_string(), false)]);
    assert_eq!(
        parsed.condition,
        Some(Condition::Compare(
            Operand::Path(name("pk")),
            Comparator::Eq,
            Operand::Value(s("x"))
        ))
    );
    assert_eq!(select("select * from t").projection, None);
}

#[test]
fn conditions_follow_precedence_and_evaluate() {
    assert!(holds("n = 5 AND pk = 'a'", &[]));
    assert!(holds("n = 4 OR pk = 'a' AND n > 1", &[]));
    assert!(!holds("(n = 4 OR pk = 'a') AND n > 9", &[]));
    assert!(holds("NOT n = 4", &[]));
    assert!(holds("n BETWEEN 1 AND 9 AND n NOT BETWEEN 6 AND 9", &[]));
    assert!(holds("pk IN ['b', 'a'] AND n NOT IN [1, 2]", &[]));
    assert!(holds(
        "gone IS MISSING AND n IS NOT MISSING AND m.deep IS NULL",
        &[]
    ));
    assert!(holds(
        "n IS NUMERIC AND pk IS STRING AND m IS STRUCT AND pk IS NOT LIST",
        &[]
    ));
    assert!(holds("begins_with(pk, 'a') AND contains(tags, 'x')", &[]));
    assert!(holds("attribute_type(n, 'N') AND size(tags) = 1", &[]));
    assert!(holds(
        "n <> 4 AND n != 4 AND n >= 5 AND n <= 5 AND n < 6",
        &[]
    ));
    assert!(holds("n = ? AND pk = ?", &[n("5"), s("a")]));
    assert!(holds("n > -1.5e1", &[]));
}

#[test]
fn literals_become_attribute_values() {
    let statement = parse(
        "INSERT INTO t VALUE {'pk': 'k', 'n': 1.50, 'b': TRUE, 'z': NULL, 'l': [1, 'x'], \
         'm': {'in': ?}, 'ss': <<'a', 'b'>>, 'ns': <<1, 2>>, 'q': 'it''s'}",
        &[Attr::Bool(false)],
    )
    .unwrap();
    let Statement::Insert { table, item } = statement else {
        panic!("not an insert")
    };
    assert_eq!(table, "t");
    assert_eq!(item["n"], n("1.5"));
    assert_eq!(item["b"], Attr::Bool(true));
    assert_eq!(item["z"], Attr::Null);
    assert_eq!(item["l"], Attr::L(vec![n("1"), s("x")]));
    assert_eq!(
        item["m"],
        Attr::M(Item::from([("in".into(), Attr::Bool(false))]))
    );
    assert_eq!(item["ss"], Attr::Ss(vec!["a".into(), "b".into()]));
    assert_eq!(
        item["ns"],
        Attr::Ns(vec![
            Number::parse("1").unwrap(),
            Number::parse("2").unwrap()
        ])
    );
    assert_eq!(item["q"], s("it's"));
}

#[test]
fn update_reads_set_remove_functions_and_returning() {
    let statement = parse(
        "UPDATE t SET a = 1, b = b + ? SET l = list_append(l, [2]) SET s = set_add(s, <<'x'>>) \
         SET d = set_delete(d, <<3>>) REMOVE gone, m.x WHERE pk = 'k' RETURNING MODIFIED NEW *",
        &[n("2")],
    )
    .unwrap();
    let Statement::Update {
        update, returning, ..
    } = statement
    else {
        panic!("not an update")
    };
    assert_eq!(returning, Some(Returning::ModifiedNew));
    assert_eq!(update.set.len(), 3);
    assert_eq!(
        update.set[1].1,
        Operand::Arithmetic(
            Box::new(Operand::Path(name("b"))),
            true,
            Box::new(Operand::Value(n("2")))
        )
    );
    assert_eq!(update.add, vec![(name("s"), Attr::Ss(vec!["x".into()]))]);
    assert_eq!(update.delete.len(), 1);
    assert_eq!(update.remove.len(), 2);
}

#[test]
fn malformed_statements_get_dynamodb_messages() {
    let prefix = "Statement wasn't well formed, can't be processed: ";
    assert_eq!(
        err("CREATE TABLE t", &[]),
        format!("{prefix}Expected data manipulation")
    );
    assert_eq!(
        err("SELECT * FROM t WHERE", &[]),
        format!("{prefix}Unexpected end of statement")
    );
    assert_eq!(
        err("SELECT * FROM t WHERE a = 1 b", &[]),
        format!("{prefix}Unexpected token")
    );
    assert_eq!(
        err("SELECT * FROM WHERE", &[]),
        format!("{prefix}Unexpected keyword")
    );
    assert_eq!(
        err("SELECT * FROM t WHERE a = 'x", &[]),
        format!("{prefix}Unterminated string literal")
    );
    assert_eq!(
        err("SELECT a.[1] FROM t", &[]),
        format!("{prefix}Invalid path dot component")
    );
    assert_eq!(
        err("SELECT * FROM t WHERE a = ?", &[]),
        "Number of parameters in request and statement don't match."
    );
    assert_eq!(
        err("SELECT * FROM t", &[s("x")]),
        "Number of parameters in request and statement don't match."
    );
    assert_eq!(
        err("SELECT *, a FROM t", &[]),
        "Other attributes should not be present in the projection when '*' is used."
    );
    assert_eq!(err("INSERT INTO t VALUE 'x'", &[]), "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement.");
    assert_eq!(
        err("INSERT INTO t VALUE {'a': <<>>}", &[]),
        "Empty bags are not supported"
    );
    assert_eq!(
        err("INSERT INTO t VALUE {'a': <<1, 'x'>>}", &[]),
        "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"
    );
    assert_eq!(
        err("DELETE FROM t WHERE pk = 'a' RETURNING ALL NEW *", &[]),
        "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements."
    );
    assert_eq!(
        err("UPDATE t SET a = 1 WHERE pk = 'a' RETURNING ALL OLD", &[]),
        "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"
    );
    assert_eq!(
        err("UPDATE t.i SET a = 1 WHERE pk = 'a'", &[]),
        "This operation is not supported on an index"
    );
    assert_eq!(
        err("UPDATE t SET s = set_add(x, <<'a'>>) WHERE pk = 'a'", &[]),
        "The first argument to SET_ADD must equal the assignment value"
    );
    assert_eq!(
        err("UPDATE t SET s = set_add(s, 'a') WHERE pk = 'a'", &[]),
        "The second argument to SET_ADD must be a value with type SET"
    );
    assert_eq!(
        err("SELECT * FROM t WHERE foo(a)", &[]),
        "Unrecognized function: foo"
    );
    assert_eq!(
        err("SELECT * FROM t WHERE a = MISSING", &[]),
        "MISSING must be compared using IS operator"
    );
    assert_eq!(
        err("SELECT * FROM a.b.c", &[]),
        "A path may contain at most 2 components in the FROM clause"
    );
    assert_eq!(
        err("INSERT INTO t VALUE {'a': 1} RETURNING ALL OLD *", &[]),
        "RETURNING is not supported in INSERT"
    );
}

#[test]
fn nesting_is_bounded_in_conditions_literals_and_arithmetic() {
    let parens = |k: usize| {
        format!(
            "SELECT * FROM t WHERE {}a = 1{}",
            "(".repeat(k),
            ")".repeat(k)
        )
    };
    assert!(parse(&parens(100), &[]).is_ok());
    assert_eq!(
        err(&parens(101), &[]),
        "Statement wasn't well formed, can't be processed: Expressions may nest at most 100 levels"
    );
    assert!(parse(
        &format!("SELECT * FROM t WHERE {}a = 1", "NOT ".repeat(2000)),
        &[]
    )
    .is_err());
    let list = |k: usize| {
        format!(
            "SELECT * FROM t WHERE a = {}1{}",
            "[".repeat(k),
            "]".repeat(k)
        )
    };
    assert!(parse(&list(32), &[]).is_ok());
    assert!(err(&list(33), &[]).starts_with("Nesting Levels have exceeded supported limits"));
    assert!(parse(&list(4000), &[]).is_err());
    let sum = |k: usize| format!("UPDATE t SET x = {} WHERE pk = 1", vec!["x"; k].join(" + "));
    assert!(parse(&sum(100), &[]).is_ok());
    assert!(parse(&sum(101), &[]).is_err());
    let path = |levels: usize| format!("SELECT a{} FROM t", ".b".repeat(levels - 1));
    assert!(parse(&path(32), &[]).is_ok());
    assert_eq!(
        err(&path(33), &[]),
        "The document path has too many nesting levels; nesting levels: 33"
    );
}
