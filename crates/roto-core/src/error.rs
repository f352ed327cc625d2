//! The one error type every operation returns.
//!
//! An [`AwsError`] carries what AWS puts on the wire: the error code, the message, the HTTP
//! status and any extra members the error shape defines (S3's `BucketName`, DynamoDB's
//! `CancellationReasons`). Each protocol codec encodes it the way that protocol's SDKs parse
//! errors; when a handler leaves the status unset, the codec takes it from the error shape in
//! the service model, falling back to 400.

use std::borrow::Cow;
use std::fmt;

use crate::value::Value;

/// An AWS error as the service returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct AwsError {
    /// The error code (`NoSuchBucket`, `ValidationException`, ...), also the model's shape name.
    pub code: Cow<'static, str>,
    /// The human-readable message.
    pub message: String,
    /// The HTTP status; `None` means "as the model's error shape says, else 400".
    pub status: Option<u16>,
    /// The code query-protocol clients see where it differs from `code` (SQS's
    /// `AWS.SimpleQueueService.NonExistentQueue` for `QueueDoesNotExist`).
    pub query_code: Option<Cow<'static, str>>,
    /// Whether the caller is at fault (`Sender`) rather than the service (`Receiver`).
    pub sender_fault: bool,
    /// Extra members of the error shape, encoded beside code and message.
    pub fields: Value,
    /// Response headers sent with the error (S3's `x-amz-delete-marker`, `ETag` on a 304);
    /// boxed, as most errors have none.
    pub headers: Option<Box<Vec<(String, String)>>>,
}

/// The result every operation handler returns.
pub type AwsResult<T> = Result<T, AwsError>;

impl AwsError {
    /// An error with a code and message; status from the model.
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> AwsError {
        AwsError {
            code: code.into(),
            message: message.into(),
            status: None,
            query_code: None,
            sender_fault: true,
            fields: Value::map(),
            headers: None,
        }
    }

    /// `ValidationException`, the JSON services' error for bad input.
    pub fn validation(message: impl Into<String>) -> AwsError {
        AwsError::new("ValidationException", message).with_status(400)
    }

    /// `InternalFailure` (500), for faults in Roto itself, never for bad input.
    pub fn internal(message: impl Into<String>) -> AwsError {
        let mut e = AwsError::new("InternalFailure", message).with_status(500);
        e.sender_fault = false;
        e
    }

    /// `NotImplemented` (501), for an operation in the model that Roto does not serve yet.
    pub fn not_implemented(operation: &str) -> AwsError {
        AwsError::new(
            "NotImplemented",
            format!("The operation {operation} is not implemented by Roto yet"),
        )
        .with_status(501)
    }

    /// Sets the HTTP status.
    pub fn with_status(mut self, status: u16) -> AwsError {
        self.status = Some(status);
        self
    }

    /// Sets the query-protocol code.
    pub fn with_query_code(mut self, code: impl Into<Cow<'static, str>>) -> AwsError {
        self.query_code = Some(code.into());
        self
    }

    /// Adds an extra member of the error shape.
    pub fn with_field(mut self, name: &str, value: impl Into<Value>) -> AwsError {
        self.fields.insert(name, value);
        self
    }

    /// Adds a response header sent with the error.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> AwsError {
        self.headers
            .get_or_insert_with(Box::default)
            .push((name.into(), value.into()));
        self
    }

    /// The response headers sent with the error.
    pub fn headers(&self) -> &[(String, String)] {
        self.headers.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl fmt::Display for AwsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AwsError {}

impl AwsError {
    /// This error as a request body stream raises it, for the operation reading the body to
    /// answer as it is ([`AwsError::carried`]): a chunk signature the front end found wrong.
    pub fn into_body_error(self) -> std::io::Error {
        std::io::Error::other(self)
    }

    /// The error a body stream's failure carries ([`AwsError::into_body_error`]), if any.
    pub fn carried(error: &std::io::Error) -> Option<AwsError> {
        error.get_ref()?.downcast_ref::<AwsError>().cloned()
    }
}

impl From<rusqlite::Error> for AwsError {
    fn from(e: rusqlite::Error) -> AwsError {
        tracing::error!(error = %e, "store error");
        AwsError::internal(format!("store error: {e}"))
    }
}

impl From<std::io::Error> for AwsError {
    fn from(e: std::io::Error) -> AwsError {
        tracing::error!(error = %e, "i/o error");
        AwsError::internal(format!("i/o error: {e}"))
    }
}
