//! SAM's `Auth` on APIs and on their functions' events, written into the API's document as
//! SAM writes it: each of `Auth.Authorizers` a security scheme carrying
//! `x-amazon-apigateway-authorizer` (REST APIs: Lambda `TOKEN` or `REQUEST` authorizers and
//! Cognito user pools; HTTP APIs: JWT and Lambda authorizers), `AWS_IAM` the SigV4 scheme,
//! and every method's `security` from its event's `Auth` (`Authorizer`, `NONE` for none,
//! `AuthorizationScopes`, `ApiKeyRequired`) or else the API's `DefaultAuthorizer` and
//! `ApiKeyRequired` (with the `api_key` scheme). Each Lambda authorizer gets the permission
//! `<Api><Name>AuthorizerPermission` that lets API Gateway invoke its function. A REST API's
//! `Auth.UsagePlan` becomes a usage plan on its stage with an API key and the key's
//! membership: the API's own (`PER_API`: `<Api>UsagePlan`, `<Api>ApiKey`,
//! `<Api>UsagePlanKey`), or one the template's APIs share (`SHARED`: `ServerlessUsagePlan`,
//! `ServerlessApiKey`, `ServerlessUsagePlanKey`, merged by [`merge_shared`]). A REST API's
//! `Auth.ResourcePolicy` becomes its document's `x-amazon-apigateway-policy`, and
//! `InvokeRole` the credentials of an `AWS_IAM` method's Lambda integration.

use serde_json::{json, Map, Value as Json};

use super::apis::{Kind, Route};
use super::Expansion;

const AUTHORIZER: &str = "x-amazon-apigateway-authorizer";
const METHODS: [&str; 8] = [
    "get",
    "put",
    "post",
    "delete",
    "patch",
    "head",
    "options",
    "x-amazon-apigateway-any-method",
];

/// The document with the API's and its routes' `Auth` written in.
pub(super) fn secure(
    doc: &mut Json,
    kind: Kind,
    props: &Json,
    routes: &[&Route],
) -> Result<(), String> {
    let auth = &props["Auth"];
    let authorizers = auth["Authorizers"].as_object().cloned().unwrap_or_default();
    let mut schemes = Map::new();
    for (name, authorizer) in &authorizers {
        schemes.insert(name.clone(), scheme(kind, name, authorizer)?);
    }
    let default = auth["DefaultAuthorizer"].as_str();
    if let Some(d) = default.filter(|d| *d != "AWS_IAM" && !authorizers.contains_key(*d)) {
        return Err(format!(
            "Unable to set DefaultAuthorizer because '{d}' was not defined in 'Authorizers'."
        ));
    }
    for r in routes {
        check_authorizer(r, &auth["Authorizers"])?;
    }
    let default_key = auth["ApiKeyRequired"].as_bool().unwrap_or(false);
    let preflight_authorized = auth["AddDefaultAuthorizerToCorsPreflight"] != json!(false);
    let preflight_key = auth["AddApiKeyRequiredToCorsPreflight"] != json!(false);
    let paths = doc["paths"].as_object_mut().into_iter().flatten();
    for (path, item) in paths {
        for (method, operation) in item.as_object_mut().into_iter().flatten() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let route = routes
                .iter()
                .find(|r| r.path == *path && r.method == *method);
            let event_auth = route.map_or(&Json::Null, |r| &r.event["Auth"]);
            let preflight = method == "options" && route.is_none();
            let authorizer = event_auth["Authorizer"]
                .as_str()
                .or(default.filter(|_| !preflight || preflight_authorized));
            let mut security: Vec<Json> = operation["security"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if let Some(name) = authorizer.filter(|n| *n != "NONE") {
                let scopes = event_auth
                    .get("AuthorizationScopes")
                    .or_else(|| {
                        authorizers
                            .get(name)
                            .and_then(|a| a.get("AuthorizationScopes"))
                    })
                    .cloned()
                    .unwrap_or_else(|| json!([]));
                security.push(json!({ name: scopes }));
                if name == "AWS_IAM" {
                    schemes.insert(name.into(), sigv4());
                }
            }
            let key = match event_auth["ApiKeyRequired"].as_bool() {
                Some(required) => required,
                None => default_key && (!preflight || preflight_key),
            };
            if key && kind == Kind::Rest {
                security.push(json!({"api_key": []}));
                schemes.insert(
                    "api_key".into(),
                    json!({"type": "apiKey", "name": "x-api-key", "in": "header"}),
                );
            }
            if !security.is_empty() {
                operation["security"] = Json::Array(security);
            }
        }
    }
    if !schemes.is_empty() {
        let section = match doc.get("swagger") {
            Some(_) => &mut doc["securityDefinitions"],
            None => &mut doc["components"]["securitySchemes"],
        };
        if !section.is_object() {
            *section = json!({});
        }
        for (name, scheme) in schemes {
            section[name] = scheme;
        }
    }
    Ok(())
}

/// The credentials SAM gives a function's integration on an `AWS_IAM` method (the event's
/// `Authorizer`, or the API's `DefaultAuthorizer` for an event without `Auth`): the event's
/// `InvokeRole`, else the API's; `CALLER_CREDENTIALS` (the default) is the caller's own
/// (`arn:aws:iam::*:user/*`), and `NONE` (or an empty `InvokeRole`) none.
pub(super) fn invoke_role(event: &Json, api: &Json) -> Option<Json> {
    let bare = event.as_object().is_none_or(Map::is_empty);
    let iam = event["Authorizer"] == "AWS_IAM" || (bare && api["DefaultAuthorizer"] == "AWS_IAM");
    if !iam {
        return None;
    }
    let role = |auth: &Json| match auth.get("InvokeRole") {
        Some(Json::Null) => Some(json!("NONE")),
        other => other.cloned(),
    };
    match role(event).or_else(|| role(api)) {
        Some(r) if r == "NONE" => None,
        Some(r) if r != "CALLER_CREDENTIALS" => Some(r),
        _ => Some(json!("arn:aws:iam::*:user/*")),
    }
}

/// `Auth.ResourcePolicy` written into a REST API's document as SAM writes it
/// (`x-amazon-apigateway-policy`, after any statements the document has): each event's on
/// its own path, then the API's on every path, then each's `CustomStatements` as they are.
pub(super) fn resource_policy(doc: &mut Json, props: &Json, routes: &[&Route]) {
    let mut statements = match doc.get(POLICY).map(|p| &p["Statement"]) {
        Some(Json::Array(list)) => list.clone(),
        Some(one @ Json::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let before = statements.len();
    let add = |statements: &mut Vec<Json>, policy: &Json, path: &str, stage: &Json| {
        for statement in path_statements(doc, policy, path, stage) {
            if !statements.contains(&statement) {
                statements.push(statement);
            }
        }
    };
    for r in routes {
        let Some(policy) = r.event["Auth"].get("ResourcePolicy") else {
            continue;
        };
        add(&mut statements, policy, &r.path, &json!(r.stage));
        custom_statements(&mut statements, policy);
    }
    if let Some(policy) = props["Auth"].get("ResourcePolicy") {
        let paths: Vec<String> = doc["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(p, _)| p.clone())
            .collect();
        for path in paths {
            add(&mut statements, policy, &path, &props["StageName"]);
        }
        custom_statements(&mut statements, policy);
    }
    if statements.len() > before || doc.get(POLICY).is_some() {
        doc[POLICY] = json!({"Version": "2012-10-17", "Statement": statements});
    }
}

const POLICY: &str = "x-amazon-apigateway-policy";

/// A resource policy's statements on one path's methods in `stage`: accounts allowed and
/// denied, IP ranges and VPCs (endpoints) allowed or denied (an Allow for anyone beside a
/// Deny outside or inside them).
fn path_statements(doc: &Json, policy: &Json, path: &str, stage: &Json) -> Vec<Json> {
    let resources: Vec<Json> = doc["paths"][path]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(m, _)| METHODS.contains(&m.as_str()))
        .map(|(m, _)| {
            let method = match m.as_str() {
                "x-amazon-apigateway-any-method" => "*".to_string(),
                other => other.to_ascii_uppercase(),
            };
            let arn = format!(
                "execute-api:/${{__Stage__}}/{method}{}",
                super::apis::wildcard_path(path)
            );
            json!({"Fn::Sub": [arn, {"__Stage__": stage}]})
        })
        .collect();
    let statement = |effect: &str, principal: Json| json!({"Effect": effect, "Action": "execute-api:Invoke", "Resource": resources, "Principal": principal});
    let list = |v: &Json| match v {
        Json::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    let mut out = Vec::new();
    for (member, effect) in [
        ("AwsAccountWhitelist", "Allow"),
        ("AwsAccountBlacklist", "Deny"),
    ] {
        if let Some(accounts) = policy.get(member).filter(|a| !a.is_null()) {
            out.push(statement(effect, json!({"AWS": list(accounts)})));
        }
    }
    let mut guarded = |condition: Json| {
        out.push(statement("Allow", json!("*")));
        let mut deny = statement("Deny", json!("*"));
        deny["Condition"] = condition;
        out.push(deny);
    };
    for (member, operator) in [
        ("IpRangeWhitelist", "NotIpAddress"),
        ("IpRangeBlacklist", "IpAddress"),
    ] {
        if let Some(ranges) = policy.get(member).filter(|r| !r.is_null()) {
            guarded(json!({operator: {"aws:SourceIp": list(ranges)}}));
        }
    }
    for (suffix, operator) in [
        ("Blacklist", "StringEquals"),
        ("Whitelist", "StringNotEquals"),
    ] {
        let condition = vpc_condition(policy, suffix);
        if !condition.is_empty() {
            guarded(json!({operator: condition}));
        }
    }
    out
}

/// The `aws:SourceVpc` and `aws:SourceVpce` a policy's `SourceVpc<suffix>` (split by
/// prefix) and `IntrinsicVpc<suffix>`/`IntrinsicVpce<suffix>` name.
fn vpc_condition(policy: &Json, suffix: &str) -> Map<String, Json> {
    let mut condition = Map::new();
    let mut extend = |key: &str, items: Vec<Json>| {
        if items.is_empty() {
            return;
        }
        let entry = condition.entry(key).or_insert_with(|| json!([]));
        if let Json::Array(list) = entry {
            list.extend(items);
        }
    };
    let endpoints: Vec<Json> = policy[format!("SourceVpc{suffix}")]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let starting = |prefix: &str| -> Vec<Json> {
        endpoints
            .iter()
            .filter(|e| e.as_str().is_some_and(|s| s.starts_with(prefix)))
            .cloned()
            .collect()
    };
    extend("aws:SourceVpc", starting("vpc-"));
    extend("aws:SourceVpce", starting("vpce-"));
    for (member, key) in [
        ("IntrinsicVpc", "aws:SourceVpc"),
        ("IntrinsicVpce", "aws:SourceVpce"),
    ] {
        let items = policy[format!("{member}{suffix}")]
            .as_array()
            .cloned()
            .unwrap_or_default();
        extend(key, items);
    }
    condition
}

/// A resource policy's `CustomStatements` (one or a list) added where not already there.
fn custom_statements(statements: &mut Vec<Json>, policy: &Json) {
    let custom = match policy.get("CustomStatements") {
        Some(Json::Array(list)) => list.clone(),
        Some(Json::Null) | None => return,
        Some(one) => vec![one.clone()],
    };
    for s in custom {
        if !statements.contains(&s) {
            statements.push(s);
        }
    }
}

/// The error SAM gives for an event naming an authorizer its API does not define.
fn check_authorizer(r: &Route, authorizers: &Json) -> Result<(), String> {
    let Some(name) = r.event["Auth"]["Authorizer"].as_str() else {
        return Ok(());
    };
    if name == "NONE" || name == "AWS_IAM" || authorizers.get(name).is_some() {
        return Ok(());
    }
    let why = match authorizers.as_object() {
        Some(_) => "because it wasn't defined in the API's Authorizers.",
        None => "because the related API does not define any Authorizers.",
    };
    Err(format!(
        "Event with id [{}] is invalid. Unable to set Authorizer [{name}] on API method [{}] for path [{}] {why}",
        r.name, r.method, r.path
    ))
}

/// The SigV4 scheme `AWS_IAM` stands for.
fn sigv4() -> Json {
    json!({
        "type": "apiKey",
        "name": "Authorization",
        "in": "header",
        "x-amazon-apigateway-authtype": "awsSigv4",
    })
}

/// An `Authorizers` entry as its security scheme.
fn scheme(kind: Kind, name: &str, a: &Json) -> Result<Json, String> {
    let identity = &a["Identity"];
    match kind {
        Kind::Rest => rest_scheme(name, a, identity),
        Kind::Http => http_scheme(name, a, identity),
    }
}

fn lambda_uri(function: &Json) -> Json {
    json!({"Fn::Sub": [
        "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${__FunctionArn__}/invocations",
        {"__FunctionArn__": function},
    ]})
}

fn rest_scheme(name: &str, a: &Json, identity: &Json) -> Result<Json, String> {
    let header = identity["Header"]
        .as_str()
        .unwrap_or("Authorization")
        .to_string();
    let mut scheme = json!({"type": "apiKey", "in": "header"});
    let mut extension = Map::new();
    if let Some(pool) = a.get("UserPoolArn") {
        let pools = match pool {
            Json::Array(_) => pool.clone(),
            one => json!([one]),
        };
        scheme["name"] = json!(header);
        scheme["x-amazon-apigateway-authtype"] = json!("cognito_user_pools");
        extension.insert("type".into(), json!("cognito_user_pools"));
        extension.insert("providerARNs".into(), pools);
    } else {
        let function = a.get("FunctionArn").ok_or_else(|| {
            format!("Authorizer {name} must have either 'UserPoolArn' or 'FunctionArn'.")
        })?;
        let request = a["FunctionPayloadType"].as_str() == Some("REQUEST");
        scheme["name"] = json!(if request { "Unused" } else { header.as_str() });
        scheme["x-amazon-apigateway-authtype"] = json!("custom");
        extension.insert(
            "type".into(),
            json!(if request { "request" } else { "token" }),
        );
        extension.insert("authorizerUri".into(), lambda_uri(function));
        if let Some(ttl) = identity.get("ReauthorizeEvery") {
            extension.insert("authorizerResultTtlInSeconds".into(), ttl.clone());
        }
        if let Some(role) = a.get("FunctionInvokeRole").filter(|r| *r != "NONE") {
            extension.insert("authorizerCredentials".into(), role.clone());
        }
        if request {
            extension.insert("identitySource".into(), json!(request_sources(identity)));
        }
    }
    if a["FunctionPayloadType"].as_str() != Some("REQUEST") {
        if let Some(expression) = identity.get("ValidationExpression") {
            extension.insert("identityValidationExpression".into(), expression.clone());
        }
    }
    scheme[AUTHORIZER] = Json::Object(extension);
    Ok(scheme)
}

/// A REST `REQUEST` authorizer's identity sources, as API Gateway lists them.
fn request_sources(identity: &Json) -> String {
    let prefixes = [
        ("Headers", "method.request.header."),
        ("QueryStrings", "method.request.querystring."),
        ("StageVariables", "stageVariables."),
        ("Context", "context."),
    ];
    let mut sources = Vec::new();
    for (member, prefix) in prefixes {
        for item in identity[member].as_array().into_iter().flatten() {
            if let Some(text) = item.as_str() {
                sources.push(format!("{prefix}{text}"));
            }
        }
    }
    sources.join(", ")
}

fn http_scheme(name: &str, a: &Json, identity: &Json) -> Result<Json, String> {
    if let Some(jwt) = a.get("JwtConfiguration") {
        let lowered: Map<String, Json> = jwt
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
            .collect();
        let source = a
            .get("IdentitySource")
            .cloned()
            .unwrap_or_else(|| json!("$request.header.Authorization"));
        return Ok(json!({
            "type": "oauth2",
            AUTHORIZER: {"type": "jwt", "jwtConfiguration": lowered, "identitySource": source},
        }));
    }
    let function = a.get("FunctionArn").ok_or_else(|| {
        format!("{name} Authorizer must define 'FunctionArn' or 'JwtConfiguration'.")
    })?;
    let mut extension = json!({
        "type": "request",
        "authorizerUri": lambda_uri(function),
        "authorizerPayloadFormatVersion": a.get("AuthorizerPayloadFormatVersion").cloned().unwrap_or_else(|| json!("2.0")),
    });
    if let Some(simple) = a.get("EnableSimpleResponses") {
        extension["enableSimpleResponses"] = simple.clone();
    }
    let mut sources = Vec::new();
    for (member, prefix) in [
        ("Headers", "$request.header."),
        ("QueryStrings", "$request.querystring."),
        ("StageVariables", "$stageVariables."),
        ("Context", "$context."),
    ] {
        for item in identity[member].as_array().into_iter().flatten() {
            if let Some(text) = item.as_str() {
                sources.push(json!(format!("{prefix}{text}")));
            }
        }
    }
    if !sources.is_empty() {
        extension["identitySource"] = Json::Array(sources);
    }
    if let Some(ttl) = identity.get("ReauthorizeEvery") {
        extension["authorizerResultTtlInSeconds"] = ttl.clone();
    }
    if let Some(role) = a.get("FunctionInvokeRole") {
        extension["authorizerCredentials"] = role.clone();
    }
    Ok(json!({"type": "apiKey", "name": "Unused", "in": "header", AUTHORIZER: extension}))
}

impl Expansion<'_> {
    /// The permission each Lambda authorizer of the API's `Auth` needs.
    pub(super) fn authorizer_permissions(&mut self, props: &Json) {
        let authorizers = props["Auth"]["Authorizers"].as_object();
        for (name, a) in authorizers.into_iter().flatten() {
            let Some(function) = a.get("FunctionArn") else {
                continue;
            };
            let source = json!({"Fn::Sub": [
                "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${__ApiId__}/authorizers/*",
                {"__ApiId__": {"Ref": self.id}},
            ]});
            let props = json!({
                "Action": "lambda:InvokeFunction",
                "FunctionName": function,
                "Principal": "apigateway.amazonaws.com",
                "SourceArn": source,
            });
            let logical = format!("{}{name}AuthorizerPermission", self.id);
            self.add(&logical, "AWS::Lambda::Permission", props);
        }
    }
}

/// The logical ids of the usage plan resources every `SHARED` API contributes to.
const SHARED: [&str; 3] = [
    "ServerlessUsagePlan",
    "ServerlessApiKey",
    "ServerlessUsagePlanKey",
];

impl Expansion<'_> {
    /// The usage plan, API key and key membership a REST API's `Auth.UsagePlan` asks for,
    /// on its stage `stage` (a logical id).
    pub(super) fn usage_plan(&mut self, props: &Json, stage: &str) -> Result<(), String> {
        let Some(plan) = props["Auth"].get("UsagePlan") else {
            return Ok(());
        };
        const MEMBERS: [&str; 6] = [
            "CreateUsagePlan",
            "UsagePlanName",
            "Description",
            "Quota",
            "Tags",
            "Throttle",
        ];
        let fields = plan.as_object().ok_or("'UsagePlan' must be a dictionary")?;
        if fields.keys().any(|k| !MEMBERS.contains(&k.as_str())) {
            return Err("Invalid property for 'UsagePlan'".into());
        }
        let [plan_id, key_id, membership_id] = match plan["CreateUsagePlan"].as_str() {
            Some("NONE") => return Ok(()),
            Some("PER_API") => {
                ["UsagePlan", "ApiKey", "UsagePlanKey"].map(|s| format!("{}{s}", self.id))
            }
            Some("SHARED") => SHARED.map(str::to_string),
            Some(_) => {
                return Err(
                    "'CreateUsagePlan' accepts one of ['SHARED', 'PER_API', 'NONE'].".into(),
                )
            }
            None => return Err("'CreateUsagePlan' is a required field for UsagePlan.".into()),
        };
        let mut up = super::copied(plan, &MEMBERS[1..]);
        up.insert(
            "ApiStages".into(),
            json!([{"ApiId": {"Ref": self.id}, "Stage": {"Ref": stage}}]),
        );
        self.add(&plan_id, "AWS::ApiGateway::UsagePlan", Json::Object(up));
        self.resources[&plan_id]["DependsOn"] = json!([self.id]);
        let key = json!({"Enabled": true, "StageKeys": [{"RestApiId": {"Ref": self.id}, "StageName": {"Ref": stage}}]});
        self.add(&key_id, "AWS::ApiGateway::ApiKey", key);
        self.resources[&key_id]["DependsOn"] = json!([plan_id]);
        let membership = json!({"KeyId": {"Ref": key_id}, "KeyType": "API_KEY", "UsagePlanId": {"Ref": plan_id}});
        self.add(&membership_id, "AWS::ApiGateway::UsagePlanKey", membership);
        self.resources[&membership_id]["DependsOn"] = json!([key_id]);
        Ok(())
    }
}

/// Adds an API's expansion to the template's resources, the shared usage plan's stages,
/// key stages and dependencies joined with those of the APIs expanded before it.
pub(super) fn merge_shared(expanded: &mut Map<String, Json>, mut resources: Map<String, Json>) {
    for (id, list) in [
        (SHARED[0], "/Properties/ApiStages"),
        (SHARED[0], "/DependsOn"),
        (SHARED[1], "/Properties/StageKeys"),
    ] {
        let before = expanded.get(id).and_then(|r| r.pointer(list)).cloned();
        let mine = resources.get_mut(id).and_then(|r| r.pointer_mut(list));
        if let (Some(Json::Array(before)), Some(Json::Array(mine))) = (before, mine) {
            let added: Vec<Json> = mine.drain(..).filter(|v| !before.contains(v)).collect();
            *mine = before;
            mine.extend(added);
        }
    }
    expanded.extend(resources);
}
