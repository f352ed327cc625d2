//! Identity providers: OpenID Connect (EKS service accounts, CI federation) and SAML.
//!
//! Both are entities named in their ARN (`oidc-provider/<host/path>`,
//! `saml-provider/<name>`) and addressed by that ARN; their lists carry the ARNs.

use roto_core::{AwsResult, Value};
use rusqlite::Connection;
use serde_json::Value as Json;

use super::principals::input_tags;
use super::store::{self, Entity, Kind};
use super::{now, required, tag_values, validation_error, Iam};

/// The member each provider kind's operations name it by.
pub(super) fn arn_member(kind: Kind) -> &'static str {
    match kind {
        Kind::OidcProvider => "OpenIDConnectProviderArn",
        _ => "SAMLProviderArn",
    }
}

fn string_list(e: &Entity, attr: &str) -> Vec<Value> {
    e.attrs
        .get(attr)
        .and_then(Json::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Json::as_str)
                .map(Value::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The `validUntil` a SAML metadata document declares, if any.
fn valid_until(metadata: &str) -> Option<i64> {
    let (_, rest) = metadata.split_once("validUntil=")?;
    let quote = rest.chars().next()?;
    let value = rest[1..].split(quote).next()?;
    roto_core::timestamp::parse(value)
}

fn new_provider(kind: Kind, name: &str, input: &Value) -> AwsResult<Entity> {
    Ok(Entity {
        kind,
        name: name.to_string(),
        id: String::new(),
        path: "/".to_string(),
        created: now(),
        tags: input_tags(input)?,
        attrs: serde_json::Map::new(),
    })
}

impl Iam {
    /// The provider of `kind` an ARN names, or IAM's "not found" for that ARN.
    pub(super) fn provider(
        &self,
        c: &Connection,
        account: &str,
        kind: Kind,
        arn: &str,
    ) -> AwsResult<Entity> {
        let prefix = format!("arn:aws:iam::{account}:{}/", kind.as_str());
        let name = arn.strip_prefix(&prefix).unwrap_or_default();
        let found = match name.is_empty() {
            true => None,
            false => store::find(c, account, kind, name)?,
        };
        found.ok_or_else(|| kind.not_found(arn))
    }

    /// `CreateOpenIDConnectProvider`.
    pub(super) fn create_oidc_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let url = required(input, "Url");
        let host = url
            .strip_prefix("https://")
            .filter(|h| !h.is_empty())
            .ok_or_else(|| validation_error("Invalid Open ID Connect Provider URL"))?;
        let mut e = new_provider(Kind::OidcProvider, host, input)?;
        e.attrs
            .insert("ClientIDList".into(), input.strings("ClientIDList").into());
        e.attrs.insert(
            "ThumbprintList".into(),
            input.strings("ThumbprintList").into(),
        );
        self.env.store.transaction(|c| {
            store::insert(c, account, &e)?;
            Ok(Value::map()
                .with("OpenIDConnectProviderArn", e.arn(account))
                .with_opt("Tags", (!e.tags.is_empty()).then(|| tag_values(&e))))
        })
    }

    /// `GetOpenIDConnectProvider`.
    pub(super) fn get_oidc_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = self.provider(
                c,
                account,
                Kind::OidcProvider,
                required(input, "OpenIDConnectProviderArn"),
            )?;
            Ok(Value::map()
                .with("Url", e.name.as_str())
                .with("ClientIDList", string_list(&e, "ClientIDList"))
                .with("ThumbprintList", string_list(&e, "ThumbprintList"))
                .with("CreateDate", Value::Timestamp(e.created))
                .with("Tags", tag_values(&e))
                .with_opt(
                    "ContextProvider",
                    e.attrs.get("ContextProvider").map(Value::from_json),
                )
                .with_opt(
                    "IdentityCenterInstanceArn",
                    e.attr("IdentityCenterInstanceArn"),
                ))
        })
    }

    /// `UpdateOpenIDConnectProvider`: sets or removes the provider's context provider and
    /// Identity Center instance.
    pub(super) fn update_oidc_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut e = self.provider(
                c,
                account,
                Kind::OidcProvider,
                required(input, "OpenIDConnectProviderArn"),
            )?;
            if let Some(provider) = input.get("ContextProvider") {
                e.attrs.insert("ContextProvider".into(), provider.to_json());
            }
            if let Some(arn) = input.str("IdentityCenterInstanceArn") {
                e.attrs
                    .insert("IdentityCenterInstanceArn".into(), arn.into());
            }
            if input.bool("RemoveContextProvider") == Some(true) {
                e.attrs.remove("ContextProvider");
            }
            if input.bool("RemoveIdentityCenterInstance") == Some(true) {
                e.attrs.remove("IdentityCenterInstanceArn");
            }
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// `AddClientIDToOpenIDConnectProvider`, `RemoveClientIDFromOpenIDConnectProvider` and
    /// `UpdateOpenIDConnectProviderThumbprint`: edits to the provider's two lists.
    pub(super) fn edit_oidc_provider(
        &self,
        account: &str,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut e = self.provider(
                c,
                account,
                Kind::OidcProvider,
                required(input, "OpenIDConnectProviderArn"),
            )?;
            let client = Json::from(input.str("ClientID").unwrap_or_default());
            let mut clients: Vec<Json> = e
                .attrs
                .get("ClientIDList")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            match operation {
                "AddClientIDToOpenIDConnectProvider" if !clients.contains(&client) => {
                    clients.push(client)
                }
                "RemoveClientIDFromOpenIDConnectProvider" => clients.retain(|c| *c != client),
                "UpdateOpenIDConnectProviderThumbprint" => {
                    e.attrs.insert(
                        "ThumbprintList".into(),
                        input.strings("ThumbprintList").into(),
                    );
                }
                _ => {}
            }
            e.attrs.insert("ClientIDList".into(), clients.into());
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// `CreateSAMLProvider`.
    pub(super) fn create_saml_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let name = required(input, "Name");
        let mut e = new_provider(Kind::SamlProvider, name, input)?;
        let metadata = required(input, "SAMLMetadataDocument");
        e.attrs
            .insert("SAMLMetadataDocument".into(), metadata.into());
        self.env.store.transaction(|c| {
            store::insert(c, account, &e)?;
            Ok(Value::map()
                .with("SAMLProviderArn", e.arn(account))
                .with_opt("Tags", (!e.tags.is_empty()).then(|| tag_values(&e))))
        })
    }

    /// `GetSAMLProvider`.
    pub(super) fn get_saml_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = self.provider(
                c,
                account,
                Kind::SamlProvider,
                required(input, "SAMLProviderArn"),
            )?;
            let metadata = e.attr("SAMLMetadataDocument").unwrap_or_default();
            Ok(Value::map()
                .with("SAMLMetadataDocument", metadata)
                .with("CreateDate", Value::Timestamp(e.created))
                .with_opt("ValidUntil", valid_until(metadata).map(Value::Timestamp))
                .with("Tags", tag_values(&e)))
        })
    }

    /// `UpdateSAMLProvider`: a new metadata document.
    pub(super) fn update_saml_provider(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut e = self.provider(
                c,
                account,
                Kind::SamlProvider,
                required(input, "SAMLProviderArn"),
            )?;
            if let Some(metadata) = input.str("SAMLMetadataDocument") {
                e.attrs
                    .insert("SAMLMetadataDocument".into(), metadata.into());
            }
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map().with("SAMLProviderArn", e.arn(account)))
        })
    }

    /// `DeleteOpenIDConnectProvider` (a missing one is no error, as in IAM) and
    /// `DeleteSAMLProvider`.
    pub(super) fn delete_provider(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            match self.provider(c, account, kind, required(input, arn_member(kind))) {
                Ok(e) => store::delete(c, account, kind, &e.name)?,
                Err(_) if kind == Kind::OidcProvider => {}
                Err(e) => return Err(e),
            }
            Ok(Value::map())
        })
    }

    /// `ListOpenIDConnectProviders`, `ListSAMLProviders`.
    pub(super) fn list_providers(&self, account: &str, kind: Kind) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let mut all = store::list(c, account, kind, "/")?;
            all.sort_by_key(|e| e.name.to_lowercase());
            let items: Vec<Value> = all
                .iter()
                .map(|e| {
                    let mut v = Value::map().with("Arn", e.arn(account));
                    if kind == Kind::SamlProvider {
                        v.insert("CreateDate", Value::Timestamp(e.created));
                        let until = valid_until(e.attr("SAMLMetadataDocument").unwrap_or_default());
                        if let Some(until) = until {
                            v.insert("ValidUntil", Value::Timestamp(until));
                        }
                    }
                    v
                })
                .collect();
            Ok(Value::map().with(kind.list_member(), items))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saml_validity_comes_from_the_metadata() {
        let doc = r#"<EntityDescriptor validUntil="2030-01-01T00:00:00Z" entityID="x">"#;
        assert_eq!(
            valid_until(doc),
            roto_core::timestamp::parse("2030-01-01T00:00:00Z")
        );
        assert_eq!(valid_until("<EntityDescriptor/>"), None);
    }
}
