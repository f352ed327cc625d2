//! Step Functions' ARNs and names: how AWS builds them, and the `InvalidArn` and
//! `InvalidName` errors it answers when one does not parse or does not fit.

use roto_core::{AwsError, AwsResult, Context};

/// What an ARN names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A state machine (`stateMachine:NAME`).
    Machine(String),
    /// A published version (`stateMachine:NAME:3`).
    Version(String, i64),
    /// An alias (`stateMachine:NAME:ALIAS`).
    Alias(String, String),
    /// An execution (`execution:MACHINE:NAME`, or `express:MACHINE:NAME:ID`).
    Execution(String, String),
    /// An activity (`activity:NAME`).
    Activity(String),
    /// A Distributed Map's map run (`mapRun:MACHINE/LABEL:ID`).
    MapRun,
}

/// A parsed Step Functions ARN.
#[derive(Debug, Clone)]
pub(super) struct Arn {
    /// The region it names.
    pub region: String,
    /// The account it names.
    pub account: String,
    /// What it names.
    pub target: Target,
}

/// `InvalidArn` in AWS's words.
pub(super) fn invalid_arn(arn: &str) -> AwsError {
    AwsError::new(
        "InvalidArn",
        format!("Invalid Arn: 'Invalid ARN prefix: {arn}'"),
    )
}

/// `InvalidArn` for an ARN of the wrong kind for the operation.
pub(super) fn wrong_kind(kind: &str) -> AwsError {
    AwsError::new(
        "InvalidArn",
        format!("Invalid Arn: 'Resource type not valid in this context: {kind}'"),
    )
}

/// Parses an ARN, or `InvalidArn`.
pub(super) fn parse(arn: &str) -> AwsResult<Arn> {
    let parts: Vec<&str> = arn.split(':').collect();
    if parts.len() < 7 || parts[0] != "arn" || parts[2] != "states" {
        return Err(invalid_arn(arn));
    }
    let (region, account) = (parts[3].to_string(), parts[4].to_string());
    let rest = &parts[6..];
    let target = match (parts[5], rest) {
        ("stateMachine", [name]) => Target::Machine(name.to_string()),
        ("stateMachine", [name, qualifier]) => match qualifier.parse::<i64>() {
            Ok(v) if v > 0 && !qualifier.starts_with('0') => Target::Version(name.to_string(), v),
            _ if qualifier.is_empty() => return Err(invalid_arn(arn)),
            _ => Target::Alias(name.to_string(), qualifier.to_string()),
        },
        ("execution", [machine, name]) => Target::Execution(machine.to_string(), name.to_string()),
        ("express", [machine, name, _id]) => {
            Target::Execution(machine.to_string(), name.to_string())
        }
        ("activity", [name]) => Target::Activity(name.to_string()),
        ("mapRun", [machine, _id]) if machine.contains('/') => Target::MapRun,
        _ => return Err(invalid_arn(arn)),
    };
    Ok(Arn {
        region,
        account,
        target,
    })
}

impl Target {
    /// The resource type AWS names in "not valid in this context" errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Machine(_) | Target::Version(..) | Target::Alias(..) => "stateMachine",
            Target::Execution(..) => "execution",
            Target::Activity(_) => "activity",
            Target::MapRun => "mapRun",
        }
    }
}

/// The ARN of a state machine.
pub(super) fn machine(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:states:{}:{}:stateMachine:{name}",
        ctx.region, ctx.account
    )
}

/// The ARN of an activity.
pub(super) fn activity(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:states:{}:{}:activity:{name}",
        ctx.region, ctx.account
    )
}

/// The unqualified ARN of the state machine a version or alias ARN belongs to.
pub(super) fn unqualified(arn: &str) -> &str {
    match arn.match_indices(':').nth(6) {
        Some((i, _)) => &arn[..i],
        None => arn,
    }
}

/// The ARN of an execution of the state machine `machine_arn`.
pub(super) fn execution(machine_arn: &str, name: &str, express: bool) -> String {
    let base = unqualified(machine_arn);
    let prefix = base.replacen(
        ":stateMachine:",
        if express { ":express:" } else { ":execution:" },
        1,
    );
    if express {
        format!("{prefix}:{name}:{}", roto_core::dispatch::new_request_id())
    } else {
        format!("{prefix}:{name}")
    }
}

/// A map run's ARN and its child executions' state machine ARN, for a Distributed Map
/// labelled `label` in an execution of `machine_arn`.
pub(super) fn map_run(machine_arn: &str, label: &str) -> (String, String) {
    let machine = format!("{}/{label}", unqualified(machine_arn));
    let run = format!(
        "{}:{}",
        machine.replacen(":stateMachine:", ":mapRun:", 1),
        roto_core::dispatch::new_request_id()
    );
    (run, machine)
}

/// Whether a resource or execution name is one AWS accepts: 1 to 80 characters, none of
/// them white space, brackets, wildcards, the special characters AWS lists, or controls.
pub(super) fn valid_name(name: &str) -> bool {
    let forbidden = |c: char| {
        c.is_whitespace()
            || c.is_control()
            || "<>{}[]?*\"#%\\^|~`$&,;:/".contains(c)
            || ('\u{7f}'..='\u{9f}').contains(&c)
    };
    !name.is_empty() && name.chars().count() <= 80 && !name.chars().any(forbidden)
}

/// Checks a name, answering `InvalidName` as AWS does.
pub(super) fn check_name(name: &str) -> AwsResult<()> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(AwsError::new(
            "InvalidName",
            format!("Invalid Name: '{name}'"),
        ))
    }
}

/// Checks that an ARN is in the caller's account and region; AWS answers one of another
/// account or region as if the resource did not exist, which the caller's lookup does.
pub(super) fn in_scope(arn: &Arn, ctx: &Context) -> bool {
    arn.account == ctx.account && arn.region == ctx.region
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_resource_kind() {
        let p = |s: &str| parse(s).map(|a| a.target);
        let m = "arn:aws:states:us-east-1:000000000000:stateMachine:m";
        assert_eq!(p(m).unwrap(), Target::Machine("m".into()));
        assert_eq!(
            p(&format!("{m}:3")).unwrap(),
            Target::Version("m".into(), 3)
        );
        assert_eq!(
            p(&format!("{m}:prod")).unwrap(),
            Target::Alias("m".into(), "prod".into())
        );
        assert!(p("arn:aws:sqs:us-east-1:0:q").is_err());
        assert!(p("nonsense").is_err());
        assert_eq!(unqualified(&format!("{m}:3")), m);
        assert_eq!(
            execution(&format!("{m}:3"), "e", false),
            "arn:aws:states:us-east-1:000000000000:execution:m:e"
        );
    }

    #[test]
    fn names_follow_aws_rules() {
        assert!(valid_name("my-machine_1.v2"));
        for bad in ["", "a b", "a:b", "a/b", "a*", "x\u{1}", &"a".repeat(81)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
