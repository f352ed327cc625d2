//! POST object uploads from HTML forms (`multipart/form-data` to a bucket): the form's
//! fields, its base64 policy (expiration and conditions), under `--verify-signatures` the
//! policy's signature, under `--enforce-iam` its signer's permission to put the object,
//! and the three answers S3 gives
//! (`success_action_redirect`, `success_action_status` 200/201, else 204).

use std::collections::BTreeMap;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use roto_chunked::ChecksumAlgorithm;
use roto_core::access::{self, Verdict};
use roto_core::dispatch::VERIFY_SIGNATURES_OPTION;
use roto_core::identity::account_of_access_key;
use roto_core::protocol::xml::XmlWriter;
use roto_core::protocol::Protocol;
use roto_core::signature;
use roto_core::timestamp::{self, now_millis};
use roto_core::{AwsError, AwsResult, Context, Request, Response, Value};

use super::body;
use super::cors::path_bucket;
use super::errors;
use super::objects::{new_row, stored_headers, version_header};
use super::{input_str, S3};

/// A parsed form: fields (names lower-cased) and the file.
struct Form {
    fields: BTreeMap<String, String>,
    file: Option<(String, Vec<u8>)>,
}

fn boundary(content_type: &str) -> Option<String> {
    content_type.split(';').find_map(|p| {
        p.trim()
            .strip_prefix("boundary=")
            .map(|b| b.trim_matches('"').to_string())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// Parses a `multipart/form-data` body; `None` if it is malformed, or if a part's headers or
/// a field are not UTF-8 (read lossily, two keys or file names could become one).
fn parse_form(body: &[u8], boundary: &str) -> Option<Form> {
    let delimiter = format!("--{boundary}").into_bytes();
    let mut form = Form {
        fields: BTreeMap::new(),
        file: None,
    };
    let mut at = find(body, &delimiter, 0)? + delimiter.len();
    loop {
        if body.get(at..at + 2) == Some(b"--") {
            return Some(form);
        }
        at += 2; // CRLF after the delimiter
        let headers_end = find(body, b"\r\n\r\n", at)?;
        let headers = std::str::from_utf8(&body[at..headers_end]).ok()?;
        let content_start = headers_end + 4;
        let next = find(body, &delimiter, content_start)?;
        let content = &body[content_start..next.saturating_sub(2).max(content_start)];
        let disposition = headers
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition"))?;
        let param = |name: &str| {
            disposition.split(';').find_map(|p| {
                p.trim()
                    .strip_prefix(&format!("{name}="))
                    .map(|v| v.trim_matches('"').to_string())
            })
        };
        let name = param("name")?.to_ascii_lowercase();
        if name == "file" {
            form.file = Some((param("filename").unwrap_or_default(), content.to_vec()));
        } else if form.file.is_none() {
            form.fields
                .insert(name, String::from_utf8(content.to_vec()).ok()?);
        }
        at = next + delimiter.len();
    }
}

fn policy_failed(condition: &serde_json::Value) -> AwsError {
    AwsError::new(
        "AccessDenied",
        format!("Invalid according to Policy: Policy Condition failed: {condition}"),
    )
    .with_status(403)
}

/// S3's `InvalidPolicyDocument` (400): the policy itself is not one S3 can apply.
fn invalid_policy(message: impl std::fmt::Display) -> AwsError {
    AwsError::new(
        "InvalidPolicyDocument",
        format!("Invalid Policy: {message}"),
    )
    .with_status(400)
}

/// The form fields no condition need name: the signature and what carries it, the file,
/// the policy, and `x-ignore-*` fields.
fn exempt(field: &str) -> bool {
    matches!(
        field,
        "x-amz-signature" | "signature" | "awsaccesskeyid" | "file" | "policy"
    ) || field.starts_with("x-ignore-")
}

/// Checks the form's policy document as S3 does: its `expiration` (case-sensitive, ISO
/// 8601) not passed, every condition well-formed and met, and every form field but the
/// exempt ones named by a condition.
fn check_policy(form: &Form, bucket: &str, size: usize) -> AwsResult<()> {
    let Some(policy) = form.fields.get("policy") else {
        return Ok(());
    };
    let doc: serde_json::Value = base64::engine::general_purpose::STANDARD
        .decode(policy.trim())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| {
            errors::invalid_argument("Invalid Policy: Invalid JSON.", "policy", policy)
        })?;
    let expiration = doc
        .get("expiration")
        .ok_or_else(|| invalid_policy("Policy missing expiration."))?;
    let expires = expiration
        .as_str()
        .filter(|e| e.starts_with(|c: char| c.is_ascii_digit()) && e.contains('T'))
        .and_then(timestamp::parse)
        .ok_or_else(|| {
            let text = match expiration.as_str() {
                Some(text) => text.to_string(),
                None => expiration.to_string(),
            };
            invalid_policy(format!("Invalid 'expiration' value: '{text}'"))
        })?;
    if expires < now_millis() {
        return Err(AwsError::new(
            "AccessDenied",
            "Invalid according to Policy: Policy expired.",
        )
        .with_status(403));
    }
    let conditions = doc
        .get("conditions")
        .and_then(|c| c.as_array())
        .ok_or_else(|| invalid_policy("Policy missing conditions."))?;
    let mut named = std::collections::BTreeSet::new();
    for condition in conditions {
        if let Some(field) = check_condition(form, bucket, size, condition)? {
            named.insert(field);
        }
    }
    let extra: Vec<&str> = form
        .fields
        .keys()
        .filter(|f| !exempt(f) && !named.contains(f.as_str()))
        .map(String::as_str)
        .collect();
    if !extra.is_empty() {
        return Err(AwsError::new(
            "AccessDenied",
            format!(
                "Invalid according to Policy: Extra input fields: {}",
                extra.join(", ")
            ),
        )
        .with_status(403));
    }
    Ok(())
}

/// Checks one condition; names the (lower-cased) form field it covers, if any.
fn check_condition(
    form: &Form,
    bucket: &str,
    size: usize,
    condition: &serde_json::Value,
) -> AwsResult<Option<String>> {
    let field = |name: &str| -> String {
        if name == "bucket" {
            return bucket.to_string();
        }
        form.fields.get(name).cloned().unwrap_or_default()
    };
    let (name, ok) = match condition {
        serde_json::Value::Object(map) if map.len() == 1 => {
            let Some((name, want)) = map.iter().next() else {
                return Ok(None);
            };
            let name = name.to_ascii_lowercase();
            let ok = want.as_str().is_some_and(|want| field(&name) == want);
            (name, ok)
        }
        serde_json::Value::Object(_) => return Err(invalid_policy(
            "Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.",
        )),
        serde_json::Value::Array(items) => {
            let op = items.first().and_then(|v| v.as_str()).unwrap_or_default();
            if op == "content-length-range" {
                check_length(items, size)?;
                return Ok(None);
            }
            if !matches!(op, "eq" | "starts-with") || items.len() != 3 {
                return Err(invalid_policy(format!(
                    "Invalid Condition: unknown or malformed condition {condition}"
                )));
            }
            let name = items[1].as_str().unwrap_or_default();
            let name = name.strip_prefix('$').unwrap_or(name).to_ascii_lowercase();
            let want = items[2].as_str().unwrap_or_default();
            let have = field(&name);
            let ok = match op {
                "eq" => have == want,
                _ => have.starts_with(want),
            };
            (name, ok)
        }
        _ => {
            return Err(invalid_policy(format!(
                "Invalid Condition: unknown or malformed condition {condition}"
            )))
        }
    };
    if !ok {
        return Err(policy_failed(condition));
    }
    Ok(Some(name))
}

/// `["content-length-range", min, max]`: two non-negative integers bounding the file.
fn check_length(items: &[serde_json::Value], size: usize) -> AwsResult<()> {
    let bound = |i: usize| items.get(i).and_then(serde_json::Value::as_u64);
    let (Some(min), Some(max), 3) = (bound(1), bound(2), items.len()) else {
        return Err(invalid_policy(
            "Invalid content-length-range: it takes two non-negative integers.",
        ));
    };
    let size = size as u64;
    if size > max {
        return Err(errors::entity_too_large(size, max));
    }
    if size < min {
        return Err(AwsError::new(
            "EntityTooSmall",
            "Your proposed upload is smaller than the minimum allowed size",
        )
        .with_status(400)
        .with_field("ProposedSize", size.to_string())
        .with_field("MinSizeAllowed", min.to_string()));
    }
    Ok(())
}

/// The PutObject-shaped input a form describes.
fn form_input(form: &Form) -> Value {
    const FIELDS: [(&str, &str); 13] = [
        ("acl", "ACL"),
        ("x-amz-server-side-encryption", "ServerSideEncryption"),
        ("x-amz-server-side-encryption-aws-kms-key-id", "SSEKMSKeyId"),
        (
            "x-amz-server-side-encryption-customer-algorithm",
            "SSECustomerAlgorithm",
        ),
        (
            "x-amz-server-side-encryption-customer-key",
            "SSECustomerKey",
        ),
        (
            "x-amz-server-side-encryption-customer-key-md5",
            "SSECustomerKeyMD5",
        ),
        ("content-type", "ContentType"),
        ("cache-control", "CacheControl"),
        ("content-disposition", "ContentDisposition"),
        ("content-encoding", "ContentEncoding"),
        ("expires", "Expires"),
        ("x-amz-storage-class", "StorageClass"),
        ("x-amz-website-redirect-location", "WebsiteRedirectLocation"),
    ];
    let mut input = Value::map();
    for (field, member) in FIELDS {
        if let Some(v) = form.fields.get(field) {
            input.insert(member, v.as_str());
        }
    }
    let metadata: BTreeMap<String, Value> = form
        .fields
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("x-amz-meta-")?.to_string(), Value::from(v))))
        .collect();
    if !metadata.is_empty() {
        input.insert("Metadata", Value::Map(metadata));
    }
    input
}

/// A form's credentials refused in S3's words: a session's key without its token is an
/// unknown key, with another token `InvalidToken` naming it.
fn form_credentials_refused(error: AwsError, key: &str, token: Option<&str>) -> AwsError {
    match (error.code.as_ref(), token) {
        ("InvalidClientTokenId", _) => unknown_key(key),
        ("InvalidToken", Some(token)) => error.with_field("Token-0", token),
        _ => error,
    }
}

/// S3's answer to a key nobody issued.
fn unknown_key(key: &str) -> AwsError {
    AwsError::new(
        "InvalidAccessKeyId",
        "The AWS Access Key Id you provided does not exist in our records.",
    )
    .with_status(403)
    .with_field("AWSAccessKeyId", key)
}

impl S3 {
    /// Under `--verify-signatures`, a form carrying credentials must be signed with their
    /// secret: SigV4's `x-amz-signature` (hex HMAC of the base64 policy with the signing
    /// key of `x-amz-credential`'s scope) or SigV2's `signature` (base64 HMAC-SHA1 of the
    /// policy). A form without credentials is anonymous.
    fn check_signature(&self, form: &Form) -> AwsResult<()> {
        if self.env.option(VERIFY_SIGNATURES_OPTION).is_none() {
            return Ok(());
        }
        let field = |name: &str| form.fields.get(name).map(String::as_str);
        let policy = field("policy").unwrap_or_default();
        let (key, provided, scope) = match (field("x-amz-credential"), field("awsaccesskeyid")) {
            (Some(credential), _) => {
                let (key, scope) = credential.split_once('/').unwrap_or((credential, ""));
                (key, field("x-amz-signature"), Some(scope))
            }
            (None, Some(key)) => (key, field("signature"), None),
            (None, None) => return Ok(()),
        };
        let secret = match self.env.dispatcher() {
            Some(dispatcher) => dispatcher
                .secret_key(key, field("x-amz-security-token"))
                .map_err(|e| form_credentials_refused(e, key, field("x-amz-security-token")))?,
            None => return Ok(()),
        };
        let Some(secret) = secret else {
            return Err(unknown_key(key));
        };
        let expected = match scope {
            Some(scope) => signature::sign_v4(&secret, scope, policy),
            None => signature::sign_v2(&secret, policy),
        };
        let provided = provided.unwrap_or_default();
        if signature::same(&expected, provided) {
            return Ok(());
        }
        Err(signature::s3_mismatch(key, provided, policy, None))
    }

    /// Under `--enforce-iam`, the form's signer (the key its credential names; anonymous
    /// without one) needs `s3:PutObject` on the new object, decided as a PUT is, by its
    /// policies and the bucket's.
    fn check_access(
        &self,
        ctx: &Context,
        form: &Form,
        bucket: &str,
        key: &str,
        raw: &Value,
    ) -> AwsResult<()> {
        let enforced = self.env.option(access::ENFORCE_OPTION).as_deref() == Some("true");
        let Some(dispatcher) = self.env.dispatcher().filter(|_| enforced) else {
            return Ok(());
        };
        let field = |name: &str| form.fields.get(name).map(String::as_str);
        let signer = field("x-amz-credential")
            .map(|c| c.split('/').next().unwrap_or(c))
            .or(field("awsaccesskeyid"));
        let caller = Context {
            account: signer
                .and_then(account_of_access_key)
                .unwrap_or_else(|| ctx.account.clone()),
            access_key: signer.map(str::to_string),
            ..ctx.clone()
        };
        let token = field("x-amz-security-token");
        let principal = access::identify(&dispatcher, &caller)
            .map_err(|e| form_credentials_refused(e, signer.unwrap_or_default(), token))?;
        let input = Value::map().with("Bucket", bucket).with("Key", key);
        let asked = self.access_of(&principal, "PostObject", &input)?;
        let keys = access::context_keys(&caller, &principal, raw.str("SourceIp"), None);
        match access::authorize(&dispatcher, &principal, &asked, &keys).transpose()? {
            Some(Verdict {
                denial: Some(denial),
                ..
            }) => Err(access::denied(
                Protocol::RestXml,
                &principal,
                &asked,
                denial,
            )),
            _ => Ok(()),
        }
    }

    pub(crate) async fn post_object(
        &self,
        ctx: &Context,
        request: &Request,
    ) -> AwsResult<Response> {
        let (name, _) = path_bucket(input_str(&request.input, "Path"));
        let bucket = self.bucket(&name)?;
        let content_type = request
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let malformed = || {
            AwsError::new(
                "MalformedPOSTRequest",
                "The body of your POST request is not well-formed multipart/form-data.",
            )
            .with_status(400)
        };
        let body = request
            .input
            .get("Body")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let form = boundary(content_type)
            .and_then(|b| parse_form(body, &b))
            .ok_or_else(malformed)?;
        let Some(key) = form.fields.get("key") else {
            return Err(errors::invalid_argument(
                "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.",
                "key",
                "",
            ));
        };
        let Some((filename, data)) = &form.file else {
            return Err(errors::invalid_argument(
                "POST requires exactly one file upload per request.",
                "file",
                "0",
            ));
        };
        let key = key.replace("${filename}", filename);
        super::objects::check_key(&key)?;
        check_policy(&form, &bucket.name, data.len())?;
        self.check_signature(&form)?;
        self.check_access(ctx, &form, &bucket.name, &key, &request.input)?;
        let input = form_input(&form);
        let encryption = self
            .encryption_for_write(ctx, &bucket, &key, &input)
            .await?;
        let upload = body::receive(
            &self.env.store,
            &http::HeaderMap::new(),
            None,
            Some(data.clone()),
            ChecksumAlgorithm::Crc64Nvme,
        )
        .await?;
        let stored = match self.with_object_acl(ctx, &bucket, &input, stored_headers(&input)) {
            Ok(stored) => super::sse::store(&stored, &encryption),
            Err(e) => {
                self.env.store.remove_blob(upload.blob.id());
                return Err(e);
            }
        };
        let mut row = match new_row(&input, &upload, self.next_seq(), stored) {
            Ok(row) => row,
            Err(e) => {
                self.env.store.remove_blob(upload.blob.id());
                return Err(e);
            }
        };
        self.commit_object(&bucket, &key, &input, &upload.blob, &mut row)?;
        self.notify(ctx, &bucket, "ObjectCreated:Post", &key, Some(&row));
        let encoded =
            percent_encoding::utf8_percent_encode(&key, super::list::URL_SAFE).to_string();
        let host = if ctx.host.is_empty() {
            "localhost"
        } else {
            &ctx.host
        };
        let location = format!("http://{host}/{}/{encoded}", bucket.name);
        let mut response = Response::new(Value::map())
            .with_header("ETag", row.etag.clone())
            .with_header("Location", location.clone());
        if let Some(v) = version_header(&bucket, &row) {
            response = response.with_header("x-amz-version-id", v);
        }
        if let Some(redirect) = form.fields.get("success_action_redirect") {
            let sep = if redirect.contains('?') { '&' } else { '?' };
            let target = format!(
                "{redirect}{sep}bucket={}&key={encoded}&etag={}",
                bucket.name,
                percent_encoding::utf8_percent_encode(&row.etag, super::list::URL_SAFE)
            );
            response.headers.retain(|(n, _)| n != "Location");
            return Ok(response.with_status(303).with_header("Location", target));
        }
        match form.fields.get("success_action_status").map(String::as_str) {
            Some("200") => Ok(response.with_status(200)),
            Some("201") => {
                let mut w = XmlWriter::with_declaration();
                w.start("PostResponse", &[]);
                w.element("Location", &location);
                w.element("Bucket", &bucket.name);
                w.element("Key", &key);
                w.element("ETag", &row.etag);
                w.end("PostResponse");
                let body = Full::new(Bytes::from(w.finish()))
                    .map_err(|never| match never {})
                    .boxed();
                Ok(response
                    .with_status(201)
                    .with_header("Content-Type", "application/xml")
                    .with_body(Some(body)))
            }
            _ => Ok(response.with_status(204)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_parse_fields_and_the_file() {
        let body = b"--XX\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nup/${filename}\r\n--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\nworld\r\n--XX--\r\n";
        let form = parse_form(body, "XX").unwrap();
        assert_eq!(form.fields["key"], "up/${filename}");
        let (name, data) = form.file.unwrap();
        assert_eq!(name, "a.txt");
        assert_eq!(data, b"hello\r\nworld");
        assert!(parse_form(b"garbage", "XX").is_none());
        let not_utf8 =
            b"--XX\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\xff\r\n--XX--\r\n";
        assert!(parse_form(not_utf8, "XX").is_none());
        assert_eq!(
            boundary("multipart/form-data; boundary=\"abc\"").as_deref(),
            Some("abc")
        );
    }
}
