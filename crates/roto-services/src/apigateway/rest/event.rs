//! The Lambda proxy event of payload format 1.0, as REST APIs build it, with every member
//! of its `requestContext`; and the `$context` members mapping templates and access logs
//! read, which are the same facts.

use std::collections::BTreeMap;

use base64::Engine;
use roto_core::timestamp::{self, TimestampFormat};
use serde_json::{json, Map, Value as Json};

use roto_core::access::Principal;

use super::super::invoke::ApiRequest;

/// What the data plane knows of a request once it is routed.
pub struct Routed<'a> {
    /// The request.
    pub req: &'a ApiRequest,
    /// The API's account.
    pub account: &'a str,
    /// The stage's name.
    pub stage: &'a str,
    /// The stage's variables.
    pub stage_variables: &'a Json,
    /// The path after the stage (`/items/7`).
    pub path: &'a str,
    /// The resource's id and path template (`/items/{id}`).
    pub resource_id: &'a str,
    /// The resource's path template.
    pub resource_path: &'a str,
    /// The path parameters.
    pub params: &'a BTreeMap<String, String>,
    /// Whether the body is binary (its content type is one of the API's binary media types).
    pub binary: bool,
    /// The authorizer's context, when an authorizer allowed the request.
    pub authorizer: Option<&'a Json>,
    /// The API key's id and value, when the method required one.
    pub api_key: Option<(&'a str, &'a str)>,
    /// The signer, when an `AWS_IAM` method knew it.
    pub caller: Option<&'a Principal>,
}

/// `09/Apr/2015:12:34:56 +0000`, the CLF time AWS writes.
pub fn clf_time(millis: i64) -> String {
    let rfc = timestamp::format(millis, TimestampFormat::Rfc822);
    match rfc.split(' ').collect::<Vec<_>>().as_slice() {
        [_, day, month, year, clock, _] => format!("{day}/{month}/{year}:{clock} +0000"),
        _ => rfc.clone(),
    }
}

/// What `$context` knows of a request before it is routed (and the access log of one
/// refused before its resource is known): ids, times, stage, method, path and caller.
pub fn base_context(req: &ApiRequest, account: &str, stage: &str, path: &str) -> Json {
    let domain = req.domain_name();
    json!({
        "httpMethod": req.method,
        "extendedRequestId": req.request_id,
        "requestTime": clf_time(req.time),
        "path": format!("/{stage}{path}"),
        "accountId": account,
        "protocol": "HTTP/1.1",
        "stage": stage,
        "domainPrefix": domain.split('.').next().unwrap_or_default(),
        "requestTimeEpoch": req.time,
        "requestId": req.request_id,
        "identity": {"sourceIp": req.source_ip, "userAgent": req.header("user-agent")},
        "domainName": domain,
        "apiId": req.api_id,
    })
}

/// Single- and multi-value maps of pairs: the last value wins in the first, as in AWS.
fn maps(pairs: impl Iterator<Item = (String, String)>) -> (Json, Json) {
    let mut single = Map::new();
    let mut multi: Map<String, Json> = Map::new();
    for (k, v) in pairs {
        single.insert(k.clone(), Json::String(v.clone()));
        match multi.get_mut(&k) {
            Some(Json::Array(list)) => list.push(Json::String(v)),
            _ => {
                multi.insert(k, json!([v]));
            }
        }
    }
    if single.is_empty() {
        (Json::Null, Json::Null)
    } else {
        (Json::Object(single), Json::Object(multi))
    }
}

impl Routed<'_> {
    /// The ARN of the method invoked:
    /// `arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}/{path}`.
    pub fn method_arn(&self, region: &str) -> String {
        format!(
            "arn:aws:execute-api:{region}:{}:{}/{}/{}{}",
            self.account, self.req.api_id, self.stage, self.req.method, self.path
        )
    }

    /// The request's headers as pairs, in order.
    pub fn header_pairs(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.req.headers.iter().map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
    }

    /// The `requestContext`, which is also most of `$context`.
    pub fn request_context(&self) -> Json {
        let req = self.req;
        let mut identity = json!({
            "cognitoIdentityPoolId": null, "accountId": null, "cognitoIdentityId": null,
            "caller": null, "accessKey": null, "sourceIp": req.source_ip,
            "principalOrgId": null, "cognitoAuthenticationType": null,
            "cognitoAuthenticationProvider": null, "userArn": null,
            "userAgent": req.header("user-agent"), "user": null,
        });
        if let Some((id, value)) = self.api_key {
            identity["apiKeyId"] = id.into();
            identity["apiKey"] = value.into();
        }
        if let Some(caller) = self.caller {
            identity["accountId"] = caller.account.as_str().into();
            identity["caller"] = caller.user_id.as_str().into();
            identity["user"] = caller.user_id.as_str().into();
            identity["userArn"] = caller.arn.as_str().into();
            identity["accessKey"] = req.caller.access_key.as_deref().into();
        }
        let mut context = base_context(req, self.account, self.stage, self.path);
        context["resourceId"] = self.resource_id.into();
        context["resourcePath"] = self.resource_path.into();
        context["identity"] = identity;
        context["deploymentId"] = Json::Null;
        if let Some(authorizer) = self.authorizer {
            context["authorizer"] = authorizer.clone();
        }
        context
    }

    /// The body as the event carries it: text, or base64 when binary.
    pub fn body(&self) -> (Json, bool) {
        let body = &self.req.body;
        if body.is_empty() {
            return (Json::Null, false);
        }
        if self.binary {
            return (
                base64::engine::general_purpose::STANDARD
                    .encode(body)
                    .into(),
                true,
            );
        }
        (String::from_utf8_lossy(body).into_owned().into(), false)
    }

    /// The payload format 1.0 event.
    pub fn event(&self) -> Json {
        let (headers, multi_headers) = maps(self.header_pairs());
        let (query, multi_query) = maps(self.req.query.iter().cloned());
        let params: Map<String, Json> = self
            .params
            .iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect();
        let variables = match self.stage_variables.as_object() {
            Some(v) if !v.is_empty() => Json::Object(v.clone()),
            _ => Json::Null,
        };
        let (body, base64) = self.body();
        json!({
            "resource": self.resource_path,
            "path": self.path,
            "httpMethod": self.req.method,
            "headers": headers,
            "multiValueHeaders": multi_headers,
            "queryStringParameters": query,
            "multiValueQueryStringParameters": multi_query,
            "pathParameters": if params.is_empty() { Json::Null } else { Json::Object(params) },
            "stageVariables": variables,
            "requestContext": self.request_context(),
            "body": body,
            "isBase64Encoded": base64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_keep_the_last_value_and_every_value() {
        let pairs =
            [("a", "1"), ("a", "2"), ("b", "x")].map(|(k, v)| (k.to_string(), v.to_string()));
        let (single, multi) = maps(pairs.into_iter());
        assert_eq!(single, json!({"a": "2", "b": "x"}));
        assert_eq!(multi, json!({"a": ["1", "2"], "b": ["x"]}));
        assert_eq!(maps(std::iter::empty()), (Json::Null, Json::Null));
        assert_eq!(clf_time(1_428_582_896_000), "09/Apr/2015:12:34:56 +0000");
    }
}
