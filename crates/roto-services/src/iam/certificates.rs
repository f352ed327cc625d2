//! Server certificates (the IAM store of TLS certificates that load balancers used before
//! ACM): uploaded, described, renamed and deleted, never parsed beyond their PEM armour.

use roto_core::{AwsError, AwsResult, Value};

use super::principals::new_entity;
use super::store::{self, Entity, Kind};
use super::{listing, page, path_of, path_prefix, required, tag_values, Iam};

fn metadata(account: &str, e: &Entity) -> Value {
    Value::map()
        .with("Path", e.path.as_str())
        .with("ServerCertificateName", e.name.as_str())
        .with("ServerCertificateId", e.id.as_str())
        .with("Arn", e.arn(account))
        .with("UploadDate", Value::Timestamp(e.created))
}

fn check_pem(text: &str, what: &str) -> AwsResult<()> {
    if text.contains("-----BEGIN ") && text.contains("-----END ") {
        return Ok(());
    }
    Err(AwsError::new(
        "MalformedCertificateException",
        format!("Unable to parse {what}. Please ensure the {what} is in PEM format."),
    ))
}

impl Iam {
    /// `UploadServerCertificate`.
    pub(super) fn upload_server_certificate(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let body = required(input, "CertificateBody");
        check_pem(body, "certificate")?;
        check_pem(required(input, "PrivateKey"), "private key")?;
        let mut e = new_entity(Kind::ServerCertificate, input)?;
        e.attrs.insert("CertificateBody".into(), body.into());
        if let Some(chain) = input.str("CertificateChain") {
            check_pem(chain, "certificate chain")?;
            e.attrs.insert("CertificateChain".into(), chain.into());
        }
        self.env
            .store
            .transaction(|c| store::insert(c, account, &e))?;
        Ok(Value::map()
            .with("ServerCertificateMetadata", metadata(account, &e))
            .with_opt("Tags", (!e.tags.is_empty()).then(|| tag_values(&e))))
    }

    /// `GetServerCertificate`.
    pub(super) fn get_server_certificate(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let e = self.env.store.with(|c| {
            store::get(
                c,
                account,
                Kind::ServerCertificate,
                required(input, "ServerCertificateName"),
            )
        })?;
        let certificate = Value::map()
            .with("ServerCertificateMetadata", metadata(account, &e))
            .with(
                "CertificateBody",
                e.attr("CertificateBody").unwrap_or_default(),
            )
            .with_opt("CertificateChain", e.attr("CertificateChain"))
            .with("Tags", tag_values(&e));
        Ok(Value::map().with("ServerCertificate", certificate))
    }

    /// `ListServerCertificates`.
    pub(super) fn list_server_certificates(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = path_prefix(input);
        let all = self
            .env
            .store
            .with(|c| store::list(c, account, Kind::ServerCertificate, &prefix))?;
        let (items, next) = page(all, |e| e.name.to_lowercase(), input)?;
        let values = items.iter().map(|e| metadata(account, e)).collect();
        Ok(listing("ServerCertificateMetadataList", values, next))
    }

    /// `UpdateServerCertificate`: a new name and/or path.
    pub(super) fn update_server_certificate(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let kind = Kind::ServerCertificate;
            let mut e = store::get(c, account, kind, required(input, "ServerCertificateName"))?;
            let old = e.name.clone();
            if input.get("NewPath").is_some() {
                e.path = path_of(input, "NewPath");
            }
            if let Some(new) = input.str("NewServerCertificateName") {
                if !new.eq_ignore_ascii_case(&old) && store::find(c, account, kind, new)?.is_some()
                {
                    return Err(kind.exists(new));
                }
                e.name = new.to_string();
            }
            store::update(c, account, &old, &e)?;
            Ok(Value::map())
        })
    }

    /// `DeleteServerCertificate`.
    pub(super) fn delete_server_certificate(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let kind = Kind::ServerCertificate;
            let e = store::get(c, account, kind, required(input, "ServerCertificateName"))?;
            store::delete(c, account, kind, &e.name)?;
            Ok(Value::map())
        })
    }
}
