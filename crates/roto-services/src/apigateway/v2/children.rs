//! The resources inside an API that share one life cycle (Create, Get, list, Update,
//! Delete): routes, integrations, route responses, integration responses, authorizers and
//! models, with the checks and defaults AWS applies to each.

use roto_core::{AwsResult, Context, Value};

use super::store::{Key, Kind};
use super::{bad_request, body_members, bound_members, conflict, merged, page, ApiGatewayV2};

/// The methods an HTTP API's route key may name.
const METHODS: [&str; 8] = [
    "ANY", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS",
];

/// The kind an operation's noun names, and the kind of its parent where it has one.
fn child_kind(noun: &str) -> Option<(Kind, Option<Kind>)> {
    Some(match noun {
        "Route" => (Kind::Route, None),
        "Integration" => (Kind::Integration, None),
        "RouteResponse" => (Kind::RouteResponse, Some(Kind::Route)),
        "IntegrationResponse" => (Kind::IntegrationResponse, Some(Kind::Integration)),
        "Authorizer" => (Kind::Authorizer, None),
        "Model" => (Kind::Model, None),
        _ => return None,
    })
}

/// An operation's verb, noun, and whether it lists (`GetRoutes`).
fn parse_operation(operation: &str) -> Option<(&str, Kind, Option<Kind>, bool)> {
    let verb = ["Create", "Get", "Update", "Delete"]
        .into_iter()
        .find(|v| operation.starts_with(v))?;
    let noun = &operation[verb.len()..];
    if let Some((kind, parent)) = child_kind(noun) {
        return Some((verb, kind, parent, false));
    }
    let (kind, parent) = child_kind(noun.strip_suffix('s')?)?;
    (verb == "Get").then_some((verb, kind, parent, true))
}

/// Checks an HTTP API's route key: `$default`, or a method and a path whose only greedy
/// variable (`{proxy+}`) is its last segment.
pub(super) fn check_route_key(key: &str) -> AwsResult<()> {
    if key == "$default" {
        return Ok(());
    }
    let invalid = || {
        bad_request(format!("Unable to create route {key}: the route key must be '$default' or an HTTP method and a resource path, such as 'GET /pets'."))
    };
    let (method, path) = key.split_once(' ').ok_or_else(invalid)?;
    if !METHODS.contains(&method) || !path.starts_with('/') || path.contains(' ') {
        return Err(invalid());
    }
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, segment) in segments.iter().enumerate() {
        let greedy = segment.starts_with('{') && segment.ends_with("+}");
        if greedy && i + 1 != segments.len() {
            return Err(bad_request(format!(
                "Unable to create route {key}: a greedy path variable must be the last segment of the path."
            )));
        }
    }
    Ok(())
}

impl ApiGatewayV2 {
    /// Runs a child operation, or `None` when `operation` is not one.
    pub(super) fn child_operation(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Option<Value>> {
        match operation {
            "GetModelTemplate" => return self.get_model_template(ctx, input).map(Some),
            "DeleteRouteRequestParameter" => {
                return self.delete_route_request_parameter(ctx, input).map(Some)
            }
            _ => {}
        }
        let Some((verb, kind, parent_kind, listing)) = parse_operation(operation) else {
            return Ok(None);
        };
        let (api_id, api) = self.api_of(ctx, input)?;
        let parent = match parent_kind {
            Some(p) => {
                let id = input.str(p.id_member()).unwrap_or_default();
                self.fetch(ctx, Key::of(&api_id, p, id))?;
                id
            }
            None => "",
        };
        let id = input.str(kind.id_member()).unwrap_or_default();
        let key = Key {
            api: &api_id,
            kind,
            parent,
            id,
        };
        let bound = bound_members(operation);
        let output = match verb {
            "Create" => self.create_child(ctx, &api, key, body_members(input, &bound))?,
            "Get" if listing => page(self.list(ctx, &api_id, kind, parent)?, input)?,
            "Get" => self.fetch(ctx, key)?,
            "Update" => {
                let doc = merged(self.fetch(ctx, key)?, input, &bound);
                let doc = self.checked(ctx, &api, key, doc)?;
                self.save(ctx, key, &doc)?;
                self.changed(ctx, &api_id)?;
                doc
            }
            _ => {
                self.fetch(ctx, key)?;
                self.remove(ctx, key)?;
                self.changed(ctx, &api_id)?;
                Value::map()
            }
        };
        Ok(Some(output))
    }

    /// The creation of a child at `key` (whose id is not chosen yet).
    fn create_child(
        &self,
        ctx: &Context,
        api: &Value,
        key: Key<'_>,
        given: Vec<(String, Value)>,
    ) -> AwsResult<Value> {
        let id = key.kind.new_id();
        let mut doc = defaults(key.kind, api);
        for (k, v) in given {
            doc.insert(k, v);
        }
        doc.insert(key.kind.id_member(), id.as_str());
        let key = Key { id: &id, ..key };
        let doc = self.checked(ctx, api, key, doc)?;
        self.save(ctx, key, &doc)?;
        self.changed(ctx, key.api)?;
        Ok(doc)
    }

    /// A child's document after AWS's checks for its kind.
    fn checked(&self, ctx: &Context, api: &Value, key: Key<'_>, doc: Value) -> AwsResult<Value> {
        let http = api.str("ProtocolType") != Some("WEBSOCKET");
        match key.kind {
            Kind::Route => self.check_route(ctx, http, key, &doc)?,
            Kind::Integration => check_integration(http, &doc)?,
            Kind::Authorizer => check_authorizer(http, &doc)?,
            Kind::RouteResponse | Kind::IntegrationResponse if http => {
                return Err(bad_request(
                    "This operation is supported only for WebSocket APIs.",
                ))
            }
            _ => {}
        }
        Ok(doc)
    }

    fn check_route(&self, ctx: &Context, http: bool, key: Key<'_>, doc: &Value) -> AwsResult<()> {
        let route_key = doc.str("RouteKey").unwrap_or_default();
        if http {
            check_route_key(route_key)?;
        }
        let taken = self
            .list(ctx, key.api, Kind::Route, "")?
            .iter()
            .any(|r| r.str("RouteKey") == Some(route_key) && r.str("RouteId") != Some(key.id));
        if taken {
            return Err(conflict(format!(
                "Unable to create route. A route with the key {route_key} already exists for this API."
            )));
        }
        if let Some(target) = doc.str("Target") {
            let integration = target.strip_prefix("integrations/").unwrap_or(target);
            if self
                .load(ctx, Key::of(key.api, Kind::Integration, integration))?
                .is_none()
            {
                return Err(bad_request(format!(
                    "Invalid target specified: {target}. The target must be of the form integrations/<integration-id>, naming an integration of this API."
                )));
            }
        }
        self.check_route_authorization(ctx, key.api, doc)
    }

    fn check_route_authorization(&self, ctx: &Context, api: &str, doc: &Value) -> AwsResult<()> {
        let wanted = match doc.str("AuthorizationType").unwrap_or("NONE") {
            "JWT" => "JWT",
            "CUSTOM" => "REQUEST",
            _ => {
                if doc
                    .get("AuthorizationScopes")
                    .is_some_and(|s| s.as_list().is_some_and(|l| !l.is_empty()))
                {
                    return Err(bad_request(
                        "Authorization scopes are supported only for JWT authorizers.",
                    ));
                }
                return Ok(());
            }
        };
        let id = doc.str("AuthorizerId").ok_or_else(|| {
            bad_request("AuthorizerId is required when AuthorizationType is JWT or CUSTOM.")
        })?;
        let authorizer = self.fetch(ctx, Key::of(api, Kind::Authorizer, id))?;
        if authorizer.str("AuthorizerType") != Some(wanted) {
            return Err(bad_request(format!(
                "Authorizer {id} is not of type {wanted}, which AuthorizationType {} requires.",
                doc.str("AuthorizationType").unwrap_or_default()
            )));
        }
        Ok(())
    }

    fn get_model_template(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let id = input.str("ModelId").unwrap_or_default();
        self.fetch(ctx, Key::of(&api_id, Kind::Model, id))?;
        Ok(Value::map().with("Value", "#set($inputRoot = $input.path('$'))\n{ }"))
    }

    fn delete_route_request_parameter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let id = input.str("RouteId").unwrap_or_default();
        let key = Key::of(&api_id, Kind::Route, id);
        let mut route = self.fetch(ctx, key)?;
        let parameter = input.str("RequestParameterKey").unwrap_or_default();
        let mut parameters = route
            .get("RequestParameters")
            .cloned()
            .unwrap_or_else(Value::map);
        if parameters.remove(parameter).is_none() {
            return Err(bad_request(format!(
                "Invalid request parameter key {parameter}: the route has no such parameter."
            )));
        }
        route.insert("RequestParameters", parameters);
        self.save(ctx, key, &route)?;
        self.changed(ctx, &api_id)?;
        Ok(Value::map())
    }
}

/// What AWS fills in on a new child of `kind`.
fn defaults(kind: Kind, api: &Value) -> Value {
    let http = api.str("ProtocolType") != Some("WEBSOCKET");
    match kind {
        Kind::Route => Value::map()
            .with("ApiKeyRequired", false)
            .with("AuthorizationType", "NONE"),
        Kind::Integration if http => Value::map()
            .with("ConnectionType", "INTERNET")
            .with("PayloadFormatVersion", "1.0")
            .with("TimeoutInMillis", 30000i64),
        Kind::Integration => Value::map()
            .with("ConnectionType", "INTERNET")
            .with("PassthroughBehavior", "WHEN_NO_MATCH")
            .with(
                "IntegrationResponseSelectionExpression",
                "${integration.response.statuscode}",
            )
            .with("TimeoutInMillis", 29000i64),
        Kind::Model => Value::map().with("ContentType", "application/json"),
        _ => Value::map(),
    }
}

/// AWS's checks of an integration: HTTP APIs take proxies only (MOCK and the non-proxy
/// types are WebSocket APIs'), and payload format 2.0 is for Lambda proxies.
fn check_integration(http: bool, doc: &Value) -> AwsResult<()> {
    let kind = doc.str("IntegrationType").unwrap_or_default();
    if http && !matches!(kind, "AWS_PROXY" | "HTTP_PROXY") {
        return Err(bad_request(format!(
            "Integration type {kind} is not supported for HTTP APIs. Supported types are AWS_PROXY and HTTP_PROXY."
        )));
    }
    let version = doc.str("PayloadFormatVersion").unwrap_or("1.0");
    if !matches!(version, "1.0" | "2.0") || (version == "2.0" && kind != "AWS_PROXY") {
        return Err(bad_request(format!(
            "Invalid payload format version {version}: {kind} integrations support 1.0{}.",
            if kind == "AWS_PROXY" { " and 2.0" } else { "" }
        )));
    }
    if kind != "MOCK"
        && doc.str("IntegrationUri").is_none()
        && doc.str("IntegrationSubtype").is_none()
    {
        return Err(bad_request(format!(
            "IntegrationUri is required for integrations of type {kind}."
        )));
    }
    Ok(())
}

/// AWS's checks of an authorizer: JWT ones need an issuer and are HTTP APIs'; REQUEST ones
/// need a function and, on HTTP APIs, a payload format (simple responses need 2.0).
fn check_authorizer(http: bool, doc: &Value) -> AwsResult<()> {
    match doc.str("AuthorizerType").unwrap_or_default() {
        "JWT" => {
            if !http {
                return Err(bad_request(
                    "JWT authorizers are supported only for HTTP APIs.",
                ));
            }
            let issuer = doc.get("JwtConfiguration").and_then(|j| j.str("Issuer"));
            if issuer.is_none() {
                return Err(bad_request(
                    "JwtConfiguration with an Issuer is required for JWT authorizers.",
                ));
            }
        }
        _ => {
            if doc.str("AuthorizerUri").is_none() {
                return Err(bad_request(
                    "AuthorizerUri is required for REQUEST authorizers.",
                ));
            }
            let version = doc.str("AuthorizerPayloadFormatVersion");
            if http && !matches!(version, Some("1.0" | "2.0")) {
                return Err(bad_request(
                    "AuthorizerPayloadFormatVersion is required for REQUEST authorizers of HTTP APIs; supported values are 1.0 and 2.0.",
                ));
            }
            if doc.bool("EnableSimpleResponses") == Some(true) && version != Some("2.0") {
                return Err(bad_request(
                    "EnableSimpleResponses is supported only with AuthorizerPayloadFormatVersion 2.0.",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_name_their_kind_and_whether_they_list() {
        let (verb, kind, parent, listing) = parse_operation("GetRouteResponses").unwrap();
        assert_eq!(
            (verb, kind, parent, listing),
            ("Get", Kind::RouteResponse, Some(Kind::Route), true)
        );
        let (verb, kind, _, listing) = parse_operation("UpdateIntegration").unwrap();
        assert_eq!((verb, kind, listing), ("Update", Kind::Integration, false));
        assert!(parse_operation("CreateApi").is_none());
        assert!(parse_operation("DeleteRoutes").is_none());
    }

    #[test]
    fn route_keys_follow_aws_format() {
        for ok in ["$default", "GET /items/{id}", "ANY /{proxy+}", "POST /"] {
            assert!(check_route_key(ok).is_ok(), "{ok}");
        }
        for bad in ["GET", "FETCH /x", "GET items", "GET /{proxy+}/x"] {
            assert!(check_route_key(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn http_apis_take_proxy_integrations_only() {
        let lambda = Value::map()
            .with("IntegrationType", "AWS_PROXY")
            .with("IntegrationUri", "arn:aws:lambda:us-east-1:1:function:f")
            .with("PayloadFormatVersion", "2.0");
        assert!(check_integration(true, &lambda).is_ok());
        let mock = Value::map().with("IntegrationType", "MOCK");
        assert!(check_integration(true, &mock).is_err());
        assert!(check_integration(false, &mock).is_ok());
        let http2 = Value::map()
            .with("IntegrationType", "HTTP_PROXY")
            .with("IntegrationUri", "https://example.com")
            .with("PayloadFormatVersion", "2.0");
        assert!(check_integration(true, &http2).is_err());
    }
}
