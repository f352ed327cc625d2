//! `AWS_IAM` authorization of REST API methods and HTTP API routes, shared by both.
//!
//! The request must be signed (an `Authorization` header or a presigned query string),
//! else the API kind's 403. Under `--enforce-iam` the signer must also be allowed
//! `execute-api:Invoke` on the method's ARN
//! (`arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}/{path}`) by their
//! identity policies or the API's resource policy, decided by IAM's evaluator as every
//! service's calls are; a denial is 403 `{"Message":"User: ... is not authorized to
//! perform: execute-api:Invoke on resource: ..."}`. Without the flag any signature passes,
//! as Roto's front end lets any credentials through. Either way the signer, where known,
//! is who the integration's event names.

use roto_core::access::{
    context_keys, denial_message, identify, Access, Principal, ResourcePolicy, ENFORCE_OPTION,
};
use roto_core::{AwsError, Env};

use super::invoke::ApiRequest;

/// Why an `AWS_IAM` check refused a request.
pub enum IamRefusal {
    /// No signature.
    Unsigned,
    /// The signature's key is unknown, or its session expired (STS's error).
    Credentials(AwsError),
    /// IAM denied `execute-api:Invoke`: AWS's message.
    Denied(String),
}

/// Checks `AWS_IAM` authorization of `req` to invoke `arn`, under the API's resource
/// `policy` (its account `owner`); the signer, where known.
pub fn authorize(
    env: &Env,
    req: &ApiRequest,
    arn: &str,
    owner: &str,
    policy: Option<&str>,
) -> Result<Option<Principal>, IamRefusal> {
    if !req.signed() {
        return Err(IamRefusal::Unsigned);
    }
    let Some(dispatcher) = env.dispatcher() else {
        return Ok(None);
    };
    let found = identify(&dispatcher, &req.caller);
    if env.option(ENFORCE_OPTION).as_deref() != Some("true") {
        return Ok(found.ok());
    }
    let principal = found.map_err(IamRefusal::Credentials)?;
    let access = Access {
        action: "execute-api:Invoke".into(),
        resource: arn.to_string(),
        policy: Some(ResourcePolicy {
            owner: owner.to_string(),
            document: policy.filter(|p| !p.is_empty()).map(str::to_string),
            ..ResourcePolicy::default()
        }),
        ..Access::default()
    };
    let agent = req.header("user-agent");
    let keys = context_keys(
        &req.caller,
        &principal,
        Some(&req.source_ip),
        agent.as_deref(),
    );
    let verdict = roto_core::access::authorize(&dispatcher, &principal, &access, &keys);
    match verdict {
        Some(Ok(verdict)) => match verdict.denial {
            None => Ok(Some(principal)),
            Some(denial) => Err(IamRefusal::Denied(denial_message(
                &principal, &access, denial, false,
            ))),
        },
        Some(Err(e)) => Err(IamRefusal::Credentials(e)),
        None => Ok(Some(principal)),
    }
}
