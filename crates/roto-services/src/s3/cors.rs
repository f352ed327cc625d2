//! CORS: preflight requests (`OPTIONS`) answered from the bucket's CORS configuration, and
//! the `Access-Control-*` headers added to actual requests that carry an `Origin` its rules
//! allow, as S3 evaluates them: the first rule whose origin, method and requested headers
//! all match wins; origins and headers may hold one `*` wildcard.

use roto_core::{AwsError, AwsResult, Request, Response, Value};

use super::{input_str, S3};

/// Whether `pattern` (with at most one `*`) matches `text`, case-insensitively for headers.
fn wildcard(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let (p, t) = if ignore_case {
        (pattern.to_ascii_lowercase(), text.to_ascii_lowercase())
    } else {
        (pattern.to_string(), text.to_string())
    };
    match p.split_once('*') {
        Some((head, tail)) => {
            t.len() >= head.len() + tail.len() && t.starts_with(head) && t.ends_with(tail)
        }
        None => p == t,
    }
}

/// The first rule allowing `origin` to use `method` with `headers`.
fn matching_rule<'a>(
    rules: &'a [Value],
    origin: &str,
    method: &str,
    headers: &[String],
) -> Option<&'a Value> {
    rules.iter().find(|rule| {
        rule.strings("AllowedOrigins")
            .iter()
            .any(|o| wildcard(o, origin, false))
            && rule.strings("AllowedMethods").iter().any(|m| m == method)
            && headers.iter().all(|h| {
                rule.strings("AllowedHeaders")
                    .iter()
                    .any(|a| wildcard(a, h, true))
            })
    })
}

/// The `Access-Control-*` headers a matching rule grants.
fn grant(rule: &Value, origin: &str, requested_headers: &[String]) -> Vec<(String, String)> {
    let any_origin = rule.strings("AllowedOrigins").iter().any(|o| o == "*");
    let mut out = vec![
        (
            "Access-Control-Allow-Origin".to_string(),
            if any_origin {
                "*".into()
            } else {
                origin.into()
            },
        ),
        (
            "Access-Control-Allow-Methods".into(),
            rule.strings("AllowedMethods").join(", "),
        ),
        (
            "Vary".into(),
            "Origin, Access-Control-Request-Headers, Access-Control-Request-Method".into(),
        ),
    ];
    if !any_origin {
        out.push(("Access-Control-Allow-Credentials".into(), "true".into()));
    }
    if !requested_headers.is_empty() {
        out.push((
            "Access-Control-Allow-Headers".into(),
            requested_headers.join(", "),
        ));
    }
    let expose = rule.strings("ExposeHeaders");
    if !expose.is_empty() {
        out.push(("Access-Control-Expose-Headers".into(), expose.join(", ")));
    }
    if let Some(age) = rule.int("MaxAgeSeconds") {
        out.push(("Access-Control-Max-Age".into(), age.to_string()));
    }
    out
}

fn forbidden(message: &str, method: Option<&str>) -> AwsError {
    let e = AwsError::new("AccessForbidden", message)
        .with_status(403)
        .with_field("ResourceType", "BUCKET");
    match method {
        Some(m) => e.with_field("Method", m),
        None => e,
    }
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

/// The bucket a raw request's path names (path style, or the virtual host's prefix).
pub(crate) fn path_bucket(path: &str) -> (String, Option<String>) {
    let trimmed = path.trim_start_matches('/');
    let (bucket, key) = trimmed.split_once('/').unwrap_or((trimmed, ""));
    let key = (!key.is_empty()).then(|| {
        percent_encoding::percent_decode_str(key)
            .decode_utf8_lossy()
            .into_owned()
    });
    (bucket.to_string(), key)
}

impl S3 {
    fn cors_rules(&self, bucket: &str) -> AwsResult<Option<Vec<Value>>> {
        Ok(match self.stored_config(bucket, "cors")? {
            Some(Some(config)) => Some(
                config
                    .get("CORSRules")
                    .and_then(Value::as_list)
                    .unwrap_or_default()
                    .to_vec(),
            ),
            _ => None,
        })
    }

    /// Answers `OPTIONS` from the bucket's CORS rules.
    pub(crate) fn preflight(&self, request: &Request) -> AwsResult<Response> {
        let (name, _) = path_bucket(input_str(&request.input, "Path"));
        let origin = header(request, "origin");
        let method = header(request, "access-control-request-method");
        let (Some(origin), Some(method)) = (origin, method) else {
            return Err(AwsError::new(
                "BadRequest",
                "Insufficient information. Origin request header needed.",
            )
            .with_status(400));
        };
        let bucket = self.bucket(&name)?;
        let Some(rules) = self.cors_rules(&bucket.name)? else {
            return Err(forbidden(
                "CORSResponse: CORS is not enabled for this bucket.",
                Some(method),
            ));
        };
        let requested: Vec<String> = header(request, "access-control-request-headers")
            .unwrap_or_default()
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        let rule = matching_rule(&rules, origin, method, &requested).ok_or_else(|| {
            forbidden(
                "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
                Some(method),
            )
        })?;
        let mut response = Response::new(Value::map());
        response.headers = grant(rule, origin, &requested);
        Ok(response)
    }

    /// Adds the CORS headers an actual request's `Origin` earns, if any rule allows it.
    pub(crate) fn add_cors_headers(
        &self,
        bucket: &str,
        method: &str,
        request_headers: &http::HeaderMap,
        response: &mut Response,
    ) {
        let Some(origin) = request_headers.get("origin").and_then(|v| v.to_str().ok()) else {
            return;
        };
        let Ok(Some(rules)) = self.cors_rules(bucket) else {
            return;
        };
        if let Some(rule) = matching_rule(&rules, origin, method, &[]) {
            response.headers.extend(grant(rule, origin, &[]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_headers_match_with_one_wildcard() {
        assert!(wildcard("*", "https://a.example", false));
        assert!(wildcard(
            "https://*.example.com",
            "https://app.example.com",
            false
        ));
        assert!(!wildcard(
            "https://*.example.com",
            "https://example.org",
            false
        ));
        assert!(wildcard("x-amz-*", "X-Amz-Date", true));
        assert!(!wildcard("https://a.com", "https://A.com", false));
    }

    #[test]
    fn the_first_rule_allowing_origin_method_and_headers_wins() {
        let rules = vec![
            Value::map()
                .with("AllowedOrigins", vec![Value::from("https://a.com")])
                .with("AllowedMethods", vec![Value::from("GET")]),
            Value::map()
                .with("AllowedOrigins", vec![Value::from("*")])
                .with("AllowedMethods", vec![Value::from("PUT")])
                .with("AllowedHeaders", vec![Value::from("*")]),
        ];
        assert!(matching_rule(&rules, "https://a.com", "GET", &[]).is_some());
        assert!(matching_rule(&rules, "https://a.com", "GET", &["x-h".into()]).is_none());
        let put = matching_rule(&rules, "https://b.com", "PUT", &["x-h".into()]).unwrap();
        assert_eq!(grant(put, "https://b.com", &[])[0].1, "*");
        assert!(matching_rule(&rules, "https://b.com", "DELETE", &[]).is_none());
    }
}
