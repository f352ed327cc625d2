//! Custom domain names, their API mappings, and the tags of APIs, stages, domain names,
//! VPC links, portals and portal products (addressed by ARN:
//! `arn:aws:apigateway:{region}::/apis/{id}`, `.../stages/{name}`,
//! `arn:aws:apigateway:{region}::/domainnames/{name}`, `/vpclinks/{id}`, `/portals/{id}`,
//! `/portalproducts/{id}`).

use roto_core::{AwsResult, Context, Value};

use super::store::{Key, Kind};
use super::{bad_request, conflict, merged, now_iso, page, ApiGatewayV2};

/// The hosted zone of API Gateway's regional endpoints (us-east-1's; a placeholder
/// elsewhere, since nothing resolves it locally).
const HOSTED_ZONE: &str = "Z1UJRXOUMOOFQ8";

/// A domain name configuration as AWS completes it.
fn completed_configuration(ctx: &Context, given: Option<&Value>) -> Value {
    let target = format!(
        "d-{}.execute-api.{}.amazonaws.com",
        Kind::Api.new_id(),
        ctx.region
    );
    let mut config = Value::map()
        .with("ApiGatewayDomainName", target)
        .with("DomainNameStatus", "AVAILABLE")
        .with("EndpointType", "REGIONAL")
        .with("HostedZoneId", HOSTED_ZONE)
        .with("IpAddressType", "ipv4")
        .with("SecurityPolicy", "TLS_1_2");
    for (k, v) in given.and_then(Value::as_map).into_iter().flatten() {
        config.insert(k.clone(), v.clone());
    }
    if config.get("CertificateArn").is_some() {
        config.insert("CertificateUploadDate", now_iso());
    }
    config
}

/// The resource a tagging ARN names.
fn tagged(arn: &str) -> Option<(Kind, &str, &str)> {
    let path = arn.strip_prefix("arn:")?.splitn(5, ':').nth(4)?;
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["apis", api] => Some((Kind::Api, api, api)),
        ["apis", api, "stages", stage] => Some((Kind::Stage, api, stage)),
        ["domainnames", name] => Some((Kind::Domain, "", name)),
        ["vpclinks", id] => Some((Kind::VpcLink, "", id)),
        ["portals", id] => Some((Kind::Portal, "", id)),
        ["portalproducts", id] => Some((Kind::PortalProduct, "", id)),
        _ => None,
    }
}

impl ApiGatewayV2 {
    /// Runs a domain name, API mapping or tagging operation, or `None` when `operation` is
    /// not one.
    pub(super) fn domain_operation(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Option<Value>> {
        let run = match operation {
            "CreateDomainName" => Self::create_domain_name,
            "GetDomainName" => Self::get_domain_name,
            "GetDomainNames" => Self::get_domain_names,
            "UpdateDomainName" => Self::update_domain_name,
            "DeleteDomainName" => Self::delete_domain_name,
            "CreateApiMapping" => Self::create_api_mapping,
            "GetApiMapping" => Self::get_api_mapping,
            "GetApiMappings" => Self::get_api_mappings,
            "UpdateApiMapping" => Self::update_api_mapping,
            "DeleteApiMapping" => Self::delete_api_mapping,
            "GetTags" => Self::get_tags,
            "TagResource" => Self::tag_resource,
            "UntagResource" => Self::untag_resource,
            _ => return Ok(None),
        };
        run(self, ctx, input).map(Some)
    }

    fn domain_key<'a>(&self, ctx: &Context, input: &'a Value) -> AwsResult<(Key<'a>, Value)> {
        let key = Key::of(
            "",
            Kind::Domain,
            input.str("DomainName").unwrap_or_default(),
        );
        let domain = self.fetch(ctx, key)?;
        Ok((key, domain))
    }

    fn create_domain_name(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("DomainName").unwrap_or_default();
        let key = Key::of("", Kind::Domain, name);
        if self.load(ctx, key)?.is_some() {
            return Err(conflict(format!(
                "The domain name you provided already exists. DomainName: {name}"
            )));
        }
        let given = input
            .get("DomainNameConfigurations")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let configurations: Vec<Value> = if given.is_empty() {
            vec![completed_configuration(ctx, None)]
        } else {
            given
                .iter()
                .map(|c| completed_configuration(ctx, Some(c)))
                .collect()
        };
        let domain = merged(Value::map().with("Tags", Value::map()), input, &[])
            .with("ApiMappingSelectionExpression", "$request.basepath")
            .with("DomainNameConfigurations", configurations)
            .with(
                "DomainNameArn",
                format!("arn:aws:apigateway:{}::/domainnames/{name}", ctx.region),
            );
        self.save(ctx, key, &domain)?;
        Ok(domain)
    }

    fn get_domain_name(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Ok(self.domain_key(ctx, input)?.1)
    }

    fn get_domain_names(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        page(self.list(ctx, "", Kind::Domain, "")?, input)
    }

    fn update_domain_name(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mut domain) = self.domain_key(ctx, input)?;
        if let Some(given) = input
            .get("DomainNameConfigurations")
            .and_then(Value::as_list)
        {
            let configurations: Vec<Value> = given
                .iter()
                .map(|c| completed_configuration(ctx, Some(c)))
                .collect();
            domain.insert("DomainNameConfigurations", configurations);
        }
        if let Some(mtls) = input.get("MutualTlsAuthentication") {
            domain.insert("MutualTlsAuthentication", mtls.clone());
        }
        self.save(ctx, key, &domain)?;
        Ok(domain)
    }

    fn delete_domain_name(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, _) = self.domain_key(ctx, input)?;
        self.remove(ctx, key)?;
        Ok(Value::map())
    }

    /// Checks that a mapping's API and stage exist, and that its key is free.
    fn check_mapping(&self, ctx: &Context, domain: &str, mapping: &Value) -> AwsResult<()> {
        let api = mapping.str("ApiId").unwrap_or_default();
        self.fetch(ctx, Key::of(api, Kind::Api, api))?;
        let stage = mapping.str("Stage").unwrap_or_default();
        self.fetch(ctx, Key::of(api, Kind::Stage, stage))?;
        let key = mapping.str("ApiMappingKey").unwrap_or_default();
        let taken = self.list(ctx, "", Kind::Mapping, domain)?.iter().any(|m| {
            m.str("ApiMappingKey").unwrap_or_default() == key
                && m.str("ApiMappingId") != mapping.str("ApiMappingId")
        });
        if taken {
            return Err(conflict(format!(
                "ApiMapping key '{key}' already exists for this domain name"
            )));
        }
        Ok(())
    }

    fn create_api_mapping(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (domain, _) = self.domain_key(ctx, input)?;
        let id = Kind::Mapping.new_id();
        let mapping =
            merged(Value::map(), input, &["DomainName"]).with("ApiMappingId", id.as_str());
        self.check_mapping(ctx, domain.id, &mapping)?;
        let key = Key {
            parent: domain.id,
            ..Key::of("", Kind::Mapping, &id)
        };
        self.save(ctx, key, &mapping)?;
        Ok(mapping)
    }

    fn mapping_key<'a>(&self, ctx: &Context, input: &'a Value) -> AwsResult<(Key<'a>, Value)> {
        let (domain, _) = self.domain_key(ctx, input)?;
        let id = input.str("ApiMappingId").unwrap_or_default();
        let key = Key {
            parent: domain.id,
            ..Key::of("", Kind::Mapping, id)
        };
        let mapping = self.fetch(ctx, key)?;
        Ok((key, mapping))
    }

    fn get_api_mapping(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Ok(self.mapping_key(ctx, input)?.1)
    }

    fn get_api_mappings(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (domain, _) = self.domain_key(ctx, input)?;
        page(self.list(ctx, "", Kind::Mapping, domain.id)?, input)
    }

    fn update_api_mapping(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mapping) = self.mapping_key(ctx, input)?;
        let mapping = merged(mapping, input, &["DomainName", "ApiMappingId"]);
        self.check_mapping(ctx, key.parent, &mapping)?;
        self.save(ctx, key, &mapping)?;
        Ok(mapping)
    }

    fn delete_api_mapping(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, _) = self.mapping_key(ctx, input)?;
        self.remove(ctx, key)?;
        Ok(Value::map())
    }

    /// The key and document of the resource a tagging ARN names.
    fn tagged_resource<'a>(&self, ctx: &Context, arn: &'a str) -> AwsResult<(Key<'a>, Value)> {
        let (kind, api, id) =
            tagged(arn).ok_or_else(|| bad_request(format!("Invalid resource ARN: {arn}")))?;
        if kind == Kind::Stage {
            self.fetch(ctx, Key::of(api, Kind::Api, api))?;
        }
        let key = Key::of(api, kind, id);
        let doc = self.fetch(ctx, key)?;
        Ok((key, doc))
    }

    fn get_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, doc) = self.tagged_resource(ctx, input.str("ResourceArn").unwrap_or_default())?;
        Ok(Value::map().with("Tags", doc.get("Tags").cloned().unwrap_or_else(Value::map)))
    }

    fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mut doc) =
            self.tagged_resource(ctx, input.str("ResourceArn").unwrap_or_default())?;
        let mut tags = doc.get("Tags").cloned().unwrap_or_else(Value::map);
        for (k, v) in input
            .get("Tags")
            .and_then(Value::as_map)
            .into_iter()
            .flatten()
        {
            tags.insert(k.clone(), v.clone());
        }
        doc.insert("Tags", tags);
        self.save(ctx, key, &doc)?;
        Ok(Value::map())
    }

    fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mut doc) =
            self.tagged_resource(ctx, input.str("ResourceArn").unwrap_or_default())?;
        let mut tags = doc.get("Tags").cloned().unwrap_or_else(Value::map);
        for k in input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            if let Some(k) = k.as_str() {
                tags.remove(k);
            }
        }
        doc.insert("Tags", tags);
        self.save(ctx, key, &doc)?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagging_arns_name_apis_stages_and_domain_names() {
        let api = tagged("arn:aws:apigateway:us-east-1::/apis/abc123defg").unwrap();
        assert_eq!(
            (api.0, api.1, api.2),
            (Kind::Api, "abc123defg", "abc123defg")
        );
        let stage = tagged("arn:aws:apigateway:us-east-1::/apis/a/stages/$default").unwrap();
        assert_eq!((stage.0, stage.1, stage.2), (Kind::Stage, "a", "$default"));
        let domain = tagged("arn:aws:apigateway:eu-west-1::/domainnames/api.example.com").unwrap();
        assert_eq!((domain.0, domain.2), (Kind::Domain, "api.example.com"));
        let link = tagged("arn:aws:apigateway:us-east-1::/vpclinks/x").unwrap();
        assert_eq!((link.0, link.2), (Kind::VpcLink, "x"));
        assert!(tagged("arn:aws:apigateway:us-east-1::/restapis/x").is_none());
        assert!(tagged("nonsense").is_none());
    }
}
