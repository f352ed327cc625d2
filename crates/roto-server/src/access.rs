//! `--enforce-iam` at the front end: before a decoded call reaches its service, find who is
//! calling, ask the service what the call asks (action, resource, resource policy), ask
//! IAM to decide, and answer a denial as the service's AWS front end does.
//!
//! Who calls: no signature is anonymous; the key `test` or a 12-digit key id is that
//! account's root; a key STS or IAM issued is the session or user behind it, which they
//! name through `Service::identify`; any other key is unknown (`InvalidClientTokenId` in
//! the protocol's words). Every decision is written into the request's trace entry.

use http::request::Parts;
use roto_core::access::{authorize, denied, identify, Access, Principal, Verdict};
use roto_core::protocol::Protocol;
use roto_core::trace::TraceEntry;
use roto_core::{AwsError, Context, Dispatcher, Service, Value};

use crate::http::Peer;

/// One decoded call, as the check reads it.
pub struct Call<'a> {
    /// The service it is for.
    pub service: &'a dyn Service,
    /// The request's head (its peer address, its user agent).
    pub parts: &'a Parts,
    /// The caller's context.
    pub ctx: &'a Context,
    /// The caller's protocol, which shapes a denial.
    pub protocol: Protocol,
    /// The operation.
    pub operation: &'a str,
    /// The decoded input.
    pub input: &'a Value,
}

/// Checks one call; `Err` is the denial to answer.
pub fn check(
    dispatcher: &Dispatcher,
    call: Call<'_>,
    entry: &mut TraceEntry,
) -> Result<(), AwsError> {
    let Call {
        service,
        parts,
        ctx,
        protocol,
        operation,
        input,
    } = call;
    let signer = identify(dispatcher, ctx).map_err(|e| {
        let key = ctx.access_key.as_deref().unwrap_or_default();
        refused_credentials(e, protocol, key, parts)
    })?;
    let access = service.access(ctx, &signer, operation, input)?;
    if access.open {
        return Ok(());
    }
    let principal = access.caller.clone().unwrap_or(signer);
    let mut keys = context_keys(parts, ctx, &principal);
    keys.extend(request_tag_keys(input));
    let decider = Decider {
        dispatcher,
        principal: &principal,
        protocol,
    };
    decider.decide(&access, &keys, entry)?;
    for also in &access.also {
        decider.decide(also, &keys, entry)?;
    }
    let spec = service.spec();
    let to_service = spec.signing_names.first().copied().unwrap_or(spec.name);
    keys.push((
        "iam:PassedToService".into(),
        vec![format!("{to_service}.amazonaws.com")],
    ));
    for role in &access.passed_roles {
        let pass = Access {
            action: "iam:PassRole".into(),
            resource: role.clone(),
            ..Access::default()
        };
        decider.decide(&pass, &keys, entry)?;
    }
    Ok(())
}

/// IAM deciding for one caller: the call's own access, then what else it needs (an S3
/// copy's source), then `iam:PassRole` on each role it hands its service, with
/// `iam:PassedToService` naming the service's principal (`lambda.amazonaws.com`). Each
/// decision adds its resource's own keys to the request's.
struct Decider<'a> {
    dispatcher: &'a Dispatcher,
    principal: &'a Principal,
    protocol: Protocol,
}

impl Decider<'_> {
    /// One decision; the trace keeps the call's own, or the denial.
    fn decide(
        &self,
        access: &Access,
        keys: &[(String, Vec<String>)],
        entry: &mut TraceEntry,
    ) -> Result<(), AwsError> {
        let Some(verdict) = authorize(self.dispatcher, self.principal, access, keys) else {
            return Ok(());
        };
        let verdict = verdict?;
        if entry.detail.is_none() || verdict.denial.is_some() {
            entry.detail = Some(describe(self.principal, access, &verdict));
        }
        match verdict.denial {
            None => Ok(()),
            Some(denial) => Err(denied(self.protocol, self.principal, access, denial)),
        }
    }
}

/// The global condition keys of a request.
fn context_keys(parts: &Parts, ctx: &Context, principal: &Principal) -> Vec<(String, Vec<String>)> {
    let peer = parts.extensions.get::<Peer>().map(|p| p.0.ip().to_string());
    let agent = parts
        .headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    roto_core::access::context_keys(ctx, principal, peer.as_deref(), agent)
}

/// The request's tag condition keys: `aws:RequestTag/<key>` for each tag it sets,
/// `aws:TagKeys` for every tag key it names.
fn request_tag_keys(input: &Value) -> Vec<(String, Vec<String>)> {
    let (tags, named) = roto_core::access::request_tags(input);
    let mut keys: Vec<(String, Vec<String>)> = tags
        .into_iter()
        .map(|(k, v)| (format!("aws:RequestTag/{k}"), vec![v]))
        .collect();
    if !named.is_empty() {
        keys.push(("aws:TagKeys".into(), named));
    }
    keys
}

/// The decision as the trace shows it.
fn describe(principal: &Principal, access: &Access, verdict: &Verdict) -> String {
    let decision = match verdict.denial {
        None => "allowed".to_string(),
        Some(denial) => format!("denied {}", denial.because(&access.action)),
    };
    let mut text = format!(
        "access {decision}: {} {} on {}",
        principal.arn, access.action, access.resource
    );
    if !verdict.matched.is_empty() {
        text.push_str(&format!(" by {}", verdict.matched.join(", ")));
    }
    text
}

/// A refusal of the request's credentials (an unknown key, an expired session) in the
/// protocol's words; any other error as it is.
pub fn refused_credentials(
    error: AwsError,
    protocol: Protocol,
    key: &str,
    parts: &Parts,
) -> AwsError {
    match error.code.as_ref() {
        "InvalidClientTokenId" => unknown_key_for(protocol, key),
        "InvalidToken" => invalid_token_for(protocol, key, parts),
        "ExpiredToken" => expired_token_for(protocol, parts),
        _ => error,
    }
}

/// The token a request carries.
fn session_token(parts: &Parts) -> Option<String> {
    roto_core::signature::session_token(&parts.headers, parts.uri.query().unwrap_or_default())
}

/// The answer to a session's key with another session's token: S3's `InvalidToken` (400,
/// naming the token); the other front ends call the credentials invalid, as for a key
/// nobody issued.
fn invalid_token_for(protocol: Protocol, key: &str, parts: &Parts) -> AwsError {
    match (protocol, session_token(parts)) {
        (Protocol::RestXml, Some(token)) => {
            roto_core::access::invalid_token().with_field("Token-0", token)
        }
        _ => unknown_key_for(protocol, key),
    }
}

/// The answer to an expired session's credentials: S3's `ExpiredToken` (400, naming the
/// token), the JSON services' `ExpiredTokenException`, the query services' `ExpiredToken`.
fn expired_token_for(protocol: Protocol, parts: &Parts) -> AwsError {
    let expired = roto_core::access::expired_token();
    match protocol {
        Protocol::RestXml => {
            let token = session_token(parts);
            let error =
                AwsError::new("ExpiredToken", "The provided token has expired.").with_status(400);
            match token {
                Some(token) => error.with_field("Token-0", token),
                None => error,
            }
        }
        Protocol::Json => AwsError::new("ExpiredTokenException", expired.message).with_status(400),
        Protocol::RestJson => {
            AwsError::new("ExpiredTokenException", expired.message).with_status(403)
        }
        Protocol::Query => expired,
    }
}

/// The answer to a key nobody issued: S3's `InvalidAccessKeyId`, the JSON services'
/// `UnrecognizedClientException`, the query services' `InvalidClientTokenId`.
pub fn unknown_key_for(protocol: Protocol, key: &str) -> AwsError {
    match protocol {
        Protocol::RestXml => AwsError::new(
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
        )
        .with_status(403)
        .with_field("AWSAccessKeyId", key),
        Protocol::Json | Protocol::RestJson => AwsError::new(
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
        )
        .with_status(match protocol {
            Protocol::Json => 400,
            _ => 403,
        }),
        Protocol::Query => roto_core::access::unknown_key(),
    }
}
