//! Amazon ECR over the json 1.1 protocol: repositories and their settings, policies and
//! tags, and images pushed and pulled through the API as the ECR proxy drives it (layer
//! uploads, PutImage, BatchGetImage, GetDownloadUrlForLayer). Roto serves no Docker
//! registry protocol (`docker push` and `docker pull` do not reach it).
//!
//! A repository is a row of `ecr_repositories`, which keeps its settings, its repository
//! and lifecycle policies and its tags; a registry's policy is a row of `ecr_registries`,
//! its other settings rows of `ecr_registry_items`. Layers are blobs (`ecr_layers`), images
//! rows of `ecr_images` with their tags in `ecr_image_tags`.
//! The tables are created on the first call.
//!
//! - [`repositories`]: Create/Describe/DeleteRepository, the scanning and tag-mutability
//!   settings, and tags.
//! - [`policies`]: repository policies, lifecycle policies and their previews, the
//!   registry's policy and DescribeRegistry.
//! - [`layers`]: layer uploads in parts, layer availability, and the layer downloads
//!   GetDownloadUrlForLayer points at (`/_aws/ecr/...` on Roto's port, a data plane).
//! - [`manifest`]: the image manifests PutImage reads (Docker v2, OCI, lists and indexes).
//! - [`images`]: PutImage, the image operations over what was pushed, and
//!   GetAuthorizationToken.
//! - [`registry`]: account settings, scanning, replication and signing configurations,
//!   pull through cache rules, repository creation templates, pull-time exclusions,
//!   replication backfills.
//!
//! ECR checks its input itself and reports every violation as `InvalidParameterException`
//! ("Invalid parameter at 'repositoryName' failed to satisfy constraint: ..."), so the
//! model's generic validation is off and the handlers check what they read.

mod images;
mod layers;
mod manifest;
mod policies;
mod registry;
mod repositories;

use std::sync::{Arc, OnceLock};

use roto_core::store::{LazySchema, Store};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "ecr",
    model: "ecr",
    query_model: None,
    signing_names: &["ecr"],
    target_prefix: Some("AmazonEC2ContainerRegistry_V20150921"),
    query_version: None,
    crc32_responses: false,
    validate_input: false,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ecr_repositories (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    mutability TEXT NOT NULL,
    exclusions TEXT,
    scan_on_push INTEGER NOT NULL,
    encryption TEXT NOT NULL,
    kms_key TEXT,
    policy TEXT,
    lifecycle TEXT,
    preview TEXT,
    tags TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS ecr_registries (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    policy TEXT NOT NULL,
    PRIMARY KEY (account, region)
);
CREATE TABLE IF NOT EXISTS ecr_registry_items (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (account, region, kind, name)
);
CREATE TABLE IF NOT EXISTS ecr_uploads (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    repository TEXT NOT NULL,
    received INTEGER NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, id)
);
CREATE TABLE IF NOT EXISTS ecr_upload_parts (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    upload TEXT NOT NULL,
    first_byte INTEGER NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (account, region, upload, first_byte)
);
CREATE TABLE IF NOT EXISTS ecr_layers (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    repository TEXT NOT NULL,
    digest TEXT NOT NULL,
    size INTEGER NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (account, region, repository, digest)
);
CREATE TABLE IF NOT EXISTS ecr_images (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    repository TEXT NOT NULL,
    digest TEXT NOT NULL,
    manifest TEXT NOT NULL,
    media_type TEXT NOT NULL,
    artifact_media_type TEXT,
    subject TEXT,
    refs TEXT NOT NULL,
    size INTEGER NOT NULL,
    pushed INTEGER NOT NULL,
    scanned INTEGER,
    PRIMARY KEY (account, region, repository, digest)
);
CREATE TABLE IF NOT EXISTS ecr_image_tags (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    repository TEXT NOT NULL,
    tag TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (account, region, repository, tag)
);
";

/// The service's state.
struct Inner {
    env: Arc<Env>,
    schema: LazySchema,
}

/// Amazon ECR.
pub struct Ecr {
    inner: Inner,
}

impl Ecr {
    /// The service; its tables are created on its first call.
    pub fn new(env: Arc<Env>) -> Ecr {
        env.store.register_blob_column("ecr_upload_parts", "blob");
        env.store.register_blob_column("ecr_layers", "blob");
        Ecr {
            inner: Inner {
                env,
                schema: LazySchema::new(&[SCHEMA]),
            },
        }
    }
}

impl Inner {
    /// The store, its tables created.
    fn store(&self) -> AwsResult<&Store> {
        self.schema.store(&self.env.store)
    }

    /// Roto's address, as registry clients reach it.
    fn endpoint(&self, ctx: &Context) -> String {
        match self.env.endpoint() {
            Some(url) => url.to_string(),
            None => format!("http://{}", ctx.host),
        }
    }

    async fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        match operation {
            "CreateRepository" => self.create_repository(ctx, input).await,
            "DescribeRepositories" => self.describe_repositories(ctx, input),
            "DeleteRepository" => self.delete_repository(ctx, input),
            "PutImageScanningConfiguration" => self.put_scanning(ctx, input),
            "PutImageTagMutability" => self.put_mutability(ctx, input),
            "TagResource" => self.tag_resource(ctx, input),
            "UntagResource" => self.untag_resource(ctx, input),
            "ListTagsForResource" => self.list_tags(ctx, input),
            "SetRepositoryPolicy" => self.set_repository_policy(ctx, input),
            "GetRepositoryPolicy" => self.get_repository_policy(ctx, input),
            "DeleteRepositoryPolicy" => self.delete_repository_policy(ctx, input),
            "PutLifecyclePolicy" => self.put_lifecycle_policy(ctx, input),
            "GetLifecyclePolicy" => self.get_lifecycle_policy(ctx, input),
            "DeleteLifecyclePolicy" => self.delete_lifecycle_policy(ctx, input),
            "StartLifecyclePolicyPreview" => self.start_preview(ctx, input),
            "GetLifecyclePolicyPreview" => self.get_preview(ctx, input),
            "InitiateLayerUpload" => self.initiate_layer_upload(ctx, input),
            "UploadLayerPart" => self.upload_layer_part(ctx, input),
            "CompleteLayerUpload" => self.complete_layer_upload(ctx, input).await,
            "PutImage" => self.put_image(ctx, input),
            "PutRegistryPolicy" => self.put_registry_policy(ctx, input),
            "GetRegistryPolicy" => self.get_registry_policy(ctx),
            "DeleteRegistryPolicy" => self.delete_registry_policy(ctx),
            "DescribeRegistry" => self.describe_registry(ctx),
            "DescribeImages" => self.describe_images(ctx, input),
            "ListImages" => self.list_images(ctx, input),
            "BatchGetImage" => self.batch_get_image(ctx, input),
            "BatchDeleteImage" => self.batch_delete_image(ctx, input),
            "GetAuthorizationToken" => Ok(self.authorization_token(ctx)),
            "DescribeImageScanFindings"
            | "StartImageScan"
            | "DescribeImageReplicationStatus"
            | "DescribeImageSigningStatus"
            | "UpdateImageStorageClass" => self.one_image(ctx, operation, input),
            "ListImageReferrers" => self.list_referrers(ctx, input),
            "BatchCheckLayerAvailability" => self.check_layers(ctx, input),
            "GetDownloadUrlForLayer" => self.layer_url(ctx, input),
            "StartReplicationBackfill" => self.start_backfill(ctx, input),
            "ListReplicationBackfills" => self.list_backfills(ctx, input),
            "DescribeReplicationBackfillResults" | "StopReplicationBackfill" => {
                self.one_backfill(ctx, operation, input)
            }
            "GetAccountSetting" => self.get_account_setting(ctx, input),
            "PutAccountSetting" => self.put_account_setting(ctx, input),
            "GetRegistryScanningConfiguration" => self.get_registry_scanning(ctx),
            "PutRegistryScanningConfiguration" => self.put_registry_scanning(ctx, input),
            "BatchGetRepositoryScanningConfiguration" => {
                self.batch_get_repository_scanning(ctx, input)
            }
            "PutReplicationConfiguration" => self.put_replication(ctx, input),
            "PutSigningConfiguration" => self.put_signing(ctx, input),
            "GetSigningConfiguration" => self.get_signing(ctx),
            "DeleteSigningConfiguration" => self.delete_signing(ctx),
            "CreatePullThroughCacheRule" => self.create_cache_rule(ctx, input),
            "DescribePullThroughCacheRules" => self.describe_cache_rules(ctx, input),
            "UpdatePullThroughCacheRule" => self.update_cache_rule(ctx, input),
            "ValidatePullThroughCacheRule" => self.validate_cache_rule(ctx, input),
            "DeletePullThroughCacheRule" => self.delete_cache_rule(ctx, input),
            "CreateRepositoryCreationTemplate" => self.create_template(ctx, input),
            "DescribeRepositoryCreationTemplates" => self.describe_templates(ctx, input),
            "UpdateRepositoryCreationTemplate" => self.update_template(ctx, input),
            "DeleteRepositoryCreationTemplate" => self.delete_template(ctx, input),
            "RegisterPullTimeUpdateExclusion" => self.register_exclusion(ctx, input),
            "DeregisterPullTimeUpdateExclusion" => self.deregister_exclusion(ctx, input),
            "ListPullTimeUpdateExclusions" => self.list_exclusions(ctx, input),
            other => Err(AwsError::not_implemented(other)),
        }
    }
}

impl Service for Ecr {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            if operation == "GetLayerBlob" {
                return self.inner.layer_blob(&request.input);
            }
            let output = self.inner.dispatch(ctx, operation, &request.input).await?;
            Ok(Response::new(output))
        })
    }
}

/// An ECR error (ECR answers every client error with status 400).
fn error(code: &'static str, message: impl Into<String>) -> AwsError {
    AwsError::new(code, message).with_status(400)
}

/// `InvalidParameterException` for `member`, in ECR's words.
fn invalid_parameter(member: &str, constraint: &str) -> AwsError {
    error(
        "InvalidParameterException",
        format!("Invalid parameter at '{member}' failed to satisfy constraint: '{constraint}'"),
    )
}

/// `RepositoryNotFoundException`.
fn repository_not_found(name: &str, registry: &str) -> AwsError {
    error(
        "RepositoryNotFoundException",
        format!(
            "The repository with name '{name}' does not exist in the registry with id '{registry}'"
        ),
    )
}

/// The pattern ECR's messages quote for repository names.
const NAME_PATTERN: &str = "(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*";

/// Checks a repository name as ECR does: 2 to 256 characters, path components of
/// lowercase letters and digits joined by `.`, `_`, `__` or runs of `-` (the model's
/// pattern, which the messages still quote in its older form).
fn check_repository_name(name: &str) -> AwsResult<()> {
    static PATTERN: OnceLock<regex_lite::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex_lite::Regex::new(
            r"^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$",
        )
        .expect("the repository name pattern parses")
    });
    let len = name.chars().count();
    if len < 2 {
        return Err(invalid_parameter(
            "repositoryName",
            "must have length greater than or equal to 2",
        ));
    }
    if len > 256 {
        return Err(invalid_parameter(
            "repositoryName",
            "must have length less than or equal to 256",
        ));
    }
    if !pattern.is_match(name) {
        return Err(invalid_parameter(
            "repositoryName",
            &format!("must satisfy regular expression '{NAME_PATTERN}'"),
        ));
    }
    Ok(())
}

/// A listing's page size (`maxResults`, 1 to 1,000, 100 by default).
fn max_results(input: &Value) -> AwsResult<usize> {
    match input.int("maxResults") {
        Some(n) if n > 1000 => Err(invalid_parameter(
            "maxResults",
            "Member must have value less than or equal to 1000",
        )),
        Some(n) if n < 1 => Err(invalid_parameter(
            "maxResults",
            "Member must have value greater than or equal to 1",
        )),
        Some(n) => Ok(n as usize),
        None => Ok(100),
    }
}

/// The registry a call names (`registryId`, the caller's account by default).
fn registry_of<'a>(ctx: &'a Context, input: &'a Value) -> &'a str {
    input.str("registryId").unwrap_or(&ctx.account)
}

/// A repository's ARN.
fn repository_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:ecr:{}:{}:repository/{name}",
        ctx.region, ctx.account
    )
}

/// Whether a policy document is one ECR stores: a JSON object with a `Statement`.
fn is_policy(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|doc| doc.get("Statement").map(|s| s.is_array() || s.is_object()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_names_follow_the_models_pattern() {
        for ok in [
            "ab",
            "cdk-hnb659fds-container-assets",
            "team/app",
            "a__b",
            "a--b",
            "a.b_c",
        ] {
            assert!(check_repository_name(ok).is_ok(), "{ok}");
        }
        for bad in ["a", "Upper", "a/", "/a", "a..b", "a___b", "-a", "a b"] {
            let err = check_repository_name(bad).unwrap_err();
            assert_eq!(err.code, "InvalidParameterException", "{bad}");
        }
        assert!(check_repository_name(&"a".repeat(257)).is_err());
    }

    #[test]
    fn policies_need_a_statement() {
        assert!(is_policy(r#"{"Version":"2012-10-17","Statement":[]}"#));
        assert!(!is_policy(r#"{"Version":"2012-10-17"}"#));
        assert!(!is_policy("not json"));
    }
}
