//! The runtimes Lambda no longer lets a function be created with or updated to, and the
//! runtime it recommends instead: the model still lists them (old functions keep them),
//! so the check is Lambda's, not the model's.

use roto_core::{AwsResult, Value};

use super::invalid_parameter;

/// Each deprecated runtime whose create and update blocks have passed, with the runtime
/// Lambda's refusal recommends.
const DEPRECATED: &[(&str, &str)] = &[
    ("nodejs", "nodejs22.x"),
    ("nodejs4.3", "nodejs22.x"),
    ("nodejs4.3-edge", "nodejs22.x"),
    ("nodejs6.10", "nodejs22.x"),
    ("nodejs8.10", "nodejs22.x"),
    ("nodejs10.x", "nodejs22.x"),
    ("nodejs12.x", "nodejs22.x"),
    ("nodejs14.x", "nodejs22.x"),
    ("nodejs16.x", "nodejs22.x"),
    ("python2.7", "python3.13"),
    ("python3.6", "python3.13"),
    ("python3.7", "python3.13"),
    ("python3.8", "python3.13"),
    ("java8", "java21"),
    ("dotnetcore1.0", "dotnet8"),
    ("dotnetcore2.0", "dotnet8"),
    ("dotnetcore2.1", "dotnet8"),
    ("dotnetcore3.1", "dotnet8"),
    ("dotnet6", "dotnet8"),
    ("ruby2.5", "ruby3.4"),
    ("ruby2.7", "ruby3.4"),
    ("go1.x", "provided.al2023"),
    ("provided", "provided.al2023"),
];

/// Refuses a Create or UpdateFunctionConfiguration input that names a deprecated runtime,
/// in Lambda's words.
pub(super) fn check_runtime(input: &Value) -> AwsResult<()> {
    let Some(runtime) = input.str("Runtime") else {
        return Ok(());
    };
    match DEPRECATED.iter().find(|(old, _)| *old == runtime) {
        Some((old, new)) => Err(invalid_parameter(format!(
            "The runtime parameter of {old} is no longer supported for creating or updating AWS Lambda functions. We recommend you use the new runtime ({new}) while creating or updating functions."
        ))),
        None => Ok(()),
    }
}
