//! Layers, as a client pushing through the API sends them and a puller finds them:
//! InitiateLayerUpload, UploadLayerPart, CompleteLayerUpload, BatchCheckLayerAvailability
//! and GetDownloadUrlForLayer.
//!
//! An upload is a row of `ecr_uploads` counting the bytes received; each part is a blob
//! (`ecr_upload_parts`) that must start where the previous one ended. Completing an upload
//! joins its parts into one blob, on a blocking thread, while hashing them: the layer is
//! stored (`ecr_layers`) under its SHA-256 digest only when that is the digest the client
//! named. A layer is a repository's; PutImage refers to it by digest.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Env, Response, Value};
use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};

use super::{error, invalid_parameter, Inner};
use crate::{blocking, ids};

/// The part size InitiateLayerUpload suggests (10 MiB).
const PART_SIZE: i64 = 10 * 1024 * 1024;

/// The largest part UploadLayerPart takes (20 MiB).
const MAX_PART: usize = 20 * 1024 * 1024;

/// Whether `digest` has a layer digest's form (`sha256:` and 64 hex digits).
pub(super) fn is_layer_digest(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `UploadNotFoundException` for `id` in `repository`.
fn upload_not_found(ctx: &Context, id: &str, repository: &str) -> AwsError {
    error(
        "UploadNotFoundException",
        format!(
            "The upload with id '{id}' does not exist in the repository with name '{repository}' in the registry with id '{}'",
            ctx.account
        ),
    )
}

/// `LayersNotFoundException` naming `digests` in `repository`.
pub(super) fn layers_not_found(ctx: &Context, repository: &str, digests: &[&str]) -> AwsError {
    error(
        "LayersNotFoundException",
        format!(
            "The following layers were not found in the repository with name '{repository}' in the registry with id '{}': [{}]",
            ctx.account,
            digests.join(", ")
        ),
    )
}

/// The parts an upload received, in order: their blob ids.
fn parts(env: &Env, ctx: &Context, upload: &str) -> rusqlite::Result<Vec<String>> {
    env.store.read(|c| {
        let mut st = c.prepare_cached(
            "SELECT blob FROM ecr_upload_parts
             WHERE account = ?1 AND region = ?2 AND upload = ?3 ORDER BY first_byte",
        )?;
        let rows = st.query_map([&ctx.account, &ctx.region, upload], |r| r.get(0))?;
        rows.collect()
    })
}

/// Joins an upload's parts into one blob, returning its id, size and SHA-256 digest.
fn join_parts(env: &Env, parts: &[String]) -> AwsResult<(String, i64, String)> {
    let mut blob = env.store.create_blob()?;
    let mut hash = Sha256::new();
    for part in parts {
        let bytes = env
            .store
            .with(|c| env.store.open_blob(c, part).map_err(AwsError::from))?
            .into_bytes()?;
        hash.update(&bytes);
        blob.write(&bytes)?;
    }
    let size = blob.len() as i64;
    let id = blob.finish()?;
    Ok((id, size, format!("sha256:{}", hex::encode(hash.finalize()))))
}

impl Inner {
    /// The upload `uploadId` of the call's repository: the repository's name and the bytes
    /// received so far, or `UploadNotFoundException`.
    fn upload(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String, i64)> {
        let repo = self.repository(ctx, input)?;
        let id = input.str("uploadId").unwrap_or_default();
        let received = self.store()?.read(|c| {
            c.query_row_cached(
                "SELECT received FROM ecr_uploads
                 WHERE account = ?1 AND region = ?2 AND id = ?3 AND repository = ?4",
                [&ctx.account, &ctx.region, id, &repo.name],
                |r| r.get::<_, i64>(0),
            )
            .optional()
        })?;
        let received = received.ok_or_else(|| upload_not_found(ctx, id, &repo.name))?;
        Ok((repo.name, id.to_string(), received))
    }

    /// InitiateLayerUpload: a new upload id and the part size to send.
    pub(super) fn initiate_layer_upload(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let id = ids::uuid();
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT INTO ecr_uploads (account, region, id, repository, received, created)
                 VALUES (?1, ?2, ?3, ?4, 0, ?5)",
                rusqlite::params![ctx.account, ctx.region, id, repo.name, now_millis()],
            )
        })?;
        Ok(Value::map()
            .with("uploadId", id)
            .with("partSize", Value::Integer(PART_SIZE)))
    }

    /// UploadLayerPart: a part that starts at the first byte not yet received and spans
    /// `partFirstByte..=partLastByte`, else `InvalidLayerPartException`.
    pub(super) fn upload_layer_part(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (repository, id, received) = self.upload(ctx, input)?;
        let bytes = input
            .get("layerPartBlob")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        if bytes.len() > MAX_PART {
            return Err(invalid_parameter(
                "layerPartBlob",
                &format!("Member must have length less than or equal to {MAX_PART}"),
            ));
        }
        let first = input.int("partFirstByte").unwrap_or(-1);
        let last = input.int("partLastByte").unwrap_or(-1);
        let invalid = |message: String| {
            error("InvalidLayerPartException", message)
                .with_field("registryId", ctx.account.as_str())
                .with_field("repositoryName", repository.as_str())
                .with_field("uploadId", id.as_str())
                .with_field(
                    "lastValidByteReceived",
                    Value::Integer((received - 1).max(0)),
                )
        };
        if first != received {
            return Err(invalid(format!(
                "The part's first byte {first} is not consecutive to the last byte received, {}",
                received - 1
            )));
        }
        if bytes.is_empty() || last - first + 1 != bytes.len() as i64 {
            return Err(invalid(format!(
                "The part's byte range {first}-{last} does not match the size of the part, {} bytes",
                bytes.len()
            )));
        }
        let mut blob = self.env.store.create_blob()?;
        blob.write(bytes)?;
        let blob = blob.finish_in_place()?;
        let stored = self.store()?.transaction(|c| {
            let moved = c.execute_cached(
                "UPDATE ecr_uploads SET received = ?4
                 WHERE account = ?1 AND region = ?2 AND id = ?3 AND received = ?5",
                rusqlite::params![ctx.account, ctx.region, id, last + 1, received],
            )?;
            if moved == 1 {
                blob.save(c)?;
                c.execute_cached(
                    "INSERT INTO ecr_upload_parts (account, region, upload, first_byte, blob)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![ctx.account, ctx.region, id, first, blob.id()],
                )?;
            }
            Ok::<_, rusqlite::Error>(moved == 1)
        })?;
        if !stored {
            self.env.store.remove_blob(blob.id());
            return Err(invalid(format!(
                "The part's first byte {first} is not consecutive to the last byte received"
            )));
        }
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", repository)
            .with("uploadId", id)
            .with("lastByteReceived", Value::Integer(last)))
    }

    /// CompleteLayerUpload: the parts joined into the layer whose digest the call names
    /// (`InvalidLayerException` when the bytes hash otherwise), unless the repository
    /// already holds it (`LayerAlreadyExistsException`). The upload ends either way.
    pub(super) async fn complete_layer_upload(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (repository, id, _) = self.upload(ctx, input)?;
        let digests = input
            .get("layerDigests")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let digest = match digests.first().and_then(Value::as_str) {
            Some(d) if digests.len() == 1 => d.to_string(),
            _ => {
                return Err(invalid_parameter(
                    "layerDigests",
                    "Member must contain exactly one layer digest",
                ))
            }
        };
        if !is_layer_digest(&digest) {
            return Err(error(
                "InvalidLayerException",
                format!("Invalid layer digest '{digest}': only sha256 digests are supported"),
            ));
        }
        let parts = parts(&self.env, ctx, &id)?;
        if parts.is_empty() {
            return Err(error(
                "EmptyUploadException",
                format!("The upload with id '{id}' does not contain any layer parts"),
            ));
        }
        if self.layer_size(ctx, &repository, &digest)?.is_some() {
            self.end_upload(ctx, &id, &parts)?;
            return Err(error(
                "LayerAlreadyExistsException",
                format!(
                    "The layer with digest '{digest}' already exists in the repository with name '{repository}' in the registry with id '{}'",
                    ctx.account
                ),
            ));
        }
        let env = Arc::clone(&self.env);
        let joined = parts.clone();
        let (blob, size, actual) = blocking::run(move || join_parts(&env, &joined)).await?;
        if actual != digest {
            self.env.store.remove_blob(&blob);
            self.end_upload(ctx, &id, &parts)?;
            return Err(error(
                "InvalidLayerException",
                format!("The layer digest '{digest}' does not match the digest of the uploaded layer, '{actual}'"),
            ));
        }
        let inserted = self.store()?.transaction(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO ecr_layers (account, region, repository, digest, size, blob)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![ctx.account, ctx.region, repository, digest, size, blob],
            )
        })?;
        if inserted == 0 {
            self.env.store.remove_blob(&blob);
        }
        self.end_upload(ctx, &id, &parts)?;
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", repository)
            .with("uploadId", id)
            .with("layerDigest", digest))
    }

    /// Removes an upload and its parts' blobs.
    fn end_upload(&self, ctx: &Context, id: &str, parts: &[String]) -> AwsResult<()> {
        self.store()?.transaction(|c| {
            c.execute_cached(
                "DELETE FROM ecr_upload_parts WHERE account = ?1 AND region = ?2 AND upload = ?3",
                [&ctx.account, &ctx.region, id],
            )?;
            c.execute_cached(
                "DELETE FROM ecr_uploads WHERE account = ?1 AND region = ?2 AND id = ?3",
                [&ctx.account, &ctx.region, id],
            )
        })?;
        for part in parts {
            self.env.store.remove_blob(part);
        }
        Ok(())
    }

    /// The size of the layer `digest` in `repository`, if the repository holds it.
    pub(super) fn layer_size(
        &self,
        ctx: &Context,
        repository: &str,
        digest: &str,
    ) -> AwsResult<Option<i64>> {
        Ok(self.store()?.read(|c| {
            c.query_row_cached(
                "SELECT size FROM ecr_layers
                 WHERE account = ?1 AND region = ?2 AND repository = ?3 AND digest = ?4",
                [&ctx.account, &ctx.region, repository, digest],
                |r| r.get(0),
            )
            .optional()
        })?)
    }

    /// BatchCheckLayerAvailability: each layer `AVAILABLE` with its size when the
    /// repository holds it, `UNAVAILABLE` otherwise; malformed digests are failures.
    pub(super) fn check_layers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let (mut layers, mut failures) = (Vec::new(), Vec::new());
        for digest in input
            .get("layerDigests")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let digest = digest.as_str().unwrap_or_default();
            if !is_layer_digest(digest) {
                failures.push(
                    Value::map()
                        .with("layerDigest", digest)
                        .with("failureCode", "InvalidLayerDigest")
                        .with("failureReason", "Invalid layer digest"),
                );
                continue;
            }
            let layer = Value::map().with("layerDigest", digest);
            layers.push(match self.layer_size(ctx, &repo.name, digest)? {
                Some(size) => layer
                    .with("layerAvailability", "AVAILABLE")
                    .with("layerSize", Value::Integer(size)),
                None => layer.with("layerAvailability", "UNAVAILABLE"),
            });
        }
        Ok(Value::map()
            .with("layers", Value::List(layers))
            .with("failures", Value::List(failures)))
    }

    /// GetDownloadUrlForLayer: the layer's URL on Roto's address when an image of the
    /// repository refers to it; `LayerInaccessibleException` for a layer no image refers
    /// to, `LayersNotFoundException` for one the repository does not hold.
    pub(super) fn layer_url(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let digest = input.str("layerDigest").unwrap_or_default();
        if self.layer_size(ctx, &repo.name, digest)?.is_none() {
            return Err(layers_not_found(ctx, &repo.name, &[digest]));
        }
        if !self.is_referenced(ctx, &repo.name, digest)? {
            return Err(error(
                "LayerInaccessibleException",
                format!("The layer with digest '{digest}' is not referenced by any image in the repository with name '{}'", repo.name),
            ));
        }
        let endpoint = self.endpoint(ctx);
        Ok(Value::map()
            .with(
                "downloadUrl",
                format!(
                    "{}/_aws/ecr/{}/{}/{}/blobs/{digest}",
                    endpoint.trim_end_matches('/'),
                    ctx.account,
                    ctx.region,
                    repo.name
                ),
            )
            .with("layerDigest", digest))
    }
}

impl Inner {
    /// A layer download (`GET /_aws/ecr/<account>/<region>/<repository>/blobs/<digest>`,
    /// the URL GetDownloadUrlForLayer gives): the layer's bytes while an image refers to
    /// it, else 404.
    pub(super) fn layer_blob(&self, input: &Value) -> AwsResult<Response> {
        let path = input.str("Path").unwrap_or_default();
        let found = match path
            .strip_prefix("/_aws/ecr/")
            .and_then(|rest| rest.split_once('/'))
            .and_then(|(account, rest)| Some((account, rest.split_once('/')?)))
            .and_then(|(account, (region, rest))| {
                let (repository, digest) = rest.rsplit_once("/blobs/")?;
                Some((account, region, repository, digest))
            }) {
            Some((account, region, repository, digest)) if input.str("Method") == Some("GET") => {
                self.referenced_blob(account, region, repository, digest)?
            }
            _ => None,
        };
        let mut response = Response::new(Value::map());
        match found {
            Some(bytes) => {
                response.headers.push((
                    "content-type".to_string(),
                    "application/octet-stream".to_string(),
                ));
                response.body = Some(
                    Full::new(Bytes::from(bytes))
                        .map_err(|never| match never {})
                        .boxed(),
                );
            }
            None => response.status = Some(404),
        }
        Ok(response)
    }

    /// The bytes of a layer an image of the repository refers to.
    fn referenced_blob(
        &self,
        account: &str,
        region: &str,
        repository: &str,
        digest: &str,
    ) -> AwsResult<Option<Vec<u8>>> {
        let store = self.store()?;
        let blob: Option<String> = store.read(|c| {
            c.query_row_cached(
                "SELECT blob FROM ecr_layers l
                 WHERE account = ?1 AND region = ?2 AND repository = ?3 AND digest = ?4
                   AND EXISTS (SELECT 1 FROM ecr_images i, json_each(i.refs)
                     WHERE i.account = l.account AND i.region = l.region
                       AND i.repository = l.repository AND value = l.digest)",
                [account, region, repository, digest],
                |r| r.get(0),
            )
            .optional()
        })?;
        match blob {
            Some(id) => {
                let reader = store.with(|c| store.open_blob(c, &id).map_err(AwsError::from))?;
                Ok(Some(reader.into_bytes()?))
            }
            None => Ok(None),
        }
    }
}
