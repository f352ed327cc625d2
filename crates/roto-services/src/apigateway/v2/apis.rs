//! APIs: Create (with quick create's `Target`), Get, Update, Delete, list, and the CORS
//! configuration of HTTP APIs.

use roto_core::{AwsResult, Context, Value};

use super::store::{Key, Kind};
use super::{bad_request, body_members, merged, now_iso, page, ApiGatewayV2};

/// Members of CreateApi that configure quick create rather than the API.
const QUICK_CREATE: [&str; 3] = ["Target", "RouteKey", "CredentialsArn"];

/// The endpoint AWS gives an API.
fn endpoint(ctx: &Context, id: &str, protocol: &str) -> String {
    let scheme = if protocol == "WEBSOCKET" {
        "wss"
    } else {
        "https"
    };
    format!("{scheme}://{id}.execute-api.{}.amazonaws.com", ctx.region)
}

/// Checks what only one protocol accepts.
fn check_protocol_members(input: &Value, protocol: &str) -> AwsResult<()> {
    if protocol == "HTTP" {
        return Ok(());
    }
    if input.get("CorsConfiguration").is_some() {
        return Err(bad_request(
            "CORS configuration is supported only for HTTP APIs.",
        ));
    }
    if QUICK_CREATE.iter().any(|m| input.get(m).is_some()) {
        return Err(bad_request("Quick create is supported only for HTTP APIs."));
    }
    if input.str("RouteSelectionExpression").is_none() {
        return Err(bad_request(
            "RouteSelectionExpression is required for a WEBSOCKET API.",
        ));
    }
    Ok(())
}

impl ApiGatewayV2 {
    pub(super) fn create_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let protocol = input.str("ProtocolType").unwrap_or("HTTP").to_string();
        check_protocol_members(input, &protocol)?;
        let id = self.new_api_id()?;
        let mut api = Value::map()
            .with("ApiId", id.as_str())
            .with("ApiEndpoint", endpoint(ctx, &id, &protocol))
            .with("ApiKeySelectionExpression", "$request.header.x-api-key")
            .with("CreatedDate", now_iso())
            .with("DisableExecuteApiEndpoint", false)
            .with("IpAddressType", "ipv4")
            .with("RouteSelectionExpression", "$request.method $request.path")
            .with("Tags", Value::map());
        let mut skipped = vec!["Tags"];
        skipped.extend(QUICK_CREATE);
        for (k, v) in body_members(input, &skipped) {
            api.insert(k, v);
        }
        if let Some(tags) = input.get("Tags") {
            api.insert("Tags", tags.clone());
        }
        self.save(ctx, Key::of(&id, Kind::Api, &id), &api)?;
        if let Some(target) = input.str("Target") {
            self.quick_create(ctx, &id, target, input)?;
        }
        Ok(api)
    }

    /// Quick create: an integration with the target, the route (`$default` unless
    /// `RouteKey` names another) and the `$default` stage, deployed automatically.
    fn quick_create(&self, ctx: &Context, id: &str, target: &str, input: &Value) -> AwsResult<()> {
        let lambda = target.starts_with("arn:");
        let integration_id = Kind::Integration.new_id();
        let integration = Value::map()
            .with("ApiGatewayManaged", true)
            .with("ConnectionType", "INTERNET")
            .with("IntegrationId", integration_id.as_str())
            .with("IntegrationMethod", if lambda { "POST" } else { "ANY" })
            .with(
                "IntegrationType",
                if lambda { "AWS_PROXY" } else { "HTTP_PROXY" },
            )
            .with("IntegrationUri", target)
            .with("PayloadFormatVersion", if lambda { "2.0" } else { "1.0" })
            .with("TimeoutInMillis", 30000i64)
            .with_opt("CredentialsArn", input.str("CredentialsArn"));
        self.save(
            ctx,
            Key::of(id, Kind::Integration, &integration_id),
            &integration,
        )?;
        let route_id = Kind::Route.new_id();
        let route = Value::map()
            .with("ApiGatewayManaged", true)
            .with("ApiKeyRequired", false)
            .with("AuthorizationType", "NONE")
            .with("RouteId", route_id.as_str())
            .with("RouteKey", input.str("RouteKey").unwrap_or("$default"))
            .with("Target", format!("integrations/{integration_id}"));
        self.save(ctx, Key::of(id, Kind::Route, &route_id), &route)?;
        let stage = Value::map()
            .with("StageName", "$default")
            .with("AutoDeploy", true)
            .with("ApiGatewayManaged", true);
        self.put_stage(ctx, id, stage)?;
        Ok(())
    }

    pub(super) fn get_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Ok(self.api_of(ctx, input)?.1)
    }

    pub(super) fn get_apis(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        page(self.list_apis(ctx)?, input)
    }

    pub(super) fn update_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, api) = self.api_of(ctx, input)?;
        let protocol = api.str("ProtocolType").unwrap_or("HTTP").to_string();
        if protocol != "HTTP" && input.get("CorsConfiguration").is_some() {
            return Err(bad_request(
                "CORS configuration is supported only for HTTP APIs.",
            ));
        }
        let mut skipped = vec!["ApiId"];
        skipped.extend(QUICK_CREATE);
        let api = merged(api, input, &skipped);
        self.save(ctx, Key::of(&id, Kind::Api, &id), &api)?;
        self.changed(ctx, &id)?;
        Ok(api)
    }

    pub(super) fn delete_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, _) = self.api_of(ctx, input)?;
        self.remove_api(ctx, &id)?;
        Ok(Value::map())
    }

    pub(super) fn delete_cors_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (id, mut api) = self.api_of(ctx, input)?;
        api.remove("CorsConfiguration");
        self.save(ctx, Key::of(&id, Kind::Api, &id), &api)?;
        self.changed(ctx, &id)?;
        Ok(Value::map())
    }
}
