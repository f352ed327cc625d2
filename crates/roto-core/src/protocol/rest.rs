//! The REST protocols (rest-xml, rest-json): HTTP bindings from the model.
//!
//! Being written: operation matching by method and URI template, labels, headers, query
//! strings, status codes and XML or JSON payloads.

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation};
use crate::protocol::{Protocol, Resolved, WireRequest, WireResponse};
use crate::value::Value;

fn unsupported() -> AwsError {
    AwsError::new("NotImplemented", "REST protocols are not implemented yet").with_status(501)
}

/// Finds the operation whose method and URI template match the request.
pub fn resolve<'m>(_model: &'m Model, _req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
    Err(unsupported())
}

/// Decodes labels, headers, query string and payload into the input shape.
pub fn decode(
    _p: Protocol,
    _model: &Model,
    _resolved: &Resolved<'_>,
    _req: &WireRequest<'_>,
) -> AwsResult<Value> {
    Err(unsupported())
}

/// Encodes output headers, status and payload.
pub fn encode(
    _p: Protocol,
    _model: &Model,
    _op: &Operation,
    _output: &Value,
    _request_id: &str,
) -> WireResponse {
    WireResponse::new(501, "", Vec::new())
}

/// Encodes an error.
pub fn encode_error(
    _p: Protocol,
    _model: &Model,
    _error: &AwsError,
    _request_id: &str,
    _head: bool,
) -> WireResponse {
    WireResponse::new(501, "", Vec::new())
}
