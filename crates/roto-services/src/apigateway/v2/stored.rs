//! What HTTP APIs' control plane keeps without serving it: VPC links, routing rules of
//! custom domain names, and developer portals with their products, product pages, REST
//! endpoint pages and sharing policies. Each is stored as its create call gave it, with
//! what AWS adds (ids, ARNs, timestamps, statuses), and returned exactly; nothing runs
//! behind them (no VPC is reached, no portal site is built, routing rules do not route).
//!
//! One create/get/list/update/delete serves every kind, named by its operations' noun
//! (`CreateVpcLink`, `GetVpcLinks`, `ListPortals`, `PutRoutingRule`); portals'
//! publishing and products' sharing policies have operations of their own.

use roto_core::{AwsResult, Context, Value};

use super::store::{Key, Kind};
use super::{bad_request, conflict, merged, now_iso, page, ApiGatewayV2};

/// The verb and kind an operation names, if it is one of the stored kinds'.
fn resolve(operation: &str) -> Option<(&'static str, Kind)> {
    const NOUNS: &[(&str, Kind)] = &[
        ("VpcLink", Kind::VpcLink),
        ("RoutingRule", Kind::RoutingRule),
        ("PortalProduct", Kind::PortalProduct),
        ("Portal", Kind::Portal),
        ("ProductPage", Kind::ProductPage),
        ("ProductRestEndpointPage", Kind::ProductRestEndpointPage),
    ];
    for verb in ["Create", "Get", "List", "Update", "Put", "Delete"] {
        let Some(noun) = operation.strip_prefix(verb) else {
            continue;
        };
        if let Some((_, kind)) = NOUNS.iter().find(|(n, _)| *n == noun) {
            let verb = match verb {
                "Put" => "Update",
                "List" => return None,
                v => v,
            };
            return Some((verb, *kind));
        }
        if let Some((_, kind)) = NOUNS
            .iter()
            .find(|(n, _)| noun.strip_suffix('s') == Some(n))
        {
            return matches!(verb, "Get" | "List").then_some(("List", *kind));
        }
    }
    None
}

/// The member naming a kind's parent, for kinds that have one.
fn parent_member(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::RoutingRule => Some("DomainName"),
        Kind::ProductPage | Kind::ProductRestEndpointPage => Some("PortalProductId"),
        _ => None,
    }
}

/// The ARN of a resource, as the member its kind answers it in (`PortalArn`), if any.
fn arn(ctx: &Context, kind: Kind, parent: &str, id: &str) -> Option<(&'static str, String)> {
    let prefix = format!("arn:aws:apigateway:{}:{}:", ctx.region, ctx.account);
    Some(match kind {
        Kind::Portal => ("PortalArn", format!("{prefix}/portals/{id}")),
        Kind::PortalProduct => ("PortalProductArn", format!("{prefix}/portalproducts/{id}")),
        Kind::ProductPage => (
            "ProductPageArn",
            format!("{prefix}/portalproducts/{parent}/productpages/{id}"),
        ),
        Kind::ProductRestEndpointPage => (
            "ProductRestEndpointPageArn",
            format!("{prefix}/portalproducts/{parent}/productrestendpointpages/{id}"),
        ),
        Kind::RoutingRule => (
            "RoutingRuleArn",
            format!("{prefix}/domainnames/{parent}/routingrules/{id}"),
        ),
        _ => return None,
    })
}

/// A portal's endpoint configuration as AWS answers it, from the one its caller gave
/// (`AcmManaged` with a certificate and a domain name, or `None` for the default domain).
fn portal_endpoint(ctx: &Context, id: &str, given: Option<&Value>) -> Value {
    let managed = given.and_then(|g| g.get("AcmManaged"));
    Value::map()
        .with_opt(
            "CertificateArn",
            managed.and_then(|m| m.str("CertificateArn")),
        )
        .with_opt("DomainName", managed.and_then(|m| m.str("DomainName")))
        .with(
            "PortalDefaultDomainName",
            format!("{id}.portal.execute-api.{}.amazonaws.com", ctx.region),
        )
        .with("PortalDomainHostedZoneId", "Z1UJRXOUMOOFQ8")
}

/// A REST endpoint page's display content as AWS answers it: the caller's overrides, else
/// the endpoint its identifier names.
fn endpoint_display(ctx: &Context, page: &Value) -> Value {
    let parts = page
        .get("RestEndpointIdentifier")
        .and_then(|r| r.get("IdentifierParts"));
    let part = |name| parts.and_then(|p| p.str(name)).unwrap_or_default();
    let overrides = page
        .get("DisplayContent")
        .and_then(|d| d.get("Overrides"))
        .cloned()
        .unwrap_or_else(Value::map);
    let endpoint = format!(
        "https://{}.execute-api.{}.amazonaws.com/{}{}",
        part("RestApiId"),
        ctx.region,
        part("Stage"),
        part("Path")
    );
    Value::map()
        .with_opt("Body", overrides.str("Body"))
        .with("Endpoint", overrides.str("Endpoint").unwrap_or(&endpoint))
        .with(
            "OperationName",
            overrides
                .str("OperationName")
                .map(str::to_string)
                .unwrap_or_else(|| format!("{} {}", part("Method"), part("Path"))),
        )
}

/// A document as the kind's get answers it (request-only shapes turned into answers).
fn answered(ctx: &Context, kind: Kind, mut doc: Value) -> Value {
    match kind {
        Kind::Portal => {
            let id = doc.str("PortalId").unwrap_or_default().to_string();
            let endpoint = portal_endpoint(ctx, &id, doc.get("EndpointConfiguration"));
            doc.insert("EndpointConfiguration", endpoint);
        }
        Kind::ProductRestEndpointPage => {
            let display = endpoint_display(ctx, &doc);
            doc.insert("DisplayContent", display);
        }
        _ => {}
    }
    doc
}

/// A document as the kind's list answers it (its summary shape).
fn summarized(ctx: &Context, kind: Kind, doc: Value) -> Value {
    let doc = answered(ctx, kind, doc);
    match kind {
        Kind::ProductPage => {
            let title = doc
                .get("DisplayContent")
                .and_then(|d| d.str("Title"))
                .unwrap_or_default()
                .to_string();
            doc.with("PageTitle", title)
        }
        Kind::ProductRestEndpointPage => {
            let display = doc
                .get("DisplayContent")
                .cloned()
                .unwrap_or_else(Value::map);
            doc.with_opt("Endpoint", display.str("Endpoint"))
                .with_opt("OperationName", display.str("OperationName"))
        }
        _ => doc,
    }
}

/// What AWS adds to a new resource of `kind`.
fn created(kind: Kind, mut doc: Value) -> Value {
    let now = now_iso();
    if matches!(kind, Kind::VpcLink | Kind::Portal | Kind::PortalProduct)
        && doc.get("Tags").is_none()
    {
        doc.insert("Tags", Value::map());
    }
    match kind {
        Kind::VpcLink => doc
            .with("CreatedDate", now)
            .with("VpcLinkStatus", "AVAILABLE")
            .with("VpcLinkStatusMessage", "VPC link is ready to route traffic")
            .with("VpcLinkVersion", "V2"),
        Kind::Portal => doc
            .with("LastModified", now)
            .with("PublishStatus", "DISABLED"),
        Kind::ProductRestEndpointPage => {
            let state = doc.str("TryItState").unwrap_or("DISABLED").to_string();
            doc.with("LastModified", now)
                .with("Status", "AVAILABLE")
                .with("TryItState", state)
        }
        Kind::RoutingRule => doc,
        _ => doc.with("LastModified", now),
    }
}

impl ApiGatewayV2 {
    /// Runs an operation of the stored kinds, or `None` when `operation` is not one.
    pub(super) fn stored_operation(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Option<Value>> {
        let output = match operation {
            "PublishPortal" | "DisablePortal" | "PreviewPortal" => {
                self.publish_portal(ctx, operation, input)?
            }
            "GetPortalProductSharingPolicy"
            | "PutPortalProductSharingPolicy"
            | "DeletePortalProductSharingPolicy" => self.sharing_policy(ctx, operation, input)?,
            _ => {
                let Some((verb, kind)) = resolve(operation) else {
                    return Ok(None);
                };
                self.stored(ctx, verb, kind, input)?
            }
        };
        Ok(Some(output))
    }

    /// The parent a kind's input names, after checking it exists.
    fn stored_parent<'a>(&self, ctx: &Context, kind: Kind, input: &'a Value) -> AwsResult<&'a str> {
        let Some(member) = parent_member(kind) else {
            return Ok("");
        };
        let parent = input.str(member).unwrap_or_default();
        let parent_kind = match kind {
            Kind::RoutingRule => Kind::Domain,
            _ => Kind::PortalProduct,
        };
        self.fetch(ctx, Key::of("", parent_kind, parent))?;
        Ok(parent)
    }

    fn stored(&self, ctx: &Context, verb: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let parent = self.stored_parent(ctx, kind, input)?;
        let place = |id| Key {
            parent,
            ..Key::of("", kind, id)
        };
        let addressing = [kind.id_member(), parent_member(kind).unwrap_or_default()];
        if verb == "List" {
            let items: Vec<Value> = self
                .list(ctx, "", kind, parent)?
                .into_iter()
                .map(|doc| summarized(ctx, kind, doc))
                .collect();
            let listed = page(items, input)?;
            if kind != Kind::RoutingRule {
                return Ok(listed);
            }
            return Ok(Value::map()
                .with_opt("RoutingRules", listed.get("Items").cloned())
                .with_opt("NextToken", listed.get("NextToken").cloned()));
        }
        if verb == "Create" {
            let id = kind.new_id();
            let mut doc =
                merged(Value::map(), input, &addressing).with(kind.id_member(), id.as_str());
            if let Some((member, arn)) = arn(ctx, kind, parent, &id) {
                doc.insert(member, arn);
            }
            let doc = created(kind, doc);
            self.check_priority(ctx, kind, parent, &doc)?;
            self.save(ctx, place(&id), &doc)?;
            return Ok(answered(ctx, kind, doc));
        }
        let id = input.str(kind.id_member()).unwrap_or_default();
        let doc = self.fetch(ctx, place(id))?;
        match verb {
            "Get" => Ok(answered(ctx, kind, doc)),
            "Delete" => {
                self.remove(ctx, place(id))?;
                Ok(Value::map())
            }
            _ => {
                let mut doc = merged(doc, input, &addressing);
                if doc.get("LastModified").is_some() {
                    doc.insert("LastModified", now_iso());
                }
                self.check_priority(ctx, kind, parent, &doc)?;
                self.save(ctx, place(id), &doc)?;
                Ok(answered(ctx, kind, doc))
            }
        }
    }

    /// A routing rule's priority is its domain name's alone, as AWS requires.
    fn check_priority(
        &self,
        ctx: &Context,
        kind: Kind,
        domain: &str,
        rule: &Value,
    ) -> AwsResult<()> {
        if kind != Kind::RoutingRule {
            return Ok(());
        }
        let priority = rule.int("Priority");
        let taken = self.list(ctx, "", kind, domain)?.iter().any(|other| {
            other.int("Priority") == priority
                && other.str("RoutingRuleId") != rule.str("RoutingRuleId")
        });
        if taken {
            return Err(conflict(format!(
                "A routing rule with priority {} already exists for domain name {domain}",
                priority.unwrap_or_default()
            )));
        }
        Ok(())
    }

    /// PublishPortal, DisablePortal and PreviewPortal: the portal's publish status and
    /// preview as AWS reports them once done.
    fn publish_portal(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let id = input.str("PortalId").unwrap_or_default();
        let key = Key::of("", Kind::Portal, id);
        let mut portal = self.fetch(ctx, key)?;
        match operation {
            "PublishPortal" => {
                portal.insert("PublishStatus", "PUBLISHED");
                portal.insert("LastPublished", now_iso());
                if let Some(description) = input.str("Description") {
                    portal.insert("LastPublishedDescription", description);
                }
            }
            "DisablePortal" => {
                if portal.str("PublishStatus") != Some("PUBLISHED") {
                    return Err(conflict("The portal is not published"));
                }
                portal.insert("PublishStatus", "DISABLED");
            }
            _ => {
                let url = format!(
                    "https://{id}.preview.portal.execute-api.{}.amazonaws.com",
                    ctx.region
                );
                portal.insert(
                    "Preview",
                    Value::map()
                        .with("PreviewStatus", "PREVIEW_READY")
                        .with("PreviewUrl", url),
                );
            }
        }
        self.save(ctx, key, &portal)?;
        Ok(Value::map())
    }

    /// A portal product's sharing policy, kept on the product.
    fn sharing_policy(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let id = input.str("PortalProductId").unwrap_or_default();
        let key = Key::of("", Kind::PortalProduct, id);
        let mut product = self.fetch(ctx, key)?;
        match operation {
            "PutPortalProductSharingPolicy" => {
                let policy = input.str("PolicyDocument").unwrap_or_default();
                if serde_json::from_str::<serde_json::Value>(policy).is_err() {
                    return Err(bad_request("Invalid policy document"));
                }
                product.insert("SharingPolicy", policy);
            }
            "DeletePortalProductSharingPolicy" => {
                if product.remove("SharingPolicy").is_none() {
                    return Err(Kind::PortalProduct.not_found(ctx, id));
                }
            }
            _ => {
                let policy = product
                    .str("SharingPolicy")
                    .ok_or_else(|| Kind::PortalProduct.not_found(ctx, id))?;
                return Ok(Value::map()
                    .with("PolicyDocument", policy)
                    .with("PortalProductId", id));
            }
        }
        self.save(ctx, key, &product)?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_name_their_verb_and_kind() {
        assert_eq!(resolve("CreateVpcLink"), Some(("Create", Kind::VpcLink)));
        assert_eq!(resolve("GetVpcLinks"), Some(("List", Kind::VpcLink)));
        assert_eq!(resolve("ListPortals"), Some(("List", Kind::Portal)));
        assert_eq!(
            resolve("GetPortalProduct"),
            Some(("Get", Kind::PortalProduct))
        );
        assert_eq!(
            resolve("PutRoutingRule"),
            Some(("Update", Kind::RoutingRule))
        );
        assert_eq!(
            resolve("ListProductRestEndpointPages"),
            Some(("List", Kind::ProductRestEndpointPage))
        );
        assert_eq!(resolve("CreateApi"), None);
    }
}
