//! The `AWS::Serverless-2016-10-31` transform (SAM): a template's serverless types expanded
//! into the CloudFormation types they stand for, as AWS's transform does before the stack's
//! template is checked, so that the processed template holds only types the resource
//! providers know and the stack's resources carry the logical ids SAM gives them.
//!
//! Expanded: `AWS::Serverless::Function` (its role with `Policies` as managed policy names
//! or ARNs, statements and SAM's common policy templates; `InlineCode`, `CodeUri`,
//! `ImageUri`; its `Events` from SQS, Kinesis, DynamoDB, SNS, S3 (notifications added to the
//! template's bucket once every resource is expanded), Schedule,
//! EventBridgeRule/CloudWatchEvent, Api and HttpApi; `FunctionUrlConfig`; `AutoPublishAlias`
//! with its `DeploymentPreference` in [`deployment`]), `AWS::Serverless::SimpleTable`,
//! `AWS::Serverless::LayerVersion`, `AWS::Serverless::StateMachine` (with its rule and `Api`
//! events), and `AWS::Serverless::Api` and `HttpApi` ([`apis`], their `Auth` in [`auth`]),
//! each with its section of `Globals` merged in. APIs expand last, once every function has
//! said which routes it adds to them. Anything else SAM defines fails the transform with
//! SAM's message naming the resource.

use std::collections::HashMap;

use serde_json::{json, Map, Value as Json};
use sha1::{Digest, Sha1};

use apis::Kind;

mod apis;
mod auth;
mod deployment;

/// The transform's name.
pub(crate) const SAM: &str = "AWS::Serverless-2016-10-31";

/// The attributes a SAM resource passes to the resource it becomes.
const ATTRIBUTES: [&str; 5] = [
    "Condition",
    "DependsOn",
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "Metadata",
];

/// The template with its SAM resources expanded and its `Globals` section gone, or the
/// transform's error.
pub(crate) fn expand(mut doc: Json) -> Result<Json, String> {
    let Some(template) = doc.as_object_mut() else {
        return Ok(doc);
    };
    let globals = template.remove("Globals").unwrap_or_else(|| json!({}));
    let resources = match template.remove("Resources") {
        Some(Json::Object(resources)) => resources,
        other => {
            template.insert("Resources".into(), other.unwrap_or_else(|| json!({})));
            return Ok(doc);
        }
    };
    let apis = apis::declared(&resources, &globals);
    let mut expanded = Map::new();
    let mut errors = Vec::new();
    let mut routes = Vec::new();
    let mut notifications = Vec::new();
    let mut deferred = Vec::new();
    for (id, resource) in resources {
        if let Some((kind, _)) = apis.get(&id) {
            deferred.push((id, resource, *kind));
            continue;
        }
        let mut out = Expansion::new(&id, &resource, &apis);
        match out.resource(resource, &globals) {
            Ok(()) => {
                expanded.extend(out.resources);
                routes.append(&mut out.routes);
                notifications.append(&mut out.notifications);
            }
            Err(e) => errors.push(format!("Resource with id [{id}] is invalid. {e}")),
        }
    }
    for n in notifications {
        if let Err(e) = n.add_to(&mut expanded) {
            errors.push(format!("Resource with id [{}] is invalid. {e}", n.function));
        }
    }
    for kind in [Kind::Rest, Kind::Http] {
        let id = kind.implicit();
        if routes.iter().any(|r| r.api == id) && !apis.contains_key(id) {
            let props = match kind {
                Kind::Rest => json!({"StageName": "Prod"}),
                Kind::Http => json!({}),
            };
            let resource = json!({"Type": kind.sam_type(), "Properties": props});
            deferred.push((id.to_string(), resource, kind));
        }
    }
    for (id, resource, kind) in deferred {
        let mut out = Expansion::new(&id, &resource, &apis);
        let props = properties(&resource, &globals, kind.short());
        match out.api(&resource, kind, &props, &routes) {
            Ok(()) => auth::merge_shared(&mut expanded, out.resources),
            Err(e) => errors.push(format!("Resource with id [{id}] is invalid. {e}")),
        }
    }
    if !errors.is_empty() {
        return Err(format!(
            "Transform {SAM} failed with: Invalid Serverless Application Specification document. Number of errors found: {}. {}",
            errors.len(),
            errors.join(" ")
        ));
    }
    template.insert("Resources".into(), Json::Object(expanded));
    Ok(doc)
}

/// A SAM resource's properties with its section of `Globals` merged in.
fn properties(resource: &Json, globals: &Json, short: &str) -> Json {
    merged(
        globals.get(short).cloned().unwrap_or_else(|| json!({})),
        resource
            .get("Properties")
            .cloned()
            .unwrap_or_else(|| json!({})),
    )
}

/// The CloudFormation resources one SAM resource becomes.
struct Expansion<'a> {
    id: String,
    /// The SAM resource's `Condition`, carried by every resource it becomes.
    condition: Option<Json>,
    resources: Map<String, Json>,
    /// The template's SAM APIs: their kinds and stage names.
    apis: &'a HashMap<String, (Kind, Option<String>)>,
    /// The routes a function's API events add to APIs.
    routes: Vec<apis::Route>,
    /// The notifications a function's S3 events add to buckets.
    notifications: Vec<Notification>,
    /// The alias a function's events invoke instead of the function (`AutoPublishAlias`).
    alias: Option<String>,
}

/// What a function's S3 event adds to a bucket of the template: its Lambda notifications,
/// and a dependency on the permission that lets S3 invoke the function.
struct Notification {
    function: String,
    event: String,
    bucket: String,
    configurations: Vec<Json>,
    permission: String,
}

impl Notification {
    fn add_to(&self, resources: &mut Map<String, Json>) -> Result<(), String> {
        let Some(bucket) = resources
            .get_mut(&self.bucket)
            .filter(|r| r["Type"] == "AWS::S3::Bucket")
        else {
            return Err(format!(
                "Event with id [{}] is invalid. S3 events must reference an S3 bucket in the same template.",
                self.event
            ));
        };
        if !bucket["Properties"].is_object() {
            bucket["Properties"] = json!({});
        }
        let config = &mut bucket["Properties"]["NotificationConfiguration"];
        if !config.is_object() {
            *config = json!({});
        }
        let lambdas = &mut config["LambdaConfigurations"];
        match lambdas {
            Json::Array(list) => list.extend(self.configurations.iter().cloned()),
            _ => *lambdas = Json::Array(self.configurations.clone()),
        }
        let mut depends: Vec<Json> = match bucket.get("DependsOn") {
            Some(Json::Array(list)) => list.clone(),
            Some(one) => vec![one.clone()],
            None => Vec::new(),
        };
        let permission = json!(self.permission);
        if !depends.contains(&permission) {
            depends.push(permission);
        }
        bucket["DependsOn"] = Json::Array(depends);
        Ok(())
    }
}

impl<'a> Expansion<'a> {
    fn new(id: &str, resource: &Json, apis: &'a HashMap<String, (Kind, Option<String>)>) -> Self {
        Self {
            id: id.to_string(),
            condition: resource.get("Condition").cloned(),
            resources: Map::new(),
            apis,
            routes: Vec::new(),
            notifications: Vec::new(),
            alias: None,
        }
    }

    /// Adds a generated resource.
    fn add(&mut self, logical: &str, kind: &str, props: Json) {
        let mut resource = json!({"Type": kind, "Properties": props});
        if let Some(c) = &self.condition {
            resource["Condition"] = c.clone();
        }
        self.resources.insert(logical.to_string(), resource);
    }

    /// Adds the resource the SAM resource itself becomes, under its own id, with its
    /// attributes.
    fn add_main(&mut self, original: &Json, kind: &str, props: Json) {
        let mut resource = json!({"Type": kind, "Properties": props});
        for a in ATTRIBUTES {
            if let Some(v) = original.get(a) {
                resource[a] = v.clone();
            }
        }
        self.resources.insert(self.id.clone(), resource);
    }

    fn resource(&mut self, resource: Json, globals: &Json) -> Result<(), String> {
        let kind = resource["Type"].as_str().unwrap_or_default().to_string();
        let Some(short) = kind.strip_prefix("AWS::Serverless::") else {
            self.resources.insert(self.id.clone(), resource);
            return Ok(());
        };
        let props = properties(&resource, globals, short);
        match short {
            "Function" => self.function(&resource, &props),
            "SimpleTable" => {
                self.add_main(&resource, "AWS::DynamoDB::Table", simple_table(&props));
                Ok(())
            }
            "LayerVersion" => self.layer(&resource, &props),
            "StateMachine" => self.state_machine(&resource, &props),
            other => Err(format!(
                "Roto's SAM transform does not support AWS::Serverless::{other} yet."
            )),
        }
    }

    fn function(&mut self, original: &Json, props: &Json) -> Result<(), String> {
        let mut fp = copied(props, FUNCTION_PROPERTIES);
        fp.insert("Code".into(), function_code(props)?);
        if let Some(mode) = props.get("Tracing") {
            fp.insert("TracingConfig".into(), json!({"Mode": mode}));
        }
        if let Some(target) = props["DeadLetterQueue"].get("TargetArn") {
            fp.insert("DeadLetterConfig".into(), json!({"TargetArn": target}));
        }
        fp.insert("Tags".into(), tags("lambda:createdBy", props.get("Tags")));
        match (
            props.get("AutoPublishAlias"),
            props.get("DeploymentPreference"),
        ) {
            (Some(alias), _) => self.publish(alias, &fp, props)?,
            (None, Some(preference)) if deployment::enabled(preference) => {
                return Err(
                    "'DeploymentPreference' requires AutoPublishAlias property to be specified."
                        .into(),
                )
            }
            _ => {}
        }
        let mut managed = vec![aws_managed("service-role/AWSLambdaBasicExecutionRole")];
        if let Some(events) = props.get("Events").and_then(Json::as_object) {
            for (name, event) in events {
                self.function_event(name, event, &mut managed)?;
            }
        }
        if let Some(url) = props.get("FunctionUrlConfig") {
            self.function_url(url);
        }
        let role = match props.get("Role") {
            Some(role) => role.clone(),
            None => self.role("lambda.amazonaws.com", "lambda:createdBy", managed, props)?,
        };
        fp.insert("Role".into(), role);
        self.add_main(original, "AWS::Lambda::Function", Json::Object(fp));
        Ok(())
    }

    /// One of a function's `Events`: the resources that deliver it to the function.
    fn function_event(
        &mut self,
        name: &str,
        event: &Json,
        managed: &mut Vec<Json>,
    ) -> Result<(), String> {
        let logical = format!("{}{name}", self.id);
        let p = &event["Properties"];
        let function = self.function_ref();
        match event["Type"].as_str().unwrap_or_default() {
            kind @ ("SQS" | "Kinesis" | "DynamoDB") => {
                let (source, policy) = match kind {
                    "SQS" => ("Queue", "AWSLambdaSQSQueueExecutionRole"),
                    "Kinesis" => ("Stream", "AWSLambdaKinesisExecutionRole"),
                    _ => ("Stream", "AWSLambdaDynamoDBExecutionRole"),
                };
                let mut mapping = copied(p, MAPPING_PROPERTIES);
                mapping.insert("EventSourceArn".into(), p[source].clone());
                mapping.insert("FunctionName".into(), function);
                managed.push(aws_managed(&format!("service-role/{policy}")));
                self.add(
                    &logical,
                    "AWS::Lambda::EventSourceMapping",
                    Json::Object(mapping),
                );
            }
            "SNS" => {
                let mut sub = copied(p, &["FilterPolicy", "FilterPolicyScope", "Region"]);
                sub.insert("Endpoint".into(), self.arn());
                sub.insert("Protocol".into(), json!("lambda"));
                sub.insert("TopicArn".into(), p["Topic"].clone());
                self.add(&logical, "AWS::SNS::Subscription", Json::Object(sub));
                self.permission(&logical, "sns.amazonaws.com", "SourceArn", p["Topic"].clone());
            }
            "S3" => self.s3_event(&logical, name, p)?,
            "Schedule" | "EventBridgeRule" | "CloudWatchEvent" => {
                let mut target = Map::new();
                target.insert("Arn".into(), self.arn());
                target.insert("Id".into(), json!(format!("{logical}LambdaTarget")));
                self.rule(&logical, p, target);
                let source = json!({"Fn::GetAtt": [logical, "Arn"]});
                self.permission(&logical, "events.amazonaws.com", "SourceArn", source);
            }
            "Api" => self.api_event(Kind::Rest, &logical, name, p)?,
            "HttpApi" => self.api_event(Kind::Http, &logical, name, p)?,
            other => {
                return Err(format!(
                    "Event with id [{name}] is invalid. Roto's SAM transform does not support events of type {other} yet."
                ))
            }
        }
        Ok(())
    }

    /// An S3 event: the permission that lets S3 invoke the function, and the notifications
    /// its bucket (a resource of the template) gets, one per event type.
    fn s3_event(&mut self, logical: &str, name: &str, p: &Json) -> Result<(), String> {
        let invalid = |why: &str| format!("Event with id [{name}] is invalid. {why}");
        let bucket = p["Bucket"]
            .get("Ref")
            .and_then(Json::as_str)
            .ok_or_else(|| {
                invalid("S3 events must reference an S3 bucket in the same template.")
            })?;
        let events = match &p["Events"] {
            Json::String(one) => vec![json!(one)],
            Json::Array(list) => list.clone(),
            _ => return Err(invalid("Missing required property 'Events'.")),
        };
        let configurations = events
            .into_iter()
            .map(|event| {
                let mut c = json!({"Event": event, "Function": self.arn()});
                if let Some(filter) = p.get("Filter") {
                    c["Filter"] = filter.clone();
                }
                c
            })
            .collect();
        let account = json!({"Ref": "AWS::AccountId"});
        self.permission(logical, "s3.amazonaws.com", "SourceAccount", account);
        self.notifications.push(Notification {
            function: self.id.clone(),
            event: name.to_string(),
            bucket: bucket.to_string(),
            configurations,
            permission: format!("{logical}Permission"),
        });
        Ok(())
    }

    /// An EventBridge rule (a schedule or a pattern) with the one target `target`, which
    /// takes the event's `Input` and `InputPath`.
    fn rule(&mut self, logical: &str, p: &Json, mut target: Map<String, Json>) {
        let mut rule = copied(p, &["Name", "Description", "EventBusName"]);
        if let Some(schedule) = p.get("Schedule") {
            rule.insert("ScheduleExpression".into(), schedule.clone());
        }
        if let Some(pattern) = p.get("Pattern") {
            rule.insert("EventPattern".into(), pattern.clone());
        }
        let state = match (p.get("State"), p.get("Enabled")) {
            (Some(state), _) => state.clone(),
            (None, Some(Json::Bool(false))) => json!("DISABLED"),
            _ => json!("ENABLED"),
        };
        rule.insert("State".into(), state);
        target.extend(copied(p, &["Input", "InputPath"]));
        rule.insert("Targets".into(), json!([target]));
        self.add(logical, "AWS::Events::Rule", Json::Object(rule));
    }

    /// The permission `<logical>Permission` that lets `principal` invoke the function (or
    /// its alias), limited by `condition` (`SourceArn` or `SourceAccount`) to `source`.
    fn permission(&mut self, logical: &str, principal: &str, condition: &str, source: Json) {
        let props = json!({
            "Action": "lambda:InvokeFunction",
            "FunctionName": self.function_ref(),
            "Principal": principal,
            condition: source,
        });
        self.add(
            &format!("{logical}Permission"),
            "AWS::Lambda::Permission",
            props,
        );
    }

    /// A version published whenever the function's code, environment or memory changes
    /// (`<id>Version<hash>`, retained when replaced), and the alias `AutoPublishAlias`
    /// names on it (`<id>Alias<name>`), which the function's events then invoke. A
    /// `DeploymentPreference` is kept in the alias's `Metadata`: traffic moves at once.
    fn publish(
        &mut self,
        alias: &Json,
        function: &Map<String, Json>,
        props: &Json,
    ) -> Result<(), String> {
        let name = alias
            .as_str()
            .filter(|n| {
                !n.is_empty()
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                    && !n.chars().all(|c| c.is_ascii_digit())
            })
            .ok_or_else(|| format!("AutoPublishAlias name ('{}') must contain only alphanumeric characters, hyphens, or underscores matching (?!^[0-9]+$)([a-zA-Z0-9-_]+) pattern.", super::template::scalar_text(alias)))?;
        let mut basis = function["Code"].as_object().cloned().unwrap_or_default();
        if let Some(environment) = function.get("Environment").and_then(Json::as_object) {
            basis.extend(environment.clone());
        }
        if let Some(memory) = function.get("MemorySize") {
            basis.insert("MemorySize".into(), memory.clone());
        }
        let hash = match props.get("AutoPublishCodeSha256").and_then(Json::as_str) {
            Some(sha) => sha.chars().take(10).collect(),
            None => logical_hash(&Json::Object(basis)),
        };
        let version = format!("{}Version{hash}", self.id);
        let mut vp = json!({"FunctionName": {"Ref": self.id}});
        if let Some(description) = props.get("VersionDescription") {
            vp["Description"] = description.clone();
        }
        self.add(&version, "AWS::Lambda::Version", vp);
        let policy = props
            .get("VersionDeletionPolicy")
            .cloned()
            .unwrap_or_else(|| json!("Retain"));
        self.resources[&version]["DeletionPolicy"] = policy;
        let logical = format!(
            "{}Alias{}",
            self.id,
            name.replace('-', "D").replace('_', "U")
        );
        let mut ap = copied(props, &["ProvisionedConcurrencyConfig"]);
        ap.insert("Name".into(), json!(name));
        ap.insert("FunctionName".into(), json!({"Ref": self.id}));
        ap.insert(
            "FunctionVersion".into(),
            json!({"Fn::GetAtt": [version, "Version"]}),
        );
        self.add(&logical, "AWS::Lambda::Alias", Json::Object(ap));
        if let Some(preference) = props.get("DeploymentPreference") {
            self.deployment_preference(&logical, preference)?;
        }
        self.alias = Some(logical);
        Ok(())
    }

    /// The function's URL (on its alias with `AutoPublishAlias`), and for a public one
    /// (`AuthType: NONE`) the permissions that let anyone call it.
    fn function_url(&mut self, url: &Json) {
        let mut props = copied(url, &["AuthType", "Cors", "InvokeMode"]);
        props.insert("TargetFunctionArn".into(), self.function_ref());
        let public = url["AuthType"].as_str() == Some("NONE");
        self.add(
            &format!("{}Url", self.id),
            "AWS::Lambda::Url",
            Json::Object(props),
        );
        if public {
            let props = json!({
                "Action": "lambda:InvokeFunctionUrl",
                "FunctionName": self.function_ref(),
                "Principal": "*",
                "FunctionUrlAuthType": "NONE",
            });
            self.add(
                &format!("{}UrlPublicPermissions", self.id),
                "AWS::Lambda::Permission",
                props,
            );
            let props = json!({
                "Action": "lambda:InvokeFunction",
                "FunctionName": self.function_ref(),
                "Principal": "*",
                "InvokedViaFunctionUrl": true,
            });
            self.add(
                &format!("{}URLInvokeAllowPublicAccess", self.id),
                "AWS::Lambda::Permission",
                props,
            );
        }
    }

    /// What events invoke: the function's `Arn` attribute, or its alias (whose `Ref` is
    /// its ARN).
    fn arn(&self) -> Json {
        match &self.alias {
            Some(alias) => json!({"Ref": alias}),
            None => json!({"Fn::GetAtt": [self.id, "Arn"]}),
        }
    }

    /// How permissions and mappings name what events invoke: the function, or its alias.
    fn function_ref(&self) -> Json {
        json!({"Ref": self.alias.as_deref().unwrap_or(&self.id)})
    }

    /// The `Fn::Sub` variable of what events invoke (`${<id>.Arn}` or `${<alias>}`).
    fn arn_variable(&self) -> String {
        match &self.alias {
            Some(alias) => alias.clone(),
            None => format!("{}.Arn", self.id),
        }
    }

    /// The role SAM generates (`<id>Role`) for `service` (tagged `<created_by>: SAM`), with
    /// `managed` policies and the resource's `Policies`; its ARN.
    fn role(
        &mut self,
        service: &str,
        created_by: &str,
        managed: Vec<Json>,
        props: &Json,
    ) -> Result<Json, String> {
        let logical = format!("{}Role", self.id);
        let (more, inline) = policies(&logical, props.get("Policies"))?;
        let mut role = json!({
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [{
                    "Effect": "Allow",
                    "Action": ["sts:AssumeRole"],
                    "Principal": {"Service": [service]},
                }],
            },
            "ManagedPolicyArns": managed.into_iter().chain(more).collect::<Vec<_>>(),
            "Tags": [{"Key": created_by, "Value": "SAM"}],
        });
        if !inline.is_empty() {
            role["Policies"] = Json::Array(inline);
        }
        if let Some(boundary) = props.get("PermissionsBoundary") {
            role["PermissionsBoundary"] = boundary.clone();
        }
        self.add(&logical, "AWS::IAM::Role", role);
        Ok(json!({"Fn::GetAtt": [logical, "Arn"]}))
    }

    fn layer(&mut self, original: &Json, props: &Json) -> Result<(), String> {
        let mut lp = copied(
            props,
            &[
                "Description",
                "CompatibleRuntimes",
                "CompatibleArchitectures",
                "LicenseInfo",
            ],
        );
        let name = props
            .get("LayerName")
            .cloned()
            .unwrap_or_else(|| json!(self.id));
        lp.insert("LayerName".into(), name);
        let content = props.get("ContentUri").unwrap_or(&Json::Null);
        lp.insert("Content".into(), s3_location(content, "ContentUri")?);
        let mut original = original.clone();
        let retain = props["RetentionPolicy"].as_str() != Some("Delete");
        original["DeletionPolicy"] = json!(if retain { "Retain" } else { "Delete" });
        self.add_main(&original, "AWS::Lambda::LayerVersion", Json::Object(lp));
        Ok(())
    }

    fn state_machine(&mut self, original: &Json, props: &Json) -> Result<(), String> {
        if let Some(events) = props.get("Events").and_then(Json::as_object) {
            for (name, event) in events {
                self.state_machine_event(name, event)?;
            }
        }
        let mut sp = copied(props, &["Definition", "DefinitionSubstitutions"]);
        for (sam, cfn) in [
            ("Name", "StateMachineName"),
            ("Type", "StateMachineType"),
            ("Logging", "LoggingConfiguration"),
            ("Tracing", "TracingConfiguration"),
        ] {
            if let Some(v) = props.get(sam) {
                sp.insert(cfn.into(), v.clone());
            }
        }
        if let Some(uri) = props.get("DefinitionUri") {
            let location = s3_location(uri, "DefinitionUri")?;
            sp.insert(
                "DefinitionS3Location".into(),
                json!({"Bucket": location["S3Bucket"], "Key": location["S3Key"]}),
            );
        }
        sp.insert(
            "Tags".into(),
            tags("stateMachine:createdBy", props.get("Tags")),
        );
        let role = match props.get("Role") {
            Some(role) => role.clone(),
            None => self.role(
                "states.amazonaws.com",
                "stateMachine:createdBy",
                Vec::new(),
                props,
            )?,
        };
        sp.insert("RoleArn".into(), role);
        self.add_main(
            original,
            "AWS::StepFunctions::StateMachine",
            Json::Object(sp),
        );
        Ok(())
    }
}

impl Expansion<'_> {
    /// One of a state machine's `Events`: an `Api` route starting an execution, or a rule
    /// (Schedule, EventBridgeRule or CloudWatchEvent) starting one, with the role
    /// (`<id><Event>Role`) that lets EventBridge start it unless `RoleArn` is given.
    fn state_machine_event(&mut self, name: &str, event: &Json) -> Result<(), String> {
        let logical = format!("{}{name}", self.id);
        let p = &event["Properties"];
        let kind = event["Type"].as_str().unwrap_or_default();
        if kind == "Api" {
            return self.state_machine_api_event(&logical, name, p);
        }
        if !matches!(kind, "Schedule" | "EventBridgeRule" | "CloudWatchEvent") {
            return Err(format!(
                "Event with id [{name}] is invalid. Roto's SAM transform does not support state machine events of type {kind} yet."
            ));
        }
        let machine = json!({"Ref": self.id});
        let role = match p.get("RoleArn") {
            Some(arn) => arn.clone(),
            None => {
                json!({"Fn::GetAtt": [self.start_role(&logical, "events.amazonaws.com"), "Arn"]})
            }
        };
        let id = p["Target"]
            .get("Id")
            .cloned()
            .unwrap_or_else(|| json!(format!("{logical}StepFunctionsTarget")));
        let mut target = Map::new();
        target.insert("Arn".into(), machine);
        target.insert("Id".into(), id);
        target.insert("RoleArn".into(), role);
        self.rule(&logical, p, target);
        Ok(())
    }
}

impl Expansion<'_> {
    /// The role `<logical>Role` that lets `service` start executions of the state machine;
    /// its logical id.
    fn start_role(&mut self, logical: &str, service: &str) -> String {
        let role = format!("{logical}Role");
        let props = json!({
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [{
                    "Action": ["sts:AssumeRole"],
                    "Effect": "Allow",
                    "Principal": {"Service": [service]},
                }],
            },
            "Policies": [{
                "PolicyName": format!("{role}StartExecutionPolicy"),
                "PolicyDocument": {"Statement": [{
                    "Action": "states:StartExecution",
                    "Effect": "Allow",
                    "Resource": {"Ref": self.id},
                }]},
            }],
        });
        self.add(&role, "AWS::IAM::Role", props);
        role
    }
}

/// SAM's stable logical id suffix: the first 10 hex digits of the SHA-1 of the value as
/// compact JSON with sorted keys.
fn logical_hash(value: &Json) -> String {
    hex::encode(Sha1::digest(value.to_string()))[..10].to_string()
}

/// The function properties that keep their name in `AWS::Lambda::Function`.
const FUNCTION_PROPERTIES: &[&str] = &[
    "FunctionName",
    "Handler",
    "Runtime",
    "MemorySize",
    "Timeout",
    "Description",
    "Environment",
    "Layers",
    "Architectures",
    "EphemeralStorage",
    "ReservedConcurrentExecutions",
    "KmsKeyArn",
    "VpcConfig",
    "PackageType",
    "ImageConfig",
    "LoggingConfig",
    "RuntimeManagementConfig",
    "FileSystemConfigs",
    "CodeSigningConfigArn",
];

/// The event properties that keep their name in `AWS::Lambda::EventSourceMapping`.
const MAPPING_PROPERTIES: &[&str] = &[
    "BatchSize",
    "Enabled",
    "StartingPosition",
    "StartingPositionTimestamp",
    "MaximumBatchingWindowInSeconds",
    "FilterCriteria",
    "FunctionResponseTypes",
    "ScalingConfig",
    "BisectBatchOnFunctionError",
    "MaximumRetryAttempts",
    "MaximumRecordAgeInSeconds",
    "ParallelizationFactor",
    "DestinationConfig",
    "TumblingWindowInSeconds",
];

/// `Globals` merged under a resource's properties: maps merge, lists are the global items
/// then the resource's, and anything else the resource sets wins.
fn merged(global: Json, local: Json) -> Json {
    match (global, local) {
        (Json::Object(mut g), Json::Object(l)) => {
            for (k, v) in l {
                let merged_value = match g.remove(&k) {
                    Some(gv) => merged(gv, v),
                    None => v,
                };
                g.insert(k, merged_value);
            }
            Json::Object(g)
        }
        (Json::Array(mut g), Json::Array(l)) => {
            g.extend(l);
            Json::Array(g)
        }
        (_, local) => local,
    }
}

/// The members of `props` named in `names`.
fn copied(props: &Json, names: &[&str]) -> Map<String, Json> {
    names
        .iter()
        .filter_map(|n| props.get(*n).map(|v| ((*n).to_string(), v.clone())))
        .collect()
}

/// A function's `Code`: `InlineCode` as `ZipFile`, `ImageUri`, or `CodeUri` in S3.
fn function_code(props: &Json) -> Result<Json, String> {
    if let Some(code) = props.get("InlineCode") {
        return Ok(json!({"ZipFile": code}));
    }
    if let Some(image) = props.get("ImageUri") {
        return Ok(json!({"ImageUri": image}));
    }
    s3_location(props.get("CodeUri").unwrap_or(&Json::Null), "CodeUri")
}

/// An S3 location written as `s3://bucket/key[?versionId=v]` or `{Bucket, Key, Version}`,
/// as `{S3Bucket, S3Key, S3ObjectVersion}`.
fn s3_location(uri: &Json, property: &str) -> Result<Json, String> {
    let invalid = || {
        format!("'{property}' is not a valid S3 Uri of the form 's3://bucket/key' with optional versionId query parameter.")
    };
    match uri {
        Json::String(s) => {
            let rest = s.strip_prefix("s3://").ok_or_else(invalid)?;
            let (path, version) = match rest.split_once("?versionId=") {
                Some((path, v)) => (path, Some(v)),
                None => (rest, None),
            };
            let (bucket, key) = path.split_once('/').ok_or_else(invalid)?;
            let mut location = json!({"S3Bucket": bucket, "S3Key": key});
            if let Some(v) = version {
                location["S3ObjectVersion"] = json!(v);
            }
            Ok(location)
        }
        Json::Object(o) if o.contains_key("Bucket") && o.contains_key("Key") => {
            let mut location = json!({"S3Bucket": o["Bucket"], "S3Key": o["Key"]});
            if let Some(v) = o.get("Version") {
                location["S3ObjectVersion"] = v.clone();
            }
            Ok(location)
        }
        _ => Err(invalid()),
    }
}

/// SAM's tag map as CloudFormation's tag list, led by the `createdBy` tag SAM adds.
fn tags(created_by: &str, map: Option<&Json>) -> Json {
    let mut list = vec![json!({"Key": created_by, "Value": "SAM"})];
    for (k, v) in map.and_then(Json::as_object).into_iter().flatten() {
        list.push(json!({"Key": k, "Value": v}));
    }
    Json::Array(list)
}

/// An AWS managed policy's ARN.
fn aws_managed(name: &str) -> Json {
    json!({"Fn::Sub": format!("arn:${{AWS::Partition}}:iam::aws:policy/{name}")})
}

/// A resource's `Policies` as managed policy ARNs and inline policies: a name or an ARN is a
/// managed policy, a document with `Statement` an inline policy, and a one-member object
/// naming a policy template the template's statement.
fn policies(role: &str, policies: Option<&Json>) -> Result<(Vec<Json>, Vec<Json>), String> {
    let items = match policies {
        None => Vec::new(),
        Some(Json::Array(items)) => items.clone(),
        Some(one) => vec![one.clone()],
    };
    let (mut managed, mut inline) = (Vec::new(), Vec::new());
    for (i, item) in items.into_iter().enumerate() {
        let document = match &item {
            Json::String(name) if name.starts_with("arn:") => {
                managed.push(item.clone());
                continue;
            }
            Json::String(name) => {
                managed.push(aws_managed(name));
                continue;
            }
            Json::Object(o) if o.contains_key("Statement") => item.clone(),
            Json::Object(o) if o.len() == 1 => {
                let (name, args) = o.iter().next().expect("one member");
                match policy_template(name, args) {
                    Some(document) => document,
                    None if name == "Ref" || name.starts_with("Fn::") => {
                        managed.push(item.clone());
                        continue;
                    }
                    None => {
                        return Err(format!(
                            "Roto's SAM transform does not know the policy template {name}."
                        ))
                    }
                }
            }
            _ => {
                return Err(format!(
                    "Policy at index {i} in the 'Policies' property is not valid"
                ))
            }
        };
        inline.push(json!({"PolicyName": format!("{role}Policy{i}"), "PolicyDocument": document}));
    }
    Ok((managed, inline))
}

/// SAM's common policy templates: (name, parameter, actions, resources); `${p}` in a
/// resource is the parameter's value.
const POLICY_TEMPLATES: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "DynamoDBCrudPolicy",
        "TableName",
        &[
            "dynamodb:GetItem",
            "dynamodb:DeleteItem",
            "dynamodb:PutItem",
            "dynamodb:Scan",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:BatchGetItem",
            "dynamodb:DescribeTable",
            "dynamodb:ConditionCheckItem",
        ],
        &[DYNAMODB_TABLE, DYNAMODB_INDEXES],
    ),
    (
        "DynamoDBReadPolicy",
        "TableName",
        &[
            "dynamodb:GetItem",
            "dynamodb:Scan",
            "dynamodb:Query",
            "dynamodb:BatchGetItem",
            "dynamodb:DescribeTable",
        ],
        &[DYNAMODB_TABLE, DYNAMODB_INDEXES],
    ),
    (
        "DynamoDBWritePolicy",
        "TableName",
        &[
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:BatchWriteItem",
        ],
        &[DYNAMODB_TABLE, DYNAMODB_INDEXES],
    ),
    (
        "SQSSendMessagePolicy",
        "QueueName",
        &["sqs:SendMessage*"],
        &["arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${p}"],
    ),
    (
        "SQSPollerPolicy",
        "QueueName",
        &[
            "sqs:ChangeMessageVisibility",
            "sqs:ChangeMessageVisibilityBatch",
            "sqs:DeleteMessage",
            "sqs:DeleteMessageBatch",
            "sqs:GetQueueAttributes",
            "sqs:ReceiveMessage",
        ],
        &["arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${p}"],
    ),
    (
        "SNSPublishMessagePolicy",
        "TopicName",
        &["sns:Publish"],
        &["arn:${AWS::Partition}:sns:${AWS::Region}:${AWS::AccountId}:${p}"],
    ),
    (
        "S3ReadPolicy",
        "BucketName",
        &[
            "s3:GetObject",
            "s3:ListBucket",
            "s3:GetBucketLocation",
            "s3:GetObjectVersion",
            "s3:GetLifecycleConfiguration",
        ],
        &[S3_BUCKET, S3_OBJECTS],
    ),
    (
        "S3CrudPolicy",
        "BucketName",
        &[
            "s3:GetObject",
            "s3:ListBucket",
            "s3:GetBucketLocation",
            "s3:GetObjectVersion",
            "s3:PutObject",
            "s3:PutObjectAcl",
            "s3:GetLifecycleConfiguration",
            "s3:PutLifecycleConfiguration",
            "s3:DeleteObject",
        ],
        &[S3_BUCKET, S3_OBJECTS],
    ),
    (
        "S3WritePolicy",
        "BucketName",
        &[
            "s3:PutObject",
            "s3:PutObjectAcl",
            "s3:PutLifecycleConfiguration",
        ],
        &[S3_BUCKET, S3_OBJECTS],
    ),
    (
        "LambdaInvokePolicy",
        "FunctionName",
        &["lambda:InvokeFunction"],
        &["arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${p}*"],
    ),
    (
        "StepFunctionsExecutionPolicy",
        "StateMachineName",
        &["states:StartExecution"],
        &["arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:${p}"],
    ),
    (
        "SSMParameterReadPolicy",
        "ParameterName",
        &[
            "ssm:GetParameters",
            "ssm:GetParameter",
            "ssm:GetParametersByPath",
        ],
        &["arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/${p}"],
    ),
    (
        "AWSSecretsManagerGetSecretValuePolicy",
        "SecretArn",
        &["secretsmanager:GetSecretValue"],
        &["${p}"],
    ),
    (
        "EventBridgePutEventsPolicy",
        "EventBusName",
        &["events:PutEvents"],
        &["arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/${p}"],
    ),
];

const DYNAMODB_TABLE: &str =
    "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${p}";
const DYNAMODB_INDEXES: &str =
    "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${p}/index/*";
const S3_BUCKET: &str = "arn:${AWS::Partition}:s3:::${p}";
const S3_OBJECTS: &str = "arn:${AWS::Partition}:s3:::${p}/*";

/// A policy template's document, its parameter substituted.
fn policy_template(name: &str, args: &Json) -> Option<Json> {
    let (_, parameter, actions, resources) = POLICY_TEMPLATES.iter().find(|(n, ..)| *n == name)?;
    let value = args.get(*parameter).cloned().unwrap_or(Json::Null);
    let resources: Vec<Json> = resources
        .iter()
        .map(|r| json!({"Fn::Sub": [r, {"p": value}]}))
        .collect();
    Some(json!({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": actions, "Resource": resources}],
    }))
}

/// A SimpleTable's table: its primary key (`id`, a string, unless given), on demand unless
/// it sets `ProvisionedThroughput`.
fn simple_table(props: &Json) -> Json {
    let key = &props["PrimaryKey"];
    let name = key.get("Name").cloned().unwrap_or_else(|| json!("id"));
    let kind = match key["Type"].as_str() {
        Some("Number") => "N",
        Some("Binary") => "B",
        _ => "S",
    };
    let mut table = copied(
        props,
        &[
            "TableName",
            "ProvisionedThroughput",
            "SSESpecification",
            "PointInTimeRecoverySpecification",
        ],
    );
    table.insert(
        "AttributeDefinitions".into(),
        json!([{"AttributeName": name, "AttributeType": kind}]),
    );
    table.insert(
        "KeySchema".into(),
        json!([{"AttributeName": name, "KeyType": "HASH"}]),
    );
    if !table.contains_key("ProvisionedThroughput") {
        table.insert("BillingMode".into(), json!("PAY_PER_REQUEST"));
    }
    if let Some(map) = props.get("Tags").and_then(Json::as_object) {
        let list: Vec<Json> = map
            .iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        table.insert("Tags".into(), Json::Array(list));
    }
    Json::Object(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_becomes_its_function_role_and_event_resources() {
        let doc = json!({
            "Transform": SAM,
            "Globals": {"Function": {"Runtime": "python3.12", "Environment": {"Variables": {"A": "1"}}}},
            "Resources": {
                "Fn": {"Type": "AWS::Serverless::Function", "Properties": {
                    "Handler": "index.handler", "InlineCode": "x",
                    "Environment": {"Variables": {"B": "2"}},
                    "Policies": ["AmazonS3ReadOnlyAccess", {"DynamoDBCrudPolicy": {"TableName": {"Ref": "T"}}}],
                    "Events": {"Q": {"Type": "SQS", "Properties": {"Queue": "arn:q", "BatchSize": 5}}},
                }},
                "T": {"Type": "AWS::Serverless::SimpleTable"},
                "Plain": {"Type": "AWS::SQS::Queue"},
            },
        });
        let out = expand(doc).unwrap();
        let r = out["Resources"].as_object().unwrap();
        let mut names: Vec<&str> = r.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["Fn", "FnQ", "FnRole", "Plain", "T"]);
        assert!(out.get("Globals").is_none());
        let f = &r["Fn"]["Properties"];
        assert_eq!(f["Runtime"], "python3.12");
        assert_eq!(f["Environment"]["Variables"], json!({"A": "1", "B": "2"}));
        assert_eq!(f["Code"], json!({"ZipFile": "x"}));
        assert_eq!(f["Role"], json!({"Fn::GetAtt": ["FnRole", "Arn"]}));
        let role = &r["FnRole"]["Properties"];
        assert_eq!(role["ManagedPolicyArns"].as_array().unwrap().len(), 3);
        assert_eq!(role["Policies"][0]["PolicyName"], "FnRolePolicy1");
        assert_eq!(r["FnQ"]["Properties"]["BatchSize"], 5);
        assert_eq!(r["T"]["Properties"]["BillingMode"], "PAY_PER_REQUEST");
    }

    #[test]
    fn a_published_version_is_named_by_the_hash_sam_computes() {
        let doc = json!({"Resources": {
            "Fn": {"Type": "AWS::Serverless::Function", "Properties": {
                "InlineCode": "def h(e, c): pass", "Handler": "index.h", "Runtime": "python3.12",
                "MemorySize": 256, "Environment": {"Variables": {"A": "1"}},
                "AutoPublishAlias": "live",
            }},
        }});
        let out = expand(doc).unwrap();
        let r = &out["Resources"];
        // samtranslator's LogicalIdGenerator over {"ZipFile", "Variables", "MemorySize"}.
        assert_eq!(r["FnVersion49c7fc7902"]["DeletionPolicy"], "Retain");
        assert_eq!(
            r["FnAliaslive"]["Properties"]["FunctionVersion"],
            json!({"Fn::GetAtt": ["FnVersion49c7fc7902", "Version"]})
        );
    }

    #[test]
    fn what_the_transform_cannot_expand_fails_with_sams_message() {
        let doc = json!({"Resources": {
            "F": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "./src", "Handler": "h", "Runtime": "python3.12"}},
        }});
        let e = expand(doc).unwrap_err();
        assert!(e.contains("Number of errors found: 1. Resource with id [F] is invalid. 'CodeUri' is not a valid S3 Uri"));
    }
}
