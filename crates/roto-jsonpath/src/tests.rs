//! Tests: Jayway's documented examples over its "store" document, Step Functions' reference
//! paths, and the bounds.

use serde_json::{json, Value};

use crate::{Path, MAX_DEPTH, MAX_PATH_LEN};

fn store() -> Value {
    json!({
        "store": {
            "book": [
                {"category": "reference", "author": "Nigel Rees", "title": "Sayings of the Century", "price": 8.95},
                {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword of Honour", "price": 12.99},
                {"category": "fiction", "author": "Herman Melville", "title": "Moby Dick", "isbn": "0-553-21311-3", "price": 8.99},
                {"category": "fiction", "author": "J. R. R. Tolkien", "title": "The Lord of the Rings", "isbn": "0-395-19395-8", "price": 22.99}
            ],
            "bicycle": {"color": "red", "price": 19.95}
        },
        "expensive": 10
    })
}

fn path(text: &str) -> Path {
    Path::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn eval(text: &str) -> Value {
    path(text)
        .evaluate(&store())
        .unwrap_or_else(|| panic!("{text}: no result"))
}

fn titles(text: &str) -> Vec<String> {
    let doc = store();
    path(text)
        .select(&doc)
        .iter()
        .map(|book| book["title"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn authors_of_all_books() {
    let authors = json!([
        "Nigel Rees",
        "Evelyn Waugh",
        "Herman Melville",
        "J. R. R. Tolkien"
    ]);
    assert_eq!(eval("$.store.book[*].author"), authors);
    assert_eq!(eval("$..author"), authors);
    assert_eq!(eval("$['store']['book'][*]['author']"), authors);
}

#[test]
fn everything_in_the_store_and_all_prices() {
    assert_eq!(eval("$.store.*").as_array().map(Vec::len), Some(2));
    assert_eq!(
        eval("$.store..price"),
        json!([19.95, 8.95, 12.99, 8.99, 22.99])
    );
}

#[test]
fn book_indexes_and_slices() {
    assert_eq!(titles("$..book[2]"), ["Moby Dick"]);
    assert_eq!(titles("$..book[-2]"), ["Moby Dick"]);
    assert_eq!(
        titles("$..book[0,1]"),
        ["Sayings of the Century", "Sword of Honour"]
    );
    assert_eq!(
        titles("$..book[:2]"),
        ["Sayings of the Century", "Sword of Honour"]
    );
    assert_eq!(titles("$..book[1:2]"), ["Sword of Honour"]);
    assert_eq!(
        titles("$..book[-2:]"),
        ["Moby Dick", "The Lord of the Rings"]
    );
    assert_eq!(
        titles("$..book[2:]"),
        ["Moby Dick", "The Lord of the Rings"]
    );
    assert_eq!(
        titles("$..book[::2]"),
        ["Sayings of the Century", "Moby Dick"]
    );
    assert_eq!(
        titles("$..book[::-3]"),
        ["The Lord of the Rings", "Sayings of the Century"]
    );
    assert_eq!(titles("$..book[-9:1]"), ["Sayings of the Century"]);
    assert!(titles("$..book[7]").is_empty());
}

#[test]
fn filters_from_the_jayway_readme() {
    assert_eq!(
        titles("$..book[?(@.isbn)]"),
        ["Moby Dick", "The Lord of the Rings"]
    );
    assert_eq!(
        titles("$.store.book[?(@.price < 10)]"),
        ["Sayings of the Century", "Moby Dick"]
    );
    assert_eq!(
        titles("$..book[?(@.price <= $['expensive'])]"),
        ["Sayings of the Century", "Moby Dick"]
    );
    assert_eq!(
        titles("$..book[?(@.author == 'Nigel Rees')]"),
        ["Sayings of the Century"]
    );
    assert_eq!(
        titles("$..book[?(!(@.isbn))]"),
        ["Sayings of the Century", "Sword of Honour"]
    );
    assert_eq!(
        titles("$..book[?(@.author =~ /.*REES/i)]"),
        ["Sayings of the Century"]
    );
    assert!(titles("$..book[?(@.author =~ /REES/i)]").is_empty());
}

#[test]
fn jayway_filter_operators() {
    assert_eq!(
        titles("$..book[?(@.category in ['reference', 'poetry'])]"),
        ["Sayings of the Century"]
    );
    assert_eq!(
        titles("$..book[?(@.category nin ['fiction'])]"),
        ["Sayings of the Century"]
    );
    assert_eq!(titles("$..book[?(@.price in [8.95, 22.99])]").len(), 2);
    assert_eq!(titles("$..book[?(@.title size 9)]"), ["Moby Dick"]);
    let doc = json!([{"t": ["a", "b"]}, {"t": []}, {"t": ["c"]}, {"t": "x"}]);
    let count = |text: &str| path(text).select(&doc).len();
    assert_eq!(count("$[?(@.t subsetof ['a', 'b', 'c'])]"), 3);
    assert_eq!(count("$[?(@.t anyof ['b', 'c'])]"), 2);
    assert_eq!(count("$[?(@.t noneof ['b'])]"), 2);
    assert_eq!(count("$[?(@.t empty true)]"), 1);
    assert_eq!(count("$[?(@.t empty false)]"), 3);
    assert_eq!(count("$[?(@.t size 2)]"), 1);
    assert_eq!(count("$[?(@.t =~ /X/i)]"), 1);
    assert_eq!(count("$[?(@.t =~ /a\\/b/)]"), 0);
    let doc = json!([{"in": 1}, {"inside": 2}]);
    assert_eq!(path("$[?(@.in == 1)]").select(&doc).len(), 1);
    assert_eq!(path("$[?(@.inside)]").select(&doc).len(), 1);
}

#[test]
fn filters_combine_with_and_or_not() {
    let text =
        "$.store.book[?(@.category == 'fiction' && @.price != 12.99 || !(@.isbn) && @.price < 9)]";
    assert_eq!(
        titles(text),
        [
            "Sayings of the Century",
            "Moby Dick",
            "The Lord of the Rings"
        ]
    );
    assert_eq!(
        titles("$.store.book[?(@.price > 12.99)]"),
        ["The Lord of the Rings"]
    );
    assert_eq!(titles("$.store.book[?(@.price >= 12.99)]").len(), 2);
    assert_eq!(titles("$.store.book[?(@.title > 'S')]").len(), 3);
    assert_eq!(titles("$.store.book[?@.price<9]").len(), 2);
}

#[test]
fn filter_comparisons_on_booleans_null_and_missing_members() {
    let doc = json!([{"a": true}, {"a": null}, {"a": 1}, {"b": 1}]);
    let count = |text: &str| path(text).select(&doc).len();
    assert_eq!(count("$[?(@.a == true)]"), 1);
    assert_eq!(count("$[?(@.a == null)]"), 1);
    assert_eq!(count("$[?(@.a != 1)]"), 3);
    assert_eq!(count("$[?(@.a == 1.0)]"), 1);
    assert_eq!(count("$[?(@.a == '1')]"), 0);
    assert_eq!(count("$[?(@.a)]"), 3);
    assert_eq!(count("$[?(@.a < 2)]"), 1);
}

#[test]
fn filter_on_an_object_tests_the_object_itself() {
    assert_eq!(
        eval("$.store.bicycle[?(@.color == 'red')].price"),
        json!([19.95])
    );
    assert_eq!(eval("$.store.bicycle[?(@.color == 'blue')]"), json!([]));
}

#[test]
fn length_and_other_functions() {
    assert_eq!(eval("$..book.length()"), json!(4));
    assert_eq!(eval("$.store.book.length()"), json!(4));
    assert_eq!(eval("$.store.bicycle.color.length()"), json!(3));
    assert_eq!(eval("$..price.sum()"), json!(73.87));
    assert_eq!(eval("$..price.max()"), json!(22.99));
    assert_eq!(eval("$.store.bicycle.keys()"), json!(["color", "price"]));
    assert_eq!(
        titles("$.store.book[?(@.title.length() > 15)]"),
        ["Sayings of the Century", "The Lord of the Rings"]
    );
    let doc = store();
    assert!(path("$.store.book.length()").select(&doc).is_empty());
}

#[test]
fn descendants_and_wildcards() {
    let doc = json!({"a": {"b": [1, {"b": 2}]}, "c": [[3]]});
    assert_eq!(path("$..b").evaluate(&doc), Some(json!([[1, {"b": 2}], 2])));
    assert_eq!(path("$..[0]").evaluate(&doc), Some(json!([1, [3], 3])));
    assert_eq!(path("$..*").select(&doc).len(), 8);
    assert_eq!(path("$.c.*[0]").evaluate(&doc), Some(json!([3])));
    assert_eq!(
        path("$..[?(@.b == 2)]").evaluate(&doc),
        Some(json!([{"b": 2}]))
    );
}

#[test]
fn member_union_merges_like_jayway() {
    assert_eq!(
        eval("$.store.bicycle['color','price']"),
        json!({"color": "red", "price": 19.95})
    );
    assert_eq!(
        eval("$.store.book[0:2]['title','isbn']"),
        json!([{"title": "Sayings of the Century"}, {"title": "Sword of Honour"}])
    );
    let doc = store();
    assert_eq!(
        path("$.store.bicycle['price','color']").select(&doc).len(),
        2
    );
}

#[test]
fn names_with_unusual_characters() {
    let doc = json!({"a b": 1, "it's": 2, "q\"": 3, "dot.name": 4, "é": 5, "x-y": 6, "": 7});
    let get = |text: &str| path(text).get(&doc).cloned();
    assert_eq!(get("$['a b']"), Some(json!(1)));
    assert_eq!(get("$['it\\'s']"), Some(json!(2)));
    assert_eq!(get("$[\"it's\"]"), Some(json!(2)));
    assert_eq!(get("$[\"q\\\"\"]"), Some(json!(3)));
    assert_eq!(get("$['dot.name']"), Some(json!(4)));
    assert_eq!(get("$['\\u00e9']"), Some(json!(5)));
    assert_eq!(get("$.é"), Some(json!(5)));
    assert_eq!(get("$.x-y"), Some(json!(6)));
    assert_eq!(get("$['']"), Some(json!(7)));
}

#[test]
fn definite_and_context_paths() {
    assert!(path("$").is_definite());
    assert!(path("$.a[0]['b'][-1]").is_definite());
    for text in [
        "$.a[*]",
        "$..a",
        "$.a[0,1]",
        "$.a[1:]",
        "$.a[?(@.b)]",
        "$.*",
        "$['a','b']",
    ] {
        assert!(!path(text).is_definite(), "{text}");
    }
    let context = path("$$.Execution.Id");
    assert!(context.is_context());
    assert!(!path("$.Execution").is_context());
    let ctx = json!({"Execution": {"Id": "arn:x"}});
    assert_eq!(context.get(&ctx), Some(&json!("arn:x")));
    assert!(path("$$").is_context());
}

#[test]
fn evaluate_gives_step_functions_shapes() {
    let doc = json!({"a": {"b": [1, 2]}, "n": null});
    assert_eq!(path("$").evaluate(&doc), Some(doc.clone()));
    assert_eq!(path("$.a.b[1]").evaluate(&doc), Some(json!(2)));
    assert_eq!(path("$.n").evaluate(&doc), Some(Value::Null));
    assert_eq!(path("$.missing").evaluate(&doc), None);
    assert_eq!(path("$.a.b.c").evaluate(&doc), None);
    assert_eq!(path("$.missing[*]").evaluate(&doc), Some(json!([])));
    assert_eq!(path("$.a.b[*]").evaluate(&doc), Some(json!([1, 2])));
    assert_eq!(path("$.a.missing").get(&doc), None);
    assert_eq!(path("$.a.b[*]").get(&doc), None);
}

#[test]
fn set_writes_result_paths() {
    let mut doc = json!({"a": 1});
    path("$").set(&mut doc, json!({"x": 1})).expect("set $");
    assert_eq!(doc, json!({"x": 1}));
    path("$.y.z.w").set(&mut doc, json!(2)).expect("set deep");
    assert_eq!(doc, json!({"x": 1, "y": {"z": {"w": 2}}}));
    path("$.x").set(&mut doc, json!([0, 1])).expect("replace");
    path("$.x[1]").set(&mut doc, json!("one")).expect("index");
    path("$.x[-2]")
        .set(&mut doc, json!("zero"))
        .expect("negative index");
    assert_eq!(doc["x"], json!(["zero", "one"]));
}

#[test]
fn set_fails_where_step_functions_reports_a_match_failure() {
    let mut doc = json!({"s": "text", "l": [1]});
    assert!(path("$.s.t").set(&mut doc, json!(1)).is_err());
    assert!(path("$.l[1]").set(&mut doc, json!(1)).is_err());
    assert!(path("$.l.x").set(&mut doc, json!(1)).is_err());
    assert!(path("$.m[0]").set(&mut doc, json!(1)).is_err());
    assert!(path("$.l[*]").set(&mut doc, json!(1)).is_err());
    assert!(path("$$.x").set(&mut doc, json!(1)).is_err());
    assert!(path("$.l.length()").set(&mut doc, json!(1)).is_err());
    let mut text = json!("plain");
    assert!(path("$.a").set(&mut text, json!(1)).is_err());
    assert_eq!(doc, json!({"s": "text", "l": [1]}));
}

#[test]
fn parse_errors_say_where_and_why() {
    for (text, position) in [
        ("a.b", 0),
        ("$.", 2),
        ("$[", 2),
        ("$['a", 4),
        ("$[?(@.a ==)]", 10),
        ("$.a.nope()", 8),
        ("$[1:2:0]", 7),
        ("$.a b", 3),
        ("$[99999999999999999999]", 2),
        ("$[?(@.a =~ /x)]", 15),
        ("$[?(@.a =~ /(/)]", 11),
        ("$[?(@.a in [@.b])]", 15),
    ] {
        let error = Path::parse(text).expect_err(text);
        assert_eq!(error.position, position, "{text}: {error}");
        assert!(error.to_string().contains("at position"), "{error}");
    }
}

#[test]
fn parse_is_bounded() {
    let deep = format!(
        "$[?({}@.a{})]",
        "(".repeat(MAX_DEPTH + 1),
        ")".repeat(MAX_DEPTH + 1)
    );
    assert!(Path::parse(&deep).is_err());
    let nots = format!("$[?({}@.a)]", "!".repeat(100_000));
    assert!(Path::parse(&nots).is_err());
    let nested = format!("$.a{}", "[?(@.a".repeat(1000));
    assert!(Path::parse(&nested).is_err());
    let many = "$".to_string() + &".a".repeat(crate::MAX_STEPS + 1);
    assert!(Path::parse(&many).is_err());
    let long = format!("$.{}", "a".repeat(MAX_PATH_LEN));
    assert!(Path::parse(&long).is_err());
    let ok = format!(
        "$[?({}@.a{})]",
        "(".repeat(MAX_DEPTH - 2),
        ")".repeat(MAX_DEPTH - 2)
    );
    assert!(Path::parse(&ok).is_ok());
}

#[test]
fn evaluation_is_bounded() {
    let doc = json!([[[[[[[[1, 2, 3, 4, 5, 6, 7, 8]]]]]]], {"a": [1, 2, 3]}]);
    let explosive = path("$..*..*..*..*..*..*..*..*");
    assert!(explosive.select(&doc).len() <= crate::MAX_WORK);
    let wide = Value::Array(
        (0..20_000)
            .map(|n| json!({"n": n, "l": [n, [n]]}))
            .collect(),
    );
    let copies = path("$[?(@.l == $..*)]");
    assert_eq!(copies.evaluate(&wide), Some(json!([])));
    let everything = path("$..*");
    let all = everything.evaluate(&wide).unwrap_or_default();
    assert_eq!(all.as_array().map(Vec::len), Some(120_000));
}

#[test]
fn whitespace_is_trimmed_and_tolerated_in_brackets() {
    let doc = store();
    assert_eq!(path("  $.expensive ").get(&doc), Some(&json!(10)));
    assert_eq!(path("$.store.book[ 0 , 1 ]").select(&doc).len(), 2);
    assert_eq!(
        path("$[ 'store' ][ 'bicycle' ]")
            .get(&doc)
            .map(|b| &b["color"]),
        Some(&json!("red"))
    );
}

#[test]
fn paths_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Path>();
    shareable::<crate::ParseError>();
    shareable::<crate::SetError>();
}
