//! SSH public keys (CodeCommit's SSH access): RSA keys of at least 2048 bits, uploaded in
//! OpenSSH (`ssh-rsa AAAA...`) or PEM form and read back in either. The fingerprint is
//! what `ssh-keygen -l -E md5` prints: the MD5 of the OpenSSH key blob, as colon-separated
//! hex.

use base64::Engine;
use md5::{Digest, Md5};
use roto_core::{AwsError, AwsResult, Context, Value};
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::{DecodePublicKey, EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::{BigUint, RsaPublicKey};

use super::credentials::{check_quota, credential_id, new_credential};
use super::store::{self, Credential, Family};
use super::{listing, page, required, Iam};

const MIN_BITS: usize = 2048;

fn invalid_key() -> AwsError {
    AwsError::new(
        "InvalidPublicKeyException",
        "The public key is malformed or otherwise invalid.",
    )
}

fn unrecognized_encoding() -> AwsError {
    AwsError::new(
        "UnrecognizedPublicKeyEncodingException",
        "The public key encoding format is unsupported or unrecognized: upload ssh-rsa or PEM.",
    )
}

/// A parsed SSH public key: the RSA key and the OpenSSH text it reads back as.
#[derive(Debug)]
struct SshKey {
    key: RsaPublicKey,
    openssh: String,
}

/// Reads one length-prefixed field of an OpenSSH key blob.
fn field<'a>(blob: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    let value = blob.get(4..4 + len)?;
    *blob = &blob[4 + len..];
    Some(value)
}

/// The OpenSSH blob of an RSA key: `ssh-rsa`, then the exponent and modulus as mpints.
fn openssh_blob(key: &RsaPublicKey) -> Vec<u8> {
    let mut blob = Vec::new();
    let mut push = |bytes: &[u8]| {
        blob.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        blob.extend_from_slice(bytes);
    };
    push(b"ssh-rsa");
    for number in [key.e(), key.n()] {
        let mut bytes = number.to_bytes_be();
        if bytes.first().is_some_and(|b| b & 0x80 != 0) {
            bytes.insert(0, 0);
        }
        push(&bytes);
    }
    blob
}

/// Parses an uploaded key body.
fn parse(body: &str) -> AwsResult<SshKey> {
    let body = body.trim();
    let codec = base64::engine::general_purpose::STANDARD;
    let key = if body.starts_with("-----BEGIN") {
        RsaPublicKey::from_public_key_pem(body)
            .or_else(|_| RsaPublicKey::from_pkcs1_pem(body))
            .map_err(|_| invalid_key())?
    } else if body.starts_with("ssh-") {
        let mut words = body.split_whitespace();
        let (kind, data) = (words.next(), words.next());
        let blob = data
            .and_then(|d| codec.decode(d).ok())
            .ok_or_else(invalid_key)?;
        let mut rest = blob.as_slice();
        let (Some(b"ssh-rsa"), Some(e), Some(n), Some("ssh-rsa")) =
            (field(&mut rest), field(&mut rest), field(&mut rest), kind)
        else {
            return Err(invalid_key());
        };
        RsaPublicKey::new(BigUint::from_bytes_be(n), BigUint::from_bytes_be(e))
            .map_err(|_| invalid_key())?
    } else {
        return Err(unrecognized_encoding());
    };
    if key.n().bits() < MIN_BITS {
        return Err(invalid_key());
    }
    let openssh = match body.starts_with("ssh-") {
        true => body.to_string(),
        false => format!("ssh-rsa {}", codec.encode(openssh_blob(&key))),
    };
    Ok(SshKey { key, openssh })
}

/// The MD5 fingerprint of a key, as `ssh-keygen -E md5` shows it.
fn fingerprint(key: &RsaPublicKey) -> String {
    Md5::digest(openssh_blob(key))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn metadata(cred: &Credential) -> Value {
    Value::map()
        .with("UserName", cred.user.as_str())
        .with("SSHPublicKeyId", cred.id.as_str())
        .with("Status", cred.status.as_str())
        .with("UploadDate", Value::Timestamp(cred.created))
}

/// A key in full, its body in `encoding` (`SSH` or `PEM`, the model's enum).
fn key_value(cred: &Credential, encoding: &str) -> AwsResult<Value> {
    let key = parse(cred.attr("Body").unwrap_or_default())?;
    let body = match encoding {
        "PEM" => key
            .key
            .to_public_key_pem(LineEnding::LF)
            .map_err(|_| invalid_key())?,
        _ => key.openssh,
    };
    Ok(metadata(cred)
        .with("Fingerprint", cred.attr("Fingerprint").unwrap_or_default())
        .with("SSHPublicKeyBody", body))
}

impl Iam {
    /// `UploadSSHPublicKey`: at most five keys per user, each once.
    pub(super) fn upload_ssh_public_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let account = &ctx.account;
        self.env.store.transaction(|c| {
            let user = self.user_name(c, ctx, input)?;
            let key = parse(required(input, "SSHPublicKeyBody"))?;
            let print = fingerprint(&key.key);
            let held = store::credentials(c, account, Family::SshKey, Some(&user))?;
            if held
                .iter()
                .any(|k| k.attr("Fingerprint") == Some(print.as_str()))
            {
                return Err(AwsError::new(
                    "DuplicateSSHPublicKeyException",
                    "The SSH public key is already associated with the specified IAM user.",
                ));
            }
            check_quota(Family::SshKey, held.len())?;
            let mut cred = new_credential(credential_id("APKA", 21), &user);
            cred.attrs.insert("Body".into(), key.openssh.into());
            cred.attrs.insert("Fingerprint".into(), print.into());
            store::put_credential(c, account, Family::SshKey, &cred)?;
            Ok(Value::map().with("SSHPublicKey", key_value(&cred, "SSH")?))
        })
    }

    /// `GetSSHPublicKey`.
    pub(super) fn get_ssh_public_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let cred = self
            .env
            .store
            .with(|c| self.credential_of(c, ctx, Family::SshKey, input))?;
        let encoding = required(input, "Encoding");
        Ok(Value::map().with("SSHPublicKey", key_value(&cred, encoding)?))
    }

    /// `ListSSHPublicKeys`: the user's (or the caller's) keys, without their bodies.
    pub(super) fn list_ssh_public_keys(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let Some(user) = self.listed_user(c, ctx, input)? else {
                return Ok(listing("SSHPublicKeys", Vec::new(), None));
            };
            let keys = store::credentials(c, &ctx.account, Family::SshKey, Some(&user))?;
            let (keys, next) = page(keys, |k| format!("{:020}{}", k.created, k.id), input)?;
            Ok(listing(
                "SSHPublicKeys",
                keys.iter().map(metadata).collect(),
                next,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(bits: usize) -> RsaPublicKey {
        let mut rng = rand_core::OsRng;
        rsa::RsaPrivateKey::new(&mut rng, bits)
            .unwrap()
            .to_public_key()
    }

    #[test]
    fn openssh_and_pem_uploads_read_back_alike() {
        let public = key(2048);
        let codec = base64::engine::general_purpose::STANDARD;
        let openssh = format!("ssh-rsa {}", codec.encode(openssh_blob(&public)));
        let from_ssh = parse(&format!("{openssh} me@host")).unwrap();
        assert_eq!(from_ssh.key, public);
        assert_eq!(from_ssh.openssh, format!("{openssh} me@host"));
        let pem = public.to_public_key_pem(LineEnding::LF).unwrap();
        let from_pem = parse(&pem).unwrap();
        assert_eq!(from_pem.openssh, openssh);
        assert_eq!(fingerprint(&from_pem.key), fingerprint(&from_ssh.key));
        assert_eq!(fingerprint(&public).len(), 47);
    }

    #[test]
    fn short_malformed_and_foreign_keys_are_refused() {
        let codec = base64::engine::general_purpose::STANDARD;
        let short = format!("ssh-rsa {}", codec.encode(openssh_blob(&key(1024))));
        assert_eq!(parse(&short).unwrap_err().code, "InvalidPublicKeyException");
        assert_eq!(
            parse("ssh-rsa not-base64!").unwrap_err().code,
            "InvalidPublicKeyException"
        );
        let renamed = format!("ssh-dss {}", codec.encode(openssh_blob(&key(2048))));
        assert_eq!(
            parse(&renamed).unwrap_err().code,
            "InvalidPublicKeyException"
        );
        assert_eq!(
            parse("hello").unwrap_err().code,
            "UnrecognizedPublicKeyEncodingException"
        );
    }
}
