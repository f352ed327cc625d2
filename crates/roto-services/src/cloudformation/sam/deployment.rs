//! A function's `DeploymentPreference` as SAM expands it: the CodeDeploy application every
//! such function shares (`ServerlessDeploymentApplication`), its service role
//! (`CodeDeployServiceRole`, unless the preference names a `Role`), the function's
//! deployment group (`<Function>DeploymentGroup`: its traffic-shifting configuration,
//! alarms, automatic rollback and triggers), and the `CodeDeployLambdaAliasUpdate` update
//! policy on the function's alias, with its traffic hooks. Roto keeps the CodeDeploy
//! resources as configuration: an update moves the alias to the new version at once.

use serde_json::{json, Map, Value as Json};

use super::{copied, Expansion};

const APPLICATION: &str = "ServerlessDeploymentApplication";
const SERVICE_ROLE: &str = "CodeDeployServiceRole";

/// The deployment configurations CodeDeploy predefines for Lambda, which SAM names by
/// their short form (`Canary10Percent5Minutes` for `CodeDeployDefault.LambdaCanary10Percent5Minutes`).
const PREDEFINED: [&str; 9] = [
    "Canary10Percent5Minutes",
    "Canary10Percent10Minutes",
    "Canary10Percent15Minutes",
    "Canary10Percent30Minutes",
    "Linear10PercentEvery1Minute",
    "Linear10PercentEvery2Minutes",
    "Linear10PercentEvery3Minutes",
    "Linear10PercentEvery10Minutes",
    "AllAtOnce",
];

/// Whether a preference is enabled (`Enabled` absent, or anything but false).
pub(super) fn enabled(preference: &Json) -> bool {
    !matches!(preference.get("Enabled"), Some(v) if *v == json!(false) || v == "false" || v == "False")
}

impl Expansion<'_> {
    /// The CodeDeploy resources of the function's enabled `preference`, and the update
    /// policy on its alias `alias`.
    pub(super) fn deployment_preference(
        &mut self,
        alias: &str,
        preference: &Json,
    ) -> Result<(), String> {
        if !enabled(preference) {
            return Ok(());
        }
        let kind = preference
            .get("Type")
            .ok_or("'DeploymentPreference' is missing required Property 'Type'")?;
        let hooks = match preference.get("Hooks") {
            None => Map::new(),
            Some(Json::Object(hooks)) => hooks.clone(),
            Some(_) => {
                return Err(
                    "'Hooks' property of 'DeploymentPreference' must be a dictionary".into(),
                )
            }
        };
        self.shared(
            APPLICATION,
            json!({"Type": "AWS::CodeDeploy::Application", "Properties": {"ComputePlatform": "Lambda"}}),
        );
        let role = match preference.get("Role") {
            Some(role) => role.clone(),
            None => {
                self.shared(SERVICE_ROLE, service_role());
                json!({"Fn::GetAtt": [SERVICE_ROLE, "Arn"]})
            }
        };
        let group = format!("{}DeploymentGroup", self.id);
        let mut gp = copied(preference, &["TriggerConfigurations"]);
        if let Some(alarms) = alarms(preference.get("Alarms"))? {
            gp.insert("AlarmConfiguration".into(), alarms);
        }
        gp.insert("ApplicationName".into(), json!({"Ref": APPLICATION}));
        gp.insert(
            "AutoRollbackConfiguration".into(),
            json!({"Enabled": true, "Events": ["DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_ALARM", "DEPLOYMENT_STOP_ON_REQUEST"]}),
        );
        gp.insert("DeploymentConfigName".into(), configuration(kind));
        gp.insert(
            "DeploymentStyle".into(),
            json!({"DeploymentType": "BLUE_GREEN", "DeploymentOption": "WITH_TRAFFIC_CONTROL"}),
        );
        gp.insert("ServiceRoleArn".into(), role);
        self.add(&group, "AWS::CodeDeploy::DeploymentGroup", Json::Object(gp));
        let mut update = json!({
            "ApplicationName": {"Ref": APPLICATION},
            "DeploymentGroupName": {"Ref": group},
        });
        for (hook, member) in [
            ("PreTraffic", "BeforeAllowTrafficHook"),
            ("PostTraffic", "AfterAllowTrafficHook"),
        ] {
            if let Some(function) = hooks.get(hook) {
                update[member] = function.clone();
            }
        }
        self.resources[alias]["UpdatePolicy"] = json!({"CodeDeployLambdaAliasUpdate": update});
        Ok(())
    }

    /// A resource every function's preference shares, added once.
    fn shared(&mut self, logical: &str, resource: Json) {
        self.resources.entry(logical).or_insert(resource);
    }
}

/// The role CodeDeploy shifts Lambda traffic with.
fn service_role() -> Json {
    json!({
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [{
                    "Action": ["sts:AssumeRole"],
                    "Effect": "Allow",
                    "Principal": {"Service": ["codedeploy.amazonaws.com"]},
                }],
            },
            "ManagedPolicyArns": ["arn:aws:iam::aws:policy/service-role/AWSCodeDeployRoleForLambda"],
        },
    })
}

/// The deployment group's configuration name: a predefined short form as its full name.
fn configuration(kind: &Json) -> Json {
    match kind.as_str() {
        Some(short) if PREDEFINED.contains(&short) => {
            json!({"Fn::Sub": ["CodeDeployDefault.Lambda${ConfigName}", {"ConfigName": short}]})
        }
        _ => kind.clone(),
    }
}

/// The group's `AlarmConfiguration` from the preference's `Alarms` (a list of alarm names;
/// an empty list is an empty configuration).
fn alarms(alarms: Option<&Json>) -> Result<Option<Json>, String> {
    match alarms {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(names)) if names.is_empty() => Ok(Some(json!({}))),
        Some(Json::Array(names)) => {
            let alarms: Vec<Json> = names.iter().map(|n| json!({"Name": n})).collect();
            Ok(Some(json!({"Enabled": true, "Alarms": alarms})))
        }
        Some(_) => Err("Alarms must be a list".into()),
    }
}
