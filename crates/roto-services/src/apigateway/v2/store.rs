//! How HTTP API resources sit in API Gateway's one document store (shared with REST APIs,
//! whose ids share one space with HTTP APIs'), the kinds of resources, their ids, and the
//! not-found errors AWS gives for each.
//!
//! A resource's scope is its kind (`v2:route`, ...) and its parent: nothing for APIs and
//! domain names, the API for what belongs to it, the route or integration for their
//! responses, the domain name for its API mappings.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::super::store::Scope;
use super::ApiGatewayV2;

/// The characters of ids: lowercase letters and digits, as API Gateway's.
const ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A kind of resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Api,
    Route,
    Integration,
    RouteResponse,
    IntegrationResponse,
    Stage,
    Deployment,
    Authorizer,
    Model,
    Domain,
    Mapping,
    VpcLink,
    RoutingRule,
    Portal,
    PortalProduct,
    ProductPage,
    ProductRestEndpointPage,
}

impl Kind {
    /// The store's kind (REST APIs' kinds have no prefix).
    pub(super) fn column(self) -> &'static str {
        match self {
            Kind::Api => "v2:api",
            Kind::Route => "v2:route",
            Kind::Integration => "v2:integration",
            Kind::RouteResponse => "v2:route-response",
            Kind::IntegrationResponse => "v2:integration-response",
            Kind::Stage => "v2:stage",
            Kind::Deployment => "v2:deployment",
            Kind::Authorizer => "v2:authorizer",
            Kind::Model => "v2:model",
            Kind::Domain => "v2:domain",
            Kind::Mapping => "v2:mapping",
            Kind::VpcLink => "v2:vpclink",
            Kind::RoutingRule => "v2:routing-rule",
            Kind::Portal => "v2:portal",
            Kind::PortalProduct => "v2:portal-product",
            Kind::ProductPage => "v2:product-page",
            Kind::ProductRestEndpointPage => "v2:product-rest-endpoint-page",
        }
    }

    /// The member that holds a resource's id.
    pub(super) fn id_member(self) -> &'static str {
        match self {
            Kind::Api => "ApiId",
            Kind::Route => "RouteId",
            Kind::Integration => "IntegrationId",
            Kind::RouteResponse => "RouteResponseId",
            Kind::IntegrationResponse => "IntegrationResponseId",
            Kind::Stage => "StageName",
            Kind::Deployment => "DeploymentId",
            Kind::Authorizer => "AuthorizerId",
            Kind::Model => "ModelId",
            Kind::Domain => "DomainName",
            Kind::Mapping => "ApiMappingId",
            Kind::VpcLink => "VpcLinkId",
            Kind::RoutingRule => "RoutingRuleId",
            Kind::Portal => "PortalId",
            Kind::PortalProduct => "PortalProductId",
            Kind::ProductPage => "ProductPageId",
            Kind::ProductRestEndpointPage => "ProductRestEndpointPageId",
        }
    }

    /// The length of a new id (APIs 10 characters, as REST APIs', from the same alphabet).
    fn id_len(self) -> usize {
        match self {
            Kind::Api | Kind::Domain | Kind::Stage => 10,
            Kind::Portal
            | Kind::PortalProduct
            | Kind::ProductPage
            | Kind::ProductRestEndpointPage => 12,
            Kind::Route | Kind::Integration | Kind::RouteResponse | Kind::IntegrationResponse => 7,
            Kind::Deployment | Kind::Authorizer | Kind::Model | Kind::Mapping => 6,
            Kind::VpcLink | Kind::RoutingRule => 6,
        }
    }

    /// The name AWS's not-found message gives the kind.
    fn label(self) -> &'static str {
        match self {
            Kind::Api => "API",
            Kind::Route => "Route",
            Kind::Integration => "Integration",
            Kind::RouteResponse => "RouteResponse",
            Kind::IntegrationResponse => "IntegrationResponse",
            Kind::Stage => "Stage",
            Kind::Deployment => "Deployment",
            Kind::Authorizer => "Authorizer",
            Kind::Model => "Model",
            Kind::Domain => "DomainName",
            Kind::Mapping => "ApiMapping",
            Kind::VpcLink => "VpcLink",
            Kind::RoutingRule => "RoutingRule",
            Kind::Portal => "Portal",
            Kind::PortalProduct => "PortalProduct",
            Kind::ProductPage => "ProductPage",
            Kind::ProductRestEndpointPage => "ProductRestEndpointPage",
        }
    }

    /// A new id for a resource of this kind.
    pub(super) fn new_id(self) -> String {
        (0..self.id_len())
            .map(|_| char::from(ID_ALPHABET[fastrand::usize(..ID_ALPHABET.len())]))
            .collect()
    }

    /// AWS's `NotFoundException` for a missing resource of this kind.
    pub(super) fn not_found(self, ctx: &Context, id: &str) -> AwsError {
        let message = match self {
            Kind::Stage => format!("Invalid stage identifier specified {id}"),
            Kind::Domain => format!(
                "The domain name resource specified in the request was not found. DomainName: {id}"
            ),
            _ => format!(
                "Invalid {} identifier specified {}:{id}",
                self.label(),
                ctx.account
            ),
        };
        AwsError::new("NotFoundException", message)
            .with_status(404)
            .with_field("ResourceType", self.label())
    }
}

/// Where a resource lives: its API ("" for domain names and their mappings), its parent
/// ("" unless the kind has one), its id.
#[derive(Clone, Copy)]
pub(super) struct Key<'a> {
    pub api: &'a str,
    pub kind: Kind,
    pub parent: &'a str,
    pub id: &'a str,
}

impl<'a> Key<'a> {
    /// A resource of an API with no parent.
    pub(super) fn of(api: &'a str, kind: Kind, id: &'a str) -> Key<'a> {
        Key {
            api,
            kind,
            parent: "",
            id,
        }
    }
}

impl<'a> Key<'a> {
    /// The store scope of the resource, in `ctx`'s account and region.
    fn scope(self, ctx: &'a Context) -> Scope<'a> {
        let parent = match self.kind {
            Kind::Api | Kind::Domain | Kind::VpcLink | Kind::Portal | Kind::PortalProduct => "",
            _ if !self.parent.is_empty() => self.parent,
            _ => self.api,
        };
        Scope {
            account: &ctx.account,
            region: &ctx.region,
            kind: self.kind.column(),
            parent,
        }
    }
}

impl ApiGatewayV2 {
    /// The document at `key`, if any.
    pub(super) fn load(&self, ctx: &Context, key: Key<'_>) -> AwsResult<Option<Value>> {
        let doc = self.store.get(key.scope(ctx), key.id)?;
        Ok(doc.as_ref().map(Value::from_json))
    }

    /// The document at `key`, or the kind's `NotFoundException`.
    pub(super) fn fetch(&self, ctx: &Context, key: Key<'_>) -> AwsResult<Value> {
        self.load(ctx, key)?
            .ok_or_else(|| key.kind.not_found(ctx, key.id))
    }

    /// Writes the document at `key` (a replaced one keeps its place in listings).
    pub(super) fn save(&self, ctx: &Context, key: Key<'_>, doc: &Value) -> AwsResult<()> {
        self.store.put(key.scope(ctx), key.id, &doc.to_json())
    }

    /// Every document of `kind` under `api` and `parent`, in the order they were created.
    pub(super) fn list(
        &self,
        ctx: &Context,
        api: &str,
        kind: Kind,
        parent: &str,
    ) -> AwsResult<Vec<Value>> {
        let key = Key {
            api,
            kind,
            parent,
            id: "",
        };
        let docs = self.store.list(key.scope(ctx))?;
        Ok(docs.iter().map(Value::from_json).collect())
    }

    /// Every API of the caller's account and region, in the order they were created.
    pub(super) fn list_apis(&self, ctx: &Context) -> AwsResult<Vec<Value>> {
        self.list(ctx, "", Kind::Api, "")
    }

    /// Removes the document at `key` and its children (those whose parent is its id).
    pub(super) fn remove(&self, ctx: &Context, key: Key<'_>) -> AwsResult<()> {
        self.store.delete(key.scope(ctx), key.id)?;
        if matches!(
            key.kind,
            Kind::Route | Kind::Integration | Kind::Domain | Kind::PortalProduct
        ) {
            self.store
                .delete_children(&ctx.account, &ctx.region, key.id)?;
        }
        Ok(())
    }

    /// Removes an API and everything under it.
    pub(super) fn remove_api(&self, ctx: &Context, api: &str) -> AwsResult<()> {
        for kind in [Kind::Route, Kind::Integration] {
            for doc in self.list(ctx, api, kind, "")? {
                let id = doc.str(kind.id_member()).unwrap_or_default();
                self.store.delete_children(&ctx.account, &ctx.region, id)?;
            }
        }
        self.store.delete_children(&ctx.account, &ctx.region, api)?;
        self.store
            .delete(Key::of(api, Kind::Api, api).scope(ctx), api)?;
        Ok(())
    }

    /// A new API id: 10 lowercase letters and digits from the generator REST APIs use, and
    /// one no REST API or HTTP API has.
    pub(super) fn new_api_id(&self) -> AwsResult<String> {
        loop {
            let id = super::super::new_id();
            let taken = self.store.locate("restapi", &id)?.is_some()
                || self.store.locate(Kind::Api.column(), &id)?.is_some();
            if !taken {
                return Ok(id);
            }
        }
    }

    /// The API named by the input's `ApiId`, or AWS's not-found error.
    pub(super) fn api_of(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Value)> {
        let id = input.str("ApiId").unwrap_or_default().to_string();
        let doc = self.fetch(ctx, Key::of(&id, Kind::Api, &id))?;
        Ok((id, doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lowercase_alphanumerics_of_the_kinds_length() {
        let id = Kind::Api.new_id();
        assert_eq!(id.len(), 10);
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        assert_eq!(Kind::Route.new_id().len(), 7);
    }
}
