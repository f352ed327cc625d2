//! Providers of IAM types: roles (with their inline and managed policies), inline
//! policies attached to roles, users and groups, and managed policies.

use serde_json::{json, Value as Json};

use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};

pub(crate) const ROLE: Provider = Provider {
    kind: "AWS::IAM::Role",
    replaces: &["RoleName", "Path"],
    create: |c| Box::pin(role_create(c)),
    update: Some(|c| Box::pin(role_update(c))),
    delete: |c| Box::pin(role_delete(c)),
};

async fn role_create(c: &Call) -> Outcome {
    let name = c.name("RoleName", 64);
    let mut input = pick(
        &c.props,
        &[
            "Path",
            "Description",
            "MaxSessionDuration",
            "PermissionsBoundary",
            "Tags",
        ],
    );
    input = with(input, "RoleName", json!(name));
    input = with(
        input,
        "AssumeRolePolicyDocument",
        json!(c.document("AssumeRolePolicyDocument").unwrap_or_default()),
    );
    let out = c.api("iam", "CreateRole", input).await?;
    let call = Call {
        physical_id: Some(name.clone()),
        old_props: Json::Null,
        ..c.clone()
    };
    role_policies(&call).await?;
    let role = &out["Role"];
    Ok(resolved(
        name,
        json!({"Arn": role["Arn"], "RoleId": role["RoleId"]}),
    ))
}

/// Puts the role's inline policies and attaches its managed ones, removing those the
/// previous properties had and these do not.
async fn role_policies(c: &Call) -> Result<(), String> {
    let role = c.physical();
    let names = |props: &Json| -> Vec<String> {
        props["Policies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["PolicyName"].as_str().map(str::to_string))
            .collect()
    };
    let new_names = names(&c.props);
    for old in names(&c.old_props)
        .iter()
        .filter(|n| !new_names.contains(n))
    {
        gone_ok(
            c.api(
                "iam",
                "DeleteRolePolicy",
                json!({"RoleName": role, "PolicyName": old}),
            )
            .await,
        )?;
    }
    for p in c.props["Policies"].as_array().into_iter().flatten() {
        let document = match &p["PolicyDocument"] {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        c.api(
            "iam",
            "PutRolePolicy",
            json!({"RoleName": role, "PolicyName": p["PolicyName"], "PolicyDocument": document}),
        )
        .await?;
    }
    let arns = |props: &Json| -> Vec<String> {
        props["ManagedPolicyArns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect()
    };
    let (new_arns, old_arns) = (arns(&c.props), arns(&c.old_props));
    for old in old_arns.iter().filter(|a| !new_arns.contains(a)) {
        gone_ok(
            c.api(
                "iam",
                "DetachRolePolicy",
                json!({"RoleName": role, "PolicyArn": old}),
            )
            .await,
        )?;
    }
    for arn in new_arns.iter().filter(|a| !old_arns.contains(a)) {
        c.api(
            "iam",
            "AttachRolePolicy",
            json!({"RoleName": role, "PolicyArn": arn}),
        )
        .await?;
    }
    Ok(())
}

async fn role_update(c: &Call) -> Outcome {
    let role = c.physical();
    if c.props.get("AssumeRolePolicyDocument") != c.old_props.get("AssumeRolePolicyDocument") {
        let document = c.document("AssumeRolePolicyDocument").unwrap_or_default();
        c.api(
            "iam",
            "UpdateAssumeRolePolicy",
            json!({"RoleName": role, "PolicyDocument": document}),
        )
        .await?;
    }
    role_policies(c).await?;
    Ok(c.previous.clone())
}

async fn role_delete(c: &Call) -> Result<(), String> {
    let role = c.physical();
    let listed = c
        .api("iam", "ListRolePolicies", json!({"RoleName": role}))
        .await;
    for name in listed
        .as_ref()
        .map(|l| l["PolicyNames"].clone())
        .unwrap_or_default()
        .as_array()
        .into_iter()
        .flatten()
    {
        gone_ok(
            c.api(
                "iam",
                "DeleteRolePolicy",
                json!({"RoleName": role, "PolicyName": name}),
            )
            .await,
        )?;
    }
    let attached = c
        .api("iam", "ListAttachedRolePolicies", json!({"RoleName": role}))
        .await;
    let attached = attached
        .map(|l| l["AttachedPolicies"].clone())
        .unwrap_or_default();
    for p in attached.as_array().into_iter().flatten() {
        gone_ok(
            c.api(
                "iam",
                "DetachRolePolicy",
                json!({"RoleName": role, "PolicyArn": p["PolicyArn"]}),
            )
            .await,
        )?;
    }
    gone_ok(c.api("iam", "DeleteRole", json!({"RoleName": role})).await)
}

/// The principals a policy type attaches to: (property, member, operation suffix).
const PRINCIPALS: [(&str, &str, &str); 3] = [
    ("Roles", "RoleName", "Role"),
    ("Users", "UserName", "User"),
    ("Groups", "GroupName", "Group"),
];

fn members(props: &Json, property: &str) -> Vec<String> {
    props[property]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect()
}

pub(crate) const POLICY: Provider = Provider {
    kind: "AWS::IAM::Policy",
    replaces: &[],
    create: |c| Box::pin(inline_put(c)),
    update: Some(|c| Box::pin(inline_put(c))),
    delete: |c| Box::pin(inline_remove(c, true)),
};

async fn inline_put(c: &Call) -> Outcome {
    inline_remove(c, false).await?;
    let name = c.str("PolicyName").unwrap_or_default();
    let document = c.document("PolicyDocument").unwrap_or_default();
    for (property, member, suffix) in PRINCIPALS {
        for principal in members(&c.props, property) {
            let input = json!({member: principal, "PolicyName": name, "PolicyDocument": document});
            c.api("iam", &format!("Put{suffix}Policy"), input).await?;
        }
    }
    let id = match c.physical_id.as_deref() {
        Some(id) => id.to_string(),
        None => super::generated_name(&c.stack_name, &c.logical_id, 64),
    };
    Ok(resolved(id.as_str(), json!({"Id": id})))
}

/// Removes the policy from the principals the old properties (or, at deletion, the
/// current ones) named.
async fn inline_remove(c: &Call, deleting: bool) -> Result<(), String> {
    let props = if deleting { &c.props } else { &c.old_props };
    let Some(name) = props["PolicyName"].as_str() else {
        return Ok(());
    };
    for (property, member, suffix) in PRINCIPALS {
        for principal in members(props, property) {
            let input = json!({member: principal, "PolicyName": name});
            gone_ok(c.api("iam", &format!("Delete{suffix}Policy"), input).await)?;
        }
    }
    Ok(())
}

pub(crate) const MANAGED_POLICY: Provider = Provider {
    kind: "AWS::IAM::ManagedPolicy",
    replaces: &["ManagedPolicyName", "Path", "Description"],
    create: |c| Box::pin(managed_create(c)),
    update: Some(|c| Box::pin(managed_update(c))),
    delete: |c| Box::pin(managed_delete(c)),
};

async fn managed_create(c: &Call) -> Outcome {
    let name = c.name("ManagedPolicyName", 128);
    let mut input = pick(&c.props, &["Path", "Description"]);
    input = with(input, "PolicyName", json!(name));
    input = with(
        input,
        "PolicyDocument",
        json!(c.document("PolicyDocument").unwrap_or_default()),
    );
    let out = c.api("iam", "CreatePolicy", input).await?;
    let arn = out["Policy"]["Arn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let call = Call {
        physical_id: Some(arn.clone()),
        old_props: Json::Null,
        ..c.clone()
    };
    attachments(&call).await?;
    Ok(resolved(
        arn.as_str(),
        json!({"PolicyArn": arn, "PolicyId": out["Policy"]["PolicyId"]}),
    ))
}

/// Attaches the policy to the principals the properties name, detaching it from those
/// only the old properties named.
async fn attachments(c: &Call) -> Result<(), String> {
    let arn = c.physical();
    for (property, member, suffix) in PRINCIPALS {
        let (new, old) = (members(&c.props, property), members(&c.old_props, property));
        for gone in old.iter().filter(|p| !new.contains(p)) {
            gone_ok(
                c.api(
                    "iam",
                    &format!("Detach{suffix}Policy"),
                    json!({member: gone, "PolicyArn": arn}),
                )
                .await,
            )?;
        }
        for added in new.iter().filter(|p| !old.contains(p)) {
            c.api(
                "iam",
                &format!("Attach{suffix}Policy"),
                json!({member: added, "PolicyArn": arn}),
            )
            .await?;
        }
    }
    Ok(())
}

async fn managed_update(c: &Call) -> Outcome {
    if c.props.get("PolicyDocument") != c.old_props.get("PolicyDocument") {
        let document = c.document("PolicyDocument").unwrap_or_default();
        let input =
            json!({"PolicyArn": c.physical(), "PolicyDocument": document, "SetAsDefault": true});
        c.api("iam", "CreatePolicyVersion", input).await?;
    }
    attachments(c).await?;
    Ok(c.previous.clone())
}

async fn managed_delete(c: &Call) -> Result<(), String> {
    let detach = Call {
        props: Json::Null,
        old_props: c.props.clone(),
        ..c.clone()
    };
    attachments(&detach).await?;
    let versions = c
        .api(
            "iam",
            "ListPolicyVersions",
            json!({"PolicyArn": c.physical()}),
        )
        .await;
    let versions = versions.map(|v| v["Versions"].clone()).unwrap_or_default();
    for v in versions.as_array().into_iter().flatten() {
        if v["IsDefaultVersion"].as_bool() != Some(true) {
            let input = json!({"PolicyArn": c.physical(), "VersionId": v["VersionId"]});
            gone_ok(c.api("iam", "DeletePolicyVersion", input).await)?;
        }
    }
    gone_ok(
        c.api("iam", "DeletePolicy", json!({"PolicyArn": c.physical()}))
            .await,
    )
}
