//! The four AWS wire protocols, each one generic codec driven by the service model.
//!
//! A codec resolves which operation a request names, decodes the request into a [`Value`]
//! shaped like the operation's input, encodes the handler's output [`Value`] and encodes an
//! [`AwsError`] the way that protocol's SDKs parse it. No codec knows any service: all they
//! read is the [`Model`].

pub mod cbor;
pub mod json;
pub mod query;
pub mod rest;
pub mod xml;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation};
use crate::value::Value;

/// The parts of an HTTP request a codec reads.
#[derive(Debug, Clone, Copy)]
pub struct WireRequest<'a> {
    /// The method.
    pub method: &'a Method,
    /// The path, still percent-encoded.
    pub path: &'a str,
    /// The raw query string (without `?`).
    pub query: &'a str,
    /// The headers.
    pub headers: &'a HeaderMap,
    /// The body; empty when the operation streams its payload.
    pub body: &'a [u8],
}

impl WireRequest<'_> {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An encoded response.
#[derive(Debug)]
pub struct WireResponse {
    /// The HTTP status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body (replaced by the stream when an operation's output streams its payload).
    pub body: Bytes,
}

impl WireResponse {
    /// A response with a status, a content type and a body.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> WireResponse {
        // Room for a response's usual headers, so that adding them never regrows the map.
        let mut headers = HeaderMap::with_capacity(16);
        if !content_type.is_empty() {
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static(content_type),
            );
        }
        WireResponse {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            headers,
            body: body.into(),
        }
    }

    /// Adds a header, skipping values that are not valid header text.
    pub fn header(&mut self, name: &str, value: &str) {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            self.headers.append(n, v);
        }
    }
}

/// A wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `awsQuery`: form-encoded parameters in, XML out (STS, SNS, IAM; SQS's older form).
    Query,
    /// `awsJson1_0` / `awsJson1_1`: JSON in and out, operation in `X-Amz-Target`.
    Json,
    /// `restXml`: HTTP bindings with XML payloads (S3).
    RestXml,
    /// `restJson1`: HTTP bindings with JSON payloads (Lambda).
    RestJson,
}

/// An operation resolved from a request, with the URI labels a REST template bound.
#[derive(Debug)]
pub struct Resolved<'m> {
    /// The operation.
    pub operation: &'m Operation,
    /// URI labels (`Bucket`, `Key`), percent-decoded.
    pub labels: Vec<(String, String)>,
}

impl Protocol {
    /// The protocol a model declares.
    pub fn of(model: &Model) -> Protocol {
        match model.metadata.protocol.as_str() {
            "query" | "ec2" => Protocol::Query,
            "json" => Protocol::Json,
            "rest-xml" => Protocol::RestXml,
            _ => Protocol::RestJson,
        }
    }

    /// Finds the operation a request names, or the protocol's unknown-operation error.
    pub fn resolve<'m>(self, model: &'m Model, req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
        match self {
            Protocol::Query => query::resolve(model, req),
            Protocol::Json => json::resolve(model, req),
            Protocol::RestXml | Protocol::RestJson => rest::resolve(model, req),
        }
    }

    /// Decodes the request into a value shaped like the operation's input.
    pub fn decode(
        self,
        model: &Model,
        resolved: &Resolved<'_>,
        req: &WireRequest<'_>,
    ) -> AwsResult<Value> {
        match self {
            Protocol::Query => query::decode(model, resolved.operation, req),
            Protocol::Json => json::decode(model, resolved.operation, req.body),
            Protocol::RestXml | Protocol::RestJson => rest::decode(self, model, resolved, req),
        }
    }

    /// Encodes an operation's output.
    pub fn encode(
        self,
        model: &Model,
        op: &Operation,
        output: &Value,
        request_id: &str,
    ) -> WireResponse {
        match self {
            Protocol::Query => query::encode(model, op, output, request_id),
            Protocol::Json => json::encode(model, op, output, request_id),
            Protocol::RestXml | Protocol::RestJson => {
                rest::encode(self, model, op, output, request_id)
            }
        }
    }

    /// Encodes an error the way this protocol's SDKs parse it.
    pub fn encode_error(
        self,
        model: &Model,
        error: &AwsError,
        request_id: &str,
        head: bool,
    ) -> WireResponse {
        match self {
            Protocol::Query => query::encode_error(model, error, request_id),
            Protocol::Json => json::encode_error(model, error, request_id),
            Protocol::RestXml | Protocol::RestJson => {
                rest::encode_error(self, model, error, request_id, head)
            }
        }
    }
}

/// The HTTP status of an error: its own, else its model shape's, else 400.
pub fn error_status(model: &Model, error: &AwsError) -> u16 {
    error
        .status
        .or_else(|| {
            model
                .error_shape(&error.code)
                .and_then(|s| s.error.as_ref())
                .and_then(|e| e.http_status_code)
        })
        .unwrap_or(400)
}

/// The code query-protocol clients see: the handler's override, else the model's `error.code`
/// for the shape, else the code itself.
pub fn query_error_code<'a>(model: &'a Model, error: &'a AwsError) -> &'a str {
    if let Some(code) = &error.query_code {
        return code;
    }
    model
        .error_shape(&error.code)
        .and_then(|s| s.error.as_ref())
        .and_then(|e| e.code)
        .unwrap_or(&error.code)
}
