//! SAM's APIs: `AWS::Serverless::Api` (a REST API, a deployment and a stage) and
//! `AWS::Serverless::HttpApi` (an HTTP API and a stage), and the functions' `Api` and
//! `HttpApi` events, which add routes to the API they name or, naming none, to the implicit
//! `ServerlessRestApi` (stage `Prod`) or `ServerlessHttpApi` (stage `$default`) SAM creates.
//!
//! As SAM does, the routes are written into the API's OpenAPI document (Swagger 2.0 for REST
//! APIs unless `OpenApiVersion` says 3, OpenAPI 3.0 for HTTP APIs) as Lambda proxy
//! integrations, and every event gets the permission that lets API Gateway invoke its
//! function. A REST API's deployment is named after a hash of its API's properties, so a
//! changed API gets a new deployment that its stage moves to.

use std::collections::HashMap;

use serde_json::{json, Map, Value as Json};

use super::{auth, copied, logical_hash, s3_location, Expansion};

const ANY_METHOD: &str = "x-amazon-apigateway-any-method";
const INTEGRATION: &str = "x-amazon-apigateway-integration";

/// The two kinds of SAM API.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Rest,
    Http,
}

impl Kind {
    pub(super) fn of(sam_type: &str) -> Option<Kind> {
        match sam_type {
            "AWS::Serverless::Api" => Some(Kind::Rest),
            "AWS::Serverless::HttpApi" => Some(Kind::Http),
            _ => None,
        }
    }

    pub(super) fn sam_type(self) -> &'static str {
        match self {
            Kind::Rest => "AWS::Serverless::Api",
            Kind::Http => "AWS::Serverless::HttpApi",
        }
    }

    /// Its section of `Globals`.
    pub(super) fn short(self) -> &'static str {
        match self {
            Kind::Rest => "Api",
            Kind::Http => "HttpApi",
        }
    }

    /// The API SAM creates for events that name none.
    pub(super) fn implicit(self) -> &'static str {
        match self {
            Kind::Rest => "ServerlessRestApi",
            Kind::Http => "ServerlessHttpApi",
        }
    }

    /// The event property that names the API.
    fn reference(self) -> &'static str {
        match self {
            Kind::Rest => "RestApiId",
            Kind::Http => "ApiId",
        }
    }
}

/// The SAM APIs a template declares, by logical id: their kind and their stage name
/// (`Globals` considered).
pub(super) fn declared(
    resources: &Map<String, Json>,
    globals: &Json,
) -> HashMap<String, (Kind, Option<String>)> {
    resources
        .iter()
        .filter_map(|(id, r)| {
            let kind = Kind::of(r["Type"].as_str()?)?;
            let stage = r["Properties"]
                .get("StageName")
                .or_else(|| globals[kind.short()].get("StageName"))
                .and_then(Json::as_str)
                .map(str::to_string);
            Some((id.clone(), (kind, stage)))
        })
        .collect()
}

/// A route an `Api` or `HttpApi` event adds to an API.
pub(super) struct Route {
    pub(super) kind: Kind,
    /// The API's logical id.
    pub(super) api: String,
    pub(super) path: String,
    /// As OpenAPI names it: lower case, or `x-amazon-apigateway-any-method`.
    pub(super) method: String,
    /// What the route invokes.
    target: Target,
    /// The stage the event's resource policy names (its permission's suffix).
    pub(super) stage: String,
    /// The event's name and properties.
    pub(super) name: String,
    pub(super) event: Json,
}

/// What a route invokes.
pub(super) enum Target {
    /// A function through a Lambda proxy integration: the `Fn::Sub` variable of its ARN (or
    /// its alias).
    Function(String),
    /// A state machine (its logical id) through StartExecution, with the credentials of the
    /// role the event generates; `unescape` is the event's `UnescapeMappingTemplate`.
    StateMachine {
        machine: String,
        role: String,
        unescape: bool,
    },
}

/// The properties of `AWS::Serverless::Api` the transform expands.
const REST_PROPERTIES: &[&str] = &[
    "StageName",
    "DefinitionBody",
    "DefinitionUri",
    "Name",
    "Description",
    "EndpointConfiguration",
    "BinaryMediaTypes",
    "MinimumCompressionSize",
    "Variables",
    "TracingEnabled",
    "MethodSettings",
    "CacheClusterEnabled",
    "CacheClusterSize",
    "OpenApiVersion",
    "FailOnWarnings",
    "DisableExecuteApiEndpoint",
    "Tags",
    "Cors",
    "Auth",
];

/// The properties of `AWS::Serverless::HttpApi` the transform expands.
const HTTP_PROPERTIES: &[&str] = &[
    "StageName",
    "DefinitionBody",
    "DefinitionUri",
    "Name",
    "Description",
    "CorsConfiguration",
    "StageVariables",
    "DefaultRouteSettings",
    "RouteSettings",
    "AccessLogSettings",
    "FailOnWarnings",
    "DisableExecuteApiEndpoint",
    "Tags",
    "Auth",
];

impl Expansion<'_> {
    /// An `Api` or `HttpApi` event named `name` (`logical` its resources' prefix): its
    /// route, kept for the API, and its permission.
    pub(super) fn api_event(
        &mut self,
        kind: Kind,
        logical: &str,
        name: &str,
        p: &Json,
    ) -> Result<(), String> {
        let route = self.route(kind, name, p, Target::Function(self.arn_variable()))?;
        let suffix = match kind {
            Kind::Rest => route.stage.clone(),
            Kind::Http => String::new(),
        };
        self.add(
            &format!("{logical}Permission{suffix}"),
            "AWS::Lambda::Permission",
            json!({
                "Action": "lambda:InvokeFunction",
                "FunctionName": self.function_ref(),
                "Principal": "apigateway.amazonaws.com",
                "SourceArn": source_arn(&route),
            }),
        );
        self.routes.push(route);
        Ok(())
    }

    /// A state machine's `Api` event named `name`: its route on a REST API, whose
    /// integration starts an execution with the role `<logical>Role`.
    pub(super) fn state_machine_api_event(
        &mut self,
        logical: &str,
        name: &str,
        p: &Json,
    ) -> Result<(), String> {
        let role = self.start_role(logical, "apigateway.amazonaws.com");
        let target = Target::StateMachine {
            machine: self.id.clone(),
            role,
            unescape: p["UnescapeMappingTemplate"] == json!(true),
        };
        let route = self.route(Kind::Rest, name, p, target)?;
        self.routes.push(route);
        Ok(())
    }

    /// The route an `Api` or `HttpApi` event adds to the API it names (or the implicit one).
    fn route(&self, kind: Kind, name: &str, p: &Json, target: Target) -> Result<Route, String> {
        let invalid = |why: String| format!("Event with id [{name}] is invalid. {why}");
        let api = match p.get(kind.reference()) {
            None => kind.implicit().to_string(),
            Some(reference) => match reference.get("Ref").and_then(Json::as_str) {
                Some(id) if self.apis.get(id).is_some_and(|(k, _)| *k == kind) => id.to_string(),
                _ => {
                    return Err(invalid(format!(
                        "{} must be a valid reference to an '{}' resource in same template.",
                        kind.reference(),
                        kind.sam_type()
                    )))
                }
            },
        };
        let text = |member: &str| p.get(member).and_then(Json::as_str);
        let (path, method) = match (kind, text("Path"), text("Method")) {
            (_, Some(path), Some(method)) => (path.to_string(), method.to_ascii_lowercase()),
            (Kind::Http, None, None) => ("/$default".to_string(), "any".to_string()),
            (_, None, _) => return Err(invalid("Missing required property 'Path'.".into())),
            (_, _, None) => return Err(invalid("Missing required property 'Method'.".into())),
        };
        Ok(Route {
            kind,
            stage: self.stage_suffix(&api),
            api,
            path,
            method: if method == "any" {
                ANY_METHOD.to_string()
            } else {
                method
            },
            target,
            name: name.to_string(),
            event: p.clone(),
        })
    }

    /// What SAM appends to a REST event's permission: its API's stage name (`Prod` for
    /// the implicit API), or `AllStages` when that is not a plain name.
    fn stage_suffix(&self, api: &str) -> String {
        if api == Kind::Rest.implicit() {
            return "Prod".into();
        }
        let stage = self.apis.get(api).and_then(|(_, stage)| stage.as_deref());
        stage.unwrap_or("AllStages").to_string()
    }

    /// A SAM API: its API resource with the routes of `routes` that name it written into
    /// its document, and its stage (and, for a REST API, its deployment).
    pub(super) fn api(
        &mut self,
        original: &Json,
        kind: Kind,
        props: &Json,
        routes: &[Route],
    ) -> Result<(), String> {
        let allowed = match kind {
            Kind::Rest => REST_PROPERTIES,
            Kind::Http => HTTP_PROPERTIES,
        };
        if let Some(other) = props
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .find(|k| !allowed.contains(&k.as_str()))
        {
            return Err(format!(
                "Roto's SAM transform does not support the property {other} of {} yet.",
                kind.sam_type()
            ));
        }
        let mine: Vec<&Route> = routes
            .iter()
            .filter(|r| r.api == self.id && r.kind == kind)
            .collect();
        let mut api = Map::new();
        match (props.get("DefinitionBody"), props.get("DefinitionUri")) {
            (None, Some(uri)) => {
                let location = s3_location(uri, "DefinitionUri")?;
                api.insert(
                    "BodyS3Location".into(),
                    json!({"Bucket": location["S3Bucket"], "Key": location["S3Key"], "Version": location["S3ObjectVersion"]}),
                );
            }
            (body, _) => {
                let body = body.cloned().unwrap_or_else(|| document(kind, props));
                let mut body = written(body, props, mine.iter().copied());
                auth::secure(&mut body, kind, props, &mine)?;
                if kind == Kind::Rest {
                    auth::resource_policy(&mut body, props, &mine);
                }
                api.insert("Body".into(), body);
            }
        }
        self.authorizer_permissions(props);
        match kind {
            Kind::Rest => self.rest_api(original, props, api),
            Kind::Http => self.http_api(original, props, api),
        }
    }

    fn rest_api(
        &mut self,
        original: &Json,
        props: &Json,
        mut api: Map<String, Json>,
    ) -> Result<(), String> {
        let stage = props
            .get("StageName")
            .ok_or("Missing required property 'StageName'.")?;
        api.extend(copied(
            props,
            &[
                "Name",
                "MinimumCompressionSize",
                "FailOnWarnings",
                "DisableExecuteApiEndpoint",
            ],
        ));
        if let Some(endpoint) = props.get("EndpointConfiguration") {
            let (kind, vpce) = match endpoint {
                Json::Object(o) => (o.get("Type").cloned(), o.get("VpcEndpointIds").cloned()),
                other => (Some(other.clone()), None),
            };
            let mut config = json!({"Types": [kind]});
            if let Some(ids) = vpce {
                config["VpcEndpointIds"] = ids;
            }
            api.insert("EndpointConfiguration".into(), config);
            api.insert(
                "Parameters".into(),
                json!({"endpointConfigurationTypes": kind}),
            );
        }
        let hash = logical_hash(&Json::Object(api.clone()));
        self.add_main(original, "AWS::ApiGateway::RestApi", Json::Object(api));
        let deployment = format!("{}Deployment{hash}", self.id);
        let mut dp = json!({
            "RestApiId": {"Ref": self.id},
            "Description": format!("RestApi deployment id: {hash}"),
        });
        if !openapi3(props) {
            dp["StageName"] = json!("Stage");
        }
        self.add(&deployment, "AWS::ApiGateway::Deployment", dp);
        let mut sp = copied(
            props,
            &[
                "Variables",
                "TracingEnabled",
                "MethodSettings",
                "CacheClusterEnabled",
                "CacheClusterSize",
            ],
        );
        sp.insert("RestApiId".into(), json!({"Ref": self.id}));
        sp.insert("DeploymentId".into(), json!({"Ref": deployment}));
        sp.insert("StageName".into(), stage.clone());
        if let Some(tags) = props.get("Tags").and_then(Json::as_object) {
            let list: Vec<Json> = tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            sp.insert("Tags".into(), Json::Array(list));
        }
        let logical = format!("{}{}Stage", self.id, alphanumeric(stage));
        self.add(&logical, "AWS::ApiGateway::Stage", Json::Object(sp));
        self.usage_plan(props, &logical)
    }

    fn http_api(
        &mut self,
        original: &Json,
        props: &Json,
        mut api: Map<String, Json>,
    ) -> Result<(), String> {
        api.extend(copied(
            props,
            &["Name", "FailOnWarnings", "DisableExecuteApiEndpoint"],
        ));
        self.add_main(original, "AWS::ApiGatewayV2::Api", Json::Object(api));
        let stage = props
            .get("StageName")
            .cloned()
            .unwrap_or_else(|| json!("$default"));
        let mut sp = copied(
            props,
            &[
                "StageVariables",
                "DefaultRouteSettings",
                "RouteSettings",
                "AccessLogSettings",
            ],
        );
        sp.insert("ApiId".into(), json!({"Ref": self.id}));
        sp.insert("StageName".into(), stage.clone());
        sp.insert("AutoDeploy".into(), json!(true));
        let mut tags = json!({"httpapi:createdBy": "SAM"});
        for (k, v) in props["Tags"].as_object().into_iter().flatten() {
            tags[k] = v.clone();
        }
        sp.insert("Tags".into(), tags);
        let logical = match stage.as_str() {
            Some("$default") => format!("{}ApiGatewayDefaultStage", self.id),
            _ => format!("{}{}Stage", self.id, alphanumeric(&stage)),
        };
        self.add(&logical, "AWS::ApiGatewayV2::Stage", Json::Object(sp));
        Ok(())
    }
}

/// Whether a REST API's document is OpenAPI 3 (`OpenApiVersion: 3.x`), in which case SAM
/// makes no `Stage` stage beside the API's own.
fn openapi3(props: &Json) -> bool {
    props["OpenApiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with('3'))
}

/// The document SAM starts from when the API has none.
fn document(kind: Kind, props: &Json) -> Json {
    let info = json!({"version": "1.0", "title": props.get("Name").cloned().unwrap_or_else(|| json!({"Ref": "AWS::StackName"}))});
    match kind {
        Kind::Rest if openapi3(props) => json!({"openapi": "3.0.1", "info": info, "paths": {}}),
        Kind::Rest => json!({"swagger": "2.0", "info": info, "paths": {}}),
        Kind::Http => json!({
            "openapi": "3.0.1",
            "info": info,
            "paths": {},
            "tags": [{"name": "httpapi:createdBy", "x-amazon-apigateway-tag-value": "SAM"}],
        }),
    }
}

/// The document with the routes' integrations written in (a method the document already
/// integrates is left as it is), and the API's settings SAM keeps there (`Description`,
/// binary media types, CORS).
fn written<'a>(mut doc: Json, props: &Json, routes: impl Iterator<Item = &'a Route>) -> Json {
    for r in routes {
        let operation = &mut doc["paths"][r.path.as_str()][r.method.as_str()];
        if operation.get(INTEGRATION).is_none() {
            operation[INTEGRATION] = integration(r, &props["Auth"]);
            if operation.get("responses").is_none() {
                operation["responses"] = match r.target {
                    Target::Function(_) => json!({}),
                    Target::StateMachine { .. } => json!({
                        "200": {"description": "OK"},
                        "400": {"description": "Bad Request"},
                    }),
                };
            }
        }
    }
    if let Some(description) = props.get("Description") {
        doc["info"]["description"] = description.clone();
    }
    if let Some(types) = props.get("BinaryMediaTypes") {
        doc["x-amazon-apigateway-binary-media-types"] = types.clone();
    }
    match props.get("CorsConfiguration") {
        Some(Json::Bool(true)) => {
            doc["x-amazon-apigateway-cors"] =
                json!({"allowOrigins": ["*"], "allowHeaders": ["*"], "allowMethods": ["*"]});
        }
        Some(Json::Object(cors)) => {
            let lowered: Map<String, Json> = cors
                .iter()
                .map(|(k, v)| (lower_first(k), v.clone()))
                .collect();
            doc["x-amazon-apigateway-cors"] = Json::Object(lowered);
        }
        _ => {}
    }
    if let Some(cors) = props.get("Cors") {
        preflights(&mut doc, cors);
    }
    doc
}

/// The methods `ANY` stands for in a preflight's `Access-Control-Allow-Methods`.
const ALL_METHODS: &str = "DELETE,GET,HEAD,OPTIONS,PATCH,POST,PUT";

/// A REST API's `Cors` as SAM writes it: on every path without one, an `OPTIONS` method
/// whose mock integration answers the preflight with the `Access-Control-*` headers
/// (`Cors` is the quoted origin, or `{AllowOrigin, AllowMethods, AllowHeaders, MaxAge,
/// AllowCredentials}`; the allowed methods are the path's unless given).
fn preflights(doc: &mut Json, cors: &Json) {
    let (origin, settings) = match cors {
        Json::Object(o) => (o.get("AllowOrigin").cloned(), o.clone()),
        other => (Some(other.clone()), Map::new()),
    };
    let openapi3 = doc.get("openapi").is_some();
    let Some(paths) = doc.get_mut("paths").and_then(Json::as_object_mut) else {
        return;
    };
    for operations in paths.values_mut().filter_map(Json::as_object_mut) {
        if operations.contains_key("options") {
            continue;
        }
        let methods = match settings.get("AllowMethods") {
            Some(m) => m.clone(),
            None => json!(format!("'{}'", allowed_methods(operations))),
        };
        let mut parameters = Map::new();
        let mut add = |header: &str, value: Option<Json>| {
            if let Some(v) = value {
                parameters.insert(format!("method.response.header.{header}"), v);
            }
        };
        add("Access-Control-Allow-Origin", origin.clone());
        add("Access-Control-Allow-Methods", Some(methods));
        add(
            "Access-Control-Allow-Headers",
            settings.get("AllowHeaders").cloned(),
        );
        add(
            "Access-Control-Max-Age",
            settings
                .get("MaxAge")
                .map(|a| json!(format!("'{}'", a.as_i64().unwrap_or_default()))),
        );
        if settings.get("AllowCredentials") == Some(&json!(true)) {
            add("Access-Control-Allow-Credentials", Some(json!("'true'")));
        }
        let string = if openapi3 {
            json!({"schema": {"type": "string"}})
        } else {
            json!({"type": "string"})
        };
        let headers: Map<String, Json> = parameters
            .keys()
            .map(|k| {
                (
                    k.trim_start_matches("method.response.header.").to_string(),
                    string.clone(),
                )
            })
            .collect();
        operations.insert(
            "options".into(),
            json!({
                "summary": "CORS support",
                "responses": {"200": {"description": "Default response for CORS method", "headers": headers}},
                INTEGRATION: {
                    "type": "mock",
                    "requestTemplates": {"application/json": "{\n  \"statusCode\" : 200\n}\n"},
                    "responses": {"default": {
                        "statusCode": "200",
                        "responseParameters": parameters,
                        "responseTemplates": {"application/json": "{}\n"},
                    }},
                },
            }),
        );
    }
}

/// The methods a path serves, and OPTIONS, as a preflight lists them.
fn allowed_methods(operations: &Map<String, Json>) -> String {
    if operations.contains_key(ANY_METHOD) {
        return ALL_METHODS.to_string();
    }
    let mut methods: Vec<String> = operations
        .keys()
        .filter(|m| !m.starts_with("x-") && *m != "parameters")
        .map(|m| m.to_ascii_uppercase())
        .chain(["OPTIONS".to_string()])
        .collect();
    methods.sort();
    methods.join(",")
}

/// A route's integration: a function's Lambda proxy integration (with the credentials
/// `InvokeRole` gives an `AWS_IAM` method), or a state machine's StartExecution.
fn integration(r: &Route, api_auth: &Json) -> Json {
    let function = match &r.target {
        Target::Function(function) => function,
        Target::StateMachine {
            machine,
            role,
            unescape,
        } => return start_execution(machine, role, *unescape),
    };
    let uri = format!(
        "arn:${{AWS::Partition}}:apigateway:${{AWS::Region}}:lambda:path/2015-03-31/functions/${{{function}}}/invocations"
    );
    let mut integration =
        json!({"type": "aws_proxy", "httpMethod": "POST", "uri": {"Fn::Sub": uri}});
    if r.kind == Kind::Rest {
        if let Some(credentials) = auth::invoke_role(&r.event["Auth"], api_auth) {
            integration["credentials"] = credentials;
        }
    }
    if r.kind == Kind::Http {
        integration["payloadFormatVersion"] = r
            .event
            .get("PayloadFormatVersion")
            .cloned()
            .unwrap_or_else(|| json!("2.0"));
        if let Some(timeout) = r.event.get("TimeoutInMillis") {
            integration["timeoutInMillis"] = timeout.clone();
        }
    }
    integration
}

/// A state machine route's integration, as SAM writes it: the request body as the
/// execution's input (its escaped quotes restored with `unescape`).
fn start_execution(machine: &str, role: &str, unescape: bool) -> Json {
    let restore = if unescape {
        r#".replaceAll("\\'","'")"#
    } else {
        ""
    };
    let template = format!(
        r#"{{"input": "$util.escapeJavaScript($input.json('$')){restore}", "stateMachineArn": "${{{machine}}}"}}"#
    );
    json!({
        "type": "aws",
        "httpMethod": "POST",
        "uri": {"Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:states:action/StartExecution"},
        "responses": {"200": {"statusCode": "200"}, "400": {"statusCode": "400"}},
        "credentials": {"Fn::GetAtt": [role, "Arn"]},
        "requestTemplates": {"application/json": {"Fn::Sub": template}},
    })
}

/// The ARN a route's permission lets API Gateway invoke from: any stage, the route's
/// method (`*` for any) and its path with each `{parameter}` as `*`.
fn source_arn(r: &Route) -> Json {
    let method = if r.method == ANY_METHOD {
        "*".to_string()
    } else {
        r.method.to_ascii_uppercase()
    };
    let arn = format!(
        "arn:${{AWS::Partition}}:execute-api:${{AWS::Region}}:${{AWS::AccountId}}:${{__ApiId__}}/${{__Stage__}}/{method}{}",
        wildcard_path(&r.path)
    );
    json!({"Fn::Sub": [arn, {"__ApiId__": {"Ref": r.api}, "__Stage__": "*"}]})
}

/// A path as ARNs name it: each `{parameter}` a `*`.
pub(super) fn wildcard_path(path: &str) -> String {
    path.split('/')
        .map(|s| if s.starts_with('{') { "*" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

/// A stage name as it appears in a logical id (its letters and digits).
fn alphanumeric(stage: &Json) -> String {
    stage
        .as_str()
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}
