//! The events HTTP APIs send to Lambda proxy integrations and REQUEST authorizers: payload
//! format 2.0 (`version`, `routeKey`, `rawPath`, `cookies`, headers joined with commas, ...)
//! and 1.0 (REST APIs' shape: `resource`, `httpMethod`, `multiValueHeaders`, ...), as AWS
//! documents them.

use base64::Engine;
use roto_core::timestamp::{self, TimestampFormat};
use roto_core::Value;
use serde_json::{json, Map, Value as Json};

use super::super::invoke::ApiRequest;
use crate::media::is_text;

/// What an event says beside the request itself.
pub(super) struct Target<'a> {
    pub req: &'a ApiRequest,
    /// The API's account.
    pub account: &'a str,
    pub stage: &'a str,
    pub route_key: &'a str,
    pub parameters: &'a [(String, String)],
    pub stage_variables: Option<&'a Value>,
    /// What an authorizer said of the caller (`{"jwt": ...}` or `{"lambda": ...}`).
    pub authorizer: Option<Json>,
}

/// The request time as the events write it: `04/Mar/2020:19:03:58 +0000`.
pub(super) fn clf_time(millis: i64) -> String {
    let rfc = timestamp::format(millis, TimestampFormat::Rfc822);
    match rfc.split(' ').collect::<Vec<_>>().as_slice() {
        [_, day, month, year, clock, _] => format!("{day}/{month}/{year}:{clock} +0000"),
        _ => rfc.clone(),
    }
}

/// Pairs as an object whose repeated names join their values with commas.
fn joined<'p>(pairs: impl Iterator<Item = (&'p str, String)>) -> Map<String, Json> {
    let mut out = Map::new();
    for (k, v) in pairs {
        match out.get_mut(k) {
            Some(Json::String(existing)) => {
                existing.push(',');
                existing.push_str(&v);
            }
            _ => {
                out.insert(k.to_string(), Json::String(v));
            }
        }
    }
    out
}

/// Pairs as an object of lists of values.
fn multi<'p>(pairs: impl Iterator<Item = (&'p str, String)>) -> Map<String, Json> {
    let mut out = Map::new();
    for (k, v) in pairs {
        let entry = out.entry(k.to_string()).or_insert_with(|| json!([]));
        if let Json::Array(values) = entry {
            values.push(Json::String(v));
        }
    }
    out
}

/// Pairs as an object, or `null` when there are none (as the events write absent members).
fn object_or_null(map: Map<String, Json>) -> Json {
    if map.is_empty() {
        Json::Null
    } else {
        Json::Object(map)
    }
}

impl Target<'_> {
    fn headers(&self) -> impl Iterator<Item = (&str, String)> {
        self.req.headers.iter().map(|(k, v)| {
            (
                k.as_str(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
    }

    fn query(&self) -> impl Iterator<Item = (&str, String)> {
        self.req.query.iter().map(|(k, v)| (k.as_str(), v.clone()))
    }

    fn body(&self) -> (Json, bool) {
        if self.req.body.is_empty() {
            return (Json::Null, false);
        }
        let content_type = self.req.header("content-type").unwrap_or_default();
        if is_text(&content_type) {
            let text = String::from_utf8_lossy(&self.req.body).into_owned();
            return (Json::String(text), false);
        }
        let encoded = base64::engine::general_purpose::STANDARD.encode(&self.req.body);
        (Json::String(encoded), true)
    }

    fn path_parameters(&self) -> Json {
        let pairs = self.parameters.iter().map(|(k, v)| (k.as_str(), v.clone()));
        object_or_null(joined(pairs))
    }

    fn stage_variables(&self) -> Json {
        match self.stage_variables.and_then(Value::as_map) {
            Some(m) if !m.is_empty() => Value::Map(m.clone()).to_json(),
            _ => Json::Null,
        }
    }

    fn domain_prefix(&self) -> &str {
        let domain = self.req.domain_name();
        domain.split('.').next().unwrap_or(domain)
    }

    /// The payload format 2.0 event.
    pub(super) fn v2(&self) -> Json {
        let req = self.req;
        let mut headers = joined(self.headers().filter(|(k, _)| *k != "cookie"));
        headers.remove("cookie");
        let cookies: Vec<Json> = req
            .header_values("cookie")
            .iter()
            .flat_map(|c| c.split(';').map(|p| Json::from(p.trim())))
            .filter(|c| c.as_str() != Some(""))
            .collect();
        let (body, base64) = self.body();
        let mut event = json!({
            "version": "2.0",
            "routeKey": self.route_key,
            "rawPath": req.path,
            "rawQueryString": req.raw_query,
            "headers": headers,
            "requestContext": {
                "accountId": self.account,
                "apiId": req.api_id,
                "domainName": req.domain_name(),
                "domainPrefix": self.domain_prefix(),
                "http": {
                    "method": req.method,
                    "path": req.path,
                    "protocol": "HTTP/1.1",
                    "sourceIp": req.source_ip,
                    "userAgent": req.header("user-agent").unwrap_or_default(),
                },
                "requestId": req.request_id,
                "routeKey": self.route_key,
                "stage": self.stage,
                "time": clf_time(req.time),
                "timeEpoch": req.time,
            },
            "isBase64Encoded": base64,
        });
        let optional = [
            (
                "cookies",
                (!cookies.is_empty()).then_some(Json::Array(cookies)),
            ),
            (
                "queryStringParameters",
                Some(object_or_null(joined(self.query()))),
            ),
            ("pathParameters", Some(self.path_parameters())),
            ("stageVariables", Some(self.stage_variables())),
            ("body", Some(body)),
        ];
        for (name, value) in optional {
            if let Some(value) = value.filter(|v| !v.is_null()) {
                event[name] = value;
            }
        }
        if let Some(authorizer) = &self.authorizer {
            event["requestContext"]["authorizer"] = authorizer.clone();
        }
        event
    }

    /// The payload format 1.0 event.
    pub(super) fn v1(&self) -> Json {
        let req = self.req;
        let (body, base64) = self.body();
        let resource = self
            .route_key
            .split_once(' ')
            .map_or(self.route_key, |(_, p)| p);
        let mut event = json!({
            "version": "1.0",
            "resource": resource,
            "path": req.path,
            "httpMethod": req.method,
            "headers": joined(self.headers()),
            "multiValueHeaders": multi(self.headers()),
            "queryStringParameters": object_or_null(joined(self.query())),
            "multiValueQueryStringParameters": object_or_null(multi(self.query())),
            "requestContext": {
                "accountId": self.account,
                "apiId": req.api_id,
                "domainName": req.domain_name(),
                "domainPrefix": self.domain_prefix(),
                "extendedRequestId": req.request_id,
                "httpMethod": req.method,
                "identity": {
                    "accessKey": null, "accountId": null, "caller": null, "cognitoAmr": null,
                    "cognitoAuthenticationProvider": null, "cognitoAuthenticationType": null,
                    "cognitoIdentityId": null, "cognitoIdentityPoolId": null, "principalOrgId": null,
                    "sourceIp": req.source_ip, "user": null,
                    "userAgent": req.header("user-agent").unwrap_or_default(), "userArn": null,
                },
                "path": req.path,
                "protocol": "HTTP/1.1",
                "requestId": req.request_id,
                "requestTime": clf_time(req.time),
                "requestTimeEpoch": req.time,
                "resourceId": self.route_key,
                "resourcePath": resource,
                "stage": self.stage,
            },
            "pathParameters": self.path_parameters(),
            "stageVariables": self.stage_variables(),
            "body": body,
            "isBase64Encoded": base64,
        });
        if let Some(authorizer) = &self.authorizer {
            event["requestContext"]["authorizer"] = authorizer.clone();
        }
        event
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::HeaderMap;
    use roto_core::Context;

    fn request(body: &'static [u8], content_type: &str) -> ApiRequest {
        let mut headers = HeaderMap::new();
        headers.insert("host", "abc.execute-api.localhost:4566".parse().unwrap());
        headers.insert("content-type", content_type.parse().unwrap());
        headers.insert("cookie", "a=1; b=2".parse().unwrap());
        headers.append("x-multi", "one".parse().unwrap());
        headers.append("x-multi", "two".parse().unwrap());
        headers.insert("user-agent", "tests".parse().unwrap());
        ApiRequest {
            api_id: "abc".into(),
            method: "POST".into(),
            path: "/dev/items/7".into(),
            raw_query: "q=a+b&q=c".into(),
            query: vec![("q".into(), "a b".into()), ("q".into(), "c".into())],
            headers,
            body: Bytes::from_static(body),
            source_ip: "10.0.0.1".into(),
            host: "abc.execute-api.localhost:4566".into(),
            request_id: "rid".into(),
            time: 1_583_348_638_390,
            caller: Context {
                account: "000000000000".into(),
                region: "us-east-1".into(),
                access_key: None,
                request_id: "rid".into(),
                host: "abc.execute-api.localhost:4566".into(),
            },
        }
    }

    fn target(req: &ApiRequest) -> Target<'_> {
        Target {
            req,
            account: "000000000000",
            stage: "dev",
            route_key: "POST /items/{id}",
            parameters: &[],
            stage_variables: None,
            authorizer: None,
        }
    }

    #[test]
    fn payload_2_events_carry_every_member() {
        let req = request(br#"{"k":1}"#, "application/json");
        let mut t = target(&req);
        let parameters = [("id".to_string(), "7".to_string())];
        t.parameters = &parameters;
        let variables = Value::map().with("table", "t1");
        t.stage_variables = Some(&variables);
        let event = t.v2();
        assert_eq!(event["version"], "2.0");
        assert_eq!(event["routeKey"], "POST /items/{id}");
        assert_eq!(event["rawPath"], "/dev/items/7");
        assert_eq!(event["rawQueryString"], "q=a+b&q=c");
        assert_eq!(event["cookies"], json!(["a=1", "b=2"]));
        assert_eq!(event["headers"]["x-multi"], "one,two");
        assert!(event["headers"].get("cookie").is_none());
        assert_eq!(event["queryStringParameters"], json!({"q": "a b,c"}));
        assert_eq!(event["pathParameters"], json!({"id": "7"}));
        assert_eq!(event["stageVariables"], json!({"table": "t1"}));
        assert_eq!(event["body"], r#"{"k":1}"#);
        assert_eq!(event["isBase64Encoded"], false);
        let context = &event["requestContext"];
        assert_eq!(context["domainName"], "abc.execute-api.localhost");
        assert_eq!(context["domainPrefix"], "abc");
        assert_eq!(context["http"]["sourceIp"], "10.0.0.1");
        assert_eq!(context["time"], "04/Mar/2020:19:03:58 +0000");
        assert_eq!(context["stage"], "dev");
    }

    #[test]
    fn binary_bodies_are_base64_and_payload_1_events_have_multi_values() {
        let req = request(&[0, 159, 146, 150], "application/octet-stream");
        let event = target(&req).v2();
        assert_eq!(
            (event["body"].as_str(), event["isBase64Encoded"].as_bool()),
            (Some("AJ+Slg=="), Some(true))
        );
        let v1 = target(&req).v1();
        assert_eq!(v1["version"], "1.0");
        assert_eq!(v1["resource"], "/items/{id}");
        assert_eq!(v1["multiValueHeaders"]["x-multi"], json!(["one", "two"]));
        assert_eq!(
            v1["multiValueQueryStringParameters"]["q"],
            json!(["a b", "c"])
        );
        assert_eq!(v1["pathParameters"], Json::Null);
        assert_eq!(v1["requestContext"]["identity"]["sourceIp"], "10.0.0.1");
    }
}
