//! Envelope encryption through KMS, as Secrets Manager and SSM SecureString use it: KMS's
//! `GenerateDataKey` (called through the dispatcher, so KMS keeps its own state) gives a
//! data key and its ciphertext; the value is sealed locally with AES-256-GCM under the
//! data key, and only the wrapped data key and the sealed value are kept. Values may thus be
//! larger than KMS's 4 KiB `Encrypt` limit, and a disabled or deleted KMS key makes them
//! unreadable exactly as in AWS.

use roto_core::{AwsError, AwsResult, Context, Env, Value};

use crate::kms::crypto;

fn dispatcher(env: &Env) -> AwsResult<std::sync::Arc<roto_core::Dispatcher>> {
    env.dispatcher()
        .ok_or_else(|| AwsError::internal("the dispatcher is not running"))
}

/// Seals `plaintext` under a fresh data key from KMS key `key_id`, bound to `context`.
/// KMS's errors are returned as they are, for the caller to reword.
pub async fn seal(
    env: &Env,
    ctx: &Context,
    key_id: &str,
    context: Value,
    plaintext: &[u8],
) -> AwsResult<Vec<u8>> {
    let input = Value::map()
        .with("KeyId", key_id)
        .with("KeySpec", "AES_256")
        .with("EncryptionContext", context);
    let out = dispatcher(env)?
        .call(ctx, "kms", "GenerateDataKey", input)
        .await?;
    let (Some(data_key), Some(wrapped)) = (
        out.get("Plaintext").and_then(Value::as_blob),
        out.get("CiphertextBlob").and_then(Value::as_blob),
    ) else {
        return Err(AwsError::internal("GenerateDataKey returned no key"));
    };
    let sealed = crypto::seal(data_key, &[], plaintext)?;
    let len = u16::try_from(wrapped.len())
        .map_err(|_| AwsError::internal("wrapped data key too long"))?;
    Ok([&len.to_be_bytes()[..], wrapped, &sealed].concat())
}

/// Opens what [`seal`] produced, asking KMS to unwrap the data key with `context`.
pub async fn open(env: &Env, ctx: &Context, blob: &[u8], context: Value) -> AwsResult<Vec<u8>> {
    let corrupt = || AwsError::internal("stored ciphertext is corrupt");
    let (len, rest) = blob.split_at_checked(2).ok_or_else(corrupt)?;
    let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let (wrapped, sealed) = rest.split_at_checked(len).ok_or_else(corrupt)?;
    let input = Value::map()
        .with("CiphertextBlob", Value::Blob(wrapped.to_vec()))
        .with("EncryptionContext", context);
    let out = dispatcher(env)?.call(ctx, "kms", "Decrypt", input).await?;
    let data_key = out
        .get("Plaintext")
        .and_then(Value::as_blob)
        .ok_or_else(corrupt)?;
    crypto::open(data_key, &[], sealed).ok_or_else(corrupt)
}
