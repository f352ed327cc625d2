//! SSM documents (Command, Automation, Session, ... content in JSON or YAML) with their
//! versions, default version and sharing, stored and answered as SSM does. The account's
//! list holds the documents it created (AWS-owned documents are not listed here).

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use sha2::{Digest, Sha256};

use super::records::{paged, Kind};
use super::Ssm;

const DOCUMENT: Kind<'static> = Kind::top("document");

fn document_missing() -> AwsError {
    AwsError::new("InvalidDocument", "The specified document does not exist.")
}

fn version_missing() -> AwsError {
    AwsError::new(
        "InvalidDocumentVersion",
        "The document version is not valid or does not exist.",
    )
}

fn invalid_content(why: &str) -> AwsError {
    AwsError::new("InvalidDocumentContent", why.to_string())
}

/// Where a document's versions live.
fn versions_of(name: &str) -> String {
    format!("document/{name}")
}

/// What a document's content says of itself: its schema version, description and
/// parameters.
struct Content {
    schema_version: String,
    description: Option<String>,
    parameters: Vec<Value>,
}

/// Reads JSON content fully; YAML content (no YAML reader in the tree) for its
/// `schemaVersion` line; TEXT content (a Change Calendar's iCalendar) as schema 2.0.
fn read_content(content: &str, format: &str) -> AwsResult<Content> {
    if format == "TEXT" {
        return Ok(Content {
            schema_version: "2.0".to_string(),
            description: None,
            parameters: Vec::new(),
        });
    }
    if format == "JSON" {
        let json: serde_json::Value = serde_json::from_str(content)
            .map_err(|_| invalid_content("The content for the document is not valid."))?;
        let schema_version = json
            .get("schemaVersion")
            .and_then(|v| v.as_str())
            .ok_or_else(|| invalid_content("Document schema version is missing"))?;
        let parameters = json
            .get("parameters")
            .and_then(|p| p.as_object())
            .map(|p| p.iter().map(|(name, spec)| parameter(name, spec)).collect())
            .unwrap_or_default();
        return Ok(Content {
            schema_version: schema_version.to_string(),
            description: json
                .get("description")
                .and_then(|d| d.as_str())
                .map(str::to_string),
            parameters,
        });
    }
    let schema_version = content
        .lines()
        .find_map(|l| l.strip_prefix("schemaVersion:"))
        .map(|v| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        .ok_or_else(|| invalid_content("Document schema version is missing"))?;
    Ok(Content {
        schema_version,
        description: None,
        parameters: Vec::new(),
    })
}

fn parameter(name: &str, spec: &serde_json::Value) -> Value {
    let text = |key: &str| spec.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let default = spec.get("default").map(|d| match d.as_str() {
        Some(s) => s.to_string(),
        None => d.to_string(),
    });
    Value::map()
        .with("Name", name)
        .with_opt("Type", text("type"))
        .with_opt("Description", text("description"))
        .with_opt("DefaultValue", default)
}

fn platforms(document_type: &str) -> Vec<Value> {
    match document_type {
        "Command" | "Automation" | "Session" | "Policy" | "Package" => {
            vec!["Windows".into(), "Linux".into(), "MacOS".into()]
        }
        _ => Vec::new(),
    }
}

/// Members of the request that a version keeps as given.
const VERSION_MEMBERS: &[&str] = &[
    "VersionName",
    "DisplayName",
    "TargetType",
    "Requires",
    "Attachments",
];

impl Ssm {
    pub(super) fn document_head(&self, ctx: &Context, name: &str) -> AwsResult<Value> {
        self.record(ctx, DOCUMENT, name)?
            .ok_or_else(document_missing)
    }

    /// The version a request selects (`DocumentVersion`, `$LATEST`, `$DEFAULT`, or
    /// `VersionName`), else the default.
    fn selected_version(&self, ctx: &Context, head: &Value, input: &Value) -> AwsResult<Value> {
        let name = head.str("Name").unwrap_or_default();
        let parent = versions_of(name);
        let number = match input.str("DocumentVersion") {
            Some("$LATEST") => head.str("LatestVersion"),
            Some("$DEFAULT") | None => head.str("DefaultVersion"),
            Some(n) => Some(n),
        }
        .unwrap_or_default()
        .to_string();
        if let (Some(version_name), None) = (input.str("VersionName"), input.str("DocumentVersion"))
        {
            return self
                .records_as(ctx, Kind::under("version", &parent), "DocumentDescription")?
                .into_iter()
                .find(|v| v.str("VersionName") == Some(version_name))
                .ok_or_else(version_missing)
                .and_then(|v| {
                    self.version(ctx, &parent, v.str("DocumentVersion").unwrap_or_default())
                });
        }
        self.version(ctx, &parent, &number)
    }

    fn version(&self, ctx: &Context, parent: &str, number: &str) -> AwsResult<Value> {
        self.record(ctx, Kind::under("version", parent), number)?
            .ok_or_else(version_missing)
    }

    /// A version as DescribeDocument and Create/UpdateDocument answer it.
    fn description(&self, ctx: &Context, head: &Value, version: &Value) -> AwsResult<Value> {
        let mut doc = version.clone();
        for key in ["LatestVersion", "DefaultVersion", "Owner", "DocumentType"] {
            if let Some(v) = head.get(key) {
                doc.insert(key, v.clone());
            }
        }
        if let Some(tags) = self
            .record_tags(ctx, "Document", head.str("Name").unwrap_or_default())?
            .flatten()
        {
            let tags: Vec<Value> = tags
                .into_iter()
                .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
                .collect();
            doc.insert("Tags", tags);
        }
        doc.remove("Content");
        crate::documents::shaped(
            super::SPEC.model(),
            "DocumentDescription",
            &crate::documents::document(&doc),
        )
    }

    /// A new version `number` of `name` from a Create or Update request.
    fn new_version(
        &self,
        ctx: &Context,
        name: &str,
        number: &str,
        input: &Value,
        document_type: &str,
    ) -> AwsResult<Value> {
        let content = input.str("Content").unwrap_or_default();
        let format = input.str("DocumentFormat").unwrap_or("JSON");
        let read = read_content(content, format)?;
        let hash = hex::encode(Sha256::digest(content.as_bytes()));
        let mut version = Value::map()
            .with("Name", name)
            .with("DocumentVersion", number)
            .with("Content", content)
            .with("Hash", hash)
            .with("HashType", "Sha256")
            .with("CreatedDate", Value::Timestamp(now_millis()))
            .with("Status", "Active")
            .with("DocumentFormat", format)
            .with("SchemaVersion", read.schema_version)
            .with_opt("Description", read.description)
            .with("Parameters", read.parameters)
            .with("PlatformTypes", platforms(document_type));
        for key in VERSION_MEMBERS {
            if let Some(v) = input.get(key) {
                version.insert(*key, v.clone());
            }
        }
        self.save(
            ctx,
            Kind::under("version", &versions_of(name)),
            number,
            &version,
        )?;
        Ok(version)
    }

    pub(super) fn create_document(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        if self.record(ctx, DOCUMENT, name)?.is_some() {
            return Err(AwsError::new(
                "DocumentAlreadyExists",
                "Document with same name already exists.",
            ));
        }
        let document_type = input.str("DocumentType").unwrap_or("Command");
        let version = self.new_version(ctx, name, "1", input, document_type)?;
        let head = Value::map()
            .with("Name", name)
            .with("Owner", ctx.account.as_str())
            .with("DocumentType", document_type)
            .with("LatestVersion", "1")
            .with("DefaultVersion", "1")
            .with_opt("DefaultVersionName", input.str("VersionName"))
            .with("AccountIds", Vec::<Value>::new());
        self.save(ctx, DOCUMENT, name, &head)?;
        self.store_tags(ctx, "Document", name, input)?;
        Ok(Value::map().with(
            "DocumentDescription",
            self.description(ctx, &head, &version)?,
        ))
    }

    pub(super) fn get_document(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let head = self.document_head(ctx, input.str("Name").unwrap_or_default())?;
        let version = self.selected_version(ctx, &head, input)?;
        let mut out = crate::documents::shaped(
            super::SPEC.model(),
            "GetDocumentResult",
            &crate::documents::document(&version),
        )?;
        if let Some(t) = head.get("DocumentType") {
            out.insert("DocumentType", t.clone());
        }
        Ok(out)
    }

    pub(super) fn describe_document(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let head = self.document_head(ctx, input.str("Name").unwrap_or_default())?;
        let version = self.selected_version(ctx, &head, input)?;
        Ok(Value::map().with("Document", self.description(ctx, &head, &version)?))
    }

    pub(super) fn update_document(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let mut head = self.document_head(ctx, name)?;
        let latest: i64 = head
            .str("LatestVersion")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        match input.str("DocumentVersion") {
            None | Some("$LATEST") => {}
            Some(v) if v == latest.to_string() => {}
            Some(_) => return Err(version_missing()),
        }
        let hash = hex::encode(Sha256::digest(
            input.str("Content").unwrap_or_default().as_bytes(),
        ));
        let versions = self.records_as(
            ctx,
            Kind::under("version", &versions_of(name)),
            "DocumentDescription",
        )?;
        if versions
            .iter()
            .any(|v| v.str("Hash") == Some(hash.as_str()))
        {
            return Err(AwsError::new(
                "DuplicateDocumentContent",
                "The content of the association document matches another document. Change the content of the document and try again.",
            ));
        }
        if let Some(version_name) = input.str("VersionName") {
            if versions
                .iter()
                .any(|v| v.str("VersionName") == Some(version_name))
            {
                return Err(AwsError::new(
                    "DuplicateDocumentVersionName",
                    "The specified version name is a duplicate.",
                ));
            }
        }
        let number = (latest + 1).to_string();
        let document_type = head.str("DocumentType").unwrap_or("Command").to_string();
        let version = self.new_version(ctx, name, &number, input, &document_type)?;
        head.insert("LatestVersion", number.as_str());
        self.save(ctx, DOCUMENT, name, &head)?;
        Ok(Value::map().with(
            "DocumentDescription",
            self.description(ctx, &head, &version)?,
        ))
    }

    pub(super) fn update_document_default_version(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let mut head = self.document_head(ctx, name)?;
        let number = input.str("DocumentVersion").unwrap_or_default();
        let version = self.version(ctx, &versions_of(name), number)?;
        head.insert("DefaultVersion", number);
        match version.str("VersionName") {
            Some(v) => head.insert("DefaultVersionName", v),
            None => {
                head.remove("DefaultVersionName");
            }
        }
        self.save(ctx, DOCUMENT, name, &head)?;
        Ok(Value::map().with(
            "Description",
            Value::map()
                .with("Name", name)
                .with("DefaultVersion", number)
                .with_opt("DefaultVersionName", version.str("VersionName")),
        ))
    }

    pub(super) fn delete_document(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let head = self.document_head(ctx, name)?;
        let parent = versions_of(name);
        if input.str("DocumentVersion").is_some() || input.str("VersionName").is_some() {
            let version = self.selected_version(ctx, &head, input)?;
            let number = version.str("DocumentVersion").unwrap_or_default();
            if Some(number) == head.str("DefaultVersion") {
                return Err(AwsError::new(
                    "InvalidDocumentOperation",
                    "Default version of the document can't be deleted.",
                ));
            }
            self.forget(ctx, Kind::under("version", &parent), number)?;
            return Ok(Value::map());
        }
        self.forget(ctx, DOCUMENT, name)?;
        self.forget_children(ctx, &parent)?;
        self.drop_tags(ctx, "Document", name)?;
        Ok(Value::map())
    }

    pub(super) fn list_document_versions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let head = self.document_head(ctx, name)?;
        let default = head.str("DefaultVersion").unwrap_or_default();
        let versions: Vec<Value> = self
            .records_as(
                ctx,
                Kind::under("version", &versions_of(name)),
                "DocumentVersionInfo",
            )?
            .into_iter()
            .map(|v| {
                let is_default = v.str("DocumentVersion") == Some(default);
                v.with("IsDefaultVersion", is_default)
            })
            .collect();
        paged(input, versions, "DocumentVersions", 50)
    }

    pub(super) fn list_documents(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut identifiers = Vec::new();
        for head in self.records_as(ctx, DOCUMENT, "DocumentIdentifier")? {
            let name = head.str("Name").unwrap_or_default().to_string();
            let found = self.document_head(ctx, &name)?;
            let version = self.selected_version(ctx, &found, &Value::map())?;
            let description = self.description(ctx, &found, &version)?;
            let identifier = crate::documents::shaped(
                super::SPEC.model(),
                "DocumentIdentifier",
                &crate::documents::document(&description),
            )?;
            identifiers.push(identifier);
        }
        let identifiers =
            super::filters::keep(identifiers, input.get("Filters"), |d, key| match key {
                "Name" | "DocumentType" | "Owner" | "TargetType" => d.str(key).map(str::to_string),
                _ => None,
            })?;
        paged(input, identifiers, "DocumentIdentifiers", 50)
    }

    pub(super) fn describe_document_permission(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let head = self.document_head(ctx, input.str("Name").unwrap_or_default())?;
        let accounts = head
            .get("AccountIds")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .to_vec();
        let sharing: Vec<Value> = head
            .get("AccountSharing")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .to_vec();
        Ok(Value::map()
            .with("AccountIds", accounts)
            .with("AccountSharingInfoList", sharing))
    }

    pub(super) fn modify_document_permission(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let mut head = self.document_head(ctx, name)?;
        let mut accounts: Vec<String> = head
            .get("AccountIds")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let remove = input.strings("AccountIdsToRemove");
        accounts.retain(|a| !remove.contains(a));
        for add in input.strings("AccountIdsToAdd") {
            if !accounts.contains(&add) {
                accounts.push(add);
            }
        }
        let version = input.str("SharedDocumentVersion").unwrap_or("$DEFAULT");
        let sharing: Vec<Value> = accounts
            .iter()
            .map(|a| {
                Value::map()
                    .with("AccountId", a)
                    .with("SharedDocumentVersion", version)
            })
            .collect();
        head.insert(
            "AccountIds",
            accounts.into_iter().map(Value::from).collect::<Vec<_>>(),
        );
        head.insert("AccountSharing", sharing);
        self.save(ctx, DOCUMENT, name, &head)?;
        Ok(Value::map())
    }
}
