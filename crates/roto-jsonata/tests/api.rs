//! The public API as the Step Functions engine uses it: variables, native functions, errors,
//! and expressions shared across threads.

use roto_jsonata::{Environment, Error, Expression};
use serde_json::{json, Value};

fn run(text: &str, input: Value, env: &Environment) -> Result<Option<Value>, Error> {
    Expression::parse(text)?.evaluate(&input, env)
}

#[test]
fn expressions_and_environments_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Expression>();
    assert_send_sync::<Environment>();
    assert_send_sync::<Error>();
}

#[test]
fn bound_variables_are_visible_and_undefined_is_none() {
    let mut env = Environment::new();
    env.bind("states", json!({"input": {"n": 2}}));
    assert_eq!(
        run("$states.input.n * 10", json!(null), &env).ok(),
        Some(Some(json!(20)))
    );
    assert_eq!(
        run("$states.input.missing", json!(null), &env).ok(),
        Some(None)
    );
}

#[test]
fn native_functions_get_validated_json_arguments() {
    let mut env = Environment::new();
    env.bind_function(
        "twice",
        "<n-:n>",
        Box::new(|args: &[Value]| Ok(args[0].as_f64().map(|n| json!(n * 2.0)))),
    );
    assert_eq!(
        run("$twice(21)", json!(null), &env).ok(),
        Some(Some(json!(42)))
    );
    assert_eq!(
        run("n.$twice()", json!({"n": 4}), &env).ok(),
        Some(Some(json!(8)))
    );
    assert_eq!(
        run("$map([1, 2], $twice)", json!(null), &env).ok(),
        Some(Some(json!([2, 4])))
    );
    let err = run("$twice('x')", json!(null), &env)
        .err()
        .map(|e| e.code().to_string());
    assert_eq!(err.as_deref(), Some("T0410"));
}

#[test]
fn native_function_errors_pass_through() {
    let mut env = Environment::new();
    env.bind_function(
        "fail",
        "<:x>",
        Box::new(|_: &[Value]| Err(Error::with_message("States.Custom", "no"))),
    );
    let err = run("$fail()", json!(null), &env).err();
    assert_eq!(err.as_ref().map(Error::code), Some("States.Custom"));
    assert_eq!(err.map(|e| e.message()).as_deref(), Some("no"));
}

#[test]
fn errors_render_code_message_and_position() {
    let err = run("1 + 'a'", json!(null), &Environment::new()).err();
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        text,
        "T2002: The right side of the \"+\" operator must evaluate to a number (at position 3)"
    );
}

#[test]
fn one_expression_evaluates_on_many_threads() {
    let expr = std::sync::Arc::new(Expression::parse("$sum(items) + $base").expect("parses"));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let expr = expr.clone();
            std::thread::spawn(move || {
                let mut env = Environment::with_step_functions();
                env.bind("base", json!(i));
                expr.evaluate(&json!({"items": [1, 2, 3]}), &env)
                    .ok()
                    .flatten()
            })
        })
        .collect();
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().ok().flatten())
        .collect();
    assert_eq!(
        results,
        vec![
            Some(json!(6)),
            Some(json!(7)),
            Some(json!(8)),
            Some(json!(9))
        ]
    );
}
