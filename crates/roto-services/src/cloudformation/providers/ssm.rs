//! Providers of SSM's types beyond parameters: documents (`AWS::SSM::Document`),
//! maintenance windows and their targets.

use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, retag, with, Call, Outcome, Provider, Tags};

/// The properties UpdateDocument takes beside the name.
const DOCUMENT_CONTENT: [&str; 4] = ["Attachments", "DocumentFormat", "TargetType", "VersionName"];

/// A document: `Ref` its name (given, or generated as `stack-Logical-RANDOM`). A changed
/// content makes a new version that becomes the default; tags change in place; a changed
/// name or type replaces it.
pub(crate) const DOCUMENT: Provider = Provider {
    kind: "AWS::SSM::Document",
    replaces: &["Name", "DocumentType"],
    create: |c| Box::pin(document_create(c)),
    update: Some(|c| Box::pin(document_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("ssm", "DeleteDocument", input).await)
        })
    },
};

/// The input common to CreateDocument and UpdateDocument: the content as text.
fn document_input(c: &Call, name: &str) -> Json {
    let input = with(pick(&c.props, &DOCUMENT_CONTENT), "Name", json!(name));
    with(input, "Content", json!(c.document("Content")))
}

async fn document_create(c: &Call) -> Outcome {
    let name = c.name("Name", 128);
    let mut input = document_input(c, &name);
    input = with(input, "DocumentType", c.props["DocumentType"].clone());
    input = with(input, "Requires", c.props["Requires"].clone());
    input = with(input, "Tags", c.props["Tags"].clone());
    c.api("ssm", "CreateDocument", input).await?;
    Ok(resolved(name, json!({})))
}

async fn document_update(c: &Call) -> Outcome {
    let name = c.physical();
    let changed = [
        "Content",
        "Attachments",
        "DocumentFormat",
        "TargetType",
        "VersionName",
    ]
    .iter()
    .any(|p| c.props.get(*p) != c.old_props.get(*p));
    if changed {
        let input = with(document_input(c, name), "DocumentVersion", json!("$LATEST"));
        let out = c.api("ssm", "UpdateDocument", input).await?;
        let version = out["DocumentDescription"]["DocumentVersion"].clone();
        let input = json!({"Name": name, "DocumentVersion": version});
        c.api("ssm", "UpdateDocumentDefaultVersion", input).await?;
    }
    retag_ssm(c, "Document", name).await?;
    Ok(c.previous.clone())
}

/// Tags and untags the SSM resource of `kind` (`Document`, `MaintenanceWindow`) and `id`
/// as its `Tags` changed.
async fn retag_ssm(c: &Call, kind: &str, id: &str) -> Result<(), String> {
    let operations = ("RemoveTagsFromResource", "AddTagsToResource");
    let target = json!({"ResourceType": kind, "ResourceId": id});
    retag(c, "ssm", operations, &target, Tags::List).await
}

/// The settings CreateMaintenanceWindow and UpdateMaintenanceWindow take.
const WINDOW_SETTINGS: [&str; 10] = [
    "Name",
    "Description",
    "StartDate",
    "EndDate",
    "Schedule",
    "ScheduleTimezone",
    "ScheduleOffset",
    "Duration",
    "Cutoff",
    "AllowUnassociatedTargets",
];

/// A maintenance window (kept and described; it runs no tasks): `Ref` its id
/// (`mw-...`); every setting and its tags change in place.
pub(crate) const MAINTENANCE_WINDOW: Provider = Provider {
    kind: "AWS::SSM::MaintenanceWindow",
    replaces: &[],
    create: |c| {
        Box::pin(async move {
            let input = with(
                pick(&c.props, &WINDOW_SETTINGS),
                "Tags",
                c.props["Tags"].clone(),
            );
            let out = c.api("ssm", "CreateMaintenanceWindow", input).await?;
            Ok(resolved(
                out["WindowId"].as_str().unwrap_or_default(),
                json!({}),
            ))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let id = c.physical();
            let input = with(pick(&c.props, &WINDOW_SETTINGS), "WindowId", json!(id));
            c.api(
                "ssm",
                "UpdateMaintenanceWindow",
                with(input, "Replace", json!(true)),
            )
            .await?;
            retag_ssm(c, "MaintenanceWindow", id).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"WindowId": c.physical()});
            gone_ok(c.api("ssm", "DeleteMaintenanceWindow", input).await)
        })
    },
};

/// The settings RegisterTargetWithMaintenanceWindow and UpdateMaintenanceWindowTarget take.
const TARGET_SETTINGS: [&str; 4] = ["Targets", "OwnerInformation", "Name", "Description"];

/// A maintenance window's target: `Ref` its id; everything but the window and resource
/// type changes in place.
pub(crate) const MAINTENANCE_WINDOW_TARGET: Provider = Provider {
    kind: "AWS::SSM::MaintenanceWindowTarget",
    replaces: &["WindowId", "ResourceType"],
    create: |c| {
        Box::pin(async move {
            let input = pick(
                &c.props,
                &[&TARGET_SETTINGS[..], &["WindowId", "ResourceType"]].concat(),
            );
            let out = c
                .api("ssm", "RegisterTargetWithMaintenanceWindow", input)
                .await?;
            Ok(resolved(
                out["WindowTargetId"].as_str().unwrap_or_default(),
                json!({}),
            ))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &TARGET_SETTINGS);
            input = with(input, "WindowId", c.props["WindowId"].clone());
            input = with(input, "WindowTargetId", json!(c.physical()));
            c.api(
                "ssm",
                "UpdateMaintenanceWindowTarget",
                with(input, "Replace", json!(true)),
            )
            .await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"WindowId": c.props["WindowId"], "WindowTargetId": c.physical()});
            gone_ok(
                c.api("ssm", "DeregisterTargetFromMaintenanceWindow", input)
                    .await,
            )
        })
    },
};
