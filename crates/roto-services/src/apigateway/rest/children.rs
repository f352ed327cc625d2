//! Everything else REST APIs keep, through one create/get/list/update/delete over a table
//! of kinds: what belongs to an API (Models, RequestValidators, Authorizers,
//! DocumentationParts and Versions, GatewayResponses) and to the account (ApiKeys,
//! UsagePlans and their keys, DomainNames and their BasePathMappings, client certificates,
//! VPC links). Each kind names its operations' noun, its id member and the member of the
//! document that holds the id; creation adds the kind's AWS defaults and checks.

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::super::throttle::default_account;
use super::super::{bad_request, conflict, new_id, not_found, patch, ApiGateway};
use super::{document, missing, now_secs, output, page, scope};

/// One kind of document.
struct Kind {
    /// The operations' noun (`Model` of `CreateModel`, `GetModels`).
    noun: &'static str,
    /// The store's kind.
    kind: &'static str,
    /// The input member naming the parent (`restApiId`), if the kind has one.
    parent: Option<&'static str>,
    /// The input member naming one (`modelName`).
    id_member: &'static str,
    /// The document member holding the id (`name`).
    id_field: &'static str,
    /// What AWS's NotFoundException calls it.
    what: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        noun: "Model",
        kind: "model",
        parent: Some("restApiId"),
        id_member: "modelName",
        id_field: "name",
        what: "Model",
    },
    Kind {
        noun: "RequestValidator",
        kind: "requestvalidator",
        parent: Some("restApiId"),
        id_member: "requestValidatorId",
        id_field: "id",
        what: "Request Validator",
    },
    Kind {
        noun: "Authorizer",
        kind: "authorizer",
        parent: Some("restApiId"),
        id_member: "authorizerId",
        id_field: "id",
        what: "Authorizer",
    },
    Kind {
        noun: "DocumentationPart",
        kind: "documentationpart",
        parent: Some("restApiId"),
        id_member: "documentationPartId",
        id_field: "id",
        what: "Documentation part",
    },
    Kind {
        noun: "DocumentationVersion",
        kind: "documentationversion",
        parent: Some("restApiId"),
        id_member: "documentationVersion",
        id_field: "version",
        what: "Documentation version",
    },
    Kind {
        noun: "ApiKey",
        kind: "apikey",
        parent: None,
        id_member: "apiKey",
        id_field: "id",
        what: "API Key",
    },
    Kind {
        noun: "UsagePlan",
        kind: "usageplan",
        parent: None,
        id_member: "usagePlanId",
        id_field: "id",
        what: "Usage Plan",
    },
    Kind {
        noun: "UsagePlanKey",
        kind: "usageplankey",
        parent: Some("usagePlanId"),
        id_member: "keyId",
        id_field: "id",
        what: "Usage Plan Key",
    },
    Kind {
        noun: "DomainName",
        kind: "domainname",
        parent: None,
        id_member: "domainName",
        id_field: "domainName",
        what: "domain name",
    },
    Kind {
        noun: "BasePathMapping",
        kind: "basepathmapping",
        parent: Some("domainName"),
        id_member: "basePath",
        id_field: "basePath",
        what: "base path mapping",
    },
    Kind {
        noun: "ClientCertificate",
        kind: "clientcertificate",
        parent: None,
        id_member: "clientCertificateId",
        id_field: "clientCertificateId",
        what: "Client Certificate",
    },
    Kind {
        noun: "VpcLink",
        kind: "vpclink",
        parent: None,
        id_member: "vpcLinkId",
        id_field: "id",
        what: "VPC link",
    },
];

/// The index of API keys by value: `{"id": keyId}` under the value, so that the data plane
/// finds a request's key without reading every key.
pub const KEY_BY_VALUE: &str = "apikey-value";

/// The index of usage plans by API key: `{"id": planId}` under the key, for each plan
/// the key is in.
pub const PLANS_OF_KEY: &str = "apikey-plan";

/// The gateway responses every API has, with their default status codes.
pub const GATEWAY_RESPONSES: &[(&str, Option<&str>)] = &[
    ("ACCESS_DENIED", Some("403")),
    ("API_CONFIGURATION_ERROR", Some("500")),
    ("AUTHORIZER_CONFIGURATION_ERROR", Some("500")),
    ("AUTHORIZER_FAILURE", Some("500")),
    ("BAD_REQUEST_PARAMETERS", Some("400")),
    ("BAD_REQUEST_BODY", Some("400")),
    ("DEFAULT_4XX", None),
    ("DEFAULT_5XX", None),
    ("EXPIRED_TOKEN", Some("403")),
    ("INTEGRATION_FAILURE", Some("504")),
    ("INTEGRATION_TIMEOUT", Some("504")),
    ("INVALID_API_KEY", Some("403")),
    ("INVALID_SIGNATURE", Some("403")),
    ("MISSING_AUTHENTICATION_TOKEN", Some("403")),
    ("QUOTA_EXCEEDED", Some("429")),
    ("REQUEST_TOO_LARGE", Some("413")),
    ("RESOURCE_NOT_FOUND", Some("404")),
    ("THROTTLED", Some("429")),
    ("UNAUTHORIZED", Some("401")),
    ("UNSUPPORTED_MEDIA_TYPE", Some("415")),
    ("WAF_FILTERED", Some("403")),
];

/// A gateway response as AWS has it before any is put.
pub fn default_gateway_response(kind: &str, status: Option<&str>) -> Json {
    let mut doc = json!({
        "responseType": kind,
        "defaultResponse": true,
        "responseParameters": {},
        "responseTemplates": {"application/json": "{\"message\":$context.error.messageString}"},
    });
    if let Some(s) = status {
        doc["statusCode"] = s.into();
    }
    doc
}

/// The operation's verb and kind (`GetModels` is a list of `Model`).
fn resolve(operation: &str) -> Option<(&'static str, &'static Kind)> {
    for verb in ["Create", "Generate", "Get", "Update", "Delete"] {
        let Some(noun) = operation.strip_prefix(verb) else {
            continue;
        };
        if let Some(kind) = KINDS.iter().find(|k| k.noun == noun) {
            return Some((if verb == "Generate" { "Create" } else { verb }, kind));
        }
        if let Some(kind) = KINDS
            .iter()
            .find(|k| noun.strip_suffix('s') == Some(k.noun))
        {
            return (verb == "Get").then_some(("List", kind));
        }
    }
    None
}

impl ApiGateway {
    pub(super) fn child_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        match operation {
            "PutGatewayResponse" | "UpdateGatewayResponse" => {
                return Some(self.put_gateway_response(ctx, input, operation))
            }
            "GetGatewayResponse" => return Some(self.get_gateway_response(ctx, input)),
            "GetGatewayResponses" => return Some(self.get_gateway_responses(ctx, input)),
            "DeleteGatewayResponse" => return Some(self.delete_gateway_response(ctx, input)),
            "GetAccount" => return Some(self.account(ctx).map(|a| output(&a))),
            "UpdateAccount" => return Some(self.update_account(ctx, input)),
            "GetModelTemplate" => return Some(self.model_template(ctx, input)),
            "GetUsage" | "UpdateUsage" => return Some(self.usage_call(ctx, operation, input)),
            _ => {}
        }
        let (verb, kind) = resolve(operation)?;
        Some(self.child(ctx, input, verb, kind))
    }

    /// Creates a document of the kind `noun` names (`ApiKey`), as its Create operation
    /// does.
    pub(super) fn create_child(
        &self,
        ctx: &Context,
        noun: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let kind = KINDS
            .iter()
            .find(|k| k.noun == noun)
            .ok_or_else(|| AwsError::not_implemented(noun))?;
        self.child(ctx, input, "Create", kind)
    }

    /// The parent's id, after checking the parent exists.
    fn parent_of(&self, ctx: &Context, input: &Value, kind: &Kind) -> AwsResult<String> {
        let Some(member) = kind.parent else {
            return Ok(String::new());
        };
        let id = input.str(member).unwrap_or_default();
        match member {
            "restApiId" => {
                self.rest_api(ctx, id)?;
            }
            "usagePlanId" => {
                self.store
                    .get(scope(ctx, "usageplan", ""), id)?
                    .ok_or_else(|| missing("Usage Plan"))?;
            }
            _ => {
                self.store
                    .get(scope(ctx, "domainname", ""), id)?
                    .ok_or_else(|| not_found("Invalid domain name identifier specified"))?;
            }
        }
        Ok(id.to_string())
    }

    fn child(&self, ctx: &Context, input: &Value, verb: &str, kind: &Kind) -> AwsResult<Value> {
        let parent = self.parent_of(ctx, input, kind)?;
        let place = scope(ctx, kind.kind, &parent);
        if verb == "List" {
            let all = self.store.list(place)?;
            let filtered = all
                .into_iter()
                .filter(|d| listed(kind, d, input))
                .map(|d| shown(kind, d, input))
                .collect();
            return page(filtered, input);
        }
        if verb == "Create" {
            let doc = self.new_child(ctx, input, kind, &parent)?;
            let id = doc[kind.id_field].as_str().unwrap_or_default().to_string();
            if self.store.get(place, &id)?.is_some() {
                return Err(conflict(format!("{} already exists", kind.what)));
            }
            self.store.put(place, &id, &doc)?;
            self.index(ctx, kind, &doc, &parent)?;
            return Ok(output(&shown(
                kind,
                doc,
                &Value::map().with("includeValue", true),
            )));
        }
        let id = match (kind.kind, input.str(kind.id_member)) {
            ("basepathmapping", Some("") | None) => "(none)",
            (_, id) => id.unwrap_or_default(),
        };
        let mut doc = self
            .store
            .get(place, id)?
            .ok_or_else(|| missing(kind.what))?;
        match verb {
            "Get" => Ok(output(&shown(kind, doc, input))),
            "Delete" => {
                self.unindex(ctx, kind, &doc, &parent)?;
                self.store.delete(place, id)?;
                if kind.kind == "usageplan" {
                    self.store.delete_children(&ctx.account, &ctx.region, id)?;
                }
                Ok(Value::map())
            }
            _ => {
                let old_value = doc["value"].as_str().unwrap_or_default().to_string();
                let shape = if kind.noun == "ClientCertificate" {
                    "ClientCertificate"
                } else {
                    kind.noun
                };
                patch::apply(&mut doc, shape, input.get("patchOperations"))?;
                if doc.get("lastUpdatedDate").is_some() {
                    doc["lastUpdatedDate"] = now_secs().into();
                }
                if kind.kind == "apikey" && doc["value"] != old_value.as_str() {
                    self.unique_key_value(ctx, &doc)?;
                    self.store
                        .delete(scope(ctx, KEY_BY_VALUE, ""), &old_value)?;
                    self.index(ctx, kind, &doc, &parent)?;
                }
                self.store.put(place, id, &doc)?;
                Ok(output(&shown(
                    kind,
                    doc,
                    &Value::map().with("includeValue", true),
                )))
            }
        }
    }

    /// A new document of `kind` from its Create input, with AWS's checks and defaults.
    fn new_child(
        &self,
        ctx: &Context,
        input: &Value,
        kind: &Kind,
        parent: &str,
    ) -> AwsResult<Json> {
        let addressing = [
            kind.parent.unwrap_or(""),
            "generateDistinctId",
            "certificateBody",
            "certificatePrivateKey",
            "certificateChain",
        ];
        let mut doc = document(input, &addressing, &[]);
        let now = now_secs();
        match kind.kind {
            "model" => {
                let name = input.str("name").unwrap_or_default();
                if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return Err(bad_request("Model name must be alphanumeric"));
                }
                doc["id"] = new_id().into();
            }
            "authorizer" => {
                let kind = input.str("type").unwrap_or_default();
                if matches!(kind, "TOKEN" | "REQUEST") && input.str("authorizerUri").is_none() {
                    return Err(bad_request(
                        "Authorizer URI is required for TOKEN and REQUEST authorizers",
                    ));
                }
                if kind == "COGNITO_USER_POOLS" && input.get("providerARNs").is_none() {
                    return Err(bad_request(
                        "ProviderARNs need to be specified for Cognito User Pools authorizer",
                    ));
                }
                doc["id"] = new_id().into();
                if doc.get("authorizerResultTtlInSeconds").is_none() {
                    doc["authorizerResultTtlInSeconds"] = 300.into();
                }
                if doc.get("authType").is_none() && kind != "COGNITO_USER_POOLS" {
                    doc["authType"] = "custom".into();
                }
            }
            "apikey" => {
                doc["id"] = new_id().into();
                if doc.get("value").is_none() {
                    doc["value"] = (0..40)
                        .map(|_| {
                            char::from(
                                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                                    [fastrand::usize(..62)],
                            )
                        })
                        .collect::<String>()
                        .into();
                } else if input.str("value").is_some_and(|v| v.len() < 20) {
                    return Err(bad_request(
                        "API Key value should be at least 20 characters",
                    ));
                }
                self.unique_key_value(ctx, &doc)?;
                doc["enabled"] = input.bool("enabled").unwrap_or(false).into();
                doc["createdDate"] = now.into();
                doc["lastUpdatedDate"] = now.into();
                doc["stageKeys"] = doc.get("stageKeys").cloned().unwrap_or_else(|| json!([]));
            }
            "usageplankey" => {
                let key_id = input.str("keyId").unwrap_or_default();
                let key = self
                    .store
                    .get(scope(ctx, "apikey", ""), key_id)?
                    .ok_or_else(|| missing("API Key"))?;
                doc = json!({"id": key_id, "type": input.str("keyType").unwrap_or("API_KEY"), "value": key["value"], "name": key["name"]});
            }
            "domainname" => {
                let name = input.str("domainName").unwrap_or_default();
                let hashed = format!(
                    "{:x}",
                    name.bytes()
                        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
                );
                if doc.get("endpointConfiguration").is_none() {
                    doc["endpointConfiguration"] = json!({"types": ["EDGE"]});
                }
                doc["domainNameStatus"] = "AVAILABLE".into();
                doc["regionalDomainName"] = format!(
                    "d-{}.execute-api.{}.amazonaws.com",
                    &hashed[..hashed.len().min(10)],
                    ctx.region
                )
                .into();
                doc["regionalHostedZoneId"] = "Z1UJRXOUMOOFQ8".into();
                doc["domainNameArn"] =
                    format!("arn:aws:apigateway:{}::/domainnames/{name}", ctx.region).into();
                doc["distributionDomainName"] =
                    format!("d{}.cloudfront.net", &hashed[..hashed.len().min(13)]).into();
                doc["distributionHostedZoneId"] = "Z2FDTNDATAQYW2".into();
                doc["certificateUploadDate"] = now.into();
                doc["securityPolicy"] = doc
                    .get("securityPolicy")
                    .cloned()
                    .unwrap_or_else(|| "TLS_1_2".into());
            }
            "basepathmapping" => {
                let api = input.str("restApiId").unwrap_or_default();
                self.rest_api(ctx, api)?;
                let base = input
                    .str("basePath")
                    .filter(|b| !b.is_empty())
                    .unwrap_or("(none)");
                doc["basePath"] = base.into();
                if doc.get("stage").is_none() {
                    doc["stage"] = "(none)".into();
                }
            }
            "clientcertificate" => {
                doc["clientCertificateId"] = new_id().into();
                doc["pemEncodedCertificate"] =
                    "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----".into();
                doc["createdDate"] = now.into();
                doc["expirationDate"] = (now + 365 * 86_400).into();
            }
            "vpclink" => {
                doc["id"] = new_id().into();
                doc["status"] = "AVAILABLE".into();
            }
            "documentationversion" => {
                if let Some(Json::String(version)) = doc
                    .as_object_mut()
                    .and_then(|d| d.remove("documentationVersion"))
                {
                    doc["version"] = version.into();
                }
                doc["createdDate"] = now.into();
            }
            _ => {
                doc["id"] = new_id().into();
            }
        }
        if kind.kind == "usageplan" && doc.get("apiStages").is_none() {
            doc["apiStages"] = json!([]);
        }
        let _ = parent;
        if doc
            .get("tags")
            .is_some_and(|t| t.as_object().is_some_and(|o| o.is_empty()))
        {
            doc.as_object_mut().map(|o| o.remove("tags"));
        }
        Ok(doc)
    }

    /// AWS's ConflictException when another API key has `key`'s value.
    fn unique_key_value(&self, ctx: &Context, key: &Json) -> AwsResult<()> {
        let value = key["value"].as_str().unwrap_or_default();
        match self.store.get(scope(ctx, KEY_BY_VALUE, ""), value)? {
            Some(_) => Err(conflict("API Key already exists")),
            None => Ok(()),
        }
    }

    /// Adds a new document to the indexes the data plane reads: an API key by its value,
    /// a usage plan by each of its keys.
    fn index(&self, ctx: &Context, kind: &Kind, doc: &Json, parent: &str) -> AwsResult<()> {
        let id = doc["id"].as_str().unwrap_or_default();
        match kind.kind {
            "apikey" => {
                let value = doc["value"].as_str().unwrap_or_default();
                self.store
                    .put(scope(ctx, KEY_BY_VALUE, ""), value, &json!({ "id": id }))
            }
            "usageplankey" => self.store.put(
                scope(ctx, PLANS_OF_KEY, id),
                parent,
                &json!({ "id": parent }),
            ),
            _ => Ok(()),
        }
    }

    /// Takes a document about to go out of the indexes (an API key also out of its usage
    /// plans, a usage plan's keys out of the plans of each).
    fn unindex(&self, ctx: &Context, kind: &Kind, doc: &Json, parent: &str) -> AwsResult<()> {
        let id = doc["id"].as_str().unwrap_or_default();
        match kind.kind {
            "apikey" => {
                let value = doc["value"].as_str().unwrap_or_default();
                self.store.delete(scope(ctx, KEY_BY_VALUE, ""), value)?;
                for entry in self.store.list(scope(ctx, PLANS_OF_KEY, id))? {
                    let plan = entry["id"].as_str().unwrap_or_default();
                    self.store.delete(scope(ctx, "usageplankey", plan), id)?;
                    self.store.delete(scope(ctx, PLANS_OF_KEY, id), plan)?;
                }
            }
            "usageplankey" => {
                self.store.delete(scope(ctx, PLANS_OF_KEY, id), parent)?;
            }
            "usageplan" => {
                for key in self.store.list(scope(ctx, "usageplankey", id))? {
                    let key_id = key["id"].as_str().unwrap_or_default();
                    self.store.delete(scope(ctx, PLANS_OF_KEY, key_id), id)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn gateway_responses(&self, ctx: &Context, api: &str) -> AwsResult<Vec<Json>> {
        self.rest_api(ctx, api)?;
        let put = self.store.list(scope(ctx, "gatewayresponse", api))?;
        Ok(GATEWAY_RESPONSES
            .iter()
            .map(|(kind, status)| {
                put.iter()
                    .find(|p| p["responseType"] == *kind)
                    .cloned()
                    .unwrap_or_else(|| default_gateway_response(kind, *status))
            })
            .collect())
    }

    fn gateway_response_type(input: &Value) -> AwsResult<&str> {
        let kind = input.str("responseType").unwrap_or_default();
        if GATEWAY_RESPONSES.iter().any(|(k, _)| *k == kind) {
            Ok(kind)
        } else {
            Err(bad_request(format!(
                "Invalid response type specified: {kind}"
            )))
        }
    }

    fn get_gateway_response(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let kind = Self::gateway_response_type(input)?;
        let all = self.gateway_responses(ctx, input.str("restApiId").unwrap_or_default())?;
        let doc = all
            .into_iter()
            .find(|d| d["responseType"] == kind)
            .unwrap_or_default();
        Ok(output(&doc))
    }

    fn get_gateway_responses(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        page(
            self.gateway_responses(ctx, input.str("restApiId").unwrap_or_default())?,
            input,
        )
    }

    fn put_gateway_response(
        &self,
        ctx: &Context,
        input: &Value,
        operation: &str,
    ) -> AwsResult<Value> {
        let kind = Self::gateway_response_type(input)?;
        let api = input.str("restApiId").unwrap_or_default();
        let place = scope(ctx, "gatewayresponse", api);
        let mut doc = if operation == "PutGatewayResponse" {
            let mut doc = json!({"responseType": kind, "defaultResponse": false, "responseParameters": {}, "responseTemplates": {}});
            let given = document(input, &["restApiId"], &[]);
            for (k, v) in given.as_object().into_iter().flatten() {
                doc[k] = v.clone();
            }
            doc
        } else {
            let all = self.gateway_responses(ctx, api)?;
            all.into_iter()
                .find(|d| d["responseType"] == kind)
                .unwrap_or_default()
        };
        if operation == "UpdateGatewayResponse" {
            patch::apply(&mut doc, "GatewayResponse", input.get("patchOperations"))?;
            doc["defaultResponse"] = false.into();
        }
        self.rest_api(ctx, api)?;
        self.store.put(place, kind, &doc)?;
        Ok(output(&doc))
    }

    fn delete_gateway_response(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let kind = Self::gateway_response_type(input)?;
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        if !self
            .store
            .delete(scope(ctx, "gatewayresponse", api), kind)?
        {
            return Err(missing("Gateway Response"));
        }
        Ok(Value::map())
    }

    fn account(&self, ctx: &Context) -> AwsResult<Json> {
        Ok(self
            .store
            .get(scope(ctx, "account", ""), "account")?
            .unwrap_or_else(default_account))
    }

    fn update_account(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut account = self.account(ctx)?;
        patch::apply(&mut account, "Account", input.get("patchOperations"))?;
        self.store
            .put(scope(ctx, "account", ""), "account", &account)?;
        self.accounts.forget(&ctx.account, &ctx.region);
        Ok(output(&account))
    }

    fn model_template(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let name = input.str("modelName").unwrap_or_default();
        self.store
            .get(scope(ctx, "model", api), name)?
            .ok_or_else(|| missing("Model"))?;
        Ok(Value::map().with("value", "#set($inputRoot = $input.path('$'))\n{ }"))
    }
}

/// Whether a listed document passes the list's filters (API keys by name and customer).
fn listed(kind: &Kind, doc: &Json, input: &Value) -> bool {
    match kind.kind {
        "apikey" => {
            input
                .str("nameQuery")
                .is_none_or(|q| doc["name"].as_str().is_some_and(|n| n.starts_with(q)))
                && input
                    .str("customerId")
                    .is_none_or(|c| doc["customerId"] == c)
        }
        "usageplankey" => input
            .str("nameQuery")
            .is_none_or(|q| doc["name"].as_str().is_some_and(|n| n.starts_with(q))),
        _ => true,
    }
}

/// A document as answered: an API key's value only where asked for.
fn shown(kind: &Kind, mut doc: Json, input: &Value) -> Json {
    let asked =
        input.bool("includeValue") == Some(true) || input.bool("includeValues") == Some(true);
    if kind.kind == "apikey" && !asked {
        doc.as_object_mut().map(|o| o.remove("value"));
    }
    doc
}
