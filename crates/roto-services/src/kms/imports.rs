//! Imported key material. A key created with `Origin=EXTERNAL` has no material and waits in
//! `PendingImport`; GetParametersForImport makes a fresh RSA wrapping key and an import token
//! that names it (both valid for 24 hours on the server clock), ImportKeyMaterial unwraps the
//! caller's material with its private half and enables the key. The material may expire
//! (`ValidTo`) or be deleted, which returns the key to `PendingImport`; the key remembers its
//! material's id, so only the same material may be imported again (into each key of a
//! multi-Region set, once its primary has received it).

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::crypto::{self, Family};
use super::{wrong_state, Key, Kms};

const DAY_MS: i64 = 86_400_000;

/// How long the parameters GetParametersForImport returns stay valid.
const PARAMETERS_LIFETIME_MS: i64 = DAY_MS;

/// How far in the future imported material may expire.
const MAX_VALID_TO_MS: i64 = 365 * DAY_MS;

fn unsupported(message: String) -> AwsError {
    AwsError::new("UnsupportedOperationException", message)
}

fn incorrect_material(message: &str) -> AwsError {
    AwsError::new("IncorrectKeyMaterialException", message)
}

/// What ImportKeyMaterial was asked to do with the material it unwraps.
struct ImportRequest {
    new_material: bool,
    material_id: Option<String>,
    expiration_model: String,
    valid_to: Option<i64>,
}

impl ImportRequest {
    /// Reads and checks the import options; `imported` says whether the key has had
    /// material before.
    fn parse(input: &Value, imported: bool) -> AwsResult<ImportRequest> {
        let expiration_model = input
            .str("ExpirationModel")
            .unwrap_or("KEY_MATERIAL_EXPIRES")
            .to_string();
        let valid_to = match input.get("ValidTo") {
            Some(Value::Timestamp(at)) => Some(*at),
            _ => None,
        };
        match (expiration_model.as_str(), valid_to) {
            ("KEY_MATERIAL_EXPIRES", None) => {
                return Err(AwsError::validation(
                    "A validTo date must be set if the ExpirationModel is KEY_MATERIAL_EXPIRES",
                ))
            }
            ("KEY_MATERIAL_DOES_NOT_EXPIRE", Some(_)) => {
                return Err(AwsError::validation(
                    "A validTo date must not be set if the ExpirationModel is KEY_MATERIAL_DOES_NOT_EXPIRE",
                ))
            }
            (_, Some(at)) if at <= now_millis() => {
                return Err(AwsError::validation("The validTo date must be in the future."))
            }
            (_, Some(at)) if at > now_millis() + MAX_VALID_TO_MS => {
                return Err(AwsError::validation(
                    "The validTo date must be no more than 365 days in the future.",
                ))
            }
            _ => {}
        }
        let new_material = match input.str("ImportType") {
            Some(kind) => kind == "NEW_KEY_MATERIAL",
            None => !imported,
        };
        let material_id = input.str("KeyMaterialId").map(str::to_string);
        if new_material && material_id.is_some() {
            return Err(AwsError::validation(
                "KeyMaterialId cannot be specified when ImportType is NEW_KEY_MATERIAL.",
            ));
        }
        Ok(ImportRequest {
            new_material,
            material_id,
            expiration_model,
            valid_to,
        })
    }

    /// Fails unless material with id `id` may be imported into `key`: new material into a
    /// key that never had any, or the material it had.
    fn check(&self, key: &Key, id: &str) -> AwsResult<()> {
        if self.material_id.as_deref().is_some_and(|m| m != id) {
            return Err(incorrect_material(
                "The key material does not match the specified KeyMaterialId.",
            ));
        }
        match (&key.material_id, self.new_material) {
            (None, true) => Ok(()),
            (None, false) => Err(incorrect_material(
                "The KMS key has no key material to reimport. Use ImportType NEW_KEY_MATERIAL.",
            )),
            (Some(existing), false) if existing == id => Ok(()),
            (Some(_), false) => Err(incorrect_material(
                "The key material is not the key material that was previously imported into this KMS key.",
            )),
            (Some(existing), true) if existing == id => Err(incorrect_material(
                "The key material is already associated with this KMS key. Use ImportType EXISTING_KEY_MATERIAL.",
            )),
            (Some(_), true) => Err(unsupported(format!(
                "{} already has imported key material; Roto does not rotate imported key material.",
                key.arn
            ))),
        }
    }
}

impl Kms {
    /// The `EXTERNAL` key that `KeyId` names, unless it is pending deletion (where only
    /// `pending_deletion_allowed` operations may touch it).
    fn import_target(
        &self,
        ctx: &Context,
        input: &Value,
        pending_deletion_allowed: bool,
    ) -> AwsResult<Key> {
        let key = self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
        if key.origin != "EXTERNAL" {
            return Err(unsupported(format!(
                "{} origin is {} which is not valid for this operation.",
                key.arn, key.origin
            )));
        }
        if key.state == "PendingDeletion" && !pending_deletion_allowed {
            return Err(wrong_state(&key));
        }
        Ok(key)
    }

    pub(super) fn get_parameters_for_import(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let key = self.import_target(ctx, input, false)?;
        let algorithm = input.str("WrappingAlgorithm").unwrap_or_default();
        if !algorithm.starts_with("RSAES_OAEP") && !algorithm.starts_with("RSA_AES_KEY_WRAP") {
            return Err(unsupported(format!(
                "The wrapping algorithm {algorithm} is not supported."
            )));
        }
        let spec = input.str("WrappingKeySpec").unwrap_or_default();
        let bits = match spec {
            "RSA_2048" => 2048,
            "RSA_3072" => 3072,
            "RSA_4096" => 4096,
            other => {
                return Err(unsupported(format!(
                    "The wrapping key spec {other} is not supported."
                )))
            }
        };
        let (wrapping_key, public_key) = crypto::key_pair(Family::Rsa(bits))?;
        let token = crypto::random_bytes(64);
        let now = now_millis();
        let valid_to = now + PARAMETERS_LIFETIME_MS;
        self.env.store.transaction(|tx| {
            tx.execute_cached(
                "DELETE FROM kms_import_tokens WHERE account = ?1 AND region = ?2 AND valid_to <= ?3",
                rusqlite::params![ctx.account, ctx.region, now],
            )?;
            tx.execute_cached(
                "INSERT INTO kms_import_tokens (account, region, token, key_id, algorithm,
                    wrapping_key, valid_to)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    hex::encode(&token),
                    key.id,
                    algorithm,
                    wrapping_key,
                    valid_to
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("ImportToken", Value::Blob(token))
            .with("PublicKey", Value::Blob(public_key))
            .with("ParametersValidTo", Value::Timestamp(valid_to)))
    }

    pub(super) fn import_key_material(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = self.import_target(ctx, input, false)?;
        let request = ImportRequest::parse(input, key.material_id.is_some())?;
        let token = input
            .get("ImportToken")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let parameters: Option<(String, String, Vec<u8>, i64)> = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT key_id, algorithm, wrapping_key, valid_to FROM kms_import_tokens
                 WHERE account = ?1 AND region = ?2 AND token = ?3",
                [&ctx.account, &ctx.region, &hex::encode(token)],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
        })?;
        let (algorithm, wrapping_key) = match parameters {
            Some((key_id, algorithm, wrapping_key, valid_to)) if key_id == key.id => {
                if valid_to <= now_millis() {
                    return Err(AwsError::new(
                        "ExpiredImportTokenException",
                        "The import token has expired. Use GetParametersForImport to get a new import token and public key.",
                    ));
                }
                (algorithm, wrapping_key)
            }
            _ => {
                return Err(AwsError::new(
                    "InvalidImportTokenException",
                    "The import token is invalid or is associated with a different KMS key.",
                ))
            }
        };
        let wrapped = input
            .get("EncryptedKeyMaterial")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let material = crypto::unwrap_imported(&wrapping_key, &algorithm, wrapped)?
            .ok_or_else(|| AwsError::new("InvalidCiphertextException", ""))?;
        let material = crypto::imported_material(key.family, &material).ok_or_else(|| {
            incorrect_material(&format!(
                "The key material is not valid for key spec {}.",
                key.spec
            ))
        })?;
        let material_id = crypto::material_id(&key.id, &material)?;
        if key.is_replica() && key.material_id.is_none() {
            return Err(unsupported(format!(
                "{} is a multi-Region replica key; import its key material into its primary key first.",
                key.arn
            )));
        }
        request.check(&key, &material_id)?;
        self.env.store.transaction(|c| {
            // Replicas of a multi-Region key accept only the material its primary received.
            c.execute_cached(
                "UPDATE kms_keys SET material_id = ?3
                 WHERE account = ?1 AND key_id = ?2 AND multi_region = 1 AND material_id IS NULL",
                [&ctx.account, &key.id, &material_id],
            )?;
            c.execute_cached(
                "UPDATE kms_keys SET material = ?4, material_id = ?5, expiration_model = ?6,
                    valid_to = ?7,
                    state = CASE WHEN state = 'PendingImport' THEN 'Enabled' ELSE state END
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    key.id,
                    material,
                    material_id,
                    request.expiration_model,
                    request.valid_to
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("KeyMaterialId", material_id))
    }

    pub(super) fn delete_imported_key_material(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let key = self.import_target(ctx, input, true)?;
        let current = key.material_id.clone().unwrap_or_default();
        if input.str("KeyMaterialId").is_some_and(|m| m != current) {
            return Err(AwsError::new(
                "NotFoundException",
                format!(
                    "Key material {} is not associated with {}.",
                    input.str("KeyMaterialId").unwrap_or_default(),
                    key.arn
                ),
            ));
        }
        self.delete_material(ctx, &key.id)?;
        Ok(Value::map()
            .with("KeyId", key.arn)
            .with("KeyMaterialId", current))
    }

    /// Deletes an imported key's material (on request or because it expired): the key waits
    /// for its material again unless it is pending deletion.
    pub(super) fn delete_material(&self, ctx: &Context, key_id: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE kms_keys SET material = x'', expiration_model = NULL, valid_to = NULL,
                    state = CASE WHEN state = 'PendingDeletion' THEN state ELSE 'PendingImport' END
                 WHERE account = ?1 AND region = ?2 AND key_id = ?3",
                [&ctx.account, &ctx.region, key_id],
            )
        })?;
        Ok(())
    }
}
