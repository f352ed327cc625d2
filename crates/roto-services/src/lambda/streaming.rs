//! `InvokeWithResponseStream`: a synchronous invocation whose answer is an event stream
//! (`application/vnd.amazon.eventstream`) of `PayloadChunk` events carrying the response
//! bytes, ended by one `InvokeComplete` event (the error, if any, and the log tail).
//!
//! Roto's runtimes answer buffered (a handler's whole response at once, as the Runtime API's
//! `/response` receives it), so the stream is what Lambda sends for a function that does not
//! stream: the response in one chunk, then the completion. A function error ends the stream
//! with `InvokeComplete` naming the error type and carrying the error document, as the SDKs
//! read it.

use bytes::Bytes;
use roto_core::{eventstream, AwsResult, Context, Response, Value};

use super::Lambda;

/// The content type of a buffered function's response.
const RESPONSE_CONTENT_TYPE: &str = "application/octet-stream";

impl Lambda {
    pub(super) async fn invoke_with_response_stream(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Response> {
        let invocation_type = input.str("InvocationType").unwrap_or("RequestResponse");
        let mut request = input.clone();
        request.insert("InvocationType", invocation_type);
        let out = self.invoke(ctx, &request).await?;
        let status = out.int("StatusCode").unwrap_or(200);
        let shown = Value::map()
            .with("StatusCode", status)
            .with_opt("ExecutedVersion", out.str("ExecutedVersion"));
        if invocation_type == "DryRun" {
            return Ok(Response::new(shown));
        }
        let payload = out
            .get("Payload")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let (tx, body) = eventstream::channel(2);
        for message in messages(payload, out.str("FunctionError"), out.str("LogResult")) {
            // The channel holds both messages; a client that left takes none.
            let _ = tx.try_send(Bytes::from(message));
        }
        let mut response = Response::new(shown).with_body(Some(body));
        response
            .headers
            .push(("Content-Type".into(), eventstream::CONTENT_TYPE.into()));
        Ok(response)
    }
}

/// The stream's messages: the payload as one chunk (none when empty, or when the function
/// failed), then the completion.
fn messages(payload: &[u8], function_error: Option<&str>, log: Option<&str>) -> Vec<Vec<u8>> {
    let mut messages = Vec::new();
    let mut complete = serde_json::Map::new();
    match function_error {
        Some(kind) => {
            let document: serde_json::Value =
                serde_json::from_slice(payload).unwrap_or(serde_json::Value::Null);
            let code = document["errorType"].as_str().unwrap_or(kind);
            complete.insert("ErrorCode".into(), code.into());
            let details = String::from_utf8_lossy(payload).into_owned();
            complete.insert("ErrorDetails".into(), details.into());
        }
        None if !payload.is_empty() => messages.push(eventstream::event(
            "PayloadChunk",
            RESPONSE_CONTENT_TYPE,
            payload,
        )),
        None => {}
    }
    if let Some(log) = log {
        complete.insert("LogResult".into(), log.into());
    }
    let complete = serde_json::Value::Object(complete).to_string();
    messages.push(eventstream::event(
        "InvokeComplete",
        "application/json",
        complete.as_bytes(),
    ));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_invocation_ends_with_its_error_and_sends_no_chunk() {
        let error = br#"{"errorType":"ValueError","errorMessage":"bad"}"#;
        let got = messages(error, Some("Unhandled"), None);
        assert_eq!(got.len(), 1);
        let text = String::from_utf8_lossy(&got[0]);
        assert!(text.contains("InvokeComplete") && text.contains(r#""ErrorCode":"ValueError""#));
        assert_eq!(messages(b"{}", None, Some("bG9n")).len(), 2);
        assert_eq!(messages(b"", None, None).len(), 1);
    }
}
