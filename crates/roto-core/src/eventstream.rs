//! AWS event stream framing (`application/vnd.amazon.eventstream`), the binary messages
//! in which streaming operations answer (Kinesis' SubscribeToShard, S3's
//! SelectObjectContent, Lambda's InvokeWithResponseStream): each message is a prelude
//! (total and headers lengths and their CRC32), typed headers, a payload and a CRC32 of
//! the whole. Services write messages into a [`channel`], whose receiving end is the
//! response body the server streams as it is written.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::BodyExt;
use tokio::sync::mpsc;

use crate::dispatch::Body;

/// The media type of an event stream.
pub const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";
/// The header value type of a UTF-8 string.
const STRING: u8 = 7;

/// One message with string headers. Header names are at most 255 bytes and values at
/// most 65,535 (longer ones are cut, which no caller of this module writes).
pub fn message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        let name = &name.as_bytes()[..name.len().min(255)];
        let value = &value.as_bytes()[..value.len().min(65_535)];
        head.push(name.len() as u8);
        head.extend_from_slice(name);
        head.push(STRING);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value);
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// An event message of type `event_type`.
pub fn event(event_type: &str, content_type: &str, payload: &[u8]) -> Vec<u8> {
    message(
        &[
            (":message-type", "event"),
            (":event-type", event_type),
            (":content-type", content_type),
        ],
        payload,
    )
}

/// A modeled exception message of type `exception_type`.
pub fn exception(exception_type: &str, content_type: &str, payload: &[u8]) -> Vec<u8> {
    message(
        &[
            (":message-type", "exception"),
            (":exception-type", exception_type),
            (":content-type", content_type),
        ],
        payload,
    )
}

/// A body fed from a channel: what is sent is streamed, and the body ends when every
/// sender is dropped. Sending fails once the client has gone.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// A sender of messages and the response body that streams them; `capacity` messages
/// may wait unsent before sending waits for the client.
pub fn channel(capacity: usize) -> (mpsc::Sender<Bytes>, Body) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    (tx, ChannelBody(rx).boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_lengths_headers_and_checksums() {
        let m = event("initial-response", "application/json", b"{}");
        let total = u32::from_be_bytes([m[0], m[1], m[2], m[3]]) as usize;
        let head = u32::from_be_bytes([m[4], m[5], m[6], m[7]]) as usize;
        assert_eq!(total, m.len());
        assert_eq!(&m[8..12], &crc32fast::hash(&m[..8]).to_be_bytes());
        assert_eq!(
            &m[total - 4..],
            &crc32fast::hash(&m[..total - 4]).to_be_bytes()
        );
        assert_eq!(&m[12 + head..total - 4], b"{}");
        assert_eq!(m[12] as usize, ":message-type".len());
        assert_eq!(&m[13..26], b":message-type");
        assert_eq!(m[26], STRING);
        assert_eq!(&m[27..29], &5u16.to_be_bytes());
        assert_eq!(&m[29..34], b"event");
    }

    #[tokio::test]
    async fn channel_streams_what_is_sent() {
        let (tx, body) = channel(2);
        tx.send(Bytes::from_static(b"ab")).await.unwrap();
        drop(tx);
        let all = body.collect().await.unwrap().to_bytes();
        assert_eq!(&all[..], b"ab");
    }
}
