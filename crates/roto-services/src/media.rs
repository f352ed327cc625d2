//! Which request bodies a Lambda event carries as text and which as base64, by their
//! content type: function URLs and HTTP APIs (payload format 2.0) decide alike.

/// Whether a request body reaches the function as text (else base64).
pub fn is_text(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-www-form-urlencoded"
                | "application/graphql"
        )
}
