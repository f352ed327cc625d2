//! StartLiveTail: an event stream that opens with `sessionStart` (after the json
//! protocol's `initial-response`) and then, every second,
//! sends a `sessionUpdate` with the events ingested since the last one into the session's
//! log groups (narrowed by stream names or prefixes and the filter pattern), until the
//! client goes or the session's three hours pass, when it ends with
//! `SessionTimeoutException`, as CloudWatch Logs does.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use roto_core::eventstream;
use roto_core::model::model;
use roto_core::protocol::json::encode_value;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Env, Response, Value};
use rusqlite::params;
use tokio::sync::mpsc::Sender;

use super::filter::Pattern;
use super::{group_arn, invalid, name_of_arn, Logs};

const JSON: &str = "application/json";
/// How long a session lasts.
const LIFETIME_MS: i64 = 3 * 3600 * 1000;
/// The most events one update carries (AWS samples beyond 500 a second).
const UPDATE_EVENTS: i64 = 500;

/// What a session tails.
struct Session {
    account: String,
    region: String,
    /// Log group names with the identifiers the caller gave for them.
    groups: Vec<(String, String)>,
    streams: Vec<String>,
    prefixes: Vec<String>,
    pattern: Pattern,
}

/// One member of the response stream as its event stream message.
fn frame(member: &str, value: &Value) -> Vec<u8> {
    let logs = model("logs");
    let union = logs.shape("StartLiveTailResponseStream");
    let payload = match union.members.get(member) {
        Some(r) => encode_value(logs, r, logs.resolve(r), value).to_string(),
        None => "{}".to_string(),
    };
    eventstream::event(member, JSON, payload.as_bytes())
}

impl Session {
    /// Whether an event of `stream` with `message` belongs to the session.
    fn wants(&self, stream: &str, message: &str) -> bool {
        let named = self.streams.is_empty() && self.prefixes.is_empty()
            || self.streams.iter().any(|s| s == stream)
            || self.prefixes.iter().any(|p| stream.starts_with(p.as_str()));
        named && self.pattern.matches(message)
    }

    /// The events after row `after`, as `sessionResults`, with the last row read.
    fn read(&self, env: &Env, after: i64) -> AwsResult<(Vec<Value>, i64)> {
        let mut results = Vec::new();
        let mut last = after;
        env.store.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, grp, stream, ts, ingested, message FROM logs_events
                 WHERE account = ?1 AND region = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
            )?;
            let mut rows = st.query(params![self.account, self.region, after, UPDATE_EVENTS])?;
            while let Some(r) = rows.next()? {
                last = r.get(0)?;
                let (group, stream, message): (String, String, String) =
                    (r.get(1)?, r.get(2)?, r.get(5)?);
                let Some((_, identifier)) = self.groups.iter().find(|(g, _)| *g == group) else {
                    continue;
                };
                if self.wants(&stream, &message) {
                    results.push(
                        Value::map()
                            .with("logStreamName", stream)
                            .with("logGroupIdentifier", identifier.as_str())
                            .with("message", message)
                            .with("timestamp", r.get::<_, i64>(3)?)
                            .with("ingestionTime", r.get::<_, i64>(4)?),
                    );
                }
            }
            Ok::<_, rusqlite::Error>(())
        })?;
        Ok((results, last))
    }
}

impl Logs {
    pub(super) fn start_live_tail(&self, ctx: &Context, input: &Value) -> AwsResult<Response> {
        let identifiers = input.strings("logGroupIdentifiers");
        let mut groups = Vec::new();
        for identifier in &identifiers {
            let name = name_of_arn(identifier).unwrap_or(identifier).to_string();
            self.existing_group(ctx, &name)?;
            groups.push((name, identifier.clone()));
        }
        let (streams, prefixes) = (
            input.strings("logStreamNames"),
            input.strings("logStreamNamePrefixes"),
        );
        if !streams.is_empty() && !prefixes.is_empty() {
            return Err(invalid(
                "logStreamNames and logStreamNamePrefixes are mutually exclusive.",
            ));
        }
        let pattern_text = input.str("logEventFilterPattern").unwrap_or_default();
        let pattern = Pattern::parse(pattern_text).map_err(invalid)?;
        let start = Value::map()
            .with("requestId", ctx.request_id.as_str())
            .with("sessionId", crate::ids::uuid())
            .with(
                "logGroupIdentifiers",
                identifiers
                    .iter()
                    .map(|i| Value::from(group_identifier(ctx, i)))
                    .collect::<Vec<_>>(),
            )
            .with_opt("logStreamNames", input.get("logStreamNames").cloned())
            .with_opt(
                "logStreamNamePrefixes",
                input.get("logStreamNamePrefixes").cloned(),
            )
            .with("logEventFilterPattern", pattern_text);
        let session = Session {
            account: ctx.account.clone(),
            region: ctx.region.clone(),
            groups,
            streams,
            prefixes,
            pattern,
        };
        let (tx, body) = eventstream::channel(16);
        tokio::spawn(tail(self.env.clone(), session, start, tx));
        let mut response = Response::new(Value::map()).with_body(Some(body));
        response
            .headers
            .push(("Content-Type".into(), eventstream::CONTENT_TYPE.into()));
        Ok(response)
    }

    /// The row of the latest event, where a new session starts tailing.
    fn latest_event(env: &Env) -> AwsResult<i64> {
        env.store.read(|c| {
            c.query_row("SELECT COALESCE(MAX(id), 0) FROM logs_events", [], |r| {
                r.get(0)
            })
            .map_err(AwsError::from)
        })
    }
}

/// A log group identifier as the session echoes it: an ARN stays, a name becomes its ARN.
fn group_identifier(ctx: &Context, identifier: &str) -> String {
    if identifier.starts_with("arn:") {
        identifier.to_string()
    } else {
        group_arn(ctx, identifier)
    }
}

/// Sends the session's start, then an update every second, until the client goes or the
/// session times out.
async fn tail(env: Arc<Env>, session: Session, start: Value, tx: Sender<Bytes>) {
    let send = |bytes: Vec<u8>| tx.send(Bytes::from(bytes));
    let initial = eventstream::event("initial-response", JSON, b"{}");
    if send(initial).await.is_err() || send(frame("sessionStart", &start)).await.is_err() {
        return;
    }
    let Ok(mut after) = Logs::latest_event(&env) else {
        return;
    };
    let end = now_millis() + LIFETIME_MS;
    while now_millis() < end {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Ok((results, last)) = session.read(&env, after) else {
            return;
        };
        after = last;
        let update = Value::map()
            .with("sessionMetadata", Value::map().with("sampled", false))
            .with("sessionResults", results);
        if send(frame("sessionUpdate", &update)).await.is_err() {
            return;
        }
    }
    let timeout = serde_json::json!({ "message": "Session times out after three hours." });
    let _ = send(eventstream::exception(
        "SessionTimeoutException",
        JSON,
        timeout.to_string().as_bytes(),
    ))
    .await;
}
