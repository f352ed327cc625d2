//! What a registry client calls: the image operations (DescribeImages, ListImages,
//! BatchGetImage, BatchDeleteImage, an image's scan, replication, signing and storage
//! class, its referrers, layers and replication backfills), answered for repositories that
//! hold no image since Roto serves no registry to push to, and GetAuthorizationToken.
//! Pushing through the API (layer uploads and PutImage) is not served.
//!
//! The authorization token is AWS's form, `AWS:<password>` in base64, valid for 12 hours;
//! its proxy endpoint is Roto's own address.

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::{error, Inner};
use crate::ids;

/// How long an authorization token is valid (12 hours, as AWS's are).
const TOKEN_LIFETIME_MS: i64 = 12 * 3600 * 1000;

/// An image id as ECR's messages write it: `{imageDigest:'null', imageTag:'latest'}`.
fn image_id_text(id: &Value) -> String {
    format!(
        "{{imageDigest:'{}', imageTag:'{}'}}",
        id.str("imageDigest").unwrap_or("null"),
        id.str("imageTag").unwrap_or("null")
    )
}

/// The failures a batch call reports for image ids none of which exist.
fn failures(input: &Value) -> Value {
    let ids = input
        .get("imageIds")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    Value::List(
        ids.iter()
            .map(|id| {
                let (code, reason) =
                    if id.get("imageDigest").is_none() && id.get("imageTag").is_none() {
                        (
                            "MissingDigestAndTag",
                            "Invalid request parameters: both tag and digest cannot be null",
                        )
                    } else {
                        ("ImageNotFound", "Requested image not found")
                    };
                Value::map()
                    .with("imageId", id.clone())
                    .with("failureCode", code)
                    .with("failureReason", reason)
            })
            .collect(),
    )
}

/// `ImageNotFoundException` for `id` in the repository `name`.
fn image_not_found(ctx: &Context, name: &str, id: &Value) -> AwsError {
    error(
        "ImageNotFoundException",
        format!(
            "The image with imageId {} does not exist within the repository with name '{name}' in the registry with id '{}'",
            image_id_text(id),
            ctx.account
        ),
    )
}

/// Whether `digest` has a layer digest's form (`sha256:` and 64 hex digits).
fn is_layer_digest(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl Inner {
    /// DescribeImages: nothing, or `ImageNotFoundException` for the first id asked for.
    pub(super) fn describe_images(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        if let Some(id) = input
            .get("imageIds")
            .and_then(Value::as_list)
            .and_then(|ids| ids.first())
        {
            return Err(image_not_found(ctx, &repo.name, id));
        }
        Ok(Value::map().with("imageDetails", Value::List(Vec::new())))
    }

    /// An operation on one image (its scan, scan findings, replication or signing status,
    /// storage class): the repository's error, else `ImageNotFoundException`.
    pub(super) fn one_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let id = input.get("imageId").cloned().unwrap_or_else(Value::map);
        Err(image_not_found(ctx, &repo.name, &id))
    }

    /// ListImageReferrers: no image refers to a subject in an empty repository.
    pub(super) fn list_referrers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.repository(ctx, input)?;
        Ok(Value::map().with("referrers", Value::List(Vec::new())))
    }

    /// BatchCheckLayerAvailability: every well-formed digest unavailable, others failures.
    pub(super) fn check_layers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.repository(ctx, input)?;
        let (mut layers, mut failures) = (Vec::new(), Vec::new());
        for digest in input
            .get("layerDigests")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let digest = digest.as_str().unwrap_or_default();
            if is_layer_digest(digest) {
                layers.push(
                    Value::map()
                        .with("layerDigest", digest)
                        .with("layerAvailability", "UNAVAILABLE"),
                );
            } else {
                failures.push(
                    Value::map()
                        .with("layerDigest", digest)
                        .with("failureCode", "InvalidLayerDigest")
                        .with("failureReason", "Invalid layer digest"),
                );
            }
        }
        Ok(Value::map()
            .with("layers", Value::List(layers))
            .with("failures", Value::List(failures)))
    }

    /// GetDownloadUrlForLayer: no layer is in an empty repository.
    pub(super) fn layer_url(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let digest = input.str("layerDigest").unwrap_or_default();
        Err(error(
            "LayersNotFoundException",
            format!(
                "The following layers were not found in the repository with name '{}' in the registry with id '{}': [{digest}]",
                repo.name, ctx.account
            ),
        ))
    }

    /// ListReplicationBackfills: none was started.
    pub(super) fn list_backfills(&self, ctx: &Context) -> Value {
        Value::map()
            .with("registryId", ctx.account.as_str())
            .with("backfills", Value::List(Vec::new()))
    }

    /// DescribeReplicationBackfillResults and StopReplicationBackfill: no backfill exists.
    pub(super) fn backfill_not_found(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        Err(error(
            "ReplicationBackfillNotFoundException",
            format!(
                "The replication backfill with id '{}' does not exist in the registry with id '{}'",
                input.str("replicationBackfillId").unwrap_or_default(),
                ctx.account
            ),
        ))
    }

    pub(super) fn list_images(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.repository(ctx, input)?;
        Ok(Value::map().with("imageIds", Value::List(Vec::new())))
    }

    pub(super) fn batch_get_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.repository(ctx, input)?;
        Ok(Value::map()
            .with("images", Value::List(Vec::new()))
            .with("failures", failures(input)))
    }

    pub(super) fn batch_delete_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.repository(ctx, input)?;
        Ok(Value::map()
            .with("imageIds", Value::List(Vec::new()))
            .with("failures", failures(input)))
    }

    /// GetAuthorizationToken: one token for the caller's registry at Roto's address.
    pub(super) fn authorization_token(&self, ctx: &Context) -> Value {
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("AWS:{}", ids::hex(64)));
        let endpoint = match self.env.endpoint() {
            Some(url) => url.to_string(),
            None => format!("http://{}", ctx.host),
        };
        let data = Value::map()
            .with("authorizationToken", token)
            .with(
                "expiresAt",
                Value::Timestamp(now_millis() + TOKEN_LIFETIME_MS),
            )
            .with("proxyEndpoint", endpoint);
        Value::map().with("authorizationData", Value::List(vec![data]))
    }
}
