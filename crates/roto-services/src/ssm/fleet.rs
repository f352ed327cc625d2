//! State Manager associations (with their versions), hybrid activations, resource data
//! syncs and cloud connectors, stored and answered as SSM does. No managed node exists here, so an association
//! never runs: its overview stays `Pending` and its executions are none.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::records::{paged, strings, Kind};
use super::windows::merge;
use super::Ssm;
use crate::ids;

const ASSOCIATION: Kind<'static> = Kind::top("association");
const ACTIVATION: Kind<'static> = Kind::top("activation");
const SYNC: Kind<'static> = Kind::top("resource-data-sync");
const CONNECTOR: Kind<'static> = Kind::top("cloud-connector");

/// The members a cloud connector keeps from CreateCloudConnector.
const CONNECTOR_MEMBERS: &[&str] = &[
    "DisplayName",
    "RoleArn",
    "Description",
    "Configuration",
    "ConfigConnectorArn",
];

/// The members an association keeps from CreateAssociation and UpdateAssociation.
const ASSOCIATION_MEMBERS: &[&str] = &[
    "Name",
    "InstanceId",
    "DocumentVersion",
    "Parameters",
    "Targets",
    "ScheduleExpression",
    "OutputLocation",
    "AssociationName",
    "AutomationTargetParameterName",
    "MaxErrors",
    "MaxConcurrency",
    "ComplianceSeverity",
    "SyncCompliance",
    "ApplyOnlyAtCronInterval",
    "CalendarNames",
    "TargetLocations",
    "ScheduleOffset",
    "Duration",
    "TargetMaps",
    "AlarmConfiguration",
    "AssociationDispatchAssumeRole",
];

pub(super) fn association_missing() -> AwsError {
    AwsError::new(
        "AssociationDoesNotExist",
        "The specified association does not exist.",
    )
}

fn activation_missing(id: &str) -> AwsError {
    AwsError::new(
        "InvalidActivationId",
        format!("Activation ID {id} is not valid."),
    )
}

pub(super) fn sync_missing(name: &str) -> AwsError {
    AwsError::new(
        "ResourceDataSyncNotFoundException",
        format!("Resource data sync {name} does not exist."),
    )
    .with_field("SyncName", name)
}

/// Whether `name` is a document AWS owns and shares with every account (`AWS-RunShellScript`,
/// `AmazonCloudWatch-ManageAgent`, ...), which an association may name without creating it.
fn aws_owned(name: &str) -> bool {
    [
        "AWS-",
        "AWSEC2-",
        "AWSSupport-",
        "AmazonCloudWatch-",
        "AWSConfigRemediation-",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

impl Ssm {
    /// Refuses an association for a document that does not exist or a managed node.
    fn check_association(&self, ctx: &Context, entry: &Value) -> AwsResult<()> {
        if let Some(instance) = entry.str("InstanceId") {
            return Err(super::commands::invalid_instance(instance));
        }
        let name = entry.str("Name").unwrap_or_default();
        let name = name.rsplit_once(":document/").map_or(name, |(_, n)| n);
        if aws_owned(name) || self.document_head(ctx, name).is_ok() {
            return Ok(());
        }
        Err(AwsError::new(
            "InvalidDocument",
            format!("Document {name} does not exist."),
        ))
    }

    /// Stores a new association from a CreateAssociation request or batch entry.
    fn new_association(&self, ctx: &Context, entry: &Value) -> AwsResult<Value> {
        self.check_association(ctx, entry)?;
        let id = ids::uuid();
        let now = Value::Timestamp(now_millis());
        let mut association = Value::map()
            .with("AssociationId", id.as_str())
            .with("AssociationVersion", "1")
            .with("Date", now.clone())
            .with("LastUpdateAssociationDate", now)
            .with("ApplyOnlyAtCronInterval", false)
            .with(
                "Overview",
                Value::map()
                    .with("Status", "Pending")
                    .with("DetailedStatus", "Creating"),
            );
        merge(&mut association, entry, ASSOCIATION_MEMBERS, &[], false);
        self.save_association(ctx, &id, &association)?;
        self.association_description(ctx, &id)
    }

    /// Writes an association and the version it now is.
    fn save_association(&self, ctx: &Context, id: &str, association: &Value) -> AwsResult<()> {
        self.save(ctx, ASSOCIATION, id, association)?;
        let mut version = association.clone();
        version.insert(
            "CreatedDate",
            association
                .get("LastUpdateAssociationDate")
                .cloned()
                .unwrap_or(Value::Timestamp(now_millis())),
        );
        let number = association.str("AssociationVersion").unwrap_or("1");
        self.save(
            ctx,
            Kind::under("association-version", id),
            number,
            &version,
        )
    }

    fn association_description(&self, ctx: &Context, id: &str) -> AwsResult<Value> {
        self.record_as(ctx, ASSOCIATION, id, "AssociationDescription")?
            .ok_or_else(association_missing)
    }

    /// The association a Describe, Update or Delete request names by id, or by document
    /// name (with no managed nodes, a name and instance never name one).
    fn association_id<'a>(&self, input: &'a Value) -> AwsResult<&'a str> {
        match (input.str("AssociationId"), input.str("InstanceId")) {
            (Some(id), _) => Ok(id),
            (None, Some(instance)) => Err(super::commands::invalid_instance(instance)),
            (None, None) => Err(association_missing()),
        }
    }

    pub(super) fn create_association(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let description = self.new_association(ctx, input)?;
        Ok(Value::map().with("AssociationDescription", description))
    }

    pub(super) fn create_association_batch(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (mut successful, mut failed) = (Vec::new(), Vec::new());
        for entry in input
            .get("Entries")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            match self.new_association(ctx, entry) {
                Ok(description) => successful.push(description),
                Err(e) => failed.push(
                    Value::map()
                        .with("Entry", entry.clone())
                        .with("Message", e.message)
                        .with("Fault", "Client"),
                ),
            }
        }
        Ok(Value::map()
            .with("Successful", successful)
            .with("Failed", failed))
    }

    pub(super) fn describe_association(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = self.association_id(input)?;
        let description = match input.str("AssociationVersion") {
            Some(v) if v != "$LATEST" => self
                .record_as(
                    ctx,
                    Kind::under("association-version", id),
                    v,
                    "AssociationDescription",
                )?
                .ok_or_else(|| {
                    AwsError::new(
                        "InvalidAssociationVersion",
                        format!("Association version {v} does not exist for association {id}."),
                    )
                })?,
            _ => self.association_description(ctx, id)?,
        };
        Ok(Value::map().with("AssociationDescription", description))
    }

    pub(super) fn update_association(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = self.association_id(input)?;
        let mut association = self
            .record(ctx, ASSOCIATION, id)?
            .ok_or_else(association_missing)?;
        let current = association
            .str("AssociationVersion")
            .unwrap_or("1")
            .to_string();
        if let Some(asked) = input.str("AssociationVersion") {
            if asked != "$LATEST" && asked != current {
                return Err(AwsError::new(
                    "InvalidAssociationVersion",
                    format!("Association version {asked} is not the latest version of association {id}."),
                ));
            }
        }
        if input.str("Name").is_some() {
            self.check_association(ctx, input)?;
        }
        merge(&mut association, input, ASSOCIATION_MEMBERS, &[], false);
        let next = current.parse::<u64>().unwrap_or(1) + 1;
        association.insert("AssociationVersion", next.to_string());
        association.insert("LastUpdateAssociationDate", Value::Timestamp(now_millis()));
        self.save_association(ctx, id, &association)?;
        let description = self.association_description(ctx, id)?;
        Ok(Value::map().with("AssociationDescription", description))
    }

    pub(super) fn delete_association(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = self.association_id(input)?;
        if !self.forget(ctx, ASSOCIATION, id)? {
            return Err(association_missing());
        }
        self.forget_children(ctx, id)?;
        Ok(Value::map())
    }

    pub(super) fn list_associations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let filters = input
            .get("AssociationFilterList")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let associations: Vec<Value> = self
            .records_as(ctx, ASSOCIATION, "Association")?
            .into_iter()
            .filter(|a| {
                filters.iter().all(|f| {
                    let key = f.str("key").unwrap_or_default();
                    let value = f.str("value");
                    match key {
                        "Name" | "AssociationId" | "AssociationName" | "InstanceId" => {
                            a.str(key) == value
                        }
                        _ => true,
                    }
                })
            })
            .collect();
        paged(input, associations, "Associations", 50)
    }

    pub(super) fn list_association_versions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("AssociationId").unwrap_or_default();
        self.association_description(ctx, id)?;
        let versions = self.records_as(
            ctx,
            Kind::under("association-version", id),
            "AssociationVersionInfo",
        )?;
        paged(input, versions, "AssociationVersions", 50)
    }

    pub(super) fn describe_association_executions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("AssociationId").unwrap_or_default();
        self.association_description(ctx, id)?;
        Ok(Value::map().with("AssociationExecutions", Vec::<Value>::new()))
    }

    pub(super) fn start_associations_once(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        for id in strings(input, "AssociationIds") {
            if self.record(ctx, ASSOCIATION, id)?.is_none() {
                return Err(AwsError::new(
                    "InvalidAssociation",
                    format!("Association {id} does not exist."),
                ));
            }
        }
        Ok(Value::map())
    }

    pub(super) fn create_activation(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = ids::uuid();
        let code = ids::hex(20);
        let now = now_millis();
        let day = 24 * 3600 * 1000;
        let expiration = match input.get("ExpirationDate") {
            Some(Value::Timestamp(t)) => *t,
            _ => now + day,
        };
        let activation = Value::map()
            .with("ActivationId", id.as_str())
            .with_opt("Description", input.str("Description"))
            .with_opt("DefaultInstanceName", input.str("DefaultInstanceName"))
            .with_opt("IamRole", input.str("IamRole"))
            .with(
                "RegistrationLimit",
                input.int("RegistrationLimit").unwrap_or(1),
            )
            .with("RegistrationsCount", 0)
            .with("ExpirationDate", Value::Timestamp(expiration))
            .with("CreatedDate", Value::Timestamp(now))
            .with(
                "Tags",
                input
                    .get("Tags")
                    .cloned()
                    .unwrap_or(Value::List(Vec::new())),
            );
        self.save(ctx, ACTIVATION, &id, &activation)?;
        Ok(Value::map()
            .with("ActivationId", id)
            .with("ActivationCode", code))
    }

    pub(super) fn describe_activations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let now = now_millis();
        let filters = input
            .get("Filters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let activations: Vec<Value> = self
            .records_as(ctx, ACTIVATION, "Activation")?
            .into_iter()
            .map(|mut a| {
                let expired =
                    matches!(a.get("ExpirationDate"), Some(Value::Timestamp(t)) if *t <= now);
                a.insert("Expired", expired);
                a
            })
            .filter(|a| {
                filters.iter().all(|f| {
                    let member = match f.str("FilterKey").unwrap_or_default() {
                        "ActivationIds" => "ActivationId",
                        "DefaultInstanceName" => "DefaultInstanceName",
                        _ => "IamRole",
                    };
                    strings(f, "FilterValues")
                        .into_iter()
                        .any(|v| Some(v) == a.str(member))
                })
            })
            .collect();
        paged(input, activations, "ActivationList", 50)
    }

    pub(super) fn delete_activation(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("ActivationId").unwrap_or_default();
        if !self.forget(ctx, ACTIVATION, id)? {
            return Err(activation_missing(id));
        }
        Ok(Value::map())
    }

    pub(super) fn create_resource_data_sync(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("SyncName").unwrap_or_default();
        if self.record(ctx, SYNC, name)?.is_some() {
            return Err(AwsError::new(
                "ResourceDataSyncAlreadyExistsException",
                format!("Sync {name} already exists."),
            )
            .with_field("SyncName", name));
        }
        let sync_type = match (input.str("SyncType"), input.get("SyncSource")) {
            (Some(t), _) => t,
            (None, Some(_)) => "SyncFromSource",
            (None, None) => "SyncToDestination",
        };
        if (sync_type == "SyncToDestination") != input.get("S3Destination").is_some() {
            return Err(AwsError::new(
                "ResourceDataSyncInvalidConfigurationException",
                "S3Destination is required for SyncToDestination and not allowed otherwise.",
            ));
        }
        let now = Value::Timestamp(now_millis());
        let mut sync = Value::map()
            .with("SyncName", name)
            .with("SyncType", sync_type)
            .with("SyncCreatedTime", now.clone())
            .with("SyncLastModifiedTime", now);
        merge(
            &mut sync,
            input,
            &["S3Destination", "SyncSource"],
            &[],
            false,
        );
        self.save(ctx, SYNC, name, &sync)?;
        Ok(Value::map())
    }

    pub(super) fn list_resource_data_sync(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let wanted = input.str("SyncType").unwrap_or("SyncToDestination");
        let syncs: Vec<Value> = self
            .records_as(ctx, SYNC, "ResourceDataSyncItem")?
            .into_iter()
            .filter(|s| s.str("SyncType") == Some(wanted))
            .collect();
        paged(input, syncs, "ResourceDataSyncItems", 50)
    }

    pub(super) fn update_resource_data_sync(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("SyncName").unwrap_or_default();
        let mut sync = self
            .record(ctx, SYNC, name)?
            .ok_or_else(|| sync_missing(name))?;
        if sync.str("SyncType") != input.str("SyncType") {
            return Err(AwsError::new(
                "ResourceDataSyncConflictException",
                format!(
                    "Sync {name} is not of type {}.",
                    input.str("SyncType").unwrap_or_default()
                ),
            ));
        }
        merge(&mut sync, input, &["SyncSource"], &[], false);
        sync.insert("SyncLastModifiedTime", Value::Timestamp(now_millis()));
        self.save(ctx, SYNC, name, &sync)?;
        Ok(Value::map())
    }

    pub(super) fn delete_resource_data_sync(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("SyncName").unwrap_or_default();
        if !self.forget(ctx, SYNC, name)? {
            return Err(sync_missing(name));
        }
        Ok(Value::map())
    }

    fn cloud_connector(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Value)> {
        let id = input.str("CloudConnectorId").unwrap_or_default();
        let connector = self.record(ctx, CONNECTOR, id)?.ok_or_else(|| {
            AwsError::new(
                "ResourceNotFoundException",
                format!("Cloud connector {id} does not exist."),
            )
        })?;
        Ok((id.to_string(), connector))
    }

    pub(super) fn create_cloud_connector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = ids::uuid();
        let now = Value::Timestamp(now_millis());
        let provider = match input.get("Configuration") {
            Some(c) if c.get("GcpConfiguration").is_some() => "GCP",
            _ => "Azure",
        };
        let mut connector = Value::map()
            .with("CloudConnectorId", id.as_str())
            .with(
                "CloudConnectorArn",
                format!(
                    "arn:aws:ssm:{}:{}:cloud-connector/{id}",
                    ctx.region, ctx.account
                ),
            )
            .with("Provider", provider)
            .with("CreatedAt", now.clone())
            .with("UpdatedAt", now);
        merge(&mut connector, input, CONNECTOR_MEMBERS, &[], false);
        self.save(ctx, CONNECTOR, &id, &connector)?;
        Ok(Value::map().with("CloudConnectorId", id))
    }

    pub(super) fn get_cloud_connector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, connector) = self.cloud_connector(ctx, input)?;
        crate::documents::shaped(
            super::SPEC.model(),
            "GetCloudConnectorResult",
            &crate::documents::document(&connector),
        )
    }

    pub(super) fn update_cloud_connector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, mut connector) = self.cloud_connector(ctx, input)?;
        merge(
            &mut connector,
            input,
            &["DisplayName", "Configuration", "Description"],
            &[],
            false,
        );
        connector.insert("UpdatedAt", Value::Timestamp(now_millis()));
        self.save(ctx, CONNECTOR, &id, &connector)?;
        Ok(Value::map().with("CloudConnectorId", id))
    }

    pub(super) fn delete_cloud_connector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (id, _) = self.cloud_connector(ctx, input)?;
        self.forget(ctx, CONNECTOR, &id)?;
        Ok(Value::map().with("CloudConnectorId", id))
    }

    pub(super) fn list_cloud_connectors(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let connectors = self.records_as(ctx, CONNECTOR, "CloudConnectorSummary")?;
        paged(input, connectors, "CloudConnectors", 50)
    }

    /// ValidateCloudConnector: Roto reaches no other cloud, so it finds nothing to report.
    pub(super) fn validate_cloud_connector(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.cloud_connector(ctx, input)?;
        Ok(Value::map().with("ValidationFindings", Vec::<Value>::new()))
    }
}
