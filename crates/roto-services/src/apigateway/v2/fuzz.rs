//! Entry points for the fuzzer (`crates/roto-fuzz`): what an HTTP API reads from requests,
//! reached through private modules. Nothing in the server calls them.

use super::openapi::read_definition;
use super::routing::choose;

/// Paths every imported definition's routes are matched against.
const PATHS: [&str; 5] = ["/", "/items/7", "/a/b/c", "//x//", "/%zz/%41"];

/// Reads `text` as an OpenAPI document (as ImportApi does), matches fixed paths against
/// its routes, and reads it as a JWT (as a JWT authorizer does).
pub fn fuzz_openapi(text: &str) {
    if let Ok(definition) = read_definition(text) {
        let routes: Vec<_> = definition.routes.into_iter().map(|(r, _)| r).collect();
        for path in PATHS {
            for method in ["GET", "POST"] {
                choose(&routes, method, path);
            }
        }
    }
    super::authorize::fuzz_token(text);
}
