//! The browser guard: Roto listens on loopback, but any web page open in the user's
//! browser can reach loopback too.
//!
//! Two checks keep pages out while SDKs, the CLI and the browser features AWS itself offers
//! keep working:
//! - The `Host` must be a name this server answers to (an IP literal, `localhost` and its
//!   subdomains, the `--domain` and its subdomains, AWS's and LocalStack's names, the names
//!   containers reach their host by (Lambda's docker executor calls back through
//!   `host.docker.internal`), or a name given with `--allow-host`), so a DNS-rebinding
//!   page, whose requests carry its own
//!   name, is refused. Listening on a non-loopback address accepts every name.
//! - A cross-origin browser request (an `Origin` other than a loopback page or one given
//!   with `--allow-origin`, or `Sec-Fetch-Site: cross-site` without an `Origin`) may not
//!   reach `/_roto/*` nor make an unsigned control-plane call: one without an
//!   `Authorization` header (which a page cannot send cross-origin without a preflight)
//!   that reaches a service other than S3, or an S3 `POST` other than a form upload. S3
//!   objects, form uploads and preflights follow the bucket's CORS, and Lambda function
//!   URLs their own, as in AWS.
//!
//! Pages the guard lets in also get CORS answers from the other services (preflights and
//! `Access-Control-Allow-Origin`), so a web app under development can call them with a
//! browser SDK; AWS answers such calls from any origin, Roto only from allowed ones.

use std::net::IpAddr;

use http::request::Parts;
use http::Method;
use roto_core::AwsError;

use crate::router::host_of;

/// The names and origins the guard lets in.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// Every `Host` is accepted (`--allow-host '*'`, or a non-loopback `--host`).
    any_host: bool,
    /// `--domain`, lower-cased.
    domain: String,
    /// `--allow-host` names, lower-cased; `*.example.com` covers the subdomains.
    hosts: Vec<String>,
    /// Every `Origin` is allowed (`--allow-origin '*'`).
    any_origin: bool,
    /// `--allow-origin` origins, lower-cased, without a trailing slash.
    origins: Vec<String>,
}

impl Guard {
    /// A guard for a server listening on `listen_host`.
    pub fn new(listen_host: &str, domain: &str, hosts: &[String], origins: &[String]) -> Guard {
        let lower = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|s| s.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let hosts = lower(hosts);
        let origins = lower(origins);
        Guard {
            any_host: !is_loopback_name(listen_host) || hosts.iter().any(|h| h == "*"),
            domain: domain.to_ascii_lowercase(),
            any_origin: origins.iter().any(|o| o == "*"),
            hosts,
            origins,
        }
    }

    /// Refuses a request whose `Host` names no name this server answers to.
    pub fn check_host(&self, parts: &Parts) -> Result<(), AwsError> {
        if self.any_host {
            return Ok(());
        }
        let host = match parts.headers.get(http::header::HOST) {
            Some(header) => header.to_str().unwrap_or("?"),
            None => parts.uri.authority().map_or("", |a| a.as_str()),
        };
        let name = strip_port(host);
        if host.is_empty() || self.host_allowed(name) {
            return Ok(());
        }
        Err(AwsError::new(
            "AccessDenied",
            format!(
                "Host '{name}' is not a name this server answers to (a DNS-rebinding page \
                 would send its own); allow it with --allow-host {name} (ROTO_ALLOW_HOST)"
            ),
        )
        .with_status(403))
    }

    fn host_allowed(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.');
        if name.parse::<IpAddr>().is_ok()
            || name
                .strip_prefix('[')
                .and_then(|n| n.strip_suffix(']'))
                .is_some_and(|n| n.parse::<IpAddr>().is_ok())
        {
            return true;
        }
        let builtin = [
            "localhost",
            "amazonaws.com",
            "localhost.localstack.cloud",
            "host.docker.internal",
            "host.containers.internal",
        ];
        builtin
            .iter()
            .chain(std::iter::once(&self.domain.as_str()))
            .any(|base| within(name, base))
            || self
                .hosts
                .iter()
                .any(|allowed| match allowed.strip_prefix("*.") {
                    Some(base) => name.len() > base.len() && within(name, base),
                    None => name.eq_ignore_ascii_case(allowed),
                })
    }

    /// The page a cross-origin browser request comes from, if it is one the guard refuses.
    fn refused_origin(&self, parts: &Parts) -> Option<String> {
        let headers = &parts.headers;
        match headers.get(http::header::ORIGIN) {
            Some(origin) => {
                let origin = origin.to_str().unwrap_or_default();
                (!self.origin_allowed(origin, &host_of(parts)))
                    .then(|| format!("origin '{origin}'"))
            }
            None => headers
                .get("sec-fetch-site")
                .is_some_and(|site| site.as_bytes().eq_ignore_ascii_case(b"cross-site"))
                .then(|| "a cross-site page".to_string()),
        }
    }

    fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.any_origin || self.origins.contains(&origin) {
            return true;
        }
        let Some(authority) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        host.eq_ignore_ascii_case(authority) || is_loopback_name(strip_port(authority))
    }

    /// Refuses a cross-origin browser request to `/_roto/*` (and LocalStack's endpoints).
    pub fn check_introspection(&self, parts: &Parts) -> Result<(), String> {
        match self.refused_origin(parts) {
            Some(page) => Err(format!(
                "{} refuses cross-origin browser requests; {page} is not allowed \
                 (allow it with --allow-origin, ROTO_ALLOW_ORIGIN)",
                parts.uri.path()
            )),
            None => Ok(()),
        }
    }

    /// Refuses a cross-origin browser request that would make an unsigned control-plane
    /// call. `s3_form` says the request is an S3 form upload; `data_plane` that it is for
    /// a data plane that answers browsers itself (a Lambda function URL, an API Gateway API).
    pub fn check_call(
        &self,
        parts: &Parts,
        service: &str,
        s3_form: bool,
        data_plane: bool,
    ) -> Result<(), AwsError> {
        if data_plane || parts.headers.contains_key(http::header::AUTHORIZATION) {
            return Ok(());
        }
        let browser_reach = service == "s3"
            && (parts.method != Method::POST || s3_form || presigned(parts.uri.query()));
        if browser_reach {
            return Ok(());
        }
        let Some(page) = self.refused_origin(parts) else {
            return Ok(());
        };
        Err(AwsError::new(
            "AccessDenied",
            format!(
                "Unsigned cross-origin browser request refused: {page} may not call {service} \
                 without signing; allow it with --allow-origin (ROTO_ALLOW_ORIGIN)"
            ),
        )
        .with_status(403))
    }
}

impl Guard {
    /// The page's origin, when it is one the guard lets in: those get CORS answers from
    /// the services S3's bucket rules and function URLs' own do not cover.
    fn allowed_origin<'a>(&self, parts: &'a Parts) -> Option<&'a str> {
        let origin = parts.headers.get(http::header::ORIGIN)?.to_str().ok()?;
        self.origin_allowed(origin, &host_of(parts))
            .then_some(origin)
    }

    /// Answers a CORS preflight from an allowed page to a service other than S3 (whose
    /// buckets answer their own), so a browser app's signed SDK calls can follow it.
    pub fn preflight(&self, parts: &Parts) -> Option<http::Response<()>> {
        if parts.method != Method::OPTIONS {
            return None;
        }
        let method = parts.headers.get("access-control-request-method")?;
        let origin = self.allowed_origin(parts)?;
        let mut response = http::Response::new(());
        let headers = response.headers_mut();
        headers.insert("access-control-allow-origin", origin.parse().ok()?);
        headers.insert("access-control-allow-methods", method.clone());
        if let Some(requested) = parts.headers.get("access-control-request-headers") {
            headers.insert("access-control-allow-headers", requested.clone());
        }
        headers.insert("access-control-max-age", "86400".parse().ok()?);
        headers.insert(http::header::VARY, "Origin".parse().ok()?);
        Some(response)
    }

    /// Adds the CORS headers an allowed page needs to read a response from a service other
    /// than S3 (whose buckets add their own).
    pub fn add_cors(&self, parts: &Parts, headers: &mut http::HeaderMap) {
        let Some(origin) = self.allowed_origin(parts).and_then(|o| o.parse().ok()) else {
            return;
        };
        headers.insert("access-control-allow-origin", origin);
        headers.insert(
            "access-control-expose-headers",
            http::HeaderValue::from_static(EXPOSED),
        );
        headers.append(http::header::VARY, http::HeaderValue::from_static("Origin"));
    }
}

/// The response headers AWS SDKs read, exposed to allowed pages.
const EXPOSED: &str = "x-amzn-requestid, x-amzn-errortype, x-amzn-errormessage, \
    x-amzn-query-error, x-amz-request-id, x-amz-id-2, x-amz-crc32, x-amz-apigw-id, etag, date";

/// Whether `name` is `base` or one of its subdomains, ignoring ASCII case.
fn within(name: &str, base: &str) -> bool {
    let (name, base) = (name.as_bytes(), base.as_bytes());
    let Some(head) = name.len().checked_sub(base.len()) else {
        return false;
    };
    name[head..].eq_ignore_ascii_case(base) && (head == 0 || name[head - 1] == b'.')
}

/// A host without its `:port` (IPv6 literals keep their brackets).
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port))
            if port.bytes().all(|b| b.is_ascii_digit())
                && (!name.contains(':') || name.ends_with(']')) =>
        {
            name
        }
        _ => host,
    }
}

/// Whether a host name or address is this machine's loopback.
fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(&host);
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => within(bare, "localhost"),
    }
}

/// Whether a query carries presigned-URL authentication (SigV4 or SigV2).
fn presigned(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        form_urlencoded::parse(q.as_bytes()).any(|(k, _)| {
            matches!(
                k.as_ref(),
                "X-Amz-Signature" | "X-Amz-Credential" | "Signature"
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut b = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    fn guard() -> Guard {
        Guard::new(
            "127.0.0.1",
            "roto.test",
            &["dev.example.com".into(), "*.corp.example".into()],
            &["http://app.example:8080".into()],
        )
    }

    fn host_ok(g: &Guard, host: &str) -> bool {
        g.check_host(&parts("GET", "/", &[("host", host)])).is_ok()
    }

    #[test]
    fn hosts_the_server_answers_to_pass_and_others_are_refused() {
        let g = guard();
        for host in [
            "127.0.0.1:4566",
            "10.1.2.3",
            "[::1]:4566",
            "localhost",
            "bucket.s3.localhost:4566",
            "sqs.roto.test",
            "roto.test:4566",
            "sqs.us-east-1.amazonaws.com",
            "bucket.s3.localhost.localstack.cloud:4566",
            "host.docker.internal:4566",
            "LocalHost:4566",
            "SQS.Roto.Test",
            "dev.example.com",
            "a.corp.example",
        ] {
            assert!(host_ok(&g, host), "{host} should pass");
        }
        for host in [
            "evil.example",
            "evil.example:4566",
            "localhost.evil.example",
            "notlocalhost",
            "corp.example",
            "x.dev.example.com",
            "amazonaws.com.evil.example",
        ] {
            assert!(!host_ok(&g, host), "{host} should be refused");
        }
        let message = g
            .check_host(&parts("GET", "/", &[("host", "evil.example")]))
            .unwrap_err()
            .message;
        assert!(message.contains("--allow-host evil.example"), "{message}");
    }

    #[test]
    fn any_host_passes_off_loopback_or_with_a_star() {
        for g in [
            Guard::new("0.0.0.0", "localhost", &[], &[]),
            Guard::new("127.0.0.1", "localhost", &["*".into()], &[]),
        ] {
            assert!(host_ok(&g, "evil.example"));
        }
        assert!(!host_ok(
            &Guard::new("localhost", "localhost", &[], &[]),
            "evil.example"
        ));
    }

    #[test]
    fn loopback_and_allowed_origins_pass_and_other_pages_are_refused() {
        let g = guard();
        let ok = |headers: &[(&str, &str)]| {
            g.check_introspection(&parts("POST", "/_roto/reset", headers))
                .is_ok()
        };
        assert!(ok(&[]));
        assert!(ok(&[("origin", "http://localhost:3000")]));
        assert!(ok(&[("origin", "http://127.0.0.1:5173")]));
        assert!(ok(&[("origin", "http://[::1]:8000")]));
        assert!(ok(&[("origin", "http://app.example:8080")]));
        assert!(ok(&[
            ("origin", "http://roto.lan:4566"),
            ("host", "roto.lan:4566")
        ]));
        assert!(ok(&[("sec-fetch-site", "same-origin")]));
        assert!(!ok(&[("origin", "http://evil.example")]));
        assert!(!ok(&[("origin", "null")]));
        assert!(!ok(&[("origin", "http://app.example:9090")]));
        assert!(!ok(&[("sec-fetch-site", "cross-site")]));
    }

    #[test]
    fn allowed_pages_get_cors_answers_and_others_do_not() {
        let g = guard();
        let preflight = |origin: &str| {
            g.preflight(&parts(
                "OPTIONS",
                "/",
                &[
                    ("origin", origin),
                    ("access-control-request-method", "POST"),
                    (
                        "access-control-request-headers",
                        "authorization,x-amz-target",
                    ),
                ],
            ))
        };
        let ok = preflight("http://app.example:8080").unwrap();
        assert_eq!(
            ok.headers()["access-control-allow-headers"],
            "authorization,x-amz-target"
        );
        assert!(preflight("http://evil.example").is_none());
        let mut headers = http::HeaderMap::new();
        g.add_cors(
            &parts("POST", "/", &[("origin", "http://localhost:3000")]),
            &mut headers,
        );
        assert_eq!(
            headers["access-control-allow-origin"],
            "http://localhost:3000"
        );
        let mut headers = http::HeaderMap::new();
        g.add_cors(
            &parts("POST", "/", &[("origin", "http://evil.example")]),
            &mut headers,
        );
        assert!(headers.is_empty());
    }

    #[test]
    fn unsigned_cross_origin_calls_are_refused_where_they_would_act() {
        let g = guard();
        let evil = ("origin", "http://evil.example");
        let call = |method: &str, uri: &str, extra: &[(&str, &str)], service: &str| {
            let mut headers = vec![evil];
            headers.extend_from_slice(extra);
            g.check_call(&parts(method, uri, &headers), service, false, false)
                .is_ok()
        };
        assert!(!call("POST", "/", &[], "sqs"));
        assert!(!call("GET", "/?Action=CreateUser", &[], "iam"));
        assert!(!call("POST", "/?X-Amz-Signature=0", &[], "sqs"));
        assert!(call(
            "POST",
            "/",
            &[("authorization", "AWS4-HMAC-SHA256 x")],
            "sqs"
        ));
        assert!(call("GET", "/bucket/key", &[], "s3"));
        assert!(call("PUT", "/bucket/key", &[], "s3"));
        assert!(call(
            "POST",
            "/bucket/key?uploads&X-Amz-Signature=0",
            &[],
            "s3"
        ));
        assert!(!call("POST", "/bucket/key?uploads", &[], "s3"));
        let form = parts("POST", "/bucket", &[evil]);
        assert!(g.check_call(&form, "s3", true, false).is_ok());
        let url = parts("POST", "/", &[evil]);
        assert!(g.check_call(&url, "lambda", false, true).is_ok());
    }
}
