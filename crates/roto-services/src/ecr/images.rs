//! What a registry client calls: the image operations (DescribeImages, ListImages,
//! BatchGetImage, BatchDeleteImage), answered for repositories that hold no image since
//! Roto serves no registry to push to, and GetAuthorizationToken.
//!
//! The authorization token is AWS's form, `AWS:<password>` in base64, valid for 12 hours;
//! its proxy endpoint is Roto's own address.

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};

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

impl Inner {
    /// DescribeImages: nothing, or `ImageNotFoundException` for the first id asked for.
    pub(super) fn describe_images(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        if let Some(id) = input
            .get("imageIds")
            .and_then(Value::as_list)
            .and_then(|ids| ids.first())
        {
            return Err(error(
                "ImageNotFoundException",
                format!(
                    "The image with imageId {} does not exist within the repository with name '{}' in the registry with id '{}'",
                    image_id_text(id),
                    repo.name,
                    ctx.account
                ),
            ));
        }
        Ok(Value::map().with("imageDetails", Value::List(Vec::new())))
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
