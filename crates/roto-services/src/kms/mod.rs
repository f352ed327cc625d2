//! KMS: keys with real key material, over the json 1.1 protocol.
//!
//! Each key's material lives in `kms_keys` beside its metadata, per account and region (a
//! multi-Region key has a row in each region that holds a key of its set);
//! [`crypto`] holds every cryptographic step. Symmetric ciphertext blobs name their key, so
//! `Decrypt` needs no `KeyId`, and the encryption context is the AES-GCM associated data,
//! so a mismatched context fails as `InvalidCiphertextException` exactly as in AWS. Other
//! services (Secrets Manager, SSM SecureString) encrypt through this service's operations
//! via the dispatcher; the AWS managed key behind `alias/aws/<service>` is created the first
//! time that alias is used, as AWS does.
//!
//! - [`keys`]: CreateKey, DescribeKey, ListKeys, state changes, deletion, rotation,
//!   policies, tags.
//! - [`multi_region`]: multi-Region keys: ReplicateKey, UpdatePrimaryRegion, and the
//!   replicas' shared material and deletion.
//! - [`key_stores`]: custom key stores (CloudHSM and external), their connection states and
//!   the keys they hold.
//! - [`aliases`]: CreateAlias, UpdateAlias, DeleteAlias, ListAliases.
//! - [`grants`]: CreateGrant, ListGrants, RevokeGrant, RetireGrant, ListRetirableGrants.
//! - [`imports`]: imported key material (GetParametersForImport, ImportKeyMaterial,
//!   DeleteImportedKeyMaterial) and its expiry.
//! - [`ops`]: Encrypt, Decrypt, ReEncrypt, data keys, Sign/Verify, MACs, GetPublicKey,
//!   DeriveSharedSecret, Encapsulate/Decapsulate (ML-KEM), and each key's last use
//!   (GetKeyLastUsage).

use std::io;
use std::sync::Arc;

use roto_core::access::{Access, Principal};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

mod access;
mod aliases;
pub(crate) mod crypto;
mod grants;
mod imports;
mod key_stores;
mod keys;
mod multi_region;
mod ops;

use crypto::Family;

static SPEC: ServiceSpec = ServiceSpec {
    name: "kms",
    model: "kms",
    query_model: None,
    signing_names: &["kms"],
    target_prefix: Some("TrentService"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kms_keys (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    key_id TEXT NOT NULL,
    created INTEGER NOT NULL,
    description TEXT NOT NULL,
    key_spec TEXT NOT NULL,
    key_usage TEXT NOT NULL,
    state TEXT NOT NULL,
    deletion_date INTEGER,
    pending_days INTEGER,
    origin TEXT NOT NULL,
    manager TEXT NOT NULL,
    multi_region INTEGER NOT NULL,
    rotation_period INTEGER,
    policy TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    material BLOB NOT NULL,
    expiration_model TEXT,
    valid_to INTEGER,
    material_id TEXT,
    primary_region TEXT,
    custom_key_store_id TEXT,
    xks_key_id TEXT,
    PRIMARY KEY (account, region, key_id)
);
CREATE TABLE IF NOT EXISTS kms_key_stores (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    store_id TEXT NOT NULL,
    state TEXT NOT NULL,
    created INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (account, region, store_id)
);
CREATE TABLE IF NOT EXISTS kms_key_usage (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    key_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    used INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (account, region, key_id)
);
CREATE TABLE IF NOT EXISTS kms_import_tokens (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    token TEXT NOT NULL,
    key_id TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    wrapping_key BLOB NOT NULL,
    valid_to INTEGER NOT NULL,
    PRIMARY KEY (account, region, token)
);
CREATE TABLE IF NOT EXISTS kms_materials (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    key_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    material BLOB NOT NULL,
    rotated INTEGER NOT NULL,
    rotation_type TEXT NOT NULL,
    PRIMARY KEY (account, region, key_id, generation)
);
CREATE TABLE IF NOT EXISTS kms_aliases (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    key_id TEXT NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS kms_grants (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grant_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    created INTEGER NOT NULL,
    grant_token TEXT NOT NULL,
    grant TEXT NOT NULL,
    PRIMARY KEY (account, region, grant_id)
);
";

/// Columns `kms_keys` gained after its first release: stores made before them get them by
/// `ALTER TABLE` when KMS starts.
const ADDED_KEY_COLUMNS: &[(&str, &str)] = &[
    ("expiration_model", "TEXT"),
    ("valid_to", "INTEGER"),
    ("material_id", "TEXT"),
    ("primary_region", "TEXT"),
    ("custom_key_store_id", "TEXT"),
    ("xks_key_id", "TEXT"),
];

/// The AWS managed keys KMS creates on first use of their alias, with their descriptions.
const AWS_MANAGED: &[(&str, &str)] = &[
    (
        "secretsmanager",
        "Default key that protects my Secrets Manager data when no other key is defined",
    ),
    (
        "ssm",
        "Default key that protects my SSM parameters when no other key is defined",
    ),
    (
        "s3",
        "Default key that protects my S3 objects when no other key is defined",
    ),
    (
        "lambda",
        "Default key that protects my Lambda functions when no other key is defined",
    ),
    (
        "sqs",
        "Default key that protects my SQS messages when no other key is defined",
    ),
    (
        "sns",
        "Default key that protects my SNS data when no other key is defined",
    ),
    (
        "dynamodb",
        "Default key that protects my DynamoDB data when no other key is defined",
    ),
    (
        "kinesis",
        "Default key that protects my Kinesis data when no other key is defined",
    ),
    (
        "ecr",
        "Default key that protects my ECR data when no other key is defined",
    ),
];

/// Operations with effects whose `DryRun` stops after the key lookup; the others run in
/// full and then report the dry run, since they change nothing.
const DRY_RUN_CHECKED: &[&str] = &["CreateGrant", "RetireGrant", "RevokeGrant"];

/// The cryptographic operations GetKeyLastUsage reports, recorded for the keys their outputs
/// name.
const USAGE_TRACKED: &[&str] = &[
    "Decrypt",
    "DeriveSharedSecret",
    "Encrypt",
    "GenerateDataKey",
    "GenerateDataKeyPair",
    "GenerateDataKeyPairWithoutPlaintext",
    "GenerateDataKeyWithoutPlaintext",
    "GenerateMac",
    "ReEncrypt",
    "Sign",
    "Verify",
    "VerifyMac",
    "Encapsulate",
    "Decapsulate",
];

/// A key as stored.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    id: String,
    arn: String,
    account: String,
    region: String,
    created: i64,
    description: String,
    spec: String,
    family: Family,
    usage: String,
    state: String,
    deletion_date: Option<i64>,
    pending_days: Option<i64>,
    origin: String,
    manager: String,
    multi_region: bool,
    rotation_period: Option<i64>,
    /// The current material: generation 0 is the key's own, later ones come from rotations.
    /// Empty while an `EXTERNAL` key waits for its material.
    material: Vec<u8>,
    generation: u32,
    /// For imported material: whether and when it expires.
    expiration_model: Option<String>,
    valid_to: Option<i64>,
    /// The id of the material imported into an `EXTERNAL` key, kept after the material is
    /// deleted or expires, since only the same material may be imported again.
    material_id: Option<String>,
    /// For a multi-Region key: the region of its primary key (its own, for keys made before
    /// replicas existed), and every region that holds a key of the set.
    primary_region: Option<String>,
    regions: Vec<String>,
    /// For a key in a custom key store: the store, its CloudHSM cluster or the external key.
    custom_key_store_id: Option<String>,
    cloud_hsm_cluster_id: Option<String>,
    xks_key_id: Option<String>,
}

impl Key {
    /// Whether this is a multi-Region key whose primary is in another region.
    fn is_replica(&self) -> bool {
        self.primary_region
            .as_deref()
            .is_some_and(|primary| primary != self.region)
    }
}

const KEY_COLUMNS: &str = "key_id, created, description, key_spec, key_usage, state, deletion_date,
    pending_days, origin, manager, multi_region, rotation_period, material, account, region,
    expiration_model, valid_to, material_id, primary_region, custom_key_store_id, xks_key_id";

fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Key> {
    let id: String = r.get(0)?;
    let account: String = r.get(13)?;
    let region: String = r.get(14)?;
    let spec: String = r.get(3)?;
    Ok(Key {
        arn: key_arn(&region, &account, &id),
        id,
        account,
        created: r.get(1)?,
        description: r.get(2)?,
        family: Family::of(&spec).unwrap_or(Family::Symmetric),
        spec,
        usage: r.get(4)?,
        state: r.get(5)?,
        deletion_date: r.get(6)?,
        pending_days: r.get(7)?,
        origin: r.get(8)?,
        manager: r.get(9)?,
        multi_region: r.get(10)?,
        rotation_period: r.get(11)?,
        material: r.get(12)?,
        generation: 0,
        expiration_model: r.get(15)?,
        valid_to: r.get(16)?,
        material_id: r.get(17)?,
        primary_region: r.get(18)?,
        regions: Vec::new(),
        custom_key_store_id: r.get(19)?,
        cloud_hsm_cluster_id: None,
        xks_key_id: r.get(20)?,
        region,
    })
}

fn key_arn(region: &str, account: &str, id: &str) -> String {
    format!("arn:aws:kms:{region}:{account}:key/{id}")
}

/// The same caller acting in another region (multi-Region keys write their replicas there).
fn in_region(ctx: &Context, region: &str) -> Context {
    Context {
        region: region.to_string(),
        ..ctx.clone()
    }
}

fn alias_arn(ctx: &Context, name: &str) -> String {
    format!("arn:aws:kms:{}:{}:{name}", ctx.region, ctx.account)
}

fn not_found(message: String) -> AwsError {
    AwsError::new("NotFoundException", message)
}

fn invalid_state(message: String) -> AwsError {
    AwsError::new("KMSInvalidStateException", message)
}

/// A random key id in KMS's UUID form.
fn new_key_id() -> String {
    let b = crypto::random_bytes(16);
    let h = hex::encode(b);
    format!(
        "{}-{}-4{}-{}{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        ["8", "9", "a", "b"][usize::from(h.as_bytes()[16] % 4)],
        &h[17..20],
        &h[20..32]
    )
}

fn is_key_id(s: &str) -> bool {
    if let Some(hex) = s.strip_prefix("mrk-") {
        return hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    s.len() == 36
        && s.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// What a `KeyId` parameter names.
enum KeyRef<'a> {
    /// A key id (from a bare id or a key ARN).
    Key(&'a str),
    /// An alias name (`alias/...`, from a bare name or an alias ARN).
    Alias(&'a str),
}

fn parse_key_ref(key_id: &str) -> Option<KeyRef<'_>> {
    if let Some(rest) = key_id.strip_prefix("arn:") {
        let resource = rest.splitn(5, ':').nth(4)?;
        if resource.starts_with("alias/") {
            return Some(KeyRef::Alias(resource));
        }
        return resource.strip_prefix("key/").map(KeyRef::Key);
    }
    if key_id.starts_with("alias/") {
        return Some(KeyRef::Alias(key_id));
    }
    Some(KeyRef::Key(key_id))
}

/// KMS.
pub struct Kms {
    env: Arc<Env>,
}

impl Kms {
    /// Creates KMS's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Kms> {
        env.store.migrate(SCHEMA)?;
        env.store
            .with(add_missing_key_columns)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Kms { env })
    }

    fn load_key(&self, ctx: &Context, id: &str) -> AwsResult<Option<Key>> {
        let key = self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT {KEY_COLUMNS} FROM kms_keys WHERE account = ?1 AND region = ?2 AND key_id = ?3"
            ))?
            .query_row([&ctx.account, &ctx.region, id], key_from_row)
            .optional()
            .map_err(AwsError::from)
        })?;
        let now = now_millis();
        match key {
            Some(k) if k.deletion_date.is_some_and(|d| d <= now) => {
                self.purge_key(ctx, &k.id)?;
                Ok(None)
            }
            Some(k) if k.valid_to.is_some_and(|v| v <= now) => {
                self.delete_material(ctx, &k.id)?;
                self.load_key(ctx, id)
            }
            Some(mut k) => {
                let rotated: Option<(u32, Vec<u8>)> = self.env.store.with(|c| {
                    c.prepare_cached(
                        "SELECT generation, material FROM kms_materials
                         WHERE account = ?1 AND region = ?2 AND key_id = ?3
                         ORDER BY generation DESC LIMIT 1",
                    )?
                    .query_row([&ctx.account, &ctx.region, id], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .optional()
                    .map_err(AwsError::from)
                })?;
                if let Some((generation, material)) = rotated {
                    k.generation = generation;
                    k.material = material;
                }
                if let Some(store) = &k.custom_key_store_id {
                    if let Some((state, cluster)) = self.key_store_of_key(ctx, store)? {
                        if state != "CONNECTED"
                            && ["Enabled", "Disabled"].contains(&k.state.as_str())
                        {
                            k.state = "Unavailable".into();
                        }
                        k.cloud_hsm_cluster_id = cluster;
                    }
                }
                if k.multi_region {
                    k.regions = self.multi_region_set(ctx, &k.id)?;
                    if k.state == "PendingReplicaDeletion" {
                        return self.start_primary_deletion(ctx, k);
                    }
                }
                Ok(Some(k))
            }
            None => Ok(None),
        }
    }

    /// Removes a key whose deletion window has passed, with its aliases and grants.
    fn purge_key(&self, ctx: &Context, id: &str) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            for table in [
                "kms_keys",
                "kms_materials",
                "kms_aliases",
                "kms_grants",
                "kms_import_tokens",
                "kms_key_usage",
            ] {
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND key_id = ?3"
                    ),
                    [&ctx.account, &ctx.region, id],
                )?;
            }
            Ok::<_, AwsError>(())
        })
    }

    /// The material of generation `generation` of a key (its current one, its original, or
    /// one a rotation replaced).
    fn material(&self, ctx: &Context, key: &Key, generation: u32) -> AwsResult<Option<Vec<u8>>> {
        if generation == key.generation {
            return Ok(Some(key.material.clone()));
        }
        let sql = if generation == 0 {
            "SELECT material FROM kms_keys WHERE account = ?1 AND region = ?2 AND key_id = ?3 AND ?4 = 0"
        } else {
            "SELECT material FROM kms_materials WHERE account = ?1 AND region = ?2 AND key_id = ?3 AND generation = ?4"
        };
        self.env.store.with(|c| {
            c.prepare_cached(sql)?
                .query_row(
                    rusqlite::params![ctx.account, ctx.region, key.id, generation],
                    |r| r.get(0),
                )
                .optional()
                .map_err(AwsError::from)
        })
    }

    fn alias_target(&self, ctx: &Context, name: &str) -> AwsResult<Option<String>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT key_id FROM kms_aliases WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, name], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The key a `KeyId` parameter names (key id, key ARN, alias name or alias ARN), in any
    /// state. AWS managed aliases create their key on first use.
    fn find_key(&self, ctx: &Context, key_id: &str) -> AwsResult<Key> {
        let invalid = || not_found(format!("Invalid keyId '{key_id}'"));
        match parse_key_ref(key_id).ok_or_else(invalid)? {
            KeyRef::Key(id) => {
                if !is_key_id(id) {
                    return Err(invalid());
                }
                self.load_key(ctx, id)?.ok_or_else(|| {
                    not_found(format!(
                        "Key '{}' does not exist",
                        key_arn(&ctx.region, &ctx.account, id)
                    ))
                })
            }
            KeyRef::Alias(name) => {
                let missing = || not_found(format!("Alias {} is not found.", alias_arn(ctx, name)));
                let target = match self.alias_target(ctx, name)? {
                    Some(t) => t,
                    None => match AWS_MANAGED
                        .iter()
                        .find(|(svc, _)| name.strip_prefix("alias/aws/") == Some(*svc))
                    {
                        Some((_, description)) => {
                            self.create_managed_key(ctx, name, description)?
                        }
                        None => return Err(missing()),
                    },
                };
                self.load_key(ctx, &target)?.ok_or_else(missing)
            }
        }
    }

    /// A key that may be used for a cryptographic operation: enabled.
    fn usable_key(&self, ctx: &Context, key_id: &str) -> AwsResult<Key> {
        let key = self.find_key(ctx, key_id)?;
        check_usable(&key)?;
        Ok(key)
    }

    /// A key whose settings may change: not pending deletion (nor waiting for its replicas'
    /// deletion).
    fn mutable_key(&self, ctx: &Context, key_id: &str) -> AwsResult<Key> {
        let key = self.find_key(ctx, key_id)?;
        if ["PendingDeletion", "PendingReplicaDeletion"].contains(&key.state.as_str()) {
            return Err(wrong_state(&key));
        }
        Ok(key)
    }

    fn set_column(
        &self,
        ctx: &Context,
        key: &Key,
        column: &str,
        value: &dyn rusqlite::ToSql,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE kms_keys SET {column} = ?4 WHERE account = ?1 AND region = ?2 AND key_id = ?3"
                ),
                rusqlite::params![ctx.account, ctx.region, key.id, value],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }
}

/// Adds the [`ADDED_KEY_COLUMNS`] a store made before them lacks.
fn add_missing_key_columns(c: &rusqlite::Connection) -> rusqlite::Result<()> {
    let existing = c
        .prepare("SELECT name FROM pragma_table_info('kms_keys')")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (column, kind) in ADDED_KEY_COLUMNS {
        if !existing.iter().any(|e| e == column) {
            c.execute_batch(&format!("ALTER TABLE kms_keys ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

/// The `KMSInvalidStateException` for a key whose state does not allow the operation, in
/// AWS's words (`<arn> is pending import.`).
fn wrong_state(key: &Key) -> AwsError {
    let state = match key.state.as_str() {
        "Enabled" => "enabled",
        "Disabled" => "disabled",
        "PendingDeletion" => "pending deletion",
        "PendingImport" => "pending import",
        "PendingReplicaDeletion" => "pending replica deletion",
        "Creating" => "creating",
        "Updating" => "updating",
        _ => "unavailable",
    };
    invalid_state(format!("{} is {state}.", key.arn))
}

/// Fails unless the key is enabled, with the error AWS gives for its state.
fn check_usable(key: &Key) -> AwsResult<()> {
    match key.state.as_str() {
        "Enabled" => Ok(()),
        "Disabled" => Err(AwsError::new(
            "DisabledException",
            format!("{} is disabled.", key.arn),
        )),
        _ => Err(wrong_state(key)),
    }
}

/// Fails unless the key's usage is `usage`, in AWS's words for `operation`.
fn check_usage(key: &Key, usage: &str, operation: &str) -> AwsResult<()> {
    if key.usage == usage {
        return Ok(());
    }
    Err(AwsError::new(
        "InvalidKeyUsageException",
        format!(
            "{} key usage is {} which is not valid for {operation}.",
            key.arn, key.usage
        ),
    ))
}

/// Fails unless `algorithm` is one of the key's.
fn check_algorithm(key: &Key, algorithm: &str, supported: &[&str]) -> AwsResult<()> {
    if supported.contains(&algorithm) {
        return Ok(());
    }
    Err(AwsError::new(
        "InvalidKeyUsageException",
        format!(
            "Algorithm {algorithm} is incompatible with key spec {}.",
            key.spec
        ),
    ))
}

impl Service for Kms {
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
            let kms = Kms {
                env: self.env.clone(),
            };
            let key = request.input.str("KeyId");
            let ctx = roto_core::access::in_owner_account(ctx, key).into_owned();
            let operation = operation.to_string();
            let work = move || kms.operate(&ctx, &operation, &request.input);
            Ok(Response::new(crate::blocking::run(work).await?))
        })
    }

    fn access(&self, ctx: &Context, who: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, who, op, input)
    }
}

impl Kms {
    /// Runs one operation, on a blocking thread: key generation (RSA up to 4096 bits,
    /// EC, ML-KEM) and private-key operations take long enough to hold an async worker.
    fn operate(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        if input.bool("DryRun") == Some(true) && DRY_RUN_CHECKED.contains(&operation) {
            self.find_key(ctx, input.str("KeyId").unwrap_or_default())?;
            return Err(AwsError::new(
                "DryRunOperationException",
                "The request would have succeeded, but the DryRun option is set.",
            ));
        }
        let output: Value = match operation {
            "CreateKey" => self.create_key(ctx, input)?,
            "DescribeKey" => self.describe_key(ctx, input)?,
            "ListKeys" => self.list_keys(ctx, input)?,
            "EnableKey" => self.set_enabled(ctx, input, true)?,
            "DisableKey" => self.set_enabled(ctx, input, false)?,
            "ScheduleKeyDeletion" => self.schedule_key_deletion(ctx, input)?,
            "CancelKeyDeletion" => self.cancel_key_deletion(ctx, input)?,
            "UpdateKeyDescription" => self.update_key_description(ctx, input)?,
            "EnableKeyRotation" => self.set_rotation(ctx, input, true)?,
            "DisableKeyRotation" => self.set_rotation(ctx, input, false)?,
            "GetKeyRotationStatus" => self.get_key_rotation_status(ctx, input)?,
            "RotateKeyOnDemand" => self.rotate_key_on_demand(ctx, input)?,
            "ListKeyRotations" => self.list_key_rotations(ctx, input)?,
            "GetKeyPolicy" => self.get_key_policy(ctx, input)?,
            "PutKeyPolicy" => self.put_key_policy(ctx, input)?,
            "ListKeyPolicies" => self.list_key_policies(ctx, input)?,
            "TagResource" => self.tag_resource(ctx, input)?,
            "UntagResource" => self.untag_resource(ctx, input)?,
            "ListResourceTags" => self.list_resource_tags(ctx, input)?,
            "CreateAlias" => self.create_alias(ctx, input)?,
            "UpdateAlias" => self.update_alias(ctx, input)?,
            "DeleteAlias" => self.delete_alias(ctx, input)?,
            "ListAliases" => self.list_aliases(ctx, input)?,
            "CreateGrant" => self.create_grant(ctx, input)?,
            "ListGrants" => self.list_grants(ctx, input)?,
            "ListRetirableGrants" => self.list_retirable_grants(ctx, input)?,
            "RevokeGrant" => self.revoke_grant(ctx, input)?,
            "RetireGrant" => self.retire_grant(ctx, input)?,
            "Encrypt" => self.encrypt(ctx, input)?,
            "Decrypt" => self.decrypt(ctx, input)?,
            "ReEncrypt" => self.re_encrypt(ctx, input)?,
            "GenerateDataKey" => self.generate_data_key(ctx, input, true)?,
            "GenerateDataKeyWithoutPlaintext" => self.generate_data_key(ctx, input, false)?,
            "GenerateDataKeyPair" => self.generate_data_key_pair(ctx, input, true)?,
            "GenerateDataKeyPairWithoutPlaintext" => {
                self.generate_data_key_pair(ctx, input, false)?
            }
            "GenerateRandom" => self.generate_random(ctx, input)?,
            "Sign" => self.sign(ctx, input)?,
            "Verify" => self.verify(ctx, input)?,
            "GenerateMac" => self.generate_mac(ctx, input)?,
            "VerifyMac" => self.verify_mac(ctx, input)?,
            "GetPublicKey" => self.get_public_key(ctx, input)?,
            "DeriveSharedSecret" => self.derive_shared_secret(ctx, input)?,
            "Encapsulate" => self.encapsulate(ctx, input)?,
            "Decapsulate" => self.decapsulate(ctx, input)?,
            "GetParametersForImport" => self.get_parameters_for_import(ctx, input)?,
            "ImportKeyMaterial" => self.import_key_material(ctx, input)?,
            "DeleteImportedKeyMaterial" => self.delete_imported_key_material(ctx, input)?,
            "ReplicateKey" => self.replicate_key(ctx, input)?,
            "UpdatePrimaryRegion" => self.update_primary_region(ctx, input)?,
            "CreateCustomKeyStore" => self.create_custom_key_store(ctx, input)?,
            "DescribeCustomKeyStores" => self.describe_custom_key_stores(ctx, input)?,
            "UpdateCustomKeyStore" => self.update_custom_key_store(ctx, input)?,
            "DeleteCustomKeyStore" => self.delete_custom_key_store(ctx, input)?,
            "ConnectCustomKeyStore" => self.set_key_store_connected(ctx, input, true)?,
            "DisconnectCustomKeyStore" => self.set_key_store_connected(ctx, input, false)?,
            "GetKeyLastUsage" => self.get_key_last_usage(ctx, input)?,
            other => return Err(AwsError::not_implemented(other)),
        };
        if input.bool("DryRun") == Some(true) {
            return Err(AwsError::new(
                "DryRunOperationException",
                "The request would have succeeded, but the DryRun option is set.",
            ));
        }
        if USAGE_TRACKED.contains(&operation) {
            self.record_usage(ctx, operation, &output)?;
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_references_parse_from_ids_arns_and_aliases() {
        let id = "1234abcd-12ab-34cd-56ef-1234567890ab";
        assert!(is_key_id(id));
        assert!(!is_key_id("1234abcd"));
        assert!(is_key_id("mrk-1234abcd12ab34cd56ef1234567890ab"));
        assert!(matches!(parse_key_ref(id), Some(KeyRef::Key(k)) if k == id));
        let arn = format!("arn:aws:kms:us-east-1:123456789012:key/{id}");
        assert!(matches!(parse_key_ref(&arn), Some(KeyRef::Key(k)) if k == id));
        assert!(matches!(
            parse_key_ref("arn:aws:kms:us-east-1:123456789012:alias/app"),
            Some(KeyRef::Alias("alias/app"))
        ));
        assert!(matches!(
            parse_key_ref("alias/app"),
            Some(KeyRef::Alias("alias/app"))
        ));
        assert!(parse_key_ref("arn:aws:kms:us-east-1:123456789012:other/x").is_none());
    }

    #[test]
    fn stores_made_before_the_added_columns_gain_them_once() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE kms_keys (account TEXT, region TEXT, key_id TEXT)")
            .unwrap();
        add_missing_key_columns(&c).unwrap();
        add_missing_key_columns(&c).unwrap();
        let columns: Vec<String> = c
            .prepare("SELECT name FROM pragma_table_info('kms_keys')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for (column, _) in ADDED_KEY_COLUMNS {
            assert_eq!(columns.iter().filter(|c| c == column).count(), 1);
        }
    }

    #[test]
    fn new_key_ids_have_the_uuid_form() {
        for _ in 0..50 {
            assert!(is_key_id(&new_key_id()));
        }
    }
}
