//! Entry points for the fuzzer (`crates/roto-fuzz`): intrinsic function calls parsed and
//! evaluated over a fixed input, and state machine definitions checked. They exist so the
//! fuzzer can reach private modules; nothing in the server calls them.

use serde_json::json;

/// Parses `text` as an intrinsic function call and evaluates it over a fixed input.
pub fn fuzz_intrinsic(text: &str) {
    let input = json!({"a": [1, 2, 3], "s": "x,y", "o": {"k": "v"}, "n": 5});
    if let Ok(call) = super::intrinsics::parse(text) {
        let _ = super::intrinsics::evaluate(&call, &|p| {
            roto_jsonpath::Path::parse(p)
                .ok()
                .and_then(|p| p.evaluate(&input))
                .ok_or_else(|| p.to_string())
        });
    }
}

/// Checks `text` as a state machine definition.
pub fn fuzz_definition(text: &str) {
    super::definition::check(text);
}
