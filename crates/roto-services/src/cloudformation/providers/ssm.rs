//! Providers of SSM's types beyond parameters: documents (`AWS::SSM::Document`).

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
    let operations = ("RemoveTagsFromResource", "AddTagsToResource");
    let target = json!({"ResourceType": "Document", "ResourceId": name});
    retag(c, "ssm", operations, &target, Tags::List).await?;
    Ok(c.previous.clone())
}
