//! Stages' access logs, REST APIs' and HTTP APIs' alike: a stage's settings name a log
//! group (by its `arn:aws:logs:...:log-group:NAME` ARN) and a format whose `$context.name`
//! variables are written out for each request; the line goes to CloudWatch Logs through
//! Logs' own operations on the dispatcher, after the answer is sent (the log stream
//! `{apiId}_{stage}` is created when missing). Each API kind says what its variables hold.

use roto_core::timestamp::now_millis;
use roto_core::{Context, Env, Value};

/// `format` with its `$context.name` variables written out by `value`.
pub fn render(format: &str, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(at) = rest.find("$context.") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "$context.".len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-'))
            .unwrap_or(after.len());
        let name = after[..end].trim_end_matches('.');
        out.push_str(&value(name));
        rest = &after[name.len()..];
    }
    out.push_str(rest);
    out
}

/// A variable's text as AWS writes it in a log line: `-` for one with no value.
pub fn or_dash(text: String) -> String {
    if text.is_empty() {
        "-".into()
    } else {
        text
    }
}

/// The log group an access log destination ARN names.
fn log_group(arn: &str) -> Option<&str> {
    let group = arn.split_once(":log-group:")?.1;
    Some(group.strip_suffix(":*").unwrap_or(group))
}

/// Writes `line` to the log group `destination` names, in stream `stream`, in the
/// background.
pub fn write(env: &Env, ctx: &Context, destination: &str, stream: String, line: String) {
    let (Some(group), Some(dispatcher)) = (log_group(destination), env.dispatcher()) else {
        return;
    };
    let group = group.to_string();
    let ctx = ctx.clone();
    tokio::spawn(async move {
        let target = Value::map()
            .with("logGroupName", group.as_str())
            .with("logStreamName", stream.as_str());
        let _ = dispatcher
            .call(&ctx, "logs", "CreateLogStream", target.clone())
            .await;
        let event = Value::map()
            .with("timestamp", now_millis())
            .with("message", line);
        let put = target.with("logEvents", vec![event]);
        let _ = dispatcher.call(&ctx, "logs", "PutLogEvents", put).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_write_out_context_variables() {
        let value = |name: &str| match name {
            "requestId" => "r1".to_string(),
            "status" => "200".to_string(),
            _ => "-".to_string(),
        };
        assert_eq!(
            render(
                r#"{"id":"$context.requestId","status":"$context.status"}"#,
                value
            ),
            r#"{"id":"r1","status":"200"}"#
        );
        assert_eq!(render("$context.requestId $context.nope.", value), "r1 -.");
        assert_eq!(
            log_group("arn:aws:logs:us-east-1:000000000000:log-group:api-logs:*"),
            Some("api-logs")
        );
        assert_eq!(or_dash(String::new()), "-");
    }
}
