//! Stages and deployments. A deployment keeps a snapshot of what the data plane needs (the
//! API's protocol and CORS configuration, its routes, integrations and authorizers), so a
//! stage serves what was deployed to it, and a change reaches callers only through a new
//! deployment: `CreateDeployment`, or the automatic one an `AutoDeploy` stage takes after
//! every change.

use roto_core::{AwsResult, Context, Value};

use super::store::{Key, Kind};
use super::{bad_request, body_members, conflict, merged, now_iso, page, ApiGatewayV2};

/// The member of a deployment's document that holds its snapshot (unknown to the model, so
/// never on the wire).
pub(super) const SNAPSHOT: &str = "Snapshot";

const URI_MEMBERS: [&str; 3] = ["ApiId", "StageName", "DeploymentId"];

/// What a deployment froze: what the data plane serves and ExportApi describes.
pub(super) struct Deployed {
    pub protocol: String,
    pub cors: Option<Value>,
    pub routes: Vec<Value>,
    pub integrations: Vec<Value>,
    pub authorizers: Vec<Value>,
}

impl Deployed {
    fn of_snapshot(snapshot: &Value) -> Deployed {
        let list = |m: &str| {
            snapshot
                .get(m)
                .and_then(Value::as_list)
                .unwrap_or_default()
                .to_vec()
        };
        Deployed {
            protocol: snapshot.str("ProtocolType").unwrap_or("HTTP").to_string(),
            cors: snapshot.get("CorsConfiguration").cloned(),
            routes: list("Routes"),
            integrations: list("Integrations"),
            authorizers: list("Authorizers"),
        }
    }

    fn into_snapshot(self) -> Value {
        Value::map()
            .with("ProtocolType", self.protocol)
            .with_opt("CorsConfiguration", self.cors)
            .with("Routes", self.routes)
            .with("Integrations", self.integrations)
            .with("Authorizers", self.authorizers)
    }
}

impl ApiGatewayV2 {
    /// Runs a stage or deployment operation, or `None` when `operation` is not one.
    pub(super) fn stage_operation(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Option<Value>> {
        let run = match operation {
            "CreateStage" => Self::create_stage,
            "GetStage" => Self::get_stage,
            "GetStages" => Self::get_stages,
            "UpdateStage" => Self::update_stage,
            "DeleteStage" => Self::delete_stage,
            "DeleteAccessLogSettings" => Self::delete_access_log_settings,
            "DeleteRouteSettings" => Self::delete_route_settings,
            "ResetAuthorizersCache" => Self::reset_authorizers_cache,
            "CreateDeployment" => Self::create_deployment,
            "GetDeployment" => Self::get_deployment,
            "GetDeployments" => Self::get_deployments,
            "UpdateDeployment" => Self::update_deployment,
            "DeleteDeployment" => Self::delete_deployment,
            _ => return Ok(None),
        };
        run(self, ctx, input).map(Some)
    }

    /// Stores a new stage (AWS's defaults under the given members), deploying it at once
    /// when it deploys automatically.
    pub(super) fn put_stage(&self, ctx: &Context, api: &str, given: Value) -> AwsResult<Value> {
        let name = given.str("StageName").unwrap_or_default().to_string();
        let now = now_iso();
        let mut stage = Value::map()
            .with("CreatedDate", now.as_str())
            .with("LastUpdatedDate", now.as_str())
            .with(
                "DefaultRouteSettings",
                Value::map().with("DetailedMetricsEnabled", false),
            )
            .with("RouteSettings", Value::map())
            .with("StageVariables", Value::map())
            .with("Tags", Value::map());
        for (k, v) in body_members(&given, &[]) {
            stage.insert(k, v);
        }
        let key = Key::of(api, Kind::Stage, &name);
        self.save(ctx, key, &stage)?;
        if stage.bool("AutoDeploy") == Some(true) {
            self.deploy(ctx, api, &name, true, None)?;
            return self.fetch(ctx, key);
        }
        Ok(stage)
    }

    fn create_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, api) = self.api_of(ctx, input)?;
        let name = input.str("StageName").unwrap_or_default();
        if name == "$default" && api.str("ProtocolType") == Some("WEBSOCKET") {
            return Err(bad_request(
                "The $default stage is supported only for HTTP APIs.",
            ));
        }
        if self
            .load(ctx, Key::of(&api_id, Kind::Stage, name))?
            .is_some()
        {
            return Err(conflict(format!("Stage {name} already exists")));
        }
        if let Some(deployment) = input.str("DeploymentId") {
            self.fetch(ctx, Key::of(&api_id, Kind::Deployment, deployment))?;
        }
        let given = merged(Value::map(), input, &["ApiId"]);
        self.put_stage(ctx, &api_id, given)
    }

    fn stage_key<'a>(
        &self,
        ctx: &Context,
        input: &'a Value,
        api: &'a str,
    ) -> AwsResult<(Key<'a>, Value)> {
        let key = Key::of(api, Kind::Stage, input.str("StageName").unwrap_or_default());
        let stage = self.fetch(ctx, key)?;
        Ok((key, stage))
    }

    fn get_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        Ok(self.stage_key(ctx, input, &api_id)?.1)
    }

    fn get_stages(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        page(self.list(ctx, &api_id, Kind::Stage, "")?, input)
    }

    fn update_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, stage) = self.stage_key(ctx, input, &api_id)?;
        if let Some(deployment) = input.str("DeploymentId") {
            self.fetch(ctx, Key::of(&api_id, Kind::Deployment, deployment))?;
        }
        let mut stage = merged(stage, input, &["ApiId", "StageName"]);
        stage.insert("LastUpdatedDate", now_iso());
        self.save(ctx, key, &stage)?;
        if input.bool("AutoDeploy") == Some(true) {
            self.deploy(ctx, &api_id, key.id, true, None)?;
            return self.fetch(ctx, key);
        }
        Ok(stage)
    }

    fn delete_stage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, _) = self.stage_key(ctx, input, &api_id)?;
        self.remove(ctx, key)?;
        Ok(Value::map())
    }

    fn delete_access_log_settings(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, mut stage) = self.stage_key(ctx, input, &api_id)?;
        stage.remove("AccessLogSettings");
        self.save(ctx, key, &stage)?;
        Ok(Value::map())
    }

    fn delete_route_settings(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, mut stage) = self.stage_key(ctx, input, &api_id)?;
        let route_key = input.str("RouteKey").unwrap_or_default();
        let mut settings = stage
            .get("RouteSettings")
            .cloned()
            .unwrap_or_else(Value::map);
        if settings.remove(route_key).is_none() {
            return Err(Kind::Route.not_found(ctx, route_key));
        }
        stage.insert("RouteSettings", settings);
        self.save(ctx, key, &stage)?;
        Ok(Value::map())
    }

    fn reset_authorizers_cache(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        self.stage_key(ctx, input, &api_id)?;
        self.caches.reset_api(&api_id);
        Ok(Value::map())
    }

    fn create_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        if let Some(stage) = input.str("StageName") {
            self.fetch(ctx, Key::of(&api_id, Kind::Stage, stage))?;
        }
        if self.list(ctx, &api_id, Kind::Route, "")?.is_empty() {
            return Err(bad_request(
                "At least one route is required before deploying the Api.",
            ));
        }
        let deployment = self.snapshot(ctx, &api_id, false, input.str("Description"))?;
        if let Some(stage) = input.str("StageName") {
            self.point_stage(ctx, &api_id, stage, &deployment)?;
        }
        Ok(deployment)
    }

    fn deployment_key<'a>(
        &self,
        ctx: &Context,
        input: &'a Value,
        api: &'a str,
    ) -> AwsResult<(Key<'a>, Value)> {
        let key = Key::of(
            api,
            Kind::Deployment,
            input.str("DeploymentId").unwrap_or_default(),
        );
        let deployment = self.fetch(ctx, key)?;
        Ok((key, deployment))
    }

    fn get_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        Ok(self.deployment_key(ctx, input, &api_id)?.1)
    }

    fn get_deployments(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        page(self.list(ctx, &api_id, Kind::Deployment, "")?, input)
    }

    fn update_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, deployment) = self.deployment_key(ctx, input, &api_id)?;
        let deployment = merged(deployment, input, &URI_MEMBERS);
        self.save(ctx, key, &deployment)?;
        Ok(deployment)
    }

    fn delete_deployment(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (api_id, _) = self.api_of(ctx, input)?;
        let (key, _) = self.deployment_key(ctx, input, &api_id)?;
        let in_use = self
            .list(ctx, &api_id, Kind::Stage, "")?
            .iter()
            .any(|s| s.str("DeploymentId") == Some(key.id));
        if in_use {
            return Err(bad_request(
                "Active stages pointing to this deployment must be moved or deleted",
            ));
        }
        self.remove(ctx, key)?;
        Ok(Value::map())
    }

    /// The API as it is now, as a deployment would freeze it.
    pub(super) fn current(&self, ctx: &Context, api_id: &str, api: &Value) -> AwsResult<Deployed> {
        Ok(Deployed {
            protocol: api.str("ProtocolType").unwrap_or("HTTP").to_string(),
            cors: api.get("CorsConfiguration").cloned(),
            routes: self.list(ctx, api_id, Kind::Route, "")?,
            integrations: self.list(ctx, api_id, Kind::Integration, "")?,
            authorizers: self.list(ctx, api_id, Kind::Authorizer, "")?,
        })
    }

    /// What stage `stage` of the API serves (its deployment's snapshot).
    pub(super) fn deployed(&self, ctx: &Context, api: &str, stage: &str) -> AwsResult<Deployed> {
        let stage = self.fetch(ctx, Key::of(api, Kind::Stage, stage))?;
        let deployment = stage.str("DeploymentId").unwrap_or_default();
        self.snapshot_of(ctx, api, &stage)?
            .ok_or_else(|| Kind::Deployment.not_found(ctx, deployment))
    }

    /// What a stage serves; `None` while nothing is deployed to it.
    pub(super) fn snapshot_of(
        &self,
        ctx: &Context,
        api: &str,
        stage: &Value,
    ) -> AwsResult<Option<Deployed>> {
        let Some(deployment) = stage.str("DeploymentId") else {
            return Ok(None);
        };
        let deployment = self.load(ctx, Key::of(api, Kind::Deployment, deployment))?;
        Ok(deployment.map(|d| {
            let snapshot = d.get(SNAPSHOT).cloned().unwrap_or_else(Value::map);
            Deployed::of_snapshot(&snapshot)
        }))
    }

    /// A new deployment of the API as it is now.
    fn snapshot(
        &self,
        ctx: &Context,
        api_id: &str,
        auto: bool,
        description: Option<&str>,
    ) -> AwsResult<Value> {
        let api = self.fetch(ctx, Key::of(api_id, Kind::Api, api_id))?;
        let snapshot = self.current(ctx, api_id, &api)?.into_snapshot();
        let id = Kind::Deployment.new_id();
        let deployment = Value::map()
            .with("AutoDeployed", auto)
            .with("CreatedDate", now_iso())
            .with("DeploymentId", id.as_str())
            .with("DeploymentStatus", "DEPLOYED")
            .with_opt("Description", description)
            .with(SNAPSHOT, snapshot);
        self.save(ctx, Key::of(api_id, Kind::Deployment, &id), &deployment)?;
        Ok(deployment)
    }

    fn point_stage(
        &self,
        ctx: &Context,
        api: &str,
        stage: &str,
        deployment: &Value,
    ) -> AwsResult<()> {
        let key = Key::of(api, Kind::Stage, stage);
        let mut doc = self.fetch(ctx, key)?;
        let id = deployment.str("DeploymentId").unwrap_or_default();
        doc.insert("DeploymentId", id);
        doc.insert(
            "LastDeploymentStatusMessage",
            format!("Successfully deployed stage with deployment ID '{id}'"),
        );
        doc.insert("LastUpdatedDate", now_iso());
        self.save(ctx, key, &doc)
    }

    /// Deploys the API to `stage` (a deployment AWS marks automatic when `auto`), unless it
    /// has no route yet.
    fn deploy(
        &self,
        ctx: &Context,
        api: &str,
        stage: &str,
        auto: bool,
        description: Option<&str>,
    ) -> AwsResult<()> {
        if self.list(ctx, api, Kind::Route, "")?.is_empty() {
            return Ok(());
        }
        let deployment = self.snapshot(ctx, api, auto, description)?;
        self.point_stage(ctx, api, stage, &deployment)
    }

    /// Hears that the API changed: every stage that deploys automatically takes a new
    /// deployment.
    pub(super) fn changed(&self, ctx: &Context, api: &str) -> AwsResult<()> {
        for stage in self.list(ctx, api, Kind::Stage, "")? {
            if stage.bool("AutoDeploy") == Some(true) {
                let name = stage.str("StageName").unwrap_or_default();
                self.deploy(ctx, api, name, true, None)?;
            }
        }
        Ok(())
    }
}
