//! What federated sign-ins carry: the claims of an OIDC web identity token and the
//! attributes of a SAML assertion, read (never verified) for the answers AWS gives.

use base64::Engine;

/// The claims of a web identity token that STS echoes back.
#[derive(Debug, Default, PartialEq)]
pub(super) struct WebIdentity {
    /// `iss`, without its scheme (`oidc.eks.us-east-1.amazonaws.com/id/X`).
    pub issuer: Option<String>,
    /// `sub`.
    pub subject: Option<String>,
    /// `aud` (its first value when a list).
    pub audience: Option<String>,
    /// The session tags of the `https://aws.amazon.com/tags` claim's `principal_tags`.
    pub tags: Vec<(String, String)>,
}

/// The claims of a JWT; tokens that are not JWTs have none.
pub(super) fn web_identity(token: &str) -> WebIdentity {
    let Some(payload) = token.split('.').nth(1) else {
        return WebIdentity::default();
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .unwrap_or_default();
    let claims: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    WebIdentity {
        issuer: claims.get("iss").and_then(text).map(|iss| {
            iss.strip_prefix("https://")
                .map(str::to_string)
                .unwrap_or(iss)
        }),
        subject: claims.get("sub").and_then(text),
        audience: claims.get("aud").and_then(|aud| match aud {
            serde_json::Value::Array(items) => items.first().and_then(text),
            other => text(other),
        }),
        tags: claims
            .pointer("/https:~1~1aws.amazon.com~1tags/principal_tags")
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(key, values)| {
                let value = match values {
                    serde_json::Value::Array(items) => items.first().and_then(text),
                    other => text(other),
                };
                Some((key.clone(), value?))
            })
            .collect(),
    }
}

/// What a SAML assertion says that STS uses or echoes back.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SamlAssertion {
    pub session_name: Option<String>,
    pub duration: Option<i64>,
    pub subject: Option<String>,
    pub subject_type: Option<String>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    /// The session tags of its `PrincipalTag:<key>` attributes.
    pub tags: Vec<(String, String)>,
    /// The keys its `TransitiveTagKeys` attribute makes transitive.
    pub transitive: Vec<String>,
}

const ATTRIBUTES: &str = "https://aws.amazon.com/SAML/Attributes/";

/// The assertion in a base64 `SAMLResponse`; `None` when it is not base64 text.
pub(super) fn saml(encoded: &str) -> Option<SamlAssertion> {
    let compact: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()?;
    let xml = String::from_utf8(bytes).ok()?;
    let name_id = element(&xml, "NameID");
    let subject_type = name_id.as_ref().and_then(|(attrs, _)| {
        let format = attribute(attrs, "Format")?;
        Some(match format.rsplit(':').next() {
            Some(short @ ("persistent" | "transient")) => short.to_string(),
            _ => format,
        })
    });
    Some(SamlAssertion {
        session_name: attribute_value(&xml, "RoleSessionName"),
        duration: attribute_value(&xml, "SessionDuration").and_then(|d| d.parse().ok()),
        subject: name_id.map(|(_, text)| text),
        subject_type,
        issuer: element(&xml, "Issuer").map(|(_, text)| text),
        audience: element(&xml, "Audience").map(|(_, text)| text),
        tags: principal_tags(&xml),
        transitive: attribute_values(&xml, "TransitiveTagKeys"),
    })
}

/// The `PrincipalTag:<key>` attributes' keys and first values.
fn principal_tags(xml: &str) -> Vec<(String, String)> {
    let marker = format!("{ATTRIBUTES}PrincipalTag:");
    xml.match_indices(&marker)
        .filter_map(|(at, _)| {
            let rest = &xml[at + marker.len()..];
            let key = rest.split(['"', '\'']).next()?;
            let (_, value) = element(rest, "AttributeValue")?;
            Some((key.to_string(), value))
        })
        .collect()
}

/// Every `AttributeValue` of the AWS SAML attribute `name`.
fn attribute_values(xml: &str, name: &str) -> Vec<String> {
    let marker = format!("{ATTRIBUTES}{name}");
    let Some(at) = xml.find(&marker) else {
        return Vec::new();
    };
    let rest = &xml[at..];
    let body = &rest[..rest.find("Attribute>").unwrap_or(rest.len())];
    body.split('<')
        .filter_map(|segment| {
            let (tag, text) = segment.split_once('>')?;
            let name = tag.split([' ', '\t', '\r', '\n']).next()?;
            let value = !name.starts_with('/') && name.rsplit(':').next() == Some("AttributeValue");
            value.then(|| text.trim().to_string())
        })
        .collect()
}

/// The first element named `local` (any namespace prefix): its attributes and text.
fn element(xml: &str, local: &str) -> Option<(String, String)> {
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let end = rest.find(['>', ' ', '\t', '\r', '\n', '/'])?;
        let name = &rest[..end];
        if name.rsplit(':').next() == Some(local) {
            let close = rest.find('>')?;
            let attrs = rest[end..close].trim_end_matches('/').to_string();
            let body = &rest[close + 1..];
            let text = body
                .split('<')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            return Some((attrs, text));
        }
    }
    None
}

/// An attribute's value in an element's attribute text.
fn attribute(attrs: &str, name: &str) -> Option<String> {
    let (_, rest) = attrs.split_once(&format!("{name}="))?;
    let quote = rest.chars().next()?;
    Some(rest[1..].split(quote).next()?.to_string())
}

/// The first `AttributeValue` of the AWS SAML attribute `name`.
fn attribute_value(xml: &str, name: &str) -> Option<String> {
    let marker = format!("{ATTRIBUTES}{name}");
    let at = xml.find(&marker)?;
    element(&xml[at..], "AttributeValue").map(|(_, text)| text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_claims_are_read_and_other_tokens_have_none() {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"iss":"https://oidc.example.com/id/1","sub":"system:sa","aud":["sts.amazonaws.com"]}"#);
        let token = format!("eyJhbGciOiJSUzI1NiJ9.{claims}.sig");
        assert_eq!(
            web_identity(&token),
            WebIdentity {
                issuer: Some("oidc.example.com/id/1".into()),
                subject: Some("system:sa".into()),
                audience: Some("sts.amazonaws.com".into()),
                tags: Vec::new(),
            }
        );
        assert_eq!(web_identity("opaque"), WebIdentity::default());
    }

    #[test]
    fn saml_assertions_give_session_name_duration_and_subject() {
        let xml = r#"<samlp:Response><saml:Issuer>https://idp.example.com</saml:Issuer><saml:Assertion>
<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">alice</saml:NameID></saml:Subject>
<saml:Audience>https://signin.aws.amazon.com/saml</saml:Audience>
<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/RoleSessionName"><saml:AttributeValue>alice@example.com</saml:AttributeValue></saml:Attribute>
<saml:Attribute Name="https://aws.amazon.com/SAML/Attributes/SessionDuration"><saml:AttributeValue>1800</saml:AttributeValue></saml:Attribute>
</saml:Assertion></samlp:Response>"#;
        let encoded = base64::engine::general_purpose::STANDARD.encode(xml);
        let a = saml(&encoded).unwrap();
        assert_eq!(a.session_name.as_deref(), Some("alice@example.com"));
        assert_eq!(a.duration, Some(1800));
        assert_eq!(a.subject.as_deref(), Some("alice"));
        assert_eq!(a.subject_type.as_deref(), Some("persistent"));
        assert_eq!(a.issuer.as_deref(), Some("https://idp.example.com"));
        assert_eq!(
            a.audience.as_deref(),
            Some("https://signin.aws.amazon.com/saml")
        );
        assert_eq!(saml("%%%"), None);
    }
}
