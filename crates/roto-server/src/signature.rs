//! `--verify-signatures` at the front end: the request's signature checked as AWS checks it,
//! before its service sees it, and refused in the words of the service's front end.
//!
//! Secrets: the key `test` and 12-digit key ids are accounts' roots, whose secret is `test`;
//! `AKIA` and `ASIA` keys are IAM's and STS's, which keep the secrets they issued
//! (`Dispatcher::secret_key`); any other key is unknown. The computing is
//! [`roto_core::signature`]'s; this module reads the request and shapes the answers.

use http::request::Parts;
use roto_chunked::ChunkedKind;
use roto_core::protocol::Protocol;
use roto_core::signature::{
    self, ChunkChain, Claim, V2Claim, V4Claim, V4Request, UNSIGNED_PAYLOAD,
};
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, Dispatcher};
use sha2::{Digest, Sha256};

use crate::router::Route;
use crate::signed_body::Proof;

/// How far a signed request's time may be from the server's (AWS's 15 minutes).
const MAX_SKEW_MILLIS: i64 = 15 * 60 * 1000;

/// What the check reads of one request.
pub struct Signed<'a> {
    /// The request's head.
    pub parts: &'a Parts,
    /// Where it was routed.
    pub route: &'a Route,
    /// The caller's protocol, which shapes a refusal.
    pub protocol: Protocol,
    /// The operation.
    pub operation: &'a str,
    /// The body, when it was read (not for a streamed upload).
    pub body: Option<&'a [u8]>,
}

impl Signed<'_> {
    fn is_s3(&self) -> bool {
        self.route.service.spec().name == "s3"
    }
}

/// Checks one request's head; `Err` is the refusal to answer, `Some` what a streamed body
/// must still prove as it arrives.
pub fn verify(dispatcher: &Dispatcher, req: &Signed<'_>) -> Result<Option<Proof>, AwsError> {
    let query = req.parts.uri.query().unwrap_or_default();
    if !req.is_s3() {
        let params = form_params(req);
        if let Some(v2) = signature::query_v2_claim(&params) {
            return verify_query_v2(dispatcher, req, &v2, &params).map(|()| None);
        }
    }
    let claim = signature::claim(&req.parts.headers, query).map_err(|m| malformed(req, m))?;
    let Some(claim) = claim else {
        return unsigned(req).map(|()| None);
    };
    let key = claim.access_key();
    let token = signature::session_token(&req.parts.headers, query);
    let secret = dispatcher
        .secret_key(key, token.as_deref())
        .map_err(|e| crate::access::refused_credentials(e, req.protocol, key, req.parts))?
        .ok_or_else(|| unknown_key(req, key))?;
    let expected = match &claim {
        Claim::V4(v4) => expect_v4(req, v4, &secret)?,
        Claim::V2(v2) if req.is_s3() => expect_v2(req, v2, &secret)?,
        Claim::V2(_) => {
            return Err(incomplete(
                req,
                "Only AWS4-HMAC-SHA256 signatures are accepted.",
            ))
        }
    };
    let holds = match &claim {
        Claim::V4(v4) if v4.ecdsa => {
            signature::verify_v4a(key, &secret, &expected.to_sign, &v4.signature)
        }
        _ => signature::same(&expected.signature, claim.signature()),
    };
    if !holds {
        return Err(mismatch(req, key, claim.signature(), &expected));
    }
    match &claim {
        Claim::V4(v4) if req.is_s3() => body_proof(req, v4, &secret),
        _ => Ok(None),
    }
}

/// A query-protocol call's parameters: its query string, then its form body.
fn form_params(req: &Signed<'_>) -> Vec<(String, String)> {
    let query = req.parts.uri.query().unwrap_or_default();
    let form = req
        .parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    let body = if form {
        req.body.unwrap_or_default()
    } else {
        &[]
    };
    form_urlencoded::parse(query.as_bytes())
        .chain(form_urlencoded::parse(body))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Checks a query-protocol SigV2 signature (`SignatureVersion=2`): its `Timestamp` within 15
/// minutes, its session's `SecurityToken`, and the HMAC over method, host, path and sorted
/// parameters.
fn verify_query_v2(
    dispatcher: &Dispatcher,
    req: &Signed<'_>,
    claim: &signature::QueryV2Claim,
    params: &[(String, String)],
) -> Result<(), AwsError> {
    let key = claim.access_key.as_str();
    let secret = dispatcher
        .secret_key(key, claim.token.as_deref())
        .map_err(|e| crate::access::refused_credentials(e, req.protocol, key, req.parts))?
        .ok_or_else(|| unknown_key(req, key))?;
    if let Some(timestamp) = &claim.timestamp {
        check_time(req, timestamp)?;
    }
    let host = req
        .parts
        .headers
        .get(http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let to_sign =
        signature::string_to_sign_v2_query(&req.parts.method, host, req.parts.uri.path(), params);
    let expected = Expected {
        signature: signature::sign_v2_query(&secret, claim.sha256, &to_sign),
        to_sign,
        canonical: None,
    };
    match signature::same(&expected.signature, &claim.signature) {
        true => Ok(()),
        false => Err(mismatch(req, key, &claim.signature, &expected)),
    }
}

/// What an S3 body must prove beyond its head's signature: the SHA-256 its
/// `x-amz-content-sha256` declares (checked at once when the body was read), or the chunk
/// signatures of a signed `aws-chunked` body.
fn body_proof(req: &Signed<'_>, claim: &V4Claim, secret: &str) -> Result<Option<Proof>, AwsError> {
    let Some(declared) = req
        .parts
        .headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    if let Some(kind) = ChunkedKind::from_content_sha256(declared) {
        let signed = matches!(kind, ChunkedKind::Signed | ChunkedKind::SignedWithTrailer);
        return Ok((signed && !claim.presigned).then(|| Proof::Chunks {
            chain: ChunkChain::new(secret, claim),
            kind,
            key: claim.access_key.clone(),
        }));
    }
    let is_hash = declared.len() == 64 && declared.bytes().all(|b| b.is_ascii_hexdigit());
    match (is_hash, req.body) {
        (false, _) => Ok(None),
        (true, None) => Ok(Some(Proof::Sha256(declared.to_string()))),
        (true, Some(body)) => {
            let computed = hex::encode(Sha256::digest(body));
            match computed.eq_ignore_ascii_case(declared) {
                true => Ok(None),
                false => Err(crate::signed_body::sha256_mismatch(declared, &computed)),
            }
        }
    }
}

/// What the server computes for a claim.
struct Expected {
    /// The signature expected (none for SigV4a, whose ECDSA signatures are verified, not
    /// recomputed).
    signature: String,
    to_sign: String,
    /// SigV4's canonical request.
    canonical: Option<String>,
}

/// Unsigned requests: S3 takes them as anonymous, STS the calls that carry their own proof,
/// SNS the confirmation and unsubscribe links it sends endpoints; every other call needs a
/// signature, but for Roto's readiness probe, an unsigned `GetCallerIdentity` (which AWS
/// would refuse).
fn unsigned(req: &Signed<'_>) -> Result<(), AwsError> {
    let open = req.is_s3()
        || matches!(
            req.operation,
            "AssumeRoleWithWebIdentity"
                | "AssumeRoleWithSAML"
                | "GetCallerIdentity"
                | "ConfirmSubscription"
                | "Unsubscribe"
        );
    if open {
        return Ok(());
    }
    let (code, status) = match req.protocol {
        Protocol::Query => ("MissingAuthenticationToken", 403),
        Protocol::Json => ("MissingAuthenticationTokenException", 400),
        _ => ("MissingAuthenticationTokenException", 403),
    };
    Err(AwsError::new(code, "Request is missing Authentication Token").with_status(status))
}

fn expect_v4(req: &Signed<'_>, claim: &V4Claim, secret: &str) -> Result<Expected, AwsError> {
    if !claim.presigned {
        check_time(req, &claim.date)?;
    }
    let headers = &req.parts.headers;
    let declared = headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok());
    let computed;
    let payload_hash = match (declared, req.body) {
        (Some(hash), _) => hash,
        (None, _) if claim.presigned => UNSIGNED_PAYLOAD,
        (None, Some(body)) => {
            computed = hex::encode(Sha256::digest(body));
            &computed
        }
        (None, None) => {
            return Err(AwsError::new(
                "InvalidRequest",
                "Missing required header for this request: x-amz-content-sha256",
            )
            .with_status(400))
        }
    };
    let host = req
        .parts
        .uri
        .authority()
        .map(|a| a.as_str())
        .unwrap_or_default();
    let canonical = signature::canonical_request(
        &V4Request {
            method: &req.parts.method,
            path: req.parts.uri.path(),
            query: req.parts.uri.query().unwrap_or_default(),
            headers,
            host,
            path_as_sent: req.is_s3(),
            payload_hash,
        },
        &claim.signed_headers,
    );
    let to_sign =
        signature::string_to_sign(claim.algorithm(), &claim.date, &claim.scope, &canonical);
    Ok(Expected {
        signature: match claim.ecdsa {
            true => String::new(),
            false => signature::sign_v4(secret, &claim.scope, &to_sign),
        },
        to_sign,
        canonical: Some(canonical),
    })
}

fn expect_v2(req: &Signed<'_>, claim: &V2Claim, secret: &str) -> Result<Expected, AwsError> {
    let headers = &req.parts.headers;
    if claim.expires.is_none() {
        let date = headers
            .get("x-amz-date")
            .or_else(|| headers.get("date"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        check_time(req, date)?;
    }
    let path = req.parts.uri.path();
    let resource = match &req.route.virtual_bucket {
        Some(bucket) => format!("/{bucket}{path}"),
        None => path.to_string(),
    };
    let to_sign = signature::string_to_sign_v2(
        &req.parts.method,
        headers,
        &resource,
        req.parts.uri.query().unwrap_or_default(),
        claim.expires.as_deref(),
    );
    Ok(Expected {
        signature: signature::sign_v2(secret, &to_sign),
        to_sign,
        canonical: None,
    })
}

/// A signed request's time (`20260101T000000Z`, or an HTTP date) must be within 15 minutes
/// of the server's.
fn check_time(req: &Signed<'_>, date: &str) -> Result<(), AwsError> {
    let now = now_millis();
    let Some(signed) = parse_date(date) else {
        return Err(match req.is_s3() {
            true => AwsError::new(
                "AccessDenied",
                "AWS authentication requires a valid Date or x-amz-date header",
            )
            .with_status(403),
            false => incomplete(
                req,
                "Authorization header requires existence of either a 'X-Amz-Date' or a \
                 'Date' header.",
            ),
        });
    };
    if (signed - now).abs() <= MAX_SKEW_MILLIS {
        return Ok(());
    }
    if req.is_s3() {
        return Err(AwsError::new(
            "RequestTimeTooSkewed",
            "The difference between the request time and the current time is too large.",
        )
        .with_status(403)
        .with_field("RequestTime", date)
        .with_field(
            "ServerTime",
            timestamp::format(now, TimestampFormat::Iso8601),
        )
        .with_field("MaxAllowedSkewMilliseconds", MAX_SKEW_MILLIS.to_string()));
    }
    let compact = |millis: i64| {
        timestamp::format(millis / 1000 * 1000, TimestampFormat::Iso8601)
            .replace(['-', ':'], "")
            .replace(".000", "")
    };
    let (what, relation, bound, sign) = match signed < now {
        true => (
            "Signature expired",
            "is now earlier than",
            now - MAX_SKEW_MILLIS,
            '-',
        ),
        false => (
            "Signature not yet current",
            "is still later than",
            now + MAX_SKEW_MILLIS,
            '+',
        ),
    };
    let text = format!(
        "{what}: {} {relation} {} ({} {sign} 15 min.)",
        compact(signed),
        compact(bound),
        compact(now)
    );
    Err(signature_error(req.protocol, text))
}

/// `20260101T000000Z` or an HTTP date (`Thu, 01 Jan 2026 00:00:00 GMT`), as epoch millis.
fn parse_date(text: &str) -> Option<i64> {
    roto_core::presign::amz_date(text).or_else(|| timestamp::parse(text))
}

/// The signature error of a protocol's front end: the query services' `SignatureDoesNotMatch`
/// (403), the JSON services' `InvalidSignatureException` (400 for json, 403 for rest-json).
fn signature_error(protocol: Protocol, message: String) -> AwsError {
    match protocol {
        Protocol::Query | Protocol::RestXml => {
            AwsError::new("SignatureDoesNotMatch", message).with_status(403)
        }
        Protocol::Json => AwsError::new("InvalidSignatureException", message).with_status(400),
        Protocol::RestJson => AwsError::new("InvalidSignatureException", message).with_status(403),
    }
}

/// A signature that is not the one expected.
fn mismatch(req: &Signed<'_>, key: &str, provided: &str, expected: &Expected) -> AwsError {
    let to_sign = expected.to_sign.as_str();
    let canonical = expected.canonical.as_deref();
    if req.is_s3() {
        return signature::s3_mismatch(key, provided, to_sign, canonical);
    }
    let mut message = "The request signature we calculated does not match the signature you \
                       provided. Check your AWS Secret Access Key and signing method. Consult \
                       the service documentation for details."
        .to_string();
    if let Some(canonical) = canonical {
        message.push_str(&format!(
            "\n\nThe Canonical String for this request should have been\n'{canonical}'\n\n\
             The String-to-Sign should have been\n'{to_sign}'\n"
        ));
    }
    signature_error(req.protocol, message)
}

/// A key nobody issued, in the protocol's words.
fn unknown_key(req: &Signed<'_>, key: &str) -> AwsError {
    crate::access::unknown_key_for(req.protocol, key)
}

/// A claim that cannot be read.
fn malformed(req: &Signed<'_>, malformed: signature::Malformed) -> AwsError {
    if req.is_s3() {
        let code = match malformed.query {
            true => "AuthorizationQueryParametersError",
            false => "AuthorizationHeaderMalformed",
        };
        return AwsError::new(code, malformed.message).with_status(400);
    }
    incomplete(req, &malformed.message)
}

/// The JSON and query services' `IncompleteSignature`.
fn incomplete(req: &Signed<'_>, message: &str) -> AwsError {
    let code = match req.protocol {
        Protocol::Query | Protocol::RestXml => "IncompleteSignature",
        Protocol::Json | Protocol::RestJson => "IncompleteSignatureException",
    };
    AwsError::new(code, message).with_status(400)
}
