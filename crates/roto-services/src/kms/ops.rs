//! The cryptographic operations: Encrypt, Decrypt, ReEncrypt, data keys and data key
//! pairs, random bytes, Sign/Verify, GenerateMac/VerifyMac, GetPublicKey, DeriveSharedSecret,
//! ML-KEM's Encapsulate/Decapsulate, and the record of each key's last use.
//!
//! A symmetric ciphertext blob is `0x01 | len | key id | material generation (u32) | nonce |
//! AES-GCM ciphertext and tag`, with the encryption context, canonically ordered, as the
//! associated data: Decrypt finds the key and the key material (rotated keys keep their old
//! material) from the blob, and a different context fails authentication.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::crypto::{self, Family};
use super::{check_algorithm, check_usage, parse_key_ref, Key, KeyRef, Kms};

const BLOB_VERSION: u8 = 1;

fn invalid_ciphertext() -> AwsError {
    AwsError::new("InvalidCiphertextException", "")
}

/// The encryption context as associated data: entries in key order, each part
/// length-prefixed so that no two contexts share an encoding.
fn context_aad(context: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in context.and_then(Value::as_map).into_iter().flatten() {
        let v = v.as_str().unwrap_or_default();
        for part in [k.as_bytes(), v.as_bytes()] {
            out.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_be_bytes());
            out.extend_from_slice(part);
        }
    }
    out
}

/// The key id and material generation a symmetric ciphertext blob names, and its sealed
/// part.
pub(super) fn parse_blob(blob: &[u8]) -> Option<(&str, u32, &[u8])> {
    let (&version, rest) = blob.split_first()?;
    let (&len, rest) = rest.split_first()?;
    if version != BLOB_VERSION || rest.len() < usize::from(len) + 4 + crypto::NONCE_LEN {
        return None;
    }
    let (id, rest) = rest.split_at(usize::from(len));
    let (generation, sealed) = rest.split_at(4);
    let generation = u32::from_be_bytes(generation.try_into().ok()?);
    Some((std::str::from_utf8(id).ok()?, generation, sealed))
}

/// Whether two byte strings are equal, in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn strings(list: &[&str]) -> Value {
    Value::List(list.iter().map(|s| Value::from(*s)).collect())
}

impl Kms {
    /// Generates `NumberOfBytes` random bytes (from a connected CloudHSM key store when
    /// `CustomKeyStoreId` names one).
    pub(super) fn generate_random(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let n = input.int("NumberOfBytes").ok_or_else(|| {
            AwsError::validation(
                "1 validation error detected: Value null at 'numberOfBytes' failed to satisfy constraint: Member must not be null",
            )
        })?;
        if let Some(store) = input.str("CustomKeyStoreId") {
            self.check_random_source(ctx, store)?;
        }
        let n = usize::try_from(n).unwrap_or_default();
        Ok(Value::map().with("Plaintext", Value::Blob(crypto::random_bytes(n))))
    }

    /// Records a successful cryptographic operation as the last use of the keys its output
    /// names (ReEncrypt's source and destination both).
    pub(super) fn record_usage(
        &self,
        ctx: &Context,
        operation: &str,
        output: &Value,
    ) -> AwsResult<()> {
        let now = now_millis();
        for member in ["KeyId", "SourceKeyId"] {
            let Some(KeyRef::Key(id)) = output.str(member).and_then(parse_key_ref) else {
                continue;
            };
            self.env.store.with(|c| {
                c.execute_cached(
                    "INSERT OR REPLACE INTO kms_key_usage (account, region, key_id, operation, used, request_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    rusqlite::params![ctx.account, ctx.region, id, operation, now, ctx.request_id],
                )
            })?;
        }
        Ok(())
    }

    /// GetKeyLastUsage: the last successful cryptographic operation with a key (named by key
    /// id or ARN; aliases are not accepted), tracked since the key was created.
    pub(super) fn get_key_last_usage(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key_id = input.str("KeyId").unwrap_or_default();
        if matches!(parse_key_ref(key_id), Some(KeyRef::Alias(_))) {
            return Err(AwsError::new(
                "NotFoundException",
                format!("Invalid keyId '{key_id}'"),
            ));
        }
        let key = self.find_key(ctx, key_id)?;
        let last: Option<(String, i64, String)> = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT operation, used, request_id FROM kms_key_usage
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, &key.id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
        })?;
        let usage = match last {
            Some((operation, used, request_id)) => Value::map()
                .with("Operation", operation)
                .with("Timestamp", Value::Timestamp(used))
                .with("KmsRequestId", request_id),
            None => Value::map(),
        };
        Ok(Value::map()
            .with("KeyId", key.id.as_str())
            .with("KeyLastUsage", usage)
            .with("TrackingStartDate", Value::Timestamp(key.created))
            .with("KeyCreationDate", Value::Timestamp(key.created)))
    }

    /// Encrypts under an enabled encryption key with `algorithm`.
    fn encrypt_with(
        key: &Key,
        algorithm: &str,
        context: Option<&Value>,
        plaintext: &[u8],
        operation: &str,
    ) -> AwsResult<Vec<u8>> {
        check_usage(key, "ENCRYPT_DECRYPT", operation)?;
        check_algorithm(key, algorithm, key.family.encryption_algorithms())?;
        if key.family == Family::Symmetric {
            let sealed = crypto::seal(&key.material, &context_aad(context), plaintext)?;
            let id = key.id.as_bytes();
            let mut blob = vec![BLOB_VERSION, u8::try_from(id.len()).unwrap_or(u8::MAX)];
            blob.extend_from_slice(id);
            blob.extend_from_slice(&key.generation.to_be_bytes());
            blob.extend_from_slice(&sealed);
            return Ok(blob);
        }
        crypto::rsa_encrypt(&key.material, algorithm, plaintext)?.ok_or_else(|| {
            AwsError::validation(format!(
                "Plaintext is too long for key spec {} with algorithm {algorithm}.",
                key.spec
            ))
        })
    }

    /// Decrypts a ciphertext blob: symmetric blobs name their key (which must match
    /// `key_id` when given), asymmetric ones need `key_id`.
    fn decrypt_blob(
        &self,
        ctx: &Context,
        blob: &[u8],
        key_id: Option<&str>,
        algorithm: &str,
        context: Option<&Value>,
        operation: &str,
    ) -> AwsResult<(Key, Vec<u8>)> {
        if algorithm == "SYMMETRIC_DEFAULT" {
            let (embedded, generation, sealed) = parse_blob(blob).ok_or_else(invalid_ciphertext)?;
            if let Some(requested) = key_id {
                if self.find_key(ctx, requested)?.id != embedded {
                    return Err(AwsError::new(
                        "IncorrectKeyException",
                        "The key ID in the request does not identify a CMK that can perform this operation.",
                    ));
                }
            }
            let key = self.usable_key(ctx, embedded).map_err(|e| {
                if e.code == "NotFoundException" {
                    invalid_ciphertext()
                } else {
                    e
                }
            })?;
            check_usage(&key, "ENCRYPT_DECRYPT", operation)?;
            let material = self
                .material(ctx, &key, generation)?
                .ok_or_else(invalid_ciphertext)?;
            let plaintext = crypto::open(&material, &context_aad(context), sealed)
                .ok_or_else(invalid_ciphertext)?;
            return Ok((key, plaintext));
        }
        let key_id = key_id.ok_or_else(|| {
            AwsError::validation(format!(
                "KeyId is required for decryption with {algorithm}."
            ))
        })?;
        let key = self.usable_key(ctx, key_id)?;
        check_usage(&key, "ENCRYPT_DECRYPT", operation)?;
        check_algorithm(&key, algorithm, key.family.encryption_algorithms())?;
        let plaintext =
            crypto::rsa_decrypt(&key.material, algorithm, blob)?.ok_or_else(invalid_ciphertext)?;
        Ok((key, plaintext))
    }

    pub(super) fn encrypt(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        let algorithm = input
            .str("EncryptionAlgorithm")
            .unwrap_or("SYMMETRIC_DEFAULT");
        let plaintext = input
            .get("Plaintext")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let blob = Self::encrypt_with(
            &key,
            algorithm,
            input.get("EncryptionContext"),
            plaintext,
            "Encrypt",
        )?;
        Ok(Value::map()
            .with("CiphertextBlob", Value::Blob(blob))
            .with("KeyId", key.arn)
            .with("EncryptionAlgorithm", algorithm))
    }

    pub(super) fn decrypt(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let algorithm = input
            .str("EncryptionAlgorithm")
            .unwrap_or("SYMMETRIC_DEFAULT");
        let blob = input
            .get("CiphertextBlob")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let (key, plaintext) = self.decrypt_blob(
            ctx,
            blob,
            input.str("KeyId"),
            algorithm,
            input.get("EncryptionContext"),
            "Decrypt",
        )?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("Plaintext", Value::Blob(plaintext))
            .with("EncryptionAlgorithm", algorithm))
    }

    pub(super) fn re_encrypt(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let source_algorithm = input
            .str("SourceEncryptionAlgorithm")
            .unwrap_or("SYMMETRIC_DEFAULT");
        let destination_algorithm = input
            .str("DestinationEncryptionAlgorithm")
            .unwrap_or("SYMMETRIC_DEFAULT");
        let blob = input
            .get("CiphertextBlob")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let (source, plaintext) = self.decrypt_blob(
            ctx,
            blob,
            input.str("SourceKeyId"),
            source_algorithm,
            input.get("SourceEncryptionContext"),
            "ReEncryptFrom",
        )?;
        let destination =
            self.usable_key(ctx, input.str("DestinationKeyId").unwrap_or_default())?;
        let blob = Self::encrypt_with(
            &destination,
            destination_algorithm,
            input.get("DestinationEncryptionContext"),
            &plaintext,
            "ReEncryptTo",
        )?;
        Ok(Value::map()
            .with("CiphertextBlob", Value::Blob(blob))
            .with("SourceKeyId", source.arn)
            .with("KeyId", destination.arn)
            .with("SourceEncryptionAlgorithm", source_algorithm)
            .with("DestinationEncryptionAlgorithm", destination_algorithm))
    }

    /// An enabled symmetric encryption key, the only kind that wraps data keys.
    fn data_key_wrapper(&self, ctx: &Context, input: &Value, operation: &str) -> AwsResult<Key> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "ENCRYPT_DECRYPT", operation)?;
        if key.family != Family::Symmetric {
            return Err(AwsError::new(
                "InvalidKeyUsageException",
                format!(
                    "{} key spec {} is not valid for {operation}.",
                    key.arn, key.spec
                ),
            ));
        }
        Ok(key)
    }

    pub(super) fn generate_data_key(
        &self,
        ctx: &Context,
        input: &Value,
        with_plaintext: bool,
    ) -> AwsResult<Value> {
        let operation = if with_plaintext {
            "GenerateDataKey"
        } else {
            "GenerateDataKeyWithoutPlaintext"
        };
        let len = match (input.str("KeySpec"), input.int("NumberOfBytes")) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(AwsError::validation(
                    "Please specify either number of bytes or key spec.",
                ))
            }
            (Some("AES_128"), None) => 16,
            (Some(_), None) => 32,
            (None, Some(n)) => usize::try_from(n).unwrap_or_default(),
        };
        let key = self.data_key_wrapper(ctx, input, operation)?;
        let plaintext = crypto::random_bytes(len);
        let blob = Self::encrypt_with(
            &key,
            "SYMMETRIC_DEFAULT",
            input.get("EncryptionContext"),
            &plaintext,
            operation,
        )?;
        let out = Value::map()
            .with("CiphertextBlob", Value::Blob(blob))
            .with("KeyId", key.arn);
        Ok(if with_plaintext {
            out.with("Plaintext", Value::Blob(plaintext))
        } else {
            out
        })
    }

    pub(super) fn generate_data_key_pair(
        &self,
        ctx: &Context,
        input: &Value,
        with_plaintext: bool,
    ) -> AwsResult<Value> {
        let operation = if with_plaintext {
            "GenerateDataKeyPair"
        } else {
            "GenerateDataKeyPairWithoutPlaintext"
        };
        let spec = input.str("KeyPairSpec").unwrap_or_default();
        let family = Family::of(spec)
            .filter(|f| !matches!(f, Family::Symmetric | Family::Hmac(_)))
            .ok_or_else(|| {
                AwsError::new(
                    "UnsupportedOperationException",
                    format!("KeyPairSpec {spec} is not supported by Roto."),
                )
            })?;
        let key = self.data_key_wrapper(ctx, input, operation)?;
        let (private, public) = crypto::key_pair(family)?;
        let blob = Self::encrypt_with(
            &key,
            "SYMMETRIC_DEFAULT",
            input.get("EncryptionContext"),
            &private,
            operation,
        )?;
        let out = Value::map()
            .with("PrivateKeyCiphertextBlob", Value::Blob(blob))
            .with("PublicKey", Value::Blob(public))
            .with("KeyId", key.arn)
            .with("KeyPairSpec", spec);
        Ok(if with_plaintext {
            out.with("PrivateKeyPlaintext", Value::Blob(private))
        } else {
            out
        })
    }

    /// The signing key and the digest to sign or verify, from `Message` and `MessageType`.
    fn signing_input(
        &self,
        ctx: &Context,
        input: &Value,
        operation: &str,
    ) -> AwsResult<(Key, Vec<u8>)> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "SIGN_VERIFY", operation)?;
        let algorithm = input.str("SigningAlgorithm").unwrap_or_default();
        check_algorithm(&key, algorithm, key.family.signing_algorithms())?;
        let message = input
            .get("Message")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let digest = match input.str("MessageType").unwrap_or("RAW") {
            "DIGEST" => {
                if message.len() != crypto::digest_len(algorithm) {
                    return Err(AwsError::validation(format!(
                        "Digest is invalid length for algorithm {algorithm}."
                    )));
                }
                message.to_vec()
            }
            "RAW" => crypto::digest(algorithm, message),
            other => {
                return Err(AwsError::validation(format!(
                    "Message type {other} is incompatible with key spec {}.",
                    key.spec
                )))
            }
        };
        Ok((key, digest))
    }

    pub(super) fn sign(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, digest) = self.signing_input(ctx, input, "Sign")?;
        let algorithm = input.str("SigningAlgorithm").unwrap_or_default();
        let signature = crypto::sign(key.family, &key.material, algorithm, &digest)?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("Signature", Value::Blob(signature))
            .with("SigningAlgorithm", algorithm))
    }

    pub(super) fn verify(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, digest) = self.signing_input(ctx, input, "Verify")?;
        let algorithm = input.str("SigningAlgorithm").unwrap_or_default();
        let signature = input
            .get("Signature")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        if !crypto::verify(key.family, &key.material, algorithm, &digest, signature)? {
            return Err(AwsError::new("KMSInvalidSignatureException", ""));
        }
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("SignatureValid", true)
            .with("SigningAlgorithm", algorithm))
    }

    /// The MAC of `Message` under the HMAC key `KeyId`.
    fn mac_of(&self, ctx: &Context, input: &Value, operation: &str) -> AwsResult<(Key, Vec<u8>)> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "GENERATE_VERIFY_MAC", operation)?;
        let algorithm = input.str("MacAlgorithm").unwrap_or_default();
        check_algorithm(&key, algorithm, key.family.mac_algorithms())?;
        let message = input
            .get("Message")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let mac = crypto::mac(algorithm, &key.material, message)?;
        Ok((key, mac))
    }

    pub(super) fn generate_mac(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mac) = self.mac_of(ctx, input, "GenerateMac")?;
        Ok(Value::map()
            .with("Mac", Value::Blob(mac))
            .with(
                "MacAlgorithm",
                input.str("MacAlgorithm").unwrap_or_default(),
            )
            .with("KeyId", key.arn))
    }

    pub(super) fn verify_mac(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mac) = self.mac_of(ctx, input, "VerifyMac")?;
        let given = input
            .get("Mac")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        if !constant_time_eq(&mac, given) {
            return Err(AwsError::new("KMSInvalidMacException", ""));
        }
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("MacValid", true)
            .with(
                "MacAlgorithm",
                input.str("MacAlgorithm").unwrap_or_default(),
            ))
    }

    pub(super) fn get_public_key(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if matches!(key.family, Family::Symmetric | Family::Hmac(_)) {
            return Err(AwsError::new(
                "UnsupportedOperationException",
                format!("{} key spec {} has no public key.", key.arn, key.spec),
            ));
        }
        let public = crypto::public_key_der(key.family, &key.material)?;
        let mut out = Value::map()
            .with("KeyId", key.arn.as_str())
            .with("PublicKey", Value::Blob(public))
            .with("CustomerMasterKeySpec", key.spec.as_str())
            .with("KeySpec", key.spec.as_str())
            .with("KeyUsage", key.usage.as_str());
        match key.usage.as_str() {
            "ENCRYPT_DECRYPT" => out.insert(
                "EncryptionAlgorithms",
                strings(key.family.encryption_algorithms()),
            ),
            "KEY_AGREEMENT" => out.insert("KeyAgreementAlgorithms", strings(&["ECDH"])),
            "ENCAPSULATE_DECAPSULATE" => {
                out.insert("EncapsulationAlgorithms", strings(&["ML_KEM"]))
            }
            _ => out.insert(
                "SigningAlgorithms",
                strings(key.family.signing_algorithms()),
            ),
        }
        Ok(out)
    }

    pub(super) fn encapsulate(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "ENCAPSULATE_DECAPSULATE", "Encapsulate")?;
        let (ciphertext, secret) = crypto::encapsulate(key.family, &key.material)?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("SharedSecret", Value::Blob(secret))
            .with("SharedSecretCiphertextBlob", Value::Blob(ciphertext))
            .with("EncapsulationAlgorithm", "ML_KEM"))
    }

    pub(super) fn decapsulate(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "ENCAPSULATE_DECAPSULATE", "Decapsulate")?;
        let ciphertext = input
            .get("SharedSecretCiphertextBlob")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let secret = crypto::decapsulate(key.family, &key.material, ciphertext)?
            .ok_or_else(invalid_ciphertext)?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("SharedSecret", Value::Blob(secret))
            .with("EncapsulationAlgorithm", "ML_KEM"))
    }

    pub(super) fn derive_shared_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.usable_key(ctx, input.str("KeyId").unwrap_or_default())?;
        check_usage(&key, "KEY_AGREEMENT", "DeriveSharedSecret")?;
        let peer = input
            .get("PublicKey")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let secret = crypto::shared_secret(key.family, &key.material, peer)?.ok_or_else(|| {
            AwsError::validation(format!(
                "The public key is not a valid {} public key.",
                key.spec
            ))
        })?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("SharedSecret", Value::Blob(secret))
            .with("KeyAgreementAlgorithm", "ECDH")
            .with("KeyOrigin", "AWS_KMS"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_encoding_is_order_independent_and_unambiguous() {
        let a = Value::map().with("a", "1").with("b", "2");
        let b = Value::map().with("b", "2").with("a", "1");
        assert_eq!(context_aad(Some(&a)), context_aad(Some(&b)));
        let c = Value::map().with("a", "12");
        let d = Value::map().with("a1", "2");
        assert_ne!(context_aad(Some(&c)), context_aad(Some(&d)));
        assert!(context_aad(None).is_empty());
    }

    #[test]
    fn blobs_parse_only_in_their_own_format() {
        let mut blob = vec![BLOB_VERSION, 3];
        blob.extend_from_slice(b"abc");
        blob.extend_from_slice(&7u32.to_be_bytes());
        blob.extend_from_slice(&[0u8; crypto::NONCE_LEN + 16]);
        assert_eq!(
            parse_blob(&blob).map(|(id, g, _)| (id, g)),
            Some(("abc", 7))
        );
        assert!(parse_blob(b"").is_none());
        assert!(parse_blob(&[BLOB_VERSION, 200, 1, 2]).is_none());
        assert!(parse_blob(&[9, 3, b'a', b'b', b'c']).is_none());
    }
}
