//! Domain name access associations: a private custom domain name made reachable from a
//! VPC endpoint. They are stored and returned (by their ARN, AWS's
//! `.../domainnameaccessassociations/domainname/{name}+{id}/vpcesource/{vpce}`); no VPC
//! endpoint exists locally, so nothing else changes. Associations other accounts made to
//! the caller's domain names do not occur in Roto, so `resourceOwner=OTHER_ACCOUNTS` lists
//! none, and rejecting one removes the caller's own.

use roto_core::{AwsResult, Context, Value};
use serde_json::json;

use super::super::{bad_request, conflict, not_found, ApiGateway};
use super::{output, page, scope};

/// The store's kind of an association (named by its ARN).
const KIND: &str = "domainaccess";

/// The domain name an access association's `domainNameArn` names.
fn domain_of(arn: &str) -> Option<&str> {
    let (_, path) = arn.strip_prefix("arn:")?.split_once(":/domainnames/")?;
    Some(path.split('+').next().unwrap_or(path)).filter(|n| !n.is_empty())
}

impl ApiGateway {
    /// The domain name access association operations; `None` for other operations.
    pub(super) fn access_association_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        Some(match operation {
            "CreateDomainNameAccessAssociation" => self.create_association(ctx, input),
            "GetDomainNameAccessAssociations" => match input.str("resourceOwner") {
                Some("OTHER_ACCOUNTS") => page(Vec::new(), input),
                _ => self
                    .store
                    .list(scope(ctx, KIND, ""))
                    .and_then(|all| page(all, input)),
            },
            "DeleteDomainNameAccessAssociation" | "RejectDomainNameAccessAssociation" => {
                let arn = input
                    .str("domainNameAccessAssociationArn")
                    .unwrap_or_default();
                match self.store.delete(scope(ctx, KIND, ""), arn) {
                    Ok(true) => Ok(Value::map()),
                    Ok(false) => Err(not_found(format!(
                        "Invalid domain name access association identifier specified: {arn}"
                    ))),
                    Err(e) => Err(e),
                }
            }
            _ => return None,
        })
    }

    fn create_association(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let domain_arn = input.str("domainNameArn").unwrap_or_default();
        let invalid = || bad_request(format!("Invalid domain name ARN: {domain_arn}"));
        let name = domain_of(domain_arn).ok_or_else(invalid)?;
        self.store
            .get(scope(ctx, "domainname", ""), name)?
            .ok_or_else(invalid)?;
        let source = input.str("accessAssociationSource").unwrap_or_default();
        let qualified = domain_arn
            .split_once(":/domainnames/")
            .map_or(name, |(_, n)| n);
        let arn = format!(
            "arn:aws:apigateway:{}:{}:/domainnameaccessassociations/domainname/{qualified}/vpcesource/{source}",
            ctx.region, ctx.account
        );
        if self.store.get(scope(ctx, KIND, ""), &arn)?.is_some() {
            return Err(conflict(
                "An access association already exists for this domain name and source",
            ));
        }
        let mut doc = json!({
            "domainNameAccessAssociationArn": arn,
            "domainNameArn": domain_arn,
            "accessAssociationSourceType": input.str("accessAssociationSourceType"),
            "accessAssociationSource": source,
        });
        if let Some(tags) = input
            .get("tags")
            .filter(|t| t.as_map().is_some_and(|m| !m.is_empty()))
        {
            doc["tags"] = tags.to_json();
        }
        self.store.put(scope(ctx, KIND, ""), &arn, &doc)?;
        Ok(output(&doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_name_arns_name_the_domain() {
        assert_eq!(
            domain_of(
                "arn:aws:apigateway:us-east-1:123456789012:/domainnames/private.example.com+abc123"
            ),
            Some("private.example.com")
        );
        assert_eq!(
            domain_of("arn:aws:apigateway:us-east-1::/domainnames/api.example.com"),
            Some("api.example.com")
        );
        assert_eq!(domain_of("arn:aws:apigateway:us-east-1::/restapis/x"), None);
    }
}
