//! Providers of IAM types: roles, users and groups (each with its inline and managed
//! policies; users with their groups and login profile), inline policies attached to
//! them, managed policies, instance profiles, access keys, OpenID Connect providers and
//! service-linked roles.

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
    own_policies(&call, ROLE_PRINCIPAL).await?;
    let role = &out["Role"];
    Ok(resolved(
        name,
        json!({"Arn": role["Arn"], "RoleId": role["RoleId"]}),
    ))
}

/// A principal of IAM policies: the member that names it and the noun of its policy
/// operations (`Role`: `RoleName`, `PutRolePolicy`, `AttachRolePolicy`, ...).
type Principal = (&'static str, &'static str);

const ROLE_PRINCIPAL: Principal = ("RoleName", "Role");
const USER_PRINCIPAL: Principal = ("UserName", "User");
const GROUP_PRINCIPAL: Principal = ("GroupName", "Group");

/// Puts the principal's inline policies (`Policies`) and attaches its managed ones
/// (`ManagedPolicyArns`), removing those the previous properties had and these do not.
async fn own_policies(c: &Call, (member, noun): Principal) -> Result<(), String> {
    let principal = c.physical();
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
        let input = json!({member: principal, "PolicyName": old});
        gone_ok(c.api("iam", &format!("Delete{noun}Policy"), input).await)?;
    }
    for p in c.props["Policies"].as_array().into_iter().flatten() {
        let document = match &p["PolicyDocument"] {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        let input =
            json!({member: principal, "PolicyName": p["PolicyName"], "PolicyDocument": document});
        c.api("iam", &format!("Put{noun}Policy"), input).await?;
    }
    let (new_arns, old_arns) = (
        members(&c.props, "ManagedPolicyArns"),
        members(&c.old_props, "ManagedPolicyArns"),
    );
    for old in old_arns.iter().filter(|a| !new_arns.contains(a)) {
        let input = json!({member: principal, "PolicyArn": old});
        gone_ok(c.api("iam", &format!("Detach{noun}Policy"), input).await)?;
    }
    for arn in new_arns.iter().filter(|a| !old_arns.contains(a)) {
        let input = json!({member: principal, "PolicyArn": arn});
        c.api("iam", &format!("Attach{noun}Policy"), input).await?;
    }
    Ok(())
}

/// Deletes every inline policy the principal has and detaches every managed one, as IAM
/// requires before the principal itself is deleted.
async fn drop_policies(c: &Call, (member, noun): Principal) -> Result<(), String> {
    let principal = c.physical();
    let listed = c
        .api(
            "iam",
            &format!("List{noun}Policies"),
            json!({member: principal}),
        )
        .await
        .map(|l| l["PolicyNames"].clone())
        .unwrap_or_default();
    for name in listed.as_array().into_iter().flatten() {
        let input = json!({member: principal, "PolicyName": name});
        gone_ok(c.api("iam", &format!("Delete{noun}Policy"), input).await)?;
    }
    let attached = c
        .api(
            "iam",
            &format!("ListAttached{noun}Policies"),
            json!({member: principal}),
        )
        .await
        .map(|l| l["AttachedPolicies"].clone())
        .unwrap_or_default();
    for p in attached.as_array().into_iter().flatten() {
        let input = json!({member: principal, "PolicyArn": p["PolicyArn"]});
        gone_ok(c.api("iam", &format!("Detach{noun}Policy"), input).await)?;
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
    own_policies(c, ROLE_PRINCIPAL).await?;
    Ok(c.previous.clone())
}

async fn role_delete(c: &Call) -> Result<(), String> {
    drop_policies(c, ROLE_PRINCIPAL).await?;
    gone_ok(
        c.api("iam", "DeleteRole", json!({"RoleName": c.physical()}))
            .await,
    )
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

/// The principals an inline policy names: the list `property` (`AWS::IAM::Policy`), or
/// the one `member` (`RolePolicy`, `UserPolicy`, `GroupPolicy`).
fn principals(props: &Json, property: &str, member: &str) -> Vec<String> {
    let mut found = members(props, property);
    found.extend(props[member].as_str().map(str::to_string));
    found
}

pub(crate) const POLICY: Provider = Provider {
    kind: "AWS::IAM::Policy",
    replaces: &[],
    create: |c| Box::pin(inline_put(c)),
    update: Some(|c| Box::pin(inline_put(c))),
    delete: |c| Box::pin(inline_remove(c, true)),
};

/// An inline policy of one role, user or group: the same work as `AWS::IAM::Policy`'s.
const fn inline_policy(kind: &'static str, replaces: &'static [&'static str]) -> Provider {
    Provider {
        kind,
        replaces,
        create: |c| Box::pin(inline_put(c)),
        update: Some(|c| Box::pin(inline_put(c))),
        delete: |c| Box::pin(inline_remove(c, true)),
    }
}

pub(crate) const ROLE_POLICY: Provider =
    inline_policy("AWS::IAM::RolePolicy", &["PolicyName", "RoleName"]);
pub(crate) const USER_POLICY: Provider =
    inline_policy("AWS::IAM::UserPolicy", &["PolicyName", "UserName"]);
pub(crate) const GROUP_POLICY: Provider =
    inline_policy("AWS::IAM::GroupPolicy", &["PolicyName", "GroupName"]);

pub(crate) const USER_TO_GROUP_ADDITION: Provider = Provider {
    kind: "AWS::IAM::UserToGroupAddition",
    replaces: &["GroupName"],
    create: |c| Box::pin(group_members(c, false)),
    update: Some(|c| Box::pin(group_members(c, false))),
    delete: |c| Box::pin(async move { group_members(c, true).await.map(|_| ()) }),
};

/// Adds the `Users` to the group (those the old properties named and the new ones do not
/// are removed), or removes them all at deletion; `Ref` a generated name.
async fn group_members(c: &Call, deleting: bool) -> Outcome {
    let group = c.props["GroupName"].clone();
    let users = members(&c.props, "Users");
    let (added, removed) = match deleting {
        true => (Vec::new(), users),
        false => {
            let old = members(&c.old_props, "Users");
            let gone = old.into_iter().filter(|u| !users.contains(u)).collect();
            (users, gone)
        }
    };
    for user in removed {
        let input = json!({"GroupName": group, "UserName": user});
        gone_ok(c.api("iam", "RemoveUserFromGroup", input).await)?;
    }
    for user in added {
        let input = json!({"GroupName": group, "UserName": user});
        c.api("iam", "AddUserToGroup", input).await?;
    }
    let id = match c.physical_id.as_deref() {
        Some(id) => id.to_string(),
        None => super::generated_name(&c.stack_name, &c.logical_id, 64),
    };
    Ok(resolved(id, json!({})))
}

async fn inline_put(c: &Call) -> Outcome {
    inline_remove(c, false).await?;
    let name = c.str("PolicyName").unwrap_or_default();
    let document = c.document("PolicyDocument").unwrap_or_default();
    for (property, member, suffix) in PRINCIPALS {
        for principal in principals(&c.props, property, member) {
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
        for principal in principals(props, property, member) {
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

pub(crate) const USER: Provider = Provider {
    kind: "AWS::IAM::User",
    replaces: &["UserName"],
    create: |c| Box::pin(user_create(c)),
    update: Some(|c| Box::pin(user_update(c))),
    delete: |c| Box::pin(user_delete(c)),
};

async fn user_create(c: &Call) -> Outcome {
    let name = c.name("UserName", 64);
    let input = with(
        pick(&c.props, &["Path", "PermissionsBoundary", "Tags"]),
        "UserName",
        json!(name),
    );
    let out = c.api("iam", "CreateUser", input).await?;
    let call = Call {
        physical_id: Some(name.clone()),
        old_props: Json::Null,
        ..c.clone()
    };
    user_update(&call).await?;
    Ok(resolved(name, json!({"Arn": out["User"]["Arn"]})))
}

/// Brings the user's policies, groups and login profile to the properties'.
async fn user_update(c: &Call) -> Outcome {
    own_policies(c, USER_PRINCIPAL).await?;
    let user = c.physical();
    let (new, old) = (members(&c.props, "Groups"), members(&c.old_props, "Groups"));
    for gone in old.iter().filter(|g| !new.contains(g)) {
        let input = json!({"UserName": user, "GroupName": gone});
        gone_ok(c.api("iam", "RemoveUserFromGroup", input).await)?;
    }
    for added in new.iter().filter(|g| !old.contains(g)) {
        let input = json!({"UserName": user, "GroupName": added});
        c.api("iam", "AddUserToGroup", input).await?;
    }
    if c.props.get("LoginProfile") != c.old_props.get("LoginProfile") {
        let input = json!({"UserName": user});
        gone_ok(c.api("iam", "DeleteLoginProfile", input.clone()).await)?;
        if let Some(profile) = c.prop("LoginProfile") {
            let input = with(input, "Password", profile["Password"].clone());
            let input = with(
                input,
                "PasswordResetRequired",
                profile["PasswordResetRequired"].clone(),
            );
            c.api("iam", "CreateLoginProfile", input).await?;
        }
    }
    Ok(c.previous.clone())
}

async fn user_delete(c: &Call) -> Result<(), String> {
    let user = c.physical();
    drop_policies(c, USER_PRINCIPAL).await?;
    for group in members(&c.props, "Groups") {
        let input = json!({"UserName": user, "GroupName": group});
        gone_ok(c.api("iam", "RemoveUserFromGroup", input).await)?;
    }
    gone_ok(
        c.api("iam", "DeleteLoginProfile", json!({"UserName": user}))
            .await,
    )?;
    gone_ok(c.api("iam", "DeleteUser", json!({"UserName": user})).await)
}

pub(crate) const GROUP: Provider = Provider {
    kind: "AWS::IAM::Group",
    replaces: &["GroupName"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("GroupName", 128);
            let input = with(pick(&c.props, &["Path"]), "GroupName", json!(name));
            let out = c.api("iam", "CreateGroup", input).await?;
            let call = Call {
                physical_id: Some(name.clone()),
                old_props: Json::Null,
                ..c.clone()
            };
            own_policies(&call, GROUP_PRINCIPAL).await?;
            Ok(resolved(name, json!({"Arn": out["Group"]["Arn"]})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            own_policies(c, GROUP_PRINCIPAL).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            drop_policies(c, GROUP_PRINCIPAL).await?;
            let input = json!({"GroupName": c.physical()});
            gone_ok(c.api("iam", "DeleteGroup", input).await)
        })
    },
};

pub(crate) const INSTANCE_PROFILE: Provider = Provider {
    kind: "AWS::IAM::InstanceProfile",
    replaces: &["InstanceProfileName", "Path"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("InstanceProfileName", 128);
            let input = with(
                pick(&c.props, &["Path"]),
                "InstanceProfileName",
                json!(name),
            );
            let out = c.api("iam", "CreateInstanceProfile", input).await?;
            let call = Call {
                physical_id: Some(name.clone()),
                old_props: Json::Null,
                ..c.clone()
            };
            profile_roles(&call).await?;
            Ok(resolved(
                name,
                json!({"Arn": out["InstanceProfile"]["Arn"]}),
            ))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            profile_roles(c).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let gone = Call {
                props: Json::Null,
                old_props: c.props.clone(),
                ..c.clone()
            };
            profile_roles(&gone).await?;
            let input = json!({"InstanceProfileName": c.physical()});
            gone_ok(c.api("iam", "DeleteInstanceProfile", input).await)
        })
    },
};

/// Adds the profile's `Roles` and removes those only the old properties named.
async fn profile_roles(c: &Call) -> Result<(), String> {
    let profile = c.physical();
    let (new, old) = (members(&c.props, "Roles"), members(&c.old_props, "Roles"));
    for gone in old.iter().filter(|r| !new.contains(r)) {
        let input = json!({"InstanceProfileName": profile, "RoleName": gone});
        gone_ok(c.api("iam", "RemoveRoleFromInstanceProfile", input).await)?;
    }
    for added in new.iter().filter(|r| !old.contains(r)) {
        let input = json!({"InstanceProfileName": profile, "RoleName": added});
        c.api("iam", "AddRoleToInstanceProfile", input).await?;
    }
    Ok(())
}

pub(crate) const ACCESS_KEY: Provider = Provider {
    kind: "AWS::IAM::AccessKey",
    replaces: &["UserName", "Serial"],
    create: |c| {
        Box::pin(async move {
            let out = c
                .api("iam", "CreateAccessKey", pick(&c.props, &["UserName"]))
                .await?;
            let key = &out["AccessKey"];
            let id = key["AccessKeyId"].as_str().unwrap_or_default().to_string();
            let call = Call {
                physical_id: Some(id.clone()),
                ..c.clone()
            };
            key_status(&call).await?;
            Ok(resolved(
                id,
                json!({"SecretAccessKey": key["SecretAccessKey"]}),
            ))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            key_status(c).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = with(
                pick(&c.props, &["UserName"]),
                "AccessKeyId",
                json!(c.physical()),
            );
            gone_ok(c.api("iam", "DeleteAccessKey", input).await)
        })
    },
};

/// Sets the key's `Status` when the properties give one.
async fn key_status(c: &Call) -> Result<(), String> {
    let Some(status) = c.prop("Status") else {
        return Ok(());
    };
    let input =
        json!({"UserName": c.props["UserName"], "AccessKeyId": c.physical(), "Status": status});
    c.api("iam", "UpdateAccessKey", input).await.map(|_| ())
}

/// An OpenID Connect provider: `Ref` and `Arn` its ARN; client ids, thumbprints and tags
/// changed in place.
pub(crate) const OIDC_PROVIDER: Provider = Provider {
    kind: "AWS::IAM::OIDCProvider",
    replaces: &["Url"],
    create: |c| {
        Box::pin(async move {
            let mut input = pick(&c.props, &["Url", "ThumbprintList", "Tags"]);
            input = with(input, "ClientIDList", c.props["ClientIdList"].clone());
            let out = c.api("iam", "CreateOpenIDConnectProvider", input).await?;
            let arn = out["OpenIDConnectProviderArn"].as_str().unwrap_or_default();
            Ok(resolved(arn, json!({"Arn": arn})))
        })
    },
    update: Some(|c| Box::pin(oidc_update(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"OpenIDConnectProviderArn": c.physical()});
            gone_ok(c.api("iam", "DeleteOpenIDConnectProvider", input).await)
        })
    },
};

async fn oidc_update(c: &Call) -> Outcome {
    let arn = json!(c.physical());
    let (new, old) = (
        members(&c.props, "ClientIdList"),
        members(&c.old_props, "ClientIdList"),
    );
    for id in old.iter().filter(|id| !new.contains(id)) {
        let input = json!({"OpenIDConnectProviderArn": arn, "ClientID": id});
        c.api("iam", "RemoveClientIDFromOpenIDConnectProvider", input)
            .await?;
    }
    for id in new.iter().filter(|id| !old.contains(id)) {
        let input = json!({"OpenIDConnectProviderArn": arn, "ClientID": id});
        c.api("iam", "AddClientIDToOpenIDConnectProvider", input)
            .await?;
    }
    if c.props.get("ThumbprintList") != c.old_props.get("ThumbprintList") {
        let input =
            json!({"OpenIDConnectProviderArn": arn, "ThumbprintList": c.props["ThumbprintList"]});
        c.api("iam", "UpdateOpenIDConnectProviderThumbprint", input)
            .await?;
    }
    let operations = ("UntagOpenIDConnectProvider", "TagOpenIDConnectProvider");
    let target = json!({"OpenIDConnectProviderArn": arn});
    super::retag(c, "iam", operations, &target, super::Tags::List).await?;
    Ok(c.previous.clone())
}

/// A service-linked role: `Ref` and `RoleName` the name IAM gives it; its description
/// changed in place.
pub(crate) const SERVICE_LINKED_ROLE: Provider = Provider {
    kind: "AWS::IAM::ServiceLinkedRole",
    replaces: &["AWSServiceName", "CustomSuffix"],
    create: |c| {
        Box::pin(async move {
            let input = pick(&c.props, &["AWSServiceName", "CustomSuffix", "Description"]);
            let out = c.api("iam", "CreateServiceLinkedRole", input).await?;
            let name = out["Role"]["RoleName"].as_str().unwrap_or_default();
            Ok(resolved(name, json!({"RoleName": name})))
        })
    },
    update: Some(|c| {
        Box::pin(async move {
            let description = c.str("Description").unwrap_or_default();
            let input = json!({"RoleName": c.physical(), "Description": description});
            c.api("iam", "UpdateRoleDescription", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"RoleName": c.physical()});
            gone_ok(c.api("iam", "DeleteServiceLinkedRole", input).await)
        })
    },
};
