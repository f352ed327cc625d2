//! Deployments and Stages. A deployment keeps a snapshot of its API as it was (resources
//! with their methods and integrations, authorizers, validators, models, gateway responses
//! and the API's own settings); a stage points at one, and the data plane serves that
//! snapshot, so later edits reach callers only when deployed, as in AWS. Snapshots are
//! immutable, so the data plane keeps the parsed ones it serves in memory.

use std::sync::Arc;

use roto_core::{AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::super::{bad_request, conflict, new_id, patch, ApiGateway};
use super::{document, missing, now_secs, output, page, scope};

/// An API as a deployment froze it.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The API's document (binary media types, API key source, ...).
    pub api: Json,
    /// Its resources, each with its methods.
    pub resources: Vec<Json>,
    /// Its authorizers.
    pub authorizers: Vec<Json>,
    /// Its request validators.
    pub validators: Vec<Json>,
    /// Its models.
    pub models: Vec<Json>,
    /// The gateway responses it customised.
    pub gateway_responses: Vec<Json>,
}

impl Snapshot {
    /// The snapshot a deployment's document holds.
    pub(super) fn from_json(doc: &Json) -> Snapshot {
        let list = |k: &str| doc[k].as_array().cloned().unwrap_or_default();
        Snapshot {
            api: doc["api"].clone(),
            resources: list("resources"),
            authorizers: list("authorizers"),
            validators: list("validators"),
            models: list("models"),
            gateway_responses: list("gatewayResponses"),
        }
    }
}

/// What `apiSummary` says of a resource tree: path -> method -> authorization.
fn api_summary(resources: &[Json]) -> Json {
    let mut summary = Map::new();
    for r in resources {
        let Some(methods) = r["resourceMethods"].as_object() else {
            continue;
        };
        let entry: Map<String, Json> = methods
            .iter()
            .map(|(m, doc)| {
                (
                    m.clone(),
                    json!({
                        "authorizationType": doc["authorizationType"],
                        "apiKeyRequired": doc["apiKeyRequired"].as_bool().unwrap_or(false),
                    }),
                )
            })
            .collect();
        summary.insert(
            r["path"].as_str().unwrap_or_default().to_string(),
            Json::Object(entry),
        );
    }
    Json::Object(summary)
}

impl ApiGateway {
    pub(super) fn deployment_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        Some(match operation {
            "CreateDeployment" => self.create_deployment(ctx, input),
            "GetDeployment" => self.get_deployment(ctx, input),
            "GetDeployments" => self.get_deployments(ctx, input),
            "UpdateDeployment" => self.update_deployment(ctx, input),
            "DeleteDeployment" => self.delete_deployment(ctx, input),
            "CreateStage" => self.create_stage(ctx, input),
            "GetStage" => self.stage(ctx, input).map(|(_, doc)| output(&doc)),
            "GetStages" => self.get_stages(ctx, input),
            "UpdateStage" => self.update_stage(ctx, input),
            "DeleteStage" => self.delete_stage(ctx, input),
            "FlushStageCache" | "FlushStageAuthorizersCache" => {
                self.stage(ctx, input).map(|_| Value::map())
            }
            _ => return None,
        })
    }

    /// The API as it is now, as a deployment freezes it.
    pub(super) fn snapshot_of(&self, ctx: &Context, api: &str) -> AwsResult<Json> {
        let api_doc = self.rest_api(ctx, api)?;
        let resources = self.store.list(scope(ctx, "resource", api))?;
        let methods: Vec<&Json> = resources
            .iter()
            .filter_map(|r| r["resourceMethods"].as_object())
            .flat_map(|m| m.values())
            .collect();
        if methods.is_empty() {
            return Err(bad_request("The REST API doesn't contain any methods"));
        }
        if methods.iter().any(|m| m.get("methodIntegration").is_none()) {
            return Err(bad_request("No integration defined for method"));
        }
        let list = |kind: &str| self.store.list(scope(ctx, kind, api));
        Ok(json!({
            "api": api_doc,
            "resources": resources,
            "authorizers": list("authorizer")?,
            "validators": list("requestvalidator")?,
            "models": list("model")?,
            "gatewayResponses": list("gatewayresponse")?,
        }))
    }

    fn create_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        let snapshot = self.snapshot_of(ctx, api)?;
        let id = new_id();
        let mut doc = json!({"id": id, "createdDate": now_secs()});
        if let Some(d) = input.str("description") {
            doc["description"] = d.into();
        }
        doc["apiSummary"] =
            api_summary(snapshot["resources"].as_array().map_or(&[], Vec::as_slice));
        doc["snapshot"] = snapshot;
        self.store.put(scope(ctx, "deployment", api), &id, &doc)?;
        if let Some(stage) = input.str("stageName").filter(|s| !s.is_empty()) {
            self.deploy_to_stage(ctx, api, stage, &id, input)?;
        }
        Ok(output(&summary_only(&doc, false)))
    }

    /// Points stage `name` at deployment `id`, creating it if it does not exist.
    fn deploy_to_stage(
        &self,
        ctx: &Context,
        api: &str,
        name: &str,
        id: &str,
        input: &Value,
    ) -> AwsResult<()> {
        let stages = scope(ctx, "stage", api);
        let mut stage = match self.store.get(stages, name)? {
            Some(stage) => stage,
            None => new_stage(name, id),
        };
        stage["deploymentId"] = id.into();
        stage["lastUpdatedDate"] = now_secs().into();
        if let Some(d) = input.str("stageDescription") {
            stage["description"] = d.into();
        }
        for (k, v) in input
            .get("variables")
            .and_then(Value::as_map)
            .into_iter()
            .flatten()
        {
            stage["variables"][k] = v.to_json();
        }
        if let Some(t) = input.bool("tracingEnabled") {
            stage["tracingEnabled"] = t.into();
        }
        self.store.put(stages, name, &stage)
    }

    fn deployment(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String, Json)> {
        let api = input.str("restApiId").unwrap_or_default().to_string();
        self.rest_api(ctx, &api)?;
        let id = input.str("deploymentId").unwrap_or_default().to_string();
        let doc = self
            .store
            .get(scope(ctx, "deployment", &api), &id)?
            .ok_or_else(|| missing("Deployment"))?;
        Ok((api, id, doc))
    }

    fn get_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, _, doc) = self.deployment(ctx, input)?;
        Ok(output(&summary_only(&doc, embeds_summary(input))))
    }

    fn get_deployments(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let all = self.store.list(scope(ctx, "deployment", api))?;
        let docs = all.iter().map(|d| summary_only(d, false)).collect();
        page(docs, input)
    }

    fn update_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api, id, mut doc) = self.deployment(ctx, input)?;
        patch::apply(&mut doc, "Deployment", input.get("patchOperations"))?;
        self.store.put(scope(ctx, "deployment", &api), &id, &doc)?;
        Ok(output(&summary_only(&doc, false)))
    }

    fn delete_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api, id, _) = self.deployment(ctx, input)?;
        let stages = self.store.list(scope(ctx, "stage", &api))?;
        if stages.iter().any(|s| s["deploymentId"] == id.as_str()) {
            return Err(bad_request(
                "Active stages pointing to this deployment must be moved or deleted",
            ));
        }
        self.store.delete(scope(ctx, "deployment", &api), &id)?;
        self.forget_snapshot(&id);
        Ok(Value::map())
    }

    fn create_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api, deployment, _) = self.deployment(ctx, input)?;
        let name = input.str("stageName").unwrap_or_default();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad_request(
                "Stage name only allows a-zA-Z0-9_- and must be between 1 and 128 characters",
            ));
        }
        let stages = scope(ctx, "stage", &api);
        if self.store.get(stages, name)?.is_some() {
            return Err(conflict("Stage already exists"));
        }
        let mut stage = new_stage(name, &deployment);
        let given = document(input, &["restApiId"], &[]);
        for (k, v) in given.as_object().into_iter().flatten() {
            stage[k] = v.clone();
        }
        self.store.put(stages, name, &stage)?;
        Ok(output(&stage))
    }

    /// The stage an input names (`restApiId`, `stageName`): its API and document.
    fn stage(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Json)> {
        let api = input.str("restApiId").unwrap_or_default().to_string();
        self.rest_api(ctx, &api)?;
        let doc = self
            .store
            .get(
                scope(ctx, "stage", &api),
                input.str("stageName").unwrap_or_default(),
            )?
            .ok_or_else(|| missing("Stage"))?;
        Ok((api, doc))
    }

    fn get_stages(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let stages: Vec<Value> = self
            .store
            .list(scope(ctx, "stage", api))?
            .iter()
            .filter(|s| {
                input
                    .str("deploymentId")
                    .is_none_or(|d| s["deploymentId"] == d)
            })
            .map(output)
            .collect();
        Ok(Value::map().with("item", Value::List(stages)))
    }

    fn update_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api, mut stage) = self.stage(ctx, input)?;
        let operations = input.get("patchOperations").map(stage_paths);
        patch::apply(&mut stage, "Stage", operations.as_ref())?;
        if let Some(id) = stage["deploymentId"].as_str() {
            if self
                .store
                .get(scope(ctx, "deployment", &api), id)?
                .is_none()
            {
                return Err(missing("Deployment"));
            }
        }
        stage["lastUpdatedDate"] = now_secs().into();
        let name = stage["stageName"].as_str().unwrap_or_default().to_string();
        self.store.put(scope(ctx, "stage", &api), &name, &stage)?;
        Ok(output(&stage))
    }

    fn delete_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api, stage) = self.stage(ctx, input)?;
        self.store.delete(
            scope(ctx, "stage", &api),
            stage["stageName"].as_str().unwrap_or_default(),
        )?;
        Ok(Value::map())
    }

    /// The snapshot deployment `id` of API `api` (in `account`/`region`) serves, parsed once.
    pub(in super::super) fn deployed(
        &self,
        account: &str,
        region: &str,
        api: &str,
        id: &str,
    ) -> AwsResult<Option<Arc<Snapshot>>> {
        if let Some(found) = self
            .snapshots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
        {
            return Ok(Some(found.clone()));
        }
        let scope = super::super::store::Scope {
            account,
            region,
            kind: "deployment",
            parent: api,
        };
        let Some(doc) = self.store.get(scope, id)? else {
            return Ok(None);
        };
        let snapshot = Arc::new(Snapshot::from_json(&doc["snapshot"]));
        let mut cache = self.snapshots.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(id.to_string(), snapshot.clone());
        Ok(Some(snapshot))
    }

    fn forget_snapshot(&self, id: &str) {
        self.snapshots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Drops every cached snapshot (an API was deleted; its deployment ids are unknown here).
    pub(super) fn forget_snapshots(&self, _api: &str) {
        self.snapshots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

fn embeds_summary(input: &Value) -> bool {
    input
        .get("embed")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .any(|e| e.as_str() == Some("apisummary"))
}

/// A deployment as answered: without its snapshot, with `apiSummary` when embedded.
fn summary_only(doc: &Json, with_summary: bool) -> Json {
    let mut out = doc.clone();
    if let Some(o) = out.as_object_mut() {
        o.remove("snapshot");
        if !with_summary {
            o.remove("apiSummary");
        }
    }
    out
}

/// A new stage of deployment `deployment`, with AWS's defaults.
fn new_stage(name: &str, deployment: &str) -> Json {
    let now = now_secs();
    json!({
        "stageName": name,
        "deploymentId": deployment,
        "cacheClusterEnabled": false,
        "cacheClusterStatus": "NOT_AVAILABLE",
        "methodSettings": {},
        "tracingEnabled": false,
        "createdDate": now,
        "lastUpdatedDate": now,
    })
}

/// Stage patches name method settings as `/{resource path}/{method}/{area}/{setting}`
/// (`/*/*/logging/loglevel`); they become paths into `methodSettings`.
fn stage_paths(operations: &Value) -> Value {
    const SETTINGS: &[(&str, &str)] = &[
        ("metrics/enabled", "metricsEnabled"),
        ("logging/loglevel", "loggingLevel"),
        ("logging/dataTrace", "dataTraceEnabled"),
        ("throttling/burstLimit", "throttlingBurstLimit"),
        ("throttling/rateLimit", "throttlingRateLimit"),
        ("caching/enabled", "cachingEnabled"),
        ("caching/ttlInSeconds", "cacheTtlInSeconds"),
        ("caching/dataEncrypted", "cacheDataEncrypted"),
        (
            "caching/requireAuthorizationForCacheControl",
            "requireAuthorizationForCacheControl",
        ),
        (
            "caching/unauthorizedCacheControlHeaderStrategy",
            "unauthorizedCacheControlHeaderStrategy",
        ),
    ];
    let rewrite = |op: &Value| {
        let path = op.str("path").unwrap_or_default();
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if segs.len() != 4 {
            return op.clone();
        }
        let setting = format!("{}/{}", segs[2], segs[3]);
        let Some((_, member)) = SETTINGS.iter().find(|(k, _)| *k == setting) else {
            return op.clone();
        };
        let key = format!("{}/{}", segs[0], segs[1]).replace('/', "~1");
        let mut rewritten = op.clone();
        rewritten.insert("path", format!("/methodSettings/{key}/{member}"));
        rewritten
    };
    Value::List(
        operations
            .as_list()
            .unwrap_or_default()
            .iter()
            .map(rewrite)
            .collect(),
    )
}
