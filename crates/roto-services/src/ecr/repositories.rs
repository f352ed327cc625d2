//! Repositories: CreateRepository, DescribeRepositories, DeleteRepository, the scanning
//! and tag-mutability settings (PutImageScanningConfiguration, PutImageTagMutability), and
//! the tags AWS keeps on repositories (TagResource, UntagResource, ListTagsForResource).
//!
//! A repository encrypted with `KMS` or `KMS_DSSE` names its key by ARN: the key the
//! request names, or the AWS managed key `alias/aws/ecr`, both looked up through KMS's
//! DescribeKey, so a key that does not exist is refused as AWS refuses it.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;

use super::{
    check_repository_name, error, invalid_parameter, max_results, registry_of, repository_arn,
    repository_not_found, Inner,
};
use crate::paging;
use crate::tags::{self, Tags};

/// The most tags a repository may carry.
const MAX_TAGS: usize = 50;

/// The tag mutability settings.
const MUTABILITIES: [&str; 4] = [
    "MUTABLE",
    "IMMUTABLE",
    "IMMUTABLE_WITH_EXCLUSION",
    "MUTABLE_WITH_EXCLUSION",
];

/// The encryption types.
const ENCRYPTIONS: [&str; 3] = ["AES256", "KMS", "KMS_DSSE"];

/// The tables of what a repository holds, each with a `repository` column.
const REPOSITORY_TABLES: [&str; 4] = ["ecr_image_tags", "ecr_images", "ecr_layers", "ecr_uploads"];

/// The blobs a repository's layers and unfinished uploads keep, and the uploads' parts
/// removed with them.
fn repository_blobs(
    c: &rusqlite::Connection,
    ctx: &Context,
    name: &str,
) -> rusqlite::Result<Vec<String>> {
    let mut blobs: Vec<String> = c
        .prepare_cached(
            "SELECT blob FROM ecr_layers WHERE account = ?1 AND region = ?2 AND repository = ?3
             UNION ALL
             SELECT p.blob FROM ecr_upload_parts p JOIN ecr_uploads u
               ON p.account = u.account AND p.region = u.region AND p.upload = u.id
             WHERE u.account = ?1 AND u.region = ?2 AND u.repository = ?3",
        )?
        .query_map([&ctx.account, &ctx.region, name], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    blobs.dedup();
    c.execute_cached(
        "DELETE FROM ecr_upload_parts WHERE account = ?1 AND region = ?2 AND upload IN
           (SELECT id FROM ecr_uploads WHERE account = ?1 AND region = ?2 AND repository = ?3)",
        [&ctx.account, &ctx.region, name],
    )?;
    Ok(blobs)
}

/// A repository as stored.
pub(super) struct Repository {
    pub(super) name: String,
    created: i64,
    mutability: String,
    exclusions: Option<Json>,
    pub(super) scan_on_push: bool,
    encryption: String,
    kms_key: Option<String>,
    pub(super) policy: Option<String>,
    pub(super) lifecycle: Option<String>,
    pub(super) preview: Option<String>,
    tags: Tags,
}

const COLUMNS: &str = "name, created, mutability, exclusions, scan_on_push, encryption, kms_key,
    policy, lifecycle, preview, tags";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Repository> {
    let exclusions: Option<String> = r.get(3)?;
    let tags: String = r.get(10)?;
    Ok(Repository {
        name: r.get(0)?,
        created: r.get(1)?,
        mutability: r.get(2)?,
        exclusions: exclusions.and_then(|e| serde_json::from_str(&e).ok()),
        scan_on_push: r.get(4)?,
        encryption: r.get(5)?,
        kms_key: r.get(6)?,
        policy: r.get(7)?,
        lifecycle: r.get(8)?,
        preview: r.get(9)?,
        tags: tags::from_stored(&tags),
    })
}

impl Repository {
    fn describe(&self, ctx: &Context) -> Value {
        let encryption = Value::map()
            .with("encryptionType", self.encryption.as_str())
            .with_opt("kmsKey", self.kms_key.as_deref());
        Value::map()
            .with("repositoryArn", repository_arn(ctx, &self.name))
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", self.name.as_str())
            .with(
                "repositoryUri",
                format!(
                    "{}.dkr.ecr.{}.amazonaws.com/{}",
                    ctx.account, ctx.region, self.name
                ),
            )
            .with("createdAt", Value::Timestamp(self.created))
            .with("imageTagMutability", self.mutability.as_str())
            .with_opt(
                "imageTagMutabilityExclusionFilters",
                self.exclusions.as_ref().map(Value::from_json),
            )
            .with(
                "imageScanningConfiguration",
                Value::map().with("scanOnPush", self.scan_on_push),
            )
            .with("encryptionConfiguration", encryption)
    }

    /// Whether `tag`, once on an image, may not move to another: the repository is
    /// `IMMUTABLE` and the tag matches none of its exclusion filters, or
    /// `MUTABLE_WITH_EXCLUSION` and the tag matches one.
    pub(super) fn tag_is_immutable(&self, tag: &str) -> bool {
        let excluded = || {
            self.exclusions
                .as_ref()
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("filter").and_then(Json::as_str))
                .any(|filter| crate::glob::glob(filter, tag, false))
        };
        match self.mutability.as_str() {
            "IMMUTABLE" => true,
            "IMMUTABLE_WITH_EXCLUSION" => !excluded(),
            "MUTABLE_WITH_EXCLUSION" => excluded(),
            _ => false,
        }
    }

    /// The answer of the setting operations: the registry, the name and `member`.
    fn setting(&self, ctx: &Context, member: &str, value: Value) -> Value {
        Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryName", self.name.as_str())
            .with(member, value)
    }
}

/// The tag mutability and its exclusion filters a request sets: filters are required with
/// the `*_WITH_EXCLUSION` settings and refused with the others.
fn mutability_of(input: &Value) -> AwsResult<(String, Option<Json>)> {
    let mutability = input.str("imageTagMutability").unwrap_or("MUTABLE");
    if !MUTABILITIES.contains(&mutability) {
        return Err(invalid_parameter(
            "imageTagMutability",
            &format!(
                "Member must satisfy enum value set: [{}]",
                MUTABILITIES.join(", ")
            ),
        ));
    }
    let filters = input
        .get("imageTagMutabilityExclusionFilters")
        .and_then(Value::as_list)
        .filter(|l| !l.is_empty());
    let exclusion = mutability.ends_with("_WITH_EXCLUSION");
    match (exclusion, filters) {
        (true, None) => Err(error(
            "InvalidParameterException",
            format!("Image tag mutability exclusion filters are required when image tag mutability is set to {mutability}."),
        )),
        (false, Some(_)) => Err(error(
            "InvalidParameterException",
            format!("Image tag mutability exclusion filters are not allowed when image tag mutability is set to {mutability}."),
        )),
        (_, filters) => Ok((
            mutability.to_string(),
            filters.map(|f| Value::List(f.to_vec()).to_json()),
        )),
    }
}

/// The repository ARN a tagging call names, checked to be this account's and region's.
fn tagged_name<'a>(ctx: &Context, input: &'a Value) -> AwsResult<&'a str> {
    let arn = input.str("resourceArn").unwrap_or_default();
    let prefix = repository_arn(ctx, "");
    arn.strip_prefix(prefix.as_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| invalid_parameter("resourceArn", "Invalid ARN"))
}

/// `RepositoryAlreadyExistsException`.
fn already_exists(name: &str, registry: &str) -> roto_core::AwsError {
    error(
        "RepositoryAlreadyExistsException",
        format!(
            "The repository with name '{name}' already exists in the registry with id '{registry}'"
        ),
    )
}

/// Checks tags as ECR does: no reserved `aws:` keys, at most [`MAX_TAGS`].
fn check_tags(tags: &Tags) -> AwsResult<()> {
    if tags
        .keys()
        .any(|k| k.to_ascii_lowercase().starts_with("aws:"))
    {
        return Err(error(
            "InvalidTagParameterException",
            "Tag keys that start with 'aws:' are reserved for AWS use.",
        ));
    }
    if tags.len() > MAX_TAGS {
        return Err(error(
            "TooManyTagsException",
            format!("A repository can have at most {MAX_TAGS} tags."),
        ));
    }
    Ok(())
}

impl Inner {
    /// The repository `name` in the registry a call names, if it exists.
    pub(super) fn find(
        &self,
        ctx: &Context,
        registry: &str,
        name: &str,
    ) -> AwsResult<Option<Repository>> {
        if registry != ctx.account {
            return Ok(None);
        }
        Ok(self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM ecr_repositories
                 WHERE account = ?1 AND region = ?2 AND name = ?3"
            ))?
            .query_row([&ctx.account, &ctx.region, name], from_row)
            .optional()
        })?)
    }

    /// The repository a call's `repositoryName` and `registryId` name, or
    /// `RepositoryNotFoundException`.
    pub(super) fn repository(&self, ctx: &Context, input: &Value) -> AwsResult<Repository> {
        let name = input.str("repositoryName").unwrap_or_default();
        check_repository_name(name)?;
        let registry = registry_of(ctx, input);
        self.find(ctx, registry, name)?
            .ok_or_else(|| repository_not_found(name, registry))
    }

    /// Sets one column of a repository's row.
    pub(super) fn set_column(
        &self,
        ctx: &Context,
        name: &str,
        column: &'static str,
        value: &dyn rusqlite::ToSql,
    ) -> AwsResult<()> {
        self.store()?.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE ecr_repositories SET {column} = ?4
                     WHERE account = ?1 AND region = ?2 AND name = ?3"
                ),
                rusqlite::params![ctx.account, ctx.region, name, value],
            )
        })?;
        Ok(())
    }

    /// The key ARN a repository encrypted with KMS names, looked up through KMS.
    async fn kms_key_arn(&self, ctx: &Context, key: Option<&str>) -> AwsResult<String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| roto_core::AwsError::internal("the dispatcher is not running"))?;
        let input = Value::map().with("KeyId", key.unwrap_or("alias/aws/ecr"));
        let described = dispatcher.call(ctx, "kms", "DescribeKey", input).await;
        let arn = described.map_err(|e| {
            error("KmsException", e.message.clone()).with_field("kmsError", e.code.to_string())
        })?;
        Ok(arn
            .get("KeyMetadata")
            .and_then(|m| m.str("Arn"))
            .unwrap_or_default()
            .to_string())
    }

    pub(super) async fn create_repository(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("repositoryName").unwrap_or_default();
        check_repository_name(name)?;
        let (mutability, exclusions) = mutability_of(input)?;
        let tags = tags::from_input(input, "tags");
        check_tags(&tags)?;
        let encryption = input.get("encryptionConfiguration");
        let encryption_type = encryption
            .and_then(|e| e.str("encryptionType"))
            .unwrap_or("AES256");
        if !ENCRYPTIONS.contains(&encryption_type) {
            return Err(invalid_parameter(
                "encryptionConfiguration.encryptionType",
                &format!(
                    "Member must satisfy enum value set: [{}]",
                    ENCRYPTIONS.join(", ")
                ),
            ));
        }
        let key = encryption.and_then(|e| e.str("kmsKey"));
        if encryption_type == "AES256" && key.is_some() {
            return Err(error(
                "InvalidParameterException",
                "Invalid parameter: kmsKey can only be specified when encryptionType is KMS or KMS_DSSE",
            ));
        }
        let registry = registry_of(ctx, input);
        if self.find(ctx, registry, name)?.is_some() {
            return Err(already_exists(name, registry));
        }
        let kms_key = match encryption_type {
            "AES256" => None,
            _ => Some(self.kms_key_arn(ctx, key).await?),
        };
        let repository = Repository {
            name: name.to_string(),
            created: now_millis(),
            mutability,
            exclusions,
            scan_on_push: input
                .get("imageScanningConfiguration")
                .and_then(|s| s.bool("scanOnPush"))
                .unwrap_or(false),
            encryption: encryption_type.to_string(),
            kms_key,
            policy: None,
            lifecycle: None,
            preview: None,
            tags,
        };
        let inserted = self.store()?.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO ecr_repositories (account, region, name, created,
                     mutability, exclusions, scan_on_push, encryption, kms_key, tags)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    repository.name,
                    repository.created,
                    repository.mutability,
                    repository.exclusions.as_ref().map(Json::to_string),
                    repository.scan_on_push,
                    repository.encryption,
                    repository.kms_key,
                    tags::store_text(&repository.tags),
                ],
            )
        })?;
        if inserted == 0 {
            return Err(already_exists(name, registry));
        }
        Ok(Value::map().with("repository", repository.describe(ctx)))
    }

    pub(super) fn describe_repositories(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let registry = registry_of(ctx, input);
        let limit = max_results(input)?;
        let items = match input.get("repositoryNames").and_then(Value::as_list) {
            Some(names) => {
                let mut items = Vec::with_capacity(names.len());
                for name in names {
                    let name = name.as_str().unwrap_or_default();
                    check_repository_name(name)?;
                    let repo = self
                        .find(ctx, registry, name)?
                        .ok_or_else(|| repository_not_found(name, registry))?;
                    items.push(repo.describe(ctx));
                }
                items
            }
            None if registry != ctx.account => Vec::new(),
            None => self
                .store()?
                .read(|c| {
                    let mut stmt = c.prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM ecr_repositories
                         WHERE account = ?1 AND region = ?2 ORDER BY name"
                    ))?;
                    let rows = stmt.query_map([&ctx.account, &ctx.region], from_row)?;
                    rows.collect::<rusqlite::Result<Vec<_>>>()
                })?
                .iter()
                .map(|r| r.describe(ctx))
                .collect(),
        };
        let (page, next) = paging::page(items, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("repositories", Value::List(page))
            .with_opt("nextToken", next))
    }

    pub(super) fn delete_repository(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let blobs = self.store()?.transaction(|c| {
            let images: i64 = c.query_row_cached(
                "SELECT count(*) FROM ecr_images WHERE account = ?1 AND region = ?2 AND repository = ?3",
                [&ctx.account, &ctx.region, &repo.name],
                |r| r.get(0),
            )?;
            if images > 0 && input.bool("force") != Some(true) {
                return Ok(None);
            }
            let blobs = repository_blobs(c, ctx, &repo.name)?;
            for table in REPOSITORY_TABLES {
                c.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND repository = ?3"
                    ),
                    [&ctx.account, &ctx.region, &repo.name],
                )?;
            }
            c.execute_cached(
                "DELETE FROM ecr_repositories WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, &repo.name],
            )?;
            Ok::<_, rusqlite::Error>(Some(blobs))
        })?;
        let Some(blobs) = blobs else {
            return Err(error(
                "RepositoryNotEmptyException",
                format!(
                    "The repository with name '{}' in registry with id '{}' cannot be deleted because it still contains images",
                    repo.name, ctx.account
                ),
            ));
        };
        for blob in blobs {
            self.env.store.remove_blob(&blob);
        }
        Ok(Value::map().with("repository", repo.describe(ctx)))
    }

    pub(super) fn put_scanning(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let scan_on_push = input
            .get("imageScanningConfiguration")
            .and_then(|s| s.bool("scanOnPush"))
            .unwrap_or(false);
        self.set_column(ctx, &repo.name, "scan_on_push", &scan_on_push)?;
        Ok(repo.setting(
            ctx,
            "imageScanningConfiguration",
            Value::map().with("scanOnPush", scan_on_push),
        ))
    }

    pub(super) fn put_mutability(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let (mutability, exclusions) = mutability_of(input)?;
        let stored = exclusions.as_ref().map(Json::to_string);
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE ecr_repositories SET mutability = ?4, exclusions = ?5
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, repo.name, mutability, stored],
            )
        })?;
        Ok(repo
            .setting(ctx, "imageTagMutability", mutability.into())
            .with_opt(
                "imageTagMutabilityExclusionFilters",
                exclusions.as_ref().map(Value::from_json),
            ))
    }

    /// The repository a tagging call's ARN names.
    fn tagged(&self, ctx: &Context, input: &Value) -> AwsResult<Repository> {
        let name = tagged_name(ctx, input)?;
        self.find(ctx, &ctx.account, name)?
            .ok_or_else(|| repository_not_found(name, &ctx.account))
    }

    fn save_tags(&self, ctx: &Context, repo: &Repository) -> AwsResult<Value> {
        check_tags(&repo.tags)?;
        self.set_column(ctx, &repo.name, "tags", &tags::store_text(&repo.tags))?;
        Ok(Value::map())
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut repo = self.tagged(ctx, input)?;
        let added = tags::from_input(input, "tags");
        check_tags(&added)?;
        repo.tags.extend(added);
        self.save_tags(ctx, &repo)
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut repo = self.tagged(ctx, input)?;
        tags::remove(&mut repo.tags, input, "tagKeys");
        self.save_tags(ctx, &repo)
    }

    pub(super) fn list_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.tagged(ctx, input)?;
        Ok(Value::map().with("tags", tags::to_list(&repo.tags)))
    }
}
