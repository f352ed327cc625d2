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
//!
//! A REST API's resource policy also governs its other methods under `--enforce-iam`
//! ([`check_resource_policy`]): there the caller is anonymous, so the policy alone decides.

use roto_core::access::{
    context_keys, denial_message, identify, Access, Denial, Principal, ResourcePolicy, Verdict,
    ENFORCE_OPTION,
};
use roto_core::dispatch::Dispatcher;
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
    let policy = policy.filter(|p| !p.is_empty());
    let (access, verdict) = decide_invoke(&dispatcher, req, &principal, arn, owner, policy);
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

/// IAM's decision on `principal` invoking `arn` under the API's resource `policy` (its
/// account `owner`), with the request's context keys; the access asked about, for the
/// denial's message.
fn decide_invoke(
    dispatcher: &Dispatcher,
    req: &ApiRequest,
    principal: &Principal,
    arn: &str,
    owner: &str,
    policy: Option<&str>,
) -> (Access, Option<Result<Verdict, AwsError>>) {
    let access = Access {
        action: "execute-api:Invoke".into(),
        resource: arn.to_string(),
        policy: Some(ResourcePolicy {
            owner: owner.to_string(),
            document: policy.map(|p| expanded(p, arn)),
            ..ResourcePolicy::default()
        }),
        ..Access::default()
    };
    let agent = req.header("user-agent");
    let keys = context_keys(
        &req.caller,
        principal,
        Some(&req.source_ip),
        agent.as_deref(),
    );
    let verdict = roto_core::access::authorize(dispatcher, principal, &access, &keys);
    (access, verdict)
}

/// Checks a method whose authorization is not `AWS_IAM` against the API's resource
/// `policy` (its account `owner`), as API Gateway does under `--enforce-iam`: the caller is
/// anonymous, so the policy alone decides. An explicit deny (an IP, VPC or principal
/// condition) always refuses; a policy that allows nothing refuses only a method without
/// authorization (`open`), since a Lambda or Cognito authorizer's allow stands where the
/// policy says nothing. Denials are API Gateway's `User: anonymous ...` messages.
pub fn check_resource_policy(
    env: &Env,
    req: &ApiRequest,
    arn: &str,
    owner: &str,
    policy: Option<&str>,
    open: bool,
) -> Result<(), IamRefusal> {
    let Some(policy) = policy.filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    if env.option(ENFORCE_OPTION).as_deref() != Some("true") {
        return Ok(());
    }
    let Some(dispatcher) = env.dispatcher() else {
        return Ok(());
    };
    let principal = Principal::anonymous(owner);
    let (_, verdict) = decide_invoke(&dispatcher, req, &principal, arn, owner, Some(policy));
    let denial = match verdict {
        Some(Ok(verdict)) => verdict.denial,
        Some(Err(e)) => return Err(IamRefusal::Credentials(e)),
        None => None,
    };
    let refused = |explicit: bool| {
        let suffix = if explicit {
            " with an explicit deny"
        } else {
            ""
        };
        Err(IamRefusal::Denied(format!(
            "User: anonymous is not authorized to perform: execute-api:Invoke on resource: {arn}{suffix}"
        )))
    };
    match denial {
        Some(Denial::ResourceDeny | Denial::IdentityDeny) => refused(true),
        Some(_) if open => refused(false),
        _ => Ok(()),
    }
}

/// The policy with its `execute-api:/...` shorthand resources written out against the API
/// that `arn` (a method's ARN) belongs to, as API Gateway expands them.
fn expanded(policy: &str, arn: &str) -> String {
    match arn.split_once('/') {
        Some((api, _)) => policy.replace("\"execute-api:/", &format!("\"{api}/")),
        None => policy.to_string(),
    }
}
