//! Signing certificates (the X.509 certificates some older AWS APIs took for SOAP
//! signing): at most two per user, each certificate once in the account. A body must be a
//! PEM `CERTIFICATE` whose DER is shaped as X.509 says (the to-be-signed part with its
//! serial number, algorithm, issuer, validity, subject and public key, then the signature
//! algorithm and signature); the signature itself is not checked.

use base64::Engine;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::credentials::{check_quota, credential_id, new_credential};
use super::store::{self, Credential, Family};
use super::{listing, page, required, Iam};

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;
const VERSION: u8 = 0xa0;

/// One DER element: its tag and its contents, and what follows it.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = match first {
        n if n < 0x80 => (usize::from(n), rest),
        0x81..=0x84 => {
            let width = usize::from(first & 0x7f);
            let bytes = rest.get(..width)?;
            let len = bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b));
            (len, &rest[width..])
        }
        _ => return None,
    };
    let contents = rest.get(..len)?;
    Some((tag, contents, &rest[len..]))
}

/// Reads an element of tag `tag` off the front of `der`.
fn expect<'a>(der: &mut &'a [u8], tag: u8) -> Option<&'a [u8]> {
    let (found, contents, rest) = element(der)?;
    if found != tag {
        return None;
    }
    *der = rest;
    Some(contents)
}

/// Whether `der` is one X.509 certificate and nothing more.
fn is_certificate(der: &[u8]) -> bool {
    let check = || -> Option<()> {
        let mut outer = der;
        let mut certificate = expect(&mut outer, SEQUENCE)?;
        if !outer.is_empty() {
            return None;
        }
        let mut tbs = expect(&mut certificate, SEQUENCE)?;
        expect(&mut certificate, SEQUENCE)?;
        expect(&mut certificate, BIT_STRING)?;
        if !certificate.is_empty() {
            return None;
        }
        if tbs.first() == Some(&VERSION) {
            expect(&mut tbs, VERSION)?;
        }
        expect(&mut tbs, INTEGER)?;
        expect(&mut tbs, SEQUENCE)?;
        expect(&mut tbs, SEQUENCE)?;
        let mut validity = expect(&mut tbs, SEQUENCE)?;
        for _ in 0..2 {
            let (tag, _, rest) = element(validity)?;
            if tag != UTC_TIME && tag != GENERALIZED_TIME {
                return None;
            }
            validity = rest;
        }
        expect(&mut tbs, SEQUENCE)?;
        expect(&mut tbs, SEQUENCE)?;
        Some(())
    };
    check().is_some()
}

/// The DER of the first PEM `CERTIFICATE` in `body`, if it is an X.509 certificate.
fn certificate_der(body: &str) -> Option<Vec<u8>> {
    let (_, rest) = body.split_once("-----BEGIN CERTIFICATE-----")?;
    let (armoured, _) = rest.split_once("-----END CERTIFICATE-----")?;
    let text: String = armoured.chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    is_certificate(&der).then_some(der)
}

fn certificate_value(cred: &Credential) -> Value {
    Value::map()
        .with("UserName", cred.user.as_str())
        .with("CertificateId", cred.id.as_str())
        .with("CertificateBody", cred.attr("Body").unwrap_or_default())
        .with("Status", cred.status.as_str())
        .with("UploadDate", Value::Timestamp(cred.created))
}

impl Iam {
    /// `UploadSigningCertificate`.
    pub(super) fn upload_signing_certificate(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let account = &ctx.account;
        let body = required(input, "CertificateBody");
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            let der = certificate_der(body).ok_or_else(|| {
                AwsError::new(
                    "MalformedCertificateException",
                    format!("Certificate {body} is malformed."),
                )
            })?;
            let all = store::credentials(c, account, Family::SigningCertificate, None)?;
            if all
                .iter()
                .any(|k| certificate_der(k.attr("Body").unwrap_or_default()) == Some(der.clone()))
            {
                return Err(AwsError::new(
                    "DuplicateCertificateException",
                    "The same certificate is already associated with an IAM user in this account.",
                ));
            }
            let held = all
                .iter()
                .filter(|k| k.user.eq_ignore_ascii_case(&user))
                .count();
            check_quota(Family::SigningCertificate, held)?;
            let mut cred = new_credential(credential_id("", 32), &user);
            cred.attrs.insert("Body".into(), body.into());
            store::put_credential(c, account, Family::SigningCertificate, &cred)?;
            Ok(Value::map().with("Certificate", certificate_value(&cred)))
        })
    }

    /// `ListSigningCertificates`: the user's (or the caller's) certificates.
    pub(super) fn list_signing_certificates(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let Some(user) = self.listed_user(c, ctx, input)? else {
                return Ok(listing("Certificates", Vec::new(), None));
            };
            let certs =
                store::credentials(c, &ctx.account, Family::SigningCertificate, Some(&user))?;
            let (certs, next) = page(certs, |k| format!("{:020}{}", k.created, k.id), input)?;
            Ok(listing(
                "Certificates",
                certs.iter().map(certificate_value).collect(),
                next,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate (`openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256`).
    const PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBfjCCASOgAwIBAgIURKTKWfvBF1vL+j4KXIJm9Uocw5YwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJcm90by10ZXN0MB4XDTI2MTIwMzA2NDgxNVoXDTM2MTEzMDA2
NDgxNVowFDESMBAGA1UEAwwJcm90by10ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAE7etSoLTnkE4iEx3Kvnq8TGMt4r5/diigOXh5UztjjDmt92sVbGTCUhBL
xAV4u+LSeTr1EnLpO1OFLR9pR9oGgqNTMFEwHQYDVR0OBBYEFEMHF0mx4VpYLWb6
/SU8+Y97sWvCMB8GA1UdIwQYMBaAFEMHF0mx4VpYLWb6/SU8+Y97sWvCMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhALAaSbrndP15h0iKusoHesHq
dtkhU7irQ2FCGmx2aY9LAiEAyfeeN32P2XgtVopdmk50jk9nfoGXV6ust5RRa8li
8ok=
-----END CERTIFICATE-----
";

    #[test]
    fn x509_certificates_parse() {
        assert!(certificate_der(PEM).is_some());
    }

    #[test]
    fn armour_without_a_certificate_is_refused() {
        assert!(certificate_der("not a certificate").is_none());
        let junk = "-----BEGIN CERTIFICATE-----\nMIIBAAAA\n-----END CERTIFICATE-----";
        assert!(certificate_der(junk).is_none());
        let truncated = PEM.replace("8ok=\n", "");
        assert!(certificate_der(&truncated).is_none());
    }
}
