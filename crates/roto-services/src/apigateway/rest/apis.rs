//! RestApis and tags: an API is created with its root resource `/`, answers with AWS's
//! defaults (EDGE endpoint, `HEADER` API key source), and takes every child with it when
//! deleted. Tags live in the tagged document itself, found from its ARN
//! (`arn:aws:apigateway:{region}::/restapis/{id}`, `.../stages/{name}`, `/apikeys/{id}`, ...).

use roto_core::{AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::super::{bad_request, new_id, not_found, patch, ApiGateway};
use super::{document, now_secs, output, page, required, scope};

impl ApiGateway {
    pub(super) fn api_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        Some(match operation {
            "CreateRestApi" => self.create_rest_api(ctx, input),
            "GetRestApi" => self
                .rest_api(ctx, input.str("restApiId").unwrap_or_default())
                .map(|doc| output(&doc)),
            "GetRestApis" => self
                .store
                .list(scope(ctx, "restapi", ""))
                .and_then(|apis| page(apis, input)),
            "UpdateRestApi" => self.update_rest_api(ctx, input),
            "DeleteRestApi" => self.delete_rest_api(ctx, input),
            "TagResource" => self.tag_resource(ctx, input, true),
            "UntagResource" => self.tag_resource(ctx, input, false),
            "GetTags" => self.get_tags(ctx, input),
            _ => return None,
        })
    }

    /// A new API document from CreateRestApi's (or an import's) members, with its root
    /// resource stored beside it.
    pub(super) fn new_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Json> {
        let name =
            required(input, "name").map_err(|_| bad_request("Invalid REST API name specified"))?;
        let id = new_id();
        let root = new_id();
        let mut api = document(input, &["cloneFrom"], &[]);
        let defaults = json!({
            "id": id,
            "name": name,
            "createdDate": now_secs(),
            "apiKeySource": "HEADER",
            "endpointConfiguration": {"types": ["EDGE"], "ipAddressType": "ipv4"},
            "disableExecuteApiEndpoint": false,
            "rootResourceId": root,
            "apiStatus": "AVAILABLE",
        });
        for (k, v) in defaults.as_object().into_iter().flatten() {
            if api.get(k).is_none() {
                api[k] = v.clone();
            }
        }
        let types = &api["endpointConfiguration"]["types"];
        if types.as_array().is_none_or(|t| t.len() != 1) {
            return Err(bad_request("Only one endpoint type may be specified"));
        }
        if api
            .get("tags")
            .is_some_and(|t| t.as_object().is_some_and(|o| o.is_empty()))
        {
            api.as_object_mut().map(|o| o.remove("tags"));
        }
        self.store.put(scope(ctx, "restapi", ""), &id, &api)?;
        let root_doc = json!({"id": root, "path": "/"});
        self.store
            .put(scope(ctx, "resource", &id), &root, &root_doc)?;
        Ok(api)
    }

    fn create_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let api = self.new_rest_api(ctx, input)?;
        if let Some(source) = input.str("cloneFrom") {
            self.clone_resources(ctx, source, &api)?;
        }
        Ok(output(&api))
    }

    /// Copies another API's resources (and their methods) into a new API, under its root.
    fn clone_resources(&self, ctx: &Context, source: &str, api: &Json) -> AwsResult<()> {
        self.rest_api(ctx, source)?;
        let id = api["id"].as_str().unwrap_or_default();
        let root = api["rootResourceId"].as_str().unwrap_or_default();
        let resources = self.store.list(scope(ctx, "resource", source))?;
        let source_root = resources
            .iter()
            .find(|r| r["path"] == "/")
            .and_then(|r| r["id"].as_str())
            .unwrap_or_default()
            .to_string();
        for mut resource in resources {
            let rid = resource["id"].as_str().unwrap_or_default().to_string();
            if rid == source_root {
                resource["id"] = root.into();
            }
            if resource["parentId"].as_str() == Some(source_root.as_str()) {
                resource["parentId"] = root.into();
            }
            let stored_id = resource["id"].as_str().unwrap_or_default().to_string();
            self.store
                .put(scope(ctx, "resource", id), &stored_id, &resource)?;
        }
        Ok(())
    }

    fn update_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("restApiId").unwrap_or_default();
        let mut api = self.rest_api(ctx, id)?;
        patch::apply(&mut api, "RestApi", input.get("patchOperations"))?;
        self.store.put(scope(ctx, "restapi", ""), id, &api)?;
        Ok(output(&api))
    }

    fn delete_rest_api(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, id)?;
        self.store.delete(scope(ctx, "restapi", ""), id)?;
        self.store.delete_children(&ctx.account, &ctx.region, id)?;
        self.forget_snapshots(id);
        Ok(Value::map())
    }

    /// The document an ARN names: its kind, parent and id.
    fn tagged(arn: &str) -> Option<(&'static str, String, String)> {
        let path = arn.split_once("::/")?.1;
        let parts: Vec<&str> = path.split('/').collect();
        Some(match parts.as_slice() {
            ["restapis", api] => ("restapi", String::new(), api.to_string()),
            ["restapis", api, "stages", stage] => ("stage", api.to_string(), stage.to_string()),
            ["apikeys", key] => ("apikey", String::new(), key.to_string()),
            ["usageplans", plan] => ("usageplan", String::new(), plan.to_string()),
            ["domainnames", name] => ("domainname", String::new(), name.to_string()),
            ["clientcertificates", id] => ("clientcertificate", String::new(), id.to_string()),
            ["vpclinks", id] => ("vpclink", String::new(), id.to_string()),
            _ => return None,
        })
    }

    fn tagged_doc(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(&'static str, String, String, Json)> {
        let arn = input.str("resourceArn").unwrap_or_default();
        let invalid = || not_found(format!("Invalid resource identifier specified {arn}"));
        let (kind, parent, id) = Self::tagged(arn).ok_or_else(invalid)?;
        let doc = self
            .store
            .get(scope(ctx, kind, &parent), &id)?
            .ok_or_else(invalid)?;
        Ok((kind, parent, id, doc))
    }

    fn tag_resource(&self, ctx: &Context, input: &Value, add: bool) -> AwsResult<Value> {
        let (kind, parent, id, mut doc) = self.tagged_doc(ctx, input)?;
        let mut tags = doc["tags"].as_object().cloned().unwrap_or_default();
        if add {
            for (k, v) in input
                .get("tags")
                .and_then(Value::as_map)
                .into_iter()
                .flatten()
            {
                tags.insert(k.clone(), v.to_json());
            }
        } else {
            for key in input
                .get("tagKeys")
                .and_then(Value::as_list)
                .unwrap_or_default()
            {
                tags.remove(key.as_str().unwrap_or_default());
            }
        }
        doc["tags"] = Json::Object(tags);
        self.store.put(scope(ctx, kind, &parent), &id, &doc)?;
        Ok(Value::map())
    }

    fn get_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, _, _, doc) = self.tagged_doc(ctx, input)?;
        let tags = doc.get("tags").cloned().unwrap_or_else(|| json!({}));
        Ok(Value::map().with("tags", output(&tags)))
    }
}
