//! Request signatures as AWS computes them, for `--verify-signatures`: reading what a
//! request claims (SigV4 in `Authorization` or a presigned query, S3's SigV2 in either), and
//! the canonical request, string to sign and signature the server expects.
//!
//! Pure functions over a request's head, apart from the server that calls them, so that the
//! parsers can be fuzzed; and S3's `SignatureDoesNotMatch`, which the server and S3's POST
//! uploads both answer. Canonical forms follow AWS's SigV4 and SigV2 documentation: S3
//! signs its path as sent, every other service the path URI-encoded once more.

use base64::Engine;
use hmac::{Hmac, Mac};
use http::{HeaderMap, Method};
use sha2::{Digest, Sha256};

use crate::error::AwsError;

/// The SigV4 payload hash of a presigned URL, whose body is unknown when it is signed.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// What a request claims to be signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Signature Version 4, in `Authorization` or a presigned query string.
    V4(V4Claim),
    /// S3's Signature Version 2 (`Authorization: AWS key:signature`, or `AWSAccessKeyId`,
    /// `Expires` and `Signature` in the query string).
    V2(V2Claim),
}

impl Claim {
    /// The access key id the request names.
    pub fn access_key(&self) -> &str {
        match self {
            Claim::V4(c) => &c.access_key,
            Claim::V2(c) => &c.access_key,
        }
    }

    /// The signature the request carries.
    pub fn signature(&self) -> &str {
        match self {
            Claim::V4(c) => &c.signature,
            Claim::V2(c) => &c.signature,
        }
    }
}

/// A SigV4 claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V4Claim {
    /// The access key id.
    pub access_key: String,
    /// The scope after the key: `20260101/us-east-1/s3/aws4_request`.
    pub scope: String,
    /// The signed header names, lower case, in the order given.
    pub signed_headers: Vec<String>,
    /// The signature, hex.
    pub signature: String,
    /// `X-Amz-Date` (or `Date`) as sent: `20260101T000000Z`.
    pub date: String,
    /// Whether it came in the query string.
    pub presigned: bool,
    /// Whether it is SigV4a (`AWS4-ECDSA-P256-SHA256`: an ECDSA signature by a key derived
    /// from the secret, over a scope without a region; `X-Amz-Region-Set` says where).
    pub ecdsa: bool,
}

/// SigV4a's algorithm name.
pub const ECDSA_ALGORITHM: &str = "AWS4-ECDSA-P256-SHA256";

impl V4Claim {
    /// The algorithm its string to sign names.
    pub fn algorithm(&self) -> &'static str {
        match self.ecdsa {
            true => ECDSA_ALGORITHM,
            false => "AWS4-HMAC-SHA256",
        }
    }
}

/// A SigV2 claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Claim {
    /// The access key id.
    pub access_key: String,
    /// The signature, base64.
    pub signature: String,
    /// The presigned URL's `Expires`, which stands where the date does.
    pub expires: Option<String>,
}

/// Why a claim cannot be read: the message of S3's `AuthorizationHeaderMalformed` or
/// `AuthorizationQueryParametersError` (`query` says which).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Whether the claim was in the query string.
    pub query: bool,
    /// What is wrong.
    pub message: String,
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Reads a request's claim; `Ok(None)` when it is unsigned.
pub fn claim(headers: &HeaderMap, query: &str) -> Result<Option<Claim>, Malformed> {
    if let Some(auth) = header(headers, "authorization") {
        return header_claim(auth, headers);
    }
    query_claim(query)
}

fn header_claim(auth: &str, headers: &HeaderMap) -> Result<Option<Claim>, Malformed> {
    let malformed = |message: &str| Malformed {
        query: false,
        message: message.to_string(),
    };
    if let Some(v2) = auth.strip_prefix("AWS ") {
        let (key, signature) = v2
            .split_once(':')
            .ok_or_else(|| malformed("The authorization header is malformed."))?;
        return Ok(Some(Claim::V2(V2Claim {
            access_key: key.trim().to_string(),
            signature: signature.trim().to_string(),
            expires: None,
        })));
    }
    let (fields, ecdsa) = match auth.split_once(' ') {
        Some(("AWS4-HMAC-SHA256", fields)) => (fields, false),
        Some((ECDSA_ALGORITHM, fields)) => (fields, true),
        _ => return Ok(None),
    };
    let field = |name: &str| {
        fields.split(',').find_map(|f| {
            f.trim()
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
        })
    };
    let credential = field("Credential")
        .ok_or_else(|| malformed("The authorization header is malformed; missing Credential."))?;
    let (access_key, scope) = credential.split_once('/').ok_or_else(|| {
        malformed("The authorization header is malformed; the Credential is mal-formed.")
    })?;
    let signed_headers = field("SignedHeaders").ok_or_else(|| {
        malformed("The authorization header is malformed; missing SignedHeaders.")
    })?;
    let signature = field("Signature")
        .ok_or_else(|| malformed("The authorization header is malformed; missing Signature."))?;
    let date = header(headers, "x-amz-date")
        .or_else(|| header(headers, "date"))
        .unwrap_or_default();
    Ok(Some(Claim::V4(V4Claim {
        access_key: access_key.to_string(),
        scope: scope.to_string(),
        signed_headers: signed_headers.split(';').map(str::to_string).collect(),
        signature: signature.to_string(),
        date: date.to_string(),
        presigned: false,
        ecdsa,
    })))
}

fn query_claim(query: &str) -> Result<Option<Claim>, Malformed> {
    let mut params = std::collections::HashMap::new();
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        if matches!(
            k.as_ref(),
            "X-Amz-Algorithm"
                | "X-Amz-Credential"
                | "X-Amz-SignedHeaders"
                | "X-Amz-Signature"
                | "X-Amz-Date"
                | "AWSAccessKeyId"
                | "Signature"
                | "Expires"
        ) {
            params.insert(k.into_owned(), v.into_owned());
        }
    }
    let malformed = |message: &str| Malformed {
        query: true,
        message: message.to_string(),
    };
    if let Some(algorithm) = params.get("X-Amz-Algorithm") {
        let ecdsa = match algorithm.as_str() {
            "AWS4-HMAC-SHA256" => false,
            ECDSA_ALGORITHM => true,
            _ => {
                return Err(malformed(
                    "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"",
                ))
            }
        };
        let mut get = |name: &str| {
            params.remove(name).ok_or_else(|| {
                malformed(
                    "Query-string authentication version 4 requires the X-Amz-Algorithm, \
                     X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, \
                     and X-Amz-Expires parameters.",
                )
            })
        };
        let credential = get("X-Amz-Credential")?;
        let signed_headers = get("X-Amz-SignedHeaders")?;
        let signature = get("X-Amz-Signature")?;
        let date = get("X-Amz-Date")?;
        let (access_key, scope) = credential.split_once('/').ok_or_else(|| {
            malformed(
                "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; \
                 expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".",
            )
        })?;
        return Ok(Some(Claim::V4(V4Claim {
            access_key: access_key.to_string(),
            scope: scope.to_string(),
            signed_headers: signed_headers.split(';').map(str::to_string).collect(),
            signature,
            date,
            presigned: true,
            ecdsa,
        })));
    }
    match (params.remove("AWSAccessKeyId"), params.remove("Signature")) {
        (Some(access_key), Some(signature)) => Ok(Some(Claim::V2(V2Claim {
            access_key,
            signature,
            expires: params.remove("Expires"),
        }))),
        (Some(_), None) | (None, Some(_)) => Err(malformed(
            "Query-string authentication requires the Signature, Expires and \
             AWSAccessKeyId parameters",
        )),
        (None, None) => Ok(None),
    }
}

/// A query-protocol SigV2 claim (`SignatureVersion=2`), read from a request's form
/// parameters (its query string and form body), as older SDKs sign query-protocol calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryV2Claim {
    /// `AWSAccessKeyId`.
    pub access_key: String,
    /// `Signature`, base64.
    pub signature: String,
    /// Whether `SignatureMethod` is `HmacSHA256` (else `HmacSHA1`).
    pub sha256: bool,
    /// `Timestamp`, which must be within 15 minutes of the server's time.
    pub timestamp: Option<String>,
    /// `SecurityToken`, a session's token.
    pub token: Option<String>,
}

/// The SigV2 claim of query-protocol form parameters, if they carry one.
pub fn query_v2_claim(params: &[(String, String)]) -> Option<QueryV2Claim> {
    let get = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if get("SignatureVersion").as_deref() != Some("2") {
        return None;
    }
    Some(QueryV2Claim {
        access_key: get("AWSAccessKeyId")?,
        signature: get("Signature")?,
        sha256: get("SignatureMethod").as_deref() != Some("HmacSHA1"),
        timestamp: get("Timestamp"),
        token: get("SecurityToken"),
    })
}

/// The query protocol's SigV2 string to sign: the method, the host in lower case, the path
/// (`/` when empty) and every parameter but `Signature`, sorted by name and encoded as
/// RFC 3986 asks.
pub fn string_to_sign_v2_query(
    method: &Method,
    host: &str,
    path: &str,
    params: &[(String, String)],
) -> String {
    let mut pairs: Vec<(String, String)> = params
        .iter()
        .filter(|(k, _)| k != "Signature")
        .map(|(k, v)| (uri_encode(k, false), uri_encode(v, false)))
        .collect();
    pairs.sort();
    let query: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    let path = if path.is_empty() { "/" } else { path };
    format!(
        "{}\n{}\n{path}\n{}",
        method.as_str(),
        host.to_ascii_lowercase(),
        query.join("&")
    )
}

/// The query protocol's SigV2 signature: base64 HMAC-SHA256 (or HMAC-SHA1) of the string to
/// sign with `secret`.
pub fn sign_v2_query(secret: &str, sha256: bool, string_to_sign: &str) -> String {
    match sha256 {
        true => base64::engine::general_purpose::STANDARD
            .encode(hmac_sha256(secret.as_bytes(), string_to_sign.as_bytes())),
        false => sign_v2(secret, string_to_sign),
    }
}

/// The session token a request carries: the `x-amz-security-token` header, or a
/// presigned URL's `X-Amz-Security-Token` (`x-amz-security-token` in SigV2's).
pub fn session_token(headers: &HeaderMap, query: &str) -> Option<String> {
    if let Some(token) = header(headers, "x-amz-security-token") {
        return Some(token.to_string());
    }
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k.eq_ignore_ascii_case("x-amz-security-token"))
        .map(|(_, v)| v.into_owned())
}

/// Percent-encodes as SigV4 asks: every byte but the unreserved characters (and `/` where
/// `keep_slash`).
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
        if unreserved || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// The canonical query string: every parameter (but the signature) decoded and encoded
/// again, sorted by name, then value.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                uri_encode(&percent_decode(k), false),
                uri_encode(&percent_decode(v), false),
            )
        })
        .filter(|(k, _)| k != "X-Amz-Signature")
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// A header's value as SigV4 signs it: all of its values, trimmed, runs of spaces made
/// one, joined by commas.
fn canonical_header_value(headers: &HeaderMap, name: &str, host: &str) -> String {
    if name == "host" && !headers.contains_key("host") {
        return host.to_string();
    }
    headers
        .get_all(name)
        .iter()
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// What a SigV4 canonical request is made of.
pub struct V4Request<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path as sent (still percent-encoded).
    pub path: &'a str,
    /// The query string as sent.
    pub query: &'a str,
    /// The headers.
    pub headers: &'a HeaderMap,
    /// The host, where no `Host` header carries it (HTTP/2's `:authority`).
    pub host: &'a str,
    /// Whether the service signs its path as sent (S3) rather than encoded once more.
    pub path_as_sent: bool,
    /// The payload's hash (hex SHA-256, or `UNSIGNED-PAYLOAD` and its streaming kin).
    pub payload_hash: &'a str,
}

/// The SigV4 canonical request.
pub fn canonical_request(req: &V4Request<'_>, signed_headers: &[String]) -> String {
    let path = if req.path.is_empty() { "/" } else { req.path };
    let path = match req.path_as_sent {
        true => path.to_string(),
        false => uri_encode(path, true),
    };
    let mut out = format!(
        "{}\n{path}\n{}\n",
        req.method.as_str(),
        canonical_query(req.query)
    );
    for name in signed_headers {
        out.push_str(name);
        out.push(':');
        out.push_str(&canonical_header_value(req.headers, name, req.host));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&signed_headers.join(";"));
    out.push('\n');
    out.push_str(req.payload_hash);
    out
}

/// The SigV4 (or SigV4a: `algorithm`) string to sign.
pub fn string_to_sign(algorithm: &str, date: &str, scope: &str, canonical_request: &str) -> String {
    format!(
        "{algorithm}\n{date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    )
}

/// The SigV4a key pair AWS derives from an access key and its secret: the NIST SP 800-108
/// counter-mode KDF with HMAC-SHA256 keyed by `AWS4A<secret>`, over the algorithm name, the
/// access key id and a counter, whose 256-bit output `k` gives the private scalar `k + 1`
/// once `k` is at most the curve's order minus 2 (else the counter moves on).
fn ecdsa_key(access_key: &str, secret: &str) -> Option<p256::ecdsa::VerifyingKey> {
    use p256::elliptic_curve::bigint::{Encoding, U256};
    use p256::elliptic_curve::Curve;
    let key = format!("AWS4A{secret}");
    let limit = p256::NistP256::ORDER.wrapping_sub(&U256::from_u8(2));
    for counter in 1..=254u8 {
        let mut input = 1u32.to_be_bytes().to_vec();
        input.extend_from_slice(ECDSA_ALGORITHM.as_bytes());
        input.push(0);
        input.extend_from_slice(access_key.as_bytes());
        input.push(counter);
        input.extend_from_slice(&256u32.to_be_bytes());
        let k = U256::from_be_slice(&hmac_sha256(key.as_bytes(), &input));
        if k <= limit {
            let d = k.wrapping_add(&U256::ONE).to_be_bytes();
            let signing = p256::ecdsa::SigningKey::from_bytes(&d.into()).ok()?;
            return Some(*signing.verifying_key());
        }
    }
    None
}

/// Whether `signature` (hex DER) is the SigV4a signature of `string_to_sign` by the key
/// derived from `access_key` and `secret`.
pub fn verify_v4a(access_key: &str, secret: &str, string_to_sign: &str, signature: &str) -> bool {
    use p256::ecdsa::signature::Verifier;
    let Some(key) = ecdsa_key(access_key, secret) else {
        return false;
    };
    let signature = hex::decode(signature)
        .ok()
        .and_then(|der| p256::ecdsa::Signature::from_der(&der).ok());
    signature.is_some_and(|sig| key.verify(string_to_sign.as_bytes(), &sig).is_ok())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// The SigV4 signing key of `secret` over `scope` (`date/region/service/aws4_request`).
fn signing_key(secret: &str, scope: &str) -> Vec<u8> {
    let mut key = format!("AWS4{secret}").into_bytes();
    for part in scope.split('/') {
        key = hmac_sha256(&key, part.as_bytes());
    }
    key
}

/// The SigV4 signature (hex) of `string_to_sign` with `secret` over `scope`
/// (`date/region/service/aws4_request`).
pub fn sign_v4(secret: &str, scope: &str, string_to_sign: &str) -> String {
    hex::encode(hmac_sha256(
        &signing_key(secret, scope),
        string_to_sign.as_bytes(),
    ))
}

/// The hex SHA-256 of nothing, which every chunk's string to sign carries.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The signatures of a signed `aws-chunked` body: each chunk's signs the one before it
/// (the first, the request's seed signature) and the chunk's data; the trailer signature
/// signs the last chunk's and the trailers.
pub struct ChunkChain {
    key: Vec<u8>,
    date: String,
    scope: String,
    previous: String,
}

/// What the server expects of one link of a [`ChunkChain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The signature, hex.
    pub signature: String,
    /// The string it signs.
    pub to_sign: String,
}

impl ChunkChain {
    /// The chain that starts from a request's seed signature.
    pub fn new(secret: &str, claim: &V4Claim) -> ChunkChain {
        ChunkChain {
            key: signing_key(secret, &claim.scope),
            date: claim.date.clone(),
            scope: claim.scope.clone(),
            previous: claim.signature.clone(),
        }
    }

    /// The expected signature of the next chunk, whose data hashes (SHA-256) to
    /// `data_sha256`; the chain moves on past it.
    pub fn chunk(&mut self, data_sha256: &[u8]) -> Link {
        let hashes = format!("{EMPTY_SHA256}\n{}", hex::encode(data_sha256));
        self.link("AWS4-HMAC-SHA256-PAYLOAD", &hashes)
    }

    /// The expected trailer signature over the trailers' canonical form
    /// (`name:value\n` each).
    pub fn trailer(&mut self, canonical_trailers: &str) -> Link {
        let hash = hex::encode(Sha256::digest(canonical_trailers.as_bytes()));
        self.link("AWS4-HMAC-SHA256-TRAILER", &hash)
    }

    fn link(&mut self, algorithm: &str, hashes: &str) -> Link {
        let to_sign = format!(
            "{algorithm}\n{}\n{}\n{}\n{hashes}",
            self.date, self.scope, self.previous
        );
        let signature = hex::encode(hmac_sha256(&self.key, to_sign.as_bytes()));
        self.previous = signature.clone();
        Link { signature, to_sign }
    }
}

/// The sub-resources S3's SigV2 signs, with their values.
const V2_SUBRESOURCES: [&str; 37] = [
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "delete",
    "encryption",
    "intelligent-tiering",
    "inventory",
    "legal-hold",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "ownershipControls",
    "partNumber",
    "policy",
    "policyStatus",
    "publicAccessBlock",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "retention",
    "select",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
];

/// S3's SigV2 string to sign: method, `Content-MD5`, `Content-Type`, the date (a presigned
/// URL's `Expires`; empty when `x-amz-date` is sent), the `x-amz-*` headers (and a
/// presigned URL's `x-amz-*` parameters, such as its session token), and the resource (`/bucket/key` as sent, with its signed sub-resources).
pub fn string_to_sign_v2(
    method: &Method,
    headers: &HeaderMap,
    resource_path: &str,
    query: &str,
    expires: Option<&str>,
) -> String {
    let get = |name: &str| header(headers, name).unwrap_or_default().trim().to_string();
    let date = match expires {
        Some(expires) => expires.to_string(),
        None if headers.contains_key("x-amz-date") => String::new(),
        None => get("date"),
    };
    let mut out = format!(
        "{}\n{}\n{}\n{date}\n",
        method.as_str(),
        get("content-md5"),
        get("content-type")
    );
    let mut amz: Vec<(String, String)> = Vec::new();
    for name in headers.keys() {
        let name = name.as_str();
        if name.starts_with("x-amz-") {
            let values: Vec<&str> = headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .map(str::trim)
                .collect();
            amz.push((name.to_string(), values.join(",")));
        }
    }
    if expires.is_some() {
        let presigned = form_urlencoded::parse(query.as_bytes())
            .filter(|(k, _)| k.to_ascii_lowercase().starts_with("x-amz-"))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_string()));
        amz.extend(presigned);
    }
    amz.sort();
    for (name, value) in amz {
        out.push_str(&format!("{name}:{value}\n"));
    }
    out.push_str(resource_path);
    let mut sub: Vec<(String, Option<String>)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = match p.split_once('=') {
                Some((k, v)) => (k, Some(percent_decode(v))),
                None => (p, None),
            };
            V2_SUBRESOURCES.contains(&k).then(|| (k.to_string(), v))
        })
        .collect();
    sub.sort();
    for (i, (k, v)) in sub.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(k);
        if let Some(v) = v {
            out.push('=');
            out.push_str(v);
        }
    }
    out
}

/// The SigV2 signature (base64 HMAC-SHA1) of `string_to_sign` with `secret`; also what
/// signs an S3 POST form's policy with SigV2.
pub fn sign_v2(secret: &str, string_to_sign: &str) -> String {
    let mut mac =
        Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(string_to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Compares two signatures in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// S3's `SignatureDoesNotMatch`, with what the server signed (and its canonical request,
/// for a request's own signature rather than a chunk's).
pub fn s3_mismatch(key: &str, provided: &str, to_sign: &str, canonical: Option<&str>) -> AwsError {
    let mut error = AwsError::new(
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. \
         Check your key and signing method.",
    )
    .with_status(403)
    .with_field("AWSAccessKeyId", key)
    .with_field("StringToSign", to_sign)
    .with_field("SignatureProvided", provided)
    .with_field("StringToSignBytes", spaced_hex(to_sign));
    if let Some(canonical) = canonical {
        error = error
            .with_field("CanonicalRequest", canonical)
            .with_field("CanonicalRequestBytes", spaced_hex(canonical));
    }
    error
}

/// The bytes of a text as S3 shows them in `StringToSignBytes`: two hex digits each,
/// separated by spaces.
pub fn spaced_hex(text: &str) -> String {
    text.bytes()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's documented example (IAM ListUsers, "Create a signed AWS API request").
    #[test]
    fn the_documented_sigv4_example_signs_as_aws_does() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "content-type",
            "application/x-www-form-urlencoded; charset=utf-8"
                .parse()
                .unwrap(),
        );
        headers.insert("host", "iam.amazonaws.com".parse().unwrap());
        headers.insert("x-amz-date", "20150830T123600Z".parse().unwrap());
        let req = V4Request {
            method: &Method::GET,
            path: "/",
            query: "Action=ListUsers&Version=2010-05-08",
            headers: &headers,
            host: "",
            path_as_sent: false,
            payload_hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        };
        let signed: Vec<String> = ["content-type", "host", "x-amz-date"]
            .map(String::from)
            .to_vec();
        let canonical = canonical_request(&req, &signed);
        assert_eq!(
            hex::encode(Sha256::digest(canonical.as_bytes())),
            "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
        );
        let scope = "20150830/us-east-1/iam/aws4_request";
        let sts = string_to_sign("AWS4-HMAC-SHA256", "20150830T123600Z", scope, &canonical);
        assert_eq!(
            sign_v4("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", scope, &sts),
            "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    /// S3's documented SigV2 example (GET an object, "Signing and authenticating REST
    /// requests").
    #[test]
    fn the_documented_sigv2_example_signs_as_s3_does() {
        let mut headers = HeaderMap::new();
        headers.insert("date", "Tue, 27 Mar 2007 19:36:42 +0000".parse().unwrap());
        let sts = string_to_sign_v2(
            &Method::GET,
            &headers,
            "/awsexamplebucket1/photos/puppy.jpg",
            "",
            None,
        );
        assert_eq!(
            sts,
            "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg"
        );
        assert_eq!(
            sign_v2("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", &sts),
            "qgk2+6Sv9/oM7G3qLEjTH1a1l1g="
        );
    }

    #[test]
    fn sub_resources_are_signed_sorted_and_other_parameters_are_not() {
        let sts = string_to_sign_v2(
            &Method::GET,
            &HeaderMap::new(),
            "/b/k",
            "versionId=3&prefix=x&acl",
            Some("1700000000"),
        );
        assert!(sts.ends_with("1700000000\n/b/k?acl&versionId=3"), "{sts}");
    }

    #[test]
    fn claims_are_read_from_headers_and_query_strings() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3/aws4_request, \
             SignedHeaders=host;x-amz-date, Signature=abc"
                .parse()
                .unwrap(),
        );
        headers.insert("x-amz-date", "20260101T000000Z".parse().unwrap());
        let Some(Claim::V4(c)) = claim(&headers, "").unwrap() else {
            panic!("no claim")
        };
        assert_eq!(c.access_key, "AKID");
        assert_eq!(c.scope, "20260101/us-east-1/s3/aws4_request");
        assert_eq!(c.signed_headers, ["host", "x-amz-date"]);
        assert_eq!((c.signature.as_str(), c.presigned), ("abc", false));
        let q = "AWSAccessKeyId=AKID&Expires=17&Signature=a%2Bb";
        let Some(Claim::V2(c)) = claim(&HeaderMap::new(), q).unwrap() else {
            panic!("no claim")
        };
        assert_eq!(
            (c.signature.as_str(), c.expires.as_deref()),
            ("a+b", Some("17"))
        );
        assert!(claim(&HeaderMap::new(), "Signature=x").is_err());
        assert!(claim(&HeaderMap::new(), "X-Amz-Algorithm=AWS4-HMAC-SHA256").is_err());
        assert_eq!(claim(&HeaderMap::new(), "prefix=a").unwrap(), None);
    }

    #[test]
    fn non_s3_paths_are_encoded_once_more() {
        let headers = HeaderMap::new();
        let req = V4Request {
            method: &Method::GET,
            path: "/2015-03-31/functions/a%3Ab/invocations",
            query: "b=2&a=1&X-Amz-Signature=s",
            headers: &headers,
            host: "h",
            path_as_sent: false,
            payload_hash: UNSIGNED_PAYLOAD,
        };
        let c = canonical_request(&req, &["host".to_string()]);
        assert!(
            c.starts_with("GET\n/2015-03-31/functions/a%253Ab/invocations\na=1&b=2\nhost:h\n"),
            "{c}"
        );
    }

    /// AWS's documented example of a signed chunked upload ("Signature calculations for
    /// the Authorization header: transferring payload in multiple chunks"): the seed
    /// signature, then the first chunk of 65,536 `a`s, then the second of 1,024 `a`s and
    /// the final empty chunk.
    #[test]
    fn the_documented_chunk_signatures_chain_as_aws_does() {
        let claim = V4Claim {
            access_key: "AKIAIOSFODNN7EXAMPLE".into(),
            scope: "20130524/us-east-1/s3/aws4_request".into(),
            signed_headers: Vec::new(),
            signature: "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9".into(),
            date: "20130524T000000Z".into(),
            presigned: false,
            ecdsa: false,
        };
        let mut chain = ChunkChain::new("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", &claim);
        let first = chain.chunk(&Sha256::digest(vec![b'a'; 65536]));
        assert_eq!(
            first.signature,
            "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
        );
        let second = chain.chunk(&Sha256::digest(vec![b'a'; 1024]));
        assert_eq!(
            second.signature,
            "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
        );
        let last = chain.chunk(&Sha256::digest(b""));
        assert_eq!(
            last.signature,
            "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
        );
    }
}
