//! Hostile expressions end with JSONata errors, never a stack overflow or a hang, on the
//! 2 MiB stacks tokio's workers and test threads have.

use roto_jsonata::{Environment, Expression};
use serde_json::json;

/// Parses and evaluates `text` on a fresh 2 MiB thread; the error code, or "ok".
fn outcome(text: &str) -> String {
    let text = text.to_string();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let env = Environment::with_step_functions();
            match Expression::parse(&text).and_then(|e| e.evaluate(&json!({"a": 1}), &env)) {
                Ok(_) => "ok".to_string(),
                Err(e) => e.code().to_string(),
            }
        })
        .expect("thread")
        .join()
        .expect("no panic")
}

#[test]
fn deep_nesting_is_a_parse_error() {
    for (open, close) in [
        ("[", "]"),
        ("(", ")"),
        ("{\"a\":", "}"),
        ("-", ""),
        ("$f(", ")"),
    ] {
        let text = format!("{}1{}", open.repeat(5000), close.repeat(5000));
        assert_eq!(outcome(&text), "U1001", "{open}");
    }
    assert_eq!(outcome(&format!("a{}", ".a".repeat(5000))), "U1001");
    assert_eq!(outcome(&format!("1{}", "+1".repeat(5000))), "U1001");
}

#[test]
fn nesting_within_the_limit_evaluates() {
    assert_eq!(
        outcome(&format!("{}1{}", "[".repeat(40), "]".repeat(40))),
        "ok"
    );
    assert_eq!(
        outcome(&format!("{}1{}", "(".repeat(40), ")".repeat(40))),
        "ok"
    );
}

#[test]
fn runaway_recursion_is_u1001() {
    assert_eq!(
        outcome("( $f := function($n){ 1 + $f($n + 1) }; $f(0) )"),
        "U1001"
    );
    assert_eq!(
        outcome("( $f := function($n){ [$f($n + 1)] }; $f(0) )"),
        "U1001"
    );
    assert_eq!(
        outcome("( $f := function($n){ $map([1], function($x){ $f($n) }) }; $f(0) )"),
        "U1001"
    );
    assert_eq!(
        outcome("( $f := function($n){ $eval('$f(1)') }; $f(0) )"),
        "D3121"
    );
}

#[test]
fn recursion_of_moderate_depth_succeeds() {
    assert_eq!(
        outcome("( $f := function($x){ $x > 0 ? $f($x - 1) + 1 : 0 }; $f(50) )"),
        "ok"
    );
}

#[test]
fn runaway_loops_exhaust_the_step_budget() {
    assert_eq!(
        outcome("( $f := function($n){ $f($n + 1) }; $f(0) )"),
        "D1012"
    );
    assert_eq!(
        outcome("$reduce([1..10000000], function($a, $b){ $a + $b })"),
        "D1012"
    );
    assert_eq!(outcome("[1..10000001]"), "D2014");
}

#[test]
fn deep_values_are_an_error_not_an_overflow() {
    let text = "$reduce([1..3000], function($acc, $x){ {\"a\": $acc} }, {}) ~> $string()";
    assert_eq!(outcome(text), "U1001");
}

#[test]
fn walks_over_deep_arrays_do_not_recurse() {
    let deep = "$reduce([1..30000], function($acc, $x){ [[$acc]] }, [1])";
    for f in ["$boolean", "$keys", "$spread", "$count", "$lookup(?, 'a')"] {
        let text = format!("( $d := {deep}; $f := {f}; $type($f($d)) )");
        assert_ne!(outcome(&text), "panic", "{f}");
    }
    assert_eq!(outcome(&format!("$boolean({deep})")), "ok");
    assert_eq!(outcome(&format!("({deep}).*")), "ok");
    assert_eq!(outcome(&format!("({deep}).a")), "ok");
}

#[test]
fn loops_that_copy_growing_values_run_out_of_budget() {
    let strings = "$reduce([1..1000000], function($a, $x){ $a & 'xxxxxxxxxxxxxxxx' }, '')";
    assert_eq!(outcome(strings), "D1012");
    let arrays = "$reduce([1..1000000], function($a, $x){ $append($a, $x) }, [])";
    assert_eq!(outcome(arrays), "D1012");
}

#[test]
fn huge_numbers_in_formatting_functions_stay_bounded() {
    assert_eq!(outcome("$formatInteger(1e300, 'I')"), "U1001");
    assert_eq!(outcome("$fromMillis(1e300)"), "ok");
    assert_eq!(outcome("$pad('x', 1e9)"), "D1012");
    assert_eq!(outcome("$formatBase(1e300, 16)"), "ok");
    assert_eq!(outcome("$formatInteger(1e300, 'w')"), "ok");
}
