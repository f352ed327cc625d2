//! Entry points for the fuzzer (`crates/roto-fuzz`) into REST APIs' private parsers (HTTP
//! APIs' are in [`super::v2::fuzz`]). Nothing in the server calls them.

/// Reads `text` as an OpenAPI or Swagger document (as ImportRestApi and PutRestApi do),
/// reads what it defines, and writes its integrations back as GetExport does.
pub fn fuzz_rest_openapi(text: &str) {
    super::rest::fuzz_definition(text);
}
