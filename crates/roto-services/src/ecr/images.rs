//! Images: PutImage, and what a registry client reads back (DescribeImages, ListImages,
//! BatchGetImage, BatchDeleteImage), the operations on one image (its scan, replication,
//! signing and storage class), its referrers, and GetAuthorizationToken.
//!
//! An image is a row of `ecr_images` keyed by its manifest's digest, keeping the manifest
//! as pushed, its media types, its size (the sum of its layers') and the digests it refers
//! to; a tag is a row of `ecr_image_tags` naming one image. PutImage refuses a manifest
//! whose layers or images the repository does not hold, and moves a tag only where the
//! repository's tag mutability allows. Removing an image's last tag by tag removes the
//! image, as AWS does.
//!
//! The authorization token is AWS's form, `AWS:<password>` in base64, valid for 12 hours;
//! its proxy endpoint is Roto's own address.

use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::layers::layers_not_found;
use super::repositories::Repository;
use super::{error, invalid_parameter, manifest, max_results, Inner};
use crate::{ids, paging};

/// How long an authorization token is valid (12 hours, as AWS's are).
const TOKEN_LIFETIME_MS: i64 = 12 * 3600 * 1000;

/// An image as stored, with its tags.
struct Image {
    digest: String,
    manifest: String,
    media_type: String,
    artifact_media_type: Option<String>,
    subject: Option<String>,
    size: i64,
    pushed: i64,
    scanned: Option<i64>,
    tags: Vec<String>,
}

impl Image {
    /// The image's `ImageDetail`.
    fn detail(&self, ctx: &Context, repository: &str) -> Value {
        let tags = (!self.tags.is_empty())
            .then(|| Value::List(self.tags.iter().map(|t| Value::from(t.as_str())).collect()));
        Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", repository)
            .with("imageDigest", self.digest.as_str())
            .with_opt("imageTags", tags)
            .with("imageSizeInBytes", Value::Integer(self.size))
            .with("imagePushedAt", Value::Timestamp(self.pushed))
            .with_opt("imageScanStatus", self.scanned.map(|_| scan_status()))
            .with("imageManifestMediaType", self.media_type.as_str())
            .with_opt("artifactMediaType", self.artifact_media_type.as_deref())
            .with_opt("subjectManifestDigest", self.subject.as_deref())
            .with("imageStatus", "ACTIVE")
    }

    /// The image's ids as ListImages gives them: one per tag, or its digest alone.
    fn ids(&self) -> Vec<Value> {
        let id = || Value::map().with("imageDigest", self.digest.as_str());
        match self.tags.is_empty() {
            true => vec![id()],
            false => self
                .tags
                .iter()
                .map(|t| id().with("imageTag", t.as_str()))
                .collect(),
        }
    }

    /// Whether the image passes a listing's `tagStatus` filter.
    fn passes(&self, input: &Value) -> bool {
        match input.get("filter").and_then(|f| f.str("tagStatus")) {
            Some("TAGGED") => !self.tags.is_empty(),
            Some("UNTAGGED") => self.tags.is_empty(),
            _ => true,
        }
    }
}

const IMAGE_COLUMNS: &str = "digest, manifest, media_type, artifact_media_type, subject, size,
    pushed, scanned, (SELECT json_group_array(tag) FROM (SELECT tag FROM ecr_image_tags t
        WHERE t.account = i.account AND t.region = i.region AND t.repository = i.repository
        AND t.digest = i.digest ORDER BY tag))";

fn image_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Image> {
    let tags: String = r.get(8)?;
    Ok(Image {
        digest: r.get(0)?,
        manifest: r.get(1)?,
        media_type: r.get(2)?,
        artifact_media_type: r.get(3)?,
        subject: r.get(4)?,
        size: r.get(5)?,
        pushed: r.get(6)?,
        scanned: r.get(7)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}

/// An image id as ECR's messages write it: `{imageDigest:'null', imageTag:'latest'}`.
fn image_id_text(id: &Value) -> String {
    format!(
        "{{imageDigest:'{}', imageTag:'{}'}}",
        id.str("imageDigest").unwrap_or("null"),
        id.str("imageTag").unwrap_or("null")
    )
}

/// A completed scan's status.
fn scan_status() -> Value {
    Value::map()
        .with("status", "COMPLETE")
        .with("description", "The scan was completed successfully.")
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

/// A batch call's failure for `id`.
fn failure(id: &Value, code: &str, reason: &str) -> Value {
    Value::map()
        .with("imageId", id.clone())
        .with("failureCode", code)
        .with("failureReason", reason)
}

/// Whether `digest` has an image digest's form (`algorithm:hex`).
fn is_image_digest(digest: &str) -> bool {
    digest.split_once(':').is_some_and(|(algorithm, hex)| {
        !algorithm.is_empty()
            && algorithm
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_+.".contains(&b))
            && !hex.is_empty()
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Checks an image tag: 1 to 300 characters.
fn check_tag(tag: &str) -> AwsResult<()> {
    match tag.chars().count() {
        0 => Err(invalid_parameter(
            "imageTag",
            "Member must have length greater than or equal to 1",
        )),
        n if n > 300 => Err(invalid_parameter(
            "imageTag",
            "Member must have length less than or equal to 300",
        )),
        _ => Ok(()),
    }
}

impl Inner {
    /// The images of `repository` (all of them, or the one of `digest`), oldest first.
    fn images(
        &self,
        ctx: &Context,
        repository: &str,
        digest: Option<&str>,
    ) -> AwsResult<Vec<Image>> {
        Ok(self.store()?.read(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {IMAGE_COLUMNS} FROM ecr_images i
                 WHERE account = ?1 AND region = ?2 AND repository = ?3
                   AND (?4 IS NULL OR digest = ?4)
                 ORDER BY pushed, digest"
            ))?;
            let rows = st.query_map(
                rusqlite::params![ctx.account, ctx.region, repository, digest],
                image_from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?)
    }

    /// The digest `tag` names in `repository`.
    fn tag_digest(&self, ctx: &Context, repository: &str, tag: &str) -> AwsResult<Option<String>> {
        Ok(self.store()?.read(|c| {
            c.query_row_cached(
                "SELECT digest FROM ecr_image_tags
                 WHERE account = ?1 AND region = ?2 AND repository = ?3 AND tag = ?4",
                [&ctx.account, &ctx.region, repository, tag],
                |r| r.get(0),
            )
            .optional()
        })?)
    }

    /// The image an `ImageIdentifier` names, or the failure code and reason a batch call
    /// reports for it.
    fn resolve(
        &self,
        ctx: &Context,
        repository: &str,
        id: &Value,
    ) -> AwsResult<Result<Image, (&'static str, &'static str)>> {
        let (digest, tag) = (id.str("imageDigest"), id.str("imageTag"));
        if digest.is_some_and(|d| !is_image_digest(d)) {
            return Ok(Err((
                "InvalidImageDigest",
                "Invalid request parameters: image digest should satisfy the regex '[a-zA-Z0-9-_+.]+:[a-fA-F0-9]+'",
            )));
        }
        let digest = match (digest, tag) {
            (None, None) => {
                return Ok(Err((
                    "MissingDigestAndTag",
                    "Invalid request parameters: both tag and digest cannot be null",
                )))
            }
            (Some(d), None) => Some(d.to_string()),
            (digest, Some(tag)) => match (self.tag_digest(ctx, repository, tag)?, digest) {
                (Some(found), Some(d)) if found != d => {
                    return Ok(Err((
                        "ImageTagDoesNotMatchDigest",
                        "Invalid request parameters: image tag does not match image digest",
                    )))
                }
                (found, _) => found,
            },
        };
        let image = match digest {
            Some(d) => self.images(ctx, repository, Some(&d))?.pop(),
            None => None,
        };
        Ok(image.ok_or(("ImageNotFound", "Requested image not found")))
    }

    /// PutImage: stores a manifest whose blobs (or images) the repository holds, under its
    /// digest, and tags it.
    pub(super) fn put_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let text = input.str("imageManifest").unwrap_or_default();
        if text.is_empty() || text.len() > 4 * 1024 * 1024 {
            return Err(invalid_parameter(
                "imageManifest",
                "Member must have length between 1 and 4194304",
            ));
        }
        let tag = input.str("imageTag");
        tag.map(check_tag).transpose()?;
        let parsed = manifest::read(text, input.str("imageManifestMediaType"))?;
        let digest = manifest::digest(text);
        if let Some(given) = input.str("imageDigest").filter(|d| *d != digest) {
            return Err(error(
                "ImageDigestDoesNotMatchException",
                format!(
                    "The digest '{given}' does not match the digest of the manifest, '{digest}'"
                ),
            ));
        }
        let size = self.referenced_size(ctx, &repo.name, &parsed)?;
        self.check_tag_move(ctx, &repo, tag, &digest)?;
        let refs = serde_json::to_string(
            &parsed
                .blobs
                .iter()
                .map(|(d, _)| d.as_str())
                .chain(parsed.images.iter().map(String::as_str))
                .collect::<Vec<_>>(),
        )
        .unwrap_or_default();
        let now = now_millis();
        self.store()?.transaction(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO ecr_images (account, region, repository, digest, manifest,
                     media_type, artifact_media_type, subject, refs, size, pushed, scanned)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    repo.name,
                    digest,
                    text,
                    parsed.media_type,
                    parsed.artifact_media_type,
                    parsed.subject,
                    refs,
                    size,
                    now,
                    repo.scan_on_push.then_some(now)
                ],
            )?;
            if let Some(tag) = tag {
                c.execute_cached(
                    "INSERT OR REPLACE INTO ecr_image_tags (account, region, repository, tag, digest)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    [&ctx.account, &ctx.region, &repo.name, tag, &digest],
                )?;
            }
            Ok::<_, rusqlite::Error>(())
        })?;
        let image = Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", repo.name.as_str())
            .with(
                "imageId",
                Value::map()
                    .with("imageDigest", digest.as_str())
                    .with_opt("imageTag", tag),
            )
            .with("imageManifest", text)
            .with("imageManifestMediaType", parsed.media_type.as_str());
        Ok(Value::map().with("image", image))
    }

    /// An image's size: the sum of its blobs' sizes, each of which the repository must
    /// hold (`LayersNotFoundException`), or of the images a list names
    /// (`ReferencedImagesNotFoundException`).
    fn referenced_size(
        &self,
        ctx: &Context,
        repository: &str,
        parsed: &manifest::Manifest,
    ) -> AwsResult<i64> {
        let (mut size, mut missing) = (0, Vec::new());
        for (digest, _) in &parsed.blobs {
            match self.layer_size(ctx, repository, digest)? {
                Some(s) => size += s,
                None => missing.push(digest.as_str()),
            }
        }
        if !missing.is_empty() {
            return Err(layers_not_found(ctx, repository, &missing));
        }
        for digest in &parsed.images {
            match self.images(ctx, repository, Some(digest))?.pop() {
                Some(image) => size += image.size,
                None => missing.push(digest.as_str()),
            }
        }
        if !missing.is_empty() {
            return Err(error(
                "ReferencedImagesNotFoundException",
                format!(
                    "The following images referenced in the manifest list were not found in the repository with name '{repository}': [{}]",
                    missing.join(", ")
                ),
            ));
        }
        Ok(size)
    }

    /// Refuses a push that changes nothing (`ImageAlreadyExistsException`) or moves an
    /// immutable tag to another image (`ImageTagAlreadyExistsException`).
    fn check_tag_move(
        &self,
        ctx: &Context,
        repo: &Repository,
        tag: Option<&str>,
        digest: &str,
    ) -> AwsResult<()> {
        let current = match tag {
            Some(tag) => self.tag_digest(ctx, &repo.name, tag)?,
            None => None,
        };
        let exists =
            || -> AwsResult<bool> { Ok(!self.images(ctx, &repo.name, Some(digest))?.is_empty()) };
        match (tag, current) {
            (Some(tag), Some(current)) if current != digest && repo.tag_is_immutable(tag) => {
                Err(error(
                    "ImageTagAlreadyExistsException",
                    format!(
                        "The image tag '{tag}' already exists in the '{}' repository and cannot be overwritten because the tag is immutable.",
                        repo.name
                    ),
                ))
            }
            (Some(tag), Some(current)) if current == digest => Err(error(
                "ImageAlreadyExistsException",
                format!(
                    "Image with digest '{digest}' and tag '{tag}' already exists in the repository with name '{}' in registry with id '{}'",
                    repo.name, ctx.account
                ),
            )),
            (None, _) if exists()? => Err(error(
                "ImageAlreadyExistsException",
                format!(
                    "Image with digest '{digest}' already exists in the repository with name '{}' in registry with id '{}'",
                    repo.name, ctx.account
                ),
            )),
            _ => Ok(()),
        }
    }

    /// DescribeImages: the images asked for (`ImageNotFoundException` for the first
    /// missing), or every image passing the filter, a page at a time.
    pub(super) fn describe_images(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let limit = max_results(input)?;
        let details = match input.get("imageIds").and_then(Value::as_list) {
            Some(ids) => {
                let mut details = Vec::with_capacity(ids.len());
                for id in ids {
                    let image = self
                        .resolve(ctx, &repo.name, id)?
                        .map_err(|_| image_not_found(ctx, &repo.name, id))?;
                    details.push(image.detail(ctx, &repo.name));
                }
                details
            }
            None => self
                .images(ctx, &repo.name, None)?
                .iter()
                .filter(|i| i.passes(input))
                .map(|i| i.detail(ctx, &repo.name))
                .collect(),
        };
        let (page, next) = paging::page(details, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("imageDetails", Value::List(page))
            .with_opt("nextToken", next))
    }

    /// ListImages: the ids of the images passing the filter, one per tag.
    pub(super) fn list_images(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let limit = max_results(input)?;
        let ids = self
            .images(ctx, &repo.name, None)?
            .iter()
            .filter(|i| i.passes(input))
            .flat_map(Image::ids)
            .collect();
        let (page, next) = paging::page(ids, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("imageIds", Value::List(page))
            .with_opt("nextToken", next))
    }

    /// BatchGetImage: each image's manifest, or its failure.
    pub(super) fn batch_get_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let (mut images, mut failures) = (Vec::new(), Vec::new());
        for id in input
            .get("imageIds")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            match self.resolve(ctx, &repo.name, id)? {
                Ok(image) => images.push(
                    Value::map()
                        .with("registryId", ctx.account.as_str())
                        .with("repositoryName", repo.name.as_str())
                        .with(
                            "imageId",
                            Value::map()
                                .with("imageDigest", image.digest.as_str())
                                .with_opt("imageTag", id.str("imageTag")),
                        )
                        .with("imageManifest", image.manifest)
                        .with("imageManifestMediaType", image.media_type),
                ),
                Err((code, reason)) => failures.push(failure(id, code, reason)),
            }
        }
        Ok(Value::map()
            .with("images", Value::List(images))
            .with("failures", Value::List(failures)))
    }

    /// BatchDeleteImage: a tag alone removes the tag (and the image with its last tag); a
    /// digest removes the image and its tags.
    pub(super) fn batch_delete_image(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let (mut deleted, mut failures) = (Vec::new(), Vec::new());
        for id in input
            .get("imageIds")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let image = match self.resolve(ctx, &repo.name, id)? {
                Ok(image) => image,
                Err((code, reason)) => {
                    failures.push(failure(id, code, reason));
                    continue;
                }
            };
            let whole = id.str("imageTag").is_none() || image.tags.len() == 1;
            let removed: Vec<&str> = match (id.str("imageTag"), whole) {
                (Some(tag), false) => vec![tag],
                _ => image.tags.iter().map(String::as_str).collect(),
            };
            self.store()?.transaction(|c| {
                for tag in &removed {
                    c.execute_cached(
                        "DELETE FROM ecr_image_tags
                         WHERE account = ?1 AND region = ?2 AND repository = ?3 AND tag = ?4",
                        [&ctx.account, &ctx.region, &repo.name, *tag],
                    )?;
                }
                if whole {
                    c.execute_cached(
                        "DELETE FROM ecr_images
                         WHERE account = ?1 AND region = ?2 AND repository = ?3 AND digest = ?4",
                        [&ctx.account, &ctx.region, &repo.name, &image.digest],
                    )?;
                }
                Ok::<_, rusqlite::Error>(())
            })?;
            let id = || Value::map().with("imageDigest", image.digest.as_str());
            match removed.is_empty() {
                true => deleted.push(id()),
                false => deleted.extend(removed.iter().map(|t| id().with("imageTag", *t))),
            }
        }
        Ok(Value::map()
            .with("imageIds", Value::List(deleted))
            .with("failures", Value::List(failures)))
    }

    /// An operation on one image (its scan, scan findings, replication or signing status,
    /// storage class): the repository's error, then `ImageNotFoundException`. A scan finds
    /// nothing and completes at once; no image is replicated, signed or archived.
    pub(super) fn one_image(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let id = input.get("imageId").cloned().unwrap_or_else(Value::map);
        let image = self
            .resolve(ctx, &repo.name, &id)?
            .map_err(|_| image_not_found(ctx, &repo.name, &id))?;
        let answer = Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", repo.name.as_str())
            .with(
                "imageId",
                id.clone().with("imageDigest", image.digest.as_str()),
            );
        match operation {
            "StartImageScan" => {
                let now = now_millis();
                self.store()?.with(|c| {
                    c.execute_cached(
                        "UPDATE ecr_images SET scanned = ?5
                         WHERE account = ?1 AND region = ?2 AND repository = ?3 AND digest = ?4",
                        rusqlite::params![ctx.account, ctx.region, repo.name, image.digest, now],
                    )
                })?;
                Ok(answer.with("imageScanStatus", scan_status()))
            }
            "DescribeImageScanFindings" => match image.scanned {
                Some(at) => Ok(answer.with("imageScanStatus", scan_status()).with(
                    "imageScanFindings",
                    Value::map()
                        .with("imageScanCompletedAt", Value::Timestamp(at))
                        .with("vulnerabilitySourceUpdatedAt", Value::Timestamp(at))
                        .with("findingSeverityCounts", Value::map())
                        .with("findings", Value::List(Vec::new())),
                )),
                None => Err(error(
                    "ScanNotFoundException",
                    format!(
                        "Image scan does not exist for the image with '{}' in the repository with name '{}' in the registry with id '{}'",
                        image_id_text(&id),
                        repo.name,
                        ctx.account
                    ),
                )),
            },
            "DescribeImageReplicationStatus" => {
                Ok(answer.with("replicationStatuses", Value::List(Vec::new())))
            }
            "DescribeImageSigningStatus" => {
                Ok(answer.with("signingStatuses", Value::List(Vec::new())))
            }
            _ => match input.str("targetStorageClass") {
                Some("STANDARD") => Ok(answer.with("imageStatus", "ACTIVE")),
                _ => Err(error(
                    "ImageStorageClassUpdateNotSupportedException",
                    "Archiving images is not supported in this registry",
                )),
            },
        }
    }

    /// ListImageReferrers: the images whose `subject` is the one asked for.
    pub(super) fn list_referrers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let subject = input.get("subjectId").and_then(|s| s.str("imageDigest"));
        let referrers = self
            .images(ctx, &repo.name, None)?
            .into_iter()
            .filter(|i| subject.is_some() && i.subject.as_deref() == subject)
            .map(|i| {
                Value::map()
                    .with("digest", i.digest.as_str())
                    .with("mediaType", i.media_type.as_str())
                    .with_opt("artifactType", i.artifact_media_type.as_deref())
                    .with("size", Value::Integer(i.manifest.len() as i64))
            })
            .collect();
        Ok(Value::map().with("referrers", Value::List(referrers)))
    }

    /// Whether an image of `repository` refers to the blob `digest`.
    pub(super) fn is_referenced(
        &self,
        ctx: &Context,
        repository: &str,
        digest: &str,
    ) -> AwsResult<bool> {
        Ok(self.store()?.read(|c| {
            c.query_row_cached(
                "SELECT EXISTS (SELECT 1 FROM ecr_images, json_each(refs)
                 WHERE account = ?1 AND region = ?2 AND repository = ?3 AND value = ?4)",
                [&ctx.account, &ctx.region, repository, digest],
                |r| r.get(0),
            )
        })?)
    }

    /// GetAuthorizationToken: one token for the caller's registry at Roto's address.
    pub(super) fn authorization_token(&self, ctx: &Context) -> Value {
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("AWS:{}", ids::hex(64)));
        let data = Value::map()
            .with("authorizationToken", token)
            .with(
                "expiresAt",
                Value::Timestamp(now_millis() + TOKEN_LIFETIME_MS),
            )
            .with("proxyEndpoint", self.endpoint(ctx));
        Value::map().with("authorizationData", Value::List(vec![data]))
    }
}
