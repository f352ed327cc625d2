//! The HTTP client of the deliveries Roto makes to user endpoints: SNS's HTTP/HTTPS
//! subscriptions, EventBridge's API destinations and the OAuth token requests of their
//! connections, API Gateway's HTTP integrations.
//!
//! One request per connection, HTTP/1.1 over hyper, with 5 s to answer (AWS's limit for API
//! destinations; SNS allows about as long) unless the caller gives its own limit. Roto carries no TLS client: `https://` URLs are
//! reached over plain HTTP on the same host and port, which serves the local endpoints
//! tests point these deliveries at.

use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// How long one request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What a query string or form leaves unescaped: RFC 3986's unreserved characters.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One request to send.
#[derive(Debug, Clone, Default)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// An `http://` or `https://` URL, which may hold a query string already.
    pub url: String,
    /// Parameters added to the URL's query string, escaped here.
    pub query: Vec<(String, String)>,
    /// Headers; a later one replaces an earlier one of the same name.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
}

/// What the endpoint answered.
#[derive(Debug)]
pub struct HttpResponse {
    /// The status.
    pub status: http::StatusCode,
    /// The headers, in order (values not UTF-8 are replaced lossily).
    pub headers: Vec<(String, String)>,
    /// The whole body.
    pub body: Bytes,
}

impl HttpRequest {
    /// A request with no query, headers or body.
    pub fn new(method: &str, url: &str) -> HttpRequest {
        HttpRequest {
            method: method.to_string(),
            url: url.to_string(),
            ..HttpRequest::default()
        }
    }

    /// The URL with `query` appended to its query string.
    pub fn full_url(&self) -> String {
        if self.query.is_empty() {
            return self.url.clone();
        }
        let separator = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{separator}{}", self.url, encode_pairs(&self.query))
    }
}

/// `k=v&...` with keys and values escaped, as a query string or a form body is written.
pub fn encode_pairs(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(k, QUERY_VALUE),
                utf8_percent_encode(v, QUERY_VALUE)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Sends `request` and reads the whole answer, whatever its status; `Err` says why no
/// answer came (a bad URL, no connection, the timeout).
pub async fn send(request: &HttpRequest) -> Result<HttpResponse, String> {
    send_within(request, TIMEOUT).await
}

/// [`send`] with the caller's time limit.
pub async fn send_within(request: &HttpRequest, limit: Duration) -> Result<HttpResponse, String> {
    let url = request.full_url();
    match tokio::time::timeout(limit, exchange(request, &url)).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "{} {url}: no answer within {} ms",
            request.method,
            limit.as_millis()
        )),
    }
}

/// Where a URL points: the authority (`host:port` as written), the path with its query,
/// and the socket address.
fn target(url: &str) -> Result<(&str, String, String), String> {
    let (rest, default_port) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(rest), _) => (rest, 80),
        (_, Some(rest)) => (rest, 443),
        _ => return Err(format!("not an HTTP URL: {url}")),
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('?') => (&rest[..i], format!("/{}", &rest[i..])),
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    if authority.is_empty() {
        return Err(format!("not an HTTP URL: {url}"));
    }
    let address = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:{default_port}")
    };
    Ok((authority, path, address))
}

async fn exchange(request: &HttpRequest, url: &str) -> Result<HttpResponse, String> {
    let method = &request.method;
    let (authority, path, address) = target(url)?;
    let stream = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|e| format!("{method} {url}: cannot connect to {address}: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("{method} {url}: HTTP handshake with {address} failed: {e}"))?;
    tokio::spawn(connection);
    let bad = |e: &dyn std::fmt::Display| format!("{method} {url}: bad request: {e}");
    let mut outgoing = http::Request::builder()
        .method(method.as_str())
        .uri(path)
        .body(Full::new(Bytes::from(request.body.clone())))
        .map_err(|e| bad(&e))?;
    let headers = outgoing.headers_mut();
    headers.insert(
        http::header::HOST,
        HeaderValue::from_str(authority).map_err(|e| bad(&e))?,
    );
    for (name, value) in &request.headers {
        headers.insert(
            HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(&e))?,
            HeaderValue::from_str(value).map_err(|e| bad(&e))?,
        );
    }
    let response = sender
        .send_request(outgoing)
        .await
        .map_err(|e| format!("{method} {url} failed: {e}"))?;
    let status = response.status();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{method} {url}: reading the answer failed: {e}"))?
        .to_bytes();
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_escaped_and_appended() {
        let mut request = HttpRequest::new("GET", "http://h:1/p");
        assert_eq!(request.full_url(), "http://h:1/p");
        request.query = vec![("a b".into(), "x&y=z".into()), ("c".into(), "é~".into())];
        assert_eq!(request.full_url(), "http://h:1/p?a%20b=x%26y%3Dz&c=%C3%A9~");
        request.url = "http://h:1/p?k=v".into();
        request.query.truncate(1);
        assert_eq!(request.full_url(), "http://h:1/p?k=v&a%20b=x%26y%3Dz");
    }

    #[test]
    fn targets_name_the_authority_path_and_address() {
        assert_eq!(
            target("http://127.0.0.1:8080/a/b?c=d").unwrap(),
            ("127.0.0.1:8080", "/a/b?c=d".into(), "127.0.0.1:8080".into())
        );
        assert_eq!(
            target("https://example.test").unwrap(),
            ("example.test", "/".into(), "example.test:443".into())
        );
        assert_eq!(
            target("http://h?x=1").unwrap(),
            ("h", "/?x=1".into(), "h:80".into())
        );
        assert!(target("ftp://h/").is_err());
        assert!(target("http:///p").is_err());
    }
}
