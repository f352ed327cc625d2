//! The differential corpus: `differential/expected.json` holds the reference implementation's
//! answers (results, undefined, error codes) to `differential/cases.json` over
//! `differential/inputs.json`; `differential/generate.js` regenerates it with npm's `jsonata`.
//! This test evaluates every case here and fails when fewer than `MIN_PASSING` agree, listing
//! the disagreements; the known ones are listed in `differential/README.md`.

use roto_jsonata::{Environment, Expression};
use serde_json::Value;

/// Cases that must agree with the reference; raise it as the implementation improves.
const MIN_PASSING: usize = 1165;

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || ((x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Error codes that name the same failure in both implementations.
fn same_error(expected: &str, actual: &str) -> bool {
    expected == actual
        || (matches!(expected, "D1011" | "D1012" | "JS:RangeError")
            && matches!(actual, "U1001" | "D1012"))
}

fn outcome(case: &Value, inputs: &Value) -> Result<(), String> {
    let expr_text = case["expr"].as_str().unwrap_or_default();
    let input = &inputs[case["input"].as_str().unwrap_or_default()];
    let env = Environment::new();
    let actual = Expression::parse(expr_text).and_then(|e| e.evaluate(input, &env));
    let show = |a: &Result<Option<Value>, roto_jsonata::Error>| match a {
        Ok(Some(v)) => v.to_string(),
        Ok(None) => "undefined".into(),
        Err(e) => format!("error {}", e),
    };
    let ok = if let Some(code) = case.get("error").and_then(Value::as_str) {
        matches!(&actual, Err(e) if same_error(code, e.code()))
    } else if case.get("undefined").is_some() {
        matches!(actual, Ok(None))
    } else if let Some(special) = case.get("special").and_then(Value::as_str) {
        match special {
            "function" => matches!(actual, Ok(None)),
            _ => matches!(&actual, Err(e) if e.code() == "D1001"),
        }
    } else {
        matches!(&actual, Ok(Some(v)) if same(v, &case["result"]))
    };
    if ok {
        return Ok(());
    }
    let expected = case
        .get("error")
        .map(|c| format!("error {c}"))
        .or_else(|| case.get("undefined").map(|_| "undefined".into()))
        .or_else(|| case.get("special").map(|s| s.to_string()))
        .unwrap_or_else(|| case["result"].to_string());
    Err(format!(
        "[{}] {}\n    expected {}\n    actual   {}",
        case["input"],
        expr_text,
        expected,
        show(&actual)
    ))
}

#[test]
fn agrees_with_the_reference_implementation() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/differential");
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).expect("corpus file");
        serde_json::from_str(&text).expect("corpus JSON")
    };
    let inputs = read("inputs.json");
    let cases = read("expected.json");
    let cases = cases.as_array().expect("case list");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| outcome(c, &inputs).err())
        .collect();
    let passing = cases.len() - failures.len();
    println!(
        "differential: {passing}/{} cases agree with the reference",
        cases.len()
    );
    for f in &failures {
        println!("{f}");
    }
    assert!(
        passing >= MIN_PASSING,
        "{passing} passing, {MIN_PASSING} required"
    );
}
